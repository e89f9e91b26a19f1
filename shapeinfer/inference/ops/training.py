"""Optimizers of ai.onnx.preview.training (Adagrad, Momentum, Adam): outputs like the state inputs."""

from __future__ import annotations

from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic.facts import tensor


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
