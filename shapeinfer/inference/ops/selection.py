"""Ops that select entries: TopK, NonZero, Compress, Unique, NonMaxSuppression.

Data-dependent outputs (NonZero, Compress, Unique) are computed exactly when the input values
are tracked, and are fresh symbols otherwise.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import norm_axis, scalar_value
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor
from shapeinfer.symbolic.intervals import holds_le

INT64 = TensorProto.INT64


@register("TopK", since=1)
def topk(ctx, ins: list) -> list:
    """TopK: the axis dim becomes K (attribute ``k`` before 10, input from 10); Indices int64.
    K must not exceed the axis: an error for static sizes, a guard otherwise."""
    x = ins[0]
    if ctx.version >= 10:
        kv = scalar_value(ins[1]) if len(ins) > 1 else None
        k = kv if type(kv) is int or isinstance(kv, D.Expr) else None
    else:
        k = ctx.attr("k")
    if x.shape is None:
        return [Fact(x.dtype, None), Fact(INT64, None)]
    axis = norm_axis(ctx.attr("axis", -1), len(x.shape))
    if type(k) is int:
        if k < 0:
            raise InferenceError(codes.TOPK_K_INVALID, f"TopK k={k} is negative")
        if type(x.shape[axis]) is int and k > x.shape[axis]:
            raise InferenceError(codes.TOPK_K_INVALID, f"TopK k={k} exceeds dim {x.shape[axis]}")
    if k is not None and not (type(k) is int and type(x.shape[axis]) is int) and not holds_le(k, x.shape[axis]):
        ctx.assume("bound", k, x.shape[axis], report=True)  # onnxruntime refuses a k past the axis
    shape = list(x.shape)
    shape[axis] = ctx.fresh() if k is None else k
    return [tensor(x.dtype, shape), tensor(INT64, shape)]


def _count_nonzero(vals) -> int | None:
    n = 0
    for v in vals:
        if v is None or isinstance(v, D.Expr):
            if isinstance(v, D.Expr) and D.compare(v, 0) in (1, -1):
                n += 1
                continue
            return None
        if v != 0:
            n += 1
    return n


@register("NonZero", since=9)
def non_zero(ctx, ins: list) -> list:
    """NonZero: ``(rank, nnz)``; nnz exact when the values are tracked."""
    x = ins[0]
    if x.shape is None or len(x.shape) == 0:
        return [tensor(INT64, ctx.fresh_shape(2))]
    n = None if x.value is None else _count_nonzero(x.value)
    return [tensor(INT64, (len(x.shape), ctx.fresh() if n is None else n))]


@register("Compress", since=9)
def compress(ctx, ins: list) -> list:
    """Compress: the selected axis (or the flattened input) keeps as many entries as the condition's
    true values among its first ``dim`` entries."""
    x, cond = ins[0], ins[1]
    axis = ctx.attr("axis")
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if axis is None:
        dim = D.product(x.shape)
    else:
        axis = norm_axis(axis, len(x.shape))
        dim = x.shape[axis]
    n = None
    if cond.value is not None:
        vals = cond.value
        if type(dim) is int:
            vals = vals[:dim]
            n = _count_nonzero(vals)
        elif D.compare(dim, len(vals)) in (0, 1):
            n = _count_nonzero(vals)
    size = ctx.fresh() if n is None else n
    if axis is None:
        return [tensor(x.dtype, (size,))]
    shape = list(x.shape)
    shape[axis] = size
    return [tensor(x.dtype, shape)]


def _unique_count(x: Fact, axis: int | None) -> int | None:
    if not x.known_values or not x.is_static or any(isinstance(v, D.Expr) for v in x.value):
        return None
    vals = x.value
    if any(isinstance(v, float) and v != v for v in vals):  # NaN
        return None
    if axis is None:
        return len(set(vals))
    shape = x.shape
    outer = 1
    for d in shape[:axis]:
        outer *= d
    inner = 1
    for d in shape[axis + 1 :]:
        inner *= d
    n = shape[axis]
    slices = set()
    for i in range(n):
        key = []
        for o in range(outer):
            base = (o * n + i) * inner
            key.extend(vals[base : base + inner])
        slices.add(tuple(key))
    return len(slices)


@register("Unique", since=11)
def unique(ctx, ins: list) -> list:
    """Unique: Y, indices, inverse_indices, counts; the unique count exact for tracked values."""
    x = ins[0]
    axis = ctx.attr("axis")
    if x.shape is None:
        return [Fact(x.dtype, None), tensor(INT64, (ctx.fresh(),)), Fact(INT64, None), tensor(INT64, (ctx.fresh(),))]
    if axis is not None:
        axis = norm_axis(axis, len(x.shape))
    u = _unique_count(x, axis)
    if u is None:
        numel = D.product(x.shape) if axis is None else x.shape[axis]
        u = 1 if numel == 1 else ctx.fresh()
    if axis is None:
        y = tensor(x.dtype, (u,))
        inv = tensor(INT64, (D.product(x.shape),))
    else:
        shape = list(x.shape)
        shape[axis] = u
        y = tensor(x.dtype, shape)
        inv = tensor(INT64, (x.shape[axis],))
    return [y, tensor(INT64, (u,)), inv, tensor(INT64, (u,))]


@register("NonMaxSuppression", since=10)
def non_max_suppression(ctx, ins: list) -> list:
    """NonMaxSuppression: ``(num_selected, 3)`` int64."""
    return [tensor(INT64, (ctx.fresh(), 3))]


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("TopK", shape_inputs={1: "exact"})
