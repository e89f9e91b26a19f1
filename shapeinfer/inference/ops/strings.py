"""String ops: StringConcat, RegexFullMatch, StringSplit, StringNormalizer."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import broadcast_shapes
from shapeinfer.symbolic.facts import Fact, tensor

INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL


@register("StringConcat", since=20)
def string_concat(ctx, ins: list) -> list:
    """StringConcat: multidirectional broadcast."""
    return [tensor(TensorProto.STRING, broadcast_shapes(ctx, [ins[0].shape, ins[1].shape]))]


@register("RegexFullMatch", since=20)
def regex_full_match(ctx, ins: list) -> list:
    """RegexFullMatch: bool, the input's shape."""
    return [tensor(BOOL, ins[0].shape)]


@register("StringSplit", since=20)
def string_split(ctx, ins: list) -> list:
    """StringSplit: Y is X's shape plus the (data-dependent) largest split count; Z int64 like X."""
    x = ins[0]
    if x.shape is None:
        return [Fact(TensorProto.STRING, None), Fact(INT64, None)]
    return [tensor(TensorProto.STRING, tuple(x.shape) + (ctx.fresh(),)), tensor(INT64, x.shape)]


@register("StringNormalizer", since=10)
def string_normalizer(ctx, ins: list) -> list:
    """StringNormalizer: ``[C]`` or ``[1, C]``; C kept when there are no stopwords."""
    x = ins[0]
    if x.shape is None or len(x.shape) not in (1, 2):
        return [Fact(TensorProto.STRING, None)]
    c = x.shape[-1]
    if ctx.attr("stopwords") or c == 0:
        c = ctx.fresh()
    return [tensor(TensorProto.STRING, tuple(x.shape[:-1]) + (c,))]
