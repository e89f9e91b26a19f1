"""com.microsoft int8 ops in cuBLASLt memory orders (CUDA only): QuantizeWithOrder,
DequantizeWithOrder, QOrderedMatMul, QOrderedGelu, QOrderedLayerNormalization, QOrderedAttention,
QOrderedLongformerAttention.

The ``order_*`` attributes name a memory layout, not a shape: dims are the logical ones of
onnxruntime's schemas (docs/ContribOperators.md). QOrderedMatMul is numpy matmul of A (input 0)
and B (input 2); QOrderedAttention's output is ``(batch, seq, hidden)`` with hidden the third
``qkv_hidden_sizes`` entry or V_weight's last dim; the others keep their input's shape. Every
quantized output is int8; DequantizeWithOrder's type is ``to``.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.contrib.quantization import MS, arg
from shapeinfer.inference.ops.linalg import matmul_shape
from shapeinfer.symbolic.facts import Fact, tensor

INT8 = TensorProto.INT8


@register(["QuantizeWithOrder", "QOrderedGelu", "QOrderedLayerNormalization", "QOrderedLongformerAttention"], domain=MS)
def qordered_like_input(ctx, ins: list) -> list:
    """QuantizeWithOrder / QOrderedGelu / QOrderedLayerNormalization / QOrderedLongformerAttention:
    the input's shape, int8."""
    return [tensor(INT8, ins[0].shape)]


@register("DequantizeWithOrder", domain=MS)
def dequantize_with_order(ctx, ins: list) -> list:
    """DequantizeWithOrder: the input's shape, type ``to`` (the scale's type without it)."""
    scale = arg(ins, 1)
    dt = ctx.attr("to", 0) or (scale.dtype if scale is not None else TensorProto.FLOAT)
    return [tensor(dt, ins[0].shape)]


@register("QOrderedMatMul", domain=MS)
def qordered_matmul(ctx, ins: list) -> list:
    """QOrderedMatMul: numpy matmul of A (input 0) and B (input 2), int8."""
    a, b = ins[0], arg(ins, 2)
    if a.shape is None or b is None or b.shape is None:
        return [Fact(INT8, None)]
    return [tensor(INT8, matmul_shape(ctx, a.shape, b.shape))]


@register("QOrderedAttention", domain=MS)
def qordered_attention(ctx, ins: list) -> list:
    """QOrderedAttention: ``(batch, seq, hidden)`` int8."""
    x, v_weight = ins[0], arg(ins, 7)
    if x.shape is not None and len(x.shape) != 3:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"QOrderedAttention input must be 3-D, got rank {len(x.shape)}"
        )
    sizes = ctx.attr("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3:
            raise InferenceError(
                codes.ATTENTION_OR_FUSED_OP_INVALID, f"QOrderedAttention qkv_hidden_sizes {list(sizes)} needs 3 entries"
            )
        hidden = sizes[2]
    elif v_weight is not None and v_weight.shape is not None and len(v_weight.shape) == 2:
        hidden = v_weight.shape[1]
    else:
        hidden = ctx.fresh()
    batch, seq = (x.shape[0], x.shape[1]) if x.shape is not None else (ctx.fresh(), ctx.fresh())
    return [tensor(INT8, (batch, seq, hidden))]
