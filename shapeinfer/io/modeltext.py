"""Text read from a model that may not be valid UTF-8.

Protobuf's Python runtime returns a ``string`` field whose bytes are not valid UTF-8 (a tensor,
node or graph name, an op type, a ``dim_param``, a doc string) as ``bytes``, not ``str``. The
engine keys its tables by whatever the model holds, so such a name still connects the tensors
that share it and is written back byte for byte; everything that shows a name or builds text
from it goes through :func:`text`, which decodes with ``backslashreplace`` (``b"y\\xff"`` is
shown as ``y\\xff``), so it never meets ``bytes`` where it expects ``str``. The optimize
passes, which rebuild messages, first escape every such field of their copy of the model
(:func:`decode_model_text`).
"""

from __future__ import annotations

from typing import Any

from shapeinfer.base.text import text
from shapeinfer.io.external import ExternalDataInvalid
from shapeinfer.io.userfiles import show

_UTF8_CHECKER: Any = None  # the proto3 twin of ModelProto (built on first use)


def _fix_scalars(msg, names: tuple[str, ...]) -> None:
    for name in names:
        v = getattr(msg, name)
        if type(v) is bytes:
            setattr(msg, name, text(v))


def _fix_repeated(field) -> None:
    for i, v in enumerate(field):
        if type(v) is bytes:
            field[i] = text(v)


def _fix_entries(entries) -> None:
    for e in entries:
        _fix_scalars(e, ("key", "value"))


def _fix_type(tp) -> None:
    _fix_scalars(tp, ("denotation",))
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(tp, which)
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                _fix_scalars(d, ("dim_param", "denotation"))
    elif which == "sequence_type":
        _fix_type(tp.sequence_type.elem_type)
    elif which == "optional_type":
        _fix_type(tp.optional_type.elem_type)
    elif which == "map_type":
        _fix_type(tp.map_type.value_type)


def _fix_tensor(t) -> None:
    for e in t.external_data:  # a location names a file: escaped, it would name another one
        if type(e.key) is bytes or type(e.value) is bytes:
            raise ExternalDataInvalid(
                f"tensor {show(repr(text(t.name)))}: external-data {show(repr(text(e.key)))} "
                f"{show(repr(text(e.value)))} is not valid UTF-8: the model cannot be rewritten"
            )
    _fix_scalars(t, ("name", "doc_string"))
    _fix_entries(t.metadata_props)


def _fix_value_infos(vis) -> None:
    for vi in vis:
        _fix_scalars(vi, ("name", "doc_string"))
        if vi.HasField("type"):
            _fix_type(vi.type)
        _fix_entries(vi.metadata_props)


def _fix_attribute(a) -> None:
    _fix_scalars(a, ("name", "ref_attr_name", "doc_string"))
    if a.HasField("g"):
        _fix_graph(a.g)
    for g in a.graphs:
        _fix_graph(g)
    if a.HasField("t"):
        _fix_tensor(a.t)
    for t in a.tensors:
        _fix_tensor(t)
    if a.HasField("sparse_tensor"):
        _fix_tensor(a.sparse_tensor.values)
        _fix_tensor(a.sparse_tensor.indices)
    if a.HasField("tp"):
        _fix_type(a.tp)
    for tp in a.type_protos:
        _fix_type(tp)


def _fix_nodes(nodes) -> None:
    for n in nodes:
        _fix_scalars(n, ("name", "op_type", "domain", "overload", "doc_string"))
        _fix_repeated(n.input)
        _fix_repeated(n.output)
        for a in n.attribute:
            _fix_attribute(a)
        _fix_entries(n.metadata_props)


def _fix_graph(g) -> None:
    _fix_scalars(g, ("name", "doc_string"))
    _fix_nodes(g.node)
    for t in g.initializer:
        _fix_tensor(t)
    for st in g.sparse_initializer:
        _fix_tensor(st.values)
        _fix_tensor(st.indices)
    _fix_value_infos(g.input)
    _fix_value_infos(g.output)
    _fix_value_infos(g.value_info)
    _fix_entries(g.metadata_props)


