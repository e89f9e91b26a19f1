"""Small models several test folders build (a guarded model, a model whose guard fails
at run time)."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from onnx import TensorProto as TP
from onnx import helper as h


def small_guarded_model() -> onnx.ModelProto:
    """x[N] -> Reshape(-1, 4) needs N % 4 == 0; Add(a[P], b[Q]) is inferred as [P]: Q == P."""
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "t"], ["y"]), helper.make_node("Add", ["a", "b"], ["c"])],
        "guarded",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"]),
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["P"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["Q"]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, None),
        ],
        [helper.make_tensor("t", TensorProto.INT64, [2], [-1, 4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


F32, I64 = TP.FLOAT, TP.INT64


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def runtime_guard_model() -> onnx.ModelProto:
    """An If on a runtime value (not a shape) whose then-branch squeezes x's batch axis."""
    then = h.make_graph(
        [h.make_node("Squeeze", ["x", "axes"], ["sq"]), h.make_node("Unsqueeze", ["sq", "axes"], ["t_out"])],
        "then",
        [],
        [h.make_tensor_value_info("t_out", F32, None)],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["e_out"])], "else", [], [h.make_tensor_value_info("e_out", F32, None)]
    )
    nodes = [
        h.make_node("ReduceSum", ["flag"], ["fs"], keepdims=0),
        h.make_node("Greater", ["fs", "fzero"], ["cond"]),
        h.make_node("If", ["cond"], ["y0"], then_branch=then, else_branch=other),
        h.make_node("Relu", ["y0"], ["y"]),
        h.make_node("Shape", ["y"], ["ys"]),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F32, ["batch", 3]), h.make_tensor_value_info("flag", F32, [1])],
        [h.make_tensor_value_info("y", F32, ["batch", 3]), h.make_tensor_value_info("ys", I64, [2])],
        [h.make_tensor("axes", I64, [1], [0]), h.make_tensor("fzero", F32, [], [0.0])],
    )


def gqa_with_mask(window: int, sliding: int):
    """GroupQueryAttention fed as onnxruntime-genai feeds it: seqlens_k = sum(mask) - 1 and
    total_sequence_length = the mask's width T, over a past of length P."""
    import numpy as np
    from onnx import numpy_helper

    F, MS = TensorProto.FLOAT, "com.microsoft"
    n, nkv, h = 4, 2, 8
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Shape", ["mask"], ["ms"]),
        helper.make_node("Gather", ["ms", "one"], ["t64"], axis=0),
        helper.make_node("Cast", ["t64"], ["tl"], to=TensorProto.INT32),
        helper.make_node("ReduceSum", ["mask", "axes"], ["sum"], keepdims=0),
        helper.make_node("Sub", ["sum", "one"], ["sl64"]),
        helper.make_node("Cast", ["sl64"], ["sl"], to=TensorProto.INT32),
        helper.make_node(
            "GroupQueryAttention",
            ["q", "k", "v", "pk", "pv", "sl", "tl"],
            ["o", "ppk", "ppv"],
            domain=MS,
            num_heads=n,
            kv_num_heads=nkv,
            local_window_size=window,
            sliding_window_cache=sliding,
        ),
    ]
    ins = [
        vi("q", F, ["B", "S", n * h]),
        vi("k", F, ["B", "S", nkv * h]),
        vi("v", F, ["B", "S", nkv * h]),
        vi("pk", F, ["B", nkv, "P", h]),
        vi("pv", F, ["B", nkv, "P", h]),
        vi("mask", TensorProto.INT64, ["B", "T"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
    ]
    g = helper.make_graph(nodes, "g", ins, [vi(x, F, None) for x in ("o", "ppk", "ppv")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])

    def feeds(b: int, p: int, s: int, t: int) -> dict:
        z = np.zeros
        return {
            "q": z((b, s, n * h), np.float32),
            "k": z((b, s, nkv * h), np.float32),
            "v": z((b, s, nkv * h), np.float32),
            "pk": z((b, nkv, p, h), np.float32),
            "pv": z((b, nkv, p, h), np.float32),
            "mask": np.ones((b, t), np.int64),
        }

    return m, feeds
