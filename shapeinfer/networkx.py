"""networkx interop: an inferred model as a ``networkx.MultiDiGraph``, and recipes over it.

Needs the ``networkx`` extra (``pip install -e '.[networkx]'`` in a checkout); this module
imports networkx, nothing else in shapeinfer does.

:func:`to_graph` turns an inference :class:`~shapeinfer.inference.engine.Result` into a graph of the main
graph's dataflow:

- **nodes**: each operator, keyed by its index in ``model.graph.node`` (an int), with
  ``kind="op"``, ``op``, ``domain``, ``name``, ``index``; the graph inputs, initializers and
  graph outputs as marked nodes keyed ``("input", name)``, ``("initializer", name)``,
  ``("output", name)``, with ``kind`` (``"input"``, ``"initializer"``, ``"output"``),
  ``tensor`` and the tensor's ``dtype`` and ``dims``;
- **edges**: from a tensor's producer (an op, an input or an initializer) to each node
  reading it (an op, or the output node), one per input that reads it (``Mul(x, x)`` gives
  two; networkx numbers parallel edges), with ``tensor`` (its name), ``dtype`` (the
  ``onnx.TensorProto`` enum, 0 unknown), ``dims`` (a tuple of ints and
  :class:`shapeinfer.symbolic.dims.Expr`, None for an unknown rank), ``value`` (the values inference
  knows of a small tensor, flattened: ints, floats, ``Expr`` for symbolic sizes, None per
  unknown element; None when untracked), ``src_port`` / ``dst_port`` (output index at the
  producer, input index at the consumer) and ``implicit`` (True for a tensor a node's
  subgraph reads from the outer scope; its ``dst_port`` is -1);
- **graph attributes**: ``name``, ``input_symbols`` (the graph inputs' symbols) and
  ``producers`` (tensor name -> the node key that makes it).

Subgraphs (If branches, Loop bodies) are not expanded: their node reads what its subgraphs
read, through implicit edges.

The recipes below are what people do with such a graph; each is a few lines of networkx, kept
here as documented, tested functions: :func:`shape_subgraph` (the nodes computing the shape a
tensor is built with), :func:`dim_inputs` (which graph inputs a dim comes from) and
:func:`longest_dynamic_chain` (the longest run of operators with symbolic dims).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING

import onnx

from shapeinfer.base.extras import require
from shapeinfer.io.onnxio import subgraph_attrs
from shapeinfer.symbolic import dims as D

nx = require("networkx", "networkx", "networkx", "shapeinfer.networkx")

if TYPE_CHECKING:
    from shapeinfer.document import Document
    from shapeinfer.inference.engine import Result
    from shapeinfer.symbolic.facts import Fact

__all__ = ["dim_inputs", "longest_dynamic_chain", "shape_subgraph", "to_graph"]


def to_graph(result: Result | Document) -> nx.MultiDiGraph:
    """The main graph of ``result.model`` as a ``networkx.MultiDiGraph`` carrying ``result``'s facts.

    ``result`` may be a :class:`~shapeinfer.document.Document` (``shapeinfer.open(path)``): its
    last inference, inferred now when there is none. See the module docstring for the nodes,
    edges and graph attributes. A tensor read but made by nothing (a dangling name) gets no
    edge; optional inputs left empty (``""``) are skipped.
    """
    from shapeinfer.document import Document
    from shapeinfer.inference.engine import Result

    if isinstance(result, Document):
        result = result.result if result.result is not None else result.infer()
    if not isinstance(result, Result):
        raise TypeError(
            f"to_graph takes a Result (shapeinfer.infer(model)) or a Document (shapeinfer.open(model)), "
            f"not {type(result).__name__}"
        )
    graph = result.model.graph
    facts = result.facts
    g = nx.MultiDiGraph(name=graph.name, input_symbols=frozenset(result.input_symbols))
    producers: dict[str, Hashable] = {}
    ports: dict[str, int] = {}  # tensor name -> its output index at the op producing it
    initializers = [t.name for t in graph.initializer] + [t.values.name for t in graph.sparse_initializer]
    for name in initializers:
        key = ("initializer", name)
        g.add_node(key, kind="initializer", tensor=name, **_type(facts.get(name)))
        producers[name] = key
    for vi in graph.input:
        if vi.name in producers:
            continue  # an initializer listed as an input too (older IR): its default is known
        key = ("input", vi.name)
        g.add_node(key, kind="input", tensor=vi.name, **_type(facts.get(vi.name)))
        producers[vi.name] = key
    for i, node in enumerate(graph.node):
        g.add_node(i, kind="op", op=node.op_type, domain=node.domain, name=node.name, index=i)
        for port, name in enumerate(node.output):
            if name:
                producers[name] = i
                ports[name] = port
    for i, node in enumerate(graph.node):
        for port, name in enumerate(node.input):
            _edge(g, producers, ports, facts, name, i, port, False)
        for name in _outer_reads(node):
            _edge(g, producers, ports, facts, name, i, -1, True)
    for vi in graph.output:
        key = ("output", vi.name)
        g.add_node(key, kind="output", tensor=vi.name, **_type(facts.get(vi.name)))
        _edge(g, producers, ports, facts, vi.name, key, 0, False)
    g.graph["producers"] = producers
    return g


def _type(f: Fact | None) -> dict:
    if f is None:
        return {"dtype": 0, "dims": None}
    return {"dtype": f.dtype, "dims": f.shape}


def _edge(
    g: nx.MultiDiGraph, producers: dict, ports: dict, facts: dict, name: str, dst, dst_port: int, implicit: bool
) -> None:
    src = producers.get(name) if name else None
    if src is None:
        return
    f = facts.get(name)
    g.add_edge(
        src,
        dst,
        tensor=name,
        dtype=f.dtype if f is not None else 0,
        dims=f.shape if f is not None else None,
        value=f.value if f is not None else None,
        src_port=ports.get(name, 0),
        dst_port=dst_port,
        implicit=implicit,
    )


def _outer_reads(node: onnx.NodeProto) -> list[str]:
    """The outer-scope names ``node``'s subgraphs read, in first-read order."""
    seen: dict[str, None] = {}
    for _, sub in subgraph_attrs(node):
        for name in _free_names(sub, set()):
            seen.setdefault(name)
    return list(seen)


