"""Rules for onnxruntime's fused activations and linear ops (shapeinfer.inference.ops.contrib.fused), checked
against onnxruntime's CPU kernels at two bindings of the symbolic dims, or against the documented
shapes where onnxruntime has no CPU kernel (BiasAdd, BiasSplitGelu, GemmFastGelu, GemmFloat8,
NhwcConv and HyperConnectionLowRankMix are CUDA / ROCm only)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto
from support.contrib_oracle import F16, Case, F, check_against_formula, check_against_onnxruntime

H = 8
bias = np.linspace(-1, 1, H).astype(np.float32)


def _fmm(id_: str, a: list, b: list, **attrs) -> Case:
    return Case(id_, "FusedMatMul", ["a", "b"], [("a", F, a), ("b", F, b)], attrs=attrs)


CPU_CASES = [
    Case("bias_gelu", "BiasGelu", ["x", "bias"], [("x", F, ["b", "s", H])], {"bias": bias}),
    Case("fast_gelu", "FastGelu", ["x"], [("x", F, ["b", "s", H])]),
    Case("fast_gelu_bias", "FastGelu", ["x", "bias"], [("x", F, ["b", "s", H])], {"bias": bias}),
    Case("gelu", "Gelu", ["x"], [("x", F, ["b", "s"])]),
    Case("quick_gelu", "QuickGelu", ["x"], [("x", F, ["b", "s", 3])], attrs={"alpha": 1.5}),
    _fmm("fmm", ["b", "s", H], [H, "l"]),
    _fmm("fmm_trans_a", ["b", H, "s"], [H, "l"], transA=1),
    _fmm("fmm_trans_b", ["b", "s", H], ["l", H], transB=1, alpha=0.5),
    _fmm("fmm_trans_ab", ["p", 1, H, "s"], ["b", "l", H], transA=1, transB=1),
    _fmm("fmm_batch_a", ["s", "b", H], ["b", H, "l"], transBatchA=1),
    _fmm("fmm_batch_a_trans", [H, "b", "s"], ["b", H, "l"], transBatchA=1, transA=1),
    _fmm("fmm_batch_b", ["b", "s", H], [H, "b", "l"], transBatchB=1),
    _fmm("fmm_batch_b_trans", ["b", "s", H], ["l", "b", H], transBatchB=1, transB=1),
    _fmm("fmm_vector", ["b", "s", H], [H]),
    Case(
        "transpose_matmul",
        "TransposeMatMul",
        ["a", "b"],
        [("a", F, ["b", H, "s"]), ("b", F, ["l", H])],
        attrs={"transA": 1, "transB": 1},
    ),
    Case(
        "moe_tokens",
        "MoE",
        ["x", "router", "fc1", "", "fc2"],
        [("x", F, ["b*s", H]), ("router", F, ["b*s", 4])],
        {"fc1": np.ones((4, 16, H), np.float32), "fc2": np.ones((4, H, 16), np.float32)},
        attrs={"k": 2},
    ),
    Case(
        "moe_batched",
        "MoE",
        ["x", "router", "fc1", "", "fc2"],
        [("x", F, ["b", "s", H]), ("router", F, ["b*s", 4])],
        {"fc1": np.ones((4, 16, H), np.float32), "fc2": np.ones((4, H, 16), np.float32)},
    ),
    Case("scaled_silu", "ScaledSiLU", ["x"], [("x", F, ["b", "s"])], attrs={"alpha": 1.5}),
    Case(
        "gated_add",
        "GatedAdd",
        ["x", "u", "g"],
        [("x", F, ["b", "s", 4]), ("u", F, ["b", "s", 4]), ("g", F, ["b", "s", 1])],
    ),
    Case("unfold", "UnfoldTensor", ["x"], [("x", F, ["b", "s", 3])], attrs={"dim": 1, "size": 3, "step": 2}),
    Case("unfold_last", "UnfoldTensor", ["x"], [("x", F, ["b", "s + 4"])], attrs={"size": 4}),
    Case("dtw", "DynamicTimeWarping", ["x"], [("x", F, ["s", "l"])], open={(0, 1)}),
    Case("pre_mix_grouped", "HyperConnectionPreMix", ["x", "m"], [("x", F, ["b", "s", 2, 4]), ("m", F, ["b", "s", 2])]),
    Case(
        "pre_mix_flat",
        "HyperConnectionPreMix",
        ["x", "m"],
        [("x", F, ["b", "s", 8]), ("m", F, ["b", "s", 8])],
        attrs={"num_branches": 2},
    ),
    Case(
        "post_mix",
        "HyperConnectionPostMix",
        ["x", "o", "m"],
        [("x", F, ["b", "s", 8]), ("o", F, ["b", "s", 4]), ("m", F, ["b", "s", 2])],
        attrs={"num_branches": 2},
    ),
    Case(
        "engram_gate",
        "EngramGate",
        ["k", "q", "v", "ks", "qs", "cs"],
        [("k", F, ["b", "s", 2, 4]), ("q", F, ["b", "s", 2, 4]), ("v", F, ["b", "s", 4])],
        {"ks": np.ones((2, 4), np.float32), "qs": np.ones((2, 4), np.float32), "cs": np.ones((2, 4), np.float32)},
        outputs=["y", "y_normed"],
    ),
    Case(
        "fused_conv",
        "FusedConv",
        ["x", "w", "bias"],
        [("x", F, ["b", 3, "h", "w"])],
        {"w": np.ones((4, 3, 3, 3), np.float32), "bias": np.zeros(4, np.float32)},
        attrs={"activation": "Relu", "pads": [1, 0, 1, 0], "strides": [2, 1]},
    ),
    Case(
        "fused_gemm",
        "FusedGemm",
        ["a", "b"],
        [("a", F, [H, "s"])],
        {"b": np.ones((5, H), np.float32)},
        attrs={"activation": "Relu", "transA": 1, "transB": 1},
    ),
]

# No CPU kernel: the documented shapes (ContribOperators.md).
GPU_CASES = [
    Case(
        "bias_add",
        "BiasAdd",
        ["x", "bias", "skip"],
        [("x", F16, ["b", "h*w", H]), ("skip", F16, ["b", "h*w", H])],
        {"bias": bias.astype(np.float16)},
        expect=[(F16, ["b", "h*w", str(H)])],
    ),
    Case(
        "bias_split_gelu",
        "BiasSplitGelu",
        ["x", "bias"],
        [("x", F16, ["b", "h*w", 2 * H])],
        {"bias": np.ones(2 * H, np.float16)},
        expect=[(F16, ["b", "h*w", str(H)])],
    ),
    Case(
        "gemm_fast_gelu",
        "GemmFastGelu",
        ["x", "w"],
        [("x", F, ["b", "s", H]), ("w", F, [H, "l"])],
        expect=[(F, ["b", "s", "l"])],
    ),
    Case(
        "gemm_float8",
        "GemmFloat8",
        ["a", "b"],
        [("a", TensorProto.FLOAT8E4M3FN, ["l", "s"]), ("b", TensorProto.FLOAT8E4M3FN, ["p", "l"])],
        attrs={"transA": 1, "transB": 1, "dtype": F16},
        expect=[(F16, ["s", "p"])],
    ),
    Case(
        "nhwc_conv",
        "NhwcConv",
        ["x", "w"],
        [("x", F16, ["b", "h", "w", 3])],
        {"w": np.ones((4, 3, 3, 3), np.float16)},
        attrs={"pads": [1, 1, 1, 1], "strides": [2, 2]},
        expect=[(F16, ["b", "(h - 1)//2 + 1", "(w - 1)//2 + 1", "4"])],
    ),
    Case(
        "low_rank_mix",
        "HyperConnectionLowRankMix",
        ["x", "ns", "dw", "uw", "iw"],
        [("x", F16, ["b", "s", 8])],
        {
            "ns": np.ones(8, np.float16),
            "dw": np.ones((8, 3), np.float16),
            "uw": np.ones((3, 8), np.float16),
            "iw": np.ones((8, 2), np.float16),
        },
        attrs={"num_branches": 2},
        outputs=["pre", "gate", "streams"],
        expect=[(F16, ["b", "s", "4"]), (F16, ["b", "s", "2"]), (F16, ["b", "s", "8"])],
    ),
]


def _outputs(cases: list[Case]) -> int:
    return sum(len([o for o in c.outputs if o]) for c in cases)


def test_cpu_kernels_match_onnxruntime() -> None:
    assert check_against_onnxruntime(CPU_CASES) == 2 * _outputs(CPU_CASES)


def test_gpu_only_ops_follow_documented_shapes() -> None:
    assert check_against_formula(GPU_CASES) == _outputs(GPU_CASES)
