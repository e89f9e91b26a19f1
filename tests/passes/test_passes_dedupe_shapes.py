"""dedupe-shapes on onnx.helper models: repeated computations merge, random ones and outputs do not."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.pass_helpers import model_of, run_pass, vo

from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")


def scalar(name: str, v: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, np.int64), name)


outputs = ort_oracle.run


def test_repeated_shape_chains_are_computed_once():
    # Two Shape -> Gather -> Cast chains (one with Shape's default start spelled out) and two
    # equal index initializers under different names.
    nodes = [
        h.make_node("Shape", ["x"], ["s1"]),
        h.make_node("Shape", ["x"], ["s2"], start=0),
        h.make_node("Gather", ["s1", "i_a"], ["g1"], axis=0),
        h.make_node("Gather", ["s2", "i_b"], ["g2"], axis=0),
        h.make_node("Cast", ["g1"], ["c1"], to=T.FLOAT),
        h.make_node("Cast", ["g2"], ["c2"], to=T.FLOAT),
        h.make_node("Mul", ["x", "c1"], ["m1"]),
        h.make_node("Add", ["m1", "c2"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", 3])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 2)], [scalar("i_a", 1), scalar("i_b", 1)])
    out, changes = run_pass("dedupe-shapes", m)
    out, _ = run_pass("dce", out)
    ops = [n.op_type for n in out.graph.node]
    assert ops == ["Shape", "Gather", "Cast", "Mul", "Add"]
    assert changes["nodes merged"] == 3
    add = out.graph.node[-1]
    assert add.input[1] == out.graph.node[2].output[0]
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(4, 3)}
    np.testing.assert_array_equal(outputs(m, feeds)[0], outputs(out, feeds)[0])


def test_random_nodes_and_graph_outputs_are_not_merged():
    nodes = [
        h.make_node("RandomUniformLike", ["x"], ["r1"]),
        h.make_node("RandomUniformLike", ["x"], ["r2"]),
        h.make_node("Relu", ["x"], ["y1"]),
        h.make_node("Relu", ["x"], ["y2"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [3])
    outs = [vo(n, T.FLOAT, 1) for n in ("r1", "r2", "y1", "y2")]
    m = model_of(nodes, [x], outs)
    out, changes = run_pass("dedupe-shapes", m)
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_initializers_that_are_graph_inputs_are_not_merged():
    # "b" is listed as an input: a default value the caller may override, not a constant.
    nodes = [h.make_node("Add", ["x", "a"], ["y1"]), h.make_node("Add", ["x", "b"], ["y2"])]
    ins = [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("b", T.FLOAT, [2])]
    inits = [numpy_helper.from_array(np.ones(2, np.float32), "a"), numpy_helper.from_array(np.ones(2, np.float32), "b")]
    m = model_of(nodes, ins, [vo("y1", T.FLOAT, 1), vo("y2", T.FLOAT, 1)], inits)
    out, changes = run_pass("dedupe-shapes", m)
    assert not any(changes.values())
    feeds = {"x": np.zeros(2, np.float32), "b": np.full(2, 5.0, np.float32)}
    y1, y2 = outputs(out, feeds)
    np.testing.assert_array_equal(y1, [1.0, 1.0])
    np.testing.assert_array_equal(y2, [5.0, 5.0])
