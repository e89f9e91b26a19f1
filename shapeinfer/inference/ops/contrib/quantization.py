"""com.microsoft quantized ops: weight-only and dynamic matmuls, the QLinear* family, QGemm,
com.microsoft QuantizeLinear / DequantizeLinear, DynamicQuantizeLSTM, QMoE.

Shapes and output types follow onnxruntime's contrib op schemas (docs/ContribOperators.md):

- MatMulNBits: ``A.shape[:-1] + [N]`` (attribute N; A's last dim is K), A's type.
- GatherBlockQuantized: Gather's splice ``data[:g] + indices + data[g+1:]`` on gather_axis, the
  scales' type; uint8 data packs ``8 / bits`` values per byte along its last dim (bits 4 by
  default), which the output unpacks.
- MatMulIntegerToFloat / DynamicQuantizeMatMul / MatMulInteger16: numpy matmul of A and B, typed
  like a_scale / A / int32; MatMulBlockQuantizedFp4Weight / Fp8Weight: ``A.shape[:-1] + [N]``.
- MulInteger: broadcasting, int32; ReduceSumInteger / QLinearReduceMean: ``axes`` / ``keepdims``.
- QLinearAdd / QLinearMul / QLinearWhere: broadcasting; QLinearSigmoid / LeakyRelu / Softmax: X's
  shape; QLinearConcat: Concat of every third input from 2; QLinearConv / QLinearAveragePool /
  QLinearGlobalAveragePool: the ai.onnx formulas, NHWC with ``channels_last``.
- QGemm: ``(M, N)``, float unless y_zero_point is given.
- DynamicQuantizeLSTM: LSTM's outputs, W ``[num_directions, input_size, 4*hidden]``.
- QMoE: the input's shape and type.

Quantized values are not tracked through these ops (requantization changes them), except the
per-tensor com.microsoft QuantizeLinear / DequantizeLinear, computed like their ai.onnx forms.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import broadcast_shapes, norm_axis
from shapeinfer.inference.ops.conv import conv_kernel, conv_like, spatial_dims
from shapeinfer.inference.ops.gather_slice import concat
from shapeinfer.inference.ops.linalg import matmul_shape
from shapeinfer.inference.ops.quantization import dequantize_values, quantize_values
from shapeinfer.inference.ops.rnn import recurrent_dims
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

MS = "com.microsoft"
FLOAT = TensorProto.FLOAT
INT32 = TensorProto.INT32
UINT8 = TensorProto.UINT8


def arg(ins: list, i: int) -> Fact | None:
    """Input ``i``, or None when the node omits it."""
    return ins[i] if i < len(ins) else None


def dtype_of(f: Fact | None, default: int = 0) -> int:
    """The element type of ``f`` when known, else ``default``."""
    return f.dtype if f is not None and f.dtype else default


# ------------------------------------------------------------------------------ matmuls


@register("MatMulNBits", domain=MS)
def matmul_nbits(ctx, ins: list) -> list:
    """MatMulNBits: ``A.shape[:-1] + [N]``; A's last dim must be K."""
    a = ins[0]
    n, k = ctx.attr("N"), ctx.attr("K")
    if n is None or k is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "MatMulNBits needs the N and K attributes")
    if a.shape is None:
        return [Fact(a.dtype, None)]
    if not a.shape:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "MatMulNBits of a scalar")
    ctx.unify(a.shape[-1], k)
    return [tensor(a.dtype, tuple(a.shape[:-1]) + (n,))]


@register("MatMulIntegerToFloat", domain=MS)
def matmul_integer_to_float(ctx, ins: list) -> list:
    """MatMulIntegerToFloat: numpy matmul of A and B, typed like a_scale."""
    a, b = ins[0], arg(ins, 1)
    dtype = dtype_of(arg(ins, 2), FLOAT)
    if a.shape is None or b is None or b.shape is None:
        return [Fact(dtype, None)]
    return [tensor(dtype, matmul_shape(ctx, a.shape, b.shape))]


