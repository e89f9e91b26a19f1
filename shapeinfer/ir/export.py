"""Export: a :class:`~shapeinfer.ir.graph.GraphModel` written back as a ModelProto.

:func:`export_model` (what ``GraphModel.export`` calls) writes each node that came from the
model and was not changed as its original NodeProto, and only what a pass changed or created
is built anew; each graph keeps its original inputs, outputs and remaining initializers,
plus the initializers the passes created (before IR 4 also listed as graph inputs).
``value_info`` is dropped: the pipeline re-annotates at the end. Attributes a pass never read
are copied undecoded.

When the GraphModel was given the main graph's serialised node fields (``source``), the main
graph's nodes are written as bytes: an unchanged node's field is copied from the source (runs of
adjacent ones in one piece), a node that differs only in its inputs and outputs gets its
original field with those replaced (:func:`_relinked_field`, when that is byte for byte what
serialising the rebuilt NodeProto gives), and only the rest is serialised from a NodeProto.
The bytes written are kept in ``GraphModel.written_nodes`` for the final write to reuse.

Why a module of its own: export only reads the IR (:mod:`shapeinfer.ir.graph`) and the
GraphModel's export state (``model``, ``graph``, the new and dropped initializers, ``source``);
nothing in the IR, the import or the editing helpers calls into it, and it holds all of the
IR's code that writes the protobuf wire format by hand (with :mod:`shapeinfer.io.wire`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto

from shapeinfer.io.wire import NODE_TAG, SHORT_LENGTHS, skip_string
from shapeinfer.io.wire import read_varint as _read_varint
from shapeinfer.io.wire import varint as _varint
from shapeinfer.ir.graph import _NO_GRAPHS, Constant, Graph, Node

if TYPE_CHECKING:
    from shapeinfer.ir.graph import GraphModel


def export_model(gm: GraphModel) -> ModelProto:
    """The edited model as a new ModelProto (the imported one is not modified).

    The GraphModel stays usable: further edits and exports continue from its current state.
    """
    out = ModelProto()
    _copy_fields(out, gm.model, ("graph", "functions"))
    _export_graph(gm, gm.graph, out.graph)
    for f in gm.graph.functions:
        out.functions.append(_export_function(gm, f))
    floor = gm.default_opset_floor
    if floor is not None:
        for opsets in (out.opset_import, *(fp.opset_import for fp in out.functions)):
            _raise_default_opset(opsets, floor)
    if gm._source is not None:
        gm.written_nodes = (out, gm._written_node_fields)
        gm._written_node_fields = b""
    return out


def _export_graph(gm: GraphModel, g: Graph, out: GraphProto | None = None) -> GraphProto:
    """``g`` as a GraphProto: written into ``out`` (an empty one) when given, else a new one."""
    gp = g.proto
    if out is None:
        out = GraphProto()
    out.SetInParent()  # present even when empty, as a copied GraphProto would be
    if gp is not None:
        _copy_fields(out, gp, ("node", "initializer", "value_info"))
        for vi, t in zip(out.output, g.outputs):
            if vi.name != t.name:  # a pass made the graph return another tensor
                vi.name = t.name
    else:
        out.name = g.name or "graph"
        out.input.extend(onnx.helper.make_empty_tensor_value_info(t.name) for t in g.inputs)
        out.output.extend(onnx.helper.make_empty_tensor_value_info(t.name) for t in g.outputs)
    if g is gm.graph and gm._source is not None:
        # parsed from serialised fields: cheaper than copying the original NodeProtos
        gm._written_node_fields = _node_fields(gm, g.nodes)
        out.MergeFromString(gm._written_node_fields)
    else:
        out.node.extend(_export_node(gm, n) for n in g.nodes)
    dropped = gm._dropped.get(id(g), set())
    if gp is not None:
        if dropped:
            out.initializer.extend(t for t in gp.initializer if t.name not in dropped)
        else:
            out.initializer.extend(gp.initializer)
    new_inputs = []
    for c in gm._new_consts.get(id(g), []):
        if c.name not in dropped:
            out.initializer.append(c.to_proto())
            new_inputs.append(c)
    if gm.lists_initializers_as_inputs:
        # (so passes create initializers of subgraphs in the main graph, which subgraphs can read)
        listed = {vi.name for vi in out.input}
        for c in new_inputs:
            if c.name not in listed:
                out.input.append(_value_info_of(c))
        if dropped:
            kept = [vi for vi in out.input if vi.name not in dropped]
            if len(kept) != len(out.input):
                del out.input[:]
                out.input.extend(kept)
    return out


def _export_function(gm: GraphModel, f: Graph) -> onnx.FunctionProto:
    fp = f.proto
    out = onnx.FunctionProto()
    _copy_fields(out, fp, ("node", "value_info"))
    dropped = gm._dropped.get(id(f), set())
    for c in gm._new_consts.get(id(f), []):
        if c.name not in dropped:
            out.node.append(onnx.helper.make_node("Constant", [], [c.name], value=c.to_proto()))
    out.node.extend(_export_node(gm, n) for n in f.nodes)
    return out


def _node_fields(gm: GraphModel, nodes: list[Node]) -> bytes:
    """``nodes`` (main graph) as serialised ``GraphProto.node`` fields: an unchanged node's
    field as ``source`` holds it (adjacent ones in one piece), any other serialised anew."""
    src = gm._source
    view = memoryview(src.data)
    starts = src.starts
    pos = gm._source_pos.get
    no_graphs = _NO_GRAPHS
    pieces: list = []
    a = b = -1  # the run of source bytes not yet added
    for n in nodes:
        k = pos(n)
        if k is not None and (
            # _unchanged(n), its common case inline
            (n._attrs is None and not n.dirty and n.graphs is no_graphs and n.orig == (n.op, n.name, n.domain))
            or _unchanged(n)
        ):
            s = starts[k]
            if s != b:
                if b != -1:
                    pieces.append(view[a:b])
                a = s
            b = starts[k + 1]
            continue
        if b != -1:
            pieces.append(view[a:b])
            a = b = -1
        if k is not None and n.graphs is no_graphs and n.orig == (n.op, n.name, n.domain):
            field = _relinked_field(view, starts[k], starts[k + 1], n)
            if field is not None:
                pieces.append(field)
                continue
        pb = _export_node(gm, n).SerializeToString()
        pieces.append(_NODE_FIELD_TAG + _varint(len(pb)))
        pieces.append(pb)
    if b != -1:
        pieces.append(view[a:b])
    return b"".join(pieces)


def _export_node(gm: GraphModel, n: Node) -> NodeProto:
    po = n.proto
    if _unchanged(n):
        return po
    p = NodeProto()
    if (
        po is not None
        and not n.graphs
        and (n._attrs is None or (len(n._attrs) == len(po.attribute) and _same_attrs(n._attrs, n.snap)))
    ):
        # the original attributes, all of them in their order (decoded ones: each original
        # one unique and unchanged): a copy with the links, op and names rewritten
        p.CopyFrom(po)
        p.DiscardUnknownFields()  # (as a copy of its known fields)
        p.input[:] = [t.name for t in n.inputs]
        p.output[:] = [t.name for t in n.outputs]
        p.op_type = n.op
        if n.domain:
            p.domain = n.domain
        else:
            p.ClearField("domain")
        if n.name:
            p.name = n.name
        else:
            p.ClearField("name")
        return p
    if po is not None:
        _copy_fields(p, po, ("input", "output", "attribute", "op_type", "domain", "name"))
    p.op_type = n.op
    if n.domain:
        p.domain = n.domain
    if n.name:
        p.name = n.name
    p.input.extend(t.name for t in n.inputs)
    p.output.extend(t.name for t in n.outputs)
    orig_attrs = {a.name: a for a in po.attribute} if po is not None else {}
    if n._attrs is None:  # never decoded: the original attributes, subgraphs re-exported
        for a in po.attribute:
            if a.name in n.graphs:
                p.attribute.append(_graph_attr(gm, a.name, n.graphs[a.name]))
            else:
                p.attribute.append(a)
        return p
    snap = n.snap or {}
    for k, v in n._attrs.items():
        if isinstance(v, (Graph, list)) and k in n.graphs and v is n.graphs[k]:
            p.attribute.append(_graph_attr(gm, k, v))
        elif k in orig_attrs and k in snap and snap[k] is v:
            p.attribute.append(orig_attrs[k])
        else:
            p.attribute.append(_make_attr(k, v))
    for k, a in orig_attrs.items():
        if a.ref_attr_name and k not in n._attrs:  # references to function attributes stay
            p.attribute.append(a)
    return p


def _graph_attr(gm: GraphModel, name: str, v) -> AttributeProto:
    a = AttributeProto()
    a.name = name
    if isinstance(v, list):
        a.type = AttributeProto.GRAPHS
        a.graphs.extend(_export_graph(gm, sg) for sg in v)
    else:
        a.type = AttributeProto.GRAPH
        _export_graph(gm, v, a.g)
    return a


def _raise_default_opset(opsets, floor: int) -> None:
    """The first default-domain import of ``opsets`` raised to ``floor`` when below it."""
    for o in opsets:
        if o.domain in ("", "ai.onnx"):
            if o.version < floor:
                o.version = floor
            return


def _copy_fields(dst, src, skip: tuple[str, ...]) -> None:
    """Copy every set field of protobuf message ``src`` into ``dst`` except those in ``skip``."""
    for fd, val in src.ListFields():
        if fd.name in skip:
            continue
        if fd.is_repeated:
            getattr(dst, fd.name).extend(val)
        elif fd.type == fd.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(val)
        else:
            setattr(dst, fd.name, val)


def _unchanged(n: Node) -> bool:
    """True when ``n`` is exactly its original NodeProto (``n.proto``): nothing relinked or
    renamed, no subgraph (those are exported anew), the same op, name and attributes."""
    return (
        n.orig is not None
        and not n.dirty
        and not n.graphs
        and (n._attrs is None or _same_attrs(n._attrs, n.snap))
        and n.orig == (n.op, n.name, n.domain)
    )


_NODE_FIELD_TAG = bytes((NODE_TAG,))  # GraphProto.node
_INPUT_TAG = 1 << 3 | 2  # NodeProto.input
_OUTPUT_TAG = 2 << 3 | 2  # NodeProto.output
_NODE_FIELDS = {f.number: f.is_repeated for f in NodeProto.DESCRIPTOR.fields}  # number -> repeated
_NAME, _OP_TYPE, _ATTRIBUTE, _DOMAIN = (
    NodeProto.DESCRIPTOR.fields_by_name[f].number for f in ("name", "op_type", "attribute", "domain")
)
#: tag + length of a short string field, by (tag, length)
_SHORT_HEADS = {(tag, n): bytes((tag, n)) for tag in (_INPUT_TAG, _OUTPUT_TAG) for n in range(0x80)}


def _relinked_field(data, start: int, end: int, n: Node) -> bytes | None:
    """Node ``n``'s ``GraphProto.node`` field with its original field ``data[start:end]``'s
    inputs and outputs replaced by ``n``'s, when ``n`` differs from its original only there (same
    op, name, domain and attributes: the caller checked the first three) and the original is
    what serialising it gives past them: known fields only, in field-number order, each
    singular one once, op_type present, no empty name or domain present. That is then
    byte for byte the field :func:`_export_node` gives, with no NodeProto built.
    None otherwise (the caller builds the NodeProto)."""
    i = start + 1  # past the GraphProto.node tag
    size = data[i]
    i += 1
    if size >= 0x80:
        size, i = _read_varint(data, i - 1)
    if i + size != end:
        return None
    while i < end and data[i] in (_INPUT_TAG, _OUTPUT_TAG):
        size = data[i + 1]
        i = i + 2 + size if size < 0x80 else skip_string(data, i)
    rest = i
    last = 2  # (the input and output fields at the start are skipped; any later one is out of order)
    op_seen = False
    attrs = 0
    fields = _NODE_FIELDS
    while i < end:
        tag = data[i]
        num = tag >> 3
        if tag & 7 != 2 or tag >= 0x80 or num not in fields or num < last or (num == last and not fields[num]):
            return None
        size = data[i + 1]
        if size == 0 and num in (_NAME, _DOMAIN):
            return None  # present and empty: the rebuilt node leaves it out
        if num == _OP_TYPE:
            op_seen = True
        elif num == _ATTRIBUTE:
            attrs += 1
        last = num
        i = i + 2 + size if size < 0x80 else skip_string(data, i)
    if i != end or not op_seen:
        return None
    if n._attrs is not None and (len(n._attrs) != attrs or not _same_attrs(n._attrs, n.snap)):
        return None
    heads = _SHORT_HEADS
    parts = []
    add = parts.append
    try:
        for tag, ts in ((_INPUT_TAG, n.inputs), (_OUTPUT_TAG, n.outputs)):
            for t in ts:
                nb = t.name.encode()
                h = heads.get((tag, len(nb)))
                add(h if h is not None else bytes((tag,)) + _varint(len(nb)))
                add(nb)
    except UnicodeEncodeError:
        return None  # (the NodeProto refuses it too, with its own message)
    add(data[rest:end])
    payload = b"".join(parts)
    size = len(payload)
    return b"".join((_NODE_FIELD_TAG, SHORT_LENGTHS[size] if size < 0x80 else _varint(size), payload))


def _same_attrs(attrs: dict, snap: dict | None) -> bool:
    if snap is None or attrs.keys() != snap.keys():
        return False
    return all(v is snap[k] for k, v in attrs.items())


def _make_attr(name: str, value: Any) -> AttributeProto:
    if isinstance(value, Constant):
        return onnx.helper.make_attribute(name, value.to_proto(value.name))
    return onnx.helper.make_attribute(name, value)


def _value_info_of(c: Constant) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_value_info(c.name, c.data_type, list(c.shape))
