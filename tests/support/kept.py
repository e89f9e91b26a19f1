"""What a written model keeps of its input: a protobuf diff with the written types masked.

The write contract (README, "Files and external data"): ``shapeinfer MODEL -o`` changes only
types and shapes. :func:`differences` lists everything else that differs between a model and
what was written from it, graph by graph (subgraphs matched by position): every model field,
every node (its subgraphs compared as graphs of their own), every initializer, graph input,
graph output (its ``type`` masked), every value_info entry of the input, in order, with its
``doc_string`` and ``metadata_props`` (its ``type`` masked), and every function. value_info
entries the write adds after the input's are new, not differences, unless one repeats an
input entry's name.

:func:`optimize_differences` is the same question for ``optimize -o``, which also rewrites and
removes nodes: every model field but the opset, every function signature, graph inputs and
outputs (types masked), and each value_info entry of the input whose tensor still exists
somewhere in the output with the same ``doc_string`` and ``metadata_props``.
"""

from __future__ import annotations

import onnx

_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def _untyped(vi: onnx.ValueInfoProto) -> bytes:
    c = onnx.ValueInfoProto()
    c.CopyFrom(vi)
    c.ClearField("type")
    return c.SerializeToString(deterministic=True)


def _without(msg, fields: tuple[str, ...]) -> bytes:
    c = type(msg)()
    c.CopyFrom(msg)
    for f in fields:
        c.ClearField(f)
    return c.SerializeToString(deterministic=True)


def _node_shell(n: onnx.NodeProto) -> bytes:
    """The node with its subgraphs emptied (they are compared as graphs)."""
    c = onnx.NodeProto()
    c.CopyFrom(n)
    for a in c.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            a.g.Clear()
        for g in a.graphs:
            g.Clear()
    return c.SerializeToString(deterministic=True)


def _subgraphs(n: onnx.NodeProto) -> list[tuple[str, onnx.GraphProto]]:
    out = []
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append((a.name, a.g))
        for j, g in enumerate(a.graphs):
            out.append((f"{a.name}[{j}]", g))
    return out


def _graph_differences(a: onnx.GraphProto, b: onnx.GraphProto, where: str) -> list[str]:
    bad = []
    if _without(a, ("node", "value_info", "output")) != _without(b, ("node", "value_info", "output")):
        for f in ("name", "doc_string", "input", "initializer", "sparse_initializer", "metadata_props"):
            if _field(a, f) != _field(b, f):
                bad.append(f"{where}: graph.{f} differs")
        if not bad:
            bad.append(f"{where}: a graph field differs")
    if len(a.output) != len(b.output) or any(_untyped(x) != _untyped(y) for x, y in zip(a.output, b.output)):
        bad.append(f"{where}: graph outputs differ outside their types")
    vi_a, vi_b = list(a.value_info), list(b.value_info)
    kept = [_untyped(v) for v in vi_b[: len(vi_a)]]
    lost = [v.name for v, k in zip(vi_a, kept + [None] * len(vi_a)) if _untyped(v) != k]
    if lost:
        bad.append(f"{where}: {len(lost)} value_info entries dropped or changed outside their types (e.g. {lost[0]!r})")
    names = {v.name for v in vi_a}
    again = [v.name for v in vi_b[len(vi_a) :] if v.name in names]
    if again:
        bad.append(f"{where}: {len(again)} value_info entries repeated (e.g. {again[0]!r})")
    if len(a.node) != len(b.node):
        bad.append(f"{where}: {len(a.node)} nodes -> {len(b.node)}")
        return bad
    changed = 0
    for k, (x, y) in enumerate(zip(a.node, b.node)):
        if _node_shell(x) != _node_shell(y):
            changed += 1
            continue
        for (name, gx), (_, gy) in zip(_subgraphs(x), _subgraphs(y)):
            bad += _graph_differences(gx, gy, f"{where}/{k}.{name}")
    if changed:
        bad.append(f"{where}: {changed} nodes changed")
    return bad


def _field(msg, name: str) -> bytes | list[bytes]:
    v = getattr(msg, name)
    if hasattr(v, "extend"):
        return [x.SerializeToString(deterministic=True) if hasattr(x, "SerializeToString") else x for x in v]
    return v


def differences(original: onnx.ModelProto, written: onnx.ModelProto) -> list[str]:
    """What ``written`` changed of ``original`` outside types (empty: nothing)."""
    bad = []
    if _without(original, ("graph",)) != _without(written, ("graph",)):
        for fd, _ in original.ListFields() + written.ListFields():
            if fd.name != "graph" and _field(original, fd.name) != _field(written, fd.name):
                bad.append(f"model.{fd.name} differs")
                break
        else:
            bad.append("a model field differs")
    return bad + _graph_differences(original.graph, written.graph, "main")


def _all_graphs(g: onnx.GraphProto):
    yield g
    for n in g.node:
        for _, sg in _subgraphs(n):
            yield from _all_graphs(sg)


def _defined(model: onnx.ModelProto) -> set[str]:
    names = set()
    for g in _all_graphs(model.graph):
        names.update(vi.name for vi in g.input)
        names.update(t.name for t in g.initializer)
        names.update(o for n in g.node for o in n.output)
    return names


def optimize_differences(original: onnx.ModelProto, written: onnx.ModelProto) -> list[str]:
    """What an ``optimize -o`` output lost of ``original`` that it does not own (see the module
    docstring)."""
    bad = []
    skip = ("graph", "opset_import", "functions")
    if _without(original, skip) != _without(written, skip):
        bad.append("a model field differs")
    sig = ("node", "value_info")
    if [_without(f, sig) for f in original.functions] != [_without(f, sig) for f in written.functions]:
        bad.append("function signatures differ")
    for kind in ("input", "output"):
        a, b = getattr(original.graph, kind), getattr(written.graph, kind)
        if [_untyped(v) for v in a] != [_untyped(v) for v in b]:
            bad.append(f"graph {kind}s differ outside their types")
    for f in ("name", "doc_string", "metadata_props"):
        if _field(original.graph, f) != _field(written.graph, f):
            bad.append(f"graph.{f} differs")
    alive = _defined(written)
    have: dict[str, list[bytes]] = {}
    for g in _all_graphs(written.graph):
        for v in g.value_info:
            have.setdefault(v.name, []).append(_untyped(v))
    lost = [
        v.name
        for g in _all_graphs(original.graph)
        for v in g.value_info
        if v.name in alive and _untyped(v) not in have.get(v.name, [])
    ]
    if lost:
        bad.append(f"{len(lost)} value_info entries of live tensors dropped or changed (e.g. {lost[0]!r})")
    return bad
