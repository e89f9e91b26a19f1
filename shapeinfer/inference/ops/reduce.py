"""Reductions (Reduce*, ArgMax/ArgMin): axes as attribute or input, keepdims, noop_with_empty_axes."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import guard_sizes, known_ints, norm_axis
from shapeinfer.inference.ops.elementwise import fit_value
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

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
    """Reduce*: reduced axes become 1 (keepdims) or go; empty axes reduce all unless noop.

    Values of ReduceSum / ReduceProd / ReduceMax / ReduceMin are computed for small tracked
    tensors (symbolic elements included), over any axes.
    """
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
        if keep:  # every dim stays or becomes 1: a 1 stays 1
            return [tensor(data.dtype, tuple(1 if d == 1 else ctx.fresh() for d in data.shape))]
        return [Fact(data.dtype, None)]
    if not axes:
        if noop:
            return [tensor(data.dtype, data.shape, data.value)]
        axes = list(range(r))
    ax = {norm_axis(a, r) for a in axes}
    shape = tuple(1 if i in ax else d for i, d in enumerate(data.shape) if keep or i not in ax)
    value = None
    fn = _VALUE_FNS.get(ctx.op_type)
    if fn is not None and data.value is not None and data.is_static and all(v is not None for v in data.value):
        try:
            value = _reduce_values(fn, data.value, data.shape, ax)
        except TypeError:  # floats mixed with symbolic values
            value = None
        if value is not None:
            value = tuple(fit_value(v, data.dtype) for v in value)
    return [tensor(data.dtype, shape, value)]


def _reduce_values(fn, values: tuple, shape: tuple, axes: set[int]) -> tuple:
    """``fn`` over the groups of ``values`` (row-major ``shape``) that differ only along ``axes``."""
    groups: dict[tuple, list] = {}
    n = len(values)
    for k in range(n):
        idx = []
        rem = k
        for d in reversed(shape):
            idx.append(rem % d)
            rem //= d
        idx.reverse()
        key = tuple(0 if i in axes else x for i, x in enumerate(idx))
        groups.setdefault(key, []).append(values[k])
    return tuple(fn(g) for g in groups.values())


def _dsum(vals):
    total = 0
    for v in vals:
        total = total + v
    return total


def _dmax(vals):
    if all(type(v) in (int, float) for v in vals):
        return max(vals)
    return D.dmax(*vals)


def _dmin(vals):
    if all(type(v) in (int, float) for v in vals):
        return min(vals)
    return D.dmin(*vals)


def _dprod(vals):
    if all(type(v) in (int, float) for v in vals):
        p = 1
        for v in vals:
            p = p * v
        return p
    return D.product(vals)


_VALUE_FNS = {"ReduceSum": _dsum, "ReduceProd": _dprod, "ReduceMax": _dmax, "ReduceMin": _dmin}


@register(["ArgMax", "ArgMin"])
def arg_reduce(ctx, ins: list) -> list:
    """ArgMax / ArgMin: int64, ``axis`` kept as 1 or dropped. onnxruntime refuses an empty
    ``axis`` in an input whose other dims have elements: where they are proven to, the guard
    that the axis is not empty (an error where its size is known)."""
    data = ins[0]
    if data.shape is None:
        return [Fact(TensorProto.INT64, None)]
    r = len(data.shape)
    axis = norm_axis(ctx.attr("axis", 0), r)
    if all(ctx.symbols.prove_le(1, d) for i, d in enumerate(data.shape) if i != axis):
        if data.shape[axis] == 0:
            raise InferenceError(codes.INVALID_NODE, f"{ctx.op_type} over an empty axis {axis}")
        guard_sizes(ctx, [data.shape[axis]], 1)
    keep = ctx.attr("keepdims", 1)
    shape = tuple(1 if i == axis else d for i, d in enumerate(data.shape) if keep or i != axis)
    return [tensor(TensorProto.INT64, shape)]


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits(REDUCE_OPS, shape_inputs={1: "exact"})
