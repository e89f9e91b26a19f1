"""One model from load to write: :func:`open` gives a :class:`Document`, and every front end
goes through it (the command's ``infer``, ``optimize``, ``lint --fix``, ``verify`` and
``profile``, :func:`shapeinfer.infer`, :func:`shapeinfer.infer_shapes`,
:func:`shapeinfer.optimize`, the drop-ins of :mod:`shapeinfer.compat`, the graphsurgeon and
networkx interop).

::

    doc = shapeinfer.open("model.onnx")
    result = doc.infer(bind={"batch": 1})  # the checks, the engine, the G015 of a binding
    doc.write("out.onnx")                   # the model with those shapes, by the write contract
    shapeinfer.open("model.onnx").optimize(passes=["fold-shapes"]).write("opt.onnx")

The contract:

- **The source.** A Document owns what it was opened from: a path (``-``: standard input),
  the bytes of a model, a ModelProto, an ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph``
  (:mod:`shapeinfer.io.modelsource`; anything else is a TypeError at :func:`open`). A path is
  read once, at :func:`open` (a file that is no model raises
  :class:`~shapeinfer.io.onnxio.ModelLoadError` there), and never again: a model it needs afresh
  is parsed again from the bytes read. A model in memory is converted when first needed. The
  caller's ModelProto is never changed: whatever would change it works on a copy.
- **The folder and the data files.** :attr:`Document.folder` locates external data (the
  file's folder, or ``base_dir``); :attr:`Document.data_files` are the files the model's
  external data names there, inputs no write ever replaces.
- **The lean load.** ``open(path, lean=True)`` parses the main graph's large initializers
  without their data (inference never reads it) and :meth:`Document.write` writes them, and
  every node nothing changed, as the bytes read (the command line's ``infer`` and ``-o``).
  :attr:`Document.model` and :meth:`Document.annotated` parse the bytes read in full then.
- **Inference** (:meth:`Document.infer`): ``bind``, ``input_shapes`` and ``dim_ranges`` are
  checked by :mod:`shapeinfer.inference.bindings` (values first, then against the model, before
  anything is inferred: :class:`~shapeinfer.inference.bindings.BindError`), the engine runs,
  and where a bound run has errors the values no input can have are named (G015).
- **Annotation** (:meth:`Document.annotated`): the model with the inferred types in
  ``value_info`` and graph outputs, the bound values written into the graph inputs; refused
  (:class:`~shapeinfer.inference.bindings.BindError`) when no input asked about satisfies the
  guards (G015).
- **The one write** (:meth:`Document.write`): :func:`shapeinfer.io.writer.save_model` with the
  Document's :class:`~shapeinfer.io.source.Source`: atomic, external data kept as references
  (copied beside an output in another folder, or gathered under ``external_data``), never into
  a file the run did not create, never a model whose data file is missing unless ``force``
  (:class:`~shapeinfer.io.userfiles.WriteRefused` for either, nothing written).
  :meth:`Document.check_write` makes the same checks without writing. What is written: the
  model annotated with the last inference (inferring first when there was none); for a
  Document made by :meth:`Document.optimize`, its model as the passes left it (annotated).

Layering: this module imports io, inference and passes; analysis (``verify`` takes a Document),
lint (``--fix``), the API, the drop-ins and the command line import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import onnx

from shapeinfer.inference.bindings import (
    BIND,
    DIM_RANGES,
    INPUT_SHAPES,
    Unsatisfiable,
    check_bind_values,
    check_input_shapes,
    check_model,
    check_ranges,
    pinned,
    specialise_inputs,
)
from shapeinfer.inference.engine import Result, binding_contradictions
from shapeinfer.inference.engine import infer as _infer
from shapeinfer.inference.policy import InferencePolicy
from shapeinfer.io.annotate import annotate, annotate_for_writing, subgraphs_annotated
from shapeinfer.io.external import data_files
from shapeinfer.io.modelsource import ModelLike, in_memory, model_dir, read_if_path
from shapeinfer.io.onnxio import LoadedModel, dim_from_proto, loaded_from_bytes
from shapeinfer.io.source import Source
from shapeinfer.io.userfiles import STDIO, check_stdout, output_target, show
from shapeinfer.io.writer import plan_write, save_model
from shapeinfer.ir.queries import default_opset
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import CONTRADICTION, lone_symbol

if TYPE_CHECKING:
    from shapeinfer.passes import OptimizeReport

__all__ = ["READINGS", "Document", "check_output", "check_passes", "open"]

#: How inference reads a model (:meth:`Document.infer`'s ``reading``): shapeinfer's own
#: reading, or the one a drop-in answers for (onnx's and onnxruntime's tools read an
#: initializer that is also a graph input as a constant; onnxruntime's tool counts a negative
#: Slice index within a symbolic dim). See :class:`shapeinfer.inference.policy.InferencePolicy`.
READINGS: dict[str, InferencePolicy] = {
    "shapeinfer": InferencePolicy(),
    "onnx": InferencePolicy(defaults_as_constants=True),
    "onnxruntime": InferencePolicy(defaults_as_constants=True, onnxruntime_conventions=True),
}


def open(model: ModelLike, *, base_dir: str | None = None, lean: bool = False) -> Document:
    """A :class:`Document` of ``model``: a path (``str`` or ``os.PathLike``; ``-`` is standard
    input), the bytes of a serialised model, an ``onnx.ModelProto`` (never modified), an
    ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph``.

    A path is read now (:class:`~shapeinfer.io.onnxio.ModelLoadError` for a file that is no
    model, :class:`~shapeinfer.io.external.ExternalDataError` for external data outside its
    folder); a model in memory is converted when first needed. ``base_dir``: the folder
    external data is read from (default: the file's). ``lean``: read a file's large weights
    without their data (see the module docstring). TypeError for anything that is no model.
    """
    loaded = read_if_path(model, lean=lean)
    if loaded is not None:
        return Document(path=os.fspath(model), base_dir=base_dir, lean=lean, loaded=loaded)
    return Document(base_dir=base_dir, given=model)


def check_output(out: str | None, model: str, *, in_place: bool = False) -> None:
    """Refuse, before anything is read, an output path a write of the model at path ``model``
    would refuse (a missing folder, a folder, the input itself without ``in_place``, a symlink
    leaving its folder, standard output that is the model's file):
    :class:`~shapeinfer.io.userfiles.UserFileError`. None passes."""
    if out is None:
        return
    if out == STDIO:
        check_stdout([model], what="model")
        return
    output_target(out, inputs=[model], allow_inputs=in_place, what="model")


def check_passes(passes: Sequence[str] | None) -> None:
    """Refuse, before anything is read, a pass name :meth:`Document.optimize` would refuse
    (:class:`~shapeinfer.passes.OptimizeError` naming it and the passes there are)."""
    from shapeinfer.passes.registry import selected_passes

    selected_passes(passes)


class Document:
    """One model from load to write (see the module docstring for the contract).

    Made by :func:`open`, :meth:`adopt` or :meth:`optimize`; not built
    directly. ``path`` is the file it was read from (None in memory), ``folder`` where its
    external data is read, ``result`` the last inference (None before :meth:`infer`),
    ``report`` what :meth:`optimize` did (for a Document it made).
    """

    def __init__(
        self,
        *,
        path: str | None = None,
        base_dir: str | None = None,
        lean: bool = False,
        loaded: LoadedModel | None = None,
        given: Any = None,
        proto: onnx.ModelProto | None = None,
        made: Source | None = None,
        report: OptimizeReport | None = None,
    ) -> None:
        self.path = path
        self.folder: str | None = base_dir or model_dir(path)
        self.lean = lean and loaded is not None
        self.report = report
        self.result: Result | None = None
        self._base_dir = base_dir
        self._loaded = loaded  # the file as read (its bytes parse again into a fresh model)
        self._given = given  # a model in memory as given (converted again when needed)
        #: the model the next inference reads, unchanged since it was read (None: read again)
        self._proto = loaded.model if loaded is not None else proto
        #: whether ``_proto`` is someone else's (the caller's, handed out): never changed here
        self._shared = proto is not None
        self._made = made  # a model made by optimize: written as it is, with this Source
        #: (result, the LoadedModel its model is) of the last inference of a model of this
        #: Document's own that nothing changed since: annotated in place, not copied
        self._last: tuple[Result, LoadedModel | None] | None = None
        #: (result, name_fresh, model, unmerged value_info tail, its LoadedModel): the last annotation
        self._annotation: tuple[Result, bool, onnx.ModelProto, bytes, LoadedModel | None] | None = None
        self._full: onnx.ModelProto | None = None  # a lean file parsed in full (``model``)
        #: what the last annotation (:meth:`annotated`, :meth:`write`) left out so that the
        #: model loads wherever it loaded before, one line each (empty: nothing)
        self.notes: list[str] = []
        #: what the last :meth:`write` did besides writing the model, one line each (a data file
        #: of the output's folder it reads as it is)
        self.write_notes: list[str] = []

    # ------------------------------------------------------------------ making one

    @classmethod
    def adopt(cls, model: onnx.ModelProto, *, path: str | None = None, base_dir: str | None = None) -> Document:
        """The Document of ``model``, a ModelProto handed over (the drop-ins' own copy, changed
        before inference as the original tool reads it): it is inferred and annotated in place.
        ``path``: the file it was read from, for :meth:`write` (its folder and data files);
        once :meth:`annotated` or :meth:`write` has changed it, nothing reads it afresh."""
        doc = cls(path=path, base_dir=base_dir, proto=model)
        doc._shared = False
        return doc

    # ------------------------------------------------------------------ what it is

    @property
    def model(self) -> onnx.ModelProto:
        """The model, weights included: the caller's own ModelProto for one given, the passes'
        result for a Document :meth:`optimize` made; else a ModelProto of this Document's that is
        the caller's from now on (inference reads a fresh one; a lean file is parsed in full)."""
        if self.lean:
            if self._full is None:
                self._full = loaded_from_bytes(self._loaded.data, self.path).model
            return self._full
        proto = self._pristine()
        if not self._shared:
            self._shared = True
            if self._last is not None and self._last[0].model is proto:
                self._last = None
        return proto

    @property
    def name(self) -> str:
        """The model's name in reports: its path as given, else its graph's name (``<model>``)."""
        if self.path is not None:
            return self.path
        return self._pristine().graph.name or "<model>"

    @property
    def node_count(self) -> int:
        """The main graph's node count, as read (no weight is loaded for it)."""
        return len(self._pristine().graph.node)

    @property
    def opset(self) -> int | None:
        """The default-domain opset the model imports, as read; None when it imports none."""
        return default_opset(self._pristine())

    @property
    def data_files(self) -> list[str]:
        """The files the model's external data names in :attr:`folder` (absolute paths), as read:
        inputs a write never replaces."""
        if self._made is not None:
            return list(self._made.data_inputs)
        if self._loaded is None or not self._loaded.external:
            return []
        return data_files(self._loaded.external, self.folder)

    @property
    def has_external_data(self) -> bool:
        """Whether the file read stores tensors as external data (False for a model in memory:
        not looked for)."""
        if self._made is not None:
            return bool(self._made.data_inputs) or bool(self._made.external_tensors())
        return self._loaded is not None and bool(self._loaded.external)

    def _pristine(self) -> onnx.ModelProto:
        """The model the next inference reads, as it was read (parsed again, or converted again,
        when the last one was changed)."""
        if self._proto is None:
            if self._loaded is not None:
                self._loaded = loaded_from_bytes(self._loaded.data, self.path, lean=self.lean)
                self._proto, self._shared = self._loaded.model, False
            elif self._given is not None:
                self._proto, self._shared = in_memory(self._given)
            else:
                raise ValueError("this Document's model was changed by annotated() or write(): open the model again")
        return self._proto

    def _loaded_of(self, proto: onnx.ModelProto) -> LoadedModel | None:
        loaded = self._loaded
        return loaded if loaded is not None and loaded.model is proto else None

    # ------------------------------------------------------------------ inference

    def check(
        self,
        *,
        input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
        bind: Mapping[str, int] | None = None,
        dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    ) -> tuple[dict[str, list] | None, dict[str, int] | None, dict[str, tuple[int, int | None]] | None]:
        """The entries :meth:`infer` takes, checked (:mod:`shapeinfer.inference.bindings`: values,
        then against the model) without inferring: BindError for the first that cannot be
        right. Returns them normalised (input shapes as dims, ranges as tuples), None where
        not given."""
        bind = check_bind_values(bind) if bind else None
        ranges = check_ranges(dim_ranges) if dim_ranges else None
        shapes = check_input_shapes(input_shapes) if input_shapes else None
        check_model(self._pristine(), shapes, bind, ranges)
        return shapes, bind, ranges

    def infer(
        self,
        *,
        input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
        bind: Mapping[str, int] | None = None,
        dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
        timeout: float | None = None,
        reading: str = "shapeinfer",
    ) -> Result:
        """Infer every tensor's facts; the result is also :attr:`result` (what :meth:`write`
        writes and :meth:`annotated` annotates by default).

        ``input_shapes`` overrides graph inputs' dims (dims, or the command line's text
        ``"1,seq"``); ``bind`` specialises input symbols to ints of at least 1; ``dim_ranges``
        gives input symbols ranges (``{"seq": (1, 512)}``). All are checked first
        (:meth:`check`). ``timeout`` (seconds): :class:`~shapeinfer.inference.engine.InferenceTimeout`
        past it. ``reading``: one of :data:`READINGS` (the drop-ins'). When a bound run has
        errors, the bound values no input can have are named as G015 errors too.
        ``result.model`` is the ModelProto inferred: the caller's own for a ModelProto given
        without ``input_shapes`` (not modified), else one of this Document's.
        """
        policy = READINGS.get(reading)
        if policy is None:
            raise ValueError(f"reading must be one of {', '.join(READINGS)}, not {reading!r}")
        shapes, bind, ranges = self.check(input_shapes=input_shapes, bind=bind, dim_ranges=dim_ranges)
        proto = self._pristine()
        shared = self._shared
        if shapes and shared:  # the overrides are written into the model inferred: never someone else's
            proto = _copy(proto)
            shared = False
        loaded = self._loaded_of(proto)
        declared_inputs = [_copy(vi) for vi in proto.graph.input] if shapes else None
        result = _infer(
            proto,
            base_dir=self.folder,
            input_shapes=shapes,
            bind=bind,
            timeout=timeout,
            dim_ranges=ranges,
            policy=policy,
        )
        if shapes and proto is self._proto:
            self._proto = None  # its graph inputs are overridden: the next run reads the model afresh
        if any(d.severity == "error" for d in result.diagnostics):
            # a clash at a node may be a value no input can have: say so (G015)
            result.diagnostics.extend(self._contradictions(proto, declared_inputs, shapes, bind, ranges, timeout))
        self.result = result
        self._last = None if shared else (result, loaded)
        return result

    def _contradictions(self, proto, declared_inputs, shapes, bind, ranges, timeout) -> list:
        """G015 errors for the values asked about that no input can have: ``bind``'s, a range of
        one value's (``h=65:65``), and the sizes ``shapes`` gives the symbols the graph inputs
        declared (``x=1,3,65,97`` for ``[batch, 3, height, width]``), each checked against the
        guards of the model inferred without them (:func:`binding_contradictions`). ``proto``
        is the model inferred, its graph inputs overridden by ``shapes`` (``declared_inputs``:
        as they were read)."""
        values = pinned(bind, ranges)
        given = _shape_binding(declared_inputs, shapes) if shapes else None  # (None: no binding)
        if given and bind and any(bind.get(s, v) != v for s, v in given.items()):
            given = None  # the overrides give a symbol another size than --bind: they are no binding of it
        values.update(given or {})
        if not values:
            return []
        if given:  # the model as read, where those symbols have guards
            proto = _copy(proto)
            del proto.graph.input[:]
            proto.graph.input.extend(declared_inputs)
        free = {s: r for s, r in (ranges or {}).items() if s not in values}
        return binding_contradictions(proto, values, base_dir=self.folder, dim_ranges=free or None, timeout=timeout)

    def _result(self, result: Result | None) -> Result:
        if result is not None:
            return result
        return self.result if self.result is not None else self.infer()

    @staticmethod
    def _refuse_contradicted(result: Result) -> None:
        clashes = [d.message for d in result.diagnostics if d.code == CONTRADICTION]
        if clashes:  # its shapes hold for no input it was asked about: nothing to annotate
            kind = BIND if result.bind else DIM_RANGES if result.dim_ranges else INPUT_SHAPES
            raise Unsatisfiable("", "; ".join(clashes), kind)

    def annotated(
        self, result: Result | None = None, *, name_fresh: bool = False, refuse_contradictions: bool = True
    ) -> onnx.ModelProto:
        """The model with ``result``'s types and dims in ``value_info`` and graph outputs
        (:func:`shapeinfer.io.annotate.annotate`), what :func:`shapeinfer.infer_shapes`
        returns; ``result`` defaults to :attr:`result` (inferring now when there is none).
        With a binding, the graph inputs carry the bound values too. When no input asked about
        satisfies the model's guards (G015), BindError names the values and guards, unless
        ``refuse_contradictions`` is False (the drop-ins, which answer as the originals do).
        ``name_fresh``: fresh symbols written named (the drop-ins'). The model returned is the
        caller's: this Document's own, annotated in place, when nothing else holds it (a copy
        otherwise; a lean file is parsed in full); asked again for the same result, the same
        object.
        """
        result = self._result(result)
        if refuse_contradictions:
            self._refuse_contradicted(result)
        return self._annotate(result, name_fresh=name_fresh, for_writing=False)[0]

    def _annotate(
        self, result: Result, *, name_fresh: bool = False, for_writing: bool = False
    ) -> tuple[onnx.ModelProto, bytes, LoadedModel | None]:
        """``result``'s model annotated: ``(model, value_info tail, LoadedModel)``. For writing,
        the new main-graph ``value_info`` entries may stay serialised in the tail
        (:func:`~shapeinfer.io.annotate.annotate_for_writing`), and the LoadedModel is
        the file as read when the model is its parse."""
        cached = self._annotation
        if cached is not None and cached[0] is result and cached[1] == name_fresh:
            _, _, model, tail, loaded = cached
            if for_writing or loaded is None or not self.lean:
                if tail and not for_writing:
                    model.graph.MergeFromString(tail)
                    tail = b""
                    self._annotation = (result, name_fresh, model, tail, loaded)
                return model, tail, loaded
            # a lean parse annotated for writing has no weights: a full parse is annotated below
        last = self._last
        if last is not None and last[0] is result and (for_writing or not self.lean):
            model, loaded, work = result.model, last[1], result
            self._last = None  # changed now: annotated once
            if model is self._proto:
                self._proto = None
        else:
            model, loaded = self._copy_of(result.model), None
            work = replace(result, model=model)
        # the drop-ins answer as the originals do; else what is annotated loads where the model does
        original = _copy(model) if not name_fresh and _may_not_load(result) else None
        tail = b""
        if for_writing and not name_fresh:
            _, tail = annotate_for_writing(work)
        else:
            annotate(work, name_fresh=name_fresh)
        # the graph inputs say what the value_info was inferred at: a binding, a range of one value
        given = pinned(result.bind, result.dim_ranges)
        if given:
            specialise_inputs(model, given)
        self.notes = []
        if original is not None:
            from shapeinfer.passes.load_check import loadable_annotation  # (rarely: not on every write's path)

            tail, self.notes = loadable_annotation(original, model, tail, base_dir=self.folder)
        self._annotation = (result, name_fresh, model, tail, loaded)
        return model, tail, loaded

    def _copy_of(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """A full copy of ``model``, a model of this Document (a lean parse: the file parsed in
        full, with ``model``'s graph inputs, which an inference may have overridden)."""
        if self.lean:
            full = loaded_from_bytes(self._loaded.data, self.path).model
            del full.graph.input[:]
            full.graph.input.extend(model.graph.input)
            return full
        return _copy(model)

    # ------------------------------------------------------------------ rewriting

    def optimize(
        self,
        *,
        passes: Sequence[str] | None = None,
        bind: Mapping[str, int] | None = None,
        target_opset: int | None = None,
        timeout: float | None = None,
        max_fold_growth: int | None = None,
        keep_alive: list | None = None,
        runtime_check: bool = True,
        all_shapes: bool = False,
    ) -> Document:
        """The Document of the model optimized (:func:`shapeinfer.passes.optimize_with_report`,
        whose arguments these are): its :attr:`model` is the passes' result, annotated, its
        :attr:`report` what each pass did, and its :meth:`write` writes that model as it is
        (with what of it is serialised already). This Document is unchanged."""
        from shapeinfer.passes import MAX_FOLD_GROWTH, optimize_with_report

        model, report = optimize_with_report(
            self._for_passes(),
            passes=passes,
            bind=bind,
            target_opset=target_opset,
            base_dir=self._base_dir,
            timeout=timeout,
            keep_alive=keep_alive,
            max_fold_growth=MAX_FOLD_GROWTH if max_fold_growth is None else max_fold_growth,
            runtime_check=runtime_check,
            all_shapes=all_shapes,
        )
        return Document(path=self.path, base_dir=self._base_dir, proto=model, made=report.source, report=report)

    def _for_passes(self):
        """What the passes get: the file as read in full (its model handed over when nothing here
        holds it: it is read afresh when needed again), else the model (the passes copy a
        ModelProto, convert anything else)."""
        loaded = self._loaded
        if loaded is None:
            return self._proto if self._proto is not None else self._given
        if self.lean or self._shared or self.result is not None or self._proto is not loaded.model:
            loaded = loaded_from_bytes(loaded.data, self.path)
        else:
            self._proto = None  # handed over
        return Source(self.path, loaded)

    # ------------------------------------------------------------------ writing

    def _write_plan(self, model: onnx.ModelProto | None) -> tuple[onnx.ModelProto, Source]:
        """The model a write would write and its Source, as far as known before inferring."""
        if model is not None:
            return model, Source(self.path, data_inputs=self.data_files)
        if self._made is not None:
            return self._proto, self._made
        if self._loaded is not None:
            return self._loaded.model, Source(self.path, self._loaded)
        return self._pristine(), Source(self.path)

    def check_write(
        self,
        out: str,
        *,
        in_place: bool = False,
        force: bool = False,
        external_data: str | None = None,
        model: onnx.ModelProto | None = None,
    ) -> None:
        """Every refusal :meth:`write` makes (same arguments), without writing or inferring:
        :class:`~shapeinfer.io.userfiles.WriteRefused` (a data file name taken in the output's
        folder, a data file missing), :class:`~shapeinfer.io.userfiles.UserFileError`."""
        written, source = self._write_plan(model)
        plan_write(written, out, source, in_place=in_place, data_name=external_data, allow_missing_data=force)

    def write(
        self,
        out: str,
        *,
        in_place: bool = False,
        force: bool = False,
        external_data: str | None = None,
        model: onnx.ModelProto | None = None,
    ) -> None:
        """Write the model to ``out`` (``-``: standard output): the one write of every front end.

        What is written: the model annotated with :attr:`result` (inferring now when there is
        none; :class:`~shapeinfer.inference.bindings.Unsatisfiable` when no input asked about
        satisfies the guards, G015), for a Document
        :meth:`optimize` made its model as made, or ``model`` when given (a model made from
        this one, such as a drop-in's annotation), each with this Document's source (its folder,
        its external data, the files never replaced). ``in_place``: ``out`` may be the file read.
        ``external_data``: gather the external data into one file of that name beside ``out``
        (references rewritten). ``force``: write a model whose external data file is missing.
        The write is atomic (:func:`shapeinfer.io.writer.save_model`); WriteRefused,
        UserFileError or :class:`~shapeinfer.io.external.ExternalDataError` mean nothing was
        written.
        """
        if model is None and self._made is None:
            result = self._result(None)
            self._refuse_contradicted(result)
            model, tail, loaded = self._annotate(result, for_writing=True)
            if not self.lean:
                loaded = None  # the file's bytes are written as read only after a lean load
            nodes_as_read = loaded is not None and not subgraphs_annotated(result)
            source = Source(self.path, loaded, nodes_as_read=nodes_as_read, graph_tail=tail)
        else:
            model, source = self._write_plan(model)
        self.write_notes = []
        plan = save_model(model, out, source, in_place=in_place, data_name=external_data, allow_missing_data=force)
        self.write_notes = [
            f"{show(p)} already holds this external data, byte for byte: the model written reads it"
            " (the file is shared with the model written there before)"
            for p in plan.reused
        ]


def _may_not_load(result: Result) -> bool:
    """Whether annotating ``result``'s model may make onnxruntime refuse a model it loads: the
    graph inputs specialised to a binding or overridden (``input_shapes``: the overridden model
    is what the annotation is checked against); a range of one value (``a=1:1``, a binding too);
    ranges where subgraphs are typed (a range decides which If branch or how many Loop
    iterations run, and a branch's or a body's types may then contradict the other); and what
    :meth:`Result.written_types_may_not_load` names at any sizes (an op that fails, a type left
    out, a small initializer stored as external data). Otherwise the types written are the ones
    onnxruntime's own inference would reach or leave open, and nothing is checked (nor paid
    for)."""
    ranges = result.dim_ranges
    if result.input_shapes or pinned(result.bind, ranges):
        return True
    if ranges and any(path != "main" for path in result.graph_facts):
        return True
    return result.written_types_may_not_load()


def _shape_binding(
    declared: Sequence[onnx.ValueInfoProto], shapes: Mapping[str, Sequence[D.Dim]]
) -> dict[str, int] | None:
    """The sizes ``shapes`` (input-shape overrides) give the symbols the graph inputs
    ``declared``: ``{height: 65}`` for ``x=1,3,65,97`` over ``[batch, 3, height, width]``; None
    when the overrides are no such binding (a declared number or expression changed, a symbol
    given two sizes, a dim given as a symbol)."""
    out: dict[str, int] = {}
    for vi in declared:
        dims = shapes.get(vi.name)
        if dims is None:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.HasField("shape") or len(tt.shape.dim) != len(dims):
            return None
        for d, v in zip(tt.shape.dim, dims):
            x = dim_from_proto(d)
            if type(v) is not int or x is None:
                return None
            if d.HasField("dim_value"):
                if x != v:
                    return None
                continue
            if lone_symbol(x) != d.dim_param or out.setdefault(d.dim_param, v) != v:
                return None  # an expression, or a symbol given two sizes
    return out


M = TypeVar("M")  # a protobuf message


def _copy(message: M) -> M:
    c = type(message)()
    c.CopyFrom(message)
    return c
