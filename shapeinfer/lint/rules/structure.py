"""Model-structure rules M001-M029: what a model file must look like before any shape matters
(IR version, opset imports, names, declared types, model-local functions), and dead code.

Each rule's severity is what the runtimes do with such a model, measured with onnx 1.23
(``onnx.checker.check_model(full_check=True)``), onnxruntime 1.32 (``InferenceSession`` on CPU)
and OpenVINO 2026.4 (``read_model`` + ``compile_model("CPU")``) on the fixture models of
``tests/support/structure_models.py`` (``benchmarks/structure_vs_doctor.py`` prints the table). A
finding is an error under a ``--target`` only where that target's runtime refuses the model
(the ``onnx`` target's runtime is the checker; ``onednn``, with no runtime to ask, follows
``onnx``); elsewhere it is a warning, or info where nothing is wrong for that runtime. The
severity under the default ``onnx`` target is the finding's default; another target that grades
it otherwise says so (``regraded``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx

from shapeinfer.io.onnxio import graph_path, subgraph_attrs
from shapeinfer.lint.context import LintContext
from shapeinfer.lint.registry import rule

#: lint target -> the runtime whose verdict grades a finding
ALL = frozenset({"onnx", "onnxruntime", "openvino"})


def _domain(d: str) -> str:
    return "" if d == "ai.onnx" else d


def _shown(domain: str) -> str:
    return domain or "ai.onnx"


@dataclass
class _Graph:
    """A graph of the model with its path and the names its enclosing graphs define before it."""

    graph: onnx.GraphProto
    path: str
    outer: frozenset[str]  # names visible from the enclosing graphs where this subgraph sits
    depth: int
    reads: set[str] = field(default_factory=set)  # names read by its nodes and nested graphs


def _graphs(model: onnx.ModelProto) -> list[_Graph]:
    out: list[_Graph] = []

    def walk(g: onnx.GraphProto, path: str, outer: frozenset[str], depth: int) -> set[str]:
        me = _Graph(g, path, outer, depth)
        out.append(me)
        defined = {i.name for i in g.input} | {t.name for t in g.initializer}
        defined |= {t.values.name for t in g.sparse_initializer}
        for k, n in enumerate(g.node):
            me.reads.update(x for x in n.input if x)
            for attr, sub in subgraph_attrs(n):
                me.reads |= walk(sub, graph_path(path, k, attr), outer | frozenset(defined), depth + 1)
            defined.update(o for o in n.output if o)
        return me.reads

    walk(model.graph, "main", frozenset(), 0)
    return out


def _all_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for g in _graphs(model):
        yield from g.graph.node
    for f in model.functions:
        yield from f.node


# ---------------------------------------------------------------------------------- model


@rule("M001", "ir-version-missing", "error", "the model's ir_version is unset or below 1")
def ir_version_missing(ctx: LintContext) -> None:
    """
    ``ModelProto.ir_version`` is required: it says which version of the ONNX format the file
    follows. ``onnx.checker`` refuses a model without it ("does not have an ir_version set
    properly"); onnxruntime and OpenVINO load it (a warning under those targets). Set it to the
    IR version the model was written for (``onnx.helper.make_model`` sets the current one).
    """
    v = ctx.model.ir_version
    if v < 1:
        ctx.report("M001", f"ir_version is {v}: onnx.checker refuses the model", refused_by={"onnx"})


@rule("M002", "ir-version-unsupported", "error", "an ir_version newer than onnx and onnxruntime read")
def ir_version_unsupported(ctx: LintContext) -> None:
    """
    The model's ``ir_version`` is above the highest IR version the installed ``onnx`` knows
    (``onnx.IR_VERSION``): the checker refuses it ("higher than the checker's"), and so does
    onnxruntime (1.32 reads up to IR 14, as onnx 1.23). OpenVINO loads it (a warning under
    ``--target openvino``). Usually a model saved by a newer exporter: lower ``ir_version`` if
    the model uses nothing newer, or upgrade the runtime.
    """
    v = ctx.model.ir_version
    if v > onnx.IR_VERSION:
        ctx.report(
            "M002",
            f"ir_version {v} is newer than IR {onnx.IR_VERSION}, the newest onnx {onnx.__version__} knows: "
            "onnx.checker and onnxruntime refuse the model",
            refused_by={"onnx", "onnxruntime"},
        )


@rule("M003", "opset-import-missing", "error", "a node's domain has no opset import")
def opset_import_missing(ctx: LintContext) -> None:
    """
    Every domain a node uses (the default domain included) needs an entry in the model's
    ``opset_import``, which says which version of each op is meant. ``onnx.checker`` refuses the
    model ("No opset import for domain"); onnxruntime and OpenVINO guess a version (a warning
    under those targets). Reported once per domain, at its first node. Add the import
    (``onnx.helper.make_opsetid(domain, version)``).
    """
    imported = {_domain(o.domain) for o in ctx.model.opset_import}
    seen: set[str] = set()
    for ref in ctx.nodes():
        d = _domain(ref.node.domain)
        if d in imported or d in seen:
            continue
        seen.add(d)
        ctx.report(
            "M003",
            f"domain {_shown(d)!r} of this {ref.node.op_type} is not in the model's opset_import: "
            "onnx.checker refuses the model",
            ref,
            refused_by={"onnx"},
        )


@rule("M004", "opset-import-below-ir3", "error", "opset_import in a model of IR version 1 or 2")
def opset_import_below_ir3(ctx: LintContext) -> None:
    """
    Opset imports arrived with IR version 3; a model that declares ``ir_version`` 1 or 2 and
    has ``opset_import`` entries contradicts itself, and ``onnx.checker`` refuses it.
    onnxruntime and OpenVINO load it (a warning under those targets). Set ``ir_version`` to the
    version the model really follows (3 or later).
    """
    v = ctx.model.ir_version
    if 1 <= v < 3 and len(ctx.model.opset_import):
        ctx.report(
            "M004",
            f"ir_version {v} predates opset imports, yet the model has {len(ctx.model.opset_import)}: "
            "onnx.checker refuses the model",
            refused_by={"onnx"},
        )


@rule("M005", "duplicate-metadata-key", "error", "a key that appears twice in metadata_props")
def duplicate_metadata_key(ctx: LintContext) -> None:
    """
    ``metadata_props`` is a map: each key may appear once. ``onnx.checker`` refuses a model
    with a repeated key; onnxruntime and OpenVINO keep one of the values (a warning under those
    targets, since which one is not specified). Merge or rename the entries.
    """
    for key, n in Counter(p.key for p in ctx.model.metadata_props).items():
        if n > 1:
            ctx.report(
                "M005",
                f"metadata key {key!r} appears {n} times: onnx.checker refuses the model",
                refused_by={"onnx"},
            )


#: the imports onnxruntime writes into every model it saves (its optimizer, ``optimized_model_filepath``)
ORT_SAVED_IMPORTS = frozenset(
    {
        "ai.onnx.ml",
        "ai.onnx.training",
        "ai.onnx.preview",
        "ai.onnx.preview.training",
        "com.microsoft",
        "com.microsoft.experimental",
        "com.microsoft.nchwc",
        "org.pytorch.aten",
    }
)


@rule("M006", "unused-opset-import", "info", "an imported domain that no node or function uses")
def unused_opset_import(ctx: LintContext) -> None:
    """
    The model imports an opset for a domain no node (in any graph or function) uses and no
    model-local function belongs to. Harmless for every runtime, but it claims a dependency
    the model does not have (a tool that checks domains against a runtime's list may refuse
    it for nothing). Remove the import (onnx_ir's ``RemoveUnusedOpsetsPass``). Not reported:
    the eight imports onnxruntime writes into every model it saves (``ai.onnx.ml``,
    ``com.microsoft``, ``com.microsoft.nchwc``, ``org.pytorch.aten``...), in a model that has
    them all; they say which runtime wrote the file, not what it needs.
    """
    used = {_domain(n.domain) for n in _all_nodes(ctx.model)} | {_domain(f.domain) for f in ctx.model.functions}
    imported = {_domain(o.domain) for o in ctx.model.opset_import}
    skip = ORT_SAVED_IMPORTS if imported >= ORT_SAVED_IMPORTS else frozenset()
    unused = [f"{o.domain}:{o.version}" for o in ctx.model.opset_import if _domain(o.domain) not in used | skip | {""}]
    if unused:
        ctx.report(
            "M006",
            f"{len(unused)} opset import{'s are' if len(unused) > 1 else ' is'} used by no node: {', '.join(unused)}",
        )


@rule("M007", "duplicate-opset-import", "warning", "a domain imported more than once")
def duplicate_opset_import(ctx: LintContext) -> None:
    """
    ``opset_import`` lists the same domain twice. The runtimes load the model but each keeps one
    of the entries, not necessarily the same one (the version of every op of the domain then
    depends on the reader). Keep one entry per domain.
    """
    versions: dict[str, list[int]] = {}
    for o in ctx.model.opset_import:
        versions.setdefault(_domain(o.domain), []).append(o.version)
    for d, vs in versions.items():
        if len(vs) > 1:
            ctx.report("M007", f"domain {_shown(d)!r} is imported {len(vs)} times (versions {', '.join(map(str, vs))})")


@rule("M008", "function-opset-mismatch", "error", "a function whose opset gives its ops another version")
def function_opset_mismatch(ctx: LintContext) -> None:
    """
    A model-local function may import another version of a domain than the model does, but
    only if every op the function uses has the same definition at both versions (the ONNX IR
    spec: the schemas for the two versions must be the same). Here an op of the function has
    a different version in force under the model's import: the function's body means something
    else depending on which import a tool applies when it inlines it. ``onnx.checker`` refuses
    the model ("not compatible with the version imported by model"); onnxruntime loads it (a
    warning under ``--target onnxruntime``). A function whose ops are the same at both versions
    is valid and not reported. Import, in the function, the model's version (after checking its
    ops at that version).
    """
    model_ops = {_domain(o.domain): o.version for o in ctx.model.opset_import}
    for f in ctx.model.functions:
        fops = {_domain(o.domain): o.version for o in f.opset_import}
        for n in f.node:
            d = _domain(n.domain)
            fv, mv = fops.get(d), model_ops.get(d)
            if fv is None or mv is None or fv == mv:
                continue
            a, b = _since(n.op_type, fv, d), _since(n.op_type, mv, d)
            if a is not None and b is not None and a != b:
                ctx.report(
                    "M008",
                    f"function {f.domain}.{f.name} imports {_shown(d)} {fv}, where its {n.op_type} is "
                    f"{n.op_type}-{a}; the model imports {mv}, where it is {n.op_type}-{b}: onnx.checker refuses "
                    "the model",
                    refused_by={"onnx"},
                )
                break


def _since(op: str, version: int, domain: str) -> int | None:
    try:
        return onnx.defs.get_schema(op, version, domain).since_version
    except onnx.defs.SchemaError:
        return None


@rule("M009", "unused-function", "info", "a model-local function that no node calls")
def unused_function(ctx: LintContext) -> None:
    """
    A function in ``model.functions`` that no node of any graph or function calls. Harmless,
    but it is dead weight in the file. Remove it (onnx_ir's ``RemoveUnusedFunctionsPass``).
    """
    called = {(_domain(n.domain), n.op_type) for n in _all_nodes(ctx.model)}
    for f in ctx.model.functions:
        if (_domain(f.domain), f.name) not in called:
            ctx.report("M009", f"function {f.domain}.{f.name} is called by no node")


# ---------------------------------------------------------------------------------- graphs


@rule("M010", "empty-graph-name", "error", "a graph (main or subgraph) without a name")
def empty_graph_name(ctx: LintContext) -> None:
    """
    ``GraphProto.name`` must not be empty. ``onnx.checker`` refuses the model; onnxruntime
    refuses it too when the nameless graph is a subgraph (an If/Loop/Scan body) and loads it
    when it is the main graph; OpenVINO loads both. Name the graph (``model.graph.name =
    "main_graph"``).
    """
    for g in _graphs(ctx.model):
        if not g.graph.name:
            refused = {"onnx", "onnxruntime"} if g.depth else {"onnx"}
            what = "the main graph" if not g.depth else f"subgraph {g.path}"
            ctx.report(
                "M010",
                f"{what} has no name: {' and '.join(sorted(refused))} refuse the model",
                graph=g.path,
                refused_by=refused,
            )


@rule("M011", "duplicate-graph-input", "error", "a graph input listed twice")
def duplicate_graph_input(ctx: LintContext) -> None:
    """
    The same name appears twice among a graph's inputs: the value has two definitions.
    ``onnx.checker`` ("single static assignment"), onnxruntime ("Duplicate definition-site")
    and OpenVINO ("Tensor already exists") refuse the model. Remove the duplicate.
    """
    for g in _graphs(ctx.model):
        for name, n in Counter(i.name for i in g.graph.input if i.name).items():
            if n > 1:
                ctx.report(
                    "M011",
                    f"graph input {name!r} is listed {n} times: runtimes refuse the model",
                    graph=g.path,
                    tensor=name,
                )


@rule("M012", "duplicate-graph-output", "warning", "a graph output listed twice")
def duplicate_graph_output(ctx: LintContext) -> None:
    """
    The same name appears twice among a graph's outputs. The runtimes load the model and return
    the value twice, but tools that address outputs by name (or, like onnx_ir, by value) see one
    output where the graph declares two. Remove the duplicate, or add an ``Identity`` for a
    second, differently named output.
    """
    for g in _graphs(ctx.model):
        for name, n in Counter(o.name for o in g.graph.output if o.name).items():
            if n > 1:
                ctx.report("M012", f"graph output {name!r} is listed {n} times", graph=g.path, tensor=name)


@rule("M013", "value-defined-twice", "error", "a node output whose name is already defined in its graph")
def value_defined_twice(ctx: LintContext) -> None:
    """
    ONNX graphs are in single static assignment form: each name is defined once, by a graph
    input, an initializer or one node output. Here a node writes a name that a graph input, an
    initializer or another node already defines. ``onnx.checker`` and onnxruntime refuse the
    model; OpenVINO loads it and one of the definitions silently wins (a warning under
    ``--target openvino``). Rename the output and its readers.
    """
    for g in _graphs(ctx.model):
        where: dict[str, str] = {i.name: "a graph input" for i in g.graph.input if i.name}
        for t in g.graph.initializer:
            where.setdefault(t.name, "an initializer")
        refs = _refs(ctx, g.path)
        for k, n in enumerate(g.graph.node):
            for o in n.output:
                if not o:
                    continue
                if o in where:
                    ctx.report(
                        "M013",
                        f"output {o!r} is already defined by {where[o]}: onnx.checker and onnxruntime refuse the model",
                        refs[k] if k < len(refs) else None,
                        tensor=o,
                        graph=g.path,
                        refused_by={"onnx", "onnxruntime"},
                    )
                else:
                    where[o] = f"node {n.name or n.op_type} (#{k})"


def _refs(ctx: LintContext, path: str):
    for _, name, refs in ctx.graphs():
        if name == path:
            return refs
    return []


@rule("M014", "subgraph-name-shadowing", "error", "a subgraph value with the name of an enclosing graph's value")
def subgraph_name_shadowing(ctx: LintContext) -> None:
    """
    A value of an If/Loop/Scan body has the name of a value the enclosing graphs define (before
    the node that holds the body): the body's value would hide the outer one. ONNX forbids it.
    A body node output or initializer that shadows is refused by ``onnx.checker`` and
    onnxruntime (OpenVINO loads it: a warning under ``--target openvino``); a body input that
    shadows is accepted by both and refused by OpenVINO ("Conversion is failed for Loop",
    an error only under ``--target openvino``). Rename the body's value.
    """
    for g in _graphs(ctx.model):
        if not g.depth:
            continue
        refs = _refs(ctx, g.path)
        for i in g.graph.input:
            if i.name in g.outer:
                ctx.report(
                    "M014",
                    f"body input {i.name!r} shadows a value of an enclosing graph: OpenVINO refuses the model",
                    graph=g.path,
                    tensor=i.name,
                    refused_by={"openvino"},
                )
        for t in g.graph.initializer:
            if t.name in g.outer:
                ctx.report(
                    "M014",
                    f"body initializer {t.name!r} shadows a value of an enclosing graph: onnx.checker and "
                    "onnxruntime refuse the model",
                    graph=g.path,
                    tensor=t.name,
                    refused_by={"onnx", "onnxruntime"},
                )
        for k, n in enumerate(g.graph.node):
            for o in n.output:
                if o and o in g.outer:
                    ctx.report(
                        "M014",
                        f"output {o!r} shadows a value of an enclosing graph: onnx.checker and onnxruntime "
                        "refuse the model",
                        refs[k] if k < len(refs) else None,
                        graph=g.path,
                        tensor=o,
                        refused_by={"onnx", "onnxruntime"},
                    )


@rule("M015", "empty-initializer-name", "error", "an initializer without a name")
def empty_initializer_name(ctx: LintContext) -> None:
    """
    Every initializer needs a name (that is how nodes read it). ``onnx.checker`` refuses the
    model; onnxruntime and OpenVINO load it and the tensor is unreachable (a warning under those
    targets). Name it, or remove it if nothing needs it.
    """
    for g in _graphs(ctx.model):
        n = sum(1 for t in g.graph.initializer if not t.name)
        if n:
            ctx.report(
                "M015",
                f"{n} initializer{'s' if n > 1 else ''} without a name: onnx.checker refuses the model",
                graph=g.path,
                refused_by={"onnx"},
            )


@rule("M016", "duplicate-initializer", "error", "two initializers with the same name")
def duplicate_initializer(ctx: LintContext) -> None:
    """
    Two initializers of a graph have the same name, so a reader of that name gets one of two
    tensors. ``onnx.checker`` refuses the model ("initializer name is not unique"); onnxruntime
    and OpenVINO keep one of them (a warning under those targets). Remove or rename one.
    """
    for g in _graphs(ctx.model):
        names = [t.name for t in g.graph.initializer] + [t.values.name for t in g.graph.sparse_initializer]
        for name, n in Counter(x for x in names if x).items():
            if n > 1:
                ctx.report(
                    "M016",
                    f"{n} initializers are named {name!r}: onnx.checker refuses the model",
                    graph=g.path,
                    tensor=name,
                    refused_by={"onnx"},
                )


def _has_type(v: onnx.ValueInfoProto) -> bool:
    return v.HasField("type") and v.type.WhichOneof("value") is not None


@rule("M017", "graph-input-missing-type", "error", "a main-graph input without a type")
def graph_input_missing_type(ctx: LintContext) -> None:
    """
    An input of the main graph has no type: the caller cannot know what to feed, and
    ``onnx.checker``, onnxruntime ("Model input ... has no type") and OpenVINO refuse the model.
    Declare its element type and shape.
    """
    for i in ctx.model.graph.input:
        if not _has_type(i):
            ctx.report("M017", f"graph input {i.name!r} has no type: runtimes refuse the model", tensor=i.name)


@rule("M018", "graph-input-missing-shape", "error", "a main-graph tensor input without a shape")
def graph_input_missing_shape(ctx: LintContext) -> None:
    """
    A tensor input of the main graph has an element type but no shape (not even a rank).
    ``onnx.checker`` (``full_check``) refuses the model ("Field 'shape' of 'type' is required"),
    and OpenVINO's CPU plugin refuses an input of dynamic rank; onnxruntime loads it (info under
    ``--target onnxruntime``). Inference cannot say anything about the shapes that follow. Declare
    the shape, with named dims (``batch``, ``seq``) where they vary.
    """
    for i in ctx.model.graph.input:
        if _has_type(i) and i.type.WhichOneof("value") == "tensor_type" and not i.type.tensor_type.HasField("shape"):
            ctx.report(
                "M018",
                f"graph input {i.name!r} has no shape: onnx.checker and OpenVINO refuse the model",
                tensor=i.name,
                refused_by={"onnx", "openvino"},
                otherwise="info",
            )


@rule("M019", "graph-output-missing-type", "error", "a main-graph output without a type")
def graph_output_missing_type(ctx: LintContext) -> None:
    """
    An output of the main graph has no type. ``onnx.checker`` refuses the model; onnxruntime
    and OpenVINO infer it and load the model (info under those targets). ``shapeinfer MODEL -o
    OUT`` writes the inferred type.
    """
    for o in ctx.model.graph.output:
        if not _has_type(o):
            ctx.report(
                "M019",
                f"graph output {o.name!r} has no type: onnx.checker refuses the model",
                tensor=o.name,
                refused_by={"onnx"},
                otherwise="info",
            )


@rule("M020", "graph-output-missing-shape", "error", "a main-graph tensor output without a shape")
def graph_output_missing_shape(ctx: LintContext) -> None:
    """
    A tensor output of the main graph has an element type but no shape. ``onnx.checker``
    (``full_check``) refuses the model; onnxruntime and OpenVINO load it (info under those
    targets). ``shapeinfer MODEL -o OUT`` writes the inferred shape.
    """
    for o in ctx.model.graph.output:
        if _has_type(o) and o.type.WhichOneof("value") == "tensor_type" and not o.type.tensor_type.HasField("shape"):
            ctx.report(
                "M020",
                f"graph output {o.name!r} has no shape: onnx.checker refuses the model",
                tensor=o.name,
                refused_by={"onnx"},
                otherwise="info",
            )


@rule("M021", "undefined-element-type", "error", "a declared tensor type whose element type is UNDEFINED")
def undefined_element_type(ctx: LintContext) -> None:
    """
    A graph input, output or ``value_info`` entry declares a tensor of element type
    ``UNDEFINED`` (0). onnxruntime refuses the model wherever the declaration is ("Failed to
    load model"); ``onnx.checker`` and OpenVINO refuse it for a graph input (nothing can be
    fed) and load it for other declarations (a warning under those targets). Declare the real
    element type, or drop the ``value_info`` entry.
    """
    for g in _graphs(ctx.model):
        for kind, vis in (
            ("graph input", g.graph.input),
            ("graph output", g.graph.output),
            ("value_info", g.graph.value_info),
        ):
            for v in vis:
                if (
                    v.type.WhichOneof("value") == "tensor_type"
                    and v.type.tensor_type.elem_type == onnx.TensorProto.UNDEFINED
                ):
                    refused = ALL if kind == "graph input" else {"onnxruntime"}
                    ctx.report(
                        "M021",
                        f"{kind} {v.name!r} has element type UNDEFINED: {' and '.join(sorted(refused))} "
                        "refuse the model",
                        graph=g.path,
                        tensor=v.name,
                        refused_by=refused,
                    )


# ---------------------------------------------------------------------------------- nodes


@rule("M022", "ref-attribute-outside-function", "warning", "an attribute reference in a graph, not a function")
def ref_attribute_outside_function(ctx: LintContext) -> None:
    """
    An attribute with ``ref_attr_name`` refers to an attribute of an enclosing function call; it
    means something only inside a model-local function's body. In a graph there is nothing to
    refer to: the runtimes load the model and read the attribute's empty value (onnxruntime 1.32
    runs ``LeakyRelu`` with such an ``alpha`` as alpha 0, not its default 0.01). Give the
    attribute its value.
    """
    for ref in ctx.nodes():
        for a in ref.node.attribute:
            if a.ref_attr_name:
                ctx.report(
                    "M022",
                    f"attribute {a.name!r} refers to {a.ref_attr_name!r} of an enclosing function, but this node "
                    "is in a graph: runtimes use an empty value",
                    ref,
                )


#: deprecated (domain, op) that onnxruntime 1.32 still loads (the others it refuses as the checker does)
_ORT_LOADS_DEPRECATED = frozenset({("", "GroupNormalization")})


@rule("M023", "deprecated-op", "error", "an op deprecated at the opset in force")
def deprecated_op(ctx: LintContext) -> None:
    """
    The op is deprecated at the model's opset (``Upsample`` from opset 10: use ``Resize``;
    ``Scatter`` from 11: ``ScatterElements``; ``GroupNormalization``-18: opset 21's;
    ``ai.onnx.ml`` ``TreeEnsembleRegressor``/``Classifier`` from 5: ``TreeEnsemble``).
    ``onnx.checker`` refuses the model ("Op registered for ... is deprecated"), and onnxruntime
    does too for all of them but ``GroupNormalization``-18; OpenVINO converts them (a warning
    under ``--target openvino``). Replace the op by its successor.
    """
    for ref in ctx.nodes():
        s = ctx.schema(ref.node)
        if s is None or not s.deprecated:
            continue
        d = _domain(ref.node.domain)
        refused = {"onnx"} if (d, ref.node.op_type) in _ORT_LOADS_DEPRECATED else {"onnx", "onnxruntime"}
        ctx.report(
            "M023",
            f"{_shown(d)}.{ref.node.op_type} is deprecated at opset {ctx.opset(d)}: "
            f"{' and '.join(sorted(refused))} refuse the model",
            ref,
            refused_by=refused,
        )


@rule("M024", "experimental-op", "warning", "an op that is experimental at the opset in force")
def experimental_op(ctx: LintContext) -> None:
    """
    The op's schema is experimental at the model's opset (``Upsample`` before opset 7, the
    ``ai.onnx.preview`` ops): its definition may change or go away, and runtimes may not
    implement it (onnxruntime 1.32 has no kernel for ``Upsample``-1: P201 under
    ``--target onnxruntime``). Use a stable op.
    """
    for ref in ctx.nodes():
        s = ctx.schema(ref.node)
        if s is not None and s.support_level == onnx.defs.OpSchema.SupportType.EXPERIMENTAL:
            d = _domain(ref.node.domain)
            ctx.report("M024", f"{_shown(d)}.{ref.node.op_type} is experimental at opset {ctx.opset(d)}", ref)


@rule("M025", "unused-node", "info", "a node none of whose outputs is read")
def unused_node(ctx: LintContext) -> None:
    """
    No node (in this graph or a body nested in it) reads any of the node's outputs, and none is
    a graph output: the node computes something nobody uses. Runtimes usually prune it, but it
    is dead weight in the file and often a sign of a graph edit that left debris. ``shapeinfer
    optimize`` removes dead nodes.
    """
    for g in _graphs(ctx.model):
        live = g.reads | {o.name for o in g.graph.output}
        refs = _refs(ctx, g.path)
        for k, n in enumerate(g.graph.node):
            outs = [o for o in n.output if o]
            if outs and not any(o in live for o in outs):
                ctx.report(
                    "M025",
                    f"no node reads the output{'s' if len(outs) > 1 else ''} of this {n.op_type} "
                    f"({', '.join(map(repr, outs[:4]))}{', ...' if len(outs) > 4 else ''}) and none is a graph output",
                    refs[k] if k < len(refs) else None,
                    graph=g.path,
                )


@rule("M026", "unused-initializer", "info", "an initializer that nothing reads")
def unused_initializer(ctx: LintContext) -> None:
    """
    No node of the graph (or of a body nested in it) reads the initializer, and it is not a
    graph output: the tensor is stored for nothing (it still costs file size and load time).
    Remove it (``shapeinfer optimize`` does).
    """
    for g in _graphs(ctx.model):
        live = g.reads | {o.name for o in g.graph.output}
        for t in g.graph.initializer:
            if t.name and t.name not in live:
                ctx.report("M026", f"initializer {t.name!r} is read by no node", graph=g.path, tensor=t.name)


_VALUE_FIELDS = {
    onnx.AttributeProto.FLOAT: "f",
    onnx.AttributeProto.INT: "i",
    onnx.AttributeProto.STRING: "s",
    onnx.AttributeProto.TENSOR: "t",
    onnx.AttributeProto.GRAPH: "g",
    onnx.AttributeProto.SPARSE_TENSOR: "sparse_tensor",
    onnx.AttributeProto.TYPE_PROTO: "tp",
    onnx.AttributeProto.FLOATS: "floats",
    onnx.AttributeProto.INTS: "ints",
    onnx.AttributeProto.STRINGS: "strings",
    onnx.AttributeProto.TENSORS: "tensors",
    onnx.AttributeProto.GRAPHS: "graphs",
    onnx.AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    onnx.AttributeProto.TYPE_PROTOS: "type_protos",
}
_SINGULAR = {"f", "i", "s", "t", "g", "sparse_tensor", "tp"}


def _set_fields(a: onnx.AttributeProto) -> list[str]:
    return [f for f in _VALUE_FIELDS.values() if (a.HasField(f) if f in _SINGULAR else len(getattr(a, f)))]


@rule("M027", "attribute-value-mismatch", "error", "an attribute with several values, or one that is not of its type")
def attribute_value_mismatch(ctx: LintContext) -> None:
    """
    An attribute holds a value in more than one field (``f`` and ``i``), or its ``type`` names a
    field other than the one holding the value. ``onnx.checker`` and onnxruntime refuse the
    model ("type field and data field mismatch"); OpenVINO reads one of the fields (a warning
    under ``--target openvino``). Write the attribute with ``onnx.helper.make_attribute``.
    """
    for ref in ctx.nodes():
        for a in ref.node.attribute:
            if a.ref_attr_name:
                continue
            fields = _set_fields(a)
            want = _VALUE_FIELDS.get(a.type)
            if len(fields) > 1 or (want is not None and fields and fields != [want]):
                ctx.report(
                    "M027",
                    f"attribute {a.name!r} of type {onnx.AttributeProto.AttributeType.Name(a.type)} holds "
                    f"{', '.join(fields)}: onnx.checker and onnxruntime refuse the model",
                    ref,
                    refused_by={"onnx", "onnxruntime"},
                )


@rule("M028", "empty-value-name", "error", "a main-graph input or output without a name")
def empty_value_name(ctx: LintContext) -> None:
    """
    An input or output of the main graph has an empty name: nothing can feed or read it by
    name. ``onnx.checker`` refuses the model ("required to be non-empty"); onnxruntime and
    OpenVINO load it (a warning under those targets). Name it.
    """
    for kind, vis in (("input", ctx.model.graph.input), ("output", ctx.model.graph.output)):
        for k, v in enumerate(vis):
            if not v.name:
                ctx.report(
                    "M028",
                    f"graph {kind} #{k} has no name: onnx.checker refuses the model",
                    refused_by={"onnx"},
                )


@rule("M029", "function-invalid", "error", "a function without a name or a domain of its own, or with an invalid body")
def function_invalid(ctx: LintContext) -> None:
    """
    A model-local function has no name, or is in the default domain (``""`` or ``ai.onnx``: a
    call to it is looked up as an ONNX op, "No Op registered"), or its body defines a name twice
    (two inputs, an input and a node output, two node outputs), or a node of the body reads a
    name that is neither a function input nor an output of an earlier node: ``onnx.checker``,
    onnxruntime and OpenVINO refuse the model. A function that lists an output twice is refused
    by ``onnx.checker`` and onnxruntime; one that lists an attribute twice by ``onnx.checker``
    only (a warning under the other targets). Name the function, give it a domain of its own,
    remove or rename the duplicate, or sort the body's nodes.
    """
    for f in ctx.model.functions:
        where = f"function {f.domain or '(default domain)'}.{f.name or '(no name)'}"
        problems: list[tuple[str, frozenset[str]]] = []
        if not f.name:
            problems.append(("a function needs a name", ALL))
        if _domain(f.domain) == "":
            problems.append(("a function needs a domain of its own; its calls are taken for ONNX ops", ALL))
        for what, names, refused in (
            ("output", f.output, frozenset({"onnx", "onnxruntime"})),
            ("attribute", [*f.attribute, *(a.name for a in f.attribute_proto)], frozenset({"onnx"})),
        ):
            for name, n in Counter(names).items():
                if n > 1:
                    problems.append((f"{what} {name!r} is listed {n} times", refused))
        defined: set[str] = set()
        for i in f.input:
            if i in defined:
                problems.append((f"input {i!r} is listed twice", ALL))
            defined.add(i)
        for k, n in enumerate(f.node):
            for x in n.input:
                if x and x not in defined:
                    later = any(x in m.output for m in f.node[k + 1 :])
                    problems.append(
                        (
                            f"node #{k} ({n.op_type}) reads {x!r} "
                            + ("before the node that computes it" if later else "which nothing in the body defines"),
                            ALL,
                        )
                    )
            for o in n.output:
                if o and o in defined:
                    problems.append((f"{o!r} is defined twice", ALL))
                defined.add(o)
        for p, refused in problems[:3]:
            who = "runtimes refuse" if refused == ALL else f"{' and '.join(sorted(refused))} refuse"
            ctx.report("M029", f"{where}: {p}: {who} the model", refused_by=refused)