def _utf8_checker():
    """A message class with ModelProto's fields in proto3 syntax, whose parser (in C) rejects a
    string field that is not valid UTF-8; proto2's, which onnx uses, accepts any bytes."""
    global _UTF8_CHECKER
    if _UTF8_CHECKER is None:
        import onnx
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        fdp = descriptor_pb2.FileDescriptorProto()
        onnx.ModelProto.DESCRIPTOR.file.CopyToProto(fdp)
        old, new = f".{fdp.package}.", ".shapeinfer_utf8_check."
        fdp.name, fdp.package, fdp.syntax = "shapeinfer_utf8_check.proto", "shapeinfer_utf8_check", "proto3"

        def to_proto3(messages) -> None:
            for m in messages:
                m.ClearField("extension_range")
                for f in m.field:
                    f.ClearField("default_value")
                    if f.label == f.LABEL_REQUIRED:
                        f.label = f.LABEL_OPTIONAL
                    if f.type_name.startswith(old):
                        f.type_name = new + f.type_name[len(old) :]
                to_proto3(m.nested_type)

        to_proto3(fdp.message_type)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        _UTF8_CHECKER = message_factory.GetMessageClass(pool.FindMessageTypeByName("shapeinfer_utf8_check.ModelProto"))
    return _UTF8_CHECKER


def all_text_is_utf8(model, data: bytes | None = None) -> bool:
    """True when every text field of ``model`` (an ``onnx.ModelProto``) is valid UTF-8.

    ``data``: the serialised bytes ``model`` was parsed from, when it has not changed since
    (they are checked instead of serialising the model again).

    Exact and fast (a serialisation and a parse in C, about a tenth of walking the fields in
    Python): the model is parsed as its proto3 twin, which validates every string field.
    False also when that cannot be decided (a model over protobuf's 2 GB limit, an onnx whose
    schema protobuf will not take as proto3): the caller then walks the fields.
    """
    try:
        _utf8_checker().FromString(model.SerializeToString() if data is None else data)
    except Exception:
        return False
    return True


def decode_model_text(model, data: bytes | None = None):
    """Replace, in place, every text field of ``model`` (an ``onnx.ModelProto``) that holds bytes
    that are not valid UTF-8 with :func:`text` of it; returns the model.

    For the optimize passes, which rebuild nodes and name new tensors after old ones: protobuf
    refuses such bytes in a rebuilt message, and a node rebuilt with an escaped name must not
    lose its link to one kept with the raw bytes. The same bytes always give the same text, so
    every reference is renamed alike. (Costs about as much as loading the model: inference and
    ``-o``, which keep the raw bytes, do not use it.) A model whose text is all valid UTF-8 is
    recognised without the walk (:func:`all_text_is_utf8`; ``data`` as there). An
    external-data entry is not escaped: escaped, its location would name another file;
    :class:`~shapeinfer.io.external.ExternalDataInvalid` for one that is not UTF-8 (the model is
    then partly decoded).
    """
    if all_text_is_utf8(model, data):
        return model
    _fix_scalars(model, ("producer_name", "producer_version", "domain", "doc_string"))
    for o in model.opset_import:
        _fix_scalars(o, ("domain",))
    _fix_entries(model.metadata_props)
    if model.HasField("graph"):
        _fix_graph(model.graph)
    for f in model.functions:
        _fix_scalars(f, ("name", "domain", "overload", "doc_string"))
        _fix_repeated(f.input)
        _fix_repeated(f.output)
        _fix_repeated(f.attribute)
        for a in f.attribute_proto:
            _fix_attribute(a)
        for o in f.opset_import:
            _fix_scalars(o, ("domain",))
        _fix_nodes(f.node)
        _fix_value_infos(f.value_info)
        _fix_entries(f.metadata_props)
    return model
