"""Convolutions and pools: output spatial sizes with pads, auto_pad, strides, dilations, ceil_mode.

Every size is the one onnxruntime computes (``providers/common.h`` ``ComputePadAndOutputShape``
for convolutions, ``pool_attributes.h`` ``ComputeOutputSize`` for pools, ``conv_transpose``'s
``ComputeTransposePadAndOutputShape``), checked on a grid of sizes in
``tests/inference/test_pool_edges.py``. With ``eff = (k-1)*d + 1`` and ``num = in + pb + pe - eff``:

- Convolutions: ``floor(num / s) + 1``; onnxruntime refuses a window past the padded input
  (``num < 0``). SAME_UPPER / SAME_LOWER: ``ceil(in / s)``; VALID: the same with no pads.
- Pools truncate toward zero: ``trunc(num / s) + 1``, so a window that overhangs the padded
  input by less than a stride still gives 1 and one that overhangs by a stride 0; a negative
  size is refused. With ``ceil_mode``: ``ceil(num / s) + 1``, minus one when the last window
  would start in the right padding (``(out-1)*s >= in + pb``). VALID is ``pb = pe = 0``; SAME pads
  ``(ceil(in/s) - 1)*s + k - in`` for the undilated kernel (``num = (ceil(in/s) - 1)*s -
  (d-1)*(k-1)``), and refuses the negative padding that gives when ``k < s``.
- ConvTranspose: ``s*(in-1) + output_padding + eff - pb - pe``; with SAME the padding is
  ``max(0, eff + output_padding - s)``, so ``in*s - max(0, s - output_padding - eff)``; else the
  ``output_shape`` attribute. A size that is not positive is refused.
- MaxUnpool: ``(in-1)*s - pb - pe + k``, or the ``output_shape`` input.
"""

from __future__ import annotations

from collections.abc import Callable

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, known_ints, rank_from_model
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.dims import INT64_MAX
from shapeinfer.symbolic.facts import Fact, tensor

INT64 = TensorProto.INT64


def conv_out_dim(
    size: D.Dim,
    kernel: D.Dim,
    stride: int,
    dilation: int,
    pad_begin: int,
    pad_end: int,
    auto_pad: str,
    ceil_mode: int | None = None,
) -> D.Dim | None:
    """One spatial output size of a convolution (``ceil_mode`` None) or a pool (``ceil_mode``
    its attribute, 0 or 1), equal to onnxruntime's at every input size where it runs the node
    (see the module docstring).

    Raises E040 where the sizes are known and onnxruntime refuses them (a convolution's window
    past the padded input, a pool's negative size). None when the size cannot be written as a
    dim (a symbolic ceil_mode pool whose end padding is at least the window, which onnxruntime
    refuses anyway: its pads must be smaller than the kernel).
    """
    if stride <= 0 or dilation <= 0 or (type(kernel) is int and kernel <= 0):
        raise InferenceError(
            codes.CONV_OR_SEQUENCE_INVALID, f"invalid kernel {kernel} / stride {stride} / dilation {dilation}"
        )
    spread = _over_minmax(
        size, lambda arg: conv_out_dim(arg, kernel, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode)
    )
    if spread is not None:
        return spread
    pool = ceil_mode is not None
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return _pool_same(size, kernel, stride, dilation, ceil_mode) if pool else D.ceildiv(size, stride)
    eff = D.add(D.mul(D.sub(kernel, 1), dilation), 1)
    if type(eff) is int and eff > INT64_MAX:
        raise InferenceError(
            codes.INT64_OVERFLOW,
            f"effective kernel size (kernel - 1) * dilation + 1 = ({kernel} - 1) * {dilation} + 1 overflows int64",
        )
    if auto_pad == "VALID":
        pad_begin = pad_end = 0
    span = D.sub(D.add(size, pad_begin + pad_end), eff)
    if not pool:
        if type(span) is int and span < 0:
            raise InferenceError(
                codes.CONV_OR_SEQUENCE_INVALID, f"window of {eff} is larger than the padded input ({span + eff})"
            )
        if auto_pad == "VALID":
            return D.ceildiv(D.sub(D.add(size, 1), eff), stride)
        return D.add(D.floordiv(span, stride), 1)
    if not ceil_mode:
        return _nonnegative(_trunc_out(span, stride), eff, span)
    out = D.add(D.ceildiv(span, stride), 1)
    # The last window must start inside the input or the left padding.
    if type(out) is int and type(size) is int:
        return _nonnegative(out - 1 if (out - 1) * stride >= size + pad_begin else out, eff, span)
    if D.compare(pad_end, eff) != -1:
        return None
    # With pe < eff the correction applies at most once, so it is min(out, ceil((in + pb) / s)).
    return D.dmin(out, D.ceildiv(D.add(size, pad_begin), stride))


