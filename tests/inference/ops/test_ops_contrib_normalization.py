"""Rules for onnxruntime's fused normalizations (shapeinfer.inference.ops.contrib.normalization), checked
against onnxruntime's CPU kernels at two bindings of the symbolic dims, or against the documented
shapes where onnxruntime has only CUDA kernels (GroupNorm, SkipGroupNorm) or no schema
(LayerNormalization / SimplifiedLayerNormalization under com.microsoft)."""

from __future__ import annotations

import numpy as np
from support.contrib_oracle import F16, I32, Case, F, check_against_formula, check_against_onnxruntime

H = 8
vec = lambda n=H: np.linspace(0.5, 1.5, n).astype(np.float32)  # noqa: E731

CPU_CASES = [
    Case(
        "skip_ln",
        "SkipLayerNormalization",
        ["x", "skip", "gamma", "beta", "bias"],
        [("x", F, ["b", "s", H]), ("skip", F, ["b", "s", H])],
        {"gamma": vec(), "beta": vec(), "bias": vec()},
        outputs=["y", "mean", "inv_std", "sum"],
    ),
    Case(
        "skip_ln_2d_skip",
        "SkipLayerNormalization",
        ["x", "skip", "gamma"],
        [("x", F, ["b", "s", H]), ("skip", F, ["s", H])],
        {"gamma": vec()},
        outputs=["y", "", "", "sum"],
    ),
    Case(
        "skip_simplified",
        "SkipSimplifiedLayerNormalization",
        ["x", "skip", "gamma", "bias"],
        [("x", F, ["b", "s", H]), ("skip", F, ["b", "s", H])],
        {"gamma": vec(), "bias": vec()},
        outputs=["y", "mean", "inv_std", "sum"],
    ),
    Case(
        "skip_simplified_tokens",
        "SkipSimplifiedLayerNormalization",
        ["x", "skip", "gamma"],
        [("x", F, ["b*s", H]), ("skip", F, ["b*s", H])],
        {"gamma": vec()},
        outputs=["y", "", "", "sum"],
    ),
    Case(
        "embed_ln",
        "EmbedLayerNormalization",
        ["ids", "seg", "word", "pos", "segemb", "gamma", "beta", "mask"],
        [("ids", I32, ["b", "s"]), ("seg", I32, ["b", "s"]), ("mask", I32, ["b", "s"])],
        {
            "word": np.ones((20, H), np.float32),
            "pos": np.ones((16, H), np.float32),
            "segemb": np.ones((2, H), np.float32),
            "gamma": vec(),
            "beta": vec(),
        },
        outputs=["y", "mask_index", "sum"],
        feeds={"mask": lambda b, rng: np.ones((b["b"], b["s"]), np.int32)},
    ),
    Case(
        "embed_ln_no_segment",
        "EmbedLayerNormalization",
        ["ids", "", "word", "pos", "", "gamma", "beta"],
        [("ids", I32, ["b", "s"])],
        {"word": np.ones((20, H), np.float32), "pos": np.ones((16, H), np.float32), "gamma": vec(), "beta": vec()},
        outputs=["y", "mask_index"],
    ),
    Case(
        "simplified_ln_default_domain",
        "SimplifiedLayerNormalization",
        ["x", "scale"],
        [("x", F, ["b", "s", H])],
        {"scale": vec()},
        outputs=["y", "inv_std"],
        domain="",
    ),
    Case(
        "simplified_ln_axis",
        "SimplifiedLayerNormalization",
        ["x", "scale"],
        [("x", F, ["b", "s", 2, 4])],
        {"scale": np.ones((2, 4), np.float32)},
        attrs={"axis": 2},
        outputs=["y", "inv_std"],
        domain="",
    ),
    Case(
        "gated_rms_norm",
        "GatedRMSNorm",
        ["x", "scale", "gate"],
        [("x", F, ["b", "s", H]), ("gate", F, ["b", "s", H])],
        {"scale": vec(4)},
        attrs={"activation": "silu"},
    ),
    Case("branchwise_rms_norm", "BranchwiseRMSNorm", ["x", "scale"], [("x", F, ["b", 2, 4])], {"scale": vec(4)}),
]

