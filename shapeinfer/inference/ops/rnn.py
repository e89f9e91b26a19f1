"""Recurrent layers: RNN, GRU, LSTM.

With ``layout=0``: X ``(seq, batch, input)``, Y ``(seq, num_directions, batch, hidden)``,
Y_h / Y_c ``(num_directions, batch, hidden)``. With ``layout=1`` (opset 14+): X
``(batch, seq, input)``, Y ``(batch, seq, num_directions, hidden)``, Y_h / Y_c
``(batch, num_directions, hidden)``. ``hidden_size`` comes from the attribute, else from R's last
dim; num_directions is 2 for ``bidirectional``.
"""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic.facts import tensor


def recurrent_dims(ctx, x, r, *, r_hidden_axis: int, layout: int = 0) -> tuple:
    """``(seq, batch, num_directions, hidden)`` of a recurrent op with input ``x`` and
    recurrence weights ``r`` (None when absent): num_directions from ``direction`` (E090 on
    another value), hidden from ``hidden_size``, else R's dim ``r_hidden_axis`` when R is 3-D,
    else a fresh symbol; seq and batch from X's first two dims (swapped for ``layout`` 1), fresh
    when its rank is unknown (E090 when it is not 3)."""
    direction = ctx.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise InferenceError(codes.RNN_INVALID, f"{ctx.op_type} direction {direction!r}")
    nd = 2 if direction == "bidirectional" else 1
    hidden = ctx.attr("hidden_size")
    if hidden is None:
        hidden = r.shape[r_hidden_axis] if r is not None and r.shape is not None and len(r.shape) == 3 else ctx.fresh()
    if x.shape is None:
        seq, batch = ctx.fresh(), ctx.fresh()
    elif len(x.shape) != 3:
        raise InferenceError(codes.RNN_INVALID, f"{ctx.op_type} input must be 3-D, got rank {len(x.shape)}")
    elif layout:
        batch, seq = x.shape[0], x.shape[1]
    else:
        seq, batch = x.shape[0], x.shape[1]
    return seq, batch, nd, hidden


@register(["RNN", "GRU", "LSTM"], since=1)
def recurrent(ctx, ins: list) -> list:
    """RNN / GRU / LSTM outputs Y, Y_h (and Y_c for LSTM)."""
    x = ins[0]
    layout = ctx.attr("layout", 0) if ctx.version >= 14 else 0
    seq, batch, nd, hidden = recurrent_dims(ctx, x, ins[2] if len(ins) > 2 else None, r_hidden_axis=2, layout=layout)
    n_states = 2 if ctx.op_type == "LSTM" else 1
    if layout:
        y, yh = (batch, seq, nd, hidden), (batch, nd, hidden)
    else:
        y, yh = (seq, nd, batch, hidden), (nd, batch, hidden)
    return [tensor(x.dtype, y)] + [tensor(x.dtype, yh)] * n_states
