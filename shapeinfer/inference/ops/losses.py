"""Losses: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss."""

from __future__ import annotations

from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic.facts import tensor


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
