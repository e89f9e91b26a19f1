"""Graph rules G001-G011, and the model-level E codes.

G002-G005, G007, G009, G010 and G011 come from the engine's diagnostics; G001, G006 and G008 are checks over the
graph, the inferred facts and (for G006) the model's own declared shapes.
"""

from __future__ import annotations

from shapeinfer.lint.context import LintContext, allowed_types, dims_text, formal_input, short_types, type_string
from shapeinfer.lint.registry import declare, rule
from shapeinfer.symbolic import dims as D


@rule("G001", "unresolved-dims", "warning", "dims left unresolved (names the op where resolution was lost)")
def unresolved_dims(ctx: LintContext) -> None:
    """
    Inference could not express some dims in terms of the graph inputs' dims and invented a
    symbol (``unk_<n>``) or lost the rank. The finding is reported once, at the first node whose
    output has an unknown its inputs did not have, which is where resolution was lost
    (data-dependent ops such as NonZero, an op with no schema, a shape computed from values
    inference cannot see); nodes downstream that merely carry the unknown are not reported.
    Unresolved dims block static memory planning and compilation; bind the input symbols
    (``--bind``) or make the values the op depends on constant. ``strict`` makes this an error.
    """
    for _, _, refs in ctx.graphs():
        for ref in refs:
            n = ref.node
            if (ref.graph, ref.index) in ctx.error_nodes:
                continue  # the node is invalid: its error finding says why its outputs are unknown
            seen: set[str] = set()
            ranks_known = True
            for name in dict.fromkeys(n.input):  # a Concat of one tensor 100k times: checked once
                f = ref.fact(name)
                if f is None:
                    continue
                if f.kind == "tensor" and f.shape is None:
                    ranks_known = False
                seen |= _fresh_in(ctx, f)
            for o in n.output:
                f = ref.fact(o)
                if not o or f is None or f.kind != "tensor":
                    continue
                if f.shape is None:
                    if ranks_known:
                        ctx.report(
                            "G001",
                            f"rank of output {o!r} is unknown: inference lost it at this {n.op_type}",
                            ref,
                            tensor=o,
                        )
                    continue
                new = sorted(_fresh_in(ctx, f) - seen)
                if new:
                    axes = [i for i, d in enumerate(f.shape) if D.symbols(d) & set(new)] if f.shape else []
                    ctx.report(
                        "G001",
                        f"output {o!r} has unresolved dims {dims_text(f.shape)} (axis {', '.join(map(str, axes))}: "
                        f"{', '.join(new)}): inference could not determine them at this {n.op_type}",
                        ref,
                        tensor=o,
                    )


def _fresh_in(ctx: LintContext, f) -> set[str]:
    out: set[str] = set()
    for d in f.shape or ():
        if type(d) is not int:
            out |= D.symbols(d) & ctx.fresh
    for v in f.value or ():
        if isinstance(v, D.Expr):
            out |= D.symbols(v) & ctx.fresh
    if f.elem is not None:
        out |= _fresh_in(ctx, f.elem)
    return out


declare(
    "G002",
    "broadcast-incompatible",
    "error",
    "shapes that provably cannot broadcast",
    """
    Two dims that must broadcast (or be equal) are different integers, neither of which is 1
    (for example an Add of ``[2, 3]`` and ``[4, 3]``, or a MatMul whose inner dims differ). The
    node fails at run time for every input. Fix the producer of one of the operands.
    """,
)

declare(
    "G003",
    "assumed-dim-equality",
    "warning",
    "two symbols assumed equal",
    """
    An op needs two dims to be equal (broadcasting, MatMul's inner dims, Concat's other axes)
    and they are different symbolic expressions, such as ``seq`` and ``min(512, seq)``, or two
    input symbols. Inference assumes they are equal and carries on with one of them; the model
    only works when that holds. Either it is a real constraint between the inputs (document it,
    or give both inputs the same symbol) or a bug in the graph.
    """,
)

