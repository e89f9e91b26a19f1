"""Pool and convolution output sizes: ceil_mode, pads, strides, dilations, auto_pad, ConvTranspose,
checked against onnxruntime on every input size 1..14, for static and symbolic input dims."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto
from support.op_oracle import Runtime, inferred, one_node

import shapeinfer
from shapeinfer.inference.ops.conv import conv_out_dim
from shapeinfer.symbolic import dims as D

FLOAT = TensorProto.FLOAT
SIZES = range(1, 15)


def test_ceil_mode_formula_from_the_onnx_document() -> None:
    # MaxPool doc example: 4x4 input, kernel 3, stride 2, ceil_mode -> 2 (floor would give 1)
    assert conv_out_dim(4, 3, 2, 1, 0, 0, "NOTSET", ceil_mode=1) == 2
    assert conv_out_dim(4, 3, 2, 1, 0, 0, "NOTSET", ceil_mode=0) == 1
    # the last window would start in the right padding: the size drops by one
    assert conv_out_dim(2, 1, 2, 1, 0, 0, "NOTSET", ceil_mode=1) == 1
    # auto_pad: SAME is ceil(in / stride), VALID ceil((in - eff + 1) / stride)
    assert conv_out_dim(5, 3, 2, 1, 0, 0, "SAME_UPPER") == 3
    assert conv_out_dim(5, 3, 2, 1, 0, 0, "VALID") == 2


def test_window_past_the_input_by_a_stride_is_an_error() -> None:
    # onnxruntime truncates: k2 s2 on 1 gives 1 (tests/inference/test_pool_edges.py), k3 s1 on 1 is -1
    model = one_node("MaxPool", [("x", FLOAT, [1, 1, 1])], attrs=dict(kernel_shape=[3], strides=[1]))
    assert Runtime(model).run({"x": np.zeros((1, 1, 1), np.float32)}) is None
    r = shapeinfer.infer(model)
    assert r.facts["y0"].shape is None
    assert [d.code for d in r.diagnostics if d.severity == "error"] == ["E040"]


def test_symbolic_ceil_mode_is_a_min_and_exact() -> None:
    n = D.sym("n")
    d = conv_out_dim(n, 1, 2, 1, 0, 0, "NOTSET", ceil_mode=1)
    assert [D.evaluate(d, {"n": v}) for v in range(1, 9)] == [1, 1, 2, 2, 3, 3, 4, 4]
    # padding at least the window: the one-step correction has no closed form -> open
    assert conv_out_dim(n, 2, 2, 1, 0, 2, "NOTSET", ceil_mode=1) is None


PADS = [(0, 0), (1, 0), (0, 1), (1, 1)]
POOL_CASES = [
    (k, s, dil, pads, ceil)
    for k, s, dil, pads, ceil in itertools.product([1, 2, 3], [1, 2, 3], [1, 2], PADS, [0, 1])
    if max(pads) < k  # onnxruntime requires pads smaller than the kernel
]


@pytest.mark.parametrize("k,s,dil,pads,ceil", POOL_CASES)
def test_maxpool_1d_against_onnxruntime(k: int, s: int, dil: int, pads: tuple, ceil: int) -> None:
    attrs = dict(kernel_shape=[k], strides=[s], dilations=[dil], pads=list(pads), ceil_mode=ceil)
    rt = Runtime(one_node("MaxPool", [("x", FLOAT, [1, 1, "n"])], attrs=attrs, opset=12))
    sym = one_node("MaxPool", [("x", FLOAT, [1, 1, "n"])], attrs=attrs, opset=12)
    for n in SIZES:
        out = rt.run({"x": np.zeros((1, 1, n), np.float32)})
        if out is None or n + sum(pads) < (k - 1) * dil + 1:
            continue  # the window does not fit (see tests/inference/test_pool_edges.py)
        want = out[0].shape
        static = one_node("MaxPool", [("x", FLOAT, [1, 1, n])], attrs=attrs, opset=12)
        assert inferred(static)[0] == want, (n, attrs)
        got = inferred(sym, {"n": n})[0]
        if got[2] is not None:  # None: left open on purpose (see conv_out_dim)
            assert got == want, (n, attrs)


@pytest.mark.parametrize("op", ["AveragePool", "LpPool"])
@pytest.mark.parametrize("ceil", [0, 1])
def test_other_pools_share_the_formula(op: str, ceil: int) -> None:
    attrs = dict(kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 0, 1], ceil_mode=ceil)
    rt = Runtime(one_node(op, [("x", FLOAT, [1, 2, "h", "w"])], attrs=attrs, opset=18))
    sym = one_node(op, [("x", FLOAT, [1, 2, "h", "w"])], attrs=attrs, opset=18)
    for h, w in [(3, 2), (4, 5), (7, 7), (10, 3)]:
        out = rt.run({"x": np.zeros((1, 2, h, w), np.float32)})
        assert out is not None
        assert inferred(sym, {"h": h, "w": w})[0] == out[0].shape


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("s", [1, 2, 3])
def test_conv_auto_pad_against_onnxruntime(auto_pad: str, s: int) -> None:
    attrs = dict(auto_pad=auto_pad, strides=[s])
    model = one_node("Conv", [("x", FLOAT, [1, 2, "n"]), ("w", FLOAT, [4, 2, 3])], attrs=attrs, opset=11)
    rt = Runtime(model)
    for n in range(3, 14):
        out = rt.run({"x": np.zeros((1, 2, n), np.float32), "w": np.zeros((4, 2, 3), np.float32)})
        assert inferred(model, {"n": n})[0] == out[0].shape


@pytest.mark.parametrize(
    "attrs",
    [
        dict(strides=[2]),
        dict(strides=[3], pads=[1, 2], output_padding=[1]),
        dict(strides=[2], dilations=[2]),
        dict(strides=[2], auto_pad="SAME_UPPER"),
        dict(strides=[2], output_shape=[10]),
        dict(group=2),
    ],
)
def test_conv_transpose_against_onnxruntime(attrs: dict) -> None:
    model = one_node("ConvTranspose", [("x", FLOAT, [1, 2, "n"]), ("w", FLOAT, [2, 3, 3])], attrs=attrs, opset=11)
    rt = Runtime(model)
    checked = 0
    for n in [2, 4, 5]:
        out = rt.run({"x": np.zeros((1, 2, n), np.float32), "w": np.zeros((2, 3, 3), np.float32)})
        if out is None:
            continue  # onnxruntime checks an explicit output_shape against the input size
        assert inferred(model, {"n": n})[0] == out[0].shape, n
        checked += 1
    assert checked


def test_conv_kernel_from_symbolic_weight() -> None:
    model = one_node("Conv", [("x", FLOAT, [1, 2, "n"]), ("w", FLOAT, [4, 2, "k"])], attrs=dict(pads=[1, 1]))
    assert inferred(model, {"n": 10, "k": 3})[0] == (1, 4, 10)
    assert inferred(model, {"n": 10, "k": 5})[0] == (1, 4, 8)


@pytest.mark.parametrize(
    ("op", "w_shape", "attrs", "takes"),
    [
        ("Conv", [4, 2, 3], {}, 2),
        ("Conv", [4, 1, 3], dict(group=2), 2),
        ("ConvTranspose", [2, 3, 3], {}, 2),
        ("ConvTranspose", [2, 3, 3], dict(group=2), 2),
    ],
)
def test_input_channels_are_what_the_weight_takes(op: str, w_shape: list, attrs: dict, takes: int) -> None:
    """A symbolic channel dim is guarded to the weight's (onnxruntime runs only that one); two
    different numbers are an error, as onnxruntime refuses the model."""
    model = one_node(op, [("x", FLOAT, [1, "c", 5]), ("w", FLOAT, w_shape)], attrs=attrs, opset=11)
    rt = Runtime(model)
    w = np.zeros(w_shape, np.float32)
    runs = {c for c in (1, 2, 3, 4) if rt.run({"x": np.zeros((1, c, 5), np.float32), "w": w}) is not None}
    assert runs == {takes}
    r = shapeinfer.infer(model)
    assert [(g.kind, str(g.lhs), g.rhs) for g in r.guards()] == [("equality", "c", takes)]
    wrong = one_node(op, [("x", FLOAT, [1, takes + 1, 5]), ("w", FLOAT, w_shape)], attrs=attrs, opset=11)
    assert "G002" in {d.code for d in shapeinfer.infer(wrong).diagnostics if d.severity == "error"}
