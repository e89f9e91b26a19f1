"""fold-constants: all-constant nodes evaluated into initializers, bit-identical to onnxruntime."""

from __future__ import annotations

import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.common import model_path
from support.pass_helpers import i64, model_of, run_pass

import shapeinfer.passes.fold_constants as fc
from shapeinfer.passes import PassContext, optimize_with_report
from shapeinfer.passes import run_pass as run_unchecked
from testkit import ort_oracle

pytest.importorskip("onnxruntime")


def f32(name: str, arr) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def _same_bits(a: onnx.ModelProto, b: onnx.ModelProto, feeds: dict) -> None:
    """``b`` computes the bits onnxruntime computes from ``a`` (at its default level, where it
    folds constants itself, and with every optimisation off but constant weights not prepacked)."""
    for optimize in (True, False):
        ra = ort_oracle.session(a, optimize=optimize).run(None, feeds)
        rb = ort_oracle.session(b, optimize=optimize).run(None, feeds)
        for x, y in zip(ra, rb):
            assert x.dtype == y.dtype and x.shape == y.shape
            if optimize:
                assert x.tobytes() == y.tobytes()


def _weights_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    freq = rng.standard_normal((4,)).astype(np.float32) * 10
    nodes = [
        h.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),  # [4, 8]
        h.make_node("Cos", ["freq"], ["c"]),
        h.make_node("Mul", ["x", "c"], ["xc"]),
        h.make_node("MatMul", ["xc", "wt"], ["y"]),
    ]
    return model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 8])],
        [f32("w", w), f32("freq", freq)],
    )


def test_constant_nodes_become_initializers_with_onnxruntimes_bits():
    m = _weights_model()
    out, changes = run_pass("fold-constants", m)
    assert [n.op_type for n in out.graph.node] == ["Mul", "MatMul"]
    assert changes == {"tensors evaluated to initializers": 2, "nodes removed": 2}
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    _same_bits(m, out, {"x": x})
    # the stored values are onnxruntime's own (Cos included), bit for bit
    inits = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
    ref = ort_oracle.run_all(m, {"x": x})
    assert inits["c"].tobytes() == ref["c"].tobytes() and inits["wt"].tobytes() == ref["wt"].tobytes()


def test_without_onnxruntime_only_exact_ops_fold(monkeypatch):
    monkeypatch.setattr(fc, "ort_available", lambda: False)
    m = _weights_model()
    out, changes = run_pass("fold-constants", m)
    assert [n.op_type for n in out.graph.node] == ["Cos", "Mul", "MatMul"]  # Cos: not bit-exact in numpy
    assert changes["tensors evaluated to initializers"] == 1
    _same_bits(m, out, {"x": np.ones((2, 4), np.float32)})


# one node per op of EXACT with constant inputs: the reference evaluator gives onnxruntime's bits
def _exact_cases():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = (rng.standard_normal((3, 4)) * 1e-3).astype(np.float32)
    b[0, 0] = np.float32(1e-42)  # a subnormal
    ai = rng.integers(-(2**40), 2**40, (3, 4)).astype(np.int64)
    bi = rng.integers(-(2**40), 2**40, (3, 4)).astype(np.int64)
    bi[0, 0] = np.iinfo(np.int64).max  # wraps
    d = np.float64
    cases = []
    for op in ("Add", "Sub", "Mul"):
        cases += [(op, [a, b], {}), (op, [ai, bi], {}), (op, [a.astype(d), b.astype(d)], {})]
    cases += [("Div", [a, b], {}), ("Div", [a.astype(d), b.astype(d)], {}), ("Neg", [ai], {}), ("Abs", [a], {})]
    cases += [("Max", [ai, bi], {}), ("Min", [ai.astype(np.int32), bi.astype(np.int32)], {})]
    cases += [("Equal", [ai, bi], {}), ("Less", [a, b], {}), ("GreaterOrEqual", [ai, bi], {})]
    cases += [("Where", [a > 0, a, b], {}), ("And", [a > 0, b > 0], {}), ("Not", [a > 0], {})]
    cases += [("Cast", [ai], {"to": T.FLOAT}), ("Cast", [ai], {"to": T.INT32}), ("Cast", [a > 0], {"to": T.FLOAT})]
    cases += [("Transpose", [a], {"perm": [1, 0]}), ("Concat", [a, b], {"axis": 0}), ("Range", [3, 40, 7], {})]
    cases += [("Gather", [a, np.array([2, 0, -1], np.int64)], {"axis": 0}), ("Tile", [a, np.array([2, 3])], {})]
    cases += [("Slice", [a, np.array([-1]), np.array([-100]), np.array([1]), np.array([-2])], {})]
    cases += [("Expand", [a[:1], np.array([5, 3, 4])], {}), ("ConstantOfShape", [np.array([2, 3])], {})]
    return cases


