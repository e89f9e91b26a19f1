"""Control flow: If, Loop and Scan, whose bodies are inferred as subgraphs with the outer scope.

- **If**: both branches are inferred. When the condition's value is known, the taken branch's
  outputs are the node's outputs exactly; otherwise the branches' facts are merged
  (:func:`merge_facts`: equal dims stay, differing dims become one fresh symbol, differing ranks
  give an unknown rank). Each branch runs in a *sandbox*: equalities a branch needs (its
  ``unify`` calls) hold only when that branch is taken, so they are not kept for the rest of
  the model. A branch that provably never runs keeps its facts (for annotation) but not its
  diagnostics.
- **Loop** and **Scan**: loop-carried values are iterated to a fixpoint (:func:`widen`): a dim
  that differs between what enters an iteration and what leaves it becomes a fresh symbol, and
  stays that symbol; values that differ are dropped. Intermediate iterations are sandboxed;
  only the last (at the fixpoint) leaves its equalities and diagnostics. Scan outputs get the
  number of iterations as their stacked dim: Scan's is the scanned axis of its inputs; Loop's
  is ``max(0, M)`` when the body provably keeps its condition true, the count the condition
  allows (at most ``M``) when the body ends the loop by comparing counters with loop-invariant
  values (tf2onnx's while loops, :func:`_condition_trip`), else a fresh symbol. Where a Loop
  may run no iteration, the other dims of its scan outputs are also what onnxruntime gives then
  (:func:`_scan_output`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager

from onnx import TensorProto, TypeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.declarations import dtype_name
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, norm_axis
from shapeinfer.io.onnxio import graph_path, type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

#: Loop/Scan fixpoint iterations before every carried value is given up to unknown rank.
MAX_FIXPOINT_ITERATIONS = 8


# ------------------------------------------------------------------------------ merging facts


def is_empty(f: Fact | None) -> bool:
    """True for a sequence or optional known to hold nothing (``value == ()``, see :mod:`.sequence`)."""
    return f is not None and f.kind in ("sequence", "optional") and f.value == ()


def _merge_dtype(facts: Sequence[Fact]) -> int:
    known = {f.dtype for f in facts if f.dtype}
    return known.pop() if len(known) == 1 else 0


def merge_facts(ctx, facts: Sequence[Fact | None]) -> Fact:
    """The fact of a value that is any one of ``facts`` (If branches, sequence elements).

    Dims equal in every fact stay; an axis whose dims differ gets one fresh symbol (a join of the
    scope: no declaration replaces it, since it holds for one alternative only); differing
    ranks (or any unknown one) give an unknown rank. Values survive only when all are equal.
    Sequences and optionals merge their element facts; a sequence known to be empty adds no
    element. ``None`` entries stand for values nothing is known about.
    """
    if not facts:
        return Fact()
    if any(f is None for f in facts):
        known = [f for f in facts if f is not None]
        kinds = {f.kind for f in known}
        return Fact(_merge_dtype(known), None, None, kinds.pop() if len(kinds) == 1 else "tensor")
    kinds = {f.kind for f in facts}
    if len(kinds) != 1:
        return Fact()
    kind = kinds.pop()
    first = facts[0]
    if all(f == first for f in facts[1:]):
        return first
    if kind in ("sequence", "optional"):
        full = [f for f in facts if not is_empty(f)]
        if not full:
            return first
        elem = merge_facts(ctx, [f.elem for f in full])
        if not elem.dtype:
            dtype = _merge_dtype([f.elem for f in facts if f.elem is not None])
            elem = Fact(dtype, elem.shape, elem.value, elem.kind, elem.elem)
        return Fact(_merge_dtype(facts), None, None, kind, elem)
    dtype = _merge_dtype(facts)
    shapes = [f.shape for f in facts]
    if any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
        return Fact(dtype, None, None, kind)
    shape = []
    for axis in range(len(shapes[0])):
        ds = {s[axis] for s in shapes}
        shape.append(ds.pop() if len(ds) == 1 else ctx.symbols.join(tuple(s[axis] for s in shapes)))
    value = first.value if all(f.value == first.value for f in facts) else None
    if value is not None and any(type(d) is not int for d in shape):
        value = None
    return Fact(dtype, tuple(shape), value, kind)


def widen(ctx, prev: Fact | None, new: Fact | None, widened: set[str]) -> Fact | None:
    """One fixpoint step of a loop-carried value: ``prev`` entered an iteration, ``new`` left it.

    Equal dims stay; a dim that differs becomes a fresh symbol recorded in ``widened``, and a
    dim already widened stays as it is whatever the body makes of it. Ranks that differ give an
    unknown rank, values that differ are dropped, sequence and optional elements widen alike.
    """
    if prev is None or new is None:
        return prev if new is None else None
    if prev == new:
        return prev
    if prev.kind != new.kind:
        # Loop-16+: a carried optional may come back as its element, or the other way round.
        if prev.kind == "optional":
            return widen(ctx, prev, Fact(0, None, None, "optional", new), widened)
        if new.kind == "optional":
            return widen(ctx, Fact(0, None, None, "optional", prev), new, widened)
        return Fact()
    dtype = prev.dtype if prev.dtype == new.dtype or not new.dtype else (new.dtype if not prev.dtype else 0)
    if prev.kind in ("sequence", "optional"):
        if is_empty(prev) and not is_empty(new):
            base = new.elem
            if base is not None and prev.elem is not None and not base.dtype:
                base = Fact(prev.elem.dtype, base.shape, None, base.kind, base.elem)
            return Fact(dtype, None, None, prev.kind, base)
        if is_empty(new):
            return Fact(dtype, None, None, prev.kind, prev.elem)
        return Fact(dtype, None, None, prev.kind, widen(ctx, prev.elem, new.elem, widened))
    if prev.shape is None or new.shape is None or len(prev.shape) != len(new.shape):
        return Fact(dtype, None, None, prev.kind)
    shape = []
    for p, n in zip(prev.shape, new.shape):
        if p == n or (isinstance(p, D.Expr) and D.format(p) in widened):
            shape.append(p)
        else:
            w = ctx.fresh()
            widened.add(D.format(w))
            shape.append(w)
    shape = tuple(shape)
    value = prev.value if prev.value == new.value and shape == prev.shape else None
    return Fact(dtype, shape, value, prev.kind)


def _top(f: Fact | None) -> Fact | None:
    """Everything about ``f`` given up but its kind and element type."""
    if f is None:
        return None
    return Fact(f.dtype, None, None, f.kind, None if f.elem is None else _top(f.elem))


def refine(ctx, f: Fact | None, declared: TypeProto) -> Fact | None:
    """``f`` with the element type a subgraph's declared input/output type adds when unknown.

    Declared *dims* are not used: runtimes treat them as hints (onnxruntime runs a Loop body
    whose outputs disagree with their declared dims, with a warning), and exported models do
    carry wrong ones (the onnx conformance model ``test_loop16_seq_none`` declares scalar
    elements for a sequence of vectors). A dim inference cannot determine stays a fresh symbol.
    """
    if f is None:
        return None
    d = type_fact(declared, lambda axis: None)
    if d.kind != f.kind:
        return f
    if f.kind in ("sequence", "optional"):
        if f.elem is None:
            return f
        inner = declared.sequence_type.elem_type if f.kind == "sequence" else declared.optional_type.elem_type
        elem = refine(ctx, f.elem, inner)
        return f if elem == f.elem else Fact(f.dtype, f.shape, f.value, f.kind, elem)
    if f.dtype or not d.dtype:
        return f
    return Fact(d.dtype, f.shape, f.value, f.kind, f.elem)


def run_body(ctx, graph, attr: str, inputs: Sequence[Fact | None]) -> list[Fact | None]:
    """Infer subgraph ``graph`` (node attribute ``attr``), refining its inputs and outputs by
    their declared types (:func:`refine`)."""
    ins = [refine(ctx, f, vi.type) for f, vi in zip(inputs, graph.input)]
    outs = ctx.infer_graph(graph, ins, attr=attr)
    return [refine(ctx, f, vi.type) for f, vi in zip(outs, graph.output)]


class _Box:
    __slots__ = ("keep",)

    def __init__(self) -> None:
        self.keep = False


@contextmanager
def sandbox(ctx, keep_diagnostics: bool = True):
    """Run a subgraph inference whose symbolic effects must not outlive it.

    On exit the run's symbolic scope is rolled back (:meth:`SymbolScope.rollback`: the
    substitution, equalities and guards are as before, so a branch that is not taken, or an
    iteration that is discarded, assumes nothing); diagnostics raised inside are kept unless
    ``keep_diagnostics`` is False. Facts computed inside stay (with the fresh symbols they
    name). Setting ``keep = True`` on the yielded box keeps everything after all (the run
    turned out to be the one that counts).
    """
    diagnostics = ctx.engine.diagnostics
    mark = ctx.symbols.checkpoint()
    ndiag = len(diagnostics)
    box = _Box()
    try:
        yield box
    finally:
        if not box.keep:
            ctx.symbols.rollback(mark)
            if not keep_diagnostics:
                del diagnostics[ndiag:]


def _known_bool(f: Fact | None) -> bool | None:
    if f is None or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    if type(v) is int or isinstance(v, float):
        return bool(v)
    return None


# ------------------------------------------------------------------------------ If


def _branch(ctx, graph, attr: str, taken: bool | None) -> list[Fact]:
    """Infer one If branch: in a sandbox unless it is known to run (``taken`` True)."""
    if taken:
        return run_body(ctx, graph, attr, [])
    with sandbox(ctx, keep_diagnostics=taken is None):
        return run_body(ctx, graph, attr, [])


@register("If", since=1)
def if_(ctx, ins: list) -> list:
    """If: the taken branch's outputs when the condition is known, else both branches merged."""
    cond = _known_bool(ins[0] if ins else None)
    then_g, else_g = ctx.attr("then_branch"), ctx.attr("else_branch")
    if then_g is None or else_g is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "If needs both then_branch and else_branch")
    then_out = _branch(ctx, then_g, "then_branch", None if cond is None else cond)
    else_out = _branch(ctx, else_g, "else_branch", None if cond is None else not cond)
    n = ctx.num_outputs
    if len(then_out) != len(else_out) or len(then_out) < n:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"If branches give {len(then_out)} and {len(else_out)} outputs for {n} node output(s)",
        )
    for i, (t, e) in enumerate(zip(then_out[:n], else_out[:n])):
        if t is not None and e is not None and t.kind == e.kind and t.dtype and e.dtype and t.dtype != e.dtype:
            # onnx and onnxruntime refuse the model whichever branch runs
            raise InferenceError(
                codes.OPERAND_STRUCTURE_MISMATCH,
                f"If output {i}: then_branch gives {dtype_name(t.dtype)}, else_branch {dtype_name(e.dtype)}",
            )
    if cond is None and any(_rank(t) != _rank(e) for t, e in zip(then_out[:n], else_out[:n])):
        cond = _decided_by_assumptions(ctx, ctx.node.input[0] if ctx.node.input else "")
        if cond is not None:
            ctx.diag(
                "info",
                codes.ASSUMED_DIM_EQUALITY,
                f"the If condition is {str(bool(cond)).lower()} under the dim equalities assumed so far",
            )
    if cond is not None:
        return list((then_out if cond else else_out)[:n])
    return [merge_facts(ctx, [t, e]) for t, e in zip(then_out[:n], else_out[:n])]


