"""Resize / Upsample output sizes: float32 rounding of ``in * scale``, sizes with the aspect-ratio
policies, axes; checked against onnxruntime, statically and with symbolic input dims."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from support.op_oracle import Runtime, inferred, one_node_ordered

from shapeinfer.inference.ops.resize import scaled_dim
from shapeinfer.symbolic import dims as D

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
SCALES = [0.25, 0.3, 0.5, 0.6, 0.7, 0.75, 1.0, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0, 1 / 3]


def test_scaled_dim_uses_float32_products() -> None:
    # 0.7f is 0.69999999: 10 * 0.7f rounds to 7.0 in float32 (double arithmetic gives 6.9999...)
    assert scaled_dim(10, 0.7) == 7
    assert scaled_dim(3, 0.6) == 1
    # a dyadic scale gives an exact symbolic floor division; others stay open
    n = D.sym("n")
    half, three_halves = scaled_dim(n, 0.5), scaled_dim(n, 1.5)
    for v in range(1, 40):
        assert D.evaluate(half, {"n": v}) == v // 2
        assert D.evaluate(three_halves, {"n": v}) == (3 * v) // 2
    assert scaled_dim(n, 0.7) is None


@pytest.fixture(scope="module")
def scales_runtime() -> Runtime:
    model = one_node_ordered("Resize", ["x", "", "s"], [("x", FLOAT, [1, 1, "h", "w"]), ("s", FLOAT, [4])], opset=13)
    return Runtime(model)


@pytest.mark.parametrize("scale", SCALES)
def test_scales_against_onnxruntime(scales_runtime: Runtime, scale: float) -> None:
    sc = np.array([1, 1, scale, scale], np.float32)
    sym = one_node_ordered("Resize", ["x", "", "s"], [("x", FLOAT, [1, 1, "h", "w"])], {"s": sc}, opset=13)
    for h in range(1, 13):
        out = scales_runtime.run({"x": np.zeros((1, 1, h, h + 1), np.float32), "s": sc})
        if out is None or 0 in out[0].shape:
            continue  # onnxruntime rejects an empty output
        want = out[0].shape
        static = one_node_ordered("Resize", ["x", "", "s"], [("x", FLOAT, [1, 1, h, h + 1])], {"s": sc}, opset=13)
        assert inferred(static)[0] == want, (h, scale)
        got = inferred(sym, {"h": h, "w": h + 1})[0]
        if got[2] is not None:
            assert got == want, (h, scale)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("sizes", [(7, 8), (3, 9), (1, 2), (10, 10)])
def test_sizes_with_aspect_policy_against_onnxruntime(policy: str, sizes: tuple) -> None:
    attrs = dict(keep_aspect_ratio_policy=policy, axes=[2, 3])
    sz = np.array(sizes, np.int64)
    for h, w in [(2, 3), (4, 4), (5, 2)]:
        model = one_node_ordered(
            "Resize", ["x", "", "", "sz"], [("x", FLOAT, [1, 1, h, w])], {"sz": sz}, attrs=attrs, opset=18
        )
        out = Runtime(model).run({"x": np.zeros((1, 1, h, w), np.float32)})
        assert out is not None
        assert inferred(model)[0] == out[0].shape, (policy, sizes, h, w)


def test_axes_subset_with_scales() -> None:
    sc = np.array([2.0, 0.5], np.float32)
    model = one_node_ordered(
        "Resize", ["x", "", "s"], [("x", FLOAT, ["b", 3, "h", "w"])], {"s": sc}, attrs=dict(axes=[3, 2]), opset=18
    )
    assert inferred(model, {"b": 2, "h": 9, "w": 5})[0] == (2, 3, 4, 10)


def test_tf_crop_and_resize_size_ignores_the_roi_like_onnxruntime() -> None:
    roi = np.array([0, 0, 0.2, 0.2, 1, 1, 0.8, 0.8], np.float32)
    sc = np.array([1, 1, 2, 2], np.float32)
    attrs = dict(coordinate_transformation_mode="tf_crop_and_resize", mode="linear")
    model = one_node_ordered(
        "Resize", ["x", "roi", "s"], [("x", FLOAT, [1, 1, 4, 4])], {"roi": roi, "s": sc}, attrs, opset=13
    )
    want = Runtime(model).run({"x": np.zeros((1, 1, 4, 4), np.float32)})[0].shape
    assert inferred(model)[0] == want == (1, 1, 8, 8)


def test_upsample_v9_against_onnxruntime() -> None:
    sc = np.array([1, 1, 1.5, 2.0], np.float32)
    model = one_node_ordered("Upsample", ["x", "s"], [("x", FLOAT, [1, 1, "h", "w"])], {"s": sc}, opset=9)
    rt = Runtime(model)
    for h, w in [(1, 1), (3, 5), (4, 2)]:
        want = rt.run({"x": np.zeros((1, 1, h, w), np.float32)})[0].shape
        assert inferred(model, {"h": h, "w": w})[0] == want