def _over_minmax(size: D.Dim, size_of: Callable[[D.Dim], D.Dim | None]) -> D.Dim | None:
    """``size_of(size)`` for a ``size`` that is ``max(a, b, ...)`` (``min``), as ``max(size_of(a),
    size_of(b), ...)`` (``min``): every size formula of this module is non-decreasing in the input
    size, so they are equal, and the arguments' forms simplify where the whole does not (a pool
    after a pool: ``max(max(h//2, 1)//2, 1)`` is ``max(h//4, 1)``). None when ``size`` is no such
    dim, or an argument's size is no dim or an error (a constant argument the window does not
    fit: the size is then worked out on ``size`` itself)."""
    if not isinstance(size, D.Expr) or len(size.terms) != 1:
        return None
    mono, coef = size.terms[0]
    if coef != 1 or len(mono) != 1 or mono[0].kind not in ("max", "min"):
        return None
    try:
        parts = [size_of(a) for a in mono[0].args]
    except InferenceError:
        return None
    if any(p is None for p in parts):
        return None
    return D.dmax(*parts) if mono[0].kind == "max" else D.dmin(*parts)


def _trunc_out(num: D.Dim, stride: int) -> D.Dim:
    """``trunc(num / stride) + 1``, onnxruntime's pool size in floor mode, for every ``num``.

    The floor form ``num // stride + 1`` where it is the same (``num`` provably >= 0, or stride
    1); else ``max(num // s + 1, min(ceil(num / s) + 1, 1))``: the floor where ``num >= 0``, the
    ceiling (truncation of a negative quotient) where ``num < 0``.
    """
    if type(num) is int:
        return (num // stride if num >= 0 else -(-num // stride)) + 1
    floor_out = D.add(D.floordiv(num, stride), 1)
    lb = D.lower_bound(num)
    if stride == 1 or (lb is not None and lb >= 0):
        return floor_out
    return D.dmax(floor_out, D.dmin(D.add(D.ceildiv(num, stride), 1), 1))


def _pool_same(size: D.Dim, kernel: D.Dim, stride: int, dilation: int, ceil_mode: int) -> D.Dim:
    """A pool's size with auto_pad SAME_UPPER / SAME_LOWER, as onnxruntime pads it: to
    ``(c - 1)*s + k - in`` with ``c = ceil(in / s)``, for the kernel without its dilation, so
    the window's span is ``(c - 1)*s - (d - 1)*(k - 1)``: ``c`` when that excess is 0. (Where the
    padding is negative, ``k < s``, onnxruntime refuses the node.) The last window starts before
    ``(c - 1)*s < in``, so ceil_mode never drops it."""
    c = D.ceildiv(size, stride)
    excess = D.mul(D.sub(kernel, 1), dilation - 1)
    if excess == 0:
        return c
    num = D.sub(D.mul(c, stride), D.add(excess, stride))
    out = D.add(D.ceildiv(num, stride), 1) if ceil_mode else _trunc_out(num, stride)
    return _nonnegative(out, D.add(excess, kernel), num)


def _nonnegative(out: D.Dim, eff: D.Dim, span: D.Dim) -> D.Dim:
    """``out``; E040 when it is a negative int, a size onnxruntime refuses ("Calculated output
    dimension is negative")."""
    if type(out) is int and out < 0:
        raise InferenceError(
            codes.CONV_OR_SEQUENCE_INVALID,
            f"window of {D.format(eff)} overhangs the padded input ({D.format(D.add(span, eff))}) "
            f"by a stride or more: a negative output size ({out})",
        )
    return out


def _ints_attr(ctx, name: str, n: int, default: int) -> list[int]:
    v = ctx.attr(name)
    if v is None:
        return [default] * n
    v = list(v)
    if len(v) != n:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"{ctx.op_type} {name} has {len(v)} entries, expected {n}")
    return v


