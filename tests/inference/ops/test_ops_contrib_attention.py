"""Rules for onnxruntime's attention family (shapeinfer.inference.ops.contrib.attention), checked against
onnxruntime's CPU kernels at two bindings of the symbolic dims, or against the documented shapes
(ContribOperators.md) where onnxruntime cannot run them on CPU: PackedAttention,
PackedMultiHeadAttention, (Sparse)PagedAttention, DynamicSparseAttention, the sparse-attention
indexers, LongformerAttention, DecoderMaskedSelfAttention,
GemmaRotaryEmbedding, RelativePositionBias, GatedRelativePositionBias, RemovePadding and
RestorePadding are CUDA only, as are MultiHeadAttention's packed QKV / packed KV layouts and
LinearAttention's state window; SparseAttention's CPU kernel needs its past and present caches bound
to one buffer, which a plain session cannot do. Also: ai.onnx Attention-23 / RotaryEmbedding-23 and
the com.microsoft ops of the same names never reach each other's rules."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.builders import gqa_with_mask
from support.contrib_oracle import F16, I32, MS, Case, F, check_against_formula, check_against_onnxruntime

import shapeinfer
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.ops import attention as onnx_attention
from shapeinfer.inference.ops.contrib import attention as ms_attention

I64 = TensorProto.INT64
W24 = np.linspace(-0.1, 0.1, 8 * 24).reshape(8, 24).astype(np.float32)


def _i32(v) -> np.ndarray:
    return np.asarray(v, np.int32)


def _total_from_shapes(*parts: tuple[str, int]) -> list:
    """Helper nodes computing ``t`` (int32 scalar) = sum of the given (tensor, axis) dims."""
    nodes, names = [], []
    for k, (name, axis) in enumerate(parts):
        nodes += [
            helper.make_node("Shape", [name], [f"shape{k}"], start=axis, end=axis + 1),
            helper.make_node("Squeeze", [f"shape{k}"], [f"dim{k}"]),
        ]
        names.append(f"dim{k}")
    total = names[0]
    for k, n in enumerate(names[1:]):
        nodes.append(helper.make_node("Add", [total, n], [f"sum{k}"]))
        total = f"sum{k}"
    nodes.append(helper.make_node("Cast", [total], ["t"], to=TensorProto.INT32))
    return nodes


# onnxruntime runs GroupQueryAttention with a past only one token at a time (or for batch 1).
GQA_FEEDS = {
    "seqlens": lambda b, rng: np.full((b["b"],), b["p"], np.int32),
    "t": lambda b, rng: np.array(b["p"] + 1, np.int32),
}

CPU_CASES = [
    Case(
        "attn",
        "Attention",
        ["x", "w", "bias"],
        [("x", F, ["b", "s", 8])],
        {"w": W24, "bias": np.zeros(24, np.float32)},
        attrs={"num_heads": 2},
        outputs=["y", "present"],
    ),
    Case(
        "attn_no_bias",
        "Attention",
        ["x", "w"],
        [("x", F, ["b", "s", 8])],
        {"w": W24},
        attrs={"num_heads": 2},
        outputs=["y", "present"],
    ),
    Case(
        "attn_past",
        "Attention",
        ["x", "w", "bias", "mask", "past"],
        [("x", F, ["b", "s", 8]), ("mask", I32, ["b", "p + s"]), ("past", F, [2, "b", 2, "p", 4])],
        {"w": W24, "bias": np.zeros(24, np.float32)},
        attrs={"num_heads": 2, "unidirectional": 1},
        outputs=["y", "present"],
        feeds={"mask": lambda b, rng: np.ones((b["b"], b["p"] + b["s"]), np.int32)},
    ),
    Case(
        "attn_qkv_sizes",
        "Attention",
        ["x", "w", "bias"],
        [("x", F, ["b", "s", 8])],
        {"w": W24[:, :20], "bias": np.zeros(20, np.float32)},
        attrs={"num_heads": 2, "qkv_hidden_sizes": [8, 8, 4]},
    ),
    Case(
        "mha",
        "MultiHeadAttention",
        ["q", "k", "v"],
        [("q", F, ["b", "s", 8]), ("k", F, ["b", "l", 8]), ("v", F, ["b", "l", 12])],
        attrs={"num_heads": 2},
        outputs=["y", "present_k", "present_v", "qk"],
        typed={"qk": F},
    ),
    Case(
        "mha_past",
        "MultiHeadAttention",
        ["q", "k", "v", "bias", "", "", "past_k", "past_v"],
        [
            ("q", F, ["b", "s", 8]),
            ("k", F, ["b", "s", 8]),
            ("v", F, ["b", "s", 8]),
            ("past_k", F, ["b", 2, "p", 4]),
            ("past_v", F, ["b", 2, "p", 4]),
        ],
        {"bias": np.zeros(24, np.float32)},
        attrs={"num_heads": 2, "unidirectional": 1},
        outputs=["y", "present_k", "present_v", "qk"],
        typed={"qk": F},
    ),
    Case(
        "mha_bnsh_kv",
        "MultiHeadAttention",
        ["q", "k", "v"],
        [("q", F, ["b", "s", 8]), ("k", F, ["b", 2, "l", 4]), ("v", F, ["b", 2, "l", 4])],
        attrs={"num_heads": 2},
        outputs=["y", "present_k", "present_v"],
    ),
    Case(
        "dmmha_shared",
        "DecoderMaskedMultiHeadAttention",
        ["q", "k", "v", "", "", "past_k", "past_v", "past_len"],
        [
            ("q", F, ["b", 1, 8]),
            ("k", F, ["b", 1, 8]),
            ("v", F, ["b", 1, 8]),
            ("past_k", F, ["b", 2, "l", 4]),
            ("past_v", F, ["b", 2, "l", 4]),
            ("past_len", I32, []),
        ],
        attrs={"num_heads": 2, "past_present_share_buffer": 1},
        outputs=["y", "present_k", "present_v"],
        feeds={"past_len": lambda b, rng: np.array(b["l"] - 1, np.int32)},
    ),
    Case(
        "gqa_total_input",
        "GroupQueryAttention",
        ["q", "k", "v", "past_k", "past_v", "seqlens", "t"],
        [
            ("q", F, ["b", 1, 32]),
            ("k", F, ["b", 1, 16]),
            ("v", F, ["b", 1, 16]),
            ("past_k", F, ["b", 2, "p", 8]),
            ("past_v", F, ["b", 2, "p", 8]),
            ("seqlens", I32, ["b"]),
            ("t", I32, []),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        feeds=GQA_FEEDS,
        open={(1, 2), (2, 2)},
    ),
    Case(
        "gqa_total_from_shapes",
        "GroupQueryAttention",
        ["q", "k", "v", "past_k", "past_v", "seqlens", "t"],
        [
            ("q", F, ["b", 1, 32]),
            ("k", F, ["b", 1, 16]),
            ("v", F, ["b", 1, 16]),
            ("past_k", F, ["b", 2, "p", 8]),
            ("past_v", F, ["b", 2, "p", 8]),
            ("seqlens", I32, ["b"]),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        feeds=GQA_FEEDS,
        pre=_total_from_shapes(("past_k", 2), ("q", 1)),
    ),
    Case(
        "gqa_prompt_packed",
        "GroupQueryAttention",
        ["q", "", "", "", "", "seqlens", "t"],
        [("q", F, ["b", "s", 64]), ("seqlens", I32, ["b"])],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        feeds={"seqlens": lambda b, rng: np.full((b["b"],), b["s"] - 1, np.int32)},
        pre=_total_from_shapes(("q", 1)),
    ),
    Case(
        "gqa_prompt_qk",
        "GroupQueryAttention",
        ["q", "k", "v", "", "", "seqlens", "t"],
        [("q", F, ["b", "s", 32]), ("k", F, ["b", "s", 16]), ("v", F, ["b", "s", 16]), ("seqlens", I32, ["b"])],
        attrs={"num_heads": 4, "kv_num_heads": 2, "qk_output": 1},
        outputs=["y", "present_k", "present_v", "qk"],
        feeds={"seqlens": lambda b, rng: np.full((b["b"],), b["s"] - 1, np.int32)},
        pre=_total_from_shapes(("q", 1)),
    ),
    Case(
        "mha_shared_buffer",
        "MultiHeadAttention",
        ["q", "k", "v", "", "", "", "past_k", "past_v", "past_len"],
        [
            ("q", F, ["b", 1, 8]),
            ("k", F, ["b", 1, 8]),
            ("v", F, ["b", 1, 8]),
            ("past_k", F, ["b", 2, "l", 4]),
            ("past_v", F, ["b", 2, "l", 4]),
            ("past_len", I32, []),
        ],
        attrs={"num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        feeds={"past_len": lambda b, rng: np.array(b["l"] - 1, np.int32)},
    ),
    Case(
        "dmmha_cross_qk",
        "DecoderMaskedMultiHeadAttention",
        ["q", "k", "v"],
        [("q", F, ["b", 1, 8]), ("k", F, ["b", 2, "l", 4]), ("v", F, ["b", 2, "l", 4])],
        attrs={"num_heads": 2, "output_qk": 1},
        outputs=["y", "", "", "qk"],
        typed={"qk": F},
    ),
    Case(
        "mrope",
        "MRotaryEmbedding",
        ["x", "pos", "cos", "sin"],
        [("x", F, ["b", "s", 8]), ("pos", I64, [3, "b", "s"])],
        {"cos": np.ones((16, 2), np.float32), "sin": np.zeros((16, 2), np.float32)},
        attrs={"mrope_section": [1, 1, 0], "num_heads": 2},
    ),
    Case(
        "linear_attention",
        "LinearAttention",
        ["q", "k", "v"],
        [("q", F, ["b", "s", 8]), ("k", F, ["b", "s", 8]), ("v", F, ["b", "s", 12])],
        attrs={"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"},
        outputs=["y", "state"],
    ),
    Case(
        "linear_attention_more_kv_heads",
        "LinearAttention",
        ["q", "k", "v", "past"],
        [("q", F, ["b", "s", 4]), ("k", F, ["b", "s", 8]), ("v", F, ["b", "s", 12]), ("past", F, ["b", 2, 4, 6])],
        attrs={"q_num_heads": 1, "kv_num_heads": 2, "update_rule": "linear"},
        outputs=["y", "state"],
    ),
    Case(
        "gated_delta_net",
        "GatedDeltaNet",
        ["q", "k", "v", "", "decay", "beta"],
        [
            ("q", F, ["b", "s", 2, 4]),
            ("k", F, ["b", "s", 2, 4]),
            ("v", F, ["b", "s", 4, 6]),
            ("decay", F, ["b", "s", 4]),
            ("beta", F, ["b", "s", 4]),
        ],
        outputs=["y", "state"],
    ),
    Case(
        "gated_delta_net_ragged",
        "GatedDeltaNet",
        ["q", "k", "v", "cu", "decay", "beta"],
        [
            ("q", F, ["l", 2, 4]),
            ("k", F, ["l", 2, 4]),
            ("v", F, ["l", 4, 6]),
            ("cu", I32, ["b + 1"]),
            ("decay", F, ["l", 4]),
            ("beta", F, ["l", 4]),
        ],
        outputs=["y", "state"],
        feeds={"cu": lambda b, rng: np.linspace(0, b["l"], b["b"] + 1).astype(np.int32)},
    ),
    Case(
        "gated_delta_net_packed",
        "GatedDeltaNet",
        ["q", "", "", "", "decay", "beta", "state0"],
        [
            ("q", F, ["l", 2 * 2 * 4 + 4 * 6]),
            ("decay", F, ["l", 4]),
            ("beta", F, ["l", 4]),
            ("state0", F, [1, 4, 6, 4]),
        ],
        outputs=["y", "state"],
    ),
    Case(
        "linear_attention_gate",
        "LinearAttentionGate",
        ["a", "dt_bias", "decay_scale", "u"],
        [("a", F, ["b", "s", 2]), ("u", F, ["b", "s", 2])],
        {"dt_bias": np.zeros(2, np.float32), "decay_scale": np.ones(2, np.float32)},
        outputs=["decay", "beta"],
    ),
    Case(
        "rotary",
        "RotaryEmbedding",
        ["x", "pos", "cos", "sin"],
        [("x", F, ["b", "s", 8]), ("pos", I64, ["b", "s"])],
        {"cos": np.ones((16, 2), np.float32), "sin": np.zeros((16, 2), np.float32)},
        attrs={"num_heads": 2},
    ),
    Case(
        "rotary_4d",
        "RotaryEmbedding",
        ["x", "pos", "cos", "sin"],
        [("x", F, ["b", 2, "s", 4]), ("pos", I64, ["b", "s"])],
        {"cos": np.ones((16, 2), np.float32), "sin": np.zeros((16, 2), np.float32)},
    ),
]

# No CPU kernel: the documented shapes.
B_PLUS_1 = ["b + 1"]
GPU_CASES = [
    Case(
        "packed_attn",
        "PackedAttention",
        ["x", "w", "bias", "offset", "cum"],
        [("x", F16, ["l", 8]), ("offset", I32, ["b", "s"]), ("cum", I32, B_PLUS_1)],
        {"w": W24.astype(np.float16), "bias": np.zeros(24, np.float16)},
        attrs={"num_heads": 2},
        expect=[(F16, ["l", "8"])],
    ),
    Case(
        "packed_attn_sizes",
        "PackedAttention",
        ["x", "w", "bias", "offset", "cum"],
        [("x", F16, ["l", 8]), ("offset", I32, ["b", "s"]), ("cum", I32, B_PLUS_1)],
        {"w": W24[:, :20].astype(np.float16), "bias": np.zeros(20, np.float16)},
        attrs={"num_heads": 2, "qkv_hidden_sizes": [8, 8, 4]},
        expect=[(F16, ["l", "4"])],
    ),
    Case(
        "packed_mha",
        "PackedMultiHeadAttention",
        ["q", "k", "v", "", "offset", "cum"],
        [
            ("q", F16, ["l", 8]),
            ("k", F16, ["l", 8]),
            ("v", F16, ["l", 12]),
            ("offset", I32, ["b", "s"]),
            ("cum", I32, B_PLUS_1),
        ],
        attrs={"num_heads": 2},
        expect=[(F16, ["l", "12"])],
    ),
    Case(
        "packed_mha_qkv",
        "PackedMultiHeadAttention",
        ["q", "", "", "", "offset", "cum"],
        [("q", F16, ["l", 2, 3, 4]), ("offset", I32, ["b", "s"]), ("cum", I32, B_PLUS_1)],
        attrs={"num_heads": 2},
        expect=[(F16, ["l", "8"])],
    ),
    Case(
        "mha_packed_qkv",
        "MultiHeadAttention",
        ["q"],
        [("q", F16, ["b", "s", 2, 3, 4])],
        attrs={"num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        expect=[(F16, ["b", "s", "8"]), (F16, ["b", "2", "s", "4"]), (F16, ["b", "2", "s", "4"])],
    ),
    Case(
        "mha_packed_kv",
        "MultiHeadAttention",
        ["q", "kv"],
        [("q", F16, ["b", "s", 8]), ("kv", F16, ["b", "l", 2, 2, 4])],
        attrs={"num_heads": 2},
        outputs=["y", "present_k", "present_v"],
        expect=[(F16, ["b", "s", "8"]), (F16, ["b", "2", "l", "4"]), (F16, ["b", "2", "l", "4"])],
    ),
    Case(
        "paged",
        "PagedAttention",
        ["q", "k", "v", "kc", "vc", "cum", "past_lens", "table"],
        [
            ("q", F16, ["l", 32]),
            ("k", F16, ["l", 16]),
            ("v", F16, ["l", 16]),
            ("kc", F16, ["p", 16, 2, 8]),
            ("vc", F16, ["p", 16, 2, 8]),
            ("cum", I32, B_PLUS_1),
            ("past_lens", I32, ["b"]),
            ("table", I32, ["b", "s"]),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        outputs=["y", "kc_out", "vc_out"],
        expect=[(F16, ["l", "32"]), (F16, ["p", "16", "2", "8"]), (F16, ["p", "16", "2", "8"])],
    ),
    Case(
        "paged_packed",
        "PagedAttention",
        ["q", "", "", "kc", "vc", "cum", "past_lens", "table"],
        [
            ("q", F16, ["l", 64]),
            ("kc", F16, ["p", 16, 2, 8]),
            ("vc", F16, ["p", 16, 2, 8]),
            ("cum", I32, B_PLUS_1),
            ("past_lens", I32, ["b"]),
            ("table", I32, ["b", "s"]),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        expect=[(F16, ["l", "32"])],
    ),
    Case(
        "sparse",
        "SparseAttention",
        ["q", "k", "v", "past_k", "past_v", "rows", "cols", "t", "key_lens"],
        [
            ("q", F, ["b", "s", 16]),
            ("k", F, ["b", "s", 16]),
            ("v", F, ["b", "s", 16]),
            ("past_k", F, ["b", 2, 32, 8]),
            ("past_v", F, ["b", 2, 32, 8]),
            ("key_lens", I32, ["b"]),
        ],
        {"rows": _i32([[0, 1, 3]]), "cols": _i32([[0, 0, 1]])},
        attrs={"num_heads": 2, "kv_num_heads": 2, "sparse_block_size": 16},
        outputs=["y", "present_k", "present_v"],
        expect=[(F, ["b", "s", "16"]), (F, ["b", "2", "32", "8"]), (F, ["b", "2", "32", "8"])],
        pre=_total_from_shapes(("q", 1)),
    ),
    Case(
        "attn_shared_buffer",
        "Attention",
        ["x", "w", "bias", "", "past", "", "past_len"],
        [("x", F16, ["b", 1, 8]), ("past", F16, [2, "b", 2, "l", 4]), ("past_len", I32, [1])],
        {"w": W24.astype(np.float16), "bias": np.zeros(24, np.float16)},
        attrs={"num_heads": 2, "past_present_share_buffer": 1},
        outputs=["y", "present"],
        expect=[(F16, ["b", "1", "8"]), (F16, ["2", "b", "2", "l", "4"])],
    ),
    Case(
        "sparse_paged",
        "SparsePagedAttention",
        ["q", "k", "v", "kc", "vc", "cum", "past_lens", "table", "", "sel", "counts"],
        [
            ("q", F16, ["l", 32]),
            ("k", F16, ["l", 16]),
            ("v", F16, ["l", 16]),
            ("kc", F16, ["p", 16, 2, 8]),
            ("vc", F16, ["p", 16, 2, 8]),
            ("cum", I32, B_PLUS_1),
            ("past_lens", I32, ["b"]),
            ("table", I32, ["b", "s"]),
            ("sel", I32, ["l", 4]),
            ("counts", I32, ["l"]),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        outputs=["y", "kc_out", "vc_out"],
        expect=[(F16, ["l", "32"]), (F16, ["p", "16", "2", "8"]), (F16, ["p", "16", "2", "8"])],
    ),
    Case(
        "gemma_rotary",
        "GemmaRotaryEmbedding",
        ["emb", "q", "q_rot", "k", "k_rot"],
        [
            ("emb", F, ["b", "s", 4]),
            ("q", F16, ["b", 2, "s", 4]),
            ("q_rot", F16, ["b", 2, "s", 4]),
            ("k", F16, ["b", 1, "s", 4]),
            ("k_rot", F16, ["b", 1, "s", 4]),
        ],
        outputs=["q_out", "k_out"],
        expect=[(F16, ["b", "2", "s", "4"]), (F16, ["b", "1", "s", "4"])],
    ),
    Case(
        "linear_attention_state_window",
        "LinearAttention",
        ["q", "k", "v"],
        [("q", F, ["b", "s", 8]), ("k", F, ["b", "s", 8]), ("v", F, ["b", "s", 12])],
        attrs={"q_num_heads": 2, "kv_num_heads": 2, "state_window": 3},
        outputs=["y", "state"],
        expect=[(F, ["b", "s", "12"]), (F, ["3", "b", "2", "4", "6"])],
    ),
    Case(
        "dynamic_sparse",
        "DynamicSparseAttention",
        ["q", "k", "v", "past_k", "past_v", "", "", "sel", "counts", "seqlens", "t"],
        [
            ("q", F16, ["b", 1, 16]),
            ("k", F16, ["b", 1, 16]),
            ("v", F16, ["b", 1, 16]),
            ("past_k", TensorProto.INT8, ["b", 2, "p", 8]),
            ("past_v", TensorProto.INT8, ["b", 2, "p", 8]),
            ("sel", I32, ["b", 2]),
            ("counts", I32, ["b"]),
            ("seqlens", I32, ["b"]),
            ("t", I32, []),
        ],
        attrs={"num_heads": 2, "kv_num_heads": 2, "output_bf16": 1},
        outputs=["y", "present_k", "present_v"],
        expect=[
            (TensorProto.BFLOAT16, ["b", "1", "16"]),
            (TensorProto.INT8, ["b", "2", "?", "8"]),
            (TensorProto.INT8, ["b", "2", "?", "8"]),
        ],
    ),
    Case(
        "dynamic_sparse_packed",
        "DynamicSparseAttention",
        ["q", "", "", "", "", "", "", "sel", "counts", "seqlens", "t"],
        [
            ("q", F16, ["b", "s", 64]),
            ("sel", I32, ["b*s", 2]),
            ("counts", I32, ["b*s"]),
            ("seqlens", I32, ["b"]),
            ("t", I32, []),
        ],
        attrs={"num_heads": 4, "kv_num_heads": 2},
        expect=[(F16, ["b", "s", "32"])],
    ),
    Case(
        "sparse_indexer_qsa",
        "SparseAttentionIndexer",
        ["q", "k", "qn", "kn", "cos", "sin", "", "past_k"],
        [
            ("q", F16, ["b", "s", 32]),
            ("k", F16, ["b", "s", 8]),
            ("cos", F16, [64, 4]),
            ("sin", F16, [64, 4]),
            ("past_k", F16, ["b", "p", 8]),
        ],
        {"qn": np.ones(8, np.float16), "kn": np.ones(8, np.float16)},
        attrs={"policy_mode": "qsa", "compress_ratio": 4, "token_budget": 16},
        outputs=["sel", "present_k"],
        expect=[(I32, ["b", "s", "19"]), (F16, ["b", "?", "8"])],
    ),
    Case(
        "sparse_indexer_csa_shared",
        "SparseAttentionIndexer",
        ["q", "k", "qn", "kn", "cos", "sin", "", "past_k", "", "", "", "", "past_len"],
        [
            ("q", F16, ["b", "s", 32]),
            ("k", F16, ["b", "s", 16]),
            ("cos", F16, [64, 4]),
            ("sin", F16, [64, 4]),
            ("past_k", F16, ["b", "l", 8]),
            ("past_len", I32, [1]),
        ],
        {"qn": np.ones(8, np.float16), "kn": np.ones(8, np.float16)},
        attrs={"policy_mode": "csa", "compress_ratio": 4, "index_topk": 5},
        outputs=["sel", "present_k"],
        expect=[(I32, ["b", "s", "5"]), (F16, ["b", "l", "8"])],
    ),
    Case(
        "packed_sparse_indexer",
        "PackedSparseAttentionIndexer",
        ["q", "k", "qn", "kn", "cos", "sin", "cu", "past_lens", "", "", "", "", "key_state", "kv_buf", "", "lengths"],
        [
            ("q", F16, ["l", 32]),
            ("k", F16, ["l", 8]),
            ("cos", F16, [64, 4]),
            ("sin", F16, [64, 4]),
            ("cu", I32, ["b + 1"]),
            ("past_lens", I32, ["b"]),
            ("key_state", F16, ["b", 6, 8]),
            ("kv_buf", F16, ["b", 7, 8]),
            ("lengths", I32, ["b", 2]),
        ],
        {"qn": np.ones(8, np.float16), "kn": np.ones(8, np.float16)},
        attrs={
            "policy_mode": "qsa",
            "compress_ratio": 4,
            "token_budget": 16,
            "state_capacity": 6,
            "state_update_capacity": 2,
        },
        outputs=["sel", "counts", "key_state_out", "kv_buf_out", "", "lengths_out", "update", "", "status"],
        expect=[
            (I32, ["l", "19"]),
            (I32, ["l"]),
            (F16, ["b", "6", "8"]),
            (F16, ["b", "7", "8"]),
            (I32, ["b", "2"]),
            (F16, ["b", "2", "8"]),
            (I32, ["b"]),
        ],
    ),
    Case(
        "longformer",
        "LongformerAttention",
        ["x", "w", "bias", "mask", "gw", "gb", "g"],
        [("x", F16, ["b", "s", 8]), ("mask", F16, ["b", "s"]), ("g", I32, ["b", "s"])],
        {
            "w": W24.astype(np.float16),
            "bias": np.zeros(24, np.float16),
            "gw": W24.astype(np.float16),
            "gb": np.zeros(24, np.float16),
        },
        attrs={"num_heads": 2, "window": 2},
        expect=[(F16, ["b", "s", "8"])],
    ),
    Case(
        "dmsa",
        "DecoderMaskedSelfAttention",
        ["x", "w", "bias", "", "past", "", "past_len"],
        [("x", F16, ["b", 1, 8]), ("past", F16, [2, "b", 2, "l", 4]), ("past_len", I32, [])],
        {"w": W24.astype(np.float16), "bias": np.zeros(24, np.float16)},
        attrs={"num_heads": 2, "past_present_share_buffer": 1},
        outputs=["y", "present"],
        expect=[(F16, ["b", "1", "8"]), (F16, ["2", "b", "2", "l", "4"])],
    ),
    Case(
        "rel_pos_bias",
        "RelativePositionBias",
        ["table", "ql", "kl"],
        [("table", F, [32, 6])],
        {"ql": np.array(5, np.int64), "kl": np.array(9, np.int64)},
        attrs={"max_distance": 128},
        expect=[(F, ["1", "6", "5", "9"])],
    ),
    Case(
        "rel_pos_bias_from_shape",
        "RelativePositionBias",
        ["table", "t", "t"],
        [("table", F, [32, 6]), ("x", F, ["s"])],
        attrs={"max_distance": 128},
        expect=[(F, ["1", "6", "s", "s"])],
        pre=[helper.make_node("Shape", ["x"], ["sh"]), helper.make_node("Squeeze", ["sh"], ["t"])],
    ),
    Case(
        "rel_pos_bias_runtime",
        "RelativePositionBias",
        ["table", "ql", "kl"],
        [("table", F, [32, 6]), ("ql", I64, []), ("kl", I64, [])],
        attrs={"max_distance": 128},
        expect=[(F, ["1", "6", "?", "?"])],
    ),
    Case(
        "gated_rel_pos",
        "GatedRelativePositionBias",
        ["q", "qb", "rel", "w", "bias", "eco"],
        [("q", F16, ["b", "s", 8]), ("rel", F16, [1, 2, "s", "s"])],
        {
            "qb": np.zeros(8, np.float16),
            "w": np.zeros((4, 8), np.float16),
            "bias": np.zeros(8, np.float16),
            "eco": np.zeros((1, 2, 1, 1), np.float16),
        },
        attrs={"num_heads": 2},
        expect=[(F16, ["b", "2", "s", "s"])],
    ),
    Case(
        "gated_rel_pos_packed",
        "GatedRelativePositionBias",
        ["q", "qb", "rel", "w", "bias", "eco", "offset"],
        [("q", F16, ["l", 8]), ("rel", F16, [1, 2, "s", "s"]), ("offset", I32, ["b", "s"])],
        {
            "qb": np.zeros(8, np.float16),
            "w": np.zeros((4, 8), np.float16),
            "bias": np.zeros(8, np.float16),
            "eco": np.zeros((1, 2, 1, 1), np.float16),
        },
        attrs={"num_heads": 2},
        expect=[(F16, ["b", "2", "s", "s"])],
    ),
    Case(
        "remove_padding",
        "RemovePadding",
        ["x", "count"],
        [("x", F16, ["b", "s", 8]), ("count", I32, ["b"])],
        outputs=["y", "offset", "cum", "max"],
        expect=[(F16, ["?", "8"]), (I32, ["b", "s"]), (I32, ["b + 1"]), (I32, ["1"])],
    ),
    Case(
        "restore_padding",
        "RestorePadding",
        ["x", "offset"],
        [("x", F16, ["l", 8]), ("offset", I32, ["b", "s"])],
        expect=[(F16, ["b", "s", "8"])],
    ),
]


def test_cpu_kernels_match_onnxruntime() -> None:
    assert check_against_onnxruntime(CPU_CASES) == 2 * sum(len([o for o in c.outputs if o]) for c in CPU_CASES)


def test_gpu_only_ops_follow_documented_shapes() -> None:
    assert check_against_formula(GPU_CASES) == sum(len([o for o in c.outputs if o]) for c in GPU_CASES)


@pytest.mark.parametrize(
    ("domain", "op", "version", "rule"),
    [
        ("", "Attention", 23, onnx_attention.attention),
        ("", "RotaryEmbedding", 23, onnx_attention.rotary_embedding),
        (MS, "Attention", 1, ms_attention.attention),
        (MS, "RotaryEmbedding", 1, ms_attention.like_input),
        ("", "Attention", 22, None),  # no ai.onnx Attention before 23: never the contrib rule
        ("", "MultiHeadAttention", 23, None),
        (MS, "Attention", 23, ms_attention.attention),  # any com.microsoft version: the contrib rule
    ],
)
def test_dispatch_is_by_domain(domain: str, op: str, version: int, rule) -> None:
    assert registry.lookup(domain, op, version) is rule


def test_same_name_ops_of_both_domains_in_one_model() -> None:
    """ai.onnx Attention-23 (4-D Q/K/V) and com.microsoft Attention (merged weights) side by side:
    each output follows its own op's contract."""
    q = helper.make_tensor_value_info("q", F, ["b", 2, "s", 4])
    x = helper.make_tensor_value_info("x", F, ["b", "s", 8])
    w = helper.make_tensor("w", F, [8, 24], W24.reshape(-1).tolist())
    nodes = [
        helper.make_node("Attention", ["q", "q", "q"], ["y_onnx"]),
        helper.make_node("Attention", ["x", "w"], ["y_ms", "present"], domain=MS, num_heads=2),
        helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "pos"], ["r_onnx"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            q,
            x,
            helper.make_tensor_value_info("cos", F, ["b", "s", 2]),
            helper.make_tensor_value_info("sin", F, ["b", "s", 2]),
            helper.make_tensor_value_info("pos", I64, ["b", "s"]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("y_onnx", "y_ms", "present", "r_onnx")],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid(MS, 1)])
    r = shapeinfer.infer(model)
    fmt = lambda n: [str(d) for d in r.dims(n)]  # noqa: E731
    assert fmt("y_onnx") == ["b", "2", "s", "4"]
    assert fmt("y_ms") == ["b", "s", "8"]
    assert fmt("present") == ["2", "b", "2", "s", "4"]
    assert fmt("r_onnx") == ["b", "2", "s", "4"]


