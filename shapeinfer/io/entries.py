"""A model's ``value_info`` entries, kept across a rewrite that drops them.

``value_info`` entries carry more than a type: a ``doc_string``, ``metadata_props`` (torch.export
writes one entry per parameter, with its source in ``metadata_props``). The write contract
(README, "Files and external data") keeps every entry of a tensor that still exists. The
optimize passes rebuild graphs without their entries (their types are inferred again at the
end), so the optimizer saves the input's entries first (:func:`saved_entries`) and puts them
back into the graphs that define their tensors (:func:`restore_entries`) before the final
annotation refines their types.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from shapeinfer.io.onnxio import graphs_within


@dataclass
class SavedEntries:
    """The ``value_info`` entries of a model: ``graphs`` those of its main graph and subgraphs
    in walk order (parents first), ``functions`` those of each model-local function by
    ``(domain, name, overload)``. The messages are the model's own (not copies): the model they
    were saved from must not change while they are used."""

    graphs: list[onnx.ValueInfoProto] = field(default_factory=list)
    functions: dict[tuple[str, str, str], list[onnx.ValueInfoProto]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.graphs) or any(self.functions.values())


def _function_key(f: onnx.FunctionProto) -> tuple[str, str, str]:
    return (f.domain, f.name, getattr(f, "overload", ""))


def saved_entries(model: onnx.ModelProto) -> SavedEntries:
    """Every ``value_info`` entry of ``model`` (:class:`SavedEntries`)."""
    out = SavedEntries()
    for g in graphs_within(model.graph):
        out.graphs.extend(g.value_info)
    for f in model.functions:
        if f.value_info:
            out.functions[_function_key(f)] = list(f.value_info)
    return out


def _replace(container, want: list[onnx.ValueInfoProto]) -> bool:
    """Make ``container.value_info`` hold ``want`` (copies), in order; False when it did already."""
    have = container.value_info
    if len(have) == len(want) and all(a.SerializeToString() == b.SerializeToString() for a, b in zip(have, want)):
        return False
    del have[:]
    have.extend(want)
    return True


def restore_entries(model: onnx.ModelProto, saved: SavedEntries) -> bool:
    """Put ``saved``'s entries back into ``model`` (in place): each entry into the graph that
    now defines its tensor (a graph input, an initializer or a node output; the first such graph,
    parents first, where names repeat), in the order saved; an entry whose tensor no longer
    exists goes. A graph's entries are replaced by these (what a rewrite left there was made
    by it); a function's likewise, by the tensors its body defines. Returns True when a
    subgraph's entries changed (a node holding it then differs from what was serialised of it)."""
    if not saved and not any(g.value_info for g in graphs_within(model.graph)):
        return False
    graphs = list(graphs_within(model.graph))
    owner: dict[str, int] = {}
    for k, g in enumerate(graphs):
        for vi in g.input:
            owner.setdefault(vi.name, k)
        for t in g.initializer:
            owner.setdefault(t.name, k)
        for t in g.sparse_initializer:
            owner.setdefault(t.values.name, k)
        for n in g.node:
            for o in n.output:
                if o:
                    owner.setdefault(o, k)
    want: list[list[onnx.ValueInfoProto]] = [[] for _ in graphs]
    for vi in saved.graphs:
        k = owner.get(vi.name)
        if k is not None:
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
