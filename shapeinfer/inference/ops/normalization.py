"""Normalizations (BatchNormalization, LayerNormalization, ...) and Dropout: the main output keeps the input's shape."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import norm_axis
from shapeinfer.symbolic.facts import Fact, tensor


@register("LayerNormalization", since=17)
def layer_norm(ctx, ins: list) -> list:
    """LayerNormalization: Y like X; Mean and InvStdDev are X's dims up to axis, then 1s."""
    x = ins[0]
    stash = ctx.attr("stash_type", 1)
    if x.shape is None:
        return [Fact(x.dtype, None), Fact(stash, None), Fact(stash, None)]
    r = len(x.shape)
    axis = norm_axis(ctx.attr("axis", -1), r)
    stat = tuple(x.shape[:axis]) + (1,) * (r - axis)
    return [tensor(x.dtype, x.shape), tensor(stash, stat), tensor(stash, stat)]


@register(["RMSNormalization"], since=23)
def rms_norm(ctx, ins: list) -> list:
    """RMSNormalization: Y like X."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


@register(["InstanceNormalization", "LpNormalization", "MeanVarianceNormalization", "LRN", "GroupNormalization"])
def same_shape_norm(ctx, ins: list) -> list:
    """Normalizations whose output has the input's shape."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


@register("Dropout")
def dropout(ctx, ins: list) -> list:
    """Dropout: output like the input; the optional mask has its shape (bool from 10)."""
    x = ins[0]
    mask_type = TensorProto.BOOL if ctx.version >= 10 else x.dtype
    return [tensor(x.dtype, x.shape), tensor(mask_type, x.shape)]


@register("BatchNormalization", since=1)
def batch_norm(ctx, ins: list) -> list:
    """BatchNormalization: Y like X; the optional statistics are ``(C,)``, C from X's dim 1 or,
    when X's shape is unknown, from any of scale, B, input_mean, input_var (each ``(C,)`` by the
    spec). Before opset 9 with ``spatial=0`` (statistics per activation), they have the shape of
    input_mean / input_var, ``(C, D1, ..., Dn)``."""
    x = ins[0]
    mean = ins[3] if len(ins) > 3 else None
    stat_dt = mean.dtype if mean is not None and mean.dtype else x.dtype
    stats = [t for t in ins[1:5] if t is not None and t.shape is not None]
    if ctx.version < 9 and not ctx.attr("spatial", 1):
        shape = next((t.shape for t in ins[3:5] if t is not None and t.shape is not None), None)
        stat = Fact(stat_dt, None) if shape is None else tensor(stat_dt, shape)
        return [tensor(x.dtype, x.shape)] + [stat] * (ctx.num_outputs - 1)
    c = None
    if x.shape is not None and len(x.shape) > 1:
        c = x.shape[1]
    else:
        c = next((t.shape[0] for t in stats if len(t.shape) == 1), None)
    stat = Fact(stat_dt, None) if c is None else tensor(stat_dt, (c,))
    return [tensor(x.dtype, x.shape)] + [stat] * (ctx.num_outputs - 1)