@register("DynamicQuantizeMatMul", domain=MS)
def dynamic_quantize_matmul(ctx, ins: list) -> list:
    """DynamicQuantizeMatMul: numpy matmul of A and B, A's type."""
    a, b = ins[0], arg(ins, 1)
    if a.shape is None or b is None or b.shape is None:
        return [Fact(a.dtype, None)]
    return [tensor(a.dtype, matmul_shape(ctx, a.shape, b.shape))]


@register("MatMulInteger16", domain=MS)
def matmul_integer16(ctx, ins: list) -> list:
    """MatMulInteger16: numpy matmul of A and B; int32, uint32 when both are uint16."""
    a, b = ins[0], arg(ins, 1)
    unsigned = a.dtype == TensorProto.UINT16 and b is not None and b.dtype == TensorProto.UINT16
    dtype = TensorProto.UINT32 if unsigned else INT32
    if a.shape is None or b is None or b.shape is None:
        return [Fact(dtype, None)]
    return [tensor(dtype, matmul_shape(ctx, a.shape, b.shape))]


@register(["MatMulBlockQuantizedFp4Weight", "MatMulBlockQuantizedFp8Weight"], domain=MS)
def matmul_block_quantized(ctx, ins: list) -> list:
    """MatMulBlockQuantizedFp4Weight / Fp8Weight: ``A.shape[:-1] + [N]`` with B ``[N, K]`` (FP4 packs
    two values a byte: ``[N, K/2]``), A's type."""
    a, b = ins[0], arg(ins, 1)
    if a.shape is None:
        return [Fact(a.dtype, None)]
    if not a.shape:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, f"{ctx.op_type} of a scalar")
    if b is None or b.shape is None:
        return [tensor(a.dtype, tuple(a.shape[:-1]) + (ctx.fresh(),))]
    if len(b.shape) != 2:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, f"{ctx.op_type} weight must be 2-D")
    per_byte = 2 if ctx.op_type == "MatMulBlockQuantizedFp4Weight" else 1
    ctx.unify(a.shape[-1], D.mul(b.shape[1], per_byte))
    return [tensor(a.dtype, tuple(a.shape[:-1]) + (b.shape[0],))]


@register("QGemm", domain=MS)
def qgemm(ctx, ins: list) -> list:
    """QGemm: ``(M, N)`` with transA / transB; y_zero_point's type, float when it is omitted."""
    a, b = ins[0], arg(ins, 3)
    dtype = dtype_of(arg(ins, 8), FLOAT)
    if a.shape is None or b is None or b.shape is None:
        return [tensor(dtype, ctx.fresh_shape(2))]
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, "QGemm inputs A and B must be 2-D")
    m, k1 = a.shape[::-1] if ctx.attr("transA", 0) else a.shape
    k2, n = b.shape[::-1] if ctx.attr("transB", 0) else b.shape
    ctx.unify(k1, k2)
    return [tensor(dtype, (m, n))]


# ------------------------------------------------------------------------------ gathers


