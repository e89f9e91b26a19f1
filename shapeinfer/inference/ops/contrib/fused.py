"""onnxruntime's fused activations and linear ops (``com.microsoft``): BiasAdd, BiasGelu,
BiasSplitGelu, FastGelu, Gelu, QuickGelu, ScaledSiLU, GatedAdd, GemmFastGelu, GemmFloat8, FusedGemm,
FusedMatMul (and its older name TransposeMatMul), FusedConv, NhwcConv, MoE, UnfoldTensor,
DynamicTimeWarping, EngramGate and the hyper-connection mixes (HyperConnectionPreMix, PostMix,
LowRankMix)."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import norm_axis
from shapeinfer.inference.ops.conv import conv, spatial_dims
from shapeinfer.inference.ops.linalg import matmul_shape
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

MS = "com.microsoft"


def _arg(ins: list, i: int) -> Fact | None:
    return ins[i] if len(ins) > i else None


@register(
    ["BiasAdd", "BiasGelu", "FastGelu", "Gelu", "QuickGelu", "ScaledSiLU", "GatedAdd", "MoE", "HyperConnectionPostMix"],
    domain=MS,
)
def like_input(ctx, ins: list) -> list:
    """Y like the first input: the activations (their bias is a 1-D tensor over the last dim),
    BiasAdd (X + bias + skip, all ``(N, S, C)``), GatedAdd (X + gate * Y), MoE (output like the
    token tensor) and HyperConnectionPostMix (mixed streams like the streams)."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


@register("EngramGate", domain=MS)
def engram_gate(ctx, ins: list) -> list:
    """EngramGate: output and gated_value_normed like the keys ``(B, S, hc_mult, H)``."""
    k = ins[0]
    same = tensor(k.dtype, k.shape)
    return [same, same]


def _branch_width(ctx, flat: D.Dim, branches: int) -> D.Dim:
    """H of flattened ``(..., C * H)`` streams with C = ``branches``."""
    if branches <= 0:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} num_branches {branches} must be positive"
        )
    if type(flat) is int and flat % branches:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} width {flat} is not a multiple of {branches} branches"
        )
    q = D.exact_div(flat, branches)
    return D.floordiv(flat, branches) if q is None else q


@register("HyperConnectionPreMix", domain=MS)
def hyper_connection_pre_mix(ctx, ins: list) -> list:
    """HyperConnectionPreMix: streams grouped ``(..., C, H)`` (no ``num_branches``) or flattened
    ``(..., C * H)`` (``num_branches`` = C) reduce to ``(..., H)``."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    branches = ctx.attr("num_branches")
    if branches is None:
        if len(x.shape) < 2:
            raise InferenceError(
                codes.ATTENTION_OR_FUSED_OP_INVALID, "HyperConnectionPreMix grouped streams need rank >= 2"
            )
        return [tensor(x.dtype, tuple(x.shape[:-2]) + (x.shape[-1],))]
    if not x.shape:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "HyperConnectionPreMix streams must not be a scalar")
    return [tensor(x.dtype, tuple(x.shape[:-1]) + (_branch_width(ctx, x.shape[-1], branches),))]


@register("HyperConnectionLowRankMix", domain=MS)
def hyper_connection_low_rank_mix(ctx, ins: list) -> list:
    """HyperConnectionLowRankMix: flattened streams ``(..., C * H)`` give pre_output ``(..., H)``,
    post_gate ``(..., C)`` and streams_out like the streams (C = ``num_branches``)."""
    x = ins[0]
    branches = ctx.attr("num_branches")
    if x.shape is None or branches is None:
        return [Fact(x.dtype, None), Fact(x.dtype, None), tensor(x.dtype, x.shape)]
    if not x.shape:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, "HyperConnectionLowRankMix streams must not be a scalar"
        )
    lead = tuple(x.shape[:-1])
    return [
        tensor(x.dtype, lead + (_branch_width(ctx, x.shape[-1], branches),)),
        tensor(x.dtype, lead + (branches,)),
        tensor(x.dtype, x.shape),
    ]


@register("BiasSplitGelu", domain=MS)
def bias_split_gelu(ctx, ins: list) -> list:
    """BiasSplitGelu: ``(N, S, D)`` -> ``(N, S, D/2)``."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if not x.shape:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "BiasSplitGelu input must not be a scalar")
    d = x.shape[-1]
    if type(d) is int and d % 2:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, f"BiasSplitGelu hidden size {d} is odd")
    half = D.exact_div(d, 2)
    return [tensor(x.dtype, tuple(x.shape[:-1]) + (D.floordiv(d, 2) if half is None else half,))]


@register("GemmFastGelu", domain=MS)
def gemm_fast_gelu(ctx, ins: list) -> list:
    """GemmFastGelu: MatMul(X, W) (numpy semantics) then FastGelu."""
    x, w = ins[0], _arg(ins, 1)
    if x.shape is None or w is None or w.shape is None:
        return [Fact(x.dtype, None)]
    return [tensor(x.dtype, matmul_shape(ctx, x.shape, w.shape))]


