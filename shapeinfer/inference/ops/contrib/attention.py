"""onnxruntime's attention family (``com.microsoft``): Attention, DecoderMaskedSelfAttention,
MultiHeadAttention, DecoderMaskedMultiHeadAttention, GroupQueryAttention, SparseAttention,
PackedAttention, PackedMultiHeadAttention, PagedAttention, SparsePagedAttention,
DynamicSparseAttention, SparseAttentionIndexer, PackedSparseAttentionIndexer, LongformerAttention,
RotaryEmbedding, MRotaryEmbedding, GemmaRotaryEmbedding, LinearAttention, LinearAttentionGate,
GatedDeltaNet, RelativePositionBias, GatedRelativePositionBias, RemovePadding, RestorePadding.

Layouts (B batch, S query length, L key/value length, P past length, N heads, h head size):
Q/K/V are ``(B, S, N*h)`` ("BSNH" packed into the hidden dim) unless stated; KV caches are
``(B, N, P, h)`` ("BNSH"), Attention's merged cache ``(2, B, N, P, h)``. Present caches hold the
past and the new tokens, ``P + L``, except with a shared past/present buffer, where present is
the past buffer itself. Head sizes are exact divisions in a valid model; a symbolic quotient not
provably exact is written as a floor division, equal to it wherever the model runs.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.attention import heads_div
from shapeinfer.inference.ops.common import scalar_value
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, is_dim_value, tensor

MS = "com.microsoft"
INT32 = TensorProto.INT32


def _arg(ins: list, i: int) -> Fact | None:
    return ins[i] if len(ins) > i else None


def _rank(f: Fact | None) -> int | None:
    return None if f is None or f.shape is None else len(f.shape)


def _div(hidden: D.Dim | None, parts: int | None) -> D.Dim | None:
    """``hidden / parts`` for a valid model, None when either is unknown."""
    if hidden is None or parts is None:
        return None
    return heads_div(hidden, parts)


def _or_fresh(ctx, d: D.Dim | None) -> D.Dim:
    return ctx.fresh() if d is None else d


def _check_rank(ctx, f: Fact | None, ranks: tuple, what: str) -> None:
    r = _rank(f)
    if r is not None and r not in ranks:
        want = " or ".join(str(x) for x in ranks)
        raise InferenceError(
            codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} {what} must have rank {want}, got {r}"
        )


def _num_heads(ctx, name: str = "num_heads") -> int | None:
    n = ctx.attr(name)
    if n is not None and n <= 0:
        raise InferenceError(codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} {name} {n} must be positive")
    return n


def _value_dim(f: Fact | None) -> D.Dim | None:
    """The value of a one-element integer tensor when it is a known dim (int or expression)."""
    v = scalar_value(f)
    return v if is_dim_value(v) else None


# ---------------------------------------------------------------- Attention (merged QKV weights)


def _qkv_sizes(ctx, weights: Fact | None, bias: Fact | None) -> tuple:
    """(hidden, hidden, v_hidden) from ``qkv_hidden_sizes`` or a third of the merged width."""
    sizes = ctx.attr("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3:
            raise InferenceError(
                codes.ATTENTION_OR_FUSED_OP_INVALID, f"{ctx.op_type} qkv_hidden_sizes must have 3 entries"
            )
        return tuple(sizes)
    total = None
    if bias is not None and bias.shape is not None and len(bias.shape) == 1:
        total = bias.shape[0]
    elif weights is not None and weights.shape is not None and len(weights.shape) == 2:
        total = weights.shape[1]
    third = _div(total, 3)
    return (third, third, third)


@register(["Attention", "DecoderMaskedSelfAttention"], domain=MS)
def attention(ctx, ins: list) -> list:
    """Attention: output ``(B, S, v_hidden)``; present ``(2, B, N, P + S, hidden/N)`` with P the
    past length (``past`` is ``(2, B, N, P, h)``), or past's own shape with
    ``past_present_share_buffer``."""
    x, weights, bias, past = ins[0], _arg(ins, 1), _arg(ins, 2), _arg(ins, 4)
    _check_rank(ctx, x, (3,), "input")
    _check_rank(ctx, past, (5,), "past")
    n = _num_heads(ctx)
    _, hk, hv = _qkv_sizes(ctx, weights, bias)
    dtype = x.dtype
    if x.shape is None:
        b, s = ctx.fresh(), ctx.fresh()
        out = tensor(dtype, None)
    else:
        b, s, din = x.shape
        if weights is not None and weights.shape is not None and len(weights.shape) == 2:
            ctx.unify(din, weights.shape[0])
        out = tensor(dtype, (b, s, _or_fresh(ctx, hv)))
    if past is not None and past.shape is not None and ctx.attr("past_present_share_buffer", 0):
        present = tensor(past.dtype or dtype, past.shape)
    else:
        p = None if past is None else (past.shape[3] if past.shape is not None else ctx.fresh())
        total = s if p is None else D.add(p, s)
        head = _div(hk, n)
        if head is None and past is not None and past.shape is not None:
            head = past.shape[4]
        present = tensor(dtype, (2, b, _or_fresh(ctx, n), total, _or_fresh(ctx, head)))
    return [out, present]


# ---------------------------------------------------------------- MultiHeadAttention family


def _kv_view(key: Fact | None, value: Fact | None, n: int | None) -> tuple:
    """(L, key head size, value head size, key is BNSH) of MultiHeadAttention's key/value inputs."""
    kr, vr = _rank(key), _rank(value)
    if kr == 5:  # packed KV (B, L, N, 2, h)
        return key.shape[1], key.shape[4], key.shape[4], False
    if kr == 4:  # BNSH key (cross attention with projected K/V)
        vh = value.shape[3] if vr == 4 else None
        return key.shape[2], key.shape[3], vh, True
    if kr == 3:
        vh = _div(value.shape[2], n) if vr == 3 else (value.shape[3] if vr == 4 else None)
        return key.shape[1], _div(key.shape[2], n), vh, False
    return None, None, None, False


