"""Writing models: what a written type may look like, and the file itself.

Types (:func:`annotate`): inferred facts go into ``value_info`` and graph outputs only as
complete types (a tensor type has an element type, a sequence or optional an element type, a
map a key and a value type), merged with what the model already declares. A declaration is a
claim: inference refines it where it knows more, and where they disagree (element type, rank, a
dim inference determined) the inferred type is written (inference reports the disagreement as
G006). Where inference knows less (an unknown element type or rank, a dim that is only fresh
symbols) the declared part stays, except over a dim that is one of several alternatives (a
join: an If whose branches differ), which is written as inferred. Where it knows nothing and
nothing is declared, nothing is written.

Files (:func:`save_model`): atomically, with weights left where they are. The model is
serialised to a temporary file in the target folder and renamed over the target
(:func:`shapeinfer.userfiles.write_output`: the target folder must exist, an input of the run is
never overwritten unless allowed, ``-`` is standard output), so an interrupted run leaves any
old file intact. Tensors stored as external data keep their references; when the target folder
differs from the source's, every entry is checked first and the referenced data files are
copied alongside with the kernel (:mod:`shapeinfer.external`), all before the model is written:
a refusal writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import onnx
from onnx import TypeProto

from shapeinfer import dims as D
from shapeinfer.engine import Result, graph_path
from shapeinfer.external import ExternalDataError, copy_external_files, data_files, external_tensors, plan_copy
from shapeinfer.facts import Fact
from shapeinfer.onnxio import LoadedModel, fact_type, subgraph_attrs, write_shape
from shapeinfer.userfiles import STDIO, output_target, show, write_output
from shapeinfer.wire import graph_layout, initializer_views, node_views, varint


def save_model(
    model: onnx.ModelProto,
    out: str,
    src: str | None = None,
    *,
    inputs: Iterable[str] = (),
    in_place: bool = False,
    graph_tail: bytes = b"",
    loaded: LoadedModel | None = None,
    nodes_as_read: bool = False,
    node_fields: bytes | None = None,
    value_info_fields: bytes | None = None,
    external: list[onnx.TensorProto] | None = None,
    data_inputs: Iterable[str] = (),
) -> None:
    """Write ``model`` to ``out`` atomically; copy external data files if the folder changes.

    ``src`` is the path the model was read from (its folder locates the external data; ``-``
    for standard input, which has none). ``inputs`` are further files of the run that must not
    be overwritten; ``src`` is always one unless ``in_place``. Raises
    :class:`~shapeinfer.userfiles.UserFileError` for an output path the rule refuses and
    :class:`~shapeinfer.external.ExternalDataError` for external data that cannot be copied.
    ``graph_tail`` is serialised ``GraphProto`` fields written at the end of the main graph (the
    value_info bytes of :func:`annotate_for_writing`): the file holds ``model`` with them merged.
    ``loaded``: what ``model`` was read as (:func:`~shapeinfer.onnxio.load_model_file`; ``model``
    is its model, or a copy), only when no tensor of it has changed since: its external tensors
    are not looked up again, and the main graph's initializers are written as the bytes that
    were read (:func:`shapeinfer.wire.initializer_views`) instead of being serialised again
    (always so for a model read with ``lean=True``, whose large weights were not parsed).
    ``nodes_as_read``: the main graph's nodes have not changed either (no subgraph was
    annotated: :func:`subgraphs_annotated`), so they too are written as the bytes read.
    ``node_fields``: the main graph's nodes of ``model`` already serialised (``GraphProto.node``
    fields, in order, e.g. :attr:`shapeinfer.passes.OptimizeReport.node_fields`), written as
    they are instead of serialising ``model.graph.node`` again; ``value_info_fields`` the same
    for ``model.graph.value_info`` (:func:`annotate_serialised`). ``external``: ``model``'s
    tensors stored as external data (:func:`shapeinfer.external.external_tensors`), when the
    caller knows them without ``loaded`` (else the model is walked for them).
    The files the external data of ``model`` names (in ``src``'s folder) and ``data_inputs``
    (the input model's own, :func:`shapeinfer.external.data_files`, when it named more than
    ``model`` still does) are inputs that ``out`` may never replace, ``in_place`` or not.
    """
    protected = [*inputs, *([src] if src else [])]
    if loaded is not None:
        external = loaded.external
    src_dir = None if src is None or src == STDIO else os.path.dirname(os.path.abspath(src))
    data = list(data_inputs)
    if out != STDIO and src_dir is not None:
        if external is None:
            external = external_tensors(model)
        data += data_files(external, src_dir)
    out_dir = ""
    if out != STDIO:
        target = output_target(out, inputs=protected, allow_inputs=in_place, what="model", data_inputs=data)
        out_dir = os.path.dirname(target)
    if src is None or out == STDIO:  # standard output: references are written as they are
        plan = []
    else:
        plan = plan_copy(model, src_dir, out_dir, external)
        model_target = os.path.realpath(out)
        for _, target in plan:
            if os.path.realpath(target) == model_target:
                raise ExternalDataError(f"cannot copy external data onto the output model {show(out)}")
    spans = nodes = None
    if loaded is not None:
        layout = loaded.layout if loaded.layout is not None else graph_layout(loaded.data)
        spans = initializer_views(loaded.data, layout, len(model.graph.initializer))
        if spans is None and loaded.lean:  # cannot happen: lean models are made from a layout
            raise RuntimeError("a model read without its weights' data cannot be written without the file's bytes")
        if nodes_as_read:
            nodes = node_views(loaded.data, layout, len(model.graph.node))
    if node_fields is not None and nodes is None:
        nodes = [node_fields]
    value_info = None if value_info_fields is None else [value_info_fields]
    chunks = model_chunks(model, graph_tail, spans, nodes, value_info)
    copy_external_files(plan)
    write_output(
        out,
        lambda fd: write_chunks(fd, chunks),
        inputs=protected,
        allow_inputs=in_place,
        what="model",
        data_inputs=data,
    )


#: Repeated fields of a graph that are serialised one element at a time by :func:`model_chunks`.
_SPLIT_GRAPH_FIELDS = ("node", "initializer", "value_info")


def model_chunks(
    model: onnx.ModelProto,
    graph_tail: bytes = b"",
    initializers: list[memoryview] | None = None,
    nodes: list[memoryview] | None = None,
    value_info: list[bytes] | None = None,
) -> list[bytes | memoryview]:
    """``model``'s serialised bytes as a list of pieces (``b"".join`` of them parses to the same
    model, with the serialised ``GraphProto`` fields ``graph_tail`` merged into its graph). The
    graph's nodes, initializers and value_info are serialised one by one: a single
    ``SerializeToString`` of a model with large weights costs several times its parts (the one
    big buffer is grown and copied), and the pieces are written without ever being joined.
    ``initializers``: the main graph's initializer fields already serialised (as
    :func:`shapeinfer.wire.initializer_views` finds them in the bytes the model was read from),
    written instead of serialising ``model.graph.initializer``; ``nodes`` and ``value_info``:
    the same for ``model.graph.node`` and ``model.graph.value_info``."""
    head = onnx.ModelProto()
    for fd, value in model.ListFields():
        if fd.name != "graph":
            _copy_field(head, fd, value)
    chunks = [head.SerializeToString()]
    if model.HasField("graph") or graph_tail:
        rest = onnx.GraphProto()
        body: list[bytes] = []
        for fd, value in model.graph.ListFields():
            if fd.name not in _SPLIT_GRAPH_FIELDS:
                _copy_field(rest, fd, value)
                continue
            read = {"initializer": initializers, "node": nodes, "value_info": value_info}[fd.name]
            if read is not None:
                body.extend(read)
                continue
            tag = varint(fd.number << 3 | 2)
            headers: dict[int, bytes] = {}  # tag + length, by length
            for b in [x.SerializeToString() for x in value]:
                n = len(b)
                h = headers.get(n)
                if h is None:
                    h = headers[n] = tag + varint(n)
                body.append(h)
                body.append(b)
        body.insert(0, rest.SerializeToString())
        if graph_tail:
            body.append(graph_tail)
        chunks.append(_tag(onnx.ModelProto, "graph") + varint(sum(map(len, body))))
        chunks.extend(body)
    return chunks


def _copy_field(dst, fd, value) -> None:
    if hasattr(value, "extend"):  # a repeated field
        getattr(dst, fd.name).extend(value)
    elif fd.message_type is not None:
        getattr(dst, fd.name).CopyFrom(value)
    else:
        setattr(dst, fd.name, value)


def write_chunks(fd: int, chunks: list[bytes]) -> None:
    """Write every chunk to the descriptor, in order (``writev`` in batches; short writes resumed)."""
    writev = getattr(os, "writev", None)
    for i in range(0, len(chunks), 512):  # IOV_MAX is 1024 on Linux
        batch = chunks[i : i + 512]
        done = writev(fd, batch) if writev is not None else 0
        for c in batch:
            if done >= len(c):
                done -= len(c)
                continue
            view = memoryview(c)[done:]
            done = 0
            while view:
                view = view[os.write(fd, view) :]


def annotate(result: Result, declared: Mapping[str, TypeProto] | None = None) -> onnx.ModelProto:
    """Write ``result``'s facts into its model's ``value_info`` and graph outputs (in place).

    Every graph and subgraph inference reached is annotated. A value's written type is its fact
    merged with its declared type (:func:`written_type`); a value with neither gets no entry, and
    declared ``value_info`` entries for values inference does not know stay as they are.
    ``declared`` adds declared types of main-graph values by name, taking precedence over the
    graph's own (for a model rewritten since it was loaded: the types its original declared).
    Graph inputs and initializers are never touched. Returns the model.
    """
    tail = _annotate_graph(result.model.graph, result, _adoptable(result), declared or {}, "main")
    result.model.graph.MergeFromString(tail)
    return result.model


def annotate_serialised(result: Result, declared: Mapping[str, TypeProto] | None = None) -> bytes:
    """:func:`annotate`, returning the main graph's ``value_info`` as it then is, serialised
    (``GraphProto.value_info`` fields, for ``save_model(..., value_info_fields=...)``): the
    entries kept serialised, then the new ones as they were written (not serialised again)."""
    graph = result.model.graph
    tail = _annotate_graph(graph, result, _adoptable(result), declared or {}, "main")
    kept = [_field(_VALUE_INFO, vi.SerializeToString()) for vi in graph.value_info]
    graph.MergeFromString(tail)
    return b"".join([*kept, tail])


def annotate_for_writing(result: Result) -> tuple[onnx.ModelProto, bytes]:
    """:func:`annotate`, except that the main graph's new ``value_info`` entries are returned as
    serialised ``GraphProto`` fields instead of merged into the model (for
    ``save_model(model, ..., graph_tail=...)``, which writes them without parsing them back).
    The written file is the same model :func:`annotate` then :func:`save_model` would write."""
    tail = _annotate_graph(result.model.graph, result, _adoptable(result), {}, "main")
    return result.model, tail


def subgraphs_annotated(result: Result) -> bool:
    """True when :func:`annotate` changes nodes of the main graph: it writes into the subgraphs
    inference reached, which live in node attributes; nothing else it does touches a node."""
    return any(path != "main" for path in result.graph_facts)


def is_complete(tp: TypeProto) -> bool:
    """True when ``tp`` is a type a model may declare: every nested element type is present."""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        return getattr(tp, which).elem_type != 0
    if which == "sequence_type":
        return tp.sequence_type.HasField("elem_type") and is_complete(tp.sequence_type.elem_type)
    if which == "optional_type":
        return tp.optional_type.HasField("elem_type") and is_complete(tp.optional_type.elem_type)
    if which == "map_type":
        mt = tp.map_type
        return mt.key_type != 0 and mt.HasField("value_type") and is_complete(mt.value_type)
    return which is not None  # opaque types: as declared


def fact_is_complete(f: Fact | None) -> bool:
    """True when ``fact_type(f)`` is complete (:func:`is_complete`)."""
    if f is None:
        return False
    if f.kind in ("tensor", "sparse_tensor"):
        return f.dtype != 0
    if f.kind in ("sequence", "optional"):
        return fact_is_complete(f.elem)
    if f.kind == "map":
        return f.dtype != 0 and fact_is_complete(f.elem)
    return False


_KIND_OF = {
    "tensor_type": "tensor",
    "sparse_tensor_type": "sparse_tensor",
    "sequence_type": "sequence",
    "optional_type": "optional",
    "map_type": "map",
}


class _Conflict(Exception):
    """Inference and the declaration disagree: the declaration is written as it is."""


def _unknown(f: Fact | None) -> bool:
    return f is None or (f.kind == "tensor" and not f.dtype and f.shape is None)


def _adoptable(result: Result) -> set[str]:
    """The fresh symbols a declared dim may stand for in what is written: all but the joins."""
    return set(result.fresh_symbols) - set(result.join_symbols)


def written_type(f: Fact | None, declared: TypeProto | None, fresh: set[str]) -> TypeProto | None:
    """The type to write for a value with fact ``f`` and declared type ``declared``, or None.

    Inference refines the declaration where it knows more (an element type, a rank, a dim): a
    dim it determined (an integer, an expression of the inputs' symbols) is written, a declared
    dim stays over one made only of the symbols in ``fresh`` (fresh ones a declaration may stand
    for). Where they disagree (kind, element type, rank, two different integer dims) inference
    wins: the declared parts it contradicts are not written. The result is always complete
    (:func:`is_complete`); None when neither side gives one.
    """
    if declared is not None and declared.WhichOneof("value") is None:
        declared = None
    if declared is None:
        return fact_type(f) if fact_is_complete(f) else None
    if _unknown(f):
        return declared if is_complete(declared) else None
    try:
        tp = _merge(f, declared, fresh)
    except _Conflict:  # a different kind of value: the declaration says nothing of this one
        return fact_type(f) if fact_is_complete(f) else None
    if is_complete(tp):
        return tp
    return declared if is_complete(declared) else None


def _merge(f: Fact | None, decl: TypeProto, fresh: set[str]) -> TypeProto:
    """``decl`` refined by ``f``; raises _Conflict where they disagree."""
    which = decl.WhichOneof("value")
    if _unknown(f):
        return decl
    if _KIND_OF.get(which) != f.kind:
        raise _Conflict
    tp = TypeProto()
    if decl.denotation:
        tp.denotation = decl.denotation
    if which in ("tensor_type", "sparse_tensor_type"):
        dt = getattr(decl, which)
        out = getattr(tp, which)
        if f.dtype or dt.elem_type:
            out.elem_type = f.dtype or dt.elem_type
        if f.shape is None:
            if dt.HasField("shape"):
                out.shape.CopyFrom(dt.shape)
        elif not dt.HasField("shape"):
            write_shape(out, f.shape)
        elif len(dt.shape.dim) != len(f.shape):
            write_shape(out, f.shape)  # the declared rank is wrong: none of its dims apply
        else:
            out.shape.SetInParent()
            for d, x in zip(f.shape, dt.shape.dim):
                _merge_dim(out.shape.dim.add(), d, x, fresh)
    elif which == "sequence_type":
        tp.sequence_type.elem_type.CopyFrom(_merge_elem(f.elem, decl.sequence_type, fresh))
    elif which == "optional_type":
        tp.optional_type.elem_type.CopyFrom(_merge_elem(f.elem, decl.optional_type, fresh))
    else:  # map_type
        mt = decl.map_type
        tp.map_type.key_type = f.dtype or mt.key_type
        if mt.HasField("value_type"):
            tp.map_type.value_type.CopyFrom(_merge(f.elem, mt.value_type, fresh))
        elif f.elem is not None:
            tp.map_type.value_type.CopyFrom(fact_type(f.elem))
    return tp


def _merge_elem(elem: Fact | None, container, fresh: set[str]) -> TypeProto:
    if container.HasField("elem_type"):
        return _merge(elem, container.elem_type, fresh)
    return TypeProto() if elem is None else fact_type(elem)


def _merge_dim(out, d: D.Dim, x, fresh: set[str]) -> None:
    """One dim: inference wins where it determined the dim (an integer, or an expression of
    the inputs' symbols); a declared dim stays over one made only of ``fresh`` symbols."""
    if type(d) is int:
        out.dim_value = d
    elif D.symbols(d) <= fresh and x.HasField("dim_value"):
        out.dim_value = x.dim_value
    elif D.symbols(d) <= fresh and x.HasField("dim_param") and x.dim_param:
        out.dim_param = x.dim_param
    else:
        out.dim_param = D.format(d)
    if x.denotation:
        out.denotation = x.denotation


# A large graph's value_info is serialised in one go (the wire format of repeated
# ValueInfoProto): a message per tensor through the Python API is the slowest part of writing.


def _tag(message, field: str) -> bytes:
    """The wire tag of a length-delimited field of ``message``."""
    return varint(message.DESCRIPTOR.fields_by_name[field].number << 3 | 2)


#: The one-byte length prefixes (lengths below 128).
_SHORT_LENGTHS = [bytes((n,)) for n in range(0x80)]


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    n = len(payload)
    return tag + (_SHORT_LENGTHS[n] if n < 0x80 else varint(n)) + payload


_VALUE_INFO = _tag(onnx.GraphProto, "value_info")
_VI_NAME = _tag(onnx.ValueInfoProto, "name")
_VI_TYPE = _tag(onnx.ValueInfoProto, "type")


def _annotate_graph(
    graph: onnx.GraphProto, result: Result, fresh: set[str], declared: Mapping[str, TypeProto], path: str
) -> bytes:
    """Annotate ``graph`` and its inferred subgraphs; the new value_info entries of ``graph``
    itself are returned as serialised fields (after the kept ones in ``graph.value_info``)."""
    tail = b""
    facts = result.graph_facts.get(path)
    if facts is not None:
        for vi in graph.output:
            tp = written_type(facts.get(vi.name), declared.get(vi.name, vi.type), fresh)
            if tp is not None and tp is not vi.type:
                vi.type.CopyFrom(tp)
        skip = {vi.name for vi in graph.input} | {vi.name for vi in graph.output}
        skip.update(t.name for t in graph.initializer)
        skip.update(t.values.name for t in graph.sparse_initializer)
        own = {vi.name: vi for vi in graph.value_info}
        kept = [vi for name, vi in own.items() if name not in facts and name not in skip]
        del graph.value_info[:]  # the messages in ``own`` stay valid, detached
        graph.value_info.extend(kept)
        # by id (the facts stay alive in ``facts``): the written type and its value_info field
        type_fields: dict[int, tuple[bytes | None, bytes | None]] = {}
        chunks = []
        for name, f in facts.items():
            if name in skip:
                continue
            key = id(f)
            if key not in type_fields:
                tb = fact_type(f).SerializeToString() if fact_is_complete(f) else None
                type_fields[key] = (tb, None if tb is None else _field(_VI_TYPE, tb))
            tb, tf = type_fields[key]
            decl = declared.get(name) or (own[name].type if name in own else None)
            if decl is not None and (tb is None or decl.SerializeToString() != tb):
                tp = written_type(f, decl, fresh)  # the declaration says something else
                tf = None if tp is None else _field(_VI_TYPE, tp.SerializeToString())
            if tf is not None:  # _field(_VALUE_INFO, _field(_VI_NAME, name) + tf), in pieces
                nb = name if type(name) is bytes else name.encode()
                n = len(nb)
                name_head = _VI_NAME + (_SHORT_LENGTHS[n] if n < 0x80 else varint(n))
                n += len(name_head) + len(tf)
                chunks += (_VALUE_INFO, _SHORT_LENGTHS[n] if n < 0x80 else varint(n), name_head, nb, tf)
        tail = b"".join(chunks)
    if not any(p.startswith(path + "/") for p in result.graph_facts):
        return tail  # no subgraph below this one was inferred
    for k, n in enumerate(graph.node):
        for attr, g in subgraph_attrs(n):
            g.MergeFromString(_annotate_graph(g, result, fresh, {}, graph_path(path, k, attr)))
    return tail
