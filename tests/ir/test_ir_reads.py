"""The optimize index built from what inference read of each node (``infer(record_reads=True)``,
``GraphModel(reads=...)``) is the index built from the protobuf: same nodes, links, export."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from support.common import model_path

from shapeinfer.inference.engine import infer
from shapeinfer.ir.export import export_model
from shapeinfer.ir.graph import GraphModel
from shapeinfer.passes import optimize_with_report


def _unsorted_model() -> onnx.ModelProto:
    """Nodes out of order (the walk restarts in topological order), an unnamed optional output
    and an empty optional input, a custom domain."""
    nodes = [
        helper.make_node("Relu", ["m"], ["y"], name="late"),
        helper.make_node("Dropout", ["x"], ["m", ""], name="early"),
        helper.make_node("Clip", ["y", "", "hi"], ["z"], name="clip"),
        helper.make_node("Shape", ["z"], ["s"], name="shape"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 4])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, None)],
        [helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _shape(gm: GraphModel) -> list:
    return [
        (n.op, n.name, n.domain, [t.name for t in n.inputs], [t.name for t in n.outputs], n.orig)
        for n in gm.graph.nodes
    ]


@pytest.mark.parametrize("make", [_unsorted_model, lambda: onnx.load(str(model_path("llama_dynamo")))])
def test_reads_are_the_node_fields_and_give_the_same_index(make):
    m = make()
    res = infer(m, record_reads=True)
    assert res.node_reads is not None and len(res.node_reads) == len(m.graph.node)
    for r, p in zip(res.node_reads, m.graph.node):
        assert r == (p.op_type, p.domain, list(p.input), list(p.output))
    assert infer(m).node_reads is None  # only when asked
    plain, from_reads = GraphModel(m), GraphModel(m, reads=res.node_reads)
    assert _shape(from_reads) == _shape(plain)
    for a, b in zip(plain.graph.nodes, from_reads.graph.nodes):  # the same tensors link them
        assert [len(t.outputs) for t in a.inputs] == [len(t.outputs) for t in b.inputs]
    assert export_model(from_reads).SerializeToString() == export_model(plain).SerializeToString()


def test_reads_of_a_different_length_are_ignored():
    m = _unsorted_model()
    reads = infer(m, record_reads=True).node_reads
    assert _shape(GraphModel(m, reads=reads[:-1])) == _shape(GraphModel(m))


@pytest.mark.parametrize("name", ["gpt2_ts", "llama_ts"])
def test_optimize_indexes_its_input_from_the_first_inference(name, monkeypatch):
    """The default pipeline infers the input before it indexes it (no index for the fold-if
    check when no node can hold a subgraph), and the result is what the protobuf index gives."""
    built: list = []
    real = GraphModel.__init__

    def init(self, model, base_dir=None, source=None, reads=None):
        built.append(reads is not None)
        real(self, model, base_dir, source, reads)

    monkeypatch.setattr(GraphModel, "__init__", init)
    m = onnx.load(str(model_path(name)))
    out, _ = optimize_with_report(m)
    assert built and built[0]  # the input's index came from the reads

    def without_reads(self, model, base_dir=None, source=None, reads=None):
        built.append(False)
        real(self, model, base_dir, source, None)

    monkeypatch.setattr(GraphModel, "__init__", without_reads)
    plain, _ = optimize_with_report(m)
    assert out.SerializeToString() == plain.SerializeToString()
