"""Ops with small shape formulas: Pad, TopK, OneHot, Einsum, NonZero, Compress, Unique, CenterCropPad,
Trilu, CumSum, EyeLike, Det, losses, quantization, random generators, strings, scatters,
BatchNormalization and the training ops.

Data-dependent outputs (NonZero, Compress, Unique) are computed exactly when the input values
are tracked, and are fresh symbols otherwise.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer import dims as D
from shapeinfer.diagnostics import InferenceError
from shapeinfer.facts import Fact, tensor
from shapeinfer.ops.common import broadcast_shapes, dim_values, known_ints, norm_axis, scalar_value
from shapeinfer.registry import register

INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL
FLOAT = TensorProto.FLOAT


def _same(ctx, ins: list) -> list:
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


for _op, _since in [
    ("Trilu", 14),
    ("CumSum", 11),
    ("CumProd", 26),
    ("ReverseSequence", 10),
    ("Scatter", 9),
    ("ScatterElements", 11),
    ("ScatterND", 11),
    ("Shrink", 9),
]:
    register(_op, since=_since)(_same)


# ------------------------------------------------------------------------------ Pad


def pad_dims(ctx, shape: tuple, pads: list | None, axes: list[int] | None) -> tuple:
    """``shape`` with ``pads`` ([begins..., ends...] over ``axes``) added; fresh where unknown."""
    r = len(shape)
    if axes is None:
        axes = list(range(r))
    axes = [norm_axis(a, r) for a in axes]
    if len(set(axes)) != len(axes):
        raise InferenceError("E060", f"Pad axes {axes} repeat")
    out = list(shape)
    if pads is None:
        for a in axes:
            out[a] = ctx.fresh()
        return tuple(out)
    if len(pads) != 2 * len(axes):
        raise InferenceError("E060", f"Pad has {len(pads)} pads for {len(axes)} axes")
    n = len(axes)
    for i, a in enumerate(axes):
        b, e = pads[i], pads[i + n]
        if b is None or e is None:
            out[a] = ctx.fresh()
            continue
        d = D.add(D.add(shape[a], b), e)
        if type(d) is int and d < 0:
            raise InferenceError("E060", f"Pad gives a negative dim {d} on axis {a}")
        out[a] = d
    return tuple(out)


@register("Pad", since=1)
def pad_v1(ctx, ins: list) -> list:
    """Pad-1/2: ``paddings`` / ``pads`` attribute."""
    x = ins[0]
    pads = ctx.attr("pads") if ctx.has_attr("pads") else ctx.attr("paddings")
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if pads is None:
        raise InferenceError("E060", "Pad needs pads")
    return [tensor(x.dtype, pad_dims(ctx, x.shape, list(pads), None))]


@register("Pad", since=11)
def pad_v11(ctx, ins: list) -> list:
    """Pad-11+: ``pads`` input (symbolic values allowed), ``axes`` input from 18."""
    x, pf = ins[0], ins[1]
    af = ins[3] if len(ins) > 3 and ctx.version >= 18 else None
    if x.shape is None:
        return [Fact(x.dtype, None)]
    axes = None
    if af is not None:
        axes = known_ints(af)
        if axes is None:
            return [tensor(x.dtype, ctx.fresh_shape(len(x.shape)))]
        axes = list(axes)
    pads = dim_values(pf)
    return [tensor(x.dtype, pad_dims(ctx, x.shape, None if pads is None else list(pads), axes))]


@register("CenterCropPad", since=18)
def center_crop_pad(ctx, ins: list) -> list:
    """CenterCropPad: the listed axes (all by default) take the ``shape`` input's values."""
    x, sf = ins[0], ins[1]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    r = len(x.shape)
    axes = [norm_axis(a, r) for a in ctx.attr("axes", list(range(r)))]
    vals = dim_values(sf)
    out = list(x.shape)
    for i, a in enumerate(axes):
        v = vals[i] if vals is not None and i < len(vals) else None
        out[a] = ctx.fresh() if v is None else v
    return [tensor(x.dtype, out)]


# ------------------------------------------------------------------------------ TopK / OneHot


@register("TopK", since=1)
def topk(ctx, ins: list) -> list:
    """TopK: the axis dim becomes K (attribute ``k`` before 10, input from 10); Indices int64."""
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
            raise InferenceError("E061", f"TopK k={k} is negative")
        if type(x.shape[axis]) is int and k > x.shape[axis]:
            raise InferenceError("E061", f"TopK k={k} exceeds dim {x.shape[axis]}")
    shape = list(x.shape)
    shape[axis] = ctx.fresh() if k is None else k
    return [tensor(x.dtype, shape), tensor(INT64, shape)]


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
        raise InferenceError("E010", f"OneHot axis {axis} out of range for output rank {r}")
    axis = axis + r if axis < 0 else axis
    dv = scalar_value(depth_f)
    depth = None
    if type(dv) is int or isinstance(dv, D.Expr):
        depth = dv
    elif isinstance(dv, float) and dv.is_integer():
        depth = int(dv)
    if type(depth) is int and depth < 1:
        raise InferenceError("E062", f"OneHot depth {depth} must be positive")
    shape = list(idx.shape)
    shape.insert(axis, ctx.fresh() if depth is None else depth)
    return [tensor(dtype, shape)]


