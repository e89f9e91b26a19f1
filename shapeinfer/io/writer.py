"""Writing model files (:func:`save_model`): atomically, never into a file the run did not create.

The model is serialised to a temporary file in the target folder and renamed over the target
(:func:`shapeinfer.io.userfiles.write_output`: the target folder must exist, an input of the run is
never overwritten unless allowed, ``-`` is standard output), so an interrupted run leaves any
old file intact. Tensors stored as external data keep their references; when the target folder
differs from the source's, the referenced data files are copied alongside with the kernel
(:mod:`shapeinfer.io.external`). This module is where the write contract's file rules are
enforced, for every front end (README, "Files and external data"):

- a data file the write would create under a name that exists in the target folder is refused
  (:class:`~shapeinfer.io.userfiles.WriteRefused`, naming it): it belongs to someone else (another
  model's weights). A file there that holds exactly the bytes the copy would write (a model
  written into that folder before from the same data) is read as it is, not replaced
  (:attr:`WritePlan.reused`). ``data_name`` (``--external-data NAME``) gathers the data in one
  file of that name instead, with the references rewritten; a file of that name is replaced
  (the user named it), unless it is an input of the run;
- a model whose external data names a file missing from its folder is refused
  (:class:`~shapeinfer.io.userfiles.WriteRefused`), unless ``allow_missing_data`` (``--force``);
- everything is checked and every data file copied to a temporary name before the model's
  bytes are complete; the data files are put in place (never replacing a file that appeared
  meanwhile) just before the model is, and taken back if the model is not put in place
  (:func:`write_with_data`: files created removed, a replaced data file restored, on an
  interrupt too): a refusal or a failure leaves no file behind and every file it would have
  replaced as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import onnx

from shapeinfer.io.datacopy import DataCopy, Relocation, StagedData, plan_copy, plan_relocation, stage_copies
from shapeinfer.io.external import ExternalDataError, data_files, external_tensors, missing_data_files
from shapeinfer.io.source import Source
from shapeinfer.io.userfiles import STDIO, WriteRefused, check_stdout, output_target, show, write_output
from shapeinfer.io.wire import field_tag, graph_layout, length_prefix, unknown_fields, varint

#: :attr:`WriteRefused.kind` of a refusal because the model's external data file is missing.
MISSING_DATA = "missing-data"
#: ... because a data file the write would create exists already.
DATA_EXISTS = "data-exists"


@dataclass
class WritePlan:
    """What :func:`save_model` will do, once every refusal is passed (:func:`plan_write`):
    ``target`` the model's path (empty for standard output), ``protected`` and ``data`` the
    inputs it must not replace, ``copies`` the data files to create, ``relocation`` the new
    external data entries (``data_name``), ``missing`` the data files the model points at that
    are missing (written anyway: ``allow_missing_data``), ``reused`` the data files it reads as
    they are."""

    target: str
    protected: list[str]
    data: list[str]
    copies: list[DataCopy] = field(default_factory=list)
    relocation: Relocation | None = None
    missing: list = field(default_factory=list)
    #: data files already in the output's folder holding exactly what a copy would write (a
    #: model written there before from the same data), each with the copy it stands for: the
    #: model reads them, nothing replaces them
    reused: dict[str, DataCopy] = field(default_factory=dict)

    def check_reused(self) -> None:
        """WriteRefused when a reused data file no longer holds the bytes it held when planned
        (changed while the model was written): the model would read other weights."""
        for path, c in self.reused.items():
            if not c.already_at(path):
                raise WriteRefused(
                    self.target, f"{show(path)} changed while the model was written: it no longer holds its data"
                )


def plan_write(
    model: onnx.ModelProto,
    out: str,
    source: Source | str | None = None,
    *,
    inputs: Iterable[str] = (),
    in_place: bool = False,
    data_name: str | None = None,
    allow_missing_data: bool = False,
) -> WritePlan:
    """Every check of :func:`save_model` (same arguments), without writing anything: the
    commands call it before the work too, so a write that will be refused is refused first."""
    if not isinstance(source, Source):
        source = Source(source)
    src = source.path
    protected = [*inputs, *([src] if src else [])]
    external = source.external_tensors()
    src_dir = source.folder()
    data = list(source.data_inputs)
    if src_dir is not None:
        if external is None:
            external = external_tensors(model)
        data += data_files(external, src_dir)
    missing = missing_data_files(external, src_dir) if external and src_dir is not None else []
    if missing and not allow_missing_data:
        more = len(missing) - 1
        also = f" (and {more} more missing file{'s' if more > 1 else ''})" if more else ""
        raise WriteRefused(out, f"its {missing[0].what()}{also}", MISSING_DATA)
    if out == STDIO:  # standard output: references are written as they are
        check_stdout(protected, what="model", data_inputs=data)
        return WritePlan("", protected, data, missing=missing)
    target = output_target(out, inputs=protected, allow_inputs=in_place, what="model", data_inputs=data)
    plan = WritePlan(target, protected, data, missing=missing)
    if src is None:  # a model in memory: its references are written as they are
        return plan
    out_dir = os.path.dirname(target)
    if external is None:
        external = external_tensors(model)
    if not external:
        return plan
    model_target = os.path.realpath(target)
    if data_name is not None:
        copy, plan.relocation = plan_relocation(external, src_dir, out_dir, data_name)
        output_target(
            os.path.join(out_dir, data_name),
            inputs=protected,
            what="external data file",
            data_inputs=data,
        )
        plan.copies = [copy]
    else:
        plan.copies = plan_copy(model, src_dir, out_dir, external, skip_missing=allow_missing_data)
    taken = []
    copies = []
    for c in plan.copies:
        if os.path.realpath(c.target) == model_target:
            raise ExternalDataError(f"cannot copy external data onto the output model {show(out)}")
        there = None if c.replace else c.existing(out_dir)
        if there is None:
            copies.append(c)
        elif c.already_at(there):
            plan.reused[there] = c  # the same bytes are there: read, not written
        else:
            taken.append((c, there))
    plan.copies = copies
    if taken:
        c, there = taken[0]
        if there == os.path.join(out_dir, c.location):  # as the user would name it
            there = os.path.join(os.path.dirname(out), c.location)
        more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
        raise WriteRefused(
            out,
            f"its external data file {show(repr(c.location))} would replace {show(there)}{more}, "
            "a file this run did not create with other bytes (another model's data?): write into "
            "another folder, or gather the data under a name of its own (--external-data NAME)",
            DATA_EXISTS,
        )
    return plan


def save_model(
    model: onnx.ModelProto,
    out: str,
    source: Source | str | None = None,
    *,
    inputs: Iterable[str] = (),
    in_place: bool = False,
    data_name: str | None = None,
    allow_missing_data: bool = False,
) -> WritePlan:
    """Write ``model`` to ``out`` atomically; copy external data files if the folder changes;
    returns what was done (:class:`WritePlan`).

    ``source``: where ``model`` came from and what of it is serialised already
    (:class:`~shapeinfer.io.source.Source`; a path is ``Source(path)``, None a model in
    memory): its folder locates the external data; its bytes as read and the pieces already
    serialised are written as they are instead of serialising the model again. ``inputs`` are
    further files of the run that must not be overwritten; the source file is always one
    unless ``in_place``, and so are the files its external data names (those of the model and
    the source's ``data_inputs``), in place or not. ``data_name``: write all the external data
    into one file of that name in ``out``'s folder, the references rewritten (``model`` is not
    modified). ``allow_missing_data``: write a model whose external data names a missing file
    (the references as they are; the files that exist are copied).

    Raises :class:`~shapeinfer.io.userfiles.WriteRefused` for what the write contract refuses
    (see the module docstring), :class:`~shapeinfer.io.userfiles.UserFileError` for an output
    path the rule refuses or a model or data file the file system does not let it write (one
    line naming the file) and :class:`~shapeinfer.io.external.ExternalDataError` for external
    data that cannot be copied; in each case nothing is written.
    """
    if not isinstance(source, Source):
        source = Source(source)
    plan = plan_write(
        model,
        out,
        source,
        inputs=inputs,
        in_place=in_place,
        data_name=data_name,
        allow_missing_data=allow_missing_data,
    )
    spans, nodes, value_info = source.serialised(model)
    if plan.relocation is not None:
        model, spans, nodes = _relocated(model, source, plan.relocation, nodes)
    chunks = model_chunks(model, source.graph_tail, spans, nodes, value_info)
    staged = stage_copies(plan.copies)
    write_with_data(
        out,
        lambda fd: write_chunks(fd, chunks),
        staged,
        inputs=plan.protected,
        allow_inputs=in_place,
        data_inputs=plan.data,
        before_commit=plan.check_reused,
    )
    return plan


def write_with_data(
    out: str,
    write: Callable[[int], None],
    staged: StagedData,
    *,
    inputs: Iterable[str] = (),
    allow_inputs: bool = False,
    data_inputs: Iterable[str] = (),
    before_commit: Callable[[], None] | None = None,
) -> None:
    """Write a model to ``out`` with its data files: the model's bytes (``write`` writes them to
    a descriptor) go through :func:`~shapeinfer.io.userfiles.write_output` (its checks, with
    ``inputs``, ``allow_inputs`` and ``data_inputs``); once they are complete,
    ``before_commit`` runs, then ``staged``'s files are put in place
    (:meth:`~shapeinfer.io.datacopy.StagedData.commit`) just before the model is.

    Either the model is in place with its data files, or nothing is changed: whatever fails or
    interrupts the write (a refusal, an error, KeyboardInterrupt, at any point before the
    model's rename) takes the data files back, a replaced data file restored to its old bytes,
    and is raised. ``staged`` is consumed either way."""
    written: list[os.stat_result] = []

    def model_bytes(fd: int) -> None:
        write(fd)
        written.append(os.fstat(fd))

    def commit() -> None:
        if before_commit is not None:
            before_commit()
        staged.commit()

    try:
        write_output(
            out,
            model_bytes,
            inputs=inputs,
            allow_inputs=allow_inputs,
            what="model",
            data_inputs=data_inputs,
            before_replace=commit,
        )
    except BaseException:
        if _written_at(out, written):  # interrupted after the model's rename: the new files stay
            staged.keep()
        else:
            staged.discard()
        raise
    staged.keep()


def _written_at(out: str, written: list[os.stat_result]) -> bool:
    """Whether the file at ``out`` is the one written (``written``: its ``fstat``, if any)."""
    if not written:
        return False
    try:
        st = os.stat(out)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (written[0].st_dev, written[0].st_ino)


_INITIALIZER = field_tag(onnx.GraphProto, "initializer")


def _relocated(model: onnx.ModelProto, source: Source, relocation: Relocation, nodes):
    """What :func:`model_chunks` writes for ``model`` with its external entries rewritten by
    ``relocation``, ``model`` itself unchanged: ``(model to serialise, main-graph initializer
    pieces, node pieces)``. Initializers stored in the model are written as read when the
    source has their bytes (a model read without its weights' data has no other form)."""
    inits = model.graph.initializer
    views = None
    loaded = source.loaded
    if loaded is not None:
        layout = loaded.layout if loaded.layout is not None else graph_layout(loaded.data)
        if layout is not None and len(layout.initializers) == len(inits):
            view = memoryview(loaded.data)
            views = [view[a:b] for a, b in layout.initializers]
        elif loaded.lean:  # cannot happen: lean models are made from a layout
            raise RuntimeError("a model read without its weights' data cannot be written without the file's bytes")
    pieces: list = []
    moved = 0
    external = onnx.TensorProto.EXTERNAL
    for i, t in enumerate(inits):
        if t.data_location == external:
            c = onnx.TensorProto()
            c.CopyFrom(t)
            relocation.apply(c)
            b = c.SerializeToString()
            pieces += (_INITIALIZER + length_prefix(len(b)), b)
            moved += 1
        elif views is not None:
            pieces.append(views[i])
        else:
            b = t.SerializeToString()
            pieces += (_INITIALIZER + length_prefix(len(b)), b)
    rest = sum(1 for t in external_tensors(model) if t.data_location == external) - moved
    if not rest:
        return model, pieces, nodes
    # tensors in nodes, subgraphs, functions or sparse initializers: a copy of the model but its
    # initializers (written from ``pieces``), its nodes serialised anew
    copy = onnx.ModelProto()
    for fd, value in model.ListFields():
        if fd.name != "graph":
            _copy_field(copy, fd, value)
    copy.graph.SetInParent()
    for fd, value in model.graph.ListFields():
        if fd.name != "initializer":
            _copy_field(copy.graph, fd, value)
    for t in external_tensors(copy):
        relocation.apply(t)
    return copy, pieces, None


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
    written instead of serialising ``model.graph.initializer`` (also when ``model`` has none);
    ``nodes`` and ``value_info``: the same for ``model.graph.node`` and ``model.graph.value_info``."""
    head = onnx.ModelProto()
    for fd, value in model.ListFields():
        if fd.name != "graph":
            _copy_field(head, fd, value)
    chunks = [head.SerializeToString() + unknown_fields(model)]
    if model.HasField("graph") or graph_tail:
        rest = onnx.GraphProto()
        body: list[bytes] = []
        split = {}
        for fd, value in model.graph.ListFields():
            if fd.name in _SPLIT_GRAPH_FIELDS:
                split[fd.name] = (fd, value)
            else:
                _copy_field(rest, fd, value)
        given = {"initializer": initializers, "node": nodes, "value_info": value_info}
        for name in _SPLIT_GRAPH_FIELDS:  # in field-number order, as ListFields gives them
            read = given[name]
            if read is not None:
                body.extend(read)
                continue
            if name not in split:
                continue
            fd, value = split[name]
            tag = varint(fd.number << 3 | 2)
            headers: dict[int, bytes] = {}  # tag + length, by length
            for b in [x.SerializeToString() for x in value]:
                n = len(b)
                h = headers.get(n)
                if h is None:
                    h = headers[n] = tag + varint(n)
                body.append(h)
                body.append(b)
        body.insert(0, rest.SerializeToString() + unknown_fields(model.graph))
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
        try:
            setattr(dst, fd.name, value)
        except UnicodeDecodeError:  # a string field holding bytes that are not UTF-8: written as read
            dst.MergeFromString(varint(fd.number << 3 | 2) + varint(len(value)) + value)


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
