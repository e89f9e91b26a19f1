"""com.microsoft.nchwc ops: the blocked-layout convolution and pools onnxruntime's NCHWc transformer
writes (graph optimization level ALL on a CPU with NCHWc kernels).

A blocked tensor has the logical shape ``(N, C_padded, spatial...)``: its channels are padded up
to a multiple of the platform's block size (MlasNchwcGetBlockSize: 8 with AVX2, 16 with AVX-512
and on ARM64), the blocking itself is only a memory order. So:

- Conv: ai.onnx Conv's formula; M is W's first dim (already padded by the transformer).
- MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool: the ai.onnx pool formulas.
- Upsample: every dim times its integer ``scales`` entry.
- ReorderInput: ``(N, round_up(C, block), spatial...)`` from NCHW (or NHWC with channels_last).
  The block size is the optimizing machine's: a channel count is known only where 8 and 16 give
  the same padding; elsewhere it is a fresh symbol.
- ReorderOutput: ``(N, channels, spatial...)``, or ``(N, spatial..., channels)`` with channels_last.
"""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops import conv
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

NCHWC = "com.microsoft.nchwc"

#: The block sizes MLAS uses for NCHWc on the platforms that have it.
BLOCK_SIZES = (8, 16)

register("Conv", domain=NCHWC)(conv.conv)
register(["MaxPool", "AveragePool"], domain=NCHWC)(conv.pool)
register(["GlobalAveragePool", "GlobalMaxPool"], domain=NCHWC)(conv.global_pool)


def padded_channels(c: D.Dim) -> D.Dim | None:
    """``c`` rounded up to the NCHWc block size when every platform's block size agrees, else None."""
    if type(c) is not int:
        return None
    padded = {-(-c // b) * b for b in BLOCK_SIZES}
    return padded.pop() if len(padded) == 1 else None


def _rank_at_least_2(ctx, x: Fact) -> bool:
    if x.shape is None:
        return False
    if len(x.shape) < 2:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, f"nchwc {ctx.op_type} input must have rank >= 2")
    return True


@register("ReorderInput", domain=NCHWC)
def reorder_input(ctx, ins: list) -> list:
    """ReorderInput: NCHW (or NHWC) to blocked, channels padded to the block size."""
    x = ins[0]
    if not _rank_at_least_2(ctx, x):
        return [Fact(x.dtype, None)]
    last = ctx.attr("channels_last", 0)
    c = x.shape[-1] if last else x.shape[1]
    spatial = x.shape[1:-1] if last else x.shape[2:]
    cp = padded_channels(c)
    return [tensor(x.dtype, (x.shape[0], ctx.fresh() if cp is None else cp) + tuple(spatial))]


@register("ReorderOutput", domain=NCHWC)
def reorder_output(ctx, ins: list) -> list:
    """ReorderOutput: blocked to NCHW (or NHWC) with the ``channels`` attribute's channel count."""
    x = ins[0]
    channels = ctx.attr("channels", 0)
    if channels <= 0:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, f"ReorderOutput channels {channels} must be positive")
    if not _rank_at_least_2(ctx, x):
        return [Fact(x.dtype, None)]
    spatial = tuple(x.shape[2:])
    if ctx.attr("channels_last", 0):
        return [tensor(x.dtype, (x.shape[0],) + spatial + (channels,))]
    return [tensor(x.dtype, (x.shape[0], channels) + spatial)]


@register("Upsample", domain=NCHWC)
def upsample(ctx, ins: list) -> list:
    """Upsample: each dim times its integer scale."""
    x = ins[0]
    scales = ctx.attr("scales")
    if not _rank_at_least_2(ctx, x):
        return [Fact(x.dtype, None)]
    if scales is None:
        return [tensor(x.dtype, ctx.fresh_shape(len(x.shape)))]
    if len(scales) != len(x.shape) or any(s <= 0 for s in scales):
        raise InferenceError(
            codes.POOL_OR_SEQUENCE_INVALID, f"nchwc Upsample scales {list(scales)} for rank {len(x.shape)}"
        )
    return [tensor(x.dtype, tuple(D.mul(d, s) for d, s in zip(x.shape, scales)))]
