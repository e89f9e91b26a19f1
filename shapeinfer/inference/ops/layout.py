"""Layout ops: Transpose, Flatten, DepthToSpace and SpaceToDepth.

Their divisions (channels by ``blocksize**2``, spatial dims by ``blocksize``) are exact in a
valid model; a symbolic quotient that cannot be proven exact is written as a floor division,
which equals it on every valid input.
"""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import carry_bounds, is_static_shape, row_major_strides, unravel_index
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def valid_div(ctx, a: D.Dim, b: int, what: str) -> D.Dim:
    """``a / b`` for a division a valid model makes exact: an error where it is not, a guard
    ``a % b == 0`` where that is not proven."""
    if type(a) is int:
        if a % b:
            raise InferenceError(codes.DEPTH_SPACE_INVALID, f"{what}: {a} is not a multiple of {b}")
        return a // b
    q = D.exact_div(a, b)
    if q is not None:
        return q
    ctx.assume("divisibility", a, b, report=True)
    return D.floordiv(a, b)


def _block(ctx, x: Fact) -> int:
    b = ctx.attr("blocksize")
    if b is None or b <= 0:
        raise InferenceError(codes.DEPTH_SPACE_INVALID, f"{ctx.op_type} needs a positive blocksize")
    if b * b > D.INT64_MAX:
        raise InferenceError(
            codes.INT64_OVERFLOW, f"{ctx.op_type} blocksize {b}: the block area blocksize * blocksize overflows int64"
        )
    if x.shape is not None and len(x.shape) != 4:
        raise InferenceError(codes.DEPTH_SPACE_INVALID, f"{ctx.op_type} input must be 4-D, got rank {len(x.shape)}")
    return b


@register("DepthToSpace")
def depth_to_space(ctx, ins: list) -> list:
    """DepthToSpace: ``(N, C, H, W)`` -> ``(N, C/b^2, H*b, W*b)``."""
    x = ins[0]
    b = _block(ctx, x)
    if x.shape is None:
        return [tensor(x.dtype, ctx.fresh_shape(4))]
    n, c, h, w = x.shape
    return [tensor(x.dtype, (n, valid_div(ctx, c, b * b, "DepthToSpace channels"), D.mul(h, b), D.mul(w, b)))]


@register("SpaceToDepth")
def space_to_depth(ctx, ins: list) -> list:
    """SpaceToDepth: ``(N, C, H, W)`` -> ``(N, C*b^2, H/b, W/b)``."""
    x = ins[0]
    b = _block(ctx, x)
    if x.shape is None:
        return [tensor(x.dtype, ctx.fresh_shape(4))]
    n, c, h, w = x.shape
    return [
        tensor(
            x.dtype,
            (
                n,
                D.mul(c, b * b),
                valid_div(ctx, h, b, "SpaceToDepth height"),
                valid_div(ctx, w, b, "SpaceToDepth width"),
            ),
        )
    ]


@register("Flatten")
def flatten(ctx, ins: list) -> list:
    """Flatten: 2-D, ``prod(dims[:axis]) x prod(dims[axis:])``."""
    data = ins[0]
    if data.shape is None:
        return [tensor(data.dtype, ctx.fresh_shape(2))]
    r = len(data.shape)
    axis = ctx.attr("axis", 1)
    if not -r <= axis <= r:
        raise InferenceError(codes.INVALID_NODE, f"Flatten axis {axis} out of range for rank {r}")
    if axis < 0:
        axis += r
    shape = (D.product(data.shape[:axis]), D.product(data.shape[axis:]))
    return [tensor(data.dtype, shape, data.value)]


@register("Transpose")
def transpose(ctx, ins: list) -> list:
    """Transpose: dims permuted by ``perm`` (reversed when absent)."""
    data = ins[0]
    if data.shape is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape)
    perm = ctx.attr("perm", list(range(r - 1, -1, -1)))
    if sorted(perm) != list(range(r)):
        raise InferenceError(codes.TRANSPOSE_PERM_INVALID, f"Transpose perm {perm} is not a permutation of rank {r}")
    shape = tuple(data.shape[p] for p in perm)
    value = None
    if data.value is not None and is_static_shape(data.shape):
        st = row_major_strides(data.shape)
        n = len(data.value)
        value = []
        for k in range(n):
            pos = unravel_index(k, shape)
            value.append(data.value[sum(pos[i] * st[perm[i]] for i in range(r))])
    return [tensor(data.dtype, shape, value)]


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Flatten", value_bounds=carry_bounds, movement="reshape")
declare_traits("Transpose", movement="copy")
