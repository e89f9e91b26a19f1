"""A model's ``value_info`` entries, kept across a rewrite that drops them.

``value_info`` entries carry more than a type: a ``doc_string``, ``metadata_props`` (torch.export
writes one entry per parameter, with its source in ``metadata_props``). The write contract
(README, "Files and external data") keeps every entry of a tensor that still exists. The
optimize passes rebuild graphs without their entries (their types are inferred again at the
end), so the optimizer saves the input's entries first (:func:`saved_entries`) and puts them
back into the graphs that define their tensors (:func:`restore_entries`) before the final
annotation refines their types.

A subgraph is a scope of its own: the two branches of an If (optimum's merged decoders) may
each define a tensor of the same name, two different values, of different types. An entry of
such a name goes back only into its own graph or into one its tensor can have moved to: an
enclosing graph (an If folded away puts its branch's nodes into the graph that held it), never
a sibling's. An entry of a name one graph alone defines goes wherever that tensor is now (the
passes may rename the node holding its graph, which names the scope).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx

from shapeinfer.io.onnxio import graphs_within, subgraph_attrs

#: Where a graph sits: for each enclosing node, from the main graph down, the node (its first
#: output, else its name) and the attribute holding the next graph (``()``: the main graph).
Scope = tuple[tuple[str, str], ...]


@dataclass
class SavedEntries:
    """The ``value_info`` entries of a model: ``graphs`` those of its main graph and subgraphs
    in walk order (parents first), each with the :data:`Scope` of its graph when another graph
    defines a tensor of the same name too (else None: the name is the model's alone), ``functions``
    those of each model-local function by ``(domain, name, overload)``. The messages are the
    model's own (not copies): the model they were saved from must not change while they are
    used."""

    graphs: list[tuple[Scope | None, onnx.ValueInfoProto]] = field(default_factory=list)
    functions: dict[tuple[str, str, str], list[onnx.ValueInfoProto]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.graphs) or any(self.functions.values())


def _function_key(f: onnx.FunctionProto) -> tuple[str, str, str]:
    return (f.domain, f.name, getattr(f, "overload", ""))


def _scoped_graphs(graph: onnx.GraphProto, scope: Scope = ()) -> Iterator[tuple[Scope, onnx.GraphProto]]:
    """``(scope, graph)`` for ``graph`` and every subgraph nested in it, parents first (the
    order of :func:`~shapeinfer.io.onnxio.graphs_within`)."""
    yield scope, graph
    for n in graph.node:
        holder = n.output[0] if n.output and n.output[0] else n.name
        for attr, g in subgraph_attrs(n):
            yield from _scoped_graphs(g, (*scope, (holder, attr)))


def _within(scope: Scope, saved: Scope) -> bool:
    """Whether a tensor of the graph at ``saved`` can now be defined by the graph at ``scope``:
    ``scope`` is ``saved`` with enclosing steps left out (Ifs folded away), in order."""
    steps = iter(saved)
    return all(step in steps for step in scope)


def _unambiguous(
    group: list[tuple[bool, Scope | None, onnx.ValueInfoProto]],
) -> list[onnx.ValueInfoProto]:
    """Of the entries of one name put into one graph (``(in its own scope, scope, entry)``),
    those that describe the tensor it now defines: all when they come from one scope; else
    those of its own scope; else (both branches of a folded If define the name, and which
    one's tensor is left is not known) the first if they are all the same, none if not."""
    if len({scope for _, scope, _ in group}) == 1:
        return [vi for _, _, vi in group]
    own = [vi for is_own, _, vi in group if is_own]
    if own:
        return own
    first = group[0][2].SerializeToString()
    return [group[0][2]] if all(vi.SerializeToString() == first for _, _, vi in group) else []


def saved_entries(model: onnx.ModelProto) -> SavedEntries:
    """Every ``value_info`` entry of ``model`` (:class:`SavedEntries`)."""
    out = SavedEntries()
    scoped = list(_scoped_graphs(model.graph))
    defined = Counter(name for _, g in scoped for name in _defined(g))
    for scope, g in scoped:
        out.graphs.extend((scope if defined[vi.name] > 1 else None, vi) for vi in g.value_info)
    for f in model.functions:
        if f.value_info:
            out.functions[_function_key(f)] = list(f.value_info)
    return out


def _defined(g: onnx.GraphProto) -> set[str]:
    """The tensor names graph ``g`` itself defines: inputs, initializers, node outputs."""
    names = {vi.name for vi in g.input}
    names.update(t.name for t in g.initializer)
    names.update(t.values.name for t in g.sparse_initializer)
    names.update(o for n in g.node for o in n.output if o)
    return names


def _replace(container, want: list[onnx.ValueInfoProto]) -> bool:
    """Make ``container.value_info`` hold ``want`` (copies), in order; False when it did already."""
    have = container.value_info
    if len(have) == len(want) and all(a.SerializeToString() == b.SerializeToString() for a, b in zip(have, want)):
        return False
    del have[:]
    have.extend(want)
    return True


def restore_entries(model: onnx.ModelProto, saved: SavedEntries) -> bool:
    """Put ``saved``'s entries back into ``model`` (in place), in the order saved: each entry
    into the graph that now defines its tensor (a graph input, an initializer or a node output):
    for a name one graph alone defined, the first such graph, parents first; else among its own
    graph and those enclosing it (:func:`_within`; the innermost where several do). An entry
    whose tensor no longer exists there goes (a tensor of the same name in a sibling scope is
    another value), and so do entries of one name that moved into the same graph from sibling
    scopes and differ (:func:`_unambiguous`). A graph's entries are replaced by these (what a
    rewrite left there was made by it); a function's likewise, by the tensors its body
    defines. Returns True when a subgraph's entries changed (a node holding it then differs
    from what was serialised of it)."""
    if not saved and not any(g.value_info for g in graphs_within(model.graph)):
        return False
    scoped = list(_scoped_graphs(model.graph))
    graphs = [g for _, g in scoped]
    owners: dict[str, list[int]] = {}
    for k, g in enumerate(graphs):
        for name in _defined(g):
            owners.setdefault(name, []).append(k)
    placed: list[tuple[int, onnx.ValueInfoProto]] = []
    arrivals: dict[tuple[int, str], list[tuple[bool, Scope | None, onnx.ValueInfoProto]]] = {}
    for scope, vi in saved.graphs:
        found = owners.get(vi.name, [])
        if scope is not None:
            found = [k for k in found if _within(scoped[k][0], scope)]
        if found:
            k = found[0] if scope is None else max(found, key=lambda k: len(scoped[k][0]))
            placed.append((k, vi))
            arrivals.setdefault((k, vi.name), []).append((scoped[k][0] == scope, scope, vi))
    kept = {id(vi) for group in arrivals.values() for vi in _unambiguous(group)}
    want: list[list[onnx.ValueInfoProto]] = [[] for _ in graphs]
    for k, vi in placed:
        if id(vi) in kept:
            want[k].append(vi)
    changed = False
    for k, g in enumerate(graphs):
        if _replace(g, want[k]) and k:
            changed = True
    for f in model.functions:
        entries = saved.functions.get(_function_key(f), [])
        if not entries and not f.value_info:
            continue
        defined = set(f.input) | {o for n in f.node for o in n.output if o}
        _replace(f, [vi for vi in entries if vi.name in defined])
    return changed