def test_every_contrib_rule_names_an_onnxruntime_op() -> None:
    """Each (domain, op) the contrib attention / normalization / fused modules register is an op
    onnxruntime registers in that domain (no misspelt or invented names), except LayerNormalization
    and SimplifiedLayerNormalization under com.microsoft, accepted like onnx-shape-inference does."""
    from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

    known = {(s.domain, s.name) for s in get_all_operator_schema()}
    modules = {f"shapeinfer.inference.ops.contrib.{m}" for m in ("attention", "normalization", "fused")}
    registry.load_all()  # the families are imported lazily
    mine = {(d, op) for (d, op), entries in registry._RULES.items() for _, fn in entries if fn.__module__ in modules}
    assert len(mine) >= 57
    extra = {(MS, "LayerNormalization"), (MS, "SimplifiedLayerNormalization")}
    assert mine - known == extra


@pytest.mark.parametrize("op", ["GroupQueryAttention", "MultiHeadAttention"])
def test_attention_guards_the_caches_onnxruntime_checks(op: str) -> None:
    """past_key and past_value must be ``(B, Nkv, P, h)`` alike: with the caches' dims as free
    symbols, each is a guard, and onnxruntime refuses a cache that breaks any one of them (the
    API review: qwen2 from onnxruntime-genai ran nowhere but at kv_cache_dim 16, and said no
    condition)."""
    ort = pytest.importorskip("onnxruntime")
    gqa = op == "GroupQueryAttention"
    n, nkv, h = (4, 2, 8) if gqa else (2, 2, 8)
    vi = helper.make_tensor_value_info
    ins = [
        vi("q", F, ["B", "S", n * h]),
        vi("k", F, ["B", "S", nkv * h]),
        vi("v", F, ["B", "S", nkv * h]),
        vi("pk", F, ["B2", "K1", "P", "K3"]),
        vi("pv", F, ["B3", "V1", "P2", "V3"]),
    ]
    if gqa:
        ins += [vi("sl", I32, ["B"]), vi("tl", I32, [])]
        node = helper.make_node(
            op, ["q", "k", "v", "pk", "pv", "sl", "tl"], ["o", "ppk", "ppv"], domain=MS, num_heads=n, kv_num_heads=nkv
        )
    else:
        inputs = ["q", "k", "v", "", "", "", "pk", "pv"]  # (no bias, padding mask or attention bias)
        node = helper.make_node(op, inputs, ["o", "ppk", "ppv"], domain=MS, num_heads=n)
    outs = [vi(x, F, None) for x in ("o", "ppk", "ppv")]
    m = helper.make_model(
        helper.make_graph([node], "g", ins, outs),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
    )
    guards = {g.text for g in shapeinfer.infer(m).guards()}
    assert guards == {"B2 == B", f"K1 == {nkv}", "K3 == 8", "B3 == B", f"V1 == {nkv}", "V3 == 8", "P2 == P"}
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])

    def runs(pk: tuple, pv: tuple, b: int = 1) -> bool:
        feeds = {
            "q": np.zeros((b, 1, n * h), np.float32),
            "k": np.zeros((b, 1, nkv * h), np.float32),
            "v": np.zeros((b, 1, nkv * h), np.float32),
            "pk": np.zeros(pk, np.float32),
            "pv": np.zeros(pv, np.float32),
        }
        if gqa:
            feeds |= {"sl": np.full((b,), pk[2], np.int32), "tl": np.array(pk[2] + 1, np.int32)}
        try:
            sess.run(None, feeds)
        except Exception:
            return False
        return True

    good = (1, nkv, 3, h)
    assert runs(good, good)
    for bad in [(1, nkv, 3, 3), (1, 3, 3, h), (2, nkv, 3, h)]:  # K3, K1, B2 broken
        assert not runs(bad, bad)
    assert not runs(good, (1, nkv, 4, h))  # P2 == P
    assert not runs(good, (1, nkv, 3, 4))  # V3 == 8
    assert not runs(good, good, b=2)  # B2 == B