@pytest.mark.parametrize("case", _exact_cases(), ids=lambda c: c[0])
def test_the_reference_path_gives_onnxruntimes_bits_on_every_exact_op(case, monkeypatch):
    op, args, attrs = case
    assert op in fc.EXACT
    inits = [
        numpy_helper.from_array(np.asarray(v, dtype=np.int64 if isinstance(v, int) else None), f"i{k}")
        for k, v in enumerate(args)
    ]
    nodes = [h.make_node(op, [t.name for t in inits], ["r"], **attrs), h.make_node("Identity", ["r"], ["y"])]
    graph = h.make_graph(nodes, "g", [], [h.make_empty_tensor_value_info("y")], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    oracle = ort_oracle.session(m).run(None, {})[0]
    monkeypatch.setattr(fc, "ort_available", lambda: False)
    out, _ = run_unchecked("fold-constants", m, PassContext())
    assert [n.op_type for n in out.graph.node] == ["Identity"]
    got = numpy_helper.to_array(next(t for t in out.graph.initializer if t.name == "r"))
    assert got.dtype == oracle.dtype and got.shape == oracle.shape and got.tobytes() == oracle.tobytes()


def test_random_and_quantization_ops_never_fold():
    nodes = [
        h.make_node("RandomNormal", [], ["r"], shape=[2, 2]),
        h.make_node("Add", ["r", "one"], ["y"]),
        h.make_node("DequantizeLinear", ["q", "s"], ["w"]),
        h.make_node("MatMul", ["x", "w"], ["z"]),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2, 2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 2]), h.make_tensor_value_info("z", T.FLOAT, [2, 2])],
        [
            f32("one", 1.0),
            numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.int8), "q"),
            f32("s", 0.5),
        ],
    )
    out, changes = run_unchecked("fold-constants", m, PassContext())
    assert out is m and changes == {}


def test_a_training_mode_dropout_of_constants_stays():
    nodes = [
        h.make_node("Dropout", ["w", "ratio", "train"], ["d"]),
        h.make_node("Add", ["x", "d"], ["y"]),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, [4])],
        [f32("w", [1, 2, 3, 4]), f32("ratio", 0.5), numpy_helper.from_array(np.array(True), "train")],
    )
    out, changes = run_unchecked("fold-constants", m, PassContext())
    assert out is m and changes == {}
    assert all(fc.never_folded(op, "", ["x"]) for op in ("RandomNormal", "Bernoulli", "DequantizeLinear"))
    # without training_mode, Dropout is the identity: it folds
    m.graph.node[0].input.pop()
    out, changes = run_unchecked("fold-constants", m, PassContext())
    assert [n.op_type for n in out.graph.node] == ["Add"]


def test_graph_outputs_and_overridable_initializers_stay():
    # 'k' is an initializer that is also a graph input: a caller may feed another value
    m = h.make_model(
        h.make_graph(
            [h.make_node("Neg", ["k"], ["y"]), h.make_node("Neg", ["c"], ["z"])],
            "g",
            [h.make_tensor_value_info("k", T.INT64, [2])],
            [h.make_tensor_value_info("y", T.INT64, [2]), h.make_tensor_value_info("z", T.INT64, [2])],
            [i64("k", [1, 2]), i64("c", [3, 4])],
        ),
        opset_imports=[h.make_opsetid("", 17)],
        ir_version=8,
    )
    out, changes = run_unchecked("fold-constants", m, PassContext())
    assert out is m and changes == {}


def test_a_large_result_is_capped_and_an_unbounded_one_never_computed():
    nodes = [
        h.make_node("Expand", ["one", "big"], ["mask"]),  # 4 MB of float from a scalar: over the 64 KiB bound
        h.make_node("Add", ["x", "mask"], ["y"]),
        h.make_node("ConstantOfShape", ["huge"], ["h"]),  # 400 MB: never computed
        h.make_node("Shape", ["h"], ["hs"]),
        h.make_node("Concat", ["hs", "hs"], ["z"], axis=0),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [1024, 1024])],
        [h.make_tensor_value_info("y", T.FLOAT, [1024, 1024]), h.make_tensor_value_info("z", T.INT64, [2])],
        [f32("one", 1.0), i64("big", [1024, 1024]), i64("huge", [100_000_000])],
    )
    t = time.perf_counter()
    out, changes = run_unchecked("fold-constants", m, PassContext())
    assert changes == {}
    assert time.perf_counter() - t < 2
    assert [n.op_type for n in out.graph.node] == ["Expand", "Add", "ConstantOfShape", "Shape", "Concat"]
    out, _ = run_unchecked("fold-constants", m, PassContext(max_fold_growth=8 << 20))
    assert [n.op_type for n in out.graph.node] == ["Add", "ConstantOfShape", "Shape", "Concat"]
    assert numpy_helper.to_array(next(t for t in out.graph.initializer if t.name == "mask")).shape == (1024, 1024)


