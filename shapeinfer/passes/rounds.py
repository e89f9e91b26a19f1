"""Optimize's rounds over one graph: fold-if first, the Reshape-1 rewrite once, then rounds of
the other selected passes until one changes nothing (:func:`run_rounds`), and the same in the
subgraphs of If, Loop and Scan nodes at every depth (:func:`in_subgraphs`).

A pass is not rerun where that provably changes nothing: one declared ``idempotent`` on its
own unchanged output; one whose run found nothing and said ``settled``, when only the passes
its ``settled_under`` names changed the model since.
"""

from __future__ import annotations

import time
from operator import itemgetter

import onnx

from shapeinfer.inference.bindings import specialise_inputs
from shapeinfer.ir.graph import may_hold_subgraphs
from shapeinfer.ir.queries import has_control_flow as graph_has_control_flow
from shapeinfer.ir.queries import toposort
from shapeinfer.passes._subgraphs import defined_names, has_subgraphs, optimize_subgraphs
from shapeinfer.passes.base import PassResult
from shapeinfer.passes.context import Edited, PassContext, node_count
from shapeinfer.passes.registry import MAX_ROUNDS, get_pass
from shapeinfer.passes.report import PassReport
from shapeinfer.passes.reshape_v1_to_v5 import lift_opset, needed, prepare


def _repeated(names: list[str]) -> list[str]:
    """The passes optimize's rounds repeat, in order: the selected ones but the Reshape-1
    rewrite (run once before), with ``dce`` last (fold-if is dropped when nothing is left
    for it)."""
    return [n for n in names if n not in ("reshape-v1-to-v5", "dce")] + ["dce"]


def infers_first(m: onnx.ModelProto, names: list[str], bind, target_opset) -> bool:
    """True when optimize's first inference of ``m`` comes before its first index anyway: the
    first repeated pass after fold-if asks for facts first (``infers_first``) and nothing
    before it changes ``m`` (``bind`` rewrites the graph inputs, the Reshape-1 rewrite and the
    opset lift make a new model)."""

    if bind or target_opset is not None or ("reshape-v1-to-v5" in names and needed(m)):
        return False
    first = next(n for n in _repeated(names) if n != "fold-if")
    return get_pass(first).infers_first


def run_rounds(
    m, names: list[str], ctx: PassContext, reports: dict[str, PassReport], progress, bind=None, target_opset=None
) -> tuple[onnx.ModelProto | Edited, int]:
    """The passes ``names`` on ``m``'s main graph (fold-if first, the Reshape-1 rewrite once,
    then rounds of the others until one changes nothing), counted into ``reports``. Returns the
    model (maybe still pending) and the number of rounds."""

    def run(name: str, model) -> tuple[onnx.ModelProto | Edited, PassResult]:
        ctx.remaining()  # raises past the deadline
        before = node_count(model)
        progress.update(f"{name} (round {rounds}, {before} nodes)" if rounds else name)
        rep = reports.setdefault(name, PassReport(name))
        t = time.perf_counter()
        out, res = ctx.apply(get_pass(name), model)
        rep.record(before, node_count(out), time.perf_counter() - t, res.changes)
        return out, res

    rounds = 0
    control_flow = False
    if "fold-if" in names:
        reads = None
        if infers_first(m, names, bind, target_opset):
            # the first round infers m before it indexes it: inferring now lets the index take
            # what inference read of each node, and tells whether any node can hold a subgraph
            reads = ctx.infer(m).node_reads
        if reads is None or m.functions or may_hold_subgraphs(map(itemgetter(1, 0), reads)):
            # no pass creates an If or a Loop; the index made for asking is the one the passes edit
            control_flow = graph_has_control_flow(ctx.graph(m).graph)
    if control_flow:
        for _ in range(MAX_ROUNDS):  # nested Ifs a fold reveals
            m, res = run("fold-if", m)
            if not res.changed:
                break
    elif "fold-if" in names:  # nothing to fold: reported as a run that changed nothing
        n = node_count(m)
        reports["fold-if"] = PassReport("fold-if", nodes_before=n, nodes_after=n, runs=1)
    if bind:
        specialise_inputs(m, bind)
        ctx.drop_stale_index(m)
    if "reshape-v1-to-v5" in names or target_opset is not None:
        m = _reshape_v1_to_v5(m, ctx, reports, progress)
    if target_opset is not None:
        m = lift_opset(m, target_opset, ctx)
    repeated = _repeated(names)
    if "fold-if" in repeated and not (control_flow and graph_has_control_flow(ctx.graph(m).graph)):
        repeated.remove("fold-if")
    ctx.defer = True  # passes hand each other the index; the model is written when needed
    changed_by: list[str] = []  # the pass of each run so far that changed the model
    after_own: dict[str, int] = {}  # pass -> len(changed_by) right after its latest run
    settled: dict[str, int] = {}  # pass whose latest run changed nothing and said settled -> same
    while rounds < MAX_ROUNDS:
        rounds += 1
        ctx.refresh()  # each round starts from facts of the model as it is
        any_change = False
        for name in repeated:
            p = get_pass(name)
            if after_own.get(name) == len(changed_by) and p.idempotent:
                continue  # the model is its own output: a run now would change nothing
            if name in settled and set(changed_by[settled[name] :]) <= p.settled_under:
                continue  # only passes that cannot give it work changed the model since it found none
            m, res = run(name, m)
            changed = res.changed
            if changed:
                changed_by.append(name)
            after_own[name] = len(changed_by)
            if not changed and res.settled:
                settled[name] = len(changed_by)
            else:
                settled.pop(name, None)
            any_change |= changed
        if not any_change:
            break

    # an unsorted input is written sorted (onnx's checker requires it); the passes keep a sorted
    # graph sorted (what they add, they place), so only an input inference found unsorted is sorted
    gm = ctx.graph(m) if ctx.maybe_unsorted else None
    if gm is not None and toposort(gm.graph):
        m = ctx.export(gm)
        ctx.resorted = True
    return m, rounds