def _rank(f: Fact | None) -> int | None:
    return None if f is None or f.kind != "tensor" else f.rank


#: Ops a condition is re-evaluated through (their rules read values only, create no symbols).
_COND_OPS = {
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Not",
    "And",
    "Or",
    "Xor",
    "Cast",
    "Identity",
    "Squeeze",
    "Unsqueeze",
    "Reshape",
}


def _decided_by_assumptions(ctx, name: str, depth: int = 0) -> bool | None:
    """The value of boolean ``name`` recomputed with the dim equalities the engine has assumed
    since it was computed (its producers re-run on their inputs' facts resolved through the
    engine's substitution, a few levels up), or None."""
    f = _value_now(ctx, name, depth)
    return _known_bool(f)


def _value_now(ctx, name: str, depth: int) -> Fact | None:
    eng = ctx.engine
    f = ctx.scope.get(name) if name else None
    if f is None:
        return None
    f = eng.resolve_fact(f)
    if (f.value is not None and all(v is not None for v in f.value)) or depth > 6:
        return f
    found = ctx.producer(name, anywhere=depth > 0)
    if found is None:
        return f
    k, p = found
    if p.domain not in ("", "ai.onnx") or p.op_type not in _COND_OPS:
        return f
    ins = [_value_now(ctx, i, depth + 1) if i else None for i in p.input]
    if any(i and x is None for i, x in zip(p.input, ins)):
        return f
    from shapeinfer.inference import op_registry as registry
    from shapeinfer.inference.node_context import NodeContext

    version = eng.opsets.get("", 0)
    rule = registry.lookup("", p.op_type, version)
    if rule is None:
        return f
    with sandbox(ctx, keep_diagnostics=False):
        try:
            outs = rule(NodeContext(eng, p, version, k, ctx.graph, ctx.scope), ins)
        except Exception:
            return f
    out = outs[list(p.output).index(name)] if outs else None
    return f if out is None else out


