"""Optimize: the model read, the rounds run (:mod:`shapeinfer.passes.rounds`), the result annotated.

:func:`optimize_with_report` runs ``fold-if`` first, until it folds nothing (with ``bind``'s
values, before they are written into the graph inputs: a branch that is dead at the binding may
be invalid there), then ``reshape-v1-to-v5`` once (onnx's version converter or inliner first
when the model is below opset 5), lifts the opset when asked; then the rounds repeat the other
selected passes until a round changes nothing (so a second run changes
nothing), and annotates the result like ``shapeinfer -o``. While Ifs or Loops are left after
the first fold, ``fold-if`` joins the rounds too (what the index passes fold may decide a
condition). The passes then run in the subgraphs and in the model-local function bodies.
:class:`~shapeinfer.passes.context.PassContext` alone decides when the model is inferred,
indexed, exported and written out.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping, Sequence

import onnx

from shapeinfer.base import codes
from shapeinfer.base.progress import Progress
from shapeinfer.inference.bindings import BIND, Unsatisfiable, check_bind_values, check_model
from shapeinfer.inference.engine import contradicted_by, infer
from shapeinfer.inference.policy import DEFAULT_POLICY
from shapeinfer.io.edit import read_for_editing
from shapeinfer.io.modelsource import ModelLike
from shapeinfer.io.source import Source
from shapeinfer.ir.queries import default_opset
from shapeinfer.passes._functions import optimize_functions
from shapeinfer.passes._subgraphs import count_subgraph_nodes
from shapeinfer.passes.context import PassContext
from shapeinfer.passes.errors import OptimizeError
from shapeinfer.passes.load_check import LoadBaseline, make_loadable
from shapeinfer.passes.registry import MAX_FOLD_GROWTH, PASSES, get_pass, selected_passes
from shapeinfer.passes.remaining import remaining
from shapeinfer.passes.report import OptimizeReport, PassReport
from shapeinfer.passes.rounds import in_subgraphs, run_rounds


def check_bind(model: onnx.ModelProto, bind: Mapping[str, int]) -> dict[str, int]:
    """``bind`` checked for ``model`` (:mod:`shapeinfer.inference.bindings`, the rules and wording of
    ``infer`` and the command line): :class:`~shapeinfer.inference.bindings.BindError` for a value that
    is not an int of at least 1 within int64 or a symbol no graph input uses. Returns it."""

    bind = check_bind_values(bind)
    check_model(model, bind=bind)
    return bind


def optimize_with_report(
    model: ModelLike | Source,
    *,
    passes: Sequence[str] | None = None,
    bind: Mapping[str, int] | None = None,
    target_opset: int | None = None,
    base_dir: str | None = None,
    timeout: float | None = None,
    keep_alive: list | None = None,
    max_fold_growth: int = MAX_FOLD_GROWTH,
    runtime_check: bool = True,
    all_shapes: bool = False,
) -> tuple[onnx.ModelProto, OptimizeReport]:
    """Optimize ``model`` and say what each pass did.

    ``model``: a ModelProto (not modified), a path, the bytes of a serialised model, an
    ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph`` (:mod:`shapeinfer.io.modelsource`;
    TypeError for anything else), or a file already read in full as a
    :class:`~shapeinfer.io.source.Source` (its model is handed over: the passes change it).
    The result is always a ModelProto.

    ``passes`` selects and orders passes by name (default: all, in pipeline order); ``dce``
    always runs after them. ``bind`` specialises input symbols to ints first (the graph
    inputs' dims are rewritten, so the result is valid only at those values; a binding that
    cannot be right raises :class:`~shapeinfer.inference.bindings.BindError` up front, as ``infer`` does;
    a value no input can have, one that contradicts a guard of the model, is
    :class:`~shapeinfer.inference.bindings.Unsatisfiable`, a BindError naming the guard).
    With ``bind``, a result that fails onnx's strict inference or has an
    engine error where the input has neither falls
    back to keeping declared dims (:mod:`shapeinfer.passes.load_check`; ``notes`` says so) or
    raises OptimizeError.
    ``target_opset`` lifts the default-domain opset with onnx's version converter after the
    Reshape-1 rewrite, with inferred shapes in place for adapters that need them; it raises
    OptimizeError when the lifted model holds an op onnxruntime has no kernel for at
    ``target_opset`` and the input has none such, unless ``runtime_check`` is False.
    The result's graph outputs get the inferred types, as ``shapeinfer -o`` writes them; the
    ``value_info`` entries the input has (of tensors the result still has) keep their types
    unless inference contradicts them (then the inferred ones), and no other tensor gets one.
    ``all_shapes`` annotates as ``-o`` does: every entry refined, every tensor typed. (Not by
    default: where onnxruntime can tell more tensors' shapes equal, it reuses buffers between
    them and picks other kernels, and that ran models up to 9 % slower.) Raises
    OptimizeError for bad arguments.
    ``max_fold_growth``: the bytes one tensor ``fold-constants`` stores may add to the model
    (:mod:`shapeinfer.passes.fold_constants`; OptimizeError below 0).
    ``timeout`` (seconds) bounds the whole run: inference and each pass check it, and
    :class:`~shapeinfer.inference.engine.InferenceTimeout` is raised past it.

    ``keep_alive``: for a process that ends right after (the console script, which exits
    without tearing down): the run's large intermediate objects (the edited index, inference
    facts, intermediate models) are appended to it instead of being freed on return, and the
    objects alive are frozen out of the garbage collector (:func:`gc.freeze`). Freeing the
    Python objects of a 250k-node model one by one costs about a tenth of the whole run, and
    collecting them when the collector is re-enabled costs as much again, for memory the
    operating system reclaims at exit anyway.
    """

    gc_was_enabled = gc.isenabled()
    gc.disable()  # the passes build large acyclic object graphs: collection passes only cost
    progress = Progress("optimize")  # a line on a terminal's stderr once it takes over a second
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        if not isinstance(max_fold_growth, int) or max_fold_growth < 0:
            raise OptimizeError(f"max_fold_growth must be a number of bytes (0 or more), not {max_fold_growth!r}")
        return _optimize(
            model,
            passes,
            bind,
            target_opset,
            base_dir,
            progress,
            deadline,
            keep_alive,
            max_fold_growth,
            runtime_check,
            all_shapes,
        )
    finally:
        progress.close()
        if keep_alive is not None:
            gc.freeze()
        if gc_was_enabled:
            gc.enable()


def _optimize(
    model,
    passes,
    bind,
    target_opset,
    base_dir,
    progress,
    deadline=None,
    keep_alive=None,
    max_fold_growth=MAX_FOLD_GROWTH,
    runtime_check=True,
    all_shapes=False,
) -> tuple[onnx.ModelProto, OptimizeReport]:
    t0 = time.perf_counter()
    names = selected_passes(passes)
    if bind:  # the values before the model is read, the symbols once it is
        bind = check_bind_values(bind)
    m, editing = read_for_editing(model)  # and what the write keeps of the input
    if bind:
        check_bind(m, bind)
    if keep_alive is not None:
        keep_alive.append(m)  # the input as loaded (the first round's facts and index point into it)
    base_dir = base_dir or editing.folder
    ctx = PassContext(
        base_dir=base_dir,
        interface={vi.name for vi in m.graph.input},
        bind=bind,
        deadline=deadline,
        keep_alive=keep_alive,
        source=editing.source,
        max_fold_growth=max_fold_growth,
        runtime_check=runtime_check,
    )
    if keep_alive is not None:
        keep_alive.append(ctx)  # its index and facts, whatever the outcome
    nodes_before = len(m.graph.node)
    fn_before = sum(len(fp.node) for fp in m.functions)
    opset_before = default_opset(m)
    # the input's own errors, as infer reports them (a binding that cannot hold was refused
    # above; one a branch cannot take is the load check's fallback; without --bind its facts
    # serve the first pass too); with --bind, or a subgraph that never runs and would fail
    # (whose types the annotation writes), what the input passes, which the output must pass
    # too (inferred as read: the passes' facts take no declaration), and its declared graph
    # input and output types
    baseline = None
    if bind:
        progress.update("checking the input")
        unbound = infer(m, base_dir=base_dir, timeout=ctx.remaining())
        clashes = contradicted_by(unbound, bind)
        if clashes:  # a value no input can have: nothing to optimize for (G015, as -o says it)
            raise Unsatisfiable("", "; ".join(d.message for d in clashes), BIND)
        baseline = LoadBaseline.of(m, base_dir, result=unbound)
        found = unbound.diagnostics
        del unbound
    else:
        first = ctx.infer(m)
        found = first.diagnostics
        # what the input may not load with (found errors, written only with --force, and the
        # rest Result.written_types_may_not_load names) is checked in the output
        if first.written_types_may_not_load():
            progress.update("checking the input")
            baseline = LoadBaseline.of(m, base_dir)
        del first
    declared_io = None
    if baseline is not None:  # the graph inputs' declared types, and the outputs' read at load
        declared_io = (
            {vi.name: onnx.TypeProto.FromString(vi.type.SerializeToString()) for vi in m.graph.input},
            {vi.name: editing.declared[vi.name] for vi in m.graph.output},
        )
    errors = [d for d in found if d.severity == "error"]
    ctx.maybe_unsorted = any(d.code == codes.GRAPH_ORDER_OR_CYCLE and d.graph in (None, "main") for d in found)
    del found
    reports: dict[str, PassReport] = {}
    m, rounds = run_rounds(m, names, ctx, reports, progress, bind, target_opset)
    ctx.defer = False
    holds = any(n.graphs for n in ctx.graph(m).graph.nodes)  # (the index: no walk of the protobuf)
    m = ctx.materialize(m)
    sub_after = sub_before = count_subgraph_nodes(m.graph) if holds else 0
    if sub_before:
        ctx.refresh()
        sub = in_subgraphs(m, names, ctx, reports, progress)
        if sub is not m:
            m = sub
            sub_after = count_subgraph_nodes(m.graph)
            m, dce = ctx.apply(get_pass("dce"), m)  # outer nodes only the subgraphs read may be dead now
            reports.setdefault("dce", PassReport("dce")).add(dce.changes)
            m = ctx.materialize(m)
    if m.functions:  # the passes that hold at every call, in the function bodies
        gm = ctx.graph(m)
        done = optimize_functions(gm, names, default_opset(m) or 0, ctx.max_fold_growth)
        if done:
            m = ctx.export(gm)
            for name, counts in done.items():
                reports.setdefault(name, PassReport(name)).add(counts)
    progress.update("annotating")
    ctx.refresh()
    # the annotation merges facts with what the file declares, as -o's does (the passes took no claim)
    res = ctx.infer(m, whole=True, policy=DEFAULT_POLICY)
    editing.annotate(m, res, keep_declared=not all_shapes)  # the input's entries back after inference: it saw none

    left = remaining(ctx.graph(m), res, ctx.max_fold_growth, ctx.fold_cap, ran=names)
    notes: list[str] = []
    if declared_io is not None:
        progress.update("checking the output")
        notes = make_loadable(m, *declared_io, baseline, bound=bool(bind))
        left.declared_types_kept = bool(notes)
    # make_loadable says when it changed anything
    source = editing.written(changed=bool(notes), node_fields=lambda: ctx.written_nodes(m))
    if ctx.resorted:
        notes.insert(0, "the nodes were not in topological order: they are written sorted")
    order = [n for n in PASSES if n in reports]  # (the OpenVINO passes too, when named)
    report = OptimizeReport(
        passes=[reports[n] for n in order],
        nodes_before=nodes_before,
        nodes_after=len(m.graph.node),
        opset_before=opset_before,
        opset_after=default_opset(m),
        rounds=rounds,
        seconds=time.perf_counter() - t0,
        subgraph_nodes_before=sub_before,
        subgraph_nodes_after=sub_after,
        function_nodes_before=fn_before,
        function_nodes_after=sum(len(fp.node) for fp in m.functions),
        errors=errors,
        notes=notes,
        source=source,
        remaining=left,
    )
    return m, report


__all__ = ["check_bind", "optimize_with_report"]
