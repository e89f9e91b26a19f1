"""onnx-graphsurgeon interop: symbolic shapes on a ``gs.Graph``'s Variables, in place.

Needs the ``graphsurgeon`` extra (``pip install -e '.[graphsurgeon]'`` in a checkout); this
module imports onnx_graphsurgeon, nothing else in shapeinfer does (``shapeinfer.infer`` and
``shapeinfer.optimize`` take a ``gs.Graph`` directly, without importing the package).

::

    import onnx, onnx_graphsurgeon as gs
    from shapeinfer.graphsurgeon import annotate

    graph = gs.import_onnx(onnx.load("model.onnx"))
    result = annotate(graph)  # every Variable now has dtype and shape
    graph.outputs[0].shape    # ['batch', 'seq', 64]; expressions as text: '2*seq', 'seq + 1'

The types written are the ones ``shapeinfer MODEL -o OUT`` writes (an int for a known dim, the
expression's text for a symbolic one, None for a dim nobody knows), read the way
``gs.import_onnx`` reads them, so ``annotate(gs.import_onnx(m))`` leaves every Variable as
``gs.import_onnx`` of ``-o``'s model has it. Where inference learns nothing of a tensor and
nothing is declared, its Variable stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import onnx

from shapeinfer.base.extras import require
from shapeinfer.document import open as open_model
from shapeinfer.symbolic import dims as D

gs = require("onnx_graphsurgeon", "graphsurgeon", "onnx-graphsurgeon", "shapeinfer.graphsurgeon")
OnnxImporter = require(
    "onnx_graphsurgeon.importers.onnx_importer", "graphsurgeon", "onnx-graphsurgeon", "shapeinfer.graphsurgeon"
).OnnxImporter

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result

__all__ = ["annotate"]


def annotate(
    graph: gs.Graph,
    *,
    input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
    bind: Mapping[str, int] | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    timeout: float | None = None,
) -> Result:
    """Infer ``graph``'s shapes and write each Variable's ``dtype``, ``shape`` and ``type`` in place.

    Every Variable a graph defines (its inputs, its nodes' outputs), in the main graph and in
    every subgraph inference reached (If branches, Loop and Scan bodies), gets the type
    ``shapeinfer -o`` writes for it: ``shape`` a list of ints (known dims), strings (the
    expression text of symbolic dims, ``"2*seq"``) and None (unknown dims), or None for an
    unknown rank; ``dtype`` as ``gs.import_onnx`` gives it (a NumPy dtype, or the ONNX enum
    for types NumPy lacks). A Variable inference learned nothing of keeps what it had.
    Constants and the graph's structure are not touched.

    The keywords are :func:`shapeinfer.infer`'s: ``input_shapes`` and ``bind`` change the graph
    inputs' types too (as ``-o --input-shape`` / ``--bind`` write them). Returns the inference
    :class:`~shapeinfer.inference.engine.Result` (``guards()``, ``diagnostics``, ``dims(name)``); its
    ``model`` is the exported ModelProto, annotated as ``-o`` writes it. Raises what
    :func:`shapeinfer.infer` raises (:class:`~shapeinfer.inference.bindings.BindError` for a binding that
    cannot be right), before any Variable is changed.
    """
    if not isinstance(graph, gs.Graph):
        raise TypeError(f"annotate takes an onnx_graphsurgeon.Graph, not {type(graph).__qualname__}")
    doc = open_model(graph)  # exported when inferred, after the entries' own checks
    result = doc.infer(input_shapes=input_shapes, bind=bind, dim_ranges=dim_ranges, timeout=timeout)
    model = doc.annotated(result, refuse_contradictions=False)  # result.model, annotated as -o writes it
    for g, proto in _graph_pairs(graph, model.graph):
        _write(g, proto)
    return result


def _graph_pairs(graph: gs.Graph, proto: onnx.GraphProto) -> Iterator[tuple[gs.Graph, onnx.GraphProto]]:
    """``graph`` with the GraphProto exported from it, then each subgraph with its own, parents
    first (the export writes a graph's nodes in ``graph.nodes`` order, attributes by name)."""
    yield graph, proto
    for node, node_proto in zip(graph.nodes, proto.node):
        protos = {a.name: a for a in node_proto.attribute}
        for key, value in node.attrs.items():
            a = protos.get(key)
            if a is None:
                continue
            if isinstance(value, gs.Graph) and a.type == onnx.AttributeProto.GRAPH:
                yield from _graph_pairs(value, a.g)
            elif isinstance(value, (list, tuple)) and a.type == onnx.AttributeProto.GRAPHS:
                for sub, sub_proto in zip(value, a.graphs):
                    if isinstance(sub, gs.Graph):
                        yield from _graph_pairs(sub, sub_proto)


def _write(graph: gs.Graph, proto: onnx.GraphProto) -> None:
    """Give the Variables ``graph`` defines the types its annotated export declares for them.

    Only the graph that defines a tensor speaks for it: a subgraph's export also declares the
    outer tensors it reads, as they were before inference."""
    declared = {vi.name: vi for vi in (*proto.input, *proto.output, *proto.value_info)}
    defined = [*graph.inputs, *(t for node in graph.nodes for t in node.outputs)]
    for t in defined:
        if not isinstance(t, gs.Variable) or not t.name:
            continue
        vi = declared.get(t.name)
        if vi is None or vi.type.WhichOneof("value") is None:
            continue
        read = OnnxImporter.import_tensor(vi)  # exactly what gs.import_onnx makes of the type
        t.dtype, t.shape, t.type = read.dtype, read.shape, read.type