declare(
    "G004",
    "graph-order-or-cycle",
    "error",
    "cycle, or nodes not in topological order",
    """
    ONNX requires a graph's nodes to be topologically sorted and acyclic. A cycle (error) cannot
    be executed. Nodes merely out of order are rejected by onnx's checker, an error under the
    ``onnx`` and ``onednn`` targets, and a warning under ``onnxruntime`` and ``openvino``, which
    sort the nodes themselves and run the model. Sort the nodes (onnx-graphsurgeon's ``toposort``) or break the
    cycle.
    """,
)

declare(
    "G005",
    "undefined-tensor",
    "error",
    "a node input or graph output that nothing defines",
    """
    A node reads a tensor, or the graph lists an output, that no node produces and that is not a
    graph input, an initializer, or a value of an enclosing graph. The model cannot run; usually
    a node was deleted or renamed without updating its consumers.
    """,
)


declare(
    "G006",
    "declared-shape-mismatch",
    "error",
    "a declared value_info/output shape contradicts the inferred one",
    """
    The model declares a type or shape for a value (``value_info`` or a graph output, as written by
    an exporter or an earlier tool) that contradicts what inference derives: a different element
    type, rank, or a dim that provably differs from the inferred one, or differs from it where both
    are expressions over the graph inputs' symbols (unless inference itself assumed the two equal,
    which G003 reports: ``seq`` declared where ``min(seq, 512)`` is inferred). Tools that trust the
    declaration (memory planners, converters, onnxruntime's shape merging) then go wrong. Lint calls
    it an error where the target's runtime refuses the model: a graph input whose initializer
    contradicts its declaration (every runtime), and for ``onnx`` (and ``onednn``, which follows it)
    a declared type, rank or int dim that contradicts an int one (the checker's strict inference);
    otherwise a warning, since onnxruntime and OpenVINO load such a model and no runtime sees a
    contradiction only between expressions (``past + seq`` declared where ``seq`` is inferred).
    ``shapeinfer MODEL`` calls every provable one an error. Inference reports it (``shapeinfer
    MODEL`` as well as ``lint``), keeps what it derived, and ``shapeinfer MODEL -o OUT`` writes the
    inferred type in place of the declared one. A graph input whose declared type, rank or static
    dims differ from its initializer (its default value) is reported too. A declared ``-1``
    (Paddle's spelling of a dynamic dim) or an open dim is unknown and contradicts nothing. Where
    inference knows less than a declaration (an unknown rank, a fresh symbol), it takes the declared
    type, and says so (G013).
    """,
)

declare(
    "G013",
    "declared-type-assumed",
    "info",
    "a declared type was used where inference could not determine it",
    """
    Inference could not determine a value's element type, rank or some of its dims (a fresh
    symbol: data-dependent, or past an op it cannot see through), and the model declares them
    (``value_info`` or a graph output): inference takes the declaration as an assumption, and
    the shapes that follow from it hold only if it is right. A declared dim never replaces one
    that is one of several alternatives (an ``If`` whose branches give different sizes: a
    declaration matching one branch is wrong whenever the other runs). Check the declaration,
    or give the sizes with ``--input-shape`` / ``--bind``.
    """,
)


declare(
    "G007",
    "no-op-schema",
    "info",
    "op with no schema (custom domain) or no shape rule",
    """
    No onnx schema (and no model-local function) defines the op, typically a custom-domain op
    (a vendor domain), or the op is an onnxruntime contrib op (``com.microsoft``, documented in
    ``shapeinfer/inference/ops/contrib/schemas.json``) that has no shape rule here ("no rule for ...").
    Inference cannot see through it: its outputs' shapes are unknown, which usually shows up as
    G001 downstream. Provide a model-local function for it, or bind the shapes after it by hand.
    """,
)


declare(
    "G009",
    "assumed-exact-float",
    "info",
    "a symbolic dim carried through a float tensor, assumed exactly representable",
    """
    A dim travels through a float tensor (``Cast(Shape(x)[2], to=float)``, a float ``Range``
    bound, anchor-grid arithmetic) and inference keeps its symbolic value, assuming the float
    holds it exactly: integers up to 2**24 are exact in float32, up to 2**53 in double. Beyond
    that the runtime rounds and the dims computed from it differ. In float16 and bfloat16 (2**11,
    2**8) the value is not kept. Nothing to fix for real dims; to avoid the float round trip, keep
    shape arithmetic in int64.
    """,
)


