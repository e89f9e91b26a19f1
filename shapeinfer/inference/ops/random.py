"""Random generators: RandomNormal / RandomUniform (and their Like forms), Bernoulli, Multinomial."""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.symbolic.facts import tensor

FLOAT = TensorProto.FLOAT


@register(["RandomNormal", "RandomUniform"], since=1)
def random_fill(ctx, ins: list) -> list:
    """RandomNormal / RandomUniform: the ``shape`` attribute, ``dtype`` (float by default)."""
    return [tensor(ctx.attr("dtype", FLOAT), list(ctx.attr("shape")))]


@register(["RandomNormalLike", "RandomUniformLike", "Bernoulli"], since=1)
def random_like(ctx, ins: list) -> list:
    """RandomNormalLike / RandomUniformLike / Bernoulli: the input's shape, ``dtype`` or its type."""
    x = ins[0]
    return [tensor(ctx.attr("dtype", x.dtype) or x.dtype, x.shape)]


@register("Multinomial", since=7)
def multinomial(ctx, ins: list) -> list:
    """Multinomial: ``(batch, sample_size)``, int32 by default."""
    x = ins[0]
    b = x.shape[0] if x.shape is not None and len(x.shape) == 2 else ctx.fresh()
    return [tensor(ctx.attr("dtype", TensorProto.INT32), (b, ctx.attr("sample_size", 1)))]


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits(
    ["RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"],
    nondeterministic=True,
)