def _free_names(graph: onnx.GraphProto, bound: set[str]) -> Iterator[str]:
    """Names ``graph`` (and its subgraphs) read that neither it nor ``bound`` defines."""
    own = set(bound)
    own.update(vi.name for vi in graph.input)
    own.update(t.name for t in graph.initializer)
    own.update(t.values.name for t in graph.sparse_initializer)
    for node in graph.node:
        for name in node.input:
            if name and name not in own:
                yield name
        for _, sub in subgraph_attrs(node):
            yield from _free_names(sub, own)
        own.update(o for o in node.output if o)
    for vi in graph.output:
        if vi.name not in own:
            yield vi.name


def shape_subgraph(g: nx.MultiDiGraph, tensor: str) -> nx.MultiDiGraph:
    """The shape-computation subgraph feeding ``tensor``'s shape.

    Starting at the node producing ``tensor``, walk back along the edges that carry values
    inference knows (shape tensors: ``Shape`` outputs, the ``Gather``/``Concat``/arithmetic
    over them, constant axes and targets) and collect the nodes producing them, down to the
    ``Shape``/``Size`` nodes that read data tensors (the data edges are where the walk stops).
    The producer of ``tensor`` itself is not part of it. Returns a copy of that part of
    ``g`` (empty when ``tensor``'s shape is computed from no value, e.g. a ``Relu`` output).
    KeyError when no node produces ``tensor``.

    A ``Reshape`` output's subgraph is what computes its target shape; the ops in it are the
    ones ``shapeinfer optimize`` (fold-shapes, canonicalize-reshape) folds or rebuilds.
    """
    start = g.graph["producers"][tensor]
    keep: set = set()
    todo = [start]
    while todo:
        node = todo.pop()
        for src, _, data in g.in_edges(node, data=True):
            if data["value"] is None or src in keep:
                continue
            keep.add(src)
            todo.append(src)
    return g.subgraph(keep).copy()


def dim_inputs(g: nx.MultiDiGraph, tensor: str, axis: int) -> list[tuple[str, int | None]]:
    """Which graph inputs dim ``axis`` of ``tensor`` depends on, as ``(input, axis)`` pairs.

    A dim inferred as an expression of the inputs' symbols (``2*seq``) depends on the input
    dims that declare those symbols: each ``(input name, its axis)`` whose declared dim uses one
    of them. A dim holding a symbol inference made up (a data-dependent size, ``NonZero``'s
    count) depends on values, not shapes: then every graph input upstream of ``tensor`` is
    listed with axis None. An int dim depends on nothing (``[]``). ``tensor`` is an edge key
    (a tensor some node or output reads); KeyError otherwise, IndexError for an axis outside
    its rank, ValueError for an unknown rank.
    """
    dims = _dims_of(g, tensor)
    if dims is None:
        raise ValueError(f"the rank of {tensor!r} is unknown")
    if not -len(dims) <= axis < len(dims):
        raise IndexError(f"{tensor!r} has rank {len(dims)}: no axis {axis}")
    d = dims[axis]
    if type(d) is int:
        return []
    symbols = D.symbols(d)
    out: set[tuple[str, int | None]] = set()
    for _, data in g.nodes(data=True):
        if data["kind"] != "input" or data["dims"] is None:
            continue
        for k, x in enumerate(data["dims"]):
            if type(x) is not int and D.symbols(x) & symbols:
                out.add((data["tensor"], k))
    if symbols - g.graph["input_symbols"]:  # made up by inference: upstream of the values
        producer = g.graph["producers"][tensor]
        for key in nx.ancestors(g, producer) | {producer}:
            if g.nodes[key]["kind"] == "input":
                out.add((g.nodes[key]["tensor"], None))
    return sorted(out, key=lambda p: (p[0], -1 if p[1] is None else p[1]))


def _dims_of(g: nx.MultiDiGraph, tensor: str):
    producer = g.graph["producers"].get(tensor)
    if producer is None:
        raise KeyError(f"no node or graph input makes a tensor named {tensor!r}")
    if g.nodes[producer]["kind"] != "op":
        return g.nodes[producer]["dims"]
    for _, _, data in g.out_edges(producer, data=True):
        if data["tensor"] == tensor:
            return data["dims"]
    raise KeyError(f"nothing reads {tensor!r}: it has no edge")


def longest_dynamic_chain(g: nx.MultiDiGraph) -> list[int]:
    """The longest path of operators each producing a tensor with a symbolic dim.

    The operators kept are those with an outgoing edge whose dims hold an expression (a dim
    that changes with the input sizes); the result is their longest path through ``g``
    (``networkx.dag_longest_path``), as node keys in dataflow order: where a dynamic size
    travels furthest, the first place to look when a runtime re-plans for every new shape.
    Empty for a model of static shapes.
    """
    dynamic = {
        src
        for src, _, data in g.edges(data=True)
        if g.nodes[src]["kind"] == "op" and data["dims"] is not None and any(type(d) is not int for d in data["dims"])
    }
    return list(nx.dag_longest_path(g.subgraph(dynamic)))
