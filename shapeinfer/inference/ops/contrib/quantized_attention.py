"""com.microsoft quantized BERT blocks: QAttention and QEmbedLayerNormalization.

- QAttention: output ``(batch, seq, hidden)`` with ``hidden = bias.shape[0] / 3``, typed like the
  bias; present ``(2, batch, num_heads, past_seq + seq, head_size)`` (past_seq 0 without past, the
  past's shape itself with past_present_share_buffer).
- QEmbedLayerNormalization: ``(batch, seq, hidden)`` float with hidden the word embedding's last
  dim, and the int32 mask index ``(batch,)``.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.contrib.quantization import MS, arg, dtype_of
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def _hidden(ctx, bias: Fact | None, weight: Fact | None) -> D.Dim:
    """``3 * hidden`` is the bias's length (and the weight's second dim): hidden is a third of it."""
    for f, axis in ((bias, 0), (weight, 1)):
        if f is not None and f.shape is not None and len(f.shape) == axis + 1:
            three_h = f.shape[axis]
            if type(three_h) is int and three_h % 3:
                raise InferenceError(
                    codes.ATTENTION_OR_FUSED_OP_INVALID, f"QAttention bias length {three_h} is not a multiple of 3"
                )
            return D.floordiv(three_h, 3)
    return ctx.fresh()


@register("QAttention", domain=MS)
def qattention(ctx, ins: list) -> list:
    """QAttention: ``(batch, seq, hidden)`` and the optional present key/value cache."""
    x, weight, bias, past = ins[0], arg(ins, 1), arg(ins, 2), arg(ins, 8)
    dtype = dtype_of(bias) or dtype_of(arg(ins, 3), TensorProto.FLOAT)
    if x.shape is not None and len(x.shape) != 3:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"QAttention input must be 3-D, got rank {len(x.shape)}"
        )
    batch, seq = (x.shape[0], x.shape[1]) if x.shape is not None else (ctx.fresh(), ctx.fresh())
    hidden = _hidden(ctx, bias, weight)
    out = tensor(dtype, (batch, seq, hidden))
    if ctx.num_outputs < 2:
        return [out]
    heads = ctx.attr("num_heads")
    if heads is None or heads <= 0:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "QAttention needs a positive num_heads")
    if past is not None and past.shape is not None and len(past.shape) == 5:
        if ctx.attr("past_present_share_buffer", 0):
            return [out, tensor(dtype, past.shape)]
        p = past.shape
        return [out, tensor(dtype, (p[0], p[1], p[2], D.add(p[3], seq), p[4]))]
    if past is not None:
        return [out, tensor(dtype, (2, batch, heads, ctx.fresh(), ctx.fresh()))]
    return [out, tensor(dtype, (2, batch, heads, seq, D.floordiv(hidden, heads)))]


@register("QEmbedLayerNormalization", domain=MS)
def qembed_layer_norm(ctx, ins: list) -> list:
    """QEmbedLayerNormalization: ``(batch, seq, hidden)`` float and the int32 mask index ``(batch,)``."""
    ids, word = ins[0], arg(ins, 2)
    dtype = dtype_of(arg(ins, 8), TensorProto.FLOAT)
    if ids.shape is not None and len(ids.shape) != 2:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID,
            f"QEmbedLayerNormalization input_ids must be 2-D, got rank {len(ids.shape)}",
        )
    batch, seq = (ids.shape[0], ids.shape[1]) if ids.shape is not None else (ctx.fresh(), ctx.fresh())
    hidden = word.shape[1] if word is not None and word.shape is not None and len(word.shape) == 2 else ctx.fresh()
    return [tensor(dtype, (batch, seq, hidden)), tensor(TensorProto.INT32, (batch,))]