@register("GatherBlockQuantized", domain=MS)
def gather_block_quantized(ctx, ins: list) -> list:
    """GatherBlockQuantized: Gather's splice on gather_axis of the unpacked data, scales' type."""
    data, idx, scales = ins[0], arg(ins, 1), arg(ins, 2)
    dtype = dtype_of(scales)
    if data.shape is None or idx is None or idx.shape is None:
        return [Fact(dtype, None)]
    r = len(data.shape)
    shape = list(data.shape)
    if data.dtype == UINT8 and r:
        bits = ctx.attr("bits", 4)
        if bits not in (2, 4, 8):
            raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"GatherBlockQuantized bits {bits} for uint8 data")
        shape[-1] = D.mul(shape[-1], 8 // bits)
    axis = norm_axis(ctx.attr("gather_axis", 0), r)
    norm_axis(ctx.attr("quantize_axis", 1), r)
    return [tensor(dtype, shape[:axis] + list(idx.shape) + shape[axis + 1 :])]


# ------------------------------------------------------------------------------ QuantizeLinear / DequantizeLinear


@register("QuantizeLinear", domain=MS)
def ms_quantize_linear(ctx, ins: list) -> list:
    """com.microsoft QuantizeLinear: x's shape, y_zero_point's type (uint8 without one)."""
    x, scale, zp = ins[0], arg(ins, 1), arg(ins, 2)
    dt = dtype_of(zp, UINT8)
    return [tensor(dt, x.shape, quantize_values(x, scale, zp, dt))]


@register("DequantizeLinear", domain=MS)
def ms_dequantize_linear(ctx, ins: list) -> list:
    """com.microsoft DequantizeLinear: x's shape, x_scale's type."""
    x, scale, zp = ins[0], arg(ins, 1), arg(ins, 2)
    dt = dtype_of(scale, FLOAT)
    return [tensor(dt, x.shape, dequantize_values(x, scale, zp, dt))]


# ------------------------------------------------------------------------------ QLinear elementwise


@register(["QLinearAdd", "QLinearMul"], domain=MS)
def qlinear_binary(ctx, ins: list) -> list:
    """QLinearAdd / QLinearMul: A (input 0) and B (input 3) broadcast, A's type."""
    a, b = ins[0], arg(ins, 3)
    shapes = [a.shape, None if b is None else b.shape]
    return [tensor(a.dtype, broadcast_shapes(ctx, shapes))]


@register("MulInteger", domain=MS)
def mul_integer(ctx, ins: list) -> list:
    """MulInteger: A (input 0) and B (input 2) broadcast, int32."""
    a, b = ins[0], arg(ins, 2)
    return [tensor(INT32, broadcast_shapes(ctx, [a.shape, None if b is None else b.shape]))]


def _reduced(ctx, x: Fact, dtype: int) -> Fact:
    """``x`` reduced over the ``axes`` attribute (all axes without it) with ``keepdims`` (default 1)."""
    if x.shape is None:
        return Fact(dtype, None)
    r = len(x.shape)
    axes = ctx.attr("axes")
    ax = {norm_axis(a, r) for a in axes} if axes else set(range(r))
    keep = ctx.attr("keepdims", 1)
    return tensor(dtype, tuple(1 if i in ax else d for i, d in enumerate(x.shape) if keep or i not in ax))


@register("ReduceSumInteger", domain=MS)
def reduce_sum_integer(ctx, ins: list) -> list:
    """ReduceSumInteger: the reduced shape; int32 (uint32 for uint8 data)."""
    x = ins[0]
    return [_reduced(ctx, x, TensorProto.UINT32 if x.dtype == UINT8 else INT32)]


@register("QLinearReduceMean", domain=MS)
def qlinear_reduce_mean(ctx, ins: list) -> list:
    """QLinearReduceMean: the reduced shape, the data's type."""
    return [_reduced(ctx, ins[0], ins[0].dtype)]


@register(["QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"], domain=MS)
def qlinear_unary(ctx, ins: list) -> list:
    """QLinearSigmoid / QLinearLeakyRelu / QLinearSoftmax: X's shape and type."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


@register("QLinearWhere", domain=MS)
def qlinear_where(ctx, ins: list) -> list:
    """QLinearWhere: condition, X (input 1) and Y (input 4) broadcast; X's type."""
    cond, x, y = ins[0], arg(ins, 1), arg(ins, 4)
    dtype = dtype_of(x) or dtype_of(arg(ins, 8))
    return [tensor(dtype, broadcast_shapes(ctx, [f.shape if f is not None else None for f in (cond, x, y)]))]


@register("QLinearConcat", domain=MS)
def qlinear_concat(ctx, ins: list) -> list:
    """QLinearConcat: Concat of the tensors at inputs 2, 5, 8, ...; Y_zero_point's type."""
    if not ctx.has_attr("axis"):
        raise InferenceError(codes.CONCAT_INVALID, "QLinearConcat needs an axis attribute")
    tensors = [ins[i] for i in range(2, len(ins), 3)]
    if not tensors:
        raise InferenceError(codes.CONCAT_INVALID, "QLinearConcat has no inputs to concatenate")
    out = concat(ctx, tensors)[0]
    dtype = dtype_of(arg(ins, 1)) or out.dtype
    return [tensor(dtype, out.shape)]


# ------------------------------------------------------------------------------ QLinear conv / pools


@register("QLinearConv", domain=MS)
def ms_qlinear_conv(ctx, ins: list) -> list:
    """com.microsoft QLinearConv: Conv's dims over x and w (input 3), NHWC with channels_last;
    y_zero_point's type."""
    x, w = ins[0], arg(ins, 3)
    dtype = dtype_of(arg(ins, 7), x.dtype)
    if not ctx.attr("channels_last", 0):
        return conv_like(ctx, x, w, dtype)
    if x.shape is None:
        return [Fact(dtype, None)]
    if len(x.shape) < 3:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, "QLinearConv input must have rank >= 3")
    n_sp = len(x.shape) - 2
    m = w.shape[0] if w is not None and w.shape else ctx.fresh()
    kernel = conv_kernel(ctx, w, n_sp)
    sizes = x.shape[1:-1]
    sp = ctx.fresh_shape(n_sp) if kernel is None else tuple(spatial_dims(ctx, sizes, kernel))
    return [tensor(dtype, (x.shape[0],) + tuple(sp) + (m,))]


