"""Placeholder dim names (issue 32): ``[-1, 3, ?, ?]`` (older paddle2onnx) must not make height
and width one dim. A placeholder (``?``, ``None``, ``-1``...: :func:`shapeinfer.symbolic.names.is_placeholder`)
on a graph input is its own unknown dim ``<input>_d<axis>``, with an info E009 naming the axes;
in value_info it is an unknown dim, never a symbol two tensors share. onnxruntime is the oracle:
what ``-o`` writes runs wherever the original runs, with the same outputs.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from support.common import run_cli

import shapeinfer
from shapeinfer.api import BindError
from shapeinfer.io.onnxio import dim_from_proto
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.names import is_placeholder
from testkit import ort_oracle


def _i64(name: str, v) -> onnx.TensorProto:
    return nh.from_array(np.array(v, np.int64), name)


def _f32(name: str, v) -> onnx.TensorProto:
    return nh.from_array(np.array(v, np.float32), name)


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


_INITS = [_f32("hi", 0.5), _f32("lo", -0.5)]


@pytest.mark.parametrize("text", ["?", " ? ", "None", "none", "NULL", "unk", "Unknown", "dynamic", "-1", "-2", ""])
def test_placeholder_texts(text):
    assert is_placeholder(text)
    d = onnx.TensorShapeProto.Dimension(dim_param=text)
    assert dim_from_proto(d) is None


@pytest.mark.parametrize("text", ["batch", "N", "unk__12", "height", "s0", "2*seq", "None_d0", "?x"])
def test_names_that_are_not_placeholders(text):
    assert not is_placeholder(text)
    assert dim_from_proto(onnx.TensorShapeProto.Dimension(dim_param=text)) is not None


def placeholder_image_model() -> onnx.ModelProto:
    """``x [-1, 3, ?, ?]`` (older paddle2onnx): a conv, a width pad and a height pad whose
    transpose has the same dims as the first only if height equals width, a pool and a Reshape
    to ``[0, 4, -1]``. onnxruntime reuses the width-padded buffer for the transposed one when
    their written dims are equal, which fails where height and width differ."""
    rng = np.random.default_rng(0)
    nodes = [
        h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c"], ["a"]),
        h.make_node("Pad", ["a", "padw"], ["e"]),
        h.make_node("Sigmoid", ["e"], ["e2"]),
        h.make_node("ReduceSum", ["e2", "ax3"], ["s"], keepdims=1),
        h.make_node("Pad", ["a", "padh"], ["f0"]),
        h.make_node("Transpose", ["f0"], ["f"], perm=[0, 1, 3, 2]),
        h.make_node("Sigmoid", ["f"], ["f2"]),
        h.make_node("MaxPool", ["f2"], ["p"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        h.make_node("Reshape", ["p", "flat"], ["y"]),
    ]
    inits = [
        nh.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
        _i64("padw", [0, 0, 0, 0, 0, 0, 0, 1]),
        _i64("padh", [0, 0, 0, 0, 0, 0, 1, 0]),
        _i64("ax3", [3]),
        _i64("flat", [0, 4, -1]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [-1, 3, "?", "?"])
    outputs = [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("s", T.FLOAT, None)]
    return _model(nodes, [x], outputs, inits)


SIZES = [(1, 48, 192), (2, 192, 48), (1, 1, 1), (1, 2, 3), (3, 5, 7), (1, 64, 64)]


def _image(n: int, hh: int, ww: int) -> dict:
    return {"x": np.random.default_rng(hh * 1000 + ww).standard_normal((n, 3, hh, ww)).astype(np.float32)}


def test_placeholder_input_dims_are_distinct_and_the_written_model_runs():
    m = placeholder_image_model()
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    n, hh, ww = D.sym("x_d0"), D.sym("x_d2"), D.sym("x_d3")
    assert r.dims("x") == (n, 3, hh, ww)
    assert r.dims("e") == (n, 4, hh, ww + 1) and r.dims("f") == (n, 4, ww, hh + 1)
    assert "?" not in r.input_symbols
    for name, f in r.facts.items():
        assert f.shape is None or "?" not in set().union(*(D.symbols(d) for d in f.shape)), name
    (e009,) = [d for d in r.diagnostics if d.code == "E009"]
    assert e009.severity == "info" and e009.tensor == "x"
    assert "2" in e009.message and "3" in e009.message and "x_d2" in e009.message and "x_d3" in e009.message
    written = shapeinfer.infer_shapes(m)
    orig, sess = ort_oracle.session(m, optimize=True), ort_oracle.session(written, optimize=True)
    for size in SIZES:
        feeds = _image(*size)
        want, got = orig.run(None, feeds), sess.run(None, feeds)
        assert not ort_oracle.outputs_differ(want, got, rtol=0, atol=0), size


def test_placeholder_names_in_value_info_are_unknown_dims_never_one_symbol():
    # two selections of different lengths, both declared [1, ?]: neither becomes '?'
    nodes = [
        h.make_node("Greater", ["x", "hi"], ["ga"]),
        h.make_node("NonZero", ["ga"], ["na"]),
        h.make_node("Less", ["x", "lo"], ["gb"]),
        h.make_node("NonZero", ["gb"], ["nb"]),
        h.make_node("Transpose", ["na"], ["ta"]),
        h.make_node("Transpose", ["nb"], ["tb"]),
    ]
    outputs = [h.make_tensor_value_info("ta", T.INT64, None), h.make_tensor_value_info("tb", T.INT64, None)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], outputs, _INITS)
    m.graph.value_info.extend(
        [h.make_tensor_value_info("na", T.INT64, [1, "?"]), h.make_tensor_value_info("nb", T.INT64, [1, "None"])]
    )
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    (_, a), (_, b) = r.dims("na"), r.dims("nb")
    assert a != b and not {"?", "None"} & (D.symbols(a) | D.symbols(b))
    assert not [d for d in r.diagnostics if d.code == "G013"]  # nothing was assumed
    written = shapeinfer.infer_shapes(m)
    params = {d.dim_param for vi in written.graph.value_info for d in vi.type.tensor_type.shape.dim}
    assert not {"?", "None"} & params  # not written where a runtime would read one name


def test_placeholder_dims_are_bound_by_their_axis_names():
    m = placeholder_image_model()
    written = shapeinfer.infer_shapes(m, bind={"x_d2": 48, "x_d3": 192})
    dims = [
        d.dim_value if d.HasField("dim_value") else d.dim_param
        for d in written.graph.input[0].type.tensor_type.shape.dim
    ]
    assert dims == [-1, 3, 48, 192]  # the input says which sizes the written dims hold at
    out = {vi.name: vi for vi in written.graph.value_info}["e"]
    assert [d.dim_value for d in out.type.tensor_type.shape.dim][1:] == [4, 48, 193]
    got = ort_oracle.session(written, optimize=True).run(None, _image(1, 48, 192))
    want = ort_oracle.session(m, optimize=True).run(None, _image(1, 48, 192))
    assert not ort_oracle.outputs_differ(want, got, rtol=0, atol=0)
    with pytest.raises(BindError, match="x_d2, x_d3"):
        shapeinfer.infer_shapes(m, bind={"?": 48})
    r = shapeinfer.infer(m, input_shapes={"x": [1, 3, "h", "w"]})
    assert r.dims("f") == (1, 4, D.sym("w"), D.sym("h") + 1)
    assert not [d for d in r.diagnostics if d.code == "E009"]  # the override names them


def test_placeholder_dims_on_the_command_line(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(placeholder_image_model(), str(src))
    r = run_cli(str(src), "-v")
    assert r.returncode == 0, r.stderr
    assert "[x_d0, 3, x_d2, x_d3]" in r.stdout and "E009" in r.stdout
    r = run_cli(str(src), "--bind", "?=4")
    assert r.returncode == 2 and "x_d2" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(str(src), "--bind", "x_d2=48,x_d3=192", "--json")
    assert r.returncode == 0, r.stderr
    (y,) = [o for o in json.loads(r.stdout)["outputs"] if o["name"] == "y"]
    actual = ort_oracle.session(str(src)).run(["y"], _image(1, 48, 192))[0].shape
    assert y["shape"][1:] == list(actual[1:])
