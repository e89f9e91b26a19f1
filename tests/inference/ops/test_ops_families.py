"""Native rules of every op family on symbolic input dims, checked against onnxruntime's actual output
shapes at two bindings: every dim we infer must evaluate to the real one, and the dims listed
as ``open`` are the only ones allowed to stay unknown (they depend on input values)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from support.op_oracle import Runtime, inferred, one_node_ordered

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
s64 = lambda v: np.array(v, np.int64)  # noqa: E731  (a scalar)

# (id, op, node inputs, graph inputs, constants, attributes, opset, outputs, bindings, open dims)
CASES = [
    ("topk", "TopK", ["x", "k"], [("x", F, ["a", "b"])], {"k": i64(2)}, dict(axis=0), 13, 2, None, set()),
    (
        "onehot",
        "OneHot",
        ["i", "d", "v"],
        [("i", I64, ["a"])],
        {"d": i64(5), "v": np.array([0, 1], np.float32)},
        dict(axis=0),
        13,
        1,
        None,
        set(),
    ),
    (
        "einsum_mm",
        "Einsum",
        ["x", "y"],
        [("x", F, ["a", "b"]), ("y", F, ["b", "c"])],
        {},
        dict(equation="ij,jk->ik"),
        13,
        1,
        None,
        set(),
    ),
    (
        "einsum_implicit",
        "Einsum",
        ["x", "y"],
        [("x", F, ["a", "b", "c"]), ("y", F, ["a", "c", "d"])],
        {},
        dict(equation="bij,bjk"),
        13,
        1,
        None,
        set(),
    ),
    (
        "einsum_ellipsis",
        "Einsum",
        ["x"],
        [("x", F, ["a", "b", "c", "c"])],
        {},
        dict(equation="...ii->...i"),
        13,
        1,
        None,
        set(),
    ),
    ("einsum_trace", "Einsum", ["x"], [("x", F, ["a", "a"])], {}, dict(equation="ii"), 13, 1, {"a": 3}, set()),
    ("nonzero", "NonZero", ["x"], [], {"x": i64(0, 3, 0, 4, 5)}, {}, 13, 1, None, set()),
    ("nonzero_open", "NonZero", ["x"], [("x", F, ["a", "b"])], {}, {}, 13, 1, None, {(0, 1)}),
    (
        "compress",
        "Compress",
        ["x", "c"],
        [("x", F, ["a", 4])],
        {"c": np.array([1, 0, 1, 1], bool)},
        dict(axis=1),
        13,
        1,
        None,
        set(),
    ),
    ("unique", "Unique", ["x"], [], {"x": i64(3, 1, 3, 2, 1)}, {}, 13, 4, None, set()),
    (
        "depth_to_space",
        "DepthToSpace",
        ["x"],
        [("x", F, ["a", 8, "b", "c"])],
        {},
        dict(blocksize=2),
        13,
        1,
        None,
        set(),
    ),
    (
        "space_to_depth",
        "SpaceToDepth",
        ["x"],
        [("x", F, ["a", 3, "h", "w"])],
        {},
        dict(blocksize=2),
        13,
        1,
        {"a": 2, "h": 4, "w": 6},
        set(),
    ),
    (
        "lstm",
        "LSTM",
        ["x", "w", "r"],
        [("x", F, ["s", "b", 3])],
        {"w": np.zeros((2, 16, 3), np.float32), "r": np.zeros((2, 16, 4), np.float32)},
        dict(hidden_size=4, direction="bidirectional"),
        13,
        3,
        None,
        set(),
    ),
    (
        "gru",
        "GRU",
        ["x", "w", "r"],
        [("x", F, ["s", "b", 3])],
        {"w": np.zeros((1, 15, 3), np.float32), "r": np.zeros((1, 15, 5), np.float32)},
        dict(hidden_size=5),
        13,
        2,
        None,
        set(),
    ),
    (
        "rnn",
        "RNN",
        ["x", "w", "r"],
        [("x", F, ["s", "b", 3])],
        {"w": np.zeros((1, 6, 3), np.float32), "r": np.zeros((1, 6, 6), np.float32)},
        dict(hidden_size=6),
        13,
        2,
        None,
        set(),
    ),
    (
        "gemm",
        "Gemm",
        ["a", "b"],
        [("a", F, ["k", "m"]), ("b", F, ["n", "k"])],
        {},
        dict(transA=1, transB=1),
        13,
        1,
        None,
        set(),
    ),
    ("matmul_1d", "MatMul", ["a", "b"], [("a", F, ["k"]), ("b", F, ["c", "k", "n"])], {}, {}, 13, 1, None, set()),
    (
        "reduce_axes_input",
        "ReduceSum",
        ["x", "ax"],
        [("x", F, ["a", "b", "c"])],
        {"ax": i64(-1, 0)},
        dict(keepdims=0),
        13,
        1,
        None,
        set(),
    ),
    (
        "reduce_noop",
        "ReduceMax",
        ["x", "ax"],
        [("x", F, ["a", "b"])],
        {"ax": np.zeros(0, np.int64)},
        dict(noop_with_empty_axes=1),
        18,
        1,
        None,
        set(),
    ),
    ("argmax", "ArgMax", ["x"], [("x", F, ["a", "b", "c"])], {}, dict(axis=1, keepdims=0), 13, 1, None, set()),
    (
        "gather_nd",
        "GatherND",
        ["x", "i"],
        [("x", F, ["a", 3, "c"])],
        {"i": i64(0, 2, 1, 1).reshape(2, 2)},
        {},
        13,
        1,
        None,
        set(),
    ),
    ("split18", "Split", ["x"], [("x", F, ["a", 7])], {}, dict(axis=1, num_outputs=3), 18, 3, None, set()),
    ("tile", "Tile", ["x", "r"], [("x", F, ["a", "b"])], {"r": i64(2, 3)}, {}, 13, 1, None, set()),
    ("expand", "Expand", ["x", "s"], [("x", F, ["a", 1])], {"s": i64(3, 1, 5)}, {}, 13, 1, None, set()),
    (
        "layer_norm",
        "LayerNormalization",
        ["x", "g"],
        [("x", F, ["a", "b", 4])],
        {"g": np.ones(4, np.float32)},
        dict(axis=1),
        17,
        3,
        None,
        set(),
    ),
    ("dropout_mask", "Dropout", ["x"], [("x", F, ["a", "b"])], {}, {}, 13, 2, None, set()),
    (
        "quantize",
        "QuantizeLinear",
        ["x", "s", "z"],
        [("x", F, ["a", "b"])],
        {"s": np.array(0.1, np.float32), "z": np.array(3, np.int8)},
        {},
        13,
        1,
        None,
        set(),
    ),
    ("dyn_quantize", "DynamicQuantizeLinear", ["x"], [("x", F, ["a", "b"])], {}, {}, 13, 3, None, set()),
    ("trilu", "Trilu", ["x"], [("x", F, ["a", "b"])], {}, {}, 14, 1, None, set()),
    ("cumsum", "CumSum", ["x", "ax"], [("x", F, ["a", "b"])], {"ax": i64(1)}, {}, 14, 1, None, set()),
    ("eyelike", "EyeLike", ["x"], [("x", F, ["a", "b"])], {}, {}, 13, 1, None, set()),
    ("det", "Det", ["x"], [("x", F, ["a", "b", "b"])], {}, {}, 13, 1, None, set()),
    (
        "nll",
        "NegativeLogLikelihoodLoss",
        ["x", "t"],
        [("x", F, ["n", "c", "d"])],
        {"t": i64(0, 1, 0).reshape(1, 3)},
        dict(reduction="none"),
        13,
        1,
        {"n": 1, "c": 2, "d": 3},
        set(),
    ),
    (
        "sce",
        "SoftmaxCrossEntropyLoss",
        ["x", "t"],
        [("x", F, ["n", "c"])],
        {"t": i64(0, 1)},
        {},
        13,
        2,
        {"n": 2, "c": 3},
        set(),
    ),
    ("dft", "DFT", ["x", "n"], [("x", F, ["a", "b", 1])], {"n": s64(8)}, dict(onesided=1), 17, 1, None, set()),
    (
        "stft",
        "STFT",
        ["x", "step", "w"],
        [("x", F, ["a", "l", 1])],
        {"step": s64(3), "w": np.ones(8, np.float32)},
        {},
        17,
        1,
        {"a": 2, "l": 20},
        set(),
    ),
    ("hann", "HannWindow", ["n"], [], {"n": s64(10)}, {}, 17, 1, None, set()),
    (
        "grid_sample",
        "GridSample",
        ["x", "g"],
        [("x", F, ["n", "c", "h", "w"]), ("g", F, ["n", "p", "q", 2])],
        {},
        {},
        16,
        1,
        None,
        set(),
    ),
    ("affine_grid", "AffineGrid", ["t", "s"], [("t", F, [2, 2, 3])], {"s": i64(2, 3, 5, 7)}, {}, 20, 1, None, set()),
    (
        "center_crop_pad",
        "CenterCropPad",
        ["x", "s"],
        [("x", F, ["a", "b", 3])],
        {"s": i64(4, 6)},
        dict(axes=[0, 1]),
        18,
        1,
        None,
        set(),
    ),
    (
        "col2im",
        "Col2Im",
        ["x", "im", "bl"],
        [("x", F, ["n", 8, 6])],
        {"im": i64(3, 4), "bl": i64(2, 2)},
        {},
        18,
        1,
        None,
        set(),
    ),
    (
        "max_unpool",
        "MaxUnpool",
        ["x", "i"],
        [("x", F, [1, 1, 2, 2])],
        {"i": i64(0, 3, 8, 10).reshape(1, 1, 2, 2)},
        dict(kernel_shape=[2, 2], strides=[2, 2]),
        11,
        1,
        None,
        set(),
    ),
    (
        "roi_align",
        "RoiAlign",
        ["x", "r", "b"],
        [("x", F, ["n", "c", 8, 8])],
        {"r": np.array([[0, 0, 3, 3], [1, 1, 4, 4], [2, 2, 5, 5]], np.float32), "b": i64(0, 0, 0)},
        dict(output_height=2, output_width=3),
        16,
        1,
        {"n": 1, "c": 2},
        set(),
    ),
    ("global_pool", "GlobalAveragePool", ["x"], [("x", F, ["n", "c", "h", "w"])], {}, {}, 13, 1, None, set()),
    (
        "batchnorm_train",
        "BatchNormalization",
        ["x", "s", "bb", "m", "v"],
        [("x", F, ["n", 3, "h"])],
        {k: np.ones(3, np.float32) for k in ("s", "bb", "m", "v")},
        dict(training_mode=1),
        15,
        3,
        None,
        set(),
    ),
    (
        "where",
        "Where",
        ["c", "x", "y"],
        [("c", B, ["a", 1]), ("x", F, [1, "b"]), ("y", F, ["a", "b"])],
        {},
        {},
        13,
        1,
        None,
        set(),
    ),
    (
        "attention_4d_past",
        "Attention",
        ["q", "k", "v", "", "pk", "pv"],
        [
            ("q", F, ["b", 6, "s", 8]),
            ("k", F, ["b", 3, "t", 8]),
            ("v", F, ["b", 3, "t", 5]),
            ("pk", F, ["b", 3, "p", 8]),
            ("pv", F, ["b", 3, "p", 5]),
        ],
        {},
        {},
        23,
        4,
        None,
        set(),
    ),
    (
        "attention_3d",
        "Attention",
        ["q", "k", "v"],
        [("q", F, ["b", "s", 24]), ("k", F, ["b", "t", 12]), ("v", F, ["b", "t", 15])],
        {},
        dict(q_num_heads=6, kv_num_heads=3),
        23,
        1,
        None,
        set(),
    ),
    (
        "rotary",
        "RotaryEmbedding",
        ["x", "cos", "sin", "pos"],
        [("x", F, ["b", 2, "s", 8])],
        {"cos": np.ones((16, 4), np.float32), "sin": np.ones((16, 4), np.float32), "pos": i64(0, 1, 2).reshape(1, 3)},
        {},
        23,
        1,
        {"b": 1, "s": 3},
        set(),
    ),
    ("mean", "Mean", ["x", "y"], [("x", F, ["a", 1]), ("y", F, ["b"])], {}, {}, 13, 1, None, set()),
]

BINDINGS = [{"a": 2, "b": 3, "c": 4, "d": 5, "k": 3, "m": 4, "n": 2, "s": 5, "l": 17, "h": 6, "w": 5, "p": 3,
             "q": 4, "t": 7}, {"a": 5, "b": 2, "c": 3, "d": 4, "k": 6, "m": 2, "n": 3, "s": 2, "l": 23, "h": 4,
                               "w": 8, "p": 2, "q": 5, "t": 3}]  # fmt: skip


def _feed(name: str, dtype: int, dims: list, binding: dict, rng) -> np.ndarray:
    shape = [d if isinstance(d, int) else binding[d] for d in dims]
    if dtype == F:
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == B:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 2, shape).astype(np.int64)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_symbolic_dims_match_onnxruntime(case) -> None:
    _, op, node_inputs, inputs, consts, attrs, opset, n_out, only, open_dims = case
    ir = 10 if opset >= 22 else 9
    model = one_node_ordered(op, node_inputs, inputs, consts, attrs, opset=opset, outputs=n_out, ir_version=ir)
    rt = Runtime(model)
    rng = np.random.default_rng(0)
    for binding in [only] if only else BINDINGS:
        outs = rt.run({n: _feed(n, t, d, binding, rng) for n, t, d in inputs})
        assert outs is not None, binding
        got = inferred(model, binding)
        for k, (want, dims) in enumerate(zip(outs, got)):
            assert dims is not None, (k, "rank left open")
            assert len(dims) == want.ndim, (k, dims, want.shape)
            for axis, (d, w) in enumerate(zip(dims, want.shape)):
                if d is None:
                    assert (k, axis) in open_dims, (k, axis, "left open", want.shape)
                else:
                    assert d == w, (k, dims, want.shape, binding)


def _batch_norm_model(x_dims, stat_dims, opset: int, outputs: int, **attrs):
    from onnx import helper

    node = helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"][:outputs], **attrs
    )
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)]
    scale_dims = attrs.pop("scale_dims", stat_dims)  # scale and B (None: no shape)
    inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, scale_dims) for k in "sb"]
    inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, stat_dims) for k in "mv"]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ["y", "rm", "rv", "sm", "sv"][:outputs]]
    graph = helper.make_graph([node], "g", inputs, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def test_batch_norm_statistics_take_c_from_the_statistics_when_x_has_no_shape() -> None:
    """X, scale and B without a shape: the running statistics are (C,) from input_mean/var,
    each (C,) by the spec (onnx's test_batch_norm_train_no_shape); onnxruntime gives (3,) for C = 3."""
    import onnxruntime as ort

    from shapeinfer.inference.engine import infer

    m = _batch_norm_model(None, ["C"], 15, 3, training_mode=1, scale_dims=None)
    facts = infer(m).facts
    assert [str(d) for d in facts["rm"].shape] == ["C"] and [str(d) for d in facts["rv"].shape] == ["C"]
    feeds = {"x": np.ones((2, 3, 4), np.float32), **{k: np.ones(3, np.float32) for k in "sbmv"}}
    got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert [o.shape for o in got[1:]] == [(3,), (3,)]


def test_batch_norm_7_per_activation_statistics_have_the_mean_shape() -> None:
    """BatchNormalization-7 with spatial=0 keeps statistics per activation: its mean/var
    outputs have input_mean's shape (C, D1, ..., Dn), not (C,) (the rule said (C,) before).
    onnxruntime refuses training-mode non-spatial BN, so the spec is the oracle."""
    from shapeinfer.inference.engine import infer

    facts = infer(_batch_norm_model([2, 3, 4], [3, 4], 7, 5, spatial=0)).facts
    assert {k: facts[k].shape for k in ("rm", "rv", "sm", "sv")} == {k: (3, 4) for k in ("rm", "rv", "sm", "sv")}
    facts = infer(_batch_norm_model([2, 3, 4], [3], 7, 5)).facts  # spatial (the default): (C,)
    assert facts["rm"].shape == (3,)


def test_roi_align_takes_num_rois_from_batch_indices_when_rois_has_no_shape() -> None:
    """num_rois is rois' dim 0 and batch_indices' (onnx's test_roialign_num_rois): with rois'
    shape unknown (a Reshape to a runtime shape) and batch_indices of 3, the output has 3 rows,
    as onnxruntime gives; rows that differ (3 and 2) are G002 and onnxruntime refuses the run."""
    import onnxruntime as ort
    from onnx import helper

    from shapeinfer.inference.engine import infer

    def model(n_idx: int, rois: str = "r"):
        ins = [
            helper.make_tensor_value_info("x", F, ["n", "c", 8, 8]),
            helper.make_tensor_value_info("r0", F, [3, 4]),
            helper.make_tensor_value_info("to", I64, [2]),
            helper.make_tensor_value_info("b", I64, [n_idx]),
        ]
        nodes = [
            helper.make_node("Reshape", ["r0", "to"], ["r"]),
            helper.make_node("RoiAlign", ["x", rois, "b"], ["y"], output_height=2, output_width=3),
        ]
        g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", F, None)])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)

    m = model(3)
    res = infer(m)
    assert res.facts["r"].shape is not None and res.facts["y"].shape[0] == 3
    feeds = {
        "x": np.ones((1, 2, 8, 8), np.float32),
        "r0": np.array([[0, 0, 3, 3], [1, 1, 4, 4], [2, 2, 5, 5]], np.float32),
        "to": i64(3, 4),
        "b": i64(0, 0, 0),
    }
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, feeds)[0].shape == (3, 2, 2, 3)
    bad = model(2, rois="r0")
    assert any(d.code == "G002" for d in infer(bad).diagnostics)
    with pytest.raises(Exception, match="RoiAlign"):  # the oracle refuses 3 rois with 2 batch indices
        sess = ort.InferenceSession(bad.SerializeToString(), providers=["CPUExecutionProvider"])
        sess.run(None, {**feeds, "b": i64(0, 0)})