def spatial_dims(ctx, sizes, kernel, ceil_mode: int | None = None) -> list[D.Dim]:
    """The output spatial dims of a convolution (``ceil_mode`` None) or a pool (``ceil_mode``
    its attribute) over input spatial ``sizes``: :func:`conv_out_dim` per dim, a fresh symbol
    where it gives None. A convolution's dims are at least 1 wherever it runs, a pool's at
    least 0 (onnxruntime refuses a window that does not fit the padded input, and a pool's
    negative size; it pools to an empty axis): a hard guard where not proven."""
    n_sp = len(sizes)
    if len(kernel) != n_sp:
        raise InferenceError(
            codes.CONV_OR_SEQUENCE_INVALID, f"{ctx.op_type} kernel has {len(kernel)} dims for {n_sp} spatial dims"
        )
    strides = _ints_attr(ctx, "strides", n_sp, 1)
    dil = _ints_attr(ctx, "dilations", n_sp, 1)
    pads = _ints_attr(ctx, "pads", 2 * n_sp, 0)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    out = []
    for i in range(n_sp):
        d = conv_out_dim(sizes[i], kernel[i], strides[i], dil[i], pads[i], pads[i + n_sp], auto_pad, ceil_mode)
        least = 1 if ceil_mode is None else 0
        if isinstance(d, D.Expr) and not ctx.symbols.prove_le(least, d):
            ctx.assume("bound", least, d)  # onnxruntime refuses a window that does not fit
        out.append(ctx.fresh() if d is None else d)
    return out


def conv_kernel(ctx, w: Fact | None, n_sp: int) -> list[D.Dim] | None:
    """The kernel's spatial dims: ``kernel_shape``, else W's dims after the first two."""
    kernel = ctx.attr("kernel_shape")
    if kernel is not None:
        return list(kernel)
    if w is None or w.shape is None or len(w.shape) != n_sp + 2:
        return None
    return list(w.shape[2:])


def input_channels(ctx, x: Fact, w: Fact | None, per_group: int) -> None:
    """The input's channels (dim 1) must be what W takes: ``W.shape[per_group] * group`` (Conv
    and its kin: axis 1; ConvTranspose: axis 0 times 1); runtimes refuse anything else. Recorded
    as an equality of the node (G003 for a symbol, G002 for two different numbers)."""
    if w is None or w.shape is None or len(w.shape) <= per_group or x.shape is None or len(x.shape) < 2:
        return
    group = ctx.attr("group", 1) if per_group == 1 else 1
    if type(group) is not int or group < 1:
        return
    ctx.unify(x.shape[1], D.mul(w.shape[per_group], group))


def conv_like(ctx, x: Fact | None, w: Fact | None, dtype: int) -> list:
    """A convolution's output ``N x M x spatial`` (M = W's first dim), typed ``dtype``; the
    input's channels must be W's second dim times ``group``."""
    if x is None or x.shape is None:
        r = None if w is None or w.shape is None else len(w.shape)
        return [tensor(dtype, ctx.fresh_shape(r)) if r else Fact(dtype, None)]
    n_sp = len(x.shape) - 2
    if n_sp < 1:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"{ctx.op_type} input must have rank >= 3")
    input_channels(ctx, x, w, 1)
    m = w.shape[0] if w is not None and w.shape is not None and w.shape else ctx.fresh()
    kernel = conv_kernel(ctx, w, n_sp)
    if kernel is None:
        return [tensor(dtype, (x.shape[0], m) + ctx.fresh_shape(n_sp))]
    return [tensor(dtype, (x.shape[0], m) + tuple(spatial_dims(ctx, x.shape[2:], kernel)))]


@register("Conv")
def conv(ctx, ins: list) -> list:
    """Conv: ``N x M x spatial`` with M = W's first dim."""
    return conv_like(ctx, ins[0], ins[1] if len(ins) > 1 else None, ins[0].dtype)


@register("ConvInteger", since=10)
def conv_integer(ctx, ins: list) -> list:
    """ConvInteger: Conv's dims, int32."""
    return conv_like(ctx, ins[0], ins[1], TensorProto.INT32)


@register("QLinearConv", since=10)
def qlinear_conv(ctx, ins: list) -> list:
    """QLinearConv: Conv's dims over x (input 0) and w (input 3), typed like y_zero_point."""
    yz = ins[7] if len(ins) > 7 else None
    return conv_like(ctx, ins[0], ins[3], yz.dtype if yz is not None else ins[0].dtype)


@register("DeformConv", since=19)
def deform_conv(ctx, ins: list) -> list:
    """DeformConv: Conv's output dims."""
    return conv_like(ctx, ins[0], ins[1], ins[0].dtype)


