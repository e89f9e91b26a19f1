"""``make-dynamic`` (issue 36 part 1): static exports made dynamic, checked in onnxruntime
against the static model at its own size and against the dynamic twin (same weights) at other
sizes; refusals exit 1, name the node and write nothing.

The twins are made by benchmarks/make_static_twins.py (torch.onnx.export with and without
dynamic axes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.cli.main import main
from shapeinfer.passes.make_dynamic import MakeDynamicError

ort = pytest.importorskip("onnxruntime")

TWINS = Path(__file__).resolve().parent.parent / "models" / "static"
TABLE = json.loads((TWINS / "twins.json").read_text())


def _session(model: onnx.ModelProto | str):
    data = model if isinstance(model, str) else model.SerializeToString()
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _feeds(inputs: dict, sizes: dict[str, int], dims: dict) -> dict:
    rng = np.random.default_rng(0)
    feeds = {}
    for name, shape in inputs.items():
        shape = list(shape)
        for axis, sym in dims.get(name, {}).items():
            shape[int(axis)] = sizes.get(sym, shape[int(axis)])
        feeds[name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("name", ["cnn", "yolo"])
def test_static_export_made_dynamic_equals_its_twins(name):
    entry = TABLE[name]
    dims = {k: {int(a): s for a, s in v.items()} for k, v in entry["dims"].items()}
    static = str(TWINS / f"{name}.static.onnx")
    made = shapeinfer.make_dynamic(static, dims=dims)
    out = made.graph.output[0].type.tensor_type.shape.dim[0]
    assert out.dim_param == "batch"  # the output follows the symbol, proved by inference
    result = shapeinfer.infer(made)
    assert not result.guards()
    got = _session(made)
    ref_static = _session(static)
    twin = _session(str(TWINS / f"{name}.dynamic.onnx"))
    feeds = _feeds(entry["inputs"], {}, dims)
    np.testing.assert_allclose(got.run(None, feeds)[0], ref_static.run(None, feeds)[0], rtol=1e-5, atol=1e-5)
    for b in (2, 5):
        feeds = _feeds(entry["inputs"], {"batch": b}, dims)
        a = got.run(None, feeds)[0]
        assert a.shape[0] == b
        np.testing.assert_allclose(a, twin.run(None, feeds)[0], rtol=1e-5, atol=1e-5)


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _attention_heads() -> onnx.ModelProto:
    """x[1, 16, 64] -> Reshape [1, 16, -1, 16] -> Transpose -> Reshape [1, 16, 64]: at sequence
    16 with head size 16, one 16 is the sequence and the other the head size."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 64])
    inits = [
        numpy_helper.from_array(np.array([1, 16, -1, 16], np.int64), "heads"),
        numpy_helper.from_array(np.array([1, 16, 64], np.int64), "merged"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "heads"], ["h"], name="split_heads"),
        helper.make_node("Transpose", ["h"], ["t"], perm=[0, 2, 1, 3], name="to_heads"),
        helper.make_node("Transpose", ["t"], ["u"], perm=[0, 2, 1, 3], name="from_heads"),
        helper.make_node("Reshape", ["u", "merged"], ["y"], name="merge_heads"),
    ]
    return _model(nodes, [x], [y], inits)


def test_head_size_equal_to_the_sequence_is_kept_by_provenance():
    made = shapeinfer.make_dynamic(_attention_heads(), dims={"x": {0: "batch", 1: "seq"}})
    result = shapeinfer.infer(made)
    assert [str(d) for d in result.dims("h")] == ["batch", "seq", "4", "16"]
    assert [str(d) for d in result.dims("y")] == ["batch", "seq", "64"]
    assert not result.guards()
    s = _session(made)
    for b, n in ((1, 16), (2, 5), (3, 7)):
        x = np.random.default_rng(n).standard_normal((b, n, 64)).astype(np.float32)
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], x)


def _position_table() -> onnx.ModelProto:
    """x[1, 16, 8] plus a learned table of exactly 16 rows: it cannot follow the sequence."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8])
    table = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32), "pos_table")
    return _model([helper.make_node("Add", ["x", "pos_table"], ["y"], name="add_positions")], [x], [y], [table])


def _folded_mask() -> onnx.ModelProto:
    """x[1, 16] plus a float mask folded at sequence 16 (no arange): it cannot be regenerated."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    mask = numpy_helper.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16), "mask")
    nodes = [
        helper.make_node("Neg", ["mask"], ["m"], name="negate_mask"),
        helper.make_node("Add", ["x", "m"], ["y"], name="apply_mask"),
    ]
    return _model(nodes, [x], [y], [mask])


@pytest.mark.parametrize(
    ("make", "spec", "node", "why"),
    [
        (_position_table, "x:1=seq", "add_positions", "a weight 'pos_table' of shape [16, 8]"),
        (_folded_mask, "x:1=seq", "negate_mask", "cannot be regenerated"),
    ],
)
def test_refusal_exits_1_names_the_node_and_writes_nothing(tmp_path, make, spec, node, why):
    src = tmp_path / "m.onnx"
    onnx.save(make(), src)
    out = tmp_path / "out.onnx"
    r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(out), "--dim", spec])
    assert r.exit_code == 1, r.output
    assert node in r.output and why in r.output
    assert not out.exists()
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(make(), dims={"x": {1: "seq"}})
    assert [x.node for x in e.value.refusals] == [node]


def test_arange_positions_are_regenerated():
    """Position ids folded as arange(16) are a Range of the sequence (the table has 32 rows)."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 4])
    table = np.random.default_rng(1).standard_normal((32, 4)).astype(np.float32)
    words = np.random.default_rng(2).standard_normal((10, 4)).astype(np.float32)
    inits = [
        numpy_helper.from_array(table, "pos"),
        numpy_helper.from_array(words, "words"),
        numpy_helper.from_array(np.arange(16, dtype=np.int64).reshape(1, 16), "positions"),
    ]
    nodes = [
        helper.make_node("Gather", ["words", "ids"], ["w"], name="embed"),
        helper.make_node("Gather", ["pos", "positions"], ["p"], name="embed_positions"),
        helper.make_node("Add", ["w", "p"], ["y"], name="add"),
    ]
    made = shapeinfer.make_dynamic(_model(nodes, [ids], [y], inits), dims={"ids": {1: "seq"}})
    s = _session(made)
    for n in (16, 3, 9):
        x = np.random.default_rng(n).integers(0, 10, (1, n))
        np.testing.assert_allclose(s.run(None, {"ids": x})[0], words[x] + table[np.arange(n)][None], rtol=1e-6)


def test_bad_dim_is_a_usage_error(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_folded_mask(), src)
    for spec in ("x:5=seq", "nope:1=seq", "x1seq", "x:one=seq"):
        r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(tmp_path / "o.onnx"), "--dim", spec])
        assert r.exit_code == 2, (spec, r.output)
        assert "Traceback" not in r.output