# ------------------------------------------------------------------------------ loops


def _iterate(ctx, body, attr: str, make_inputs, carried: list[Fact | None], n_carried_out_offset: int):
    """Run ``body`` to the loop-carried fixpoint.

    ``make_inputs(carried)`` builds the body's input facts; the body's outputs from
    ``n_carried_out_offset`` on are the new carried values. Returns (carried at the fixpoint,
    the body's outputs from the last run, which is the one whose equalities are kept).
    """
    widened: set[str] = set()
    for _ in range(MAX_FIXPOINT_ITERATIONS):
        with sandbox(ctx, keep_diagnostics=False) as box:
            outs = run_body(ctx, body, attr, make_inputs(carried))
            new = outs[n_carried_out_offset : n_carried_out_offset + len(carried)]
            new += [None] * (len(carried) - len(new))
            nxt = [widen(ctx, p, q, widened) for p, q in zip(carried, new)]
            box.keep = nxt == carried  # at the fixpoint: this run is the one that counts
        if box.keep:
            return carried, outs
        carried = nxt
    carried = [_top(f) for f in carried]
    ctx.diag("info", codes.LOOP_NOT_SETTLED, "loop-carried values did not settle: their shapes are left unknown")
    outs = run_body(ctx, body, attr, make_inputs(carried))
    return carried, outs