# LayerNormalization before opset 17 exists only as onnxruntime's own default-domain schema.
OPSET16_CASES = [
    Case(
        "layer_norm_opset16",
        "LayerNormalization",
        ["x", "scale", "bias"],
        [("x", F, ["b", "s", H])],
        {"scale": vec(), "bias": vec()},
        attrs={"axis": -1},
        outputs=["y", "mean", "inv_std"],
        domain="",
    ),
    Case(
        "layer_norm_opset16_axis2",
        "LayerNormalization",
        ["x", "scale"],
        [("x", F, ["b", "s", 2, 4])],
        {"scale": np.ones((2, 4), np.float32)},
        attrs={"axis": 2},
        outputs=["y", "mean", "inv_std"],
        domain="",
    ),
]

# CUDA-only kernels: the documented shapes (ContribOperators.md).
CUDA_CASES = [
    Case(
        "group_norm",
        "GroupNorm",
        ["x", "gamma", "beta"],
        [("x", F16, ["b", "h", "w", 32])],
        {"gamma": np.ones(32, np.float32), "beta": np.zeros(32, np.float32)},
        attrs={"groups": 4, "activation": 1},
        expect=[(F16, ["b", "h", "w", "32"])],
    ),
    Case(
        "skip_group_norm",
        "SkipGroupNorm",
        ["x", "gamma", "beta", "skip"],
        [("x", F16, ["b", "h", "w", 32]), ("skip", F16, ["b", 1, 1, 32])],
        {"gamma": np.ones(32, np.float32), "beta": np.zeros(32, np.float32)},
        attrs={"groups": 4, "activation": 0},
        outputs=["y", "sum"],
        expect=[(F16, ["b", "h", "w", "32"]), (F16, ["b", "h", "w", "32"])],
    ),
    # onnx-shape-inference accepts these two under com.microsoft too; onnxruntime loads only the
    # default-domain form, so there is nothing to run.
    Case(
        "layer_norm_ms_domain",
        "LayerNormalization",
        ["x", "scale"],
        [("x", F16, ["b", "s", H])],
        {"scale": vec().astype("float16")},
        outputs=["y", "mean", "inv_std"],
        expect=[(F16, ["b", "s", str(H)]), (F, ["b", "s", "1"]), (F, ["b", "s", "1"])],
    ),
    Case(
        "simplified_ln_ms_domain",
        "SimplifiedLayerNormalization",
        ["x", "scale"],
        [("x", F16, ["b", "s", H])],
        {"scale": vec().astype("float16")},
        attrs={"axis": 1},
        outputs=["y", "inv_std"],
        expect=[(F16, ["b", "s", str(H)]), (F, ["b", "1", "1"])],
    ),
]


def test_cpu_kernels_match_onnxruntime() -> None:
    assert check_against_onnxruntime(CPU_CASES) == 2 * 23


def test_layer_norm_before_opset_17_matches_onnxruntime() -> None:
    assert check_against_onnxruntime(OPSET16_CASES, default_opset=16) == 2 * 6


def test_cuda_only_ops_follow_documented_shapes() -> None:
    assert check_against_formula(CUDA_CASES) == 8


def test_embed_layer_norm_mask_index_is_int32_whatever_ids_type():
    """mask_index is T1, which allows only int32: it is int32 also when input_ids is declared
    float (a model onnxruntime refuses), as onnxruntime's symbolic shape inference writes it
    (it was written in input_ids' type, float)."""
    import onnx
    from onnx import TensorProto, helper

    from shapeinfer.api import infer

    word = helper.make_tensor("word", TensorProto.FLOAT, [20, H], [1.0] * (20 * H))
    pos = helper.make_tensor("pos", TensorProto.FLOAT, [16, H], [1.0] * (16 * H))
    gamma = helper.make_tensor("gamma", TensorProto.FLOAT, [H], [1.0] * H)
    beta = helper.make_tensor("beta", TensorProto.FLOAT, [H], [1.0] * H)
    node = helper.make_node(
        "EmbedLayerNormalization",
        ["ids", "", "word", "pos", "", "gamma", "beta"],
        ["y", "mask_index"],
        domain="com.microsoft",
    )
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["b", "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [word, pos, gamma, beta],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    f = infer(m).facts["mask_index"]
    assert f.dtype == TensorProto.INT32 and [str(d) for d in f.shape] == ["b"]
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    ort = SymbolicShapeInference.infer_shapes(onnx.ModelProto.FromString(m.SerializeToString()))
    vi = next(v for v in ort.graph.value_info if v.name == "mask_index")
    assert vi.type.tensor_type.elem_type == TensorProto.INT32