def _guard_caches(ctx, past_k: Fact | None, past_v: Fact | None, b, heads, kh, vh) -> None:
    """The guards of BNSH caches ``(B, N, P, h)``: onnxruntime refuses a past_key or past_value
    of another batch ``b``, head count ``heads`` or head size (``kh``, ``vh``), or the two of
    different lengths (each given as None: not known here, not checked)."""
    for past, size in ((past_k, kh), (past_v, vh)):
        if _rank(past) == 4:
            for d, want in zip(past.shape, (b, heads, None, size)):
                if want is not None:
                    ctx.unify(d, want)
    if _rank(past_k) == 4 and _rank(past_v) == 4:
        ctx.unify(past_v.shape[2], past_k.shape[2])


@register("MultiHeadAttention", domain=MS)
def multi_head_attention(ctx, ins: list) -> list:
    """MultiHeadAttention: output ``(B, S, N*hv)``; present_key / present_value ``(B, N, P + L, h)``
    (past's shape when a past_sequence_length input shares the buffers, the BNSH key / value
    themselves for cross attention); qk ``(B, N, S, P + L)``, its element type left to the model's
    declaration (the schema gives it a type constraint of its own). past_key and past_value must
    be ``(B, N, P, h)`` and ``(B, N, P, hv)`` (guards)."""
    q, key, value = ins[0], _arg(ins, 1), _arg(ins, 2)
    past_k, past_v, past_len = _arg(ins, 6), _arg(ins, 7), _arg(ins, 8)
    _check_rank(ctx, q, (3, 5), "query")
    _check_rank(ctx, key, (3, 4, 5), "key")
    _check_rank(ctx, value, (3, 4), "value")
    _check_rank(ctx, past_k, (4,), "past_key")
    _check_rank(ctx, past_v, (4,), "past_value")
    n = _num_heads(ctx)
    dtype = q.dtype
    qr = _rank(q)
    if qr == 5:  # packed QKV (B, S, N, 3, h)
        b, s = q.shape[0], q.shape[1]
        n_q = q.shape[2]
        length, kh, vh, bnsh = s, q.shape[4], q.shape[4], False
    else:
        b, s = (q.shape[0], q.shape[1]) if qr == 3 else (ctx.fresh(), ctx.fresh())
        n_q = n
        length, kh, vh, bnsh = _kv_view(key, value, n)
    heads = _or_fresh(ctx, n_q)
    if vh is not None and n_q is not None:
        hv_total = D.mul(n_q, vh)
    elif qr == 3 and _rank(value) == 3:
        hv_total = value.shape[2]
    else:
        hv_total = None
    out = tensor(dtype, (b, s, _or_fresh(ctx, hv_total))) if qr is not None else Fact(dtype, None)
    _guard_caches(ctx, past_k, past_v, b if qr is not None else None, n_q, kh, vh)
    shared = past_len is not None and past_k is not None and past_k.shape is not None
    if shared:
        pk = tensor(past_k.dtype or dtype, past_k.shape)
        pv = tensor(dtype, past_v.shape) if past_v is not None and past_v.shape is not None else Fact(dtype, None)
        total = ctx.fresh()
    else:
        past = None
        if past_k is not None:
            past = past_k.shape[2] if past_k.shape is not None else ctx.fresh()
        elif past_v is not None:
            past = past_v.shape[2] if past_v.shape is not None else ctx.fresh()
        length = _or_fresh(ctx, length)
        total = length if past is None or bnsh else D.add(past, length)
        pk = tensor(dtype, (b, heads, total, _or_fresh(ctx, kh)))
        pv = tensor(dtype, (b, heads, total, _or_fresh(ctx, vh)))
    # qk's type is its own constraint (QK), which the model declares: left unknown here.
    qk = tensor(0, (b, heads, s, total))
    return [out, pk, pv, qk]


