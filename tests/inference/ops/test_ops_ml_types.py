"""The types of scikit-learn pipelines (ai.onnx.ml ops, ZipMap's sequence of maps, the
com.microsoft Tokenizer of a text pipeline) as onnxruntime types them, on the skl2onnx fixtures
of tests/models/sklearn (tools/generators/make_sklearn_models.py).

onnxruntime is the oracle twice over: each tensor a node makes is added as a graph output
declared with the type inference gives it (onnxruntime refuses a declared element type or kind
that differs from its own), and run, so the value's kind and dtype are compared too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import shapeinfer
from shapeinfer.analysis.verify import verify
from shapeinfer.io.onnxio import fact_type

ort = pytest.importorskip("onnxruntime")

SKLEARN = sorted((Path(__file__).resolve().parents[2] / "models" / "sklearn").glob("*.onnx"))


def _feeds(m: onnx.ModelProto, n: int) -> dict:
    x = m.graph.input[0]
    if x.type.tensor_type.elem_type == onnx.TensorProto.STRING:
        return {x.name: np.array([["the quick brown fox"], ["a b c"], ["zz top"]][:n], dtype=object)}
    return {x.name: np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)}


def _type_string(tp: onnx.TypeProto) -> str:
    """onnxruntime's spelling: ``tensor(float)``, ``seq(map(int64,tensor(float)))``."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({onnx.helper.tensor_dtype_to_string(tp.tensor_type.elem_type)[len('TensorProto.') :].lower()})"
    if which == "sequence_type":
        return f"seq({_type_string(tp.sequence_type.elem_type)})"
    if which == "map_type":
        key = onnx.helper.tensor_dtype_to_string(tp.map_type.key_type)[len("TensorProto.") :].lower()
        return f"map({key},{_type_string(tp.map_type.value_type)})"
    return "?"


@pytest.mark.parametrize("path", SKLEARN, ids=lambda p: p.stem)
def test_every_tensor_has_the_type_onnxruntime_gives_it(path):
    m = onnx.load(str(path))
    result = shapeinfer.infer(m)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    for node in m.graph.node:
        for name in node.output:
            f = result.facts.get(name)
            assert f is not None and (f.kind != "tensor" or f.dtype), f"{node.op_type} {name}: type unknown"
            probe = onnx.ModelProto()
            probe.CopyFrom(m)
            del probe.graph.output[:]
            vi = probe.graph.output.add()
            vi.name = name
            vi.type.CopyFrom(fact_type(f))
            sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
            assert sess.get_outputs()[0].type == _type_string(vi.type), (node.op_type, name)
            value = sess.run(None, _feeds(m, 3))[0]
            if f.kind == "sequence":
                assert isinstance(value, list) and f.elem is not None
                if f.elem.kind == "map":  # ZipMap: keys int64 or string, values float
                    key = onnx.TensorProto.STRING if isinstance(next(iter(value[0])), str) else onnx.TensorProto.INT64
                    assert f.elem.dtype == key and f.elem.elem.dtype == onnx.TensorProto.FLOAT
            else:
                assert onnx.helper.np_dtype_to_tensor_dtype(value.dtype) == f.dtype or value.dtype == object


@pytest.mark.parametrize("path", SKLEARN, ids=lambda p: p.stem)
def test_verify_finds_no_mismatch_in_zipmaps_sequence_of_maps(path):
    """verify compared ZipMap's maps as tensors ("sequence(int64 ?)" against a list of dicts)."""
    m = onnx.load(str(path))
    sym = f"{m.graph.input[0].name}_d0"
    report = verify(m, [{sym: 1}, {sym: 2}, {sym: 3}])
    assert not report.mismatches, [(x.tensor, x.reason, x.expected, x.actual) for x in report.mismatches]
    zipmap = next(n.output[0] for n in m.graph.node if n.op_type == "ZipMap")
    for x in report.unresolved:
        if x.tensor == zipmap:
            assert x.inferred.startswith("sequence(map(") and x.actual.startswith("sequence[map(")


@pytest.mark.parametrize("path", SKLEARN, ids=lambda p: p.stem)
def test_the_written_model_with_the_zipmap_type_runs_in_onnxruntime(tmp_path, path):
    out = tmp_path / "out.onnx"
    written = shapeinfer.infer_shapes(str(path))
    onnx.save(written, out)
    declared = {vi.name: _type_string(vi.type) for vi in (*written.graph.output, *written.graph.value_info)}
    zipmap = next(n.output[0] for n in written.graph.node if n.op_type == "ZipMap")
    assert declared[zipmap].startswith("seq(map(")
    so = ort.SessionOptions()
    so.log_severity_level = 4
    want = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    got = ort.InferenceSession(str(out), so, providers=["CPUExecutionProvider"])
    m = onnx.load(str(path))
    for n in (1, 2, 3):
        for a, b in zip(want.run(None, _feeds(m, n)), got.run(None, _feeds(m, n))):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)
            else:
                assert a == b


def test_tokenizer_shapes_follow_onnxruntime():
    """[N] -> [N, D] and [N, C] -> [N, C, D]; an empty input comes back as it is ([0], [2, 0])."""
    from onnx import TensorProto as T
    from onnx import helper as h

    so = ort.SessionOptions()
    so.log_severity_level = 4
    for shape, data in [
        ([3], ["a b c", "d", ""]),
        (["n"], ["a b c", "d e"]),
        ([2, 2], [["a b", "c"], ["d e f", ""]]),
        ([0], []),
        ([2, 0], [[], []]),
    ]:
        node = h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=1, pad_value="#", separators=[" "])
        node.attribute.append(h.make_attribute("mincharnum", 1))
        x_vi, y_vi = h.make_tensor_value_info("x", T.STRING, shape), h.make_tensor_value_info("y", T.STRING, None)
        g = h.make_graph([node], "g", [x_vi], [y_vi])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
        f = shapeinfer.infer(m).facts["y"]
        cols = [2 if shape[-1] == 2 else 0] if len(shape) == 2 else []
        x = np.array(data, dtype=object).reshape([len(data), *cols])
        y = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert f.dtype == T.STRING and f.shape is not None and len(f.shape) == y.ndim, (shape, f.shape, y.shape)
        for d, a in zip(f.shape, y.shape):
            if type(d) is int:
                assert d == a
