"""MatMul and Gemm."""

from __future__ import annotations

from shapeinfer.diagnostics import InferenceError
from shapeinfer.facts import Fact, tensor
from shapeinfer.ops.common import broadcast_shapes
from shapeinfer.registry import register


def matmul_shape(ctx, a: tuple, b: tuple) -> tuple:
    """numpy.matmul's output dims, with 1-D operands promoted and their axis removed."""
    if len(a) == 0 or len(b) == 0:
        raise InferenceError("E030", "MatMul of a scalar")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    ctx.unify(a2[-1], b2[-2])
    batch = broadcast_shapes(ctx, [a2[:-2], b2[:-2]])
    out = list(batch)
    if len(a) > 1:
        out.append(a2[-2])
    if len(b) > 1:
        out.append(b2[-1])
    return tuple(out)


@register(["MatMul", "MatMulInteger", "QLinearMatMul"])
def matmul(ctx, ins: list) -> list:
    """MatMul: numpy semantics, including 1-D operands."""
    if ctx.op_type == "QLinearMatMul":
        a, b = ins[0], ins[3]
        dtype = ins[7].dtype if len(ins) > 7 and ins[7] is not None else 0
    else:
        a, b = ins[0], ins[1]
        dtype = 6 if ctx.op_type == "MatMulInteger" else a.dtype
    if a.shape is None or b.shape is None:
        return [Fact(dtype, None)]
    return [tensor(dtype, matmul_shape(ctx, a.shape, b.shape))]


@register("Gemm")
def gemm(ctx, ins: list) -> list:
    """Gemm: ``(M, K) x (K, N) -> (M, N)`` with transA / transB."""
    a, b = ins[0], ins[1]
    if a.shape is None or b.shape is None:
        return [tensor(a.dtype, ctx.fresh_shape(2))]
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise InferenceError("E031", "Gemm inputs must be 2-D")
    m, k1 = a.shape[::-1] if ctx.attr("transA", 0) else a.shape
    k2, n = b.shape[::-1] if ctx.attr("transB", 0) else b.shape
    ctx.unify(k1, k2)
    return [tensor(a.dtype, (m, n))]
