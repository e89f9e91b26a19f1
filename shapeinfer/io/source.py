"""One object for a model's bytes: as they were read, and what of the model is already serialised.

A :class:`Source` goes with a model from where it was read to where it is written. The
writer (:func:`shapeinfer.io.writer.save_model`) asks it where the model came from (external
data, the inputs the output must never replace) and which pieces of the file it need not
serialise again; the passes ask it for the node fields of the bytes the model was parsed from
(:meth:`Source.nodes_read`). Whoever changes the model decides what of it still holds and
makes the Source that says so (``optimize`` makes one for its result).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import onnx

from shapeinfer.io.modelsource import model_dir
from shapeinfer.io.onnxio import LoadedModel
from shapeinfer.io.wire import NodeFields, graph_layout, initializer_views, node_fields, node_views


@dataclass
class Source:
    """Where a model came from and what of it is serialised already.

    - ``path``: the file it was read from (``-``: standard input, None: given in memory). Its
      folder locates the external data; the file is an input the output never replaces
      unless in place.
    - ``loaded``: the file as read (:class:`~shapeinfer.io.onnxio.LoadedModel`), only while no
      tensor of the model has changed: its external tensors are not looked up again and the main
      graph's initializers are written as the bytes read (always so for a model read with
      ``lean=True``, whose large weights were not parsed).
    - ``nodes_as_read``: nor have the main graph's nodes (no subgraph was annotated): they too
      are written as the bytes read.
    - ``node_fields`` / ``value_info_fields``: the model's main-graph nodes / value_info already
      serialised (``GraphProto`` fields, in order), written as they are.
    - ``graph_tail``: serialised ``GraphProto`` fields written at the end of the main graph
      (:func:`~shapeinfer.io.annotate.annotate_for_writing`'s value_info bytes).
    - ``external``: the model's tensors stored as external data, when known without ``loaded``.
    - ``data_inputs``: the files the input model's external data names
      (:func:`shapeinfer.io.external.data_files`) when it named more than the model still does:
      inputs the output never replaces, in place or not.
    """

    path: str | None = None
    loaded: LoadedModel | None = None
    nodes_as_read: bool = False
    node_fields: bytes | None = field(default=None, repr=False)
    value_info_fields: bytes | None = field(default=None, repr=False)
    graph_tail: bytes = field(default=b"", repr=False)
    external: list[onnx.TensorProto] | None = field(default=None, repr=False)
    data_inputs: Sequence[str] = ()
    #: (the model read, the node fields of its bytes), once cut out (:meth:`nodes_read`)
    _nodes_read: tuple[onnx.ModelProto, NodeFields] | None = field(default=None, repr=False)

    @classmethod
    def parsed(cls, path: str | None, model: onnx.ModelProto, data: bytes) -> Source:
        """The source of ``model`` as parsed from ``data`` (read from ``path``) for the passes,
        which ask only for its node fields (:meth:`nodes_read`): those are cut out now, and the
        file's bytes are not kept."""
        nf = node_fields(data)
        return cls(path, _nodes_read=None if nf is None else (model, nf))

    def folder(self) -> str | None:
        """The folder of :attr:`path` (None for a model in memory or read from standard input)."""
        return model_dir(self.path)

    def external_tensors(self) -> list[onnx.TensorProto] | None:
        """The model's tensors stored as external data when known (None: walk the model)."""
        return self.loaded.external if self.loaded is not None else self.external

    def nodes_read(self, model: onnx.ModelProto) -> NodeFields | None:
        """The main-graph node fields of the bytes ``model`` was parsed from
        (:func:`shapeinfer.io.wire.node_fields`), when ``model`` is the model read; else None."""
        if self._nodes_read is None and self.loaded is not None and self.loaded.model is model:
            nf = node_fields(self.loaded.data)
            if nf is not None:
                self._nodes_read = (model, nf)
        read = self._nodes_read
        return read[1] if read is not None and read[0] is model else None

    def serialised(
        self, model: onnx.ModelProto
    ) -> tuple[list[memoryview] | None, list[bytes | memoryview] | None, list[bytes] | None]:
        """The main graph's initializer, node and value_info fields of ``model`` already
        serialised, each None where it must be serialised anew (for
        :func:`shapeinfer.io.writer.model_chunks`)."""
        spans = nodes = None
        loaded = self.loaded
        if loaded is not None:
            layout = loaded.layout if loaded.layout is not None else graph_layout(loaded.data)
            spans = initializer_views(loaded.data, layout, len(model.graph.initializer))
            if spans is None and loaded.lean:  # cannot happen: lean models are made from a layout
                raise RuntimeError("a model read without its weights' data cannot be written without the file's bytes")
            if self.nodes_as_read:
                nodes = node_views(loaded.data, layout, len(model.graph.node))
        if self.node_fields is not None and nodes is None:
            nodes = [self.node_fields]
        value_info = None if self.value_info_fields is None else [self.value_info_fields]
        return spans, nodes, value_info
