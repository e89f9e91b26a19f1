"""Queries over the IR (:mod:`shapeinfer.ir.graph`): reading it, never editing links.

Subgraphs held by a node (:func:`subgraphs`, :func:`all_graphs`, :func:`implicit_inputs`,
:func:`has_control_flow`), producers and order (:func:`producer`, :func:`predecessors`,
:func:`toposort`, which reorders ``Graph.nodes`` but leaves every link as it is), constant
values (:func:`constant_node_value`, :func:`const_array`) and the model's (or a function's) :func:`default_opset`.

Why a module of its own: these only read the IR's public fields, and the IR, the import and
the editing helpers in :mod:`shapeinfer.ir.graph` use none of them, so the dependency goes
one way. (:func:`shapeinfer.ir.graph.may_hold_subgraphs` stays with the import: it answers
from the import's per-op cache.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from onnx import FunctionProto, ModelProto

from shapeinfer.base.toposort import lexicographic_order
from shapeinfer.ir.graph import Constant, Graph, Node, Tensor


def subgraphs(node: Node) -> Iterator[Graph]:
    """The graphs held in ``node``'s attributes."""
    for v in node.graphs.values():
        if isinstance(v, list):
            yield from v
        else:
            yield v


def named_subgraphs(node: Node) -> Iterator[tuple[str, Graph]]:
    """``(attr, graph)`` for each graph held in ``node``'s attributes, in attribute order:
    ``attr[j]`` names the j-th graph of a list (the form of
    :func:`~shapeinfer.io.onnxio.graph_path`, as :func:`~shapeinfer.io.onnxio.subgraph_attrs`
    gives it for a NodeProto)."""
    for attr, v in node.graphs.items():
        if isinstance(v, list):
            for j, sg in enumerate(v):
                yield f"{attr}[{j}]", sg
        else:
            yield attr, v


def all_graphs(g: Graph) -> Iterator[Graph]:
    """``g`` and every graph nested in its nodes' attributes, outermost first."""
    yield g
    for n in g.nodes:
        for sg in subgraphs(n):
            yield from all_graphs(sg)


def has_control_flow(g: Graph) -> bool:
    """True when an If or a Loop is in ``g`` or any graph nested in it."""
    for n in g.nodes:
        if n.op in ("If", "Loop"):
            return True
        if n.graphs and any(has_control_flow(sg) for sg in subgraphs(n)):
            return True
    return False


def implicit_inputs(node: Node) -> list[Tensor]:
    """Outer-scope tensors that ``node``'s subgraphs read."""
    if not node.graphs:
        return []
    inner: set[int] = set()
    for sg in subgraphs(node):
        inner.update(id(x) for x in all_graphs(sg))
    out = []
    seen: set[str] = set()
    for sg in subgraphs(node):
        for g in all_graphs(sg):
            reads = [t for n in g.nodes for t in n.inputs] + list(g.outputs)
            for t in reads:
                if t.name and id(t.graph) not in inner and t.name not in seen:
                    seen.add(t.name)
                    out.append(t)
    return out


def lazy_node_ids(g: Graph) -> Callable[[], set[int]]:
    """A function giving the ids of ``g``'s nodes, collected at its first call and then kept:
    the passes ask it only in rare cases (a graph output, a reader in a subgraph), so a pass
    that never asks pays nothing."""
    cache: list[set[int]] = []

    def ids() -> set[int]:
        if not cache:
            cache.append({id(n) for n in g.nodes})
        return cache[0]

    return ids


def producer(t: Tensor) -> Node | None:
    """The node producing tensor ``t`` in its graph, or None (input, initializer, outer scope)."""
    return t.inputs[0] if t.inputs else None


def predecessors(nodes: list[Node]) -> list[list[int]]:
    """For each node of ``nodes`` (one graph), the positions of the nodes producing what it reads.

    Subgraph reads of outer tensors count as inputs of the node holding the subgraph.
    """
    pos = {id(n): k for k, n in enumerate(nodes)}
    preds: list[list[int]] = []
    for k, n in enumerate(nodes):
        ins = n.inputs if not n.graphs else list(n.inputs) + implicit_inputs(n)
        ps = []
        for t in ins:
            if t.inputs:
                p = pos.get(id(t.inputs[0]))
                if p is not None and p != k:
                    ps.append(p)
        preds.append(ps)
    return preds