def _stack(f: Fact | None, n: D.Dim, axis: int = 0) -> Fact:
    """The fact of ``n`` values like ``f`` stacked along a new ``axis``."""
    if f is None or f.shape is None:
        return Fact(0 if f is None else f.dtype)
    axis = norm_axis(axis, len(f.shape) + 1)
    return Fact(f.dtype, f.shape[:axis] + (n,) + f.shape[axis:], None, f.kind)


@register("Loop", since=1)
def loop(ctx, ins: list) -> list:
    """Loop: carried values at their fixpoint; scan outputs stacked along a leading dim that is
    the number of iterations run (:func:`_trip_count`), with their other dims as onnxruntime
    gives them whatever that number is (:func:`_scan_output`)."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Loop needs a body")
    ins = list(ins) + [None] * max(0, 2 - len(ins))
    m_fact, c_fact, initial = ins[0], ins[1], list(ins[2:])
    n_carried = len(initial)
    n_body_out = len(body.output)
    n_scan = n_body_out - 1 - n_carried
    if n_scan < 0 or len(body.input) != 2 + n_carried:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Loop body takes {len(body.input)} inputs and gives {n_body_out} outputs for {n_carried} carried value(s)",
        )
    node_ins = ctx.node.input
    has_m = len(node_ins) > 0 and bool(node_ins[0])
    m = None
    mv = dim_values(m_fact) if has_m else None
    if mv is not None and len(mv) == 1 and mv[0] is not None:
        m = mv[0]
    c0 = True if len(node_ins) < 2 or not node_ins[1] else _known_bool(c_fact)
    declared = [vi.type for vi in body.output[1 + n_carried :]]
    if c0 is False or (type(m) is int and m <= 0):  # the body never runs
        with sandbox(ctx, keep_diagnostics=False):
            outs = run_body(ctx, body, "body", _loop_inputs(initial))
        scans = [_scan_output(ctx, f, 0, t, False) for f, t in zip(outs[1 + n_carried :], declared)]
        return [*initial, *scans]

    mark = len(ctx.symbols.fresh_symbols)
    carried, outs = _iterate(ctx, body, "body", _loop_inputs, initial, 1)
    for k, f in enumerate(carried):  # an optional carried in, its element carried out
        out = outs[1 + k] if 1 + k < len(outs) else None
        if (
            f is not None
            and f.kind == "optional"
            and out is not None
            and out.kind != "optional"
            and (out.kind != "tensor" or out.dtype or out.shape is not None)
        ):
            carried[k] = f.elem
    trip = _trip_count(ctx, body, initial, carried, outs, m if has_m else _NO_M, c0, mark)
    # the first iteration runs when the condition holds on entry and M (if given) is at least 1
    runs = c0 is True and (not has_m or (m is not None and _at_least_one(ctx.symbols, m)))
    if trip is None:
        trip = ctx.fresh()
    runs = runs or _at_least_one(ctx.symbols, trip)
    scans = [_scan_output(ctx, f, trip, t, runs) for f, t in zip(outs[1 + n_carried :], declared)]
    return [*carried, *scans]


#: Stands for an absent ``M`` (no bound on the iterations), as opposed to one of unknown value (None).
_NO_M = object()


def _trip_count(ctx, body, initial, carried, outs, m, c0: bool | None, mark: int) -> D.Dim | None:
    """The number of iterations a Loop that may run at all runs, or None where it is not proven.

    onnxruntime runs iterations while ``iteration < M`` (when ``M`` is given) and the condition
    holds (on entry: the ``cond`` input; after each iteration: the body's first output). So:

    - ``M`` given, its value unknown: None (the count is at most ``M``, which nothing bounds);
    - the condition true on entry and kept true by the body: ``max(0, M)`` (None without ``M``);
    - otherwise the count the body's condition allows, at most ``M`` (:func:`_condition_trip`).

    ``m`` is ``M``'s value (``_NO_M`` when absent, INT64_MAX counting as absent); ``mark`` is
    the number of fresh symbols drawn before the loop's fixpoint, so that a count never names a
    symbol the loop made up (one that stands for a different value at each iteration).
    """
    if m is None:
        return None
    bound = None if m is _NO_M or m == D.INT64_MAX else m
    if c0 is True and _known_bool(outs[0] if outs else None) is True:
        return None if bound is None else ctx.symbols.simplify(D.dmax(0, bound))
    return _condition_trip(ctx, body, initial, carried, bound, c0, mark)


_INT_DTYPES = frozenset((TensorProto.INT64, TensorProto.INT32))

#: Integers a float type holds exactly, as a power of two: a comparison made in such a type is
#: the integer comparison while both sides stay within it.
_FLOAT_EXACT = {TensorProto.FLOAT: 24, TensorProto.DOUBLE: 53, TensorProto.FLOAT16: 11, TensorProto.BFLOAT16: 8}

#: Comparisons a loop condition may end on: (the left input is the smaller side, shift), so
#: that the loop goes on while ``bigger - smaller + shift >= 1``.
_CONDITIONS = {"Less": (True, 0), "Greater": (False, 0), "LessOrEqual": (True, 1), "GreaterOrEqual": (False, 1)}


def _scalar_value(f: Fact | None) -> D.Dim | None:
    """The one value of a scalar (or one-element) fact as a dim: an int, an expression, or an
    integral float read as its int; None otherwise."""
    if f is None or f.value is None or len(f.value) != 1 or (f.shape is not None and len(f.shape) > 1):
        return None
    v = f.value[0]
    if isinstance(v, float):
        return int(v) if math.isfinite(v) and v.is_integer() else None
    return v if type(v) is int or isinstance(v, D.Expr) else None


_ONNX = ("", "ai.onnx")

#: A comparison negated is the opposite comparison (on integers, and on floats without NaN).
_NEGATED = {"Less": "GreaterOrEqual", "GreaterOrEqual": "Less", "Greater": "LessOrEqual", "LessOrEqual": "Greater"}


def _conjuncts(name: str, producer, depth: int = 0) -> tuple[list[tuple[str, list[str]]], list[str]] | None:
    """The comparisons (``(op_type, [lhs, rhs])``) and other operands (tensor names) whose
    conjunction boolean ``name`` is, through Identity, Cast (which keeps a boolean's truth),
    And, and Not of a comparison (tf2onnx at opset < 12 writes ``a <= b`` as
    ``Not(Greater(a, b))``); None when it is produced otherwise. ``producer(name)`` gives the
    node of the graph producing ``name`` (None: an input, initializer or outer value)."""

    def through(name: str):
        node = producer(name)
        while node is not None and node.op_type in ("Identity", "Cast") and node.domain in _ONNX and node.input:
            name = node.input[0]
            node = producer(name)
        return name, node

    name, node = through(name)
    if depth > 8:
        return None
    if node is None:
        return [], [name]
    if node.domain not in _ONNX:
        return None
    if node.op_type == "And" and len(node.input) == 2:
        parts = [_conjuncts(x, producer, depth + 1) for x in node.input]
        if any(p is None for p in parts):
            return None
        return [c for p in parts for c in p[0]], [x for p in parts for x in p[1]]
    if node.op_type in _CONDITIONS and len(node.input) == 2:
        return [(node.op_type, list(node.input))], []
    if node.op_type == "Not" and len(node.input) == 1:
        _, inner = through(node.input[0])
        if inner is not None and inner.domain in _ONNX and inner.op_type in _NEGATED and len(inner.input) == 2:
            return [(_NEGATED[inner.op_type], list(inner.input))], []
        return None
    if node.op_type == "Constant":
        return [], [name]
    return None


def _margin(op: str, lhs: D.Dim, rhs: D.Dim) -> D.Dim:
    """``g`` such that comparison ``op`` of ``lhs`` and ``rhs`` holds exactly when ``g >= 1``."""
    left_smaller, shift = _CONDITIONS[op]
    a, b = (lhs, rhs) if left_smaller else (rhs, lhs)
    return D.add(D.sub(b, a), shift)


def _entry_margins(ctx) -> list[D.Dim] | None:
    """The Loop's ``cond`` input as comparisons made before the Loop in its graph: their margins
    (:func:`_margin`: the condition holds exactly when every margin is at least 1), or None
    when it is not such a conjunction (or a conjunct's value is unknown)."""
    name = ctx.node.input[1]
    eng = ctx.engine

    def producer(x: str):
        found = ctx.producer(x)
        return None if found is None else found[1]

    got = _conjuncts(name, producer)
    if got is None:
        return None
    nodes, others = got
    for x in others:  # operands that are not comparisons: known true, or nothing is known
        if _known_bool(ctx.scope.get(x)) is not True:
            return None
    margins = []
    for op, operands in nodes:
        facts = [ctx.scope.get(x) for x in operands]
        lhs, rhs = (None if f is None else _scalar_value(eng.resolve_fact(f)) for f in facts)
        if lhs is None or rhs is None:
            return None
        margins.append(_margin(op, lhs, rhs))
    return margins


def _condition_trip(ctx, body, initial, carried, bound: D.Dim | None, c0: bool | None, mark: int) -> D.Dim | None:
    """How many iterations a Loop runs when its body ends it by comparing counters with
    loop-invariant values (tf2onnx's while loops: ``cond = Less(i + 1, n)`` with ``i`` carried
    from 0, or the iteration number), at most ``bound`` (``M``; None: no bound); else None.

    Symbolic induction, in a sandbox that leaves no trace: ``j`` (a fresh symbol) stands for
    the number of the body run, from 1, whose iteration-number input is ``j - 1``. A carried int
    scalar whose value varies (unknown at the fixpoint) and starts at a known ``v0`` is a
    counter when one run adds a constant ``step`` to it whatever its value, so it enters run
    ``j`` as ``v0 + step*(j - 1)``. Run ``j`` at that point turns each comparison the condition
    is a conjunction of into ``g(j) >= 1`` (the loop goes on after run ``j`` exactly when every
    one holds), ``g`` affine in ``j``, falling by ``s >= 1`` per run: ``g(j) = g0 - s*j``. A
    comparison ends the loop after run ``ceil(g0/s)`` when that is at least 1, after run 1
    otherwise; the loop ends at the first that does. So, when the condition holds on entry
    (``c0``), the count is ``min(M, min over the comparisons of max(1, ceil(g0/s)))``.

    When the entry condition is unknown but is itself a conjunction of comparisons before the
    Loop, with margins ``h`` (it holds when every ``h >= 1``), and (i) every body comparison's
    ``g0`` is at least some ``h`` and (ii) every ``h`` is at least some ``g0``, the count is
    ``max(0, min(M, min ceil(g0/s)))``: if the entry condition holds, (i) makes each
    ``ceil(g0/s) >= 1`` (the formula above); if it fails, some ``h <= 0`` and by (ii) some
    ``ceil(g0/s) <= 0``, so the count is 0 as it must be. tf2onnx computes the entry condition
    by the same function on the initial values, which is ``g`` at ``j = 0`` (``g0 = h``).

    A comparison made in a float type is the integer one only while both sides are integers
    the type holds exactly: both sides at runs 1 and ``T`` (the ends of their affine course)
    must be within that; where the ranges do not prove it, float32 and double assume it (an
    info diagnostic and a bound guard, as a Cast to float does) and float16/bfloat16 leave
    the count unproven.
    """
    cond_out = body.output[0].name if body.output else ""
    producers = {o: n for n in body.node for o in n.output if o}
    got = _conjuncts(cond_out, producers.get)
    if got is None or not got[0]:
        return None
    conds, others = got
    hs = None if c0 is True else _entry_margins(ctx)
    if c0 is not True and not hs:
        return None  # an entry condition not known and not comparisons: no trial needed
    eng = ctx.engine
    sym = ctx.symbols
    path = graph_path(ctx.graph, ctx.index, "body")
    saved = {p: f for p, f in eng.graph_facts.items() if p == path or p.startswith(path + "/")}
    iteration = lambda j: tensor(TensorProto.INT64, (), (D.sub(j, 1),))  # noqa: E731
    try:
        with sandbox(ctx, keep_diagnostics=False):
            j = ctx.fresh()
            # which carried values are counters: their step over one run
            probe = list(carried)
            starts: dict[int, tuple[D.Dim, D.Expr]] = {}
            for i, (f0, f) in enumerate(zip(initial, carried)):
                v0 = _scalar_value(f0)
                if (
                    v0 is not None
                    and f is not None
                    and f.kind == "tensor"
                    and f.dtype in _INT_DTYPES
                    and _scalar_value(f) is None  # varies: a known value at the fixpoint is invariant
                ):
                    c = ctx.fresh()
                    starts[i] = (v0, c)
                    probe[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (c,), "tensor")
            steps: dict[int, D.Dim] = {}
            if starts:
                outs = run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *probe])
                for i, (v0, c) in starts.items():
                    after = _scalar_value(outs[1 + i] if 1 + i < len(outs) else None)
                    step = None if after is None else D.sub(after, c)
                    if type(step) is int:
                        steps[i] = D.add(v0, D.mul(step, D.sub(j, 1)))
            at_j = list(carried)
            for i, v in steps.items():
                f = carried[i]
                at_j[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (v,), "tensor")
            run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *at_j])
            facts = eng.graph_facts.get(path, {})
            for x in others:  # And operands that are not comparisons must be known true
                if _known_bool(facts[x] if x in facts else ctx.scope.get(x)) is not True:
                    return None
            sides = []
            for op, operands in conds:
                got = [facts[x] if x in facts else ctx.scope.get(x) for x in operands]  # the body's, else outer
                if any(f is None for f in got):
                    return None
                lhs, rhs = (_scalar_value(eng.resolve_fact(f)) for f in got)
                if lhs is None or rhs is None:
                    return None
                exact = {_FLOAT_EXACT.get(f.dtype) for f in got} - {None}
                sides.append((op, lhs, rhs, min(exact) if exact else None))
    finally:
        for p in [p for p in eng.graph_facts if (p == path or p.startswith(path + "/")) and p not in saved]:
            del eng.graph_facts[p]
        eng.graph_facts.update(saved)

    name = j.terms[0][0][0].name
    made_up = set(sym.fresh_symbols[mark:])
    ends, g0s = [], []
    for op, lhs, rhs, _ in sides:
        g = _margin(op, lhs, rhs)
        g0, g1, g2 = (D.substitute(g, {name: x}) for x in (0, 1, 2))
        slope = D.sub(g1, g0)
        if type(slope) is not int or D.sub(g2, g1) != slope or D.symbols(g0) & made_up:
            return None
        if slope == 0:
            if sym.prove_le(1, g0):
                continue  # holds at every run: never what ends the loop
            return None
        if slope > 0:
            return None
        s = -slope
        ends.append(D.floordiv(D.add(g0, s - 1), s))
        g0s.append(g0)
    if not ends:
        return None
    if hs is None:  # the condition holds on entry
        ends = [D.dmax(1, e) for e in ends]
    elif not all(any(sym.prove_le(h, g0) for h in hs) for g0 in g0s) or not all(
        any(sym.prove_le(g0, h) for g0 in g0s) for h in hs
    ):
        return None
    trip = D.dmin(*ends) if len(ends) > 1 else ends[0]
    if bound is not None:
        trip = D.dmin(bound, trip)
    trip = sym.simplify(D.dmax(0, trip))
    assumed = []
    for _, lhs, rhs, bits in sides:  # a float comparison: exact while both sides are in range
        if bits is None:
            continue
        limit = 2**bits
        for at in (1, D.dmax(1, trip)):
            for v in (lhs, rhs):
                v = sym.simplify(D.substitute(v, {name: at}))
                lo, hi = sym.interval(v)
                if lo is not None and hi is not None and -limit <= lo and hi <= limit:
                    continue
                if bits < 24 or D.symbols(v) & made_up:
                    return None  # float16/bfloat16 hold too few integers to assume it
                assumed.append((v, limit))
    for v, limit in assumed:  # as a Cast to float32/double does (elementwise.exact_in_float)
        text = f"assuming |{D.format(v)}| <= {limit} (the loop condition exact in float)"
        ctx.diag("info", codes.ASSUMED_EXACT_FLOAT, text)
        ctx.assume("bound", v, limit)
        ctx.assume("bound", -limit, v)
    return trip


