"""onnxruntime's fused normalizations: EmbedLayerNormalization, SkipLayerNormalization,
SkipSimplifiedLayerNormalization, GroupNorm, SkipGroupNorm, GatedRMSNorm, BranchwiseRMSNorm
(``com.microsoft``), and the default-domain schemas onnxruntime registers itself:
SimplifiedLayerNormalization (no ai.onnx schema exists; the transformers optimizer emits it with
domain ``""``) and LayerNormalization before ai.onnx opset 17. Those two are also accepted under
``com.microsoft``, where some converters put them (onnxruntime itself only loads the default-domain
form).
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import norm_axis
from shapeinfer.inference.ops.normalization import params_broadcast
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

MS = "com.microsoft"
FLOAT = TensorProto.FLOAT


def _arg(ins: list, i: int) -> Fact | None:
    return ins[i] if len(ins) > i else None


def _last_dim(f: Fact | None) -> D.Dim | None:
    if f is None or not f.shape:
        return None
    return f.shape[-1]


@register("EmbedLayerNormalization", domain=MS)
def embed_layer_norm(ctx, ins: list) -> list:
    """EmbedLayerNormalization: output and embedding_sum ``(B, S, H)`` in the embeddings' type, H the
    embeddings' last dim; mask_index ``(B,)`` int32, the one type the schema's T1 allows (also
    when input_ids, T1 too, is declared otherwise: onnxruntime refuses such a model)."""
    ids, word = ins[0], _arg(ins, 2)
    dtype = word.dtype if word is not None else 0
    hidden = _last_dim(word)
    for k in (3, 5, 6):  # position_embedding, gamma, beta share the hidden size
        h = _last_dim(_arg(ins, k))
        if h is not None:
            hidden = h if hidden is None else ctx.unify(hidden, h)
    if ids.shape is not None and len(ids.shape) != 2:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID,
            f"EmbedLayerNormalization input_ids must be 2-D, got rank {len(ids.shape)}",
        )
    if ids.shape is None:
        b, s = ctx.fresh(), ctx.fresh()
    else:
        b, s = ids.shape
    h = ctx.fresh() if hidden is None else hidden
    out = tensor(dtype, (b, s, h))
    return [out, tensor(TensorProto.INT32, (b,)), out]


@register(["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"], domain=MS)
def skip_layer_norm(ctx, ins: list) -> list:
    """Skip(Simplified)LayerNormalization: output and input_skip_bias_sum like the input; mean and
    inv_std_var (float) are the input's dims with the last one 1."""
    x = ins[0]
    stat = None if x.shape is None else tuple(x.shape[:-1]) + (1,)
    same = tensor(x.dtype, x.shape)
    return [same, tensor(FLOAT, stat), tensor(FLOAT, stat), same]


def _stats(ctx, x: Fact) -> tuple | None:
    if x.shape is None:
        return None
    r = len(x.shape)
    axis = norm_axis(ctx.attr("axis", -1), r)
    return tuple(x.shape[:axis]) + (1,) * (r - axis)


@register("SimplifiedLayerNormalization", since=1)
@register("SimplifiedLayerNormalization", domain=MS)
def simplified_layer_norm(ctx, ins: list) -> list:
    """SimplifiedLayerNormalization (onnxruntime's default-domain RMS norm): Y like X in the scale's
    type; inv_std_var in ``stash_type`` with X's dims up to ``axis``, then 1s."""
    x, scale = ins[0], _arg(ins, 1)
    dtype = scale.dtype if scale is not None and scale.dtype else x.dtype
    stash = ctx.attr("stash_type", 1)
    return [tensor(dtype, x.shape), tensor(stash, _stats(ctx, x))]


@register("LayerNormalization", since=1)
@register("LayerNormalization", domain=MS)
def layer_norm_contrib(ctx, ins: list) -> list:
    """LayerNormalization before ai.onnx opset 17 (onnxruntime's own default-domain schema): Y like
    X in the scale's type; Mean and InvStdDev in ``stash_type`` with X's dims up to ``axis``, then 1s.
    onnxruntime runs it with the kernel of opset 17's, which takes the same scale and bias (the
    guards of :func:`~shapeinfer.inference.ops.normalization.layer_norm`; probed over axes and
    parameter shapes at opsets 13 and 17 alike)."""
    x, scale = ins[0], _arg(ins, 1)
    if x.shape is not None:
        axis = norm_axis(ctx.attr("axis", -1), len(x.shape))
        params_broadcast(ctx, tuple(x.shape[axis:]), [scale, _arg(ins, 2)])
    dtype = scale.dtype if scale is not None and scale.dtype else x.dtype
    stash = ctx.attr("stash_type", 1)
    stat = _stats(ctx, x)
    return [tensor(dtype, x.shape), tensor(stash, stat), tensor(stash, stat)]


@register(["GroupNorm", "SkipGroupNorm", "GatedRMSNorm", "BranchwiseRMSNorm"], domain=MS)
def group_norm(ctx, ins: list) -> list:
    """GroupNorm / SkipGroupNorm / GatedRMSNorm / BranchwiseRMSNorm: Y (and SkipGroupNorm's sum S)
    like X."""
    x = ins[0]
    same = tensor(x.dtype, x.shape)
    return [same, same]
