"""Hostile and pathological input: invalid graphs give diagnostics, never exceptions; huge or
deep graphs finish; the same input always gives the same bytes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import model_path

import shapeinfer
from shapeinfer.symbolic import dims as D

vi = helper.make_tensor_value_info


def out(name: str) -> onnx.ValueInfoProto:
    return vi(name, TensorProto.UNDEFINED, None)


def _model(nodes, inputs, outputs, opset=17, inits=(), opsets=None):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    ops = opsets if opsets is not None else [helper.make_opsetid("", opset)]
    return helper.make_model(g, opset_imports=ops)


def _codes(r) -> list[str]:
    return [d.code for d in r.diagnostics]


def test_duplicate_output_names():
    m = _model(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"], name="second")],
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    r = shapeinfer.infer(m)
    assert [(d.code, d.node) for d in r.diagnostics] == [("E004", "second")]
    assert r.dims("y") == (2,)


def test_missing_opset_import_assumes_latest():
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [2])], [out("y")])
    del m.opset_import[:]
    r = shapeinfer.infer(m)
    assert _codes(r) == ["E005"] and r.dims("y") == (2,)


def test_cycle_and_undefined_input():
    m = _model(
        [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("b", TensorProto.FLOAT, None)],
    )
    assert "G004" in _codes(shapeinfer.infer(m))
    m = _model([helper.make_node("Relu", ["nowhere"], ["y"])], [], [vi("y", TensorProto.FLOAT, None)])
    assert _codes(shapeinfer.infer(m)) == ["G005"]


def test_unknown_domain_and_wrong_attribute_types():
    m = _model(
        [
            helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example"),
            helper.make_node("Concat", ["x", "x"], ["z"], axis=1.5),
            helper.make_node("Transpose", ["x"], ["t"], perm="abc"),
        ],
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [out("y"), out("z"), out("t")],
        opsets=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )
    r = shapeinfer.infer(m)
    assert _codes(r) == ["G007", "E007", "E007"]
    assert "attribute 'axis' is float; Concat takes int" in r.diagnostics[1].message
    assert r.facts["y"].shape is None and r.facts["z"].shape is None


def test_bad_reshape_targets_and_bad_values():
    inits = [
        numpy_helper.from_array(np.array([[3, 2]], np.int64), "rank2"),
        numpy_helper.from_array(np.array([np.nan, 3], np.float32), "nan"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "rank2"], ["a"]),
        helper.make_node("Cast", ["nan"], ["nan_i"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "nan_i"], ["b"]),
    ]
    m = _model(nodes, [vi("x", TensorProto.FLOAT, [2, 3])], [out("a"), out("b")], inits=inits)
    r = shapeinfer.infer(m)
    assert _codes(r) == ["R011", "E008"]
    assert r.facts["a"].shape is None
    b0, b1 = r.dims("b")
    assert D.symbols(b0) <= set(r.fresh_symbols) and b1 == 3


def test_negative_and_overflowing_dims():
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [-3, 2])], [out("y")])
    r = shapeinfer.infer(m)
    assert _codes(r) == ["E006"] and r.dims("y") == (D.sym("x_d0"), 2)
    t = numpy_helper.from_array(np.array([2**62, 2**62], np.int64), "t")
    m = _model(
        [helper.make_node("ConstantOfShape", ["t"], ["y"])], [], [out("y")], inits=[t]
    )  # 2**124 elements: dims are fine, the count is not materialised
    assert shapeinfer.infer(m).dims("y") == (2**62, 2**62)


def test_100k_node_chain_without_recursion():
    n = 100_000
    nodes = [helper.make_node("Neg", [f"x{i}"], [f"x{i + 1}"]) for i in range(n)]
    m = _model(nodes, [vi("x0", TensorProto.FLOAT, ["a", 3])], [out(f"x{n}")])
    assert shapeinfer.infer(m).dims(f"x{n}") == (D.sym("a"), 3)


def test_10k_input_concat():
    m = _model(
        [helper.make_node("Concat", ["x"] * 10_000, ["y"], axis=0)],
        [vi("x", TensorProto.FLOAT, ["a", 3])],
        [out("y")],
    )
    assert shapeinfer.infer(m).dims("y") == (10_000 * D.sym("a"), 3)


def _nested_if(depth: int) -> onnx.ModelProto:
    """If nodes nested ``depth`` deep through their then-branches."""
    node = None
    for level in range(depth):
        if node is None:
            then_nodes, then_out = [helper.make_node("Identity", ["x"], ["y0"])], "y0"
        else:
            then_nodes, then_out = [node], f"r{level - 1}"
        then_g = helper.make_graph(then_nodes, f"then{level}", [], [vi(then_out, TensorProto.FLOAT, None)])
        else_g = helper.make_graph(
            [helper.make_node("Neg", ["x"], [f"e{level}"])],
            f"else{level}",
            [],
            [vi(f"e{level}", TensorProto.FLOAT, None)],
        )
        node = helper.make_node("If", ["c"], [f"r{level}"], then_branch=then_g, else_branch=else_g)
    return _model([node], [vi("c", TensorProto.BOOL, []), vi("x", TensorProto.FLOAT, ["a", 2])], [out(f"r{depth - 1}")])


def test_deeply_nested_subgraphs():
    m = _nested_if(32)  # protobuf's nesting limit: If > GraphProto > NodeProto is 3 levels a step
    data = m.SerializeToString()
    m2 = onnx.ModelProto.FromString(data)  # protobuf accepts the nesting
    r = shapeinfer.infer(m2)
    assert r.dims("r31") == (D.sym("a"), 2)


@pytest.mark.parametrize("name", ["bert_dynamo", "gpt2_ts"])
def test_same_input_same_bytes(tmp_path, name):
    """Two runs under different hash seeds write byte-identical models."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"o{seed}.onnx"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(
            [sys.executable, "-m", "shapeinfer.cli", str(model_path(name)), "-o", str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_unsorted_graph_is_inferred_in_topological_order():
    from support.common import load_stripped

    m = load_stripped("bert_ts")
    sorted_dims = {k: f.shape for k, f in shapeinfer.infer(m).facts.items()}
    nodes = list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(reversed(nodes))
    r = shapeinfer.infer(m)
    # an error, as onnx's checker refuses it (lint's onnxruntime and openvino targets: a warning)
    assert [(d.code, d.severity) for d in r.diagnostics if d.code != "G003"] == [("G004", "error")]
    assert {k: f.shape for k, f in r.facts.items()} == sorted_dims


def test_float_reshape_target_and_overflowing_target():
    inits = [
        numpy_helper.from_array(np.array([3.0, 2.0], np.float32), "f"),
        numpy_helper.from_array(np.array([2**62, 2**62, -1], np.int64), "big"),
    ]
    nodes = [helper.make_node("Reshape", ["x", "f"], ["a"]), helper.make_node("Reshape", ["x", "big"], ["b"])]
    m = _model(nodes, [vi("x", TensorProto.FLOAT, [2, 3])], [out("a"), out("b")], inits=inits)
    r = shapeinfer.infer(m)
    assert [(d.code, d.index) for d in r.diagnostics] == [("R011", 0), ("R004", 1)]
    assert "overflows int64" in r.diagnostics[1].message
    assert r.dims("a") == (3, 2)  # still inferred: the values are whole numbers