@rule("G008", "type-constraint-violation", "error", "an input type the op's schema does not allow")
def type_constraints(ctx: LintContext) -> None:
    """
    An input's element type is not among those the op's type constraint allows in the opset in
    force (read from ``onnx.defs``: ``Sqrt`` of int64, ``MatMul`` of bool), or inputs bound to
    the same type variable have different types (``Add`` of float and int64). The node is
    invalid and runtimes refuse the model. Insert a ``Cast`` or fix the producer. Reshape's
    inputs are covered by R008 and R011.
    """
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type == "Reshape" and n.domain in ("", "ai.onnx"):
            continue
        schema = ctx.schema(n)
        if schema is None:
            continue
        problems = []
        bound: dict[str, tuple[str, str]] = {}
        done: set[tuple[str, str]] = set()
        for i, name in enumerate(n.input):
            param = formal_input(schema, i)
            if param is None or (name, param.name) in done:
                continue  # the same tensor at the same formal (a variadic input repeated): no news
            done.add((name, param.name))
            have = type_string(ref.fact(name))
            if have is None:
                continue
            allowed = allowed_types(schema, param)
            if have not in allowed:
                problems.append(f"input {i} {name!r} is {have}, {param.name} takes {short_types(allowed)}")
                continue
            if param.type_str in {tc.type_param_str for tc in schema.type_constraints} and param.is_homogeneous:
                prev = bound.get(param.type_str)
                if prev is None:
                    bound[param.type_str] = (have, name)
                elif prev[0] != have:
                    problems.append(
                        f"inputs {prev[1]!r} ({prev[0]}) and {name!r} ({have}) must have the same type {param.type_str}"
                    )
        if problems:
            ctx.report("G008", f"{n.op_type}-{schema.since_version}: " + "; ".join(problems), ref)


declare(
    "G012",
    "input-guard",
    "info",
    "the inferred shapes hold only under a condition on the input dims",
    """
    Inference found a condition on the graph inputs' dims that the model needs and that no
    other code reports: a Reshape ``-1`` whose quotient is exact only when a dim divides
    (``N % 4 == 0``), a Gather of Range-derived indices into a fixed-size table
    (``seq <= 1024``: GPT-2's position embeddings), an unknown dim broadcast against a known
    one (``unk_3 == 1 or unk_3 == seq``). Outside it onnxruntime fails (or computes other
    shapes). ``shapeinfer MODEL`` lists every guard (``holds when: ...``), ``verify`` refuses a
    binding that violates one, and ``shapeinfer profile`` gives the input ranges they leave.
    Document the condition for users, or give the input a range (``--dim-range``).
    """,
)

declare(
    "G015",
    "unsatisfiable-guard",
    "error",
    "a guard the model needs that no input size satisfies",
    """
    A condition the inferred shapes need (a guard, see G012) cannot hold for any input size:
    an equality whose sides always differ (``seq + 1 == seq``, two Concat operands one row
    apart), a bound that is always false, or bounds on one symbol that exclude each other
    (``seq <= 100`` and ``200 <= seq``). With ``--dim-range``, ``--bind`` or ``--input-shape``
    the sizes asked for count: ``--dim-range seq=513:`` on a model that needs ``seq <= 512`` is
    this error too. The message names the guard, the nodes that imposed it and the range that
    rules it out. onnxruntime fails at every such size; ``shapeinfer MODEL`` prints no shapes
    then (and ``-o`` writes nothing), ``profile`` prints no profile and ``verify`` runs nothing.
    Fix the graph, or the input shape or range given.
    """,
)

declare(
    "G010",
    "recursive-function",
    "error",
    "a model-local function that calls itself",
    """
    A model-local function calls itself, directly or through other functions. ONNX forbids
    recursive functions (the checker rejects the model: there is no way to bound the
    expansion), so runtimes that inline functions cannot load it. The call's outputs are left
    unknown. Rewrite the recursion as a Loop.
    """,
)