def _sorted(g: Graph) -> bool:
    """True when every node of ``g`` comes after the producers (in ``g``) of what it reads."""
    # One pass, with the nodes met so far in a set (nodes hash by identity): a producer not
    # met yet is either later in ``g`` or outside it, which only the positions tell apart.
    seen: set[Node] = set()
    add = seen.add
    for n in g.nodes:
        for t in n.inputs if not n.graphs else list(n.inputs) + implicit_inputs(n):
            ps = t.inputs
            if ps and ps[0] not in seen:
                return _sorted_by_position(g)
        add(n)
    return True


def _sorted_by_position(g: Graph) -> bool:
    pos = {id(n): k for k, n in enumerate(g.nodes)}
    get = pos.get
    for k, n in enumerate(g.nodes):
        for t in n.inputs if not n.graphs else list(n.inputs) + implicit_inputs(n):
            ps = t.inputs
            if ps:
                j = get(id(ps[0]))
                if j is not None and j >= k:
                    return False
    return True


def toposort(g: Graph) -> bool:
    """Order ``g``'s nodes so producers come first, keeping the current order where it already is.

    Subgraph reads of outer tensors count as inputs. Returns True when the order changed.
    Among ready nodes the one earliest in the current order goes first (a lexicographic
    topological order, with a heap: O(n log n)); nodes on a cycle keep their order at the end.
    """
    if _sorted(g):
        return False
    nodes = list(g.nodes)
    order = lexicographic_order(predecessors(nodes))
    if len(order) < len(nodes):
        placed = set(order)
        order += [k for k in range(len(nodes)) if k not in placed]
    g.nodes = [nodes[k] for k in order]
    return True


def constant_node_value(node: Node) -> Constant | np.ndarray | None:
    """A Constant node's value: the Constant of its ``value`` tensor, an array of its
    ``value_int(s)`` / ``value_float(s)``, or None (other attributes: strings, sparse)."""
    a = node.attrs
    v = a.get("value")
    if isinstance(v, Constant):
        return v
    if "value_ints" in a:
        return np.array(a["value_ints"], dtype=np.int64)
    if "value_int" in a:
        return np.array(a["value_int"], dtype=np.int64)
    if "value_floats" in a:
        return np.array(a["value_floats"], dtype=np.float32)
    if "value_float" in a:
        return np.array(a["value_float"], dtype=np.float32)
    return None


def is_stored_constant(t: Tensor, graph_inputs: set[int]) -> bool:
    """True when ``t``'s value is stored in the model and cannot be overridden: an initializer
    that is not a graph input (``graph_inputs``: the ids of the graph's input tensors), or the
    output of a default-domain Constant node."""
    if id(t) in graph_inputs:
        return False
    if isinstance(t, Constant):
        return True
    p = producer(t)
    return p is not None and p.op == "Constant" and not p.domain


def const_array(t: Tensor) -> np.ndarray | None:
    """The value of a Constant tensor, or of a tensor produced by a Constant node, else None."""
    p = None if isinstance(t, Constant) else producer(t)
    if p is not None:
        if p.op != "Constant" or p.domain:
            return None
        t = constant_node_value(p)
        if not isinstance(t, Constant):
            return t
    if isinstance(t, Constant):
        try:
            return np.asarray(t.values)
        except Exception:
            return None
    return None


def default_opset(model: ModelProto | FunctionProto) -> int | None:
    """The default-domain opset version a model (or a function) imports, or None when it
    imports none."""
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def function_opset(fp: FunctionProto, model_opset: int) -> int:
    """Function ``fp``'s default-domain opset: its own import, else the model's ``model_opset``."""
    version = default_opset(fp)
    return model_opset if version is None else version