def _zero_trip_dims(f: Fact, declared: TypeProto, symbols) -> list[D.Dim | None] | None:
    """The dims after the leading 0 of a scan output when the Loop runs no iteration, as
    onnxruntime makes them: the body output's shape as its graph knows it (declared, merged
    with onnx's inference), each dim_value kept and any other dim 0, rank 1 when no shape is
    known. Per dim: the declared dim_value; 0 where the dim is not declared as a number and is
    inferred over the input symbols (onnx's inference cannot have a number there); None where
    it is not known which. None when the rank is not known (no declared shape)."""
    tt = declared.tensor_type if declared.HasField("tensor_type") else None
    if tt is None or not tt.HasField("shape"):
        return None
    decl = list(tt.shape.dim)
    inferred = f.shape if f.shape is not None and len(f.shape) == len(decl) else None
    out: list[D.Dim | None] = []
    for k, d in enumerate(decl):
        if d.HasField("dim_value"):
            out.append(d.dim_value)
            continue
        x = None if inferred is None else inferred[k]
        if x is not None and type(x) is not int and not any(symbols.is_fresh(s) for s in D.symbols(x)):
            out.append(0)
        else:
            out.append(None)
    return out


def _at_least_one(symbols, trip: D.Dim) -> bool:
    """Whether iteration count ``trip`` is proven at least 1. Input symbols are sizes of at
    least 1; a fresh symbol is not taken to be (an unknown count, a data-dependent size may be 0)."""
    if type(trip) is int:
        return trip >= 1
    return not any(symbols.is_fresh(s) for s in D.symbols(trip)) and symbols.prove_le(1, trip)