@register("DecoderMaskedMultiHeadAttention", domain=MS)
def decoder_masked_mha(ctx, ins: list) -> list:
    """DecoderMaskedMultiHeadAttention: output ``(B, S, hv)`` (value's hidden size, ``N*h`` for BNSH
    or past values); present_key / present_value past's shape with ``past_present_share_buffer``,
    else ``(B, N, P + L, h)``; qk ``(B, N, S, P + L)``."""
    q, key, value = ins[0], _arg(ins, 1), _arg(ins, 2)
    past_k, past_v = _arg(ins, 5), _arg(ins, 6)
    _check_rank(ctx, q, (3,), "query")
    _check_rank(ctx, key, (3, 4), "key")
    _check_rank(ctx, value, (3, 4), "value")
    _check_rank(ctx, past_k, (4,), "past_key")
    _check_rank(ctx, past_v, (4,), "past_value")
    n = _num_heads(ctx)
    dtype = q.dtype
    if q.shape is None:
        return [Fact(dtype, None)]
    b, s, hq = q.shape
    vr = _rank(value)
    if vr == 3:
        hv = value.shape[2]
    elif vr == 4:
        hv = D.mul(value.shape[1], value.shape[3])
    elif value is None and key is None and _rank(past_v) == 4:
        hv = D.mul(past_v.shape[1], past_v.shape[3])
    else:
        hv = None
    out = tensor(dtype, (b, s, _or_fresh(ctx, hv)))
    if ctx.attr("past_present_share_buffer", 0):
        pk = tensor(dtype, past_k.shape) if past_k is not None else Fact(dtype, None)
        pv = tensor(dtype, past_v.shape) if past_v is not None else Fact(dtype, None)
        total = ctx.fresh()
    else:
        kr = _rank(key)
        length = key.shape[1] if kr == 3 else (key.shape[2] if kr == 4 else (s if key is None else None))
        past = None if past_k is None else (past_k.shape[2] if past_k.shape is not None else None)
        total = None if length is None or (past_k is not None and past is None) else D.add(past or 0, length)
        if kr == 4:
            total = length
        total = _or_fresh(ctx, total)
        kh = past_k.shape[3] if _rank(past_k) == 4 else (key.shape[3] if kr == 4 else _div(hq, n))
        vh = past_v.shape[3] if _rank(past_v) == 4 else (value.shape[3] if vr == 4 else kh)
        heads = _or_fresh(ctx, n)
        pk = tensor(dtype, (b, heads, total, _or_fresh(ctx, kh)))
        pv = tensor(dtype, (b, heads, total, _or_fresh(ctx, vh)))
    qk = tensor(0, (b, _or_fresh(ctx, n), s, total))  # type constraint QK: declared by the model
    return [out, pk, pv, qk]


