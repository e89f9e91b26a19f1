"""DepthToSpace and SpaceToDepth.

Their divisions (channels by ``blocksize**2``, spatial dims by ``blocksize``) are exact in a
valid model; a symbolic quotient that cannot be proven exact is written as a floor division,
which equals it on every valid input.
"""

from __future__ import annotations

from shapeinfer import dims as D
from shapeinfer.diagnostics import InferenceError
from shapeinfer.facts import Fact, tensor
from shapeinfer.registry import register


def valid_div(a: D.Dim, b: int, what: str) -> D.Dim:
    """``a / b`` for a division a valid model makes exact."""
    if type(a) is int:
        if a % b:
            raise InferenceError("E070", f"{what}: {a} is not a multiple of {b}")
        return a // b
    q = D.exact_div(a, b)
    return q if q is not None else D.floordiv(a, b)


def _block(ctx, x: Fact) -> int:
    b = ctx.attr("blocksize")
    if b is None or b <= 0:
        raise InferenceError("E070", f"{ctx.op_type} needs a positive blocksize")
    if x.shape is not None and len(x.shape) != 4:
        raise InferenceError("E070", f"{ctx.op_type} input must be 4-D, got rank {len(x.shape)}")
    return b


@register("DepthToSpace")
def depth_to_space(ctx, ins: list) -> list:
    """DepthToSpace: ``(N, C, H, W)`` -> ``(N, C/b^2, H*b, W*b)``."""
    x = ins[0]
    b = _block(ctx, x)
    if x.shape is None:
        return [tensor(x.dtype, ctx.fresh_shape(4))]
    n, c, h, w = x.shape
    return [tensor(x.dtype, (n, valid_div(c, b * b, "DepthToSpace channels"), D.mul(h, b), D.mul(w, b)))]


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
            (n, D.mul(c, b * b), valid_div(h, b, "SpaceToDepth height"), valid_div(w, b, "SpaceToDepth width")),
        )
    ]
