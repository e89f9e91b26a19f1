"""Shape (1, 13, 15+) and Size: where tensor dims become values."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, tensor


def shape_slice(rank: int, start: int = 0, end: int | None = None) -> tuple[int, int, bool]:
    """The ``[s, e)`` dims Shape-15 returns for ``start``/``end`` on a rank, and whether clamped.

    Negative values count from the back; both are clamped to ``[0, rank]`` (so ``end=10`` on
    rank 3 gives all three dims). ``s >= e`` means an empty result.
    """
    e = rank if end is None else end
    s = start + rank if start < 0 else start
    e = e + rank if e < 0 else e
    cs, ce = min(max(s, 0), rank), min(max(e, 0), rank)
    return cs, ce, (cs, ce) != (s, e)


def _shape_fact(ctx, dims: tuple | None) -> Fact:
    if dims is None:
        return tensor(TensorProto.INT64, (ctx.fresh(),))
    value = dims if len(dims) <= MAX_VALUE_ELEMENTS else None
    return tensor(TensorProto.INT64, (len(dims),), value)


@register("Shape", since=1)
def shape_v1(ctx, ins: list) -> list:
    """Shape-1/13: every dim of the input as a 1-D int64 tensor."""
    data = ins[0]
    if ctx.has_attr("start") or ctx.has_attr("end"):
        ctx.diag(
            "warning", codes.SHAPE_START_END_BEFORE_V15, f"start/end are ignored before Shape-15 (opset {ctx.version})"
        )
    return [_shape_fact(ctx, None if data is None else data.shape)]


@register("Shape", since=15)
def shape_v15(ctx, ins: list) -> list:
    """Shape-15+: the dims in ``[start, end)``, negative values counting from the back, clamped."""
    data = ins[0]
    start = ctx.attr("start", 0)
    end = ctx.attr("end")
    if data is None or data.shape is None:
        return [_shape_fact(ctx, None)]
    rank = len(data.shape)
    s, e, clamped = shape_slice(rank, start, end)
    if clamped:
        ctx.diag("info", codes.SHAPE_SLICE_CLAMPED, f"start={start} end={end} clamped to [{s}, {e}) for rank {rank}")
    if s >= e:
        ctx.diag(
            "warning", codes.SHAPE_EMPTY_SLICE, f"start={start} end={end} select no dims of rank {rank}: empty shape"
        )
        return [_shape_fact(ctx, ())]
    return [_shape_fact(ctx, tuple(data.shape[s:e]))]


@register("Size", since=1)
def size(ctx, ins: list) -> list:
    """Size: the element count as an int64 scalar."""
    data = ins[0]
    n = None if data is None or data.shape is None else D.product(data.shape)
    return [tensor(TensorProto.INT64, (), (n,) if n is not None else None)]
