"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ai.onnx).

Values: a per-tensor QuantizeLinear / DequantizeLinear over tracked values computes them the way
onnxruntime does in float32 (``saturate(round_half_even(x / scale) + zero_point)`` and
``float32(x - zero_point) * scale``), so a small integer that a QDQ pair wraps (a Range delta, a
shape constant) keeps its value. Float32 division and multiplication are done in float64 and
rounded once to float32, which gives the correctly rounded float32 result (53 >= 2*24 + 2 bits).
A quotient whose rounding could depend on how the kernel divides (``x / s`` or ``x * (1/s)``)
leaves the value unknown.
"""

from __future__ import annotations

import math
import struct

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic.facts import Fact, tensor

FLOAT = TensorProto.FLOAT

#: Saturation ranges of the integer types a quantized value may have.
QUANT_RANGES = {
    TensorProto.INT8: (-128, 127),
    TensorProto.UINT8: (0, 255),
    TensorProto.INT16: (-32768, 32767),
    TensorProto.UINT16: (0, 65535),
    TensorProto.INT4: (-8, 7),
    TensorProto.UINT4: (0, 15),
}
_DEQUANT_INPUTS = {**QUANT_RANGES, TensorProto.INT32: (-(2**31), 2**31 - 1)}


def _f32(v: float) -> float:
    """``v`` rounded to float32 (inf when out of range)."""
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def per_tensor_value(f: Fact | None):
    """The one known value of a per-tensor quantization parameter (a scalar or one-element
    tensor), else None."""
    if f is None or f.shape is None or len(f.shape) > 1 or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    return v if type(v) in (int, float) else None


def _numbers(f: Fact) -> tuple | None:
    if f.value is None or not all(type(v) in (int, float) and math.isfinite(v) for v in f.value):
        return None
    return f.value


def quantize_values(x: Fact, scale: Fact | None, zero_point: Fact | None, out_dtype: int) -> tuple | None:
    """The values of a per-tensor float32 QuantizeLinear as onnxruntime computes them, or None."""
    rng = QUANT_RANGES.get(out_dtype)
    xs = _numbers(x)
    s = per_tensor_value(scale)
    zp = 0 if zero_point is None else per_tensor_value(zero_point)
    if rng is None or xs is None or x.dtype != FLOAT or type(s) is not float or type(zp) is not int:
        return None
    if scale.dtype != FLOAT or not math.isfinite(s) or s <= 0:
        return None
    s = _f32(s)
    inv = _f32(1.0 / s)
    out = []
    for v in xs:
        v = _f32(float(v))
        q1, q2 = _f32(v / s), _f32(v * inv)
        if not (math.isfinite(q1) and math.isfinite(q2)):
            return None
        r = round(q1)  # round half to even, as onnxruntime's kernels (cvtps / nearbyint) do
        if round(q2) != r:
            return None
        out.append(min(max(r + zp, rng[0]), rng[1]))
    return tuple(out)


def dequantize_values(x: Fact, scale: Fact | None, zero_point: Fact | None, out_dtype: int) -> tuple | None:
    """The values of a per-tensor DequantizeLinear to float32 as onnxruntime computes them, or None."""
    if x.dtype not in _DEQUANT_INPUTS or out_dtype != FLOAT or scale is None or scale.dtype != FLOAT:
        return None
    s = per_tensor_value(scale)
    zp = 0 if zero_point is None else per_tensor_value(zero_point)
    xs = _numbers(x)
    if xs is None or type(s) is not float or type(zp) is not int or not all(type(v) is int for v in xs):
        return None
    s = _f32(s)
    out = []
    for v in xs:
        d = v - zp
        if abs(d) > 2**24:  # not exact in float32: the kernel's conversion would round
            return None
        out.append(_f32(d * s))
    return tuple(out)


@register("QuantizeLinear", since=10)
def quantize_linear(ctx, ins: list) -> list:
    """QuantizeLinear: x's shape; type of y_zero_point, else ``output_dtype``, else uint8; values
    of a per-tensor quantization computed as onnxruntime does."""
    x = ins[0]
    scale = ins[1] if len(ins) > 1 else None
    zp = ins[2] if len(ins) > 2 else None
    if zp is not None and zp.dtype:
        dt = zp.dtype
    else:
        dt = ctx.attr("output_dtype", 0) or TensorProto.UINT8
    value = None
    # Blocked scales are not per-tensor; another ``precision`` divides in another type.
    if not ctx.attr("block_size", 0) and ctx.attr("precision", 0) in (0, FLOAT):
        value = quantize_values(x, scale, zp, dt)
    return [tensor(dt, x.shape, value)]


@register("DequantizeLinear", since=10)
def dequantize_linear(ctx, ins: list) -> list:
    """DequantizeLinear: x's shape; type ``output_dtype``, else x_scale's (float before 19); values
    of a per-tensor dequantization to float32 computed as onnxruntime does."""
    x, scale = ins[0], ins[1]
    zp = ins[2] if len(ins) > 2 else None
    dt = ctx.attr("output_dtype", 0) or (scale.dtype if scale is not None and ctx.version >= 19 else FLOAT)
    value = None
    if not ctx.attr("block_size", 0):
        value = dequantize_values(x, scale, zp, dt)
    return [tensor(dt, x.shape, value)]


@register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, ins: list) -> list:
    """DynamicQuantizeLinear: y uint8 like x, scalar float scale and uint8 zero point."""
    x = ins[0]
    return [tensor(TensorProto.UINT8, x.shape), tensor(FLOAT, ()), tensor(TensorProto.UINT8, ())]
