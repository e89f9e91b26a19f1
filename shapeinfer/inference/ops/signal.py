"""Signal ops: DFT, STFT, the window generators and MelWeightMatrix.

- DFT: along ``axis`` the length is ``n = dft_length`` (default: the input length, or
  ``2*(in-1)`` for an inverse one-sided transform); a forward one-sided transform keeps
  ``n//2 + 1`` bins. The last dim is 2 (complex), or 1 for an inverse one-sided transform.
- STFT: ``(batch, 1 + (length - frame_length)//frame_step, bins, 2)`` with
  ``bins = frame_length//2 + 1`` when one-sided, else ``frame_length``.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import scalar_value
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def _dim_scalar(f: Fact | None) -> D.Dim | None:
    v = scalar_value(f)
    if type(v) is int or isinstance(v, D.Expr):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _dft(ctx, x: Fact, length: D.Dim | None, axis: int | None, length_known: bool = True) -> list:
    if x.shape is None:
        return [Fact(x.dtype, None)]
    r = len(x.shape)
    if r < 2:
        raise InferenceError(codes.SIGNAL_OP_INVALID, "DFT input must have rank >= 2")
    inverse, onesided = ctx.attr("inverse", 0), ctx.attr("onesided", 0)
    shape = list(x.shape)
    shape[-1] = 1 if inverse and onesided else 2
    if axis is None:
        shape[:-1] = ctx.fresh_shape(r - 1)
        return [tensor(x.dtype, shape)]
    if not -r <= axis < r:
        raise InferenceError(codes.INVALID_NODE, f"DFT axis {axis} out of range for rank {r}")
    axis %= r
    if axis == r - 1:
        raise InferenceError(codes.SIGNAL_OP_INVALID, "DFT axis cannot be the last (complex) axis")
    if not length_known:
        shape[axis] = ctx.fresh()
        return [tensor(x.dtype, shape)]
    n = length
    if n is None:
        n = D.mul(2, D.sub(x.shape[axis], 1)) if inverse and onesided else x.shape[axis]
    shape[axis] = D.add(D.floordiv(n, 2), 1) if onesided and not inverse else n
    return [tensor(x.dtype, shape)]


@register("DFT", since=17)
def dft_v17(ctx, ins: list) -> list:
    """DFT-17: ``axis`` attribute (default 1), optional dft_length input."""
    lf = ins[1] if len(ins) > 1 else None
    length = None if lf is None else _dim_scalar(lf)
    return _dft(ctx, ins[0], length, ctx.attr("axis", 1), lf is None or length is not None)


@register("DFT", since=20)
def dft_v20(ctx, ins: list) -> list:
    """DFT-20: dft_length and axis (default -2) inputs."""
    lf = ins[1] if len(ins) > 1 else None
    af = ins[2] if len(ins) > 2 else None
    length = None if lf is None else _dim_scalar(lf)
    axis = -2 if af is None else scalar_value(af)
    if type(axis) is not int:
        x = ins[0]
        if lf is None and not ctx.attr("onesided", 0) and x.shape is not None:
            # without dft_length or one-sidedness no axis changes length
            return [tensor(x.dtype, tuple(x.shape[:-1]) + (2,))]
        return _unknown_axis(ctx, x)
    return _dft(ctx, ins[0], length, axis, lf is None or length is not None)


def _unknown_axis(ctx, x: Fact) -> list:
    if x.shape is None:
        return [Fact(x.dtype, None)]
    inverse, onesided = ctx.attr("inverse", 0), ctx.attr("onesided", 0)
    return [tensor(x.dtype, ctx.fresh_shape(len(x.shape) - 1) + (1 if inverse and onesided else 2,))]


@register("STFT", since=17)
def stft(ctx, ins: list) -> list:
    """STFT: ``(batch, frames, bins, 2)``."""
    sig = ins[0]
    step = _dim_scalar(ins[1])
    window = ins[2] if len(ins) > 2 else None
    flf = ins[3] if len(ins) > 3 else None
    if flf is not None:
        fl = _dim_scalar(flf)
    elif window is not None and window.shape is not None and len(window.shape) == 1:
        fl = window.shape[0]
    else:
        fl = None
    if sig.shape is None or len(sig.shape) != 3:
        if sig.shape is not None:
            raise InferenceError(codes.SIGNAL_OP_INVALID, f"STFT signal must be 3-D, got rank {len(sig.shape)}")
        return [tensor(sig.dtype, ctx.fresh_shape(3) + (2,))]
    batch, length = sig.shape[0], sig.shape[1]
    if fl is None and flf is None and window is None:
        fl = length
    frames = bins = None
    if fl is not None and step is not None:
        if type(step) is int and step <= 0:
            raise InferenceError(codes.SIGNAL_OP_INVALID, f"STFT frame_step {step} must be positive")
        frames = D.add(D.floordiv(D.sub(length, fl), step), 1)
    if fl is not None:
        bins = D.add(D.floordiv(fl, 2), 1) if ctx.attr("onesided", 1) else fl
    frames = ctx.fresh() if frames is None else frames
    bins = ctx.fresh() if bins is None else bins
    return [tensor(sig.dtype, (batch, frames, bins, 2))]


@register(["HannWindow", "HammingWindow", "BlackmanWindow"], since=17)
def window(ctx, ins: list) -> list:
    """Window generators: ``(size,)`` typed by ``output_datatype`` (float by default)."""
    n = _dim_scalar(ins[0])
    return [tensor(ctx.attr("output_datatype", TensorProto.FLOAT), (ctx.fresh() if n is None else n,))]


@register("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx, ins: list) -> list:
    """MelWeightMatrix: ``(dft_length//2 + 1, num_mel_bins)``."""
    mel = _dim_scalar(ins[0])
    dft = _dim_scalar(ins[1])
    rows = ctx.fresh() if dft is None else D.add(D.floordiv(dft, 2), 1)
    return [tensor(ctx.attr("output_datatype", TensorProto.FLOAT), (rows, ctx.fresh() if mel is None else mel))]
