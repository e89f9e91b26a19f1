"""Image ops: GridSample, AffineGrid and ImageDecoder."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, guard_sizes
from shapeinfer.symbolic.facts import Fact, tensor


@register("GridSample", since=16)
def grid_sample(ctx, ins: list) -> list:
    """GridSample: ``(N, C) + grid.shape[1:-1]``."""
    x, grid = ins[0], ins[1]
    if grid is None or grid.shape is None:
        return [Fact(x.dtype, None)]
    n = grid.shape[0]
    if x.shape is not None and len(x.shape) >= 2:
        n = ctx.unify(x.shape[0], grid.shape[0])
        c = x.shape[1]
    else:
        c = ctx.fresh()
    return [tensor(x.dtype, (n, c) + tuple(grid.shape[1:-1]))]


@register("AffineGrid", since=20)
def affine_grid(ctx, ins: list) -> list:
    """AffineGrid: size ``(N, C, H, W)`` -> ``(N, H, W, 2)``; ``(N, C, D, H, W)`` -> ``(N, D, H, W, 3)``.
    onnxruntime refuses a spatial size below 1."""
    theta, size = ins[0], ins[1]
    vals = dim_values(size)
    n_sp = None
    if vals is not None:
        n_sp = len(vals) - 2
    elif size.shape is not None and len(size.shape) == 1 and type(size.shape[0]) is int:
        n_sp = size.shape[0] - 2
    if n_sp not in (2, 3):
        return [Fact(theta.dtype, None)]
    if vals is None:
        vals = (None,) * (n_sp + 2)
    guard_sizes(ctx, vals[2:], 1)  # onnxruntime: "size[2] (H=0) must be positive"
    sp = tuple(ctx.fresh() if v is None else v for v in vals[2:])
    n = vals[0]
    if n is None and theta.shape is not None and theta.shape:
        n = theta.shape[0]
    return [tensor(theta.dtype, (ctx.fresh() if n is None else n,) + sp + (n_sp,))]


@register("ImageDecoder", since=20)
def image_decoder(ctx, ins: list) -> list:
    """ImageDecoder: ``(H, W, channels)``; 1 channel for Grayscale, 3 for RGB / BGR."""
    fmt = ctx.attr("pixel_format", "RGB")
    return [tensor(TensorProto.UINT8, (ctx.fresh(), ctx.fresh(), 1 if fmt == "Grayscale" else 3))]