@register("GroupQueryAttention", domain=MS)
def group_query_attention(ctx, ins: list) -> list:
    """GroupQueryAttention: output ``(B, S, N*h)``; present_key / present_value
    ``(B, Nkv, max(P, T), h)`` with T the total_sequence_length input's value (past's shape with
    ``sliding_window_cache``), in past's type (query's without past); output_qk ``(B, N, S, T)``.
    past_key and past_value must be ``(B, Nkv, P, h)`` alike, and with ``sliding_window_cache``
    P at least ``local_window_size`` (guards: onnxruntime refuses others)."""
    q, key, value = ins[0], _arg(ins, 1), _arg(ins, 2)
    past_k, past_v = _arg(ins, 3), _arg(ins, 4)
    _check_rank(ctx, q, (3,), "query")
    _check_rank(ctx, past_k, (4,), "past_key")
    n, nkv = _num_heads(ctx), _num_heads(ctx, "kv_num_heads")
    dtype = q.dtype
    if q.shape is None:
        b, s, head = ctx.fresh(), ctx.fresh(), None
    else:
        b, s, hq = q.shape
        packed = key is None and value is None
        if packed:
            head = None if n is None or nkv is None else heads_div(hq, n + 2 * nkv)
        else:
            head = _div(hq, n)
    out = tensor(dtype, (b, s, _or_fresh(ctx, None if head is None or n is None else D.mul(n, head))))
    _guard_caches(ctx, past_k, past_v, b, nkv, head, head)
    window = ctx.attr("local_window_size", -1)
    sliding = ctx.attr("sliding_window_cache", 0) == 1
    if sliding and isinstance(window, int) and window > 0 and _rank(past_k) == 4:
        ctx.assume("bound", window, past_k.shape[2], report=True)  # the cache holds a whole window
    total = _value_dim(_arg(ins, 6))
    if total is not None and _rank(past_k) == 4:
        _guard_lengths(ctx, b, s, past_k.shape[2], total, sliding)
    kv_type = past_k.dtype if past_k is not None and past_k.dtype else dtype
    if past_k is not None and past_k.shape is not None and ctx.attr("sliding_window_cache", 0) == 1:
        pk = tensor(kv_type, past_k.shape)
        pv = tensor(past_v.dtype or kv_type, past_v.shape) if past_v is not None else Fact(kv_type, None)
    else:
        if past_k is None:
            length = total
        elif past_k.shape is None or total is None:
            length = None
        else:
            length = D.dmax(past_k.shape[2], total)
        kv_head = head
        if kv_head is None and _rank(past_k) == 4:
            kv_head = past_k.shape[3]
        shape = (b, _or_fresh(ctx, nkv), _or_fresh(ctx, length), _or_fresh(ctx, kv_head))
        pk = tensor(kv_type, shape)
        pv = tensor(past_v.dtype if past_v is not None and past_v.dtype else kv_type, shape)
    qk = tensor(dtype, (b, _or_fresh(ctx, n), s, _or_fresh(ctx, total)))
    return [out, pk, pv, qk]


def _guard_lengths(ctx, b: D.Dim, s: D.Dim, past: D.Dim, total: D.Dim, sliding: bool) -> None:
    """The lengths onnxruntime's GroupQueryAttention accepts beside a past of length ``past``,
    for a query of ``b`` x ``s`` and a total_sequence_length ``total`` (guards, each a bound of
    a ``min``: its arguments' alternatives, see :class:`~shapeinfer.symbolic.guards.Guard`):

    - a cache that does not slide: ``s <= total``, and ``total == past + s`` (the past grows by
      the new tokens) or ``total <= past`` (a buffer of the maximum length, shared);
    - any cache: ``b == 1`` or ``s == 1`` or ``total <= s`` (several new tokens after a past
      context only for one sequence).
    """
    grows = D.sub(total, D.add(past, s))
    if not sliding:
        ctx.assume("bound", s, total, report=True)
        ctx.assume("bound", D.dmin(D.absolute(grows), D.sub(total, past)), 0, report=True)
    ctx.assume("bound", D.dmin(D.sub(b, 1), D.sub(s, 1), D.sub(total, s)), 0, report=True)


