"""Linear algebra: MatMul, Gemm, Einsum, Det, Trilu, EyeLike."""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import broadcast_dim, broadcast_one_way, broadcast_shapes
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def matmul_shape(ctx, a: tuple, b: tuple) -> tuple:
    """numpy.matmul's output dims, with 1-D operands promoted and their axis removed."""
    if len(a) == 0 or len(b) == 0:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "MatMul of a scalar")
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
    """Gemm: ``(M, K) x (K, N) -> (M, N)`` with transA / transB; C broadcasts one way to
    ``(M, N)``."""
    a, b = ins[0], ins[1]
    if a.shape is None or b.shape is None:
        return [tensor(a.dtype, ctx.fresh_shape(2))]
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, "Gemm inputs must be 2-D")
    m, k1 = a.shape[::-1] if ctx.attr("transA", 0) else a.shape
    k2, n = b.shape[::-1] if ctx.attr("transB", 0) else b.shape
    ctx.unify(k1, k2)
    c = ins[2] if len(ins) > 2 else None
    if c is not None and c.shape is not None:
        if len(c.shape) > 2:
            raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, f"Gemm C has rank {len(c.shape)}, above 2")
        broadcast_one_way(ctx, c.shape, (m, n))
    return [tensor(a.dtype, (m, n))]


def _einsum_terms(eq: str, n_in: int) -> tuple[list[str], str | None]:
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_in:
        raise InferenceError(
            codes.EINSUM_EQUATION_INVALID, f"Einsum equation {eq!r} has {len(terms)} operands for {n_in} inputs"
        )
    for t in terms + ([rhs] if arrow else []):
        body = t.replace("...", "")
        if "." in body or not all(c.isalpha() for c in body):
            raise InferenceError(codes.EINSUM_EQUATION_INVALID, f"Einsum term {t!r} is not valid")
    return terms, (rhs if arrow else None)


def _unify_letter(ctx, c: str, a: D.Dim, b: D.Dim, contracted: bool) -> D.Dim:
    """The size of Einsum letter ``c`` met as ``a`` and ``b`` in two operands: onnxruntime
    broadcasts a size of 1 against the other (guards where a symbol may be 1, as for Add; G002
    when they are different ints). Under ``onnxruntime_conventions`` a *contracted* letter
    with two sizes is an error diagnostic instead, the first size kept: the node fails at run
    time, and the output dims, which its other letters give, are the ones onnxruntime's tool
    states."""
    if not (contracted and ctx.policy.onnxruntime_conventions):
        return broadcast_dim(ctx, a, b)
    try:
        return broadcast_dim(ctx, a, b)
    except InferenceError as e:
        if e.code != codes.BROADCAST_INCOMPATIBLE:
            raise
        ctx.diag("error", e.code, f"Einsum letter {c!r}: {e.message} (the node fails at run time)")
        return a


@register("Einsum", since=12)
def einsum(ctx, ins: list) -> list:
    """Einsum: labels map to dims (a label twice in one operand unifies, across operands it
    broadcasts as onnxruntime does), ellipses broadcast; implicit output sorted."""
    facts = list(ins)
    dtype = next((f.dtype for f in facts if f is not None and f.dtype), 0)
    terms, out_term = _einsum_terms(ctx.attr("equation", ""), len(facts))
    labels: dict[str, D.Dim] = {}
    counts: dict[str, int] = {}
    for t in terms:
        for c in t.replace("...", ""):
            counts[c] = counts.get(c, 0) + 1
    if out_term is None:
        out_term = ("..." if any("..." in t for t in terms) else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1)
        )
    ell_shapes = []
    for t, f in zip(terms, facts):
        if f is None or f.shape is None:
            if "..." in t:
                ell_shapes.append(None)
            continue
        shape = f.shape
        if "..." in t:
            pre, post = t.split("...")
            n_ell = len(shape) - len(pre) - len(post)
            if n_ell < 0:
                raise InferenceError(
                    codes.EINSUM_EQUATION_INVALID, f"Einsum term {t!r} needs rank >= {len(pre) + len(post)}"
                )
            ell_shapes.append(tuple(shape[len(pre) : len(pre) + n_ell]))
            letters = list(pre) + [None] * n_ell + list(post)
        else:
            if len(t) != len(shape):
                raise InferenceError(
                    codes.EINSUM_EQUATION_INVALID, f"Einsum term {t!r} does not match rank {len(shape)}"
                )
            letters = list(t)
        here: dict[str, D.Dim] = {}  # a letter twice in one operand (a diagonal): equal dims
        for c, d in zip(letters, shape):
            if c is not None:
                here[c] = ctx.unify(here[c], d) if c in here else d
        for c, d in here.items():
            labels[c] = _unify_letter(ctx, c, labels[c], d, c not in out_term) if c in labels else d
    ell = broadcast_shapes(ctx, ell_shapes) if ell_shapes else ()
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
        raise InferenceError(codes.DET_RANK_INVALID, "Det input must have rank >= 2")
    ctx.unify(x.shape[-1], x.shape[-2])
    return [tensor(x.dtype, x.shape[:-2])]


@register("Trilu", since=14)
def trilu(ctx, ins: list) -> list:
    """Trilu: the input's type and shape."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]