# ------------------------------------------------------------------------------ Einsum


def _einsum_terms(eq: str, n_in: int) -> tuple[list[str], str | None]:
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_in:
        raise InferenceError("E063", f"Einsum equation {eq!r} has {len(terms)} operands for {n_in} inputs")
    for t in terms + ([rhs] if arrow else []):
        body = t.replace("...", "")
        if "." in body or not all(c.isalpha() for c in body):
            raise InferenceError("E063", f"Einsum term {t!r} is not valid")
    return terms, (rhs if arrow else None)


@register("Einsum", since=12)
def einsum(ctx, ins: list) -> list:
    """Einsum: labels map to dims (equal labels unify), ellipses broadcast; implicit output sorted."""
    facts = list(ins)
    dtype = next((f.dtype for f in facts if f is not None and f.dtype), 0)
    terms, out_term = _einsum_terms(ctx.attr("equation", ""), len(facts))
    labels: dict[str, D.Dim] = {}
    counts: dict[str, int] = {}
    ell_shapes = []
    for t, f in zip(terms, facts):
        for c in t.replace("...", ""):
            counts[c] = counts.get(c, 0) + 1
        if f is None or f.shape is None:
            if "..." in t:
                ell_shapes.append(None)
            continue
        shape = f.shape
        if "..." in t:
            pre, post = t.split("...")
            n_ell = len(shape) - len(pre) - len(post)
            if n_ell < 0:
                raise InferenceError("E063", f"Einsum term {t!r} needs rank >= {len(pre) + len(post)}")
            ell_shapes.append(tuple(shape[len(pre) : len(pre) + n_ell]))
            letters = list(pre) + [None] * n_ell + list(post)
        else:
            if len(t) != len(shape):
                raise InferenceError("E063", f"Einsum term {t!r} does not match rank {len(shape)}")
            letters = list(t)
        for c, d in zip(letters, shape):
            if c is None:
                continue
            if c in labels:
                # numpy broadcasts a labelled dim of 1 against the others
                if labels[c] == 1:
                    labels[c] = d
                elif d != 1:
                    labels[c] = ctx.unify(labels[c], d)
            else:
                labels[c] = d
    ell = broadcast_shapes(ctx, ell_shapes) if ell_shapes else ()
    if out_term is None:
        out_letters = sorted(c for c, n in counts.items() if n == 1)
        out_term = ("..." if ell_shapes else "") + "".join(out_letters)
    out: list[D.Dim] = []
    pre, sep, post = out_term.partition("...")
    for c in pre:
        out.append(labels.get(c) if c in labels else ctx.fresh())
    if sep:
        if ell is None:
            return [Fact(dtype, None)]
        out.extend(ell)
    for c in post:
        out.append(labels.get(c) if c in labels else ctx.fresh())
    return [tensor(dtype, out)]


# ------------------------------------------------------------------------------ data-dependent sizes


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


# ------------------------------------------------------------------------------ small formulas


@register("EyeLike", since=9)
def eye_like(ctx, ins: list) -> list:
    """EyeLike: the input's 2-D shape, typed by ``dtype`` or the input."""
    x = ins[0]
    return [tensor(ctx.attr("dtype", x.dtype) or x.dtype, x.shape)]


@register("Det", since=11)
def det(ctx, ins: list) -> list:
    """Det: ``X[..., M, M]`` -> ``X[...]``."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if len(x.shape) < 2:
        raise InferenceError("E064", "Det input must have rank >= 2")
    ctx.unify(x.shape[-1], x.shape[-2])
    return [tensor(x.dtype, x.shape[:-2])]


@register("SoftmaxCrossEntropyLoss", since=12)
def softmax_ce_loss(ctx, ins: list) -> list:
    """SoftmaxCrossEntropyLoss: the labels' shape for reduction none, else a scalar; log_prob like scores."""
    scores, labels = ins[0], ins[1]
    red = ctx.attr("reduction", "mean")
    out = tensor(scores.dtype, labels.shape if red == "none" else ())
    return [out, tensor(scores.dtype, scores.shape)]


@register("NegativeLogLikelihoodLoss", since=12)
def nll_loss(ctx, ins: list) -> list:
    """NegativeLogLikelihoodLoss: the target's shape for reduction none, else a scalar."""
    x, target = ins[0], ins[1]
    red = ctx.attr("reduction", "mean")
    return [tensor(x.dtype, target.shape if red == "none" else ())]