def _linear_attention(q, k, v, past, **attrs):
    from onnx import helper

    ins, names = [], []
    for name, dims in (("Q", q), ("K", k), ("V", v), ("past_state", past)):
        if dims is False:
            names.append("")
            continue
        names.append(name)
        ins.append(helper.make_tensor_value_info(name, F, dims))
    node = helper.make_node("LinearAttention", names, ["output", "present_state"], **attrs)
    outs = [helper.make_tensor_value_info(o, F, None) for o in ("output", "present_state")]
    g = helper.make_graph([node], "g", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 27)])


@pytest.mark.parametrize(
    ("q", "k", "v", "past", "output", "state"),
    [
        # Q/K/V without shapes: B, dk, dv from past_state (onnx's test_linear_attention_unknown_qkv_with_past_state)
        (None, None, None, [2, 4, 16, 16], [2, None, 64], [2, 4, 16, 16]),
        # past_state gives dv where V has no shape; T from Q
        (["b", "t", 64], ["b", "t", 64], None, ["b", 4, 16, 8], ["b", "t", 32], ["b", 4, 16, 8]),
        # no past_state: everything from Q/K/V
        (["b", "t", 64], ["b", "t", 64], ["b", "t", 32], False, ["b", "t", 32], ["b", 4, 16, 8]),
    ],
)
def test_linear_attention_reads_every_input_onnx_reads(q, k, v, past, output, state) -> None:
    """LinearAttention (opset 27, which onnxruntime 1.32 does not run): onnx's own inference is
    the oracle, and shapeinfer knows at least what it knows. past_state was ignored before."""
    import onnx

    from shapeinfer.inference.engine import infer

    m = _linear_attention(q, k, v, past, q_num_heads=4, kv_num_heads=4, update_rule="linear")
    facts = infer(m).facts
    ours = {o: [d if type(d) is int else str(d) for d in facts[o].shape] for o in ("output", "present_state")}
    theirs = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    for vi, want in zip(theirs.graph.output, (output, state)):
        dims = vi.type.tensor_type.shape.dim
        onnx_dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in dims]
        mine = ours[vi.name]
        assert len(mine) == len(want)
        for a, b, w in zip(mine, onnx_dims, want):
            if w is not None:
                assert a == w and (b is None or b == w), (vi.name, mine, onnx_dims)


def test_linear_attention_rejects_inputs_of_the_wrong_rank() -> None:
    from shapeinfer.inference.engine import infer

    res = infer(_linear_attention([1, 64], None, None, False, q_num_heads=4, kv_num_heads=4))
    assert any(d.code == "E050" and "query must be 3-D" in d.message for d in res.diagnostics)
    assert res.facts.get("present_state") is None or res.facts["present_state"].shape is None
