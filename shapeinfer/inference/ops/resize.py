"""Resize and Upsample.

Output sizes follow onnx's and onnxruntime's arithmetic to the letter:

- scales: ``floor(float32(in) * float32(scale))``. The operator document multiplies by the
  region of interest's extent too for ``tf_crop_and_resize``, but onnxruntime, onnx's own
  inference and its reference implementation all ignore the roi for the size: we follow them;
- sizes with ``keep_aspect_ratio_policy`` stretch: the sizes; not_larger / not_smaller:
  ``scale = min / max(sizes[i] / in[d])`` over the resized axes and
  ``out = floor(scale * in + 0.5)`` (round half up).

For a symbolic input dim and a scale whose float32 value is ``m / 2**e`` with ``e <= 10``,
``floor(in * scale)`` is ``(in*m) // 2**e`` exactly (float32 rounding of the product cannot
cross an integer while ``in*m < 2**24``); other scales give a fresh symbol.
"""

from __future__ import annotations

import math
import struct

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import dim_values, guard_sizes, norm_axis
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def f32(v: float) -> float:
    """``v`` rounded to float32."""
    return struct.unpack("f", struct.pack("f", v))[0]


def scaled_dim(size: D.Dim, scale: float) -> D.Dim | None:
    """``floor(size * scale)`` in float32 arithmetic, symbolically when exact; None otherwise."""
    s = f32(float(scale))
    if not math.isfinite(s) or s <= 0:
        raise InferenceError(codes.RESIZE_INVALID, f"scale {scale} must be positive")
    if type(size) is int:
        return math.floor(f32(f32(float(size)) * s))
    m, e = s.as_integer_ratio()  # s == m / e with e a power of two
    if e > 1024:
        return None
    return D.floordiv(D.mul(size, m), e)


def _scales_out(ctx, shape: tuple, scales: list, axes: list[int]) -> list:
    out = list(shape)
    for a, sc in zip(axes, scales):
        d = None if sc is None else scaled_dim(shape[a], sc)
        out[a] = ctx.fresh() if d is None else d
    return out


def _sizes_out(ctx, shape: tuple, sizes: tuple, axes: list[int], policy: str) -> list:
    out = list(shape)
    if policy == "stretch":
        for a, v in zip(axes, sizes):
            out[a] = ctx.fresh() if v is None else v
        return out
    if policy not in ("not_larger", "not_smaller"):
        raise InferenceError(codes.RESIZE_INVALID, f"keep_aspect_ratio_policy {policy!r}")
    if any(type(v) is not int for v in sizes) or any(type(shape[a]) is not int for a in axes):
        for a in axes:
            out[a] = ctx.fresh()
        return out
    ratios = [v / shape[a] for a, v in zip(axes, sizes)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    for a in axes:
        out[a] = int(scale * shape[a] + 0.5)
    return out


@register("Resize", since=10)
def resize(ctx, ins: list) -> list:
    """Resize-10 (X, scales) and 11+ (X, roi, scales, sizes; axes and keep_aspect_ratio_policy from 18)."""
    x = ins[0]
    if ctx.version < 11:
        scales_f, sizes_f = ins[1] if len(ins) > 1 else None, None
    else:
        scales_f = ins[2] if len(ins) > 2 else None
        sizes_f = ins[3] if len(ins) > 3 else None
    # an empty tensor stands for an omitted scales / sizes input
    if scales_f is not None and scales_f.shape is not None and scales_f.shape[:1] == (0,):
        scales_f = None
    if sizes_f is not None and sizes_f.shape is not None and sizes_f.shape[:1] == (0,):
        sizes_f = None
    if x.shape is None:
        return [Fact(x.dtype, None)]
    r = len(x.shape)
    axes = ctx.attr("axes") if ctx.version >= 18 else None
    axes = list(range(r)) if axes is None else [norm_axis(a, r) for a in axes]
    if sizes_f is not None:
        vals = dim_values(sizes_f)
        if vals is None:
            return [tensor(x.dtype, _fresh_axes(ctx, x.shape, axes))]
        if len(vals) != len(axes):
            raise InferenceError(codes.RESIZE_INVALID, f"Resize sizes has {len(vals)} entries for {len(axes)} axes")
        bad = [v for v in vals if type(v) is int and v < 1]
        if bad:
            raise InferenceError(codes.RESIZE_INVALID, f"Resize sizes {list(vals)}: a size below 1")
        guard_sizes(ctx, vals, 1)  # onnxruntime refuses a size of 0 (its scale is 0)
        return [tensor(x.dtype, _sizes_out(ctx, x.shape, vals, axes, ctx.attr("keep_aspect_ratio_policy", "stretch")))]
    if scales_f is None:
        raise InferenceError(codes.RESIZE_INVALID, "Resize needs scales or sizes")
    scales = scales_f.value
    if scales is None:
        return [tensor(x.dtype, _fresh_axes(ctx, x.shape, axes))]
    if len(scales) != len(axes):
        raise InferenceError(codes.RESIZE_INVALID, f"Resize scales has {len(scales)} entries for {len(axes)} axes")
    return [tensor(x.dtype, _scales_out(ctx, x.shape, [_num(v) for v in scales], axes))]


def _num(v):
    return float(v) if type(v) in (int, float) else None


def _fresh_axes(ctx, shape: tuple, axes: list[int]) -> list:
    out = list(shape)
    for a in axes:
        out[a] = ctx.fresh()
    return out


@register("Upsample", since=1)
def upsample_v1(ctx, ins: list) -> list:
    """Upsample-1: NCHW with ``height_scale`` / ``width_scale``."""
    x = ins[0]
    if x.shape is None:
        return [tensor(x.dtype, ctx.fresh_shape(4))]
    if len(x.shape) != 4:
        raise InferenceError(codes.RESIZE_INVALID, "Upsample-1 input must be 4-D")
    scales = [1.0, 1.0, ctx.attr("height_scale", 1.0), ctx.attr("width_scale", 1.0)]
    return [tensor(x.dtype, _scales_out(ctx, x.shape, scales, [0, 1, 2, 3]))]


@register("Upsample", since=7)
def upsample_v7(ctx, ins: list) -> list:
    """Upsample-7 (``scales`` attribute) and 9/10 (``scales`` input): ``floor(in * scale)``."""
    x = ins[0]
    if ctx.version >= 9:
        sf = ins[1] if len(ins) > 1 else None
        scales = None if sf is None else sf.value
    else:
        scales = ctx.attr("scales")
    if x.shape is None:
        return [Fact(x.dtype, None)]
    r = len(x.shape)
    if scales is None:
        return [tensor(x.dtype, ctx.fresh_shape(r))]
    if len(scales) != r:
        raise InferenceError(codes.RESIZE_INVALID, f"Upsample scales has {len(scales)} entries for rank {r}")
    return [tensor(x.dtype, _scales_out(ctx, x.shape, [_num(v) for v in scales], list(range(r))))]


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Resize", shape_inputs={3: "exact"})