@register("SparseAttention", domain=MS)
def sparse_attention(ctx, ins: list) -> list:
    """SparseAttention: output ``(B, S, N*h)`` (query packed with K and V when they are absent);
    present_key / present_value are the past caches' shapes (one max-length buffer)."""
    q, key, value = ins[0], _arg(ins, 1), _arg(ins, 2)
    past_k, past_v = _arg(ins, 3), _arg(ins, 4)
    _check_rank(ctx, q, (3,), "query")
    n, nkv = _num_heads(ctx), _num_heads(ctx, "kv_num_heads")
    dtype = q.dtype
    if q.shape is None:
        out = Fact(dtype, None)
    else:
        b, s, hq = q.shape
        if key is None and value is None:
            hidden = None if n is None or nkv is None else D.mul(n, heads_div(hq, n + 2 * nkv))
        else:
            hidden = hq
        out = tensor(dtype, (b, s, _or_fresh(ctx, hidden)))
    pk = tensor(past_k.dtype or dtype, past_k.shape) if past_k is not None else Fact(dtype, None)
    pv = tensor(past_v.dtype or dtype, past_v.shape) if past_v is not None else Fact(dtype, None)
    return [out, pk, pv]


def _gqa_head(ctx, q: Fact, packed: bool, n: int | None, nkv: int | None) -> D.Dim | None:
    """The head size of a GQA-style query ``(B, S, N*h)``, packed ``(B, S, (N + 2*Nkv)*h)``."""
    if _rank(q) != 3 or n is None:
        return None
    if packed:
        return None if nkv is None else heads_div(q.shape[2], n + 2 * nkv)
    return heads_div(q.shape[2], n)


@register("DynamicSparseAttention", domain=MS)
def dynamic_sparse_attention(ctx, ins: list) -> list:
    """DynamicSparseAttention: output ``(B, S, N*h)`` (bfloat16 with ``output_bf16`` on float16
    inputs); present_key / present_value BNSH caches ``(B, Nkv, ?, h)`` in past's type, their length
    left open; validation_status int32."""
    q, key, value, past_k, past_v = ins[0], _arg(ins, 1), _arg(ins, 2), _arg(ins, 3), _arg(ins, 4)
    _check_rank(ctx, q, (3,), "query")
    n, nkv = _num_heads(ctx), _num_heads(ctx, "kv_num_heads")
    head = _gqa_head(ctx, q, key is None and value is None, n, nkv)
    dtype = q.dtype
    if ctx.attr("output_bf16", 0) and dtype == TensorProto.FLOAT16:
        dtype = TensorProto.BFLOAT16
    if q.shape is None:
        b, out = ctx.fresh(), Fact(dtype, None)
    else:
        b = q.shape[0]
        out = tensor(dtype, (b, q.shape[1], _or_fresh(ctx, None if head is None or n is None else D.mul(n, head))))
    presents = []
    for past in (past_k, past_v):
        if head is None and _rank(past) == 4:
            head = past.shape[3]
        kv_type = past.dtype if past is not None and past.dtype else q.dtype
        presents.append(tensor(kv_type, (b, _or_fresh(ctx, nkv), ctx.fresh(), _or_fresh(ctx, head))))
    return [out, *presents, Fact(INT32, None)]


def _indexer_capacity(ctx) -> D.Dim:
    """Selected entries per query: ``token_budget + compress_ratio - 1`` (qsa), ``index_topk`` (csa)."""
    mode = ctx.attr("policy_mode")
    if mode == "qsa" and ctx.attr("token_budget") is not None and ctx.attr("compress_ratio") is not None:
        return ctx.attr("token_budget") + ctx.attr("compress_ratio") - 1
    if mode == "csa" and ctx.attr("index_topk") is not None:
        return ctx.attr("index_topk")
    return ctx.fresh()


def _like(f: Fact | None, dtype: int = 0) -> Fact:
    return Fact(dtype, None) if f is None else tensor(f.dtype or dtype, f.shape)


@register("SparseAttentionIndexer", domain=MS)
def sparse_attention_indexer(ctx, ins: list) -> list:
    """SparseAttentionIndexer: selected_indices int32 ``(B, S, capacity)``; present_key past_key's
    shape with a past_sequence_length input, else ``(B, ?, h)``; present_proj_buffer
    ``(2, B, ?, 2h)``."""
    q, past_k, past_len, proj = ins[0], _arg(ins, 7), _arg(ins, 12), _arg(ins, 13)
    _check_rank(ctx, q, (3,), "query")
    b, s = (q.shape[0], q.shape[1]) if _rank(q) == 3 else (ctx.fresh(), ctx.fresh())
    selected = tensor(INT32, (b, s, _indexer_capacity(ctx)))
    if past_len is not None and past_k is not None:
        present = _like(past_k, q.dtype)
    else:
        head = past_k.shape[2] if _rank(past_k) == 3 else ctx.fresh()
        present = tensor(past_k.dtype if past_k is not None and past_k.dtype else q.dtype, (b, ctx.fresh(), head))
    width = proj.shape[3] if _rank(proj) == 4 else ctx.fresh()
    return [selected, present, tensor(q.dtype, (2, b, ctx.fresh(), width))]


