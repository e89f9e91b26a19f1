"""Attention-family ops: Attention (23+), RotaryEmbedding, LinearAttention, FlexAttention, SwiGLU,
TensorScatter.

Head sizes of 3-D (packed) inputs are ``hidden / num_heads``. A valid model has exact
divisions there, so when the quotient is symbolic and not provably exact it is written as a
floor division, which equals it on every valid input.
"""

from __future__ import annotations

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor


def heads_div(hidden: D.Dim, heads: int) -> D.Dim:
    """``hidden / heads`` for a packed ``[..., heads*size]`` dim of a valid model."""
    if heads <= 0:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, f"num_heads {heads} must be positive")
    if type(hidden) is int and hidden % heads:
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"hidden size {hidden} is not a multiple of {heads} heads"
        )
    q = D.exact_div(hidden, heads)
    return q if q is not None else D.floordiv(hidden, heads)


def _as_4d(ctx, f: Fact | None, heads: int | None) -> tuple | None:
    """The ``(B, H, S, d)`` view of a Q/K/V input (3-D inputs need ``heads``), or None."""
    if f is None or f.shape is None:
        return None
    if len(f.shape) == 4:
        return tuple(f.shape)
    if len(f.shape) == 3:
        b, s, hidden = f.shape
        if heads is None:
            return (b, ctx.fresh(), s, ctx.fresh())
        return (b, heads, s, heads_div(hidden, heads))
    raise InferenceError(
        codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} inputs must be 3-D or 4-D, got rank {len(f.shape)}"
    )


@register("Attention", since=23)
def attention(ctx, ins: list) -> list:
    """Attention: Y ``(B, Hq, Sq, dv)`` or packed ``(B, Sq, Hq*dv)``; present K/V ``(B, Hkv, P+Skv, d)``;
    qk_matmul_output ``(B, Hq, Sq, P+Skv)`` with P the past sequence length."""
    q, k, v = ins[0], ins[1], ins[2]
    past_k = ins[4] if len(ins) > 4 else None
    past_v = ins[5] if len(ins) > 5 else None
    qh, kvh = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    q4 = _as_4d(ctx, q, qh)
    k4 = _as_4d(ctx, k, kvh)
    v4 = _as_4d(ctx, v, kvh)
    qdt, vdt = q.dtype, v.dtype if v is not None else q.dtype
    y = Fact(qdt, None)
    if q4 is not None and v4 is not None:
        if len(q.shape) == 3:
            known = qh is not None and (len(v.shape) == 4 or kvh is not None)
            y = tensor(qdt, (q4[0], q4[2], D.mul(q4[1], v4[3]) if known else ctx.fresh()))
        else:
            y = tensor(qdt, (q4[0], q4[1], q4[2], v4[3]))
    past = None
    if past_k is not None:
        past = past_k.shape[2] if past_k.shape is not None and len(past_k.shape) == 4 else ctx.fresh()
    elif past_v is not None:
        past = past_v.shape[2] if past_v.shape is not None and len(past_v.shape) == 4 else ctx.fresh()
    total = None
    if k4 is not None:
        total = k4[2] if past is None else D.add(past, k4[2])
    pk = Fact(qdt, None) if k4 is None else tensor(qdt, (k4[0], k4[1], total, k4[3]))
    pv = Fact(vdt, None)
    if v4 is not None:
        vtotal = v4[2] if past is None else D.add(past, v4[2])
        pv = tensor(vdt, (v4[0], v4[1], vtotal, v4[3]))
    qk = Fact(qdt, None)
    if q4 is not None and total is not None:
        qk = tensor(qdt, (q4[0], q4[1], q4[2], total))
    return [y, pk, pv, qk]


@register("RotaryEmbedding", since=23)
def rotary_embedding(ctx, ins: list) -> list:
    """RotaryEmbedding: Y like X."""
    return [tensor(ins[0].dtype, ins[0].shape)]


