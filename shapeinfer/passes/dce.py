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
- Graph inputs and outputs are never removed or renamed. Model-local functions are left alone.
"""

from __future__ import annotations

import onnx

from shapeinfer.passes._graph import GraphModel, implicit_inputs, subgraphs, unlink_nodes

#: Every main-graph tensor that survives the pass keeps its value (facts carry over).
KEEPS_VALUES = True

#: It reads and edits the model only through ``ctx.graph`` (it may be given a PendingModel).
ON_INDEX = True

#: Run again on its own output it removes nothing (it reads no facts, and what stays is used):
#: optimize does not repeat it when nothing changed since its last run.
IDEMPOTENT = True


def _live_nodes(g) -> list:
    """The nodes of ``g`` that its outputs depend on, in their current order.

    Walks producer links back from the outputs, so only live nodes are visited (subgraph reads
    of outer tensors count as inputs of the node holding the subgraph).
    """
    # Only a subgraph can read tensors of another graph (the outer ones): there the walk stops
    # at the graph's edge. (Producers outside ``g`` would only cost time: ``g``'s list filters.)
    mine = {id(n) for n in g.nodes} if g.parent is not None else None
    live: set[int] = set()
    stack = []
    for t in g.outputs:
        if t.inputs and (mine is None or id(t.inputs[0]) in mine) and id(t.inputs[0]) not in live:
            live.add(id(t.inputs[0]))
            stack.append(t.inputs[0])
    add, push, pop = live.add, stack.append, stack.pop
    while stack:
        n = pop()
        for t in n.inputs if not n.graphs else list(n.inputs) + implicit_inputs(n):
            ps = t.inputs
            if ps:
                p = ps[0]
                k = id(p)
                if k not in live and (mine is None or k in mine):
                    add(k)
                    push(p)
    return [n for n in g.nodes if id(n) in live]


def _sweep(g, gm: GraphModel, stats: dict[str, int], interface: set[str] | None = None) -> set[str]:
    """Remove dead nodes of ``g`` and its subgraphs; returns the names ``g``'s nodes read.

    ``interface`` names the graph inputs that are interface (default: every graph input).
    When a subgraph loses nodes, an outer tensor only they read may have died with them: the
    walk is repeated until it removes nothing, so one run leaves nothing for a second.
    """
    while True:
        live = _live_nodes(g)
        stats["nodes removed"] += len(g.nodes) - len(live)
        if len(live) != len(g.nodes):
            keep_ids = {id(n) for n in live}
            unlink_nodes([n for n in g.nodes if id(n) not in keep_ids])
            g.nodes = live
        used: set[str] = {t.name for t in g.outputs}
        used.update(t.name for n in g.nodes for t in n.inputs)
        used.discard("")
        removed_before = stats["nodes removed"]
        for n in g.nodes:
            if n.graphs:
                for sg in subgraphs(n):
                    used |= _sweep(sg, gm, stats)
        if stats["nodes removed"] == removed_before:
            break
    keep = used | (gm.original_input_names(g) if interface is None else interface)
    for name in gm.initializer_names(g):
        if name not in keep:
            gm.drop_initializer(g, name)
            stats["initializers removed"] += 1
    return used


def run(model: onnx.ModelProto, ctx) -> tuple[onnx.ModelProto, dict[str, int]]:
    """Remove the dead nodes and initializers of ``model``'s graphs."""
    gm = ctx.graph(model)
    stats = {"nodes removed": 0, "initializers removed": 0}
    _sweep(gm.graph, gm, stats, getattr(ctx, "interface", None))
    if not any(stats.values()):
        return model, stats
    return ctx.export(gm), stats
