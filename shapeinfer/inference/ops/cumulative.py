"""Cumulative ops: CumSum and CumProd keep the input's type and shape."""

from __future__ import annotations

from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic.facts import tensor


@register("CumSum", since=11)
@register("CumProd", since=26)
def cumulative(ctx, ins: list) -> list:
    """CumSum / CumProd: the input's type and shape."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]
