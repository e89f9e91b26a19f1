"""Reductions (Reduce*, ArgMax/ArgMin): axes as attribute or input, keepdims, noop_with_empty_axes."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer import dims as D
from shapeinfer.facts import Fact, tensor
from shapeinfer.ops.common import known_ints, norm_axis
from shapeinfer.registry import register

REDUCE_OPS = [
    "ReduceMean",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]


def _axes_input_since(op: str) -> int:
    return 13 if op == "ReduceSum" else 18


@register(REDUCE_OPS)
def reduce(ctx, ins: list) -> list:
    """Reduce*: reduced axes become 1 (keepdims) or go; empty axes reduce all unless noop."""
    data = ins[0]
    keep = ctx.attr("keepdims", 1)
    if ctx.version >= _axes_input_since(ctx.op_type):
        af = ins[1] if len(ins) > 1 else None
        axes = [] if af is None else known_ints(af)
        noop = ctx.attr("noop_with_empty_axes", 0)
    else:
        axes = list(ctx.attr("axes", []))
        noop = 0
    if data.shape is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape)
    if axes is None:
        if keep:
            return [tensor(data.dtype, ctx.fresh_shape(r))]
        return [Fact(data.dtype, None)]
    if not axes:
        if noop:
            return [tensor(data.dtype, data.shape, data.value)]
        axes = list(range(r))
    ax = {norm_axis(a, r) for a in axes}
    shape = tuple(1 if i in ax else d for i, d in enumerate(data.shape) if keep or i not in ax)
    value = None
    if (
        data.value is not None
        and len(ax) == r
        and ctx.op_type in ("ReduceProd", "ReduceSum")
        and all(v is not None for v in data.value)
    ):
        fn = D.product if ctx.op_type == "ReduceProd" else _dsum
        try:
            value = (fn(data.value),)
        except TypeError:
            value = None
    return [tensor(data.dtype, shape, value)]


def _dsum(vals):
    total = 0
    for v in vals:
        total = total + v
    return total


@register(["ArgMax", "ArgMin"])
def arg_reduce(ctx, ins: list) -> list:
    """ArgMax / ArgMin: int64, ``axis`` kept as 1 or dropped."""
    data = ins[0]
    if data.shape is None:
        return [Fact(TensorProto.INT64, None)]
    r = len(data.shape)
    axis = norm_axis(ctx.attr("axis", 0), r)
    keep = ctx.attr("keepdims", 1)
    shape = tuple(1 if i == axis else d for i, d in enumerate(data.shape) if keep or i != axis)
    return [tensor(TensorProto.INT64, shape)]