@register("PackedSparseAttentionIndexer", domain=MS)
def packed_sparse_attention_indexer(ctx, ins: list) -> list:
    """PackedSparseAttentionIndexer: selected_indices int32 ``(T, capacity)`` (width left open with
    ``max_output_entries``), selected_counts ``(T)``; the state outputs keep their past inputs'
    shapes; state_update ``(B, state_update_capacity, h)``; state_status ``(B)``."""
    q, qnorm, cu = ins[0], _arg(ins, 2), _arg(ins, 6)
    key_state, kv_buf, gate_buf, lengths = _arg(ins, 12), _arg(ins, 13), _arg(ins, 14), _arg(ins, 15)
    _check_rank(ctx, q, (2,), "query")
    t = q.shape[0] if _rank(q) == 2 else ctx.fresh()
    width = ctx.fresh() if ctx.attr("max_output_entries") is not None else _indexer_capacity(ctx)
    if _rank(lengths) == 2:
        b = lengths.shape[0]
    elif _rank(cu) == 1:
        b = D.sub(cu.shape[0], 1)
    else:
        b = ctx.fresh()
    head = qnorm.shape[0] if _rank(qnorm) == 1 else ctx.fresh()
    return [
        tensor(INT32, (t, width)),
        tensor(INT32, (t,)),
        _like(key_state, q.dtype),
        _like(kv_buf, q.dtype),
        _like(gate_buf, q.dtype),
        _like(lengths, INT32),
        tensor(q.dtype, (b, ctx.attr("state_update_capacity", 0), head)),
        tensor(INT32, (ctx.fresh(),)),
        tensor(INT32, (b,)),
    ]


@register("PackedAttention", domain=MS)
def packed_attention(ctx, ins: list) -> list:
    """PackedAttention: output ``(token_count, v_hidden)`` from input ``(token_count, input_hidden)``."""
    x = ins[0]
    _check_rank(ctx, x, (2,), "input")
    _, _, hv = _qkv_sizes(ctx, _arg(ins, 1), _arg(ins, 2))
    if x.shape is None:
        return [Fact(x.dtype, None)]
    return [tensor(x.dtype, (x.shape[0], _or_fresh(ctx, hv)))]


@register("PackedMultiHeadAttention", domain=MS)
def packed_multi_head_attention(ctx, ins: list) -> list:
    """PackedMultiHeadAttention: output ``(token_count, v_hidden)``; a packed query
    ``(token_count, N, 3, h)`` gives ``N*h``."""
    q, value = ins[0], _arg(ins, 2)
    _check_rank(ctx, q, (2, 4), "query")
    if q.shape is None:
        return [Fact(q.dtype, None)]
    if len(q.shape) == 4:
        return [tensor(q.dtype, (q.shape[0], D.mul(q.shape[1], q.shape[3])))]
    hv = value.shape[1] if _rank(value) == 2 else None
    return [tensor(q.dtype, (q.shape[0], _or_fresh(ctx, hv)))]


@register(["PagedAttention", "SparsePagedAttention"], domain=MS)
def paged_attention(ctx, ins: list) -> list:
    """PagedAttention (and SparsePagedAttention, shaped alike): output ``(num_tokens, N*hv)`` from a
    2-D query (hv = ``v_head_size`` or the head size, the query packed with K and V when they are
    absent); the earlier schema's 4-D query gives an output of its shape. key_cache_out /
    value_cache_out alias the caches."""
    q, key, value = ins[0], _arg(ins, 1), _arg(ins, 2)
    k_cache, v_cache = _arg(ins, 3), _arg(ins, 4)
    n, nkv = _num_heads(ctx), ctx.attr("kv_num_heads")
    dtype = q.dtype
    if q.shape is None:
        out = Fact(dtype, None)
    elif len(q.shape) != 2:
        out = tensor(dtype, q.shape)
    else:
        t, hq = q.shape
        if key is None and value is None:
            head = None if n is None or nkv is None else heads_div(hq, n + 2 * nkv)
        else:
            head = _div(hq, n)
        vh = ctx.attr("v_head_size") or head
        out = tensor(dtype, (t, _or_fresh(ctx, None if vh is None or n is None else D.mul(n, vh))))
    kc = Fact(dtype, None) if k_cache is None else tensor(k_cache.dtype, k_cache.shape)
    vc = Fact(dtype, None) if v_cache is None else tensor(v_cache.dtype, v_cache.shape)
    return [out, kc, vc]


