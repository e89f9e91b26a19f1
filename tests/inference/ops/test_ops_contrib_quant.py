"""Native rules of the com.microsoft quantized ops and the com.microsoft.nchwc ops on symbolic input
dims, checked against onnxruntime's CPU kernels at two bindings: every inferred dim must evaluate
to the actual one and every output type must be onnxruntime's. Dims listed as ``open`` are the
only ones allowed to stay unknown (they depend on the machine that optimized the model)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.op_oracle import Runtime, inferred

import shapeinfer
from shapeinfer.inference import op_registry as registry
from shapeinfer.symbolic import dims as D

F, F16, I64, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.INT32
U8, I8, INT4, B = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT4, TensorProto.BOOL
MS, NCHWC = "com.microsoft", "com.microsoft.nchwc"

BINDINGS = [{"a": 2, "b": 3, "n": 2, "s": 5, "h": 9, "w": 7, "p": 3, "t": 4},
            {"a": 3, "b": 5, "n": 1, "s": 2, "h": 12, "w": 10, "p": 1, "t": 6}]  # fmt: skip


def f32(*shape) -> np.ndarray:
    return np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)


def u8(*shape) -> np.ndarray:
    return np.random.default_rng(sum(shape)).integers(0, 255, shape).astype(np.uint8)


def s8(*shape) -> np.ndarray:
    return np.random.default_rng(sum(shape)).integers(-127, 127, shape).astype(np.int8)


def sc(v: float = 0.05) -> np.ndarray:
    return np.array(v, np.float32)


def int4(name: str, *shape) -> onnx.TensorProto:
    n = int(np.prod(shape))
    return helper.make_tensor(name, INT4, list(shape), [(i % 15) - 7 for i in range(n)])


class Case(NamedTuple):
    id: str
    op: str
    domain: str
    node_inputs: list  # names; "" omits an optional input
    inputs: list  # graph inputs (name, elem_type, dims)
    consts: dict  # name -> numpy array or TensorProto
    attrs: dict
    outputs: int = 1
    open: frozenset = frozenset()  # (output, axis) left unknown on purpose


QA = {"as": sc(), "az": np.array(128, np.uint8), "bs": sc(0.02), "bz": np.array(3, np.uint8)}
QS = {"as": sc(), "az": np.array(128, np.uint8), "ys": sc(0.1), "yz": np.array(120, np.uint8)}

CASES = [
    Case("matmul_nbits", "MatMulNBits", MS, ["x", "w", "ws"], [("x", F, ["a", "s", 64])],
         {"w": u8(16, 2, 16), "ws": f32(16, 2)}, dict(K=64, N=16, bits=4, block_size=32)),
    Case("matmul_nbits_2d_bias", "MatMulNBits", MS, ["x", "w", "ws", "", "", "bias"], [("x", F, ["s", 32])],
         {"w": u8(8, 1, 32), "ws": f32(8, 1), "bias": f32(8)}, dict(K=32, N=8, bits=8, block_size=32)),
    Case("gbq_int4", "GatherBlockQuantized", MS, ["d", "i", "ds"], [("i", I64, ["a", "s"])],
         {"d": int4("d", 10, 64), "ds": f32(10, 2)}, dict(block_size=32, gather_axis=0, quantize_axis=1)),
    Case("gbq_uint8_packed", "GatherBlockQuantized", MS, ["d", "i", "ds"], [("i", I32, ["a", "s"])],
         {"d": u8(10, 32), "ds": f32(10, 2)}, dict(block_size=32, bits=4)),
    Case("gbq_uint8_bits8", "GatherBlockQuantized", MS, ["d", "i", "ds", "dz"], [("i", I64, ["s"])],
         {"d": u8(10, 64), "ds": f32(10, 2), "dz": u8(10, 2)}, dict(block_size=32, bits=8)),
    Case("gbq_axis1", "GatherBlockQuantized", MS, ["d", "i", "ds"], [("i", I64, ["b"])],
         {"d": int4("d", 4, 6, 64), "ds": f32(4, 6, 2)}, dict(block_size=32, gather_axis=1, quantize_axis=2)),
    Case("matmul_integer_to_float", "MatMulIntegerToFloat", MS, ["x", "w", "as", "bs", "az", "bz"],
         [("x", U8, ["a", "s", 8])], {"w": u8(8, 4), **QA}, {}),
    Case("dynamic_quantize_matmul", "DynamicQuantizeMatMul", MS, ["x", "w", "bs", "bz"], [("x", F, ["a", "s", 8])],
         {"w": s8(8, 4), "bs": sc(), "bz": np.array(0, np.int8)}, {}),
    Case("matmul_integer16", "MatMulInteger16", MS, ["x", "w"], [("x", TensorProto.INT16, ["a", "s", 8])],
         {"w": np.arange(32, dtype=np.int16).reshape(8, 4)}, {}),
    Case("qgemm_float", "QGemm", MS, ["x", "as", "az", "w", "bs", "bz"], [("x", U8, ["s", 8])],
         {"w": u8(4, 8), **QA}, dict(transB=1)),
    Case("qgemm_quantized", "QGemm", MS, ["x", "as", "az", "w", "bs", "bz", "", "ys", "yz"], [("x", U8, [8, "s"])],
         {"w": u8(8, 4), **QA, "ys": sc(0.3), "yz": np.array(7, np.uint8)}, dict(transA=1)),
    Case("ms_quantize_linear", "QuantizeLinear", MS, ["x", "ys", "yz"], [("x", F, ["a", "b"])],
         {"ys": sc(), "yz": np.array(-3, np.int8)}, {}),
    Case("ms_quantize_linear_no_zero_point", "QuantizeLinear", MS, ["x", "ys"], [("x", F, ["a", "b"])],
         {"ys": sc()}, {}),
    Case("ms_dequantize_linear", "DequantizeLinear", MS, ["x", "xs", "xz"], [("x", U8, ["a", "b"])],
         {"xs": sc(), "xz": np.array(3, np.uint8)}, {}),
    Case("ms_dequantize_linear_fp16", "DequantizeLinear", MS, ["x", "xs"], [("x", I8, ["a", 3])],
         {"xs": np.array(0.5, np.float16)}, {}),
    Case("qlinear_add", "QLinearAdd", MS, ["x", "as", "az", "y", "as", "az", "ys", "yz"],
         [("x", U8, ["a", 1, "t"]), ("y", U8, ["b", 1])], QS, {}),
    Case("qlinear_mul", "QLinearMul", MS, ["x", "as", "az", "y", "as", "az", "ys", "yz"],
         [("x", U8, ["a", "b"]), ("y", U8, ["b"])], QS, {}),
    Case("qlinear_sigmoid", "QLinearSigmoid", MS, ["x", "as", "az", "ys", "yz"], [("x", U8, ["a", "b"])], QS, {}),
    Case("qlinear_leaky_relu", "QLinearLeakyRelu", MS, ["x", "as", "az", "ys", "yz"], [("x", U8, ["a", 3, "b"])],
         QS, dict(alpha=0.1)),
    Case("qlinear_softmax", "QLinearSoftmax", MS, ["x", "as", "az", "ys", "yz"], [("x", U8, ["a", "b"])],
         QS, dict(opset=13, axis=-1)),
    Case("qlinear_where", "QLinearWhere", MS, ["c", "x", "as", "az", "y", "as", "az", "ys", "yz"],
         [("c", B, ["a", 1]), ("x", U8, [1, "b"]), ("y", U8, ["a", "b"])], QS, {}),
    Case("qlinear_concat", "QLinearConcat", MS, ["ys", "yz", "x", "as", "az", "y", "as", "az"],
         [("x", U8, ["a", 2]), ("y", U8, ["a", "b"])], QS, dict(axis=1)),
    Case("qlinear_conv", "QLinearConv", MS, ["x", "as", "az", "w", "as", "wz", "ys", "yz", "bias"],
         [("x", U8, ["n", 3, "h", "w"])], {**QS, "w": u8(4, 3, 3, 3), "wz": np.array(5, np.uint8),
                                            "bias": np.zeros(4, np.int32)}, dict(pads=[1, 0, 1, 0], strides=[2, 1])),
    Case("qlinear_conv_nhwc", "QLinearConv", MS, ["x", "as", "az", "w", "as", "wz", "ys", "yz"],
         [("x", U8, ["n", "h", "w", 3])], {**QS, "w": u8(4, 3, 3, 2), "wz": np.array(5, np.uint8)},
         dict(channels_last=1, strides=[2, 2], dilations=[1, 2])),
    Case("qlinear_average_pool", "QLinearAveragePool", MS, ["x", "as", "az", "ys", "yz"],
         [("x", U8, ["n", 3, "h", "w"])], QS, dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    Case("qlinear_average_pool_nhwc", "QLinearAveragePool", MS, ["x", "as", "az", "ys", "yz"],
         [("x", U8, ["n", "h", "w", 3])], QS, dict(kernel_shape=[2, 2], pads=[1, 1, 0, 0], channels_last=1)),
    Case("qlinear_global_average_pool", "QLinearGlobalAveragePool", MS, ["x", "as", "az", "ys", "yz"],
         [("x", U8, ["n", 3, "h", "w"])], QS, {}),
    Case("qlinear_global_average_pool_nhwc", "QLinearGlobalAveragePool", MS, ["x", "as", "az", "ys", "yz"],
         [("x", U8, ["n", "h", "w", 3])], QS, dict(channels_last=1)),
    Case("dynamic_quantize_lstm", "DynamicQuantizeLSTM", MS,
         ["x", "w", "r", "", "", "", "", "", "ws", "wz", "ws", "wz"], [("x", F, ["s", "b", 3])],
         {"w": s8(2, 3, 16), "r": s8(2, 4, 16), "ws": np.full(2, 0.05, np.float32), "wz": np.zeros(2, np.int8)},
         dict(hidden_size=4, direction="bidirectional"), outputs=3),
    Case("qattention", "QAttention", MS, ["x", "w", "bias", "as", "bs", "", "az", "bz"], [("x", U8, ["b", "s", 8])],
         {"w": u8(8, 24), "bias": f32(24), **QA}, dict(num_heads=2), outputs=2),
    Case("qattention_past", "QAttention", MS, ["x", "w", "bias", "as", "bs", "", "az", "bz", "past"],
         [("x", U8, ["b", "s", 8]), ("past", F, [2, "b", 2, "p", 4])], {"w": u8(8, 24), "bias": f32(24), **QA},
         dict(num_heads=2, unidirectional=1), outputs=2),
    Case("qembed_layer_norm", "QEmbedLayerNormalization", MS,
         ["ids", "seg", "we", "pe", "se", "g", "be", "mask", "s1", "s1", "s1", "s1", "s1", "z", "z", "z", "z", "z"],
         [("ids", I32, ["b", "s"]), ("seg", I32, ["b", "s"]), ("mask", I32, ["b", "s"])],
         {"we": u8(30, 8), "pe": u8(40, 8), "se": u8(2, 8), "g": u8(8), "be": u8(8), "s1": sc(0.01),
          "z": np.array(128, np.uint8)}, {}, outputs=2),
    Case("qmoe", "QMoE", MS, ["x", "rp", "w1", "s1", "", "w2", "s2"], [("x", F, ["t", 8]), ("rp", F, ["t", 4])],
         {"w1": u8(4, 16, 4), "s1": f32(4, 16), "w2": u8(4, 8, 8), "s2": f32(4, 8)},
         dict(k=2, expert_weight_bits=4, activation_type="relu")),
    # com.microsoft.nchwc (blocked layout: channels padded to the machine's block size)
    Case("reorder_input", "ReorderInput", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {}, {}),
    Case("reorder_input_pad", "ReorderInput", NCHWC, ["x"], [("x", F, ["n", 12, "h", "w"])], {}, {}),
    Case("reorder_input_open", "ReorderInput", NCHWC, ["x"], [("x", F, ["n", 4, "h", "w"])], {}, {},
         open=frozenset({(0, 1)})),
    Case("reorder_input_nhwc", "ReorderInput", NCHWC, ["x"], [("x", F, ["n", "h", "w", 16])], {},
         dict(channels_last=1)),
    Case("reorder_output", "ReorderOutput", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {}, dict(channels=12)),
    Case("reorder_output_nhwc", "ReorderOutput", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {},
         dict(channels=12, channels_last=1)),
    Case("nchwc_conv", "Conv", NCHWC, ["x", "w", "bias"], [("x", F, ["n", 16, "h", "w"])],
         {"w": f32(32, 16, 3, 3), "bias": f32(32)}, dict(pads=[1, 1, 0, 0], strides=[2, 1], activation="Relu")),
    Case("nchwc_conv_nchw_input", "Conv", NCHWC, ["x", "w"], [("x", F, ["n", 3, "h", "w"])],
         {"w": f32(16, 3, 2, 2)}, dict(strides=[2, 2], dilations=[1, 2])),
    Case("nchwc_max_pool", "MaxPool", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {},
         dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    Case("nchwc_average_pool", "AveragePool", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {},
         dict(kernel_shape=[2, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    Case("nchwc_global_max_pool", "GlobalMaxPool", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {}, {}),
    Case("nchwc_global_average_pool", "GlobalAveragePool", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {}, {}),
    Case("nchwc_upsample", "Upsample", NCHWC, ["x"], [("x", F, ["n", 16, "h", "w"])], {}, dict(scales=[1, 1, 2, 3])),
]  # fmt: skip


# Ops onnxruntime has no CPU kernel for (or, for ReduceSumInteger, no output type it can infer):
# checked against the documented formulas instead, each with the output types and dims (``D.parse``
# text over the case's symbols) that onnxruntime's contrib op documentation gives.
DOC_CASES = [
    (Case("mul_integer", "MulInteger", MS, ["x", "az", "y", "az"], [("x", U8, ["a", 1]), ("y", U8, ["b"])], QA, {}),
     [(I32, ["a", "b"])]),
    (Case("qlinear_reduce_mean", "QLinearReduceMean", MS, ["x", "as", "az", "ys", "yz"],
          [("x", U8, ["a", "b", 4])], QS, dict(axes=[1], keepdims=1)), [(U8, ["a", 1, 4])]),
    (Case("qlinear_reduce_mean_drop", "QLinearReduceMean", MS, ["x", "as", "az", "ys", "yz"],
          [("x", U8, ["a", "b", 4])], QS, dict(axes=[0, -1], keepdims=0)), [(U8, ["b"])]),
    (Case("reduce_sum_integer", "ReduceSumInteger", MS, ["x"], [("x", I8, ["a", "b", 4])], {},
          dict(axes=[2], keepdims=0)), [(I32, ["a", "b"])]),
    (Case("reduce_sum_integer_u8", "ReduceSumInteger", MS, ["x"], [("x", U8, ["a", "b", 4])], {},
          dict(axes=[0], keepdims=1)), [(TensorProto.UINT32, [1, "b", 4])]),
    (Case("matmul_fp4", "MatMulBlockQuantizedFp4Weight", MS, ["x", "w", "ws", "g"], [("x", F16, ["a", "s", 64])],
          {"w": u8(16, 32), "ws": u8(16, 2), "g": sc(1.0)}, dict(block_size=32)), [(F16, ["a", "s", 16])]),
    (Case("matmul_fp8", "MatMulBlockQuantizedFp8Weight", MS, ["x", "w", "ws"], [("x", TensorProto.BFLOAT16, ["s", 64])],
          {"w": helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [16, 64], [0.0] * 1024), "ws": f32(16, 2)},
          dict(block_size=32)), [(TensorProto.BFLOAT16, ["s", 16])]),
    (Case("quantize_with_order", "QuantizeWithOrder", MS, ["x", "s1"], [("x", F16, ["a", "s", 8])], {"s1": sc()},
          dict(order_input=1, order_output=1)), [(I8, ["a", "s", 8])]),
    (Case("dequantize_with_order", "DequantizeWithOrder", MS, ["x", "s1"], [("x", I8, ["a", "s", 8])], {"s1": sc()},
          dict(order_input=1, order_output=1, to=F16)), [(F16, ["a", "s", 8])]),
    (Case("qordered_matmul", "QOrderedMatMul", MS, ["x", "s1", "w", "s1", "s1"], [("x", I8, ["a", "s", 8])],
          {"s1": sc(), "w": s8(8, 4)}, dict(order_A=1, order_B=1, order_Y=1)), [(I8, ["a", "s", 4])]),
    (Case("qordered_gelu", "QOrderedGelu", MS, ["x", "s1", "s1"], [("x", I8, ["a", "s", 8])], {"s1": sc()}, {}),
     [(I8, ["a", "s", 8])]),
    (Case("qordered_layer_norm", "QOrderedLayerNormalization", MS, ["x", "s1", "g", "", "s1"],
          [("x", I8, ["a", "s", 8])], {"s1": sc(), "g": f32(8)}, {}), [(I8, ["a", "s", 8])]),
    (Case("qordered_attention", "QOrderedAttention", MS,
          ["x", "s1", "s1", "s1", "s1", "qw", "qw", "vw", "s1", "s1", "s1", "b", "b", "b", "", "", "s1"],
          [("x", I8, ["a", "s", 8])], {"s1": sc(), "qw": s8(8, 6), "vw": s8(8, 6), "b": f32(6)},
          dict(num_heads=2, order_input=1, order_weight=0, order_output=1)), [(I8, ["a", "s", 6])]),
]  # fmt: skip


def _model(c: Case) -> onnx.ModelProto:
    outs = [f"y{i}" for i in range(c.outputs)]
    node = helper.make_node(c.op, c.node_inputs, outs, domain=c.domain, **c.attrs)
    inits = [v if isinstance(v, onnx.TensorProto) else numpy_helper.from_array(np.asarray(v), k)
             for k, v in c.consts.items() if k in c.node_inputs]  # fmt: skip
    graph = helper.make_graph(
        [node],
        c.id,
        [helper.make_tensor_value_info(n, t, d) for n, t, d in c.inputs],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        inits,
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid(c.domain, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _feed(dtype: int, dims: list, binding: dict, rng) -> np.ndarray:
    shape = [binding[d] if isinstance(d, str) else d for d in dims]
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    if dtype in (I64, I32):
        return np.zeros(shape, np_type)  # valid indices / ids everywhere
    if dtype == B:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in (U8, I8):
        return rng.integers(0, 100, shape).astype(np_type)
    return rng.standard_normal(shape).astype(np_type)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_contrib_rule_matches_onnxruntime(case: Case) -> None:
    model = _model(case)
    rt = Runtime(model)
    result = shapeinfer.infer(model)
    assert not [d for d in result.diagnostics if d.code == "G007"]
    dtypes = [result.facts[f"y{i}"].dtype for i in range(case.outputs)]
    rng = np.random.default_rng(0)
    for binding in BINDINGS:
        outs = rt.run({n: _feed(t, d, binding, rng) for n, t, d in case.inputs})
        assert outs is not None, binding
        got = inferred(model, binding)
        for k, (want, dims) in enumerate(zip(outs, got)):
            assert dtypes[k] == helper.np_dtype_to_tensor_dtype(want.dtype), (k, dtypes[k], want.dtype)
            assert dims is not None and len(dims) == want.ndim, (k, dims, want.shape)
            for axis, (d, w) in enumerate(zip(dims, want.shape)):
                if d is None:
                    assert (k, axis) in case.open, (k, axis, "left open", want.shape)
                else:
                    assert d == w, (k, dims, want.shape, binding)


@pytest.mark.parametrize("case,want", DOC_CASES, ids=[c.id for c, _ in DOC_CASES])
def test_contrib_rule_without_cpu_kernel_matches_documented_formula(case: Case, want: list) -> None:
    model = _model(case)  # onnxruntime cannot run it on CPU (so the documented formula is the oracle)
    with pytest.raises(Exception, match=r"NOT_IMPLEMENTED|type inference failed|Could not find"):
        Runtime(model).sess.run(None, {})
    result = shapeinfer.infer(model)
    assert not [d for d in result.diagnostics if d.code in ("G007", "E001")]
    for binding in BINDINGS:
        got = inferred(model, binding)
        for k, (dtype, dims) in enumerate(want):
            assert result.facts[f"y{k}"].dtype == dtype, (k, result.facts[f"y{k}"].dtype)
            expect = tuple(d if type(d) is int else D.evaluate(D.parse(d), binding) for d in dims)
            assert got[k] == expect, (k, got[k], expect, binding)


def test_contrib_rules_dispatch_on_domain() -> None:
    """A com.microsoft rule never answers for an ai.onnx node of the same name, nor the reverse."""
    for op in ("QuantizeLinear", "DequantizeLinear", "QLinearConv"):
        assert registry.lookup(MS, op, 1) is not registry.lookup("", op, 21)
    for op in ("Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
        assert registry.lookup(NCHWC, op, 1) is not None
    for op in ("ReorderInput", "ReorderOutput", "MatMulNBits", "QAttention"):
        assert registry.lookup("", op, 21) is None
    assert registry.lookup(NCHWC, "Upsample", 1) is not registry.lookup("", "Upsample", 9)