@pytest.mark.parametrize("window", [4, 8])
def test_sliding_window_cache_needs_a_whole_window(window: int) -> None:
    """With ``sliding_window_cache`` GroupQueryAttention's past holds at least
    ``local_window_size`` positions: a guard, and onnxruntime runs the node exactly where it
    holds (gemma2 from onnxruntime-genai, local window 4096, ran at no size verify suggested)."""
    ort = pytest.importorskip("onnxruntime")
    m, feeds = gqa_with_mask(window, 1)
    result = shapeinfer.infer(m)
    assert f"{window} <= P" in {g.text for g in result.guards()}
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])

    def runs(p: int) -> bool:
        try:
            sess.run(None, feeds(1, p, 1, 2))
        except Exception:
            return False
        return True

    for p in (1, window - 1, window, window + 1, 2 * window):
        assert runs(p) == (window <= p), p


@pytest.mark.parametrize("sliding", [0, 1])
def test_gqa_lengths_are_guards_exactly_where_onnxruntime_checks_them(sliding: int) -> None:
    """onnxruntime runs GroupQueryAttention after a past only at some lengths; qwen2 from
    onnxruntime-genai said only "holds when: kv_cache_dim == 16" and verify's example failed in
    onnxruntime ("total_sequence_length must equal past_sequence_length + kv_sequence_length
    ..."). Over B, P, S, T in a grid, the guards hold exactly where onnxruntime runs the node
    (a cache that does not slide); a sliding cache runs nowhere a guard fails, and fails where
    they hold only for T < S, where seqlens_k (the mask's sum, a value) is what is too small."""
    import itertools

    from shapeinfer.symbolic.guards import check

    ort = pytest.importorskip("onnxruntime")
    m, feeds = gqa_with_mask(1 if sliding else -1, sliding)
    guards = shapeinfer.infer(m).guards()
    either = "B <= 1 or T <= S or S <= 1"
    want = {either} if sliding else {"S <= T", "T <= P or T == P + S", either}
    assert {g.text for g in guards} == want
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for b, p, s, t in itertools.product((1, 2), (1, 3, 4), (1, 2, 3), range(1, 9)):
        try:
            sess.run(None, feeds(b, p, s, t))
            runs = True
        except Exception:
            runs = False
        holds = all(check(g, {"B": b, "P": p, "S": s, "T": t}) for g in guards)
        assert runs == holds or (sliding and holds and t < s), (b, p, s, t, runs)
