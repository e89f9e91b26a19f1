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
from shapeinfer.io.source import Source
from shapeinfer.io.userfiles import STDIO, output_target, show, write_output
from shapeinfer.io.wire import field_tag, varint


def save_model(
    model: onnx.ModelProto,
    out: str,
    source: Source | str | None = None,
    *,
    inputs: Iterable[str] = (),
    in_place: bool = False,
) -> None:
    """Write ``model`` to ``out`` atomically; copy external data files if the folder changes.

    ``source``: where ``model`` came from and what of it is serialised already
    (:class:`~shapeinfer.io.source.Source`; a path is ``Source(path)``, None a model in
    memory): its folder locates the external data; its bytes as read and the pieces already
    serialised are written as they are instead of serialising the model again. ``inputs`` are
    further files of the run that must not be overwritten; the source file is always one
    unless ``in_place``, and so are the files its external data names (those of the model and
    the source's ``data_inputs``), in place or not. Raises
    :class:`~shapeinfer.io.userfiles.UserFileError` for an output path the rule refuses and
    :class:`~shapeinfer.io.external.ExternalDataError` for external data that cannot be copied.
    """
    if not isinstance(source, Source):
        source = Source(source)
    src = source.path
    protected = [*inputs, *([src] if src else [])]
    external = source.external_tensors()
    src_dir = source.folder()
    data = list(source.data_inputs)
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
    spans, nodes, value_info = source.serialised(model)
    chunks = model_chunks(model, source.graph_tail, spans, nodes, value_info)
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
        chunks.append(field_tag(onnx.ModelProto, "graph") + varint(sum(map(len, body))))
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