def _scan_output(ctx, f: Fact | None, trip: D.Dim, declared: TypeProto, runs: bool) -> Fact:
    """A Loop's scan output: ``trip`` values like ``f`` (one iteration's, from the body output
    declared as ``declared``) stacked on a new leading axis, as onnxruntime returns it.

    Where ``trip`` is proven at least 1 (``runs``) that is ``[trip, *f's dims]``. Where it may be 0, a dim
    holds only when it is also what onnxruntime gives after no iteration
    (:func:`_zero_trip_dims`: ``z``): a dim ``x`` of ``f`` is ``z + (x - z)*min(1, trip)``
    (``x`` for ``trip >= 1``, ``z`` for 0; a join of ``x`` and ``z`` where ``trip`` is a fresh
    symbol), a fresh symbol where ``z`` is not known, and the rank is unknown where the
    zero-trip rank is not known or differs.
    """
    if f is None or f.shape is None or f.kind != "tensor":
        return Fact(0 if f is None else f.dtype)
    sym = ctx.symbols
    if runs:
        return _stack(f, trip)
    z = _zero_trip_dims(f, declared, sym)
    if z is None or len(z) != len(f.shape):
        return Fact(f.dtype, None, None, f.kind)
    # min(1, trip) is 1 when the loop ran, else 0; not for a count that is a made-up symbol
    # (symbols count as sizes of at least 1): there the dim is one of the two, a join
    some = None if any(sym.is_fresh(s) for s in D.symbols(trip)) else D.dmin(1, trip)
    dims = []
    for x, zd in zip(f.shape, z):
        if zd is None:
            dims.append(ctx.fresh())
        elif x == zd:
            dims.append(x)
        elif some is None:
            dims.append(sym.join((x, zd)))
        else:
            dims.append(sym.simplify(D.add(zd, D.mul(D.sub(x, zd), some))))
    return Fact(f.dtype, (trip, *dims), None, f.kind)


