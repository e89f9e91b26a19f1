"""Pad and CenterCropPad: dims grow (or shrink) by the pads, symbolic pads allowed."""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import dim_values, is_static_shape, known_ints, norm_axis, row_major_strides
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, tensor


def pad_dims(ctx, shape: tuple, pads: list | None, axes: list[int] | None, mode: str = "constant") -> tuple:
    """``shape`` with ``pads`` ([begins..., ends...] over ``axes``) added; fresh where unknown.

    What onnxruntime runs (probed over every pair of pads in -3..3 and sizes 1..7): a result of
    at least 0; for ``reflect``, ``edge`` and ``wrap`` on an axis with a pad, an input left of
    at least 1 after the negative pads crop it, and for ``reflect`` each positive pad less than
    that, unless the input is empty (another axis left with 0, or this one 0 with pads that sum
    to 0: then nothing is read); ``wrap`` of no empty input at all (probed with sizes 0..4 too).
    An error where the sizes are known, a guard where they are not proven."""
    r = len(shape)
    if axes is None:
        axes = list(range(r))
    axes = [norm_axis(a, r) for a in axes]
    if len(set(axes)) != len(axes):
        raise InferenceError(codes.PAD_INVALID, f"Pad axes {axes} repeat")
    out = list(shape)
    if pads is None:
        for a in axes:
            out[a] = ctx.fresh()
        return tuple(out)
    if len(pads) != 2 * len(axes):
        raise InferenceError(codes.PAD_INVALID, f"Pad has {len(pads)} pads for {len(axes)} axes")
    if mode == "wrap":  # onnxruntime wraps no empty input, whatever the pads
        for a, x in enumerate(shape):
            if x == 0:
                raise InferenceError(codes.PAD_INVALID, f"wrap Pad of an empty input (axis {a} is 0)")
            if type(x) is not int and not ctx.symbols.prove_le(1, x):
                ctx.assume("bound", 1, x, report=True)
    n = len(axes)
    left = list(shape)  # each axis as the negative pads leave it
    for i, a in enumerate(axes):
        b, e = pads[i], pads[i + n]
        left[a] = None if b is None or e is None else D.add(shape[a], D.add(D.dmin(b, 0), D.dmin(e, 0)))
    for i, a in enumerate(axes):
        b, e = pads[i], pads[i + n]
        if b is None or e is None:
            out[a] = ctx.fresh()
            continue
        d = D.add(D.add(shape[a], b), e)
        if type(d) is int and d < 0:
            raise InferenceError(codes.PAD_INVALID, f"Pad gives a negative dim {d} on axis {a}")
        others = [x for j, x in enumerate(left) if j != a]
        if mode == "constant" or not any(x is None or x == 0 for x in others):
            # axes that may leave 0 (constant mode reads none of them; an unknown one is None)
            empty = [x for x in others if x is not None and not ctx.symbols.prove_le(1, x)]
            _guard_pads(ctx, left[a], b, e, d, a, mode, empty, shape[a])
        out[a] = d
    return tuple(out)


def _guard_pads(
    ctx,
    left: D.Dim,
    b: D.Dim,
    e: D.Dim,
    out: D.Dim,
    axis: int,
    mode: str,
    empty: list | None = None,
    size: D.Dim | None = None,
) -> None:
    """The conditions of :func:`pad_dims` on one axis padded by ``b`` and ``e``, ``left`` of it
    after the negative pads; ``empty``: the other axes' sizes left that may be 0 (where one is,
    the input is empty and a mode reads nothing: each condition of the mode is then an
    alternative of those). ``size``: the axis's input size; where it may be 0, onnxruntime also
    runs a mode whose pads sum to 0 (an empty axis cropped by 1 and padded by 1 stays empty:
    the alternative ``size + out <= 0``, both being at least 0)."""
    need = [(0, out)]
    if mode != "constant" and not (b == 0 and e == 0):  # (an axis not padded may be empty)
        reads = [(1, left)]
        if mode == "reflect":
            reads += [(D.add(D.dmax(p, 0), 1), left) for p in (b, e)]
        alternatives = [] if mode == "wrap" else list(empty or ())  # (wrap: see pad_dims)
        if mode != "wrap" and size is not None and (size == 0 or not ctx.symbols.prove_le(1, size)):
            alternatives.append(D.add(size, out))
        if alternatives:  # lo <= hi or the input is empty: min(lo - hi, x, ...) <= 0
            reads = [(D.dmin(D.sub(lo, hi), *alternatives), 0) for lo, hi in reads]
        need += reads
    for lo, hi in need:
        if type(lo) is int and type(hi) is int:
            if lo > hi:
                raise InferenceError(
                    codes.PAD_INVALID,
                    f"{mode} Pad of axis {axis} by ({D.format(b)}, {D.format(e)}) cannot run: it needs {lo} <= {hi}",
                )
        elif not ctx.symbols.prove_le(lo, hi):
            ctx.assume("bound", lo, hi, report=True)


def pad_values(x: Fact, out_shape: tuple, pads: list, axes: list[int] | None, fill) -> tuple | None:
    """The values of constant-mode Pad of ``x`` (known values, static shape) to ``out_shape``:
    ``fill`` outside, ``x``'s values inside (keras3's export builds its pads by padding a small
    int tensor). None when anything is unknown or the result is large."""
    if x.value is None or not is_static_shape(x.shape) or not is_static_shape(out_shape) or fill is None:
        return None
    r = len(x.shape)
    axes = list(range(r)) if axes is None else [norm_axis(a, r) for a in axes]
    if any(type(p) is not int for p in pads) or len(pads) != 2 * len(axes):
        return None
    n = 1
    for d in out_shape:
        n *= d
    if n > MAX_VALUE_ELEMENTS:
        return None
    begin = [0] * r
    for i, a in enumerate(axes):
        begin[a] = pads[i]
    st = row_major_strides(x.shape)
    out = []
    for k in range(n):
        rest, src = k, 0
        for axis in range(r - 1, -1, -1):
            pos = rest % out_shape[axis] - begin[axis]
            rest //= out_shape[axis]
            if not 0 <= pos < x.shape[axis]:
                src = None
                break
            src += pos * st[axis]
        out.append(fill if src is None else x.value[src])
    return tuple(out)


def _mode(ctx) -> str:
    """The Pad's ``mode`` attribute as text (``constant`` by default)."""
    mode = ctx.attr("mode", "constant")
    return mode.decode("utf-8", "replace") if isinstance(mode, bytes) else str(mode)


@register("Pad", since=1)
def pad_v1(ctx, ins: list) -> list:
    """Pad-1/2: ``paddings`` / ``pads`` attribute."""
    x = ins[0]
    pads = ctx.attr("pads") if ctx.has_attr("pads") else ctx.attr("paddings")
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if pads is None:
        raise InferenceError(codes.PAD_INVALID, "Pad needs pads")
    return [tensor(x.dtype, pad_dims(ctx, x.shape, list(pads), None, _mode(ctx)))]


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
    shape = pad_dims(ctx, x.shape, None if pads is None else list(pads), axes, _mode(ctx))
    value = None
    if pads is not None and x.value is not None and _mode(ctx) == "constant":
        cf = ins[2] if len(ins) > 2 else None
        fill = 0 if cf is None else (cf.value[0] if cf.value is not None and len(cf.value) == 1 else None)
        value = pad_values(x, shape, list(pads), axes, fill)
    return [tensor(x.dtype, shape, value)]


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


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Pad", shape_inputs={1: "exact", 3: "exact"})