@register("BatchNormalization", since=1)
def batch_norm(ctx, ins: list) -> list:
    """BatchNormalization: Y like X; the optional statistics are ``(C,)``."""
    x = ins[0]
    mean = ins[3] if len(ins) > 3 else None
    c = None
    if x.shape is not None and len(x.shape) > 1:
        c = x.shape[1]
    elif len(ins) > 1 and ins[1] is not None and ins[1].shape is not None and len(ins[1].shape) == 1:
        c = ins[1].shape[0]
    stat_dt = mean.dtype if mean is not None and mean.dtype else x.dtype
    stat = Fact(stat_dt, None) if c is None else tensor(stat_dt, (c,))
    return [tensor(x.dtype, x.shape)] + [stat] * (ctx.num_outputs - 1)


@register("QuantizeLinear", since=10)
def quantize_linear(ctx, ins: list) -> list:
    """QuantizeLinear: x's shape; type of y_zero_point, else ``output_dtype``, else uint8."""
    x = ins[0]
    zp = ins[2] if len(ins) > 2 else None
    if zp is not None and zp.dtype:
        dt = zp.dtype
    else:
        dt = ctx.attr("output_dtype", 0) or TensorProto.UINT8
    return [tensor(dt, x.shape)]


@register("DequantizeLinear", since=10)
def dequantize_linear(ctx, ins: list) -> list:
    """DequantizeLinear: x's shape; type ``output_dtype``, else x_scale's (float before 19)."""
    x, scale = ins[0], ins[1]
    dt = ctx.attr("output_dtype", 0) or (scale.dtype if scale is not None and ctx.version >= 19 else FLOAT)
    return [tensor(dt, x.shape)]


@register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, ins: list) -> list:
    """DynamicQuantizeLinear: y uint8 like x, scalar float scale and uint8 zero point."""
    x = ins[0]
    return [tensor(TensorProto.UINT8, x.shape), tensor(FLOAT, ()), tensor(TensorProto.UINT8, ())]


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


@register("BitCast", since=26)
def bitcast(ctx, ins: list) -> list:
    """BitCast: same shape (the bit widths must match), type ``to``."""
    return [tensor(ctx.attr("to", 0), ins[0].shape)]


@register("GridSample", since=16)
def grid_sample(ctx, ins: list) -> list:
    """GridSample: ``(N, C) + grid.shape[1:-1]``."""
    x, grid = ins[0], ins[1]
    if grid is None or grid.shape is None:
        return [Fact(x.dtype, None)]
    n = grid.shape[0]
    if x.shape is not None and len(x.shape) >= 2:
        n = ctx.unify(x.shape[0], grid.shape[0])
        c = x.shape[1]
    else:
        c = ctx.fresh()
    return [tensor(x.dtype, (n, c) + tuple(grid.shape[1:-1]))]


@register("AffineGrid", since=20)
def affine_grid(ctx, ins: list) -> list:
    """AffineGrid: size ``(N, C, H, W)`` -> ``(N, H, W, 2)``; ``(N, C, D, H, W)`` -> ``(N, D, H, W, 3)``."""
    theta, size = ins[0], ins[1]
    vals = dim_values(size)
    n_sp = None
    if vals is not None:
        n_sp = len(vals) - 2
    elif size.shape is not None and len(size.shape) == 1 and type(size.shape[0]) is int:
        n_sp = size.shape[0] - 2
    if n_sp not in (2, 3):
        return [Fact(theta.dtype, None)]
    if vals is None:
        vals = (None,) * (n_sp + 2)
    sp = tuple(ctx.fresh() if v is None else v for v in vals[2:])
    n = vals[0]
    if n is None and theta.shape is not None and theta.shape:
        n = theta.shape[0]
    return [tensor(theta.dtype, (ctx.fresh() if n is None else n,) + sp + (n_sp,))]


# ------------------------------------------------------------------------------ strings


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


@register("ImageDecoder", since=20)
def image_decoder(ctx, ins: list) -> list:
    """ImageDecoder: ``(H, W, channels)``; 1 channel for Grayscale, 3 for RGB / BGR."""
    fmt = ctx.attr("pixel_format", "RGB")
    return [tensor(TensorProto.UINT8, (ctx.fresh(), ctx.fresh(), 1 if fmt == "Grayscale" else 3))]


# ------------------------------------------------------------------------------ training (preview)


def _optimizer(groups_in: int, out_groups: list[int]):
    def rule(ctx, ins: list) -> list:
        n = (len(ins) - 2) // groups_in
        out = []
        for g in out_groups:
            for i in range(n):
                f = ins[2 + g * n + i]
                out.append(None if f is None else tensor(f.dtype, f.shape))
        return out

    return rule


register("Adagrad", domain="ai.onnx.preview.training")(_optimizer(3, [0, 2]))
register("Momentum", domain="ai.onnx.preview.training")(_optimizer(3, [0, 2]))
register("Adam", domain="ai.onnx.preview.training")(_optimizer(4, [0, 2, 3]))