def _loop_inputs(carried: list[Fact | None]) -> list[Fact | None]:
    """The body's inputs: the iteration number, the condition, the carried values.

    The body only ever runs with its condition input true (an iteration starts only while the
    condition holds; an absent condition counts as true), so that value is known.
    """
    iteration = tensor(TensorProto.INT64, ())
    cond = tensor(TensorProto.BOOL, (), (1,))
    return [iteration, cond, *carried]


def _scan_run(ctx, body, states: list, elems: list, seq_len: D.Dim, out_axes: list[int], batch: D.Dim | None):
    """Shared by every Scan version: run the body, stack its scan outputs."""
    n_states = len(states)
    carried, outs = _iterate(ctx, body, "body", lambda c: [*c, *elems], states, 0)
    scans = []
    for k, f in enumerate(outs[n_states:]):
        axis = out_axes[k] if k < len(out_axes) else 0
        s = _stack(f, seq_len, axis)
        if batch is not None:
            s = _stack(s, batch, 0)
        scans.append(s)
    if batch is not None:
        carried = [_stack(f, batch, 0) for f in carried]
    return [*carried, *scans]


def _check_scan_body(body, n_states: int, n_scan: int) -> None:
    """A Scan body takes one input per loop state variable and per scan input, and gives one
    output per loop state variable before its scan outputs (onnx and onnxruntime refuse
    anything else)."""
    if len(body.output) < n_states:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Scan has {n_states} loop state variables but its body gives {len(body.output)} output(s): "
            "one per loop state variable, then the scan outputs",
        )
    if len(body.input) != n_states + n_scan:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Scan body takes {len(body.input)} input(s) "
            f"for {n_states} loop state variables and {n_scan} scan input(s)",
        )


