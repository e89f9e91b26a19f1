"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ai.onnx)."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.facts import tensor
from shapeinfer.registry import register

FLOAT = TensorProto.FLOAT


@register("QuantizeLinear", since=10)
def quantize_linear(ctx, ins: list) -> list:
    """QuantizeLinear: x's shape; type of y_zero_point, else ``output_dtype``, else uint8."""
    x = ins[0]
    zp = ins[2] if len(ins) > 2 else None
    if zp is not None and zp.dtype:
        dt = zp.dtype
    else:
        dt = ctx.attr("output_dtype", 0) or TensorProto.UINT8
    return [tensor(dt, x.shape)]


@register("DequantizeLinear", since=10)
def dequantize_linear(ctx, ins: list) -> list:
    """DequantizeLinear: x's shape; type ``output_dtype``, else x_scale's (float before 19)."""
    x, scale = ins[0], ins[1]
    dt = ctx.attr("output_dtype", 0) or (scale.dtype if scale is not None and ctx.version >= 19 else FLOAT)
    return [tensor(dt, x.shape)]


@register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, ins: list) -> list:
    """DynamicQuantizeLinear: y uint8 like x, scalar float scale and uint8 zero point."""
    x = ins[0]
    return [tensor(TensorProto.UINT8, x.shape), tensor(FLOAT, ()), tensor(TensorProto.UINT8, ())]