@register("ConvTranspose")
def conv_transpose(ctx, ins: list) -> list:
    """ConvTranspose: ``N x (W.shape[1]*group) x spatial`` per output_shape, auto_pad or pads; the
    input's channels must be W's first dim. onnxruntime refuses a computed size below 1, and an
    ``output_shape`` the input is too short for (its padding ``s*(in - 1) + op + eff - out``
    below ``op + 1 - s``, probed): guards where not proven."""
    x, w = ins[0], ins[1]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    n_sp = len(x.shape) - 2
    if n_sp < 1:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, "ConvTranspose input must have rank >= 3")
    input_channels(ctx, x, w, 0)
    group = ctx.attr("group", 1)
    m = D.mul(w.shape[1], group) if w is not None and w.shape is not None and len(w.shape) > 1 else ctx.fresh()
    out_shape = ctx.attr("output_shape")
    if out_shape is not None:
        out_shape = list(out_shape)
        if len(out_shape) == n_sp + 2:
            out_shape = out_shape[2:]
        if len(out_shape) != n_sp:
            raise InferenceError(
                codes.CONV_OR_SEQUENCE_INVALID, f"ConvTranspose output_shape has {len(out_shape)} entries for {n_sp}"
            )
        kernel = conv_kernel(ctx, w, n_sp)
        if kernel is not None and len(kernel) == n_sp:
            strides = _ints_attr(ctx, "strides", n_sp, 1)
            dil = _ints_attr(ctx, "dilations", n_sp, 1)
            outpad = _ints_attr(ctx, "output_padding", n_sp, 0)
            for i in range(n_sp):
                eff = D.add(D.mul(D.sub(kernel[i], 1), dil[i]), 1)
                total = D.add(D.mul(strides[i], D.sub(x.shape[2 + i], 1)), D.sub(D.add(eff, outpad[i]), out_shape[i]))
                _at_least(ctx, outpad[i] + 1 - strides[i], total, f"ConvTranspose output_shape {out_shape[i]}")
        return [tensor(x.dtype, (x.shape[0], m) + tuple(out_shape))]
    kernel = conv_kernel(ctx, w, n_sp)
    if kernel is None:
        return [tensor(x.dtype, (x.shape[0], m) + ctx.fresh_shape(n_sp))]
    strides = _ints_attr(ctx, "strides", n_sp, 1)
    dil = _ints_attr(ctx, "dilations", n_sp, 1)
    outpad = _ints_attr(ctx, "output_padding", n_sp, 0)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    pads = [0] * (2 * n_sp) if auto_pad == "VALID" else _ints_attr(ctx, "pads", 2 * n_sp, 0)
    spatial = []
    for i in range(n_sp):
        size = x.shape[2 + i]
        eff = D.add(D.mul(D.sub(kernel[i], 1), dil[i]), 1)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            # onnxruntime pads max(0, eff + output_padding - s): in*s, less what that max cuts off
            full = D.sub(D.mul(size, strides[i]), D.dmax(0, D.sub(strides[i] - outpad[i], eff)))
        else:
            full = D.add(D.mul(strides[i], D.sub(size, 1)), D.add(eff, outpad[i] - pads[i] - pads[i + n_sp]))
        if type(full) is int and full <= 0:
            raise InferenceError(
                codes.CONV_OR_SEQUENCE_INVALID, f"ConvTranspose output size {full} is not positive (spatial dim {i})"
            )
        _at_least(ctx, 1, full, "ConvTranspose output size")
        spatial.append(full)
    return [tensor(x.dtype, (x.shape[0], m) + tuple(spatial))]


def _at_least(ctx, least: int, d: D.Dim, what: str) -> None:
    """``least <= d``: an error for an int ``d`` below it, a guard where not proven."""
    if type(d) is int:
        if d < least:
            raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"{what}: needs {least} <= {d}")
    elif not ctx.symbols.prove_le(least, d):
        ctx.assume("bound", least, d, report=True)


