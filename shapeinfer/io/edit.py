"""A model read to be rewritten, and what its write keeps of the input: optimize's load and save.

:func:`read_for_editing` reads what :func:`shapeinfer.optimize` takes (a path, a model in
memory, or a file already read as a :class:`~shapeinfer.io.source.Source`) into the ModelProto
the passes change and an :class:`Editing`: where it came from, and what of the input the
written model keeps although the passes drop it (the ``value_info`` entries with their doc
strings and metadata, the declared types, the external data files that are inputs). At the end,
:meth:`Editing.annotate` puts the entries back and annotates the result, and
:meth:`Editing.written` makes the :class:`~shapeinfer.io.source.Source` the writer writes it
with.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import onnx

from shapeinfer.io.annotate import InferredTypes, annotate_serialised, subgraphs_annotated
from shapeinfer.io.entries import SavedEntries, restore_entries, saved_entries
from shapeinfer.io.external import data_files
from shapeinfer.io.modelsource import model_dir, own_copy
from shapeinfer.io.modeltext import all_text_is_utf8, decode_model_text
from shapeinfer.io.onnxio import LoadedModel, load_model_file
from shapeinfer.io.source import Source


@dataclass
class Editing:
    """What the write of a model being rewritten keeps of its input (:func:`read_for_editing`).

    - ``path``: the file it was read from (None in memory), ``folder`` that file's folder;
    - ``source``: the node fields of the bytes the model was parsed from, while it is as parsed
      (:meth:`~shapeinfer.io.source.Source.nodes_read`; None for a model given in memory or
      whose text was decoded);
    - ``inline``: the file stores no tensor as external data;
    - ``data_inputs``: the files its external data names, inputs the write never replaces;
    - ``entries``: its ``value_info`` entries (the passes drop them; :meth:`annotate` puts them back);
    - ``declared``: the types its ``value_info`` and graph outputs declare (the annotation keeps
      what they say that inference leaves open).
    """

    path: str | None = None
    folder: str | None = None
    source: Source | None = None
    inline: bool = False
    data_inputs: list[str] = field(default_factory=list)
    entries: SavedEntries = field(default_factory=SavedEntries)
    declared: dict[str, onnx.TypeProto] = field(default_factory=dict)
    #: set by :meth:`annotate`: a subgraph's entries changed, or the annotation wrote into one
    _nodes_changed: bool = False
    _value_info_fields: bytes | None = None

    def annotate(self, model: onnx.ModelProto, result: InferredTypes, *, keep_declared: bool = False) -> None:
        """Annotate ``model``, the passes' result that ``result`` inferred (in place): the input's
        ``value_info`` entries back into the graphs that still define their tensors
        (:func:`~shapeinfer.io.entries.restore_entries`), then the inferred types merged with
        :attr:`declared` (:func:`~shapeinfer.io.annotate.annotate_serialised`; ``keep_declared``: no
        new entry, and the declared types inference does not contradict kept as they are)."""
        moved = restore_entries(model, self.entries)
        self._value_info_fields = annotate_serialised(result, self.declared, keep_declared=keep_declared)
        self._nodes_changed = moved or subgraphs_annotated(result)

    def written(self, *, changed: bool, node_fields: Callable[[], bytes | None]) -> Source:
        """The Source the result is written with, after :meth:`annotate`: the main graph's
        value_info and nodes as serialised already, unless ``changed`` (something rewrote the
        model after :meth:`annotate`) or the annotation changed nodes; ``node_fields`` gives
        the nodes' serialised fields when they may be used."""
        nodes = None if changed or self._nodes_changed else node_fields()
        return Source(
            self.path,
            node_fields=nodes,
            value_info_fields=None if changed else self._value_info_fields,
            external=[] if self.inline else None,  # (the passes store no new tensor externally)
            data_inputs=self.data_inputs,
        )


def read_for_editing(model: object) -> tuple[onnx.ModelProto, Editing]:
    """``model`` (a path, a model in memory as :func:`~shapeinfer.io.modelsource.own_copy`
    takes, or a :class:`~shapeinfer.io.source.Source` of a file read in full, whose model is
    handed over: not read again, not copied) read for the passes: a ModelProto of its own (a
    copy of one given) whose text fields are all valid UTF-8 (names that are not are escaped
    alike everywhere: :func:`~shapeinfer.io.modeltext.decode_model_text`), and its
    :class:`Editing` (which does not hold the model: the passes replace it). TypeError for
    what is no model, :class:`~shapeinfer.io.onnxio.ModelLoadError` for a file that is none,
    :class:`~shapeinfer.io.external.ExternalDataInvalid` for an external-data entry that is not
    UTF-8 (escaped, it would name another file)."""
    path = folder = data = None
    external: list[onnx.TensorProto] | None = None
    loaded: LoadedModel | None = None
    if isinstance(model, Source) and model.loaded is not None and not model.loaded.lean and model.path is not None:
        path, loaded = model.path, model.loaded
    else:
        m = own_copy(model)  # TypeError for what is no model
        if m is None:
            path = os.fspath(model)
            loaded = load_model_file(path)
        else:
            m = decode_model_text(m)
    if loaded is not None:
        folder, external = model_dir(path), loaded.external
        if all_text_is_utf8(loaded.model, loaded.data):
            m, data = loaded.model, loaded.data
        else:
            m = decode_model_text(loaded.model, loaded.data)
    declared = {
        vi.name: onnx.TypeProto.FromString(vi.type.SerializeToString())
        for vi in list(m.graph.value_info) + list(m.graph.output)
    }
    return m, Editing(
        path=path,
        folder=folder,
        source=None if data is None else Source.parsed(path, m, data),
        inline=external == [],
        data_inputs=data_files(external, folder) if external else [],
        entries=saved_entries(m),
        declared=declared,
    )
