"""What the control-flow rules (:mod:`.control_flow`, and :mod:`.sequence`'s SequenceMap) share:
facts of alternatives merged (:func:`merge_facts`), loop-carried facts widened to a fixpoint
(:func:`widen`), bodies inferred as subgraphs (:func:`run_body`), and sandboxes whose symbolic
effects and diagnostics are undone (:func:`sandbox`)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

from onnx import TypeProto

from shapeinfer.io.onnxio import type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact


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


def top_fact(f: Fact | None) -> Fact | None:
    """Everything about ``f`` given up but its kind and element type."""
    if f is None:
        return None
    return Fact(f.dtype, None, None, f.kind, None if f.elem is None else top_fact(f.elem))


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
def sandbox(ctx, keep_diagnostics: bool = True, never_runs: bool = False, runs_when: D.Dim | None = None):
    """Run a subgraph inference whose symbolic effects must not outlive it.

    On exit the run's symbolic scope is rolled back (:meth:`SymbolScope.rollback`: the
    substitution, equalities and guards are as before, so a branch that is not taken, or an
    iteration that is discarded, assumes nothing); diagnostics raised inside are kept unless
    ``keep_diagnostics`` is False. Facts computed inside stay (with the fresh symbols they
    name). Setting ``keep = True`` on the yielded box keeps everything after all (the run
    turned out to be the one that counts). ``never_runs``: the subgraph provably never runs;
    an error dropped from it is counted (``Engine.dead_with_errors``). Soft guards taken inside
    are kept unless it never runs: the facts that stay may rest on them
    (:meth:`SymbolScope.rollback`'s ``keep_soft``). ``runs_when``: the subgraph runs exactly
    where this dim is at least 1; its hard guards are kept as alternatives of that dim being at
    most 0 (``runs_when`` of :meth:`SymbolScope.rollback`).
    """
    diagnostics = ctx.engine.diagnostics
    mark = ctx.symbols.checkpoint()
    ndiag = len(diagnostics)
    box = _Box()
    try:
        yield box
    finally:
        if not box.keep:
            ctx.symbols.rollback(mark, keep_soft=not never_runs, runs_when=runs_when)
            if not keep_diagnostics:
                if never_runs and any(d.severity == "error" for d in diagnostics[ndiag:]):
                    ctx.engine.dead_with_errors += 1
                del diagnostics[ndiag:]


def known_bool(f: Fact | None) -> bool | None:
    if f is None or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    if type(v) is int or isinstance(v, float):
        return bool(v)
    return None