@register(["LongformerAttention", "RotaryEmbedding", "MRotaryEmbedding"], domain=MS)
def like_input(ctx, ins: list) -> list:
    """LongformerAttention (``(B, S, hidden)``), RotaryEmbedding and MRotaryEmbedding: output like the
    input."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


@register("GemmaRotaryEmbedding", domain=MS)
def gemma_rotary_embedding(ctx, ins: list) -> list:
    """GemmaRotaryEmbedding: output1 like q (input 1), output2 like k (input 3)."""
    q, k = _arg(ins, 1), _arg(ins, 3)
    return [None if f is None else tensor(f.dtype, f.shape) for f in (q, k)]


@register("LinearAttention", domain=MS)
def linear_attention(ctx, ins: list) -> list:
    """LinearAttention (com.microsoft, unlike ai.onnx's it allows more KV heads than query heads and a
    windowed state): output ``(B, T, max(Hq, Hkv)*dv)``; present_state ``(B, Hkv, dk, dv)``, or
    ``(W, B, Hkv, dk, dv)`` with ``state_window`` W > 0, in past_state's type (query's without)."""
    q, k, v, past = ins[0], _arg(ins, 1), _arg(ins, 2), _arg(ins, 3)
    _check_rank(ctx, q, (3,), "query")
    qh, kvh = _num_heads(ctx, "q_num_heads"), _num_heads(ctx, "kv_num_heads")
    dk = _div(k.shape[2], kvh) if _rank(k) == 3 else None
    dv = _div(v.shape[2], kvh) if _rank(v) == 3 else None
    heads = None if qh is None or kvh is None else max(qh, kvh)
    if q.shape is None:
        b, t = ctx.fresh(), ctx.fresh()
        out = Fact(q.dtype, None)
    else:
        b, t = q.shape[0], q.shape[1]
        out = tensor(q.dtype, (b, t, _or_fresh(ctx, None if heads is None or dv is None else D.mul(heads, dv))))
    state = (b, _or_fresh(ctx, kvh), _or_fresh(ctx, dk), _or_fresh(ctx, dv))
    window = ctx.attr("state_window", 0)
    if window > 0:
        state = (window,) + state
    state_type = past.dtype if past is not None and past.dtype else q.dtype
    return [out, tensor(state_type, state)]


@register("GatedDeltaNet", domain=MS)
def gated_delta_net(ctx, ins: list) -> list:
    """GatedDeltaNet (token-major): query ``(T, Hq, dk)``, value ``(T, Hv, dv)`` (or with ``(B, S)``
    in place of T) give output ``(T, max(Hq, Hv), dv)``; final_state ``(B, Hv, dv, dk)``, B from
    initial_state, cu_seqlens ``(B + 1)`` or the rank-4 query. A packed query
    ``(T, 2*Hq*dk + Hv*dv)`` takes Hv, dv, dk from initial_state."""
    q, k, v, cu, init = ins[0], _arg(ins, 1), _arg(ins, 2), _arg(ins, 3), _arg(ins, 6)
    _check_rank(ctx, init, (4,), "initial_state")
    dtype = q.dtype
    state_type = init.dtype if init is not None and init.dtype else dtype
    if init is not None and init.shape is not None:
        b, hv, dv, dk = init.shape
    else:
        b = hv = dv = dk = None
    lead, hq = None, None
    if k is None and v is None:  # packed QKV
        _check_rank(ctx, q, (2, 3), "packed query")
        if q.shape is not None:
            lead = tuple(q.shape[:-1])
            if hv is not None:
                rest = D.sub(q.shape[-1], D.mul(hv, dv))
                hq = D.exact_div(rest, D.mul(2, dk))
    else:
        _check_rank(ctx, q, (3, 4), "query")
        _check_rank(ctx, v, (3, 4), "value")
        if q.shape is not None:
            lead, hq = tuple(q.shape[:-2]), q.shape[-2]
            dk = q.shape[-1] if dk is None else dk
        if v is not None and v.shape is not None:
            hv, dv = v.shape[-2], v.shape[-1]
    if lead is None:
        out = Fact(dtype, None)
    else:
        heads = None if hq is None or hv is None else D.dmax(hq, hv)
        out = tensor(dtype, lead + (_or_fresh(ctx, heads), _or_fresh(ctx, dv)))
    if b is None:
        if _rank(cu) == 1:
            b = D.sub(cu.shape[0], 1)
        elif lead is not None and len(lead) == 2:
            b = lead[0]
    state = tensor(state_type, (_or_fresh(ctx, b), _or_fresh(ctx, hv), _or_fresh(ctx, dv), _or_fresh(ctx, dk)))
    return [out, state]


@register("LinearAttentionGate", domain=MS)
def linear_attention_gate(ctx, ins: list) -> list:
    """LinearAttentionGate: decay like a ``(B, T, H)``, beta like b."""
    a, b = ins[0], _arg(ins, 3)
    beta = tensor(a.dtype, a.shape) if b is None else tensor(b.dtype, b.shape)
    return [tensor(a.dtype, a.shape), beta]


@register("RelativePositionBias", domain=MS)
def relative_position_bias(ctx, ins: list) -> list:
    """RelativePositionBias: ``(1, num_heads, query_length, key_length)``, num_heads the bias
    table's second dim and the lengths the values of inputs 1 and 2."""
    table = ins[0]
    _check_rank(ctx, table, (2,), "bias_table")
    heads = table.shape[1] if table.shape is not None else None
    ql, kl = _value_dim(_arg(ins, 1)), _value_dim(_arg(ins, 2))
    return [tensor(table.dtype, (1, _or_fresh(ctx, heads), _or_fresh(ctx, ql), _or_fresh(ctx, kl)))]