def _gemm_dims(ctx, a: Fact, b: Fact | None) -> tuple:
    if a.shape is None or b is None or b.shape is None:
        return ctx.fresh_shape(2)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, f"{ctx.op_type} inputs must be 2-D")
    m, k1 = a.shape[::-1] if ctx.attr("transA", 0) else a.shape
    k2, n = b.shape[::-1] if ctx.attr("transB", 0) else b.shape
    ctx.unify(k1, k2)
    return (m, n)


@register("GemmFloat8", domain=MS)
def gemm_float8(ctx, ins: list) -> list:
    """GemmFloat8: ``(M, N)`` from A and B with transA / transB, in the type named by ``dtype``."""
    return [tensor(ctx.attr("dtype", TensorProto.FLOAT), _gemm_dims(ctx, ins[0], _arg(ins, 1)))]


@register("FusedGemm", domain=MS)
def fused_gemm(ctx, ins: list) -> list:
    """FusedGemm: Gemm ``(M, N)`` followed by an activation."""
    return [tensor(ins[0].dtype, _gemm_dims(ctx, ins[0], _arg(ins, 1)))]


def _fused_operand(shape: tuple, trans: int, trans_batch: int) -> tuple:
    """The MatMul operand FusedMatMul reads from ``shape``: with ``transBatch`` the leading dim is the
    rows (the batch dims are the ones between), with ``trans`` the last two are swapped."""
    r = len(shape)
    if r == 1:
        return shape
    if trans_batch:
        batch, rows, cols = shape[1 : r - 1], shape[0], shape[r - 1]
    else:
        batch, rows, cols = shape[: r - 2], shape[r - 2], shape[r - 1]
    return tuple(batch) + ((cols, rows) if trans else (rows, cols))


@register(["FusedMatMul", "TransposeMatMul"], domain=MS)
def fused_matmul(ctx, ins: list) -> list:
    """FusedMatMul: ``alpha * op(A) @ op(B)`` with transA / transB swapping the last two dims and
    transBatchA / transBatchB moving the leading dim to the rows."""
    a, b = ins[0], _arg(ins, 1)
    if a.shape is None or b is None or b.shape is None:
        return [Fact(a.dtype, None)]
    sa = _fused_operand(a.shape, ctx.attr("transA", 0), ctx.attr("transBatchA", 0))
    sb = _fused_operand(b.shape, ctx.attr("transB", 0), ctx.attr("transBatchB", 0))
    return [tensor(a.dtype, matmul_shape(ctx, sa, sb))]


@register("FusedConv", domain=MS)
def fused_conv(ctx, ins: list) -> list:
    """FusedConv: Conv (``N x M x spatial``) followed by an activation and an optional sum Z."""
    return conv(ctx, ins)


@register("NhwcConv", domain=MS)
def nhwc_conv(ctx, ins: list) -> list:
    """NhwcConv: channels-last Conv; X ``(N, spatial..., C)``, W ``(M, C/group, k...)``, Y
    ``(N, out spatial..., M)``."""
    x, w = ins[0], _arg(ins, 1)
    if x.shape is None:
        return [Fact(x.dtype, None)]
    n_sp = len(x.shape) - 2
    if n_sp < 1:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, "NhwcConv input must have rank >= 3")
    m = w.shape[0] if w is not None and w.shape else ctx.fresh()
    kernel = ctx.attr("kernel_shape")
    if kernel is None and w is not None and w.shape is not None and len(w.shape) == n_sp + 2:
        kernel = w.shape[2:]
    if kernel is None:
        return [tensor(x.dtype, (x.shape[0],) + ctx.fresh_shape(n_sp) + (m,))]
    return [tensor(x.dtype, (x.shape[0],) + tuple(spatial_dims(ctx, x.shape[1:-1], list(kernel))) + (m,))]


@register("UnfoldTensor", domain=MS)
def unfold_tensor(ctx, ins: list) -> list:
    """UnfoldTensor: every window of ``size`` along ``dim`` with ``step``: that dim becomes
    ``(d - size) // step + 1`` and a last dim of ``size`` is appended."""
    x = ins[0]
    size, step = ctx.attr("size"), ctx.attr("step", 1)
    if x.shape is None or size is None:
        return [Fact(x.dtype, None)]
    if step <= 0 or size <= 0:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"UnfoldTensor size {size} and step {step} must be positive"
        )
    axis = norm_axis(ctx.attr("dim", -1), len(x.shape))
    d = x.shape[axis]
    if type(d) is int and d < size:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"UnfoldTensor window {size} is larger than the dim {d}"
        )
    shape = list(x.shape)
    shape[axis] = D.add(D.floordiv(D.sub(d, size), step), 1)
    return [tensor(x.dtype, tuple(shape) + (size,))]


@register("DynamicTimeWarping", domain=MS)
def dynamic_time_warping(ctx, ins: list) -> list:
    """DynamicTimeWarping: the path ``(2, x)`` in int32, x (its length) depending on the costs."""
    return [tensor(TensorProto.INT32, (2, ctx.fresh()))]