def _pool_input_has_elements(ctx, shape: tuple) -> None:
    """onnxruntime pools an input with elements, or one of batch 0 ("Only N can be zero"): for
    each other dim that may be 0, the guard ``1 <= d`` (``N <= 0 or 1 <= d`` where the batch
    may be 0); an error where the sizes are known. A dim with a ``min`` or ``max`` is not
    guarded."""
    n = shape[0]
    if n == 0 or ctx.symbols.has_fresh(n):
        return  # (a batch inference does not know, such as a count of detections, may be 0)
    n_pos = type(n) is int or ctx.symbols.prove_le(1, n)
    for d in shape[1:]:
        if type(d) is int:
            if d < 1 and n_pos:
                raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, f"{ctx.op_type} of an empty input {list(shape)}")
            continue
        if ctx.symbols.prove_le(1, d) or ctx.symbols.has_fresh(d):
            continue
        if D.atom_kinds(d) & {"min", "max"}:
            continue  # an exact form such as Reshape's t + (1 - min(t, 1))*d: true, unprovable
        lo, hi = (1, d) if n_pos else (D.dmin(n, D.sub(1, d)), 0)
        ctx.assume("bound", lo, hi, report=True)


def _same_pads_nonnegative(ctx, sizes: tuple, kernel: list) -> None:
    """MaxPool and AveragePool before opset 19 with auto_pad SAME_*: onnxruntime pads each axis by
    ``(ceil(in/s) - 1)*s + k - in`` and refuses a negative padding ("padding values must be
    non-negative"), which a kernel shorter than its stride gives at some sizes (k 1, s 2: every
    even size). That padding is ``k - 1 - (in - 1) % s``: the guard ``(in - 1) % s == 0`` for
    k = 1, ``(in - 1) % s <= k - 1`` otherwise, where not proven; an error where the size is
    known. (With a dilation onnxruntime pads otherwise: not checked.)"""
    n_sp = len(sizes)
    strides = _ints_attr(ctx, "strides", n_sp, 1)
    dil = _ints_attr(ctx, "dilations", n_sp, 1)
    for size, k, s, d in zip(sizes, kernel, strides, dil):
        if d != 1 or type(k) is not int or k >= s or s <= 0:
            continue
        pad = D.add(D.sub(D.mul(D.sub(D.ceildiv(size, s), 1), s), size), k)
        if type(pad) is int:
            if pad < 0:
                raise InferenceError(
                    codes.CONV_OR_SEQUENCE_INVALID,
                    f"{ctx.op_type} auto_pad pads an axis of {size} by {pad} (kernel {k}, stride {s})",
                )
        elif not ctx.symbols.prove_le(0, pad):
            if k == 1:
                ctx.assume("divisibility", D.sub(size, 1), s, report=True)
            else:
                ctx.assume("bound", D.mod(D.sub(size, 1), s), k - 1, report=True)


