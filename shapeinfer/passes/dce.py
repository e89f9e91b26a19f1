"""dce: dead-code elimination: nodes and initializers no graph output depends on are removed.

Contract:

- In the main graph and, recursively, in every subgraph: a node stays when a graph output
  (of that graph) depends on one of its outputs, directly or through nodes that stay,
  counting the outer tensors a subgraph reads (after its own dead nodes are gone) as inputs
  of the node that holds it. Reachability is a walk back from the outputs over producer
  links (linear; repeated for a graph whose subgraphs lost nodes). A second run removes
  nothing.
- An initializer stays when a remaining node (in any nested graph) reads it, it is a graph
  output, or it is listed as a graph input of the model optimize was given (an input with a
  default value is interface; before IR 4, initializers the passes created are listed as
  inputs too, and those go with their initializer).
- Graph inputs and outputs are never removed or renamed. Model-local functions are left alone
  by this pass; optimize sweeps their bodies once the rounds are done (:mod:`shapeinfer.passes._functions`).
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter

from shapeinfer.ir.graph import GraphModel
from shapeinfer.ir.queries import implicit_inputs, subgraphs
from shapeinfer.passes.base import Pass, PassResult

_GRAPHS = attrgetter("graphs")
_INPUTS = attrgetter("inputs")
_NAME = attrgetter("name")
_OUTPUTS = attrgetter("outputs")


def _walk(g) -> tuple[set, set | None, bool]:
    """The nodes of ``g`` its outputs depend on, the tensors they read (None for a main graph
    without subgraphs, the common, large case: there the caller needs few of them) and whether
    one of them holds a subgraph.

    Walks producer links back from the outputs, so only live nodes are visited (subgraph reads
    of outer tensors count as inputs of the node holding the subgraph; only the node's own
    inputs are in the tensors read). Nodes and tensors hash by identity: the sets work in C.
    """
    # Only a subgraph can read tensors of another graph (the outer ones): there the walk stops
    # at the graph's edge. (Producers outside ``g`` would only cost time: ``g``'s list filters.)
    mine = set(g.nodes) if g.parent is not None else None
    live: set = set()
    read: set = set()
    stack = []
    for t in g.outputs:
        if t.inputs and (mine is None or t.inputs[0] in mine) and t.inputs[0] not in live:
            live.add(t.inputs[0])
            stack.append(t.inputs[0])
    add, push, pop, read_update = live.add, stack.append, stack.pop, read.update
    if mine is None and not any(map(_GRAPHS, g.nodes)):
        # The main graph without subgraphs (the common, large case): the loop below, minus
        # its tests for subgraphs and for the graph's edge.
        while stack:
            n = pop()
            for t in n.inputs:
                ps = t.inputs
                if ps and ps[0] not in live:
                    add(ps[0])
                    push(ps[0])
        return live, None, False
    holders = False
    while stack:
        n = pop()
        ins = n.inputs
        read_update(ins)
        if n.graphs:
            holders = True
            ins = list(ins) + implicit_inputs(n)
        for t in ins:
            ps = t.inputs
            if ps:
                p = ps[0]
                if p not in live and (mine is None or p in mine):
                    add(p)
                    push(p)
    return live, read, holders


def _unlink_dead(dead: list) -> None:
    """Detach the dead nodes of a graph from the tensors that stay, like ``unlink_nodes``.

    A tensor a dead node writes has no reader that stays (the walk would have kept its
    producer): it goes with its producer and its links are not edited. Only the tensors
    dead nodes read and no dead node writes (graph inputs, initializers, live nodes' outputs)
    lose the dead readers; the dead nodes' own links are cleared (so nothing dead is left in
    a reference cycle).
    """
    gone = set(dead)
    touched: set = set()
    touched.update(*map(_INPUTS, dead))
    touched.difference_update(*map(_OUTPUTS, dead))
    isdisjoint = gone.isdisjoint
    for t in touched:
        if not isdisjoint(t.outputs):
            t.outputs[:] = [c for c in t.outputs if c not in gone]
    for n in dead:
        n.inputs.clear()
        n.outputs.clear()


def _sweep(g, gm: GraphModel, stats: dict[str, int], interface: set[str] | None = None) -> set[str]:
    """Remove dead nodes of ``g`` and its subgraphs; returns the names ``g``'s nodes read (for a
    main graph without subgraphs, only those that are names of its initializers).

    ``interface`` names the graph inputs that are interface (default: every graph input).
    When a subgraph loses nodes, an outer tensor only they read may have died with them: the
    walk is repeated until it removes nothing, so one run leaves nothing for a second.
    """
    inputs = gm.original_input_names(g) if interface is None else interface
    while True:
        live, read, holders = _walk(g)
        if len(live) != len(g.nodes):
            stats["nodes removed"] += len(g.nodes) - len(live)
            _unlink_dead([n for n in g.nodes if n not in live])
            g.nodes = [n for n in g.nodes if n in live]
        used: set[str] = {t.name for t in g.outputs}
        if read is None:
            # The main graph without subgraphs: only its initializers' names are looked up among
            # the names its nodes read (the names returned are those that decide, no others).
            cands = {name for name in gm.initializer_names(g) if name not in used and name not in inputs}
            if cands:
                used |= cands.intersection(map(_NAME, chain.from_iterable(map(_INPUTS, g.nodes))))
        else:
            used.update(map(_NAME, read))
        used.discard("")
        removed_before = stats["nodes removed"]
        if holders:
            for n in g.nodes:
                if n.graphs:
                    for sg in subgraphs(n):
                        used |= _sweep(sg, gm, stats)
        if stats["nodes removed"] == removed_before:
            break
    keep = used | inputs
    for name in gm.initializer_names(g):
        if name not in keep:
            gm.drop_initializer(g, name)
            stats["initializers removed"] += 1
    return used


def run(gm: GraphModel, result: None, ctx) -> PassResult:
    """Remove the dead nodes and initializers of the model's graphs."""
    stats = {"nodes removed": 0, "initializers removed": 0}
    _sweep(gm.graph, gm, stats, ctx.interface)
    if not any(stats.values()):
        return PassResult(stats)
    return PassResult(stats, edited=True)


# Run again on its own output it removes nothing (it reads no facts, and what stays is used):
# optimize does not repeat it when nothing changed since its last run.
PASS = Pass(
    "dce",
    run,
    keeps_values=True,
    idempotent=True,
)
