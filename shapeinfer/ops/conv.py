"""Convolutions and pools: output spatial sizes with pads, auto_pad, strides, dilations, ceil_mode."""

from __future__ import annotations

from shapeinfer import dims as D
from shapeinfer.diagnostics import InferenceError
from shapeinfer.facts import Fact, tensor
from shapeinfer.registry import register


def conv_out_dim(
    size: D.Dim,
    kernel: int,
    stride: int,
    dilation: int,
    pad_begin: int,
    pad_end: int,
    auto_pad: str,
    ceil_mode: int = 0,
) -> D.Dim:
    """One spatial output size of a convolution or pool, per the ONNX formulas."""
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return D.ceildiv(size, stride)
    eff = (kernel - 1) * dilation + 1
    if auto_pad == "VALID":
        return D.ceildiv(D.sub(D.add(size, 1), eff), stride)
    span = D.sub(D.add(size, pad_begin + pad_end), eff)
    if ceil_mode:
        out = D.add(D.ceildiv(span, stride), 1)
        # the last window must start inside the input or the left padding
        if type(out) is int and type(size) is int and (out - 1) * stride >= size + pad_begin:
            out -= 1
        return out
    return D.add(D.floordiv(span, stride), 1)


def _spatial(ctx, x: Fact, kernel: list[int], n_sp: int, ceil_mode: int = 0) -> list:
    strides = ctx.attr("strides", [1] * n_sp)
    dil = ctx.attr("dilations", [1] * n_sp)
    pads = ctx.attr("pads", [0] * (2 * n_sp))
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    out = []
    for i in range(n_sp):
        out.append(
            conv_out_dim(x.shape[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[i + n_sp], auto_pad, ceil_mode)
        )
    return out


@register("Conv")
def conv(ctx, ins: list) -> list:
    """Conv: ``N x M x spatial`` with M = W's first dim."""
    x, w = ins[0], ins[1]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    n_sp = len(x.shape) - 2
    if n_sp < 1:
        raise InferenceError("E040", "Conv input must have rank >= 3")
    kernel = ctx.attr("kernel_shape")
    if kernel is None:
        if w.shape is None or not all(type(d) is int for d in w.shape[2:]):
            return [tensor(x.dtype, (x.shape[0], w.shape[0] if w.shape else ctx.fresh()) + ctx.fresh_shape(n_sp))]
        kernel = list(w.shape[2:])
    m = w.shape[0] if w.shape is not None else ctx.fresh()
    return [tensor(x.dtype, (x.shape[0], m) + tuple(_spatial(ctx, x, kernel, n_sp)))]


@register(["MaxPool", "AveragePool", "LpPool"])
def pool(ctx, ins: list) -> list:
    """Pools: channels kept, spatial sizes per kernel_shape, with ceil_mode."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None), Fact(7, None)]
    n_sp = len(x.shape) - 2
    kernel = ctx.attr("kernel_shape")
    if kernel is None:
        raise InferenceError("E041", f"{ctx.op_type} needs kernel_shape")
    shape = tuple(x.shape[:2]) + tuple(_spatial(ctx, x, kernel, n_sp, ctx.attr("ceil_mode", 0)))
    return [tensor(x.dtype, shape), tensor(7, shape)]


@register(["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
def global_pool(ctx, ins: list) -> list:
    """Global pools: spatial dims become 1."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    return [tensor(x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))]