def _reshape_v1_to_v5(m: onnx.ModelProto, ctx: PassContext, reports: dict[str, PassReport], progress):
    """The Reshape-1 rewrite, once: onnx's converter or inliner first when the model needs them
    (:func:`~shapeinfer.passes.reshape_v1_to_v5.prepare`, on the ModelProto), then the pass on
    the index; counted into ``reports`` as one run of the pass."""
    ctx.remaining()  # raises past the deadline
    name = "reshape-v1-to-v5"
    progress.update(name)
    rep = reports.setdefault(name, PassReport(name))
    before = node_count(m)
    t = time.perf_counter()
    m, prepared = prepare(m, ctx)
    m, res = ctx.apply(get_pass(name), m)
    ctx.drop_stale_index(m)  # the index says the old opset: the next pass indexes the model anew
    rep.record(before, node_count(m), time.perf_counter() - t, res.changes)
    rep.add(prepared)
    return m


def in_subgraphs(
    m: onnx.ModelProto, names: list[str], ctx: PassContext, reports, progress, reserved=None, model_inputs=None
):
    """``m`` with the passes ``names`` run in the subgraphs of its main graph's If, Loop and
    Scan nodes, at every depth (:mod:`shapeinfer.passes._subgraphs`); ``m`` itself when none
    changed. Their changes count into ``reports`` (node counts apart: see ``subgraph_nodes``)."""

    if not has_subgraphs(m):
        return m
    res = ctx.infer(m, whole=True)
    if reserved is None:
        reserved = defined_names(m)
    if model_inputs is None:  # the top level: m is the model given
        model_inputs = frozenset(vi.name for vi in m.graph.input)

    def optimize_graph(sub: onnx.ModelProto) -> onnx.ModelProto:
        progress.update(f"subgraph {sub.graph.name} ({len(sub.graph.node)} nodes)")
        sctx = PassContext(
            base_dir=ctx.base_dir,
            fold_cap=ctx.fold_cap,
            max_fold_growth=ctx.max_fold_growth,
            interface={vi.name for vi in sub.graph.input},
            deadline=ctx.deadline,
            keep_alive=ctx.keep_alive,
            reserved=reserved,
        )
        own: dict[str, PassReport] = {}
        out, _ = run_rounds(sub, names, sctx, own, progress)
        sctx.defer = False
        out = sctx.materialize(out)
        for name, rep in own.items():
            total = reports.setdefault(name, PassReport(name))
            total.add(rep.changes)
            total.seconds += rep.seconds
        return in_subgraphs(out, names, sctx, reports, progress, reserved, model_inputs)

    new = optimize_subgraphs(m, res, optimize_graph, reserved, model_inputs)
    return m if new is None else new
