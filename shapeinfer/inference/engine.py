"""The inference engine: walks a model's graphs and subgraphs and applies the per-op rules.

Contract of :func:`infer`:

- Every tensor of every graph gets a :class:`~shapeinfer.symbolic.facts.Fact`. Dims come from the graph
  inputs (their ``dim_param`` symbols, or a stable ``<input>_d<axis>`` name for an open dim) and
  flow through native rules (:mod:`shapeinfer.inference.ops`) or, for ops without one, through onnx's own
  per-node inference with symbolic dims passed as ``dim_param`` text.
- A dim that cannot be determined becomes a fresh symbol ``unk_<n>`` (numbered in walk order,
  so the same model always gives the same names).
- When an op's contract requires two different dims to be equal, the equality is recorded,
  inference continues with one representative (a graph-input symbol over a fresh one), and a
  diagnostic reports it when it joins symbols that are not fresh.
- Nothing a model contains makes it raise: invalid nodes become diagnostics.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

import onnx

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.base.text import text
from shapeinfer.inference.bindings import pinned
from shapeinfer.inference.declarations import (
    checker_refuses_declarations,
    contradictions,
    declaration_severity,
    static_kind,
)
from shapeinfer.inference.fallback import Fallback
from shapeinfer.inference.limits import MAX_EXPR_SIZE
from shapeinfer.inference.node_context import MAIN
from shapeinfer.inference.policy import DEFAULT_POLICY, InferencePolicy
from shapeinfer.inference.result import Result
from shapeinfer.inference.walker import Engine, InferenceTimeout
from shapeinfer.io.onnxio import graph_path, subgraph_attrs, write_shape
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.guards import CONTRADICTION, Ledger, contradiction_diagnostics
from shapeinfer.symbolic.guards import contradictions as guard_contradictions
from shapeinfer.symbolic.intervals import holds_le
from shapeinfer.symbolic.scope import GuardEvent

#: What the rest of the package imports from here: the entry points and the names they take
#: or raise (the walk itself is :mod:`.walker`'s).
__all__ = [
    "MAIN",
    "MAX_EXPR_SIZE",
    "Engine",
    "Fallback",
    "InferencePolicy",
    "InferenceTimeout",
    "Result",
    "apply_input_overrides",
    "binding_contradictions",
    "check_declarations",
    "contradicted_by",
    "graph_path",
    "infer",
]


def apply_input_overrides(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[D.Dim]] | None) -> None:
    """Rewrite graph-input shapes in place from ``{name: dims}``; raises KeyError for unknown names."""
    if not input_shapes:
        return
    by_name = {vi.name: vi for vi in model.graph.input}
    for name, shape in input_shapes.items():
        vi = by_name.get(name)
        if vi is None:
            raise KeyError(f"no graph input named {name!r} (inputs: {', '.join(text(n) for n in by_name)})")
        tt = vi.type.tensor_type
        tt.shape.Clear()
        write_shape(tt, tuple(shape))


def infer(
    model: onnx.ModelProto,
    *,
    base_dir: str | None = None,
    input_shapes: Mapping[str, Sequence[D.Dim]] | None = None,
    bind: Mapping[str, int] | None = None,
    timeout: float | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    record_reads: bool = False,
    policy: InferencePolicy | None = None,
    defaults_as_constants: bool = False,
    onnxruntime_conventions: bool = False,
) -> Result:
    """Infer every tensor's facts in ``model`` (not modified unless ``input_shapes`` is given).

    ``input_shapes`` overrides graph-input dims; ``bind`` specialises symbols to integers
    before inference so that everything derived from them folds. ``dim_ranges`` gives symbols
    integer ranges (``{"seq": (1, 512)}``, hi None for unbounded; default ``[1, inf)``): the
    ``min``/``max`` they decide are decided, and the guards they prove are not recorded.
    ``timeout`` (seconds, above 0) raises :class:`InferenceTimeout` when inference runs longer.
    ``record_reads`` keeps what the walk read of each main-graph node (``Result.node_reads``).
    ``policy`` gives the readings the run takes besides shapeinfer's own (:class:`InferencePolicy`:
    the drop-ins' ``defaults_as_constants`` and ``onnxruntime_conventions``); the two keywords of
    those names, when true, are added to it.
    """
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout is the seconds inference may take, above 0 (or None: no limit), not {timeout!r}")
    if policy is None:
        policy = DEFAULT_POLICY
    if defaults_as_constants or onnxruntime_conventions:
        policy = replace(
            policy,
            defaults_as_constants=policy.defaults_as_constants or defaults_as_constants,
            onnxruntime_conventions=policy.onnxruntime_conventions or onnxruntime_conventions,
        )
    if input_shapes:
        apply_input_overrides(model, input_shapes)
    deadline = None if timeout is None else time.monotonic() + timeout
    kw = dict(
        base_dir=base_dir,
        input_shapes=input_shapes,
        bind=bind,
        dim_ranges=dim_ranges,
        record_reads=record_reads,
        policy=policy,
    )
    eng, result = _run(model, timeout=timeout, soft_guards=True, **kw)
    soft = _unimplied_soft_guards(eng)
    if soft:
        # the model may run where a soft guard fails: infer again without taking any, so that
        # every shape holds wherever it runs, and say so once
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        _, result = _run(model, timeout=left, soft_guards=False, **kw)
        led = Ledger()
        for kind, a, b, node in soft:
            led.add(kind, a, b, node)
        said = "; ".join(f"{g.text} (from {', '.join(g.nodes[:3])})" for g in led)
        msg = f"not assumed: {said}; the model also runs where it fails, so its dims are the exact forms there too"
        result.diagnostics.append(Diagnostic("info", codes.INPUT_GUARD, msg))
    return result


def _unimplied_soft_guards(eng: Engine) -> list[GuardEvent]:
    """The soft guards of ``eng``'s run that the hard ones (with the caller's ranges) do not
    imply: the model may run where such a guard fails."""
    sym = eng.symbols
    if not sym.soft:
        return []
    soft = set(sym.soft)
    hard = Ledger()
    for i, (kind, a, b, node) in enumerate(sym.guard_events):
        if i not in soft:
            hard.add(kind, a, b, node)
    ranges = hard.ranges(sym.ranges, sym.input_symbols)
    out = []
    for i in sym.soft:
        kind, a, b, _ = sym.guard_events[i]
        if not (kind == "bound" and holds_le(D.resolve(a, sym.subst), D.resolve(b, sym.subst), ranges)):
            out.append(sym.guard_events[i])
    return out


def _run(
    model: onnx.ModelProto,
    *,
    base_dir: str | None,
    input_shapes: Mapping[str, Sequence[D.Dim]] | None,
    bind: Mapping[str, int] | None,
    timeout: float | None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None,
    record_reads: bool,
    policy: InferencePolicy,
    soft_guards: bool,
) -> tuple[Engine, Result]:
    """One inference run of :func:`infer` (the input shapes already applied)."""
    eng = Engine(
        model,
        base_dir,
        timeout=timeout,
        dim_ranges=dim_ranges,
        policy=policy,
        soft_guards=soft_guards,
    )
    if record_reads:
        eng.node_reads = [None] * len(model.graph.node)
    graph = model.graph
    inputs = None
    if bind:
        inputs = []
        init_names = {t.name for t in graph.initializer}
        for vi in graph.input:
            f = eng.input_fact(vi)
            if f.shape is not None and vi.name not in init_names:
                f = Fact(f.dtype, tuple(D.substitute(d, bind) for d in f.shape), None, f.kind, f.elem)
            inputs.append(f)
    eng.run_graph(graph, None, inputs)
    facts = eng.graph_facts[MAIN]
    sym = eng.symbols
    if sym.subst:
        for gf in eng.graph_facts.values():
            for k, f in gf.items():
                gf[k] = eng.resolve_fact(f)
    check_declarations(eng, bind)
    result = Result(
        model,
        facts,
        eng.graph_facts,
        sym.input_symbols,
        sym.fresh_symbols,
        sym.equalities,
        eng.diagnostics,
        eng.capped,
        dict(sym.subst),
        sym.guard_events,
        dict(sym.ranges),
        eng.node_reads,
        frozenset(sym.joins),
        dict(bind or {}),
        {name: tuple(dims) for name, dims in (input_shapes or {}).items()},
        eng.dead_with_errors,
        frozenset(eng.unwritten),
    )
    if sym.guard_events:  # guards no input in the ranges satisfies: G015 errors
        led = result.ledger()
        given = pinned(bind, dim_ranges)
        result.diagnostics.extend(
            contradiction_diagnostics(led, sym.ranges, sym.input_symbols, input_shapes or (), given)
        )
    return eng, result


def binding_contradictions(
    model: onnx.ModelProto,
    bind: Mapping[str, int],
    *,
    base_dir: str | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    timeout: float | None = None,
) -> list[Diagnostic]:
    """G015 errors for the values of ``bind`` that contradict a guard of ``model`` inferred
    without them (in the bound run a bound symbol is gone from the guards, and the clash shows
    only as a G002 at some node): each names the value, the guard and its nodes. ``model``
    carries any input-shape overrides already."""
    free = infer(model, base_dir=base_dir, timeout=timeout, dim_ranges=dim_ranges)
    return contradicted_by(free, bind, dim_ranges)


def contradicted_by(
    free: Result, bind: Mapping[str, int], dim_ranges: Mapping[str, tuple[int, int | None]] | None = None
) -> list[Diagnostic]:
    """G015 errors for the values of ``bind`` that contradict a guard of ``free``, an inference
    of the model without them (under ``dim_ranges``, as it was inferred)."""
    given = {**(dim_ranges or {}), **{k: (v, v) for k, v in bind.items()}}
    found = guard_contradictions(free.ledger(), given, free.input_symbols)
    return [Diagnostic("error", CONTRADICTION, c.message) for c in found if c.ranges.keys() & bind.keys()]


def check_declarations(eng: Engine, bind: Mapping[str, int] | None = None) -> None:
    """Report as G006 every declared tensor type of every graph the run inferred that contradicts
    the inferred fact (see :func:`shapeinfer.inference.declarations.contradictions`), at
    :func:`~shapeinfer.inference.declarations.declaration_severity` (an error only where onnx's
    checker refuses the model for it); declared dims are read under the run's substitution and
    ``bind``, and the caller's ranges decide their ``min``/``max``."""
    sym = eng.symbols
    subst = {**sym.subst, **bind} if bind else sym.subst
    assumed: set[frozenset] | None = None
    refused: list[bool] = []  # onnx's verdict, asked once and only for a static contradiction
    for path, declared in eng.graph_declared.items():
        facts = eng.graph_facts.get(path, {})
        outputs: set[str] | None = None
        for name, tp in declared.items():
            if eng.deadline is not None and time.monotonic() > eng.deadline:  # each parses its dims
                raise InferenceTimeout(f"inference took longer than {eng.timeout:g}s")
            f = facts.get(name)
            if f is None or not contradictions(f, tp, sym.input_symbols, subst, ranges=sym.ranges)[0]:
                continue
            if assumed is None:
                assumed = set()
                for x, y in sym.equalities:
                    try:
                        assumed.add(frozenset((D.parse(x), D.parse(y))))
                    except Exception:
                        continue
            problems, provable = contradictions(f, tp, sym.input_symbols, subst, assumed, sym.ranges)
            if not problems:
                continue
            nodes = eng.graph_nodes.get(path, ())
            k = next((i for i, n in enumerate(nodes) if name in n.output), None)
            if outputs is None:
                outputs = _graph_outputs(eng.model, path)
            where = "output" if name in outputs else "value_info"
            msg = f"{where} {name!r} declares {'; '.join(problems)}"
            if not provable:
                msg += ": they differ unless those symbols are equal"
            node = None if k is None else nodes[k]
            kind = static_kind(f, tp)
            if kind is not None and not refused:
                refused.append(checker_refuses_declarations(eng.model))
            eng.diagnostics.append(
                Diagnostic(
                    declaration_severity(kind, bool(refused) and refused[0]),
                    codes.DECLARED_SHAPE_MISMATCH,
                    msg,
                    None if node is None else node.name or None,
                    None if node is None else node.op_type,
                    k,
                    path,
                    name,
                )
            )


def _graph_outputs(model: onnx.ModelProto, path: str) -> set[str]:
    """The output names of the graph at ``path`` (empty for a function body)."""
    g = model.graph
    for part in path.split("/")[1:]:
        index, _, attr = part.partition(".")
        if not index.isdigit() or int(index) >= len(g.node):
            return set()
        sub = dict(subgraph_attrs(g.node[int(index)])).get(attr)
        if sub is None:
            return set()
        g = sub
    return {o.name for o in g.output}
