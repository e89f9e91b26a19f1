"""The model as the passes edit it: nodes and values with producer and reader links.

- :mod:`shapeinfer.ir.graph`: the IR (:class:`~shapeinfer.ir.graph.GraphModel`, ``Graph``,
  ``Node``, ``Tensor``, ``Constant``), its import from a ModelProto and its link edits;
- :mod:`shapeinfer.ir.queries`: read-only walks over it;
- :mod:`shapeinfer.ir.export`: writing it back as a ModelProto, copying the serialised fields of
  every node left alone.

It sits above :mod:`shapeinfer.io` (every protobuf conversion it needs is io's) and below
inference, so that every layer above may read it.
"""
