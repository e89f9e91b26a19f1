"""Ops whose output shape comes from values: Constant, ConstantOfShape, Range, Expand, Tile, OneHot."""

from __future__ import annotations

import math

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import (
    broadcast_dim,
    broadcast_values,
    carry_bounds,
    dim_values,
    guard_nonzero,
    guard_sizes,
    rank_from_model,
    scalar_value,
)
from shapeinfer.inference.ops.elementwise import fit_value
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, tensor


@register("Constant")
def constant(ctx, ins: list) -> list:
    """Constant: every attribute form (value, value_float(s), value_int(s), value_string(s), sparse_value)."""
    f = ctx.attr_tensor_fact("value")
    if f is not None:
        return [f]
    if ctx.has_attr("value_float"):
        return [tensor(TensorProto.FLOAT, (), (float(ctx.attr("value_float")),))]
    if ctx.has_attr("value_floats"):
        v = [float(x) for x in ctx.attr("value_floats")]
        return [tensor(TensorProto.FLOAT, (len(v),), v)]
    if ctx.has_attr("value_int"):
        return [tensor(TensorProto.INT64, (), (int(ctx.attr("value_int")),))]
    if ctx.has_attr("value_ints"):
        v = [int(x) for x in ctx.attr("value_ints")]
        return [tensor(TensorProto.INT64, (len(v),), v)]
    if ctx.has_attr("value_string"):
        return [tensor(TensorProto.STRING, ())]
    if ctx.has_attr("value_strings"):
        return [tensor(TensorProto.STRING, (len(ctx.attr("value_strings")),))]
    if ctx.has_attr("sparse_value"):
        sp = ctx.attr("sparse_value")
        return [tensor(sp.values.data_type, tuple(sp.dims))]
    raise InferenceError(codes.CONSTANT_WITHOUT_VALUE, "Constant has no value attribute")


def shape_from_values(ctx, f: Fact | None) -> tuple | None:
    """Dims spelled by a 1-D shape tensor (fresh symbols for unknown entries), or None."""
    if f is None:
        return None
    vals = dim_values(f)
    if vals is not None:
        for v in vals:
            if type(v) is int and v < 0:
                raise InferenceError(codes.NEGATIVE_SHAPE_VALUE, f"negative dim {v} in shape {list(vals)}")
        guard_sizes(ctx, vals, 0)
        return tuple(ctx.fresh() if v is None else v for v in vals)
    if f.shape is not None and len(f.shape) == 1:
        n = rank_from_model(ctx, f.shape[0])
        return None if n is None else ctx.fresh_shape(n)
    return None


@register("ConstantOfShape", since=9)
def constant_of_shape(ctx, ins: list) -> list:
    """ConstantOfShape: dims from the input's values, filled with ``value`` (float 0 by default).
    An input of another type than int64 makes the node invalid (onnxruntime refuses it): no dims."""
    if ins[0] is not None and ins[0].dtype and ins[0].dtype != TensorProto.INT64:
        name = TensorProto.DataType.Name(ins[0].dtype).lower()
        raise InferenceError(codes.INVALID_NODE, f"ConstantOfShape input must be int64, not {name}")
    vf = ctx.attr_tensor_fact("value")
    dtype = vf.dtype if vf is not None else TensorProto.FLOAT
    fill = vf.value[0] if vf is not None and vf.value else (0.0 if vf is None else None)
    shape = shape_from_values(ctx, ins[0])
    if shape is None:
        return [Fact(dtype, None)]
    value = None
    if all(type(d) is int for d in shape):
        n = 1
        for d in shape:
            n *= d
        if n <= 64:
            value = (fill,) * n
    return [tensor(dtype, shape, value)]


def _integral(v):
    """An integral float as its int (Range bounds in a float type); anything else unchanged."""
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return int(v)
    return v