@register("GatedRelativePositionBias", domain=MS)
def gated_relative_position_bias(ctx, ins: list) -> list:
    """GatedRelativePositionBias: ``(B, N, S, S)`` with B, S from token_offset ``(B, S)`` when given,
    else from query_layer ``(B, S, N*h)``."""
    q, offset = ins[0], _arg(ins, 6)
    n = _or_fresh(ctx, _num_heads(ctx))
    if _rank(offset) == 2:
        b, s = offset.shape
    elif _rank(q) == 3:
        b, s = q.shape[0], q.shape[1]
    else:
        b, s = ctx.fresh(), ctx.fresh()
    return [tensor(q.dtype, (b, n, s, s))]


@register("RemovePadding", domain=MS)
def remove_padding(ctx, ins: list) -> list:
    """RemovePadding: output ``(total_tokens, H)`` (total_tokens depends on the values),
    token_offset ``(B, S)``, cumulated_seq_len ``(B + 1)``, max_seq_len ``(1)``."""
    x, count = ins[0], _arg(ins, 1)
    _check_rank(ctx, x, (3,), "input")
    mt = count.dtype if count is not None and count.dtype else INT32
    if x.shape is None:
        b, s, h = ctx.fresh(), ctx.fresh(), ctx.fresh()
    else:
        b, s, h = x.shape
    return [tensor(x.dtype, (ctx.fresh(), h)), tensor(mt, (b, s)), tensor(mt, (D.add(b, 1),)), tensor(mt, (1,))]


@register("RestorePadding", domain=MS)
def restore_padding(ctx, ins: list) -> list:
    """RestorePadding: ``(B, S, H)`` from token_offset ``(B, S)`` and input ``(total_tokens, H)``."""
    x, offset = ins[0], _arg(ins, 1)
    _check_rank(ctx, x, (2,), "input")
    _check_rank(ctx, offset, (2,), "token_offset")
    b, s = offset.shape if _rank(offset) == 2 else (ctx.fresh(), ctx.fresh())
    h = x.shape[1] if _rank(x) == 2 else ctx.fresh()
    return [tensor(x.dtype, (b, s, h))]
