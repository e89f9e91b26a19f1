"""String ops: StringConcat, RegexFullMatch, StringSplit, StringNormalizer, and onnxruntime's
Tokenizer (com.microsoft: scikit-learn text pipelines, skl2onnx's TfidfVectorizer)."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import broadcast_shapes
from shapeinfer.symbolic import dims as D
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


@register("Tokenizer", domain="com.microsoft")
def tokenizer(ctx, ins: list) -> list:
    """Tokenizer (onnxruntime): strings, X's shape plus the (data-dependent) largest token count
    ``[N] -> [N, D]``, ``[N, C] -> [N, C, D]``; but an X without elements comes back as it is
    (``[0] -> [0]``, ``[2, 0] -> [2, 0]``, checked in onnxruntime), so the rank is known only
    where no dim can be 0."""
    x = ins[0]
    if x is None or x.shape is None:
        return [Fact(TensorProto.STRING, None)]
    if any(type(d) is int and d == 0 for d in x.shape):
        return [tensor(TensorProto.STRING, x.shape)]
    if all((D.lower_bound(d) or 0) >= 1 for d in x.shape):
        return [tensor(TensorProto.STRING, tuple(x.shape) + (ctx.fresh(),))]
    return [Fact(TensorProto.STRING, None)]