@register("LinearAttention", since=27)
def linear_attention(ctx, ins: list) -> list:
    """LinearAttention: query ``(B, T, Hq*dk)``, key ``(B, T, Hkv*dk)``, value ``(B, T, Hkv*dv)``,
    past_state ``(B, Hkv, dk, dv)``; output ``(B, T, Hq*dv)``, present_state like past_state.
    Each of B, T, dk, dv is taken from whichever input gives it (the others must agree: a guard
    where they are symbols, G002 where two ints differ); a Q/K/V not 3-D or a past_state not 4-D
    is invalid."""
    q, k, v = ins[0], ins[1], ins[2]
    past = ins[3] if len(ins) > 3 else None
    qh, kvh = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if qh is None or kvh is None:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "LinearAttention needs q_num_heads and kv_num_heads")
    shapes = {}
    for name, f, rank in (("query", q, 3), ("key", k, 3), ("value", v, 3), ("past_state", past, 4)):
        if f is None or f.shape is None:
            continue
        if len(f.shape) != rank:
            raise InferenceError(
                codes.ATTENTION_OR_FUSED_OP_INVALID, f"LinearAttention {name} must be {rank}-D, not {len(f.shape)}-D"
            )
        shapes[name] = f.shape
    known: dict[str, D.Dim] = {}

    def meet(what: str, d: D.Dim) -> None:
        known[what] = ctx.unify(known[what], d) if what in known else d

    for name in ("query", "key", "value"):
        if name in shapes:
            meet("B", shapes[name][0])
            meet("T", shapes[name][1])
    if "query" in shapes:
        meet("dk", heads_div(shapes["query"][2], qh))
    if "key" in shapes:
        meet("dk", heads_div(shapes["key"][2], kvh))
    if "value" in shapes:
        meet("dv", heads_div(shapes["value"][2], kvh))
    if "past_state" in shapes:
        b, h, dk, dv = shapes["past_state"]
        meet("B", b)
        ctx.unify(h, kvh)
        meet("dk", dk)
        meet("dv", dv)

    def dim(what: str) -> D.Dim:
        if what not in known:
            known[what] = ctx.fresh()  # one symbol for both outputs
        return known[what]

    state_dt = past.dtype if past is not None and past.dtype else q.dtype
    out = Fact(q.dtype, None)
    if known:
        width = D.mul(qh, known["dv"]) if "dv" in known else ctx.fresh()
        out = tensor(q.dtype, (dim("B"), dim("T"), width))
    state = tensor(state_dt, (dim("B"), kvh, dim("dk"), dim("dv")))
    return [out, state]


@register("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(ctx, ins: list) -> list:
    """FlexAttention: ``(B, Hq, Sq, dv)`` from rank-4 Q and V."""
    q, v = ins[0], ins[2]
    if q.shape is None or v is None or v.shape is None:
        return [Fact(q.dtype, None)]
    if len(q.shape) != 4 or len(v.shape) != 4:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "FlexAttention inputs must be rank 4")
    return [tensor(q.dtype, (q.shape[0], q.shape[1], q.shape[2], v.shape[3]))]


@register("SwiGLU", since=28)
def swiglu(ctx, ins: list) -> list:
    """SwiGLU: A and B have identical shapes; Y has it too."""
    a, b = ins[0], ins[1]
    shape = a.shape
    if shape is None and b is not None:
        shape = b.shape
    elif shape is not None and b is not None and b.shape is not None:
        if len(a.shape) != len(b.shape):
            raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, "SwiGLU inputs differ in rank")
        shape = tuple(ctx.unify(x, y) for x, y in zip(a.shape, b.shape))
    return [tensor(a.dtype, shape)]


@register("TensorScatter", since=24)
def tensor_scatter(ctx, ins: list) -> list:
    """TensorScatter: present_cache like past_cache."""
    return [tensor(ins[0].dtype, ins[0].shape)]