@register("QLinearAveragePool", domain=MS)
def qlinear_average_pool(ctx, ins: list) -> list:
    """QLinearAveragePool: AveragePool's dims (ceil_mode, pads, auto_pad), NHWC with channels_last."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if len(x.shape) < 3:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "QLinearAveragePool input must have rank >= 3")
    kernel = ctx.attr("kernel_shape")
    if kernel is None:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "QLinearAveragePool needs kernel_shape")
    last = ctx.attr("channels_last", 0)
    sizes = x.shape[1:-1] if last else x.shape[2:]
    sp = tuple(spatial_dims(ctx, sizes, list(kernel), ctx.attr("ceil_mode", 0)))
    shape = (x.shape[0],) + sp + (x.shape[-1],) if last else tuple(x.shape[:2]) + sp
    return [tensor(x.dtype, shape)]


@register("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx, ins: list) -> list:
    """QLinearGlobalAveragePool: spatial dims become 1 (NHWC with channels_last)."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if len(x.shape) < 3:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "QLinearGlobalAveragePool input must have rank >= 3")
    ones = (1,) * (len(x.shape) - 2)
    if ctx.attr("channels_last", 0):
        return [tensor(x.dtype, (x.shape[0],) + ones + (x.shape[-1],))]
    return [tensor(x.dtype, tuple(x.shape[:2]) + ones)]


# ------------------------------------------------------------------------------ recurrent, experts


@register("DynamicQuantizeLSTM", domain=MS)
def dynamic_quantize_lstm(ctx, ins: list) -> list:
    """DynamicQuantizeLSTM: Y ``(seq, num_directions, batch, hidden)``, Y_h / Y_c ``(num_directions,
    batch, hidden)``; hidden_size from the attribute, else R's dim 1 (R is ``[nd, hidden, 4*hidden]``)."""
    x = ins[0]
    seq, batch, nd, hidden = recurrent_dims(ctx, x, arg(ins, 2), r_hidden_axis=1)
    state = tensor(x.dtype, (nd, batch, hidden))
    return [tensor(x.dtype, (seq, nd, batch, hidden)), state, state]


@register("QMoE", domain=MS)
def qmoe(ctx, ins: list) -> list:
    """QMoE: the input's shape and type."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]