declare(
    "G011",
    "function-call-arity",
    "error",
    "a function call whose output count differs from the function's",
    """
    A node calls a model-local function but lists a different number of outputs than the
    function declares (the function returns ``y1, y2``, the call binds only ``Y``). onnx's
    inference rejects the call ("output out of bounds") and runtimes cannot bind the outputs.
    List one output per function output (an unused one may get any fresh name).
    """,
)

declare(
    "E001",
    "inference-failed",
    "warning",
    "inference could not process a node",
    """
    Inference hit something it could not handle for this node (an unexpected attribute value, a
    failure inside onnx's own per-node inference) and left the node's outputs unknown. This is
    not proof that the model is wrong, but the shapes after the node are not checked; report it
    if the node is valid.
    """,
)

declare(
    "E010",
    "invalid-node",
    "error",
    "a node's attributes or inputs are invalid",
    """
    Inference found a node that violates its op's contract: an axis out of range for the
    input's rank (Flatten, OneHot, DFT, any op with an ``axis``), an element type taken from an
    attribute (Cast's ``to``) that is not an ONNX type. The message says what is wrong. The
    node fails at run time. Op-specific problems have their own codes (E015-E090: a Transpose
    ``perm`` that is not a permutation is E016, a Range with delta 0 E022, a Conv input of rank
    < 3 E040...).
    """,
)

declare(
    "E011",
    "rejected-by-onnx-inference",
    "error",
    "onnx's own per-node inference rejects the node",
    """
    shapeinfer runs onnx's per-node shape inference beside its own rules (for the ops it has no
    rule for, and as a validator of the others), and onnx's strict inference rejects this node:
    an attribute out of its allowed range (negative ``pads``, zero ``strides`` or
    ``kernel_shape``), a weight or input of the wrong rank (a Conv weight whose spatial rank is
    not the input's, a scalar Softmax input), inputs an op's contract forbids together
    (LinearAttention's ``update_rule`` and its ``beta``/``decay`` inputs), a constant input
    whose data does not match its type. The message is onnx's own. onnx and the ONNX checker's
    strict mode refuse the model; runtimes fail on the node. Fix the node as the message says.
    (A node with a number of inputs or outputs its schema does not allow is E018; a Gather whose
    known index is out of range, E019.)
    """,
)

declare(
    "E012",
    "rank-too-large",
    "warning",
    "a rank read from the model is past 1,024: left unknown",
    """
    A length the model gives where a rank is expected (the length of ConstantOfShape's shape
    input, of Col2Im's ``image_shape``) is larger than 1,024. No runtime supports such ranks,
    and expanding them dim by dim would cost time and memory out of proportion to the model, so
    the output's rank is left unknown (onnx does the same). A rank that a rule would have to
    build past the cap is an error. Check the producer of that shape tensor. (Invalid Slice nodes are E024.)
    """,
)

declare(
    "E013",
    "int64-overflow",
    "error",
    "a dim or shape value that overflows int64",
    """
    A dim (Concat of dims summing past 2**63 - 1, a Tile or a ConvTranspose of huge dims) or an
    int64 value computed from shape values (``Sub`` of INT64_MIN and 1) does not fit in int64.
    onnxruntime wraps such values silently; in shape arithmetic that is always a bug, and onnx's
    inference rejects it. The dim becomes unknown (a fresh symbol), so nothing downstream or in
    a written model ever holds a value outside int64. Fix the arithmetic or the dims upstream.
    (Invalid Concat nodes are E025.)
    """,
)

declare(
    "E014",
    "invalid-initializer",
    "error",
    "an initializer whose data or type is invalid",
    """
    An initializer (or a Constant's tensor) has an undefined or unknown element type, or data
    that does not match its dims and type (a ``raw_data`` of the wrong byte length, fewer
    values than its dims hold). onnx's inference and onnxruntime refuse to read it. Re-export
    the tensor or fix its ``data_type``/``dims``. (Invalid Split nodes are E026.)
    """,
)

declare(
    "E900",
    "unreadable-model",
    "error",
    "a file that cannot be read as an ONNX model",
    """
    The file is missing, empty, truncated, not a protobuf, or has no graph. It is reported as a
    finding so that the other files of a multi-file lint are still checked; the lint exits with
    code 2 (could not run) when any file is unreadable.
    """,
)