def test_vit_dynamo_weight_transposes_fold_and_outputs_keep_their_bits():
    original = onnx.load(str(model_path("vit_dynamo")))
    before, _ = optimize_with_report(original, passes=[p for p in fc_passes() if p != "fold-constants"])
    out, _ = optimize_with_report(original)
    ops = [n.op_type for n in out.graph.node]
    assert len(ops) <= len(before.graph.node) - 24
    inits = {t.name for t in out.graph.initializer}
    assert not [n for n in out.graph.node if n.input and all(i in inits for i in n.input if i)]
    feeds = ort_oracle.feeds(original, {"batch": 2}, seed=1)
    _same_bits(original, out, feeds)


def fc_passes() -> list[str]:
    from shapeinfer.passes import DEFAULT_PASSES

    return list(DEFAULT_PASSES)


def _cli(*args: str):
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    return CliRunner().invoke(main, ["optimize", *args])


def test_max_fold_growth_flag(tmp_path):
    # (read by a MatMul: an Add would broadcast the scalar itself, and remove-expand removes the Expand)
    nodes = [h.make_node("Expand", ["one", "shape"], ["mask"]), h.make_node("MatMul", ["x", "mask"], ["y"])]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [64, 64])],
        [h.make_tensor_value_info("y", T.FLOAT, [64, 64])],
        [f32("one", 1.0), i64("shape", [64, 64])],
    )
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    ops = {}
    for size in ("16K", "15K", "0"):  # the mask is 16 KiB, from a 4-byte scalar
        r = _cli(str(src), "-o", str(tmp_path / f"{size}.onnx"), "--max-fold-growth", size, "--json")
        assert r.exit_code == 0, r.output
        ops[size] = [n.op_type for n in onnx.load(str(tmp_path / f"{size}.onnx")).graph.node]
    assert ops == {"16K": ["MatMul"], "15K": ["Expand", "MatMul"], "0": ["Expand", "MatMul"]}
    r = _cli(str(src), "--max-fold-growth", "lots")
    assert r.exit_code == 2 and "--max-fold-growth 'lots'" in r.stderr


def test_a_weight_in_external_data_frees_no_room_in_the_model(tmp_path):
    w = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)  # 16 KiB
    nodes = [h.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), h.make_node("MatMul", ["x", "wt"], ["y"])]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2, 128])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 32])],
        [f32("w", w)],
    )
    inline, _ = optimize_with_report(m, passes=["fold-constants"], max_fold_growth=0)
    assert [n.op_type for n in inline.graph.node] == ["MatMul"]  # the inline weight goes
    path = tmp_path / "ext.onnx"
    onnx.save(
        m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin", size_threshold=0
    )
    ext, _ = optimize_with_report(str(path), passes=["fold-constants"], max_fold_growth=0)
    assert [n.op_type for n in ext.graph.node] == ["Transpose", "MatMul"]  # would put 16 KiB inline
    ext, _ = optimize_with_report(str(path), passes=["fold-constants"])
    assert [n.op_type for n in ext.graph.node] == ["MatMul"]
    x = np.ones((2, 128), np.float32)
    assert (
        ort_oracle.session(ext).run(None, {"x": x})[0].tobytes()
        == ort_oracle.session(str(path)).run(None, {"x": x})[0].tobytes()
    )


def test_an_external_weight_past_the_read_cap_is_not_a_constant_here(tmp_path):
    w = np.ones((256, 128), np.float32)  # 128 KiB: external data is read up to 64 KiB
    nodes = [
        h.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        h.make_node("MatMul", ["x", "wt"], ["y"]),
        h.make_node("Neg", ["k"], ["nk"]),  # folds all the same
        h.make_node("Add", ["y", "nk"], ["z"]),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2, 128])],
        [h.make_tensor_value_info("z", T.FLOAT, [2, 256])],
        [f32("w", w), f32("k", np.ones(256))],
    )
    path = tmp_path / "ext.onnx"
    onnx.save(
        m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin", size_threshold=0
    )
    out, _ = optimize_with_report(str(path), passes=["fold-constants"], max_fold_growth=1 << 20)
    assert [n.op_type for n in out.graph.node] == ["Transpose", "MatMul", "Add"]
