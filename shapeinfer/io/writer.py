"""Writing model files (:func:`save_model`): atomically, with weights left where they are. The model is
serialised to a temporary file in the target folder and renamed over the target
(:func:`shapeinfer.io.userfiles.write_output`: the target folder must exist, an input of the run is
never overwritten unless allowed, ``-`` is standard output), so an interrupted run leaves any
old file intact. Tensors stored as external data keep their references; when the target folder
differs from the source's, every entry is checked first and the referenced data files are
copied alongside with the kernel (:mod:`shapeinfer.io.external`), all before the model is written:
a refusal writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import onnx

from shapeinfer.io.external import ExternalDataError, copy_external_files, data_files, external_tensors, plan_copy
from shapeinfer.io.onnxio import LoadedModel
from shapeinfer.io.userfiles import STDIO, output_target, show, write_output
from shapeinfer.io.wire import graph_layout, initializer_views, node_views, varint


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
    :class:`~shapeinfer.io.userfiles.UserFileError` for an output path the rule refuses and
    :class:`~shapeinfer.io.external.ExternalDataError` for external data that cannot be copied.
    ``graph_tail`` is serialised ``GraphProto`` fields written at the end of the main graph (the
    value_info bytes of :func:`annotate_for_writing`): the file holds ``model`` with them merged.
    ``loaded``: what ``model`` was read as (:func:`~shapeinfer.io.onnxio.load_model_file`; ``model``
    is its model, or a copy), only when no tensor of it has changed since: its external tensors
    are not looked up again, and the main graph's initializers are written as the bytes that
    were read (:func:`shapeinfer.io.wire.initializer_views`) instead of being serialised again
    (always so for a model read with ``lean=True``, whose large weights were not parsed).
    ``nodes_as_read``: the main graph's nodes have not changed either (no subgraph was
    annotated: :func:`subgraphs_annotated`), so they too are written as the bytes read.
    ``node_fields``: the main graph's nodes of ``model`` already serialised (``GraphProto.node``
    fields, in order, e.g. :attr:`shapeinfer.passes.OptimizeReport.node_fields`), written as
    they are instead of serialising ``model.graph.node`` again; ``value_info_fields`` the same
    for ``model.graph.value_info`` (:func:`annotate_serialised`). ``external``: ``model``'s
    tensors stored as external data (:func:`shapeinfer.io.external.external_tensors`), when the
    caller knows them without ``loaded`` (else the model is walked for them).
    The files the external data of ``model`` names (in ``src``'s folder) and ``data_inputs``
    (the input model's own, :func:`shapeinfer.io.external.data_files`, when it named more than
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
    :func:`shapeinfer.io.wire.initializer_views` finds them in the bytes the model was read from),
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


# A large graph's value_info is serialised in one go (the wire format of repeated
# ValueInfoProto): a message per tensor through the Python API is the slowest part of writing.


def _tag(message, field: str) -> bytes:
    """The wire tag of a length-delimited field of ``message``."""
    return varint(message.DESCRIPTOR.fields_by_name[field].number << 3 | 2)