@register("Range", since=11)
def range_(ctx, ins: list) -> list:
    """Range: ``max(ceil((limit - start) / delta), 0)`` elements."""
    start, limit, delta = (scalar_value(f) for f in ins[:3])
    dtype = ins[0].dtype
    if start is None or limit is None or delta is None:
        return [tensor(dtype, (ctx.fresh(),))]
    if all(type(v) in (int, float) for v in (start, limit, delta)):
        if delta == 0:
            raise InferenceError(codes.RANGE_DELTA_ZERO, "Range delta is 0")
        if all(type(v) is int for v in (start, limit, delta)):
            n = max(-((start - limit) // delta), 0)
        else:
            # onnxruntime: the difference in the element type, the quotient in double
            n = max(math.ceil(float(fit_value(limit - start, dtype)) / float(delta)), 0)
        value = None
        if n <= 64:
            value, v = [], start
            for _ in range(n):  # accumulated in the element type, as onnxruntime does
                value.append(v)
                v = fit_value(v + delta, dtype)
        return [tensor(dtype, (n,), value)]
    # Symbolic bounds in a float Range: values cast from integers, exact there (Cast keeps a
    # symbolic value only where it is exact, see elementwise.exact_in_float). With integral
    # start and delta the difference is an exact integer, and ceil of its quotient is the count.
    start, limit, delta = (_integral(v) for v in (start, limit, delta))
    guard_nonzero(ctx, delta)
    if isinstance(delta, float) or isinstance(start, float) or isinstance(limit, float) or type(delta) is not int:
        return [tensor(dtype, (ctx.fresh(),))]
    if delta == 0:
        raise InferenceError(codes.RANGE_DELTA_ZERO, "Range delta is 0")
    n = D.dmax(D.ceildiv(D.sub(limit, start), delta), 0)
    return [tensor(dtype, (n,))]


@register("Expand", since=8)
def expand(ctx, ins: list) -> list:
    """Expand: bidirectional broadcast of the input's dims with the shape input's values."""
    data, shp = ins[0], ins[1]
    target = dim_values(shp)
    if target is None:
        if shp.shape is not None and len(shp.shape) == 1 and type(shp.shape[0]) is int and data.shape is not None:
            r = max(shp.shape[0], len(data.shape))
            a = (1,) * (r - len(data.shape)) + tuple(data.shape)
            # a dim other than 1 survives any valid broadcast
            return [tensor(data.dtype, tuple(x if type(x) is int and x != 1 else ctx.fresh() for x in a))]
        return [Fact(data.dtype, None)]
    guard_sizes(ctx, target, 0)
    if data.shape is None:
        return [Fact(data.dtype, None)]  # the output rank is max(len(target), rank(data))
    r = max(len(target), len(data.shape))
    a = (1,) * (r - len(data.shape)) + tuple(data.shape)
    b = (1,) * (r - len(target)) + tuple(target)
    out = []
    for x, y in zip(a, b):
        if y is None:
            out.append(x if type(x) is int and x != 1 else ctx.fresh())
        else:
            out.append(broadcast_dim(ctx, x, y))
    value = None
    if data.value is not None and all(type(d) is int for d in out):
        value = broadcast_values(lambda v: v, [tensor(data.dtype, a, data.value)], tuple(out))
    return [tensor(data.dtype, out, value)]


@register("Tile", since=6)
def tile(ctx, ins: list) -> list:
    """Tile: each dim times its repeat count."""
    data, reps = ins[0], ins[1]
    rv = dim_values(reps)
    if data.shape is None:
        return [Fact(data.dtype, None)]
    if rv is None or len(rv) != len(data.shape):
        if rv is not None:
            raise InferenceError(
                codes.TILE_REPEATS_RANK, f"Tile repeats has {len(rv)} entries for rank {len(data.shape)}"
            )
        return [tensor(data.dtype, ctx.fresh_shape(len(data.shape)))]
    guard_sizes(ctx, rv, 0)
    shape = tuple(ctx.fresh() if r is None else D.mul(d, r) for d, r in zip(data.shape, rv))
    value = None
    if data.value is not None and data.is_static and all(type(d) is int for d in shape):
        n = 1
        for d in shape:
            n *= d
        if n <= MAX_VALUE_ELEMENTS:
            value = []
            for k in range(n):
                src, rem = 0, k
                stride = 1
                for d_out, d_in in zip(reversed(shape), reversed(data.shape)):
                    src += (rem % d_out) % d_in * stride
                    rem //= d_out
                    stride *= d_in
                value.append(data.value[src])
    return [tensor(data.dtype, shape, value)]


@register("OneHot", since=9)
def one_hot(ctx, ins: list) -> list:
    """OneHot: indices' dims with ``depth`` inserted at ``axis``; typed like ``values``."""
    idx, depth_f, values = ins[0], ins[1], ins[2]
    dtype = values.dtype if values is not None else 0
    if idx.shape is None:
        return [Fact(dtype, None)]
    r = len(idx.shape) + 1
    axis = ctx.attr("axis", -1)
    if not -r <= axis < r:
        raise InferenceError(codes.INVALID_NODE, f"OneHot axis {axis} out of range for output rank {r}")
    axis = axis + r if axis < 0 else axis
    dv = scalar_value(depth_f)
    depth = None
    if type(dv) is int or isinstance(dv, D.Expr):
        depth = dv
    elif isinstance(dv, float) and dv.is_integer():
        depth = int(dv)
    if type(depth) is int and depth < 1:
        raise InferenceError(codes.ONEHOT_DEPTH_INVALID, f"OneHot depth {depth} must be positive")
    guard_sizes(ctx, [depth], 1)
    shape = list(idx.shape)
    shape.insert(axis, ctx.fresh() if depth is None else depth)
    return [tensor(dtype, shape)]


def range_bounds(ctx, ins: list, outs: list, bounds: list):
    """Value-bounds rule of Range: with a constant int start ``s`` and a constant positive int
    delta ``d``, a 1-D output of ``n`` elements lies in ``[s, s + d*(n - 1)]``."""
    start, delta = (ins[0] if len(ins) > 0 else None), (ins[2] if len(ins) > 2 else None)
    out = outs[0] if outs else None
    if (
        start is not None
        and delta is not None
        and start.value is not None
        and delta.value is not None
        and type(start.value[0]) is int
        and type(delta.value[0]) is int
        and delta.value[0] > 0
        and out is not None
        and out.shape is not None
        and len(out.shape) == 1
    ):
        s0, d0 = start.value[0], delta.value[0]
        return (s0, D.add(s0, D.mul(d0, D.sub(out.shape[0], 1))))
    return None


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits(
    "Range", shape_inputs={0: "exact", 1: "exact", 2: "exact"}, value_bounds=range_bounds, bounds_source=True
)
declare_traits("Expand", shape_inputs={1: "expand"}, value_bounds=carry_bounds, movement="copy")
declare_traits("ConstantOfShape", shape_inputs={0: "exact"})
declare_traits("Tile", shape_inputs={1: "exact"}, movement="copy")
declare_traits("OneHot", shape_inputs={1: "exact"})
