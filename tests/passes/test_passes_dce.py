"""dce on onnx.helper models: dead nodes and initializers go, interface and subgraph reads stay."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.pass_helpers import model_of, run_pass, vo

from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")


outputs = ort_oracle.run


def test_dce_removes_dead_nodes_but_keeps_what_a_subgraph_reads():
    then = h.make_graph([h.make_node("Add", ["a", "w"], ["t"])], "then", [], [vo("t", T.FLOAT, 1)])
    els = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [vo("e", T.FLOAT, 1)])
    nodes = [
        h.make_node("Relu", ["x"], ["a"]),  # read only inside the If branches
        h.make_node("Neg", ["x"], ["dead"]),
        h.make_node("Shape", ["dead"], ["dead_shape"]),
        h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els),
    ]
    ins = [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [3])]
    inits = [
        numpy_helper.from_array(np.ones(3, np.float32), "w"),
        numpy_helper.from_array(np.ones(2, np.float32), "unused"),
    ]
    m = model_of(nodes, ins, [vo("y", T.FLOAT, 1)], inits)
    out, changes = run_pass("dce", m)
    assert [n.op_type for n in out.graph.node] == ["Relu", "If"]
    assert changes == {"nodes removed": 2, "initializers removed": 1}
    assert [t.name for t in out.graph.initializer] == ["w"]
    for c in (True, False):
        feeds = {"c": np.array(c), "x": np.array([-1.0, 0.5, 2.0], np.float32)}
        np.testing.assert_array_equal(outputs(m, feeds)[0], outputs(out, feeds)[0])


def test_dce_keeps_graph_inputs_and_an_all_live_graph_unchanged():
    nodes = [h.make_node("Relu", ["x"], ["y"])]
    ins = [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("unused_input", T.FLOAT, [3])]
    m = model_of(nodes, ins, [vo("y", T.FLOAT, 1)])
    out, changes = run_pass("dce", m)
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_dce_removes_what_only_a_dead_subgraph_node_read_in_one_run():
    """A main-graph node read only by a dead node inside an If branch dies with it in the same
    run: a second dce (which optimize skips on its own output) removes nothing."""
    then = h.make_graph(
        [h.make_node("Neg", ["feeds_dead"], ["inner_dead"]), h.make_node("Identity", ["x"], ["t"])],
        "then",
        [],
        [vo("t", T.FLOAT, 1)],
    )
    els = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [vo("e", T.FLOAT, 1)])
    nodes = [
        h.make_node("Relu", ["x"], ["feeds_dead"]),
        h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els),
    ]
    ins = [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [3])]
    m = model_of(nodes, ins, [vo("y", T.FLOAT, 1)])
    out, changes = run_pass("dce", m)
    assert [n.op_type for n in out.graph.node] == ["If"]
    assert [n.op_type for n in out.graph.node[0].attribute[0].g.node] == ["Identity"]
    assert changes == {"nodes removed": 2, "initializers removed": 0}
    _, changes2 = run_pass("dce", out)
    assert not any(changes2.values())
    for c in (True, False):
        feeds = {"c": np.array(c), "x": np.array([-1.0, 0.5, 2.0], np.float32)}
        np.testing.assert_array_equal(outputs(m, feeds)[0], outputs(out, feeds)[0])


def test_dce_on_a_main_graph_without_subgraphs_keeps_read_output_and_interface_initializers():
    # The fast path (no subgraph anywhere): initializers are decided by the names live nodes
    # read, the graph outputs and the graph inputs, as everywhere else.
    nodes = [
        h.make_node("Add", ["x", "w"], ["y"]),
        h.make_node("Mul", ["x", "dead_w"], ["dead"]),  # nothing reads it: goes with dead_w
    ]
    ins = [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("default", T.FLOAT, [3])]
    inits = [
        numpy_helper.from_array(np.full(3, 2.0, np.float32), name)
        for name in ("w", "dead_w", "out_c", "default", "unused")
    ]
    outs = [vo("y", T.FLOAT, 1), h.make_tensor_value_info("out_c", T.FLOAT, [3])]
    m = model_of(nodes, ins, outs, inits)
    out, changes = run_pass("dce", m)
    assert [n.op_type for n in out.graph.node] == ["Add"]
    assert changes == {"nodes removed": 1, "initializers removed": 2}
    assert [t.name for t in out.graph.initializer] == ["w", "out_c", "default"]
    _, changes2 = run_pass("dce", out)
    assert not any(changes2.values())
    feeds = {"x": np.array([-1.0, 0.5, 2.0], np.float32), "default": np.ones(3, np.float32)}
    for a, b in zip(outputs(m, feeds), outputs(out, feeds)):
        np.testing.assert_array_equal(a, b)