@register(["MaxPool", "AveragePool", "LpPool"])
def pool(ctx, ins: list) -> list:
    """Pools: channels kept, spatial sizes per kernel_shape, with ceil_mode; MaxPool's Indices
    int64. The input has elements (:func:`_pool_input_has_elements`), and MaxPool's SAME
    padding is not negative, nor AveragePool's before opset 19 (:func:`_same_pads_nonnegative`;
    onnxruntime's AveragePool-19 kernel runs there)."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None), Fact(INT64, None)]
    if len(x.shape) < 3:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, f"{ctx.op_type} input must have rank >= 3")
    kernel = ctx.attr("kernel_shape")
    if kernel is None:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, f"{ctx.op_type} needs kernel_shape")
    _pool_input_has_elements(ctx, tuple(x.shape))
    checks_pads = ctx.op_type == "MaxPool" or (ctx.op_type == "AveragePool" and ctx.version < 19)
    if checks_pads and ctx.attr("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        _same_pads_nonnegative(ctx, tuple(x.shape[2:]), list(kernel))
    shape = tuple(x.shape[:2]) + tuple(spatial_dims(ctx, x.shape[2:], list(kernel), ctx.attr("ceil_mode", 0)))
    return [tensor(x.dtype, shape), tensor(INT64, shape)]


@register(["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
def global_pool(ctx, ins: list) -> list:
    """Global pools: spatial dims become 1; the input has elements
    (:func:`_pool_input_has_elements`)."""
    x = ins[0]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    if x.shape:
        _pool_input_has_elements(ctx, tuple(x.shape))
    return [tensor(x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))]


@register("MaxUnpool", since=9)
def max_unpool(ctx, ins: list) -> list:
    """MaxUnpool: the ``output_shape`` input, else ``(in-1)*s - pb - pe + k`` per spatial dim."""
    x = ins[0]
    osf = ins[2] if len(ins) > 2 else None
    if osf is not None:
        vals = dim_values(osf)
        if vals is not None:
            return [tensor(x.dtype, tuple(ctx.fresh() if v is None else v for v in vals))]
        if osf.shape is not None and len(osf.shape) == 1 and type(osf.shape[0]) is int:
            return [tensor(x.dtype, ctx.fresh_shape(osf.shape[0]))]
        return [Fact(x.dtype, None)]
    if x.shape is None:
        return [Fact(x.dtype, None)]
    kernel = list(ctx.attr("kernel_shape"))
    n_sp = len(x.shape) - 2
    if len(kernel) != n_sp:
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "MaxUnpool kernel_shape does not match the input rank")
    strides = _ints_attr(ctx, "strides", n_sp, 1)
    pads = _ints_attr(ctx, "pads", 2 * n_sp, 0)
    spatial = tuple(
        D.add(D.mul(D.sub(x.shape[2 + i], 1), strides[i]), kernel[i] - pads[i] - pads[i + n_sp]) for i in range(n_sp)
    )
    return [tensor(x.dtype, tuple(x.shape[:2]) + spatial)]


@register("MaxRoiPool")
def max_roi_pool(ctx, ins: list) -> list:
    """MaxRoiPool: ``num_rois x C x pooled_shape``."""
    x, rois = ins[0], ins[1]
    pooled = list(ctx.attr("pooled_shape"))
    n = rois.shape[0] if rois.shape else ctx.fresh()
    c = x.shape[1] if x.shape is not None and len(x.shape) > 1 else ctx.fresh()
    return [tensor(x.dtype, (n, c) + tuple(pooled))]


@register("RoiAlign", since=10)
def roi_align(ctx, ins: list) -> list:
    """RoiAlign: ``num_rois x C x output_height x output_width``; num_rois is rois' dim 0 and
    batch_indices' (they must be equal: a guard where they are symbols, G002 where two ints
    differ)."""
    x, rois = ins[0], ins[1]
    idx = ins[2] if len(ins) > 2 else None
    counts = [f.shape[0] for f in (rois, idx) if f is not None and f.shape]
    n = ctx.fresh() if not counts else counts[0] if len(counts) == 1 else ctx.unify(*counts)
    c = x.shape[1] if x.shape is not None and len(x.shape) > 1 else ctx.fresh()
    return [tensor(x.dtype, (n, c, ctx.attr("output_height", 1), ctx.attr("output_width", 1)))]


@register("Col2Im", since=18)
def col2im(ctx, ins: list) -> list:
    """Col2Im: ``N x C x image_shape`` with C = input.shape[1] / prod(block_shape)."""
    x, image, block = ins[0], ins[1], ins[2]
    img = dim_values(image)
    if img is None:
        n_sp = rank_from_model(ctx, image.shape[0]) if image.shape is not None and len(image.shape) == 1 else None
        if n_sp is None:
            return [Fact(x.dtype, None)]
        img = (None,) * n_sp
    bl = known_ints(block)
    n = x.shape[0] if x.shape is not None and x.shape else ctx.fresh()
    c = None
    if bl is not None and x.shape is not None and len(x.shape) == 3:
        k = 1
        for b in bl:
            k *= b
        if k <= 0:
            raise InferenceError(codes.SPLIT_OR_CONCAT_SEQUENCE_INVALID, f"Col2Im block_shape {list(bl)}")
        if k > INT64_MAX:
            raise InferenceError(codes.INT64_OVERFLOW, f"Col2Im block_shape {list(bl)}: its product overflows int64")
        # A valid input has exactly C*prod(block_shape) rows, so the floor is exact.
        c = D.floordiv(x.shape[1], k)
    return [tensor(x.dtype, (n, ctx.fresh() if c is None else c) + tuple(ctx.fresh() if v is None else v for v in img))]


@register("CausalConvWithState", since=27)
def causal_conv_with_state(ctx, ins: list) -> list:
    """CausalConvWithState: output like the input; present_state ``B x C x (k-1)``."""
    x, w = ins[0], ins[1]
    k = w.shape[2] if w is not None and w.shape is not None and len(w.shape) == 3 else None
    if x.shape is None or len(x.shape) != 3:
        return [tensor(x.dtype, x.shape), Fact(x.dtype, None)]
    state = (x.shape[0], x.shape[1], ctx.fresh() if k is None else D.sub(k, 1))
    return [tensor(x.dtype, x.shape), tensor(x.dtype, state)]