def _scan_len(ctx, xs: list[Fact | None], axes: list[int]) -> tuple[D.Dim, list[Fact]]:
    """The common length of the scanned axes and each scan input's element fact."""
    n = None
    elems = []
    for x, axis in zip(xs, axes):
        if x is None or x.shape is None:
            elems.append(Fact(0 if x is None else x.dtype))
            continue
        a = norm_axis(axis, len(x.shape))
        d = x.shape[a]
        n = d if n is None else ctx.unify(n, d)
        elems.append(Fact(x.dtype, x.shape[:a] + x.shape[a + 1 :], None, x.kind))
    return (ctx.fresh() if n is None else n), elems


def _drop_batch(f: Fact | None) -> Fact:
    if f is None or not f.shape:
        return Fact(0 if f is None else f.dtype)
    return Fact(f.dtype, f.shape[1:], None, f.kind)


@register("Scan", since=8)
def scan_v8(ctx, ins: list) -> list:
    """Scan-8: inputs carry a leading batch axis, then (for scan inputs) the sequence axis."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Scan needs a body")
    n_scan = ctx.attr("num_scan_inputs")
    rest = list(ins[1:])
    if n_scan is None or n_scan > len(rest):
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH, f"Scan num_scan_inputs={n_scan} for {len(rest)} input(s)"
        )
    n_states = len(rest) - n_scan
    _check_scan_body(body, n_states, n_scan)
    batch = None
    for f in rest:
        if f is not None and f.shape:
            batch = f.shape[0] if batch is None else ctx.unify(batch, f.shape[0])
    if batch is None:
        batch = ctx.fresh()
    states = [_drop_batch(f) for f in rest[:n_states]]
    xs = [_drop_batch(f) for f in rest[n_states:]]
    seq_len, elems = _scan_len(ctx, xs, [0] * n_scan)
    return _scan_run(ctx, body, states, elems, seq_len, [], batch)


@register("Scan", since=9)
def scan_v9(ctx, ins: list) -> list:
    """Scan-9+: ``scan_input_axes`` / ``scan_output_axes``; no batch axis. The spec allows negative
    axes only from Scan-11, but onnx's inference and onnxruntime accept them in Scan-9 as well
    (counted from the end), and so does this rule."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Scan needs a body")
    n_scan = ctx.attr("num_scan_inputs")
    if n_scan is None or n_scan > len(ins):
        raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, f"Scan num_scan_inputs={n_scan} for {len(ins)} input(s)")
    n_states = len(ins) - n_scan
    _check_scan_body(body, n_states, n_scan)
    in_axes = list(ctx.attr("scan_input_axes", [0] * n_scan))
    n_outs = len(body.output) - n_states
    out_axes = list(ctx.attr("scan_output_axes", [0] * max(n_outs, 0)))
    if len(in_axes) != n_scan or (n_outs > 0 and len(out_axes) != n_outs):
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH, "Scan axes attributes do not match the number of scan inputs/outputs"
        )
    states = [Fact() if f is None else Fact(f.dtype, f.shape, f.value, f.kind, f.elem) for f in ins[:n_states]]
    seq_len, elems = _scan_len(ctx, list(ins[n_states:]), in_axes)
    return _scan_run(ctx, body, states, elems, seq_len, out_axes, None)
