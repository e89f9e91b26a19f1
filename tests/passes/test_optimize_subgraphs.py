"""The passes inside If branches, Loop and Scan bodies (issue 23): onnxruntime is the oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from shapeinfer import optimize
from shapeinfer.passes import optimize_with_report
from shapeinfer.passes._subgraphs import count_subgraph_nodes

ort = pytest.importorskip("onnxruntime")

MERGED = Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx"


def _run(m: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def _same(a: onnx.ModelProto, b: onnx.ModelProto, feeds: dict, exact: bool = True) -> None:
    for x, y in zip(_run(a, feeds), _run(b, feeds), strict=True):
        assert x.shape == y.shape
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def _checked(m: onnx.ModelProto) -> onnx.ModelProto:
    onnx.checker.check_model(m, full_check=True)
    return m


def _model(nodes, inputs, outputs, opset: int = 17) -> onnx.ModelProto:
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs), opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    return _checked(m)


def _vi(name: str, dtype: int, rank: int) -> onnx.ValueInfoProto:
    """A value of known rank (the checker wants a shape) with open dims."""
    return h.make_tensor_value_info(name, dtype, [f"{name}_{k}" for k in range(rank)])


def _ints(name: str, values) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", TP.INT64, [len(values)], values))


# ---------------------------------------------------------------------- optimum's merged decoder


def _decoder_feeds(m: onnx.ModelProto, cache: bool, batch: int = 2) -> dict:
    """One decoding step as optimum runs it: the mask covers the cached and the new tokens."""
    rng = np.random.default_rng(1)
    seq, past = (1, 3) if cache else (4, 1)
    feeds = {}
    for vi in m.graph.input:
        name = vi.name
        if name == "use_cache_branch":
            feeds[name] = np.array([cache])
        elif name == "input_ids":
            feeds[name] = rng.integers(4, 64, size=(batch, seq), dtype=np.int64)
        elif name == "attention_mask":
            feeds[name] = np.ones((batch, past + seq if cache else seq), dtype=np.int64)
        elif name == "position_ids":
            start = past if cache else 0
            feeds[name] = np.tile(np.arange(start, start + seq, dtype=np.int64), (batch, 1))
        else:  # past_key_values.*: [batch, heads, past, head_dim]
            dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            feeds[name] = rng.standard_normal((batch, dims[1], past, dims[3])).astype(np.float32)
    return feeds


def test_merged_decoder_branches_are_optimized_and_compute_the_same():
    original = onnx.load(str(MERGED))
    before = count_subgraph_nodes(original.graph)
    out, report = optimize_with_report(str(MERGED))
    _checked(out)
    after = count_subgraph_nodes(out.graph)
    assert (report.subgraph_nodes_before, report.subgraph_nodes_after) == (before, after)
    assert after < before * 0.4  # unmerged, each decoder loses about 75% of its nodes
    assert [vi.name for vi in out.graph.input] == [vi.name for vi in original.graph.input]
    assert [vi.name for vi in out.graph.output] == [vi.name for vi in original.graph.output]
    for cache in (False, True):
        _same(original, out, _decoder_feeds(original, cache), exact=False)
    # a second run changes nothing more
    assert count_subgraph_nodes(optimize(out).graph) == after


def test_declared_equalities_between_inputs_are_not_used_in_a_branch():
    """Like a merged decoder: ``mask`` is declared [b, s] as ``ids`` is, but the else branch is
    run with a longer mask. Its Expand to the mask's dims swapped, [l, b], needs l from a shape
    at run time: from the mask's, never from ``ids``' (whose declared dim is the same symbol)."""
    then_g = h.make_graph([h.make_node("Cast", ["ids"], ["t"], to=TP.FLOAT)], "then", [], [_vi("t", TP.FLOAT, 2)])
    else_g = h.make_graph(
        [
            h.make_node("Cast", ["ids"], ["idf"], to=TP.FLOAT),
            h.make_node("ReduceSum", ["idf"], ["ids_sum"], keepdims=0),
            h.make_node("Shape", ["mask"], ["ms"]),
            _ints("e0", [0]),
            _ints("e1", [1]),
            _ints("e2", [2]),
            h.make_node("Slice", ["ms", "e0", "e1"], ["mb"]),
            h.make_node("Slice", ["ms", "e1", "e2"], ["ml"]),
            h.make_node("Concat", ["ml", "mb"], ["target"], axis=0),
            h.make_node("Constant", [], ["one"], value=h.make_tensor("one_v", TP.FLOAT, [1, 1], [1.0])),
            h.make_node("Expand", ["one", "target"], ["r"]),
            h.make_node("ReduceSum", ["r", "e0"], ["rs"], keepdims=1),
            h.make_node("Add", ["rs", "ids_sum"], ["e"]),
        ],
        "else",
        [],
        [_vi("e", TP.FLOAT, 2)],
    )
    m = _model(
        [h.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
        [
            h.make_tensor_value_info("flag", TP.BOOL, []),
            h.make_tensor_value_info("ids", TP.INT64, ["b", "s"]),
            h.make_tensor_value_info("mask", TP.INT64, ["b", "s"]),
        ],
        [_vi("y", TP.FLOAT, 2)],
    )
    out, report = optimize_with_report(m)
    _checked(out)
    assert report.subgraph_nodes_after < report.subgraph_nodes_before
    ids = np.arange(6, dtype=np.int64).reshape(2, 3)
    for mask_len in (3, 5):  # as declared, and as a merged decoder's cache branch is run
        feeds = {"flag": np.array(False), "ids": ids, "mask": np.arange(2 * mask_len, dtype=np.int64).reshape(2, -1)}
        _same(m, out, feeds)
    _same(m, out, {"flag": np.array(True), "ids": ids, "mask": ids})


# ---------------------------------------------------------------------- Loop and Scan bodies


def _growing_loop() -> onnx.ModelProto:
    """A Loop whose carried ``y`` grows by one row per iteration; the body reshapes it through a
    target computed from its own shape and an outer tensor's, and a Reshape that does nothing."""
    body = h.make_graph(
        [
            h.make_node("Shape", ["y_in"], ["ys"]),
            _ints("c0", [0]),
            _ints("c1", [1]),
            h.make_node("Slice", ["ys", "c0", "c1"], ["rows"]),
            h.make_node("Shape", ["x"], ["xs"]),
            h.make_node("Slice", ["xs", "c1", "c0"], ["cols"], name="slice_to_0"),  # empty: [] (end 0)
            _ints("c2", [2]),
            h.make_node("Slice", ["xs", "c1", "c2"], ["xcols"]),
            h.make_node("Concat", ["rows", "xcols", "cols"], ["target"], axis=0),
            h.make_node("Reshape", ["y_in", "target"], ["y_same"]),
            h.make_node("Reshape", ["y_same", "ys"], ["y_same2"]),
            h.make_node("Slice", ["x", "c0", "c1"], ["row"]),
            h.make_node("Concat", ["y_same2", "row"], ["y_out"], axis=0),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
        ],
        "body",
        [
            h.make_tensor_value_info("i", TP.INT64, []),
            h.make_tensor_value_info("cond_in", TP.BOOL, []),
            _vi("y_in", TP.FLOAT, 2),
        ],
        [
            h.make_tensor_value_info("cond_out", TP.BOOL, []),
            _vi("y_out", TP.FLOAT, 2),
            _vi("total", TP.FLOAT, 0),
        ],
    )
    return _model(
        [h.make_node("Loop", ["trips", "", "x"], ["y", "totals"], body=body)],
        [h.make_tensor_value_info("trips", TP.INT64, []), h.make_tensor_value_info("x", TP.FLOAT, ["n", 4])],
        [_vi("y", TP.FLOAT, 2), _vi("totals", TP.FLOAT, 1)],
    )


def test_loop_body_is_optimized_and_valid_at_every_iteration():
    m = _growing_loop()
    out, report = optimize_with_report(m)
    _checked(out)
    assert report.subgraph_nodes_after < report.subgraph_nodes_before
    body = out.graph.node[-1].attribute[0].g
    assert [vi.name for vi in body.input] == ["i", "cond_in", "y_in"]
    assert [vi.name for vi in body.output] == ["cond_out", "y_out", "total"]
    assert "x" in {i for n in body.node for i in n.input}  # the outer name is still read, not copied
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for trips in (0, 1, 4):
        _same(m, out, {"trips": np.array(trips), "x": x})


def test_scan_body_is_optimized():
    body = h.make_graph(
        [
            h.make_node("Shape", ["xi"], ["s"]),
            h.make_node("Reshape", ["xi", "s"], ["xr"]),
            h.make_node("Add", ["acc_in", "xr"], ["acc_out"]),
            h.make_node("Identity", ["acc_out"], ["each"]),
        ],
        "scan_body",
        [h.make_tensor_value_info("acc_in", TP.FLOAT, [4]), h.make_tensor_value_info("xi", TP.FLOAT, [4])],
        [h.make_tensor_value_info("acc_out", TP.FLOAT, [4]), h.make_tensor_value_info("each", TP.FLOAT, [4])],
    )
    m = _model(
        [h.make_node("Scan", ["init", "xs"], ["final", "steps"], body=body, num_scan_inputs=1)],
        [h.make_tensor_value_info("init", TP.FLOAT, [4]), h.make_tensor_value_info("xs", TP.FLOAT, ["t", 4])],
        [h.make_tensor_value_info("final", TP.FLOAT, [4]), h.make_tensor_value_info("steps", TP.FLOAT, ["t", 4])],
    )
    out, report = optimize_with_report(m)
    _checked(out)
    ops = [n.op_type for n in out.graph.node[0].attribute[0].g.node]
    assert "Reshape" not in ops and "Shape" not in ops
    assert (report.subgraph_nodes_before, report.subgraph_nodes_after) == (4, len(ops))
    feeds = {"init": np.ones(4, np.float32), "xs": np.arange(20, dtype=np.float32).reshape(5, 4)}
    _same(m, out, feeds)


def test_if_nested_in_a_loop_body_is_optimized_with_the_body_facts():
    """The inner If's branch reshapes the carried value through a target made of its shape: the
    branch is optimized with the body's facts (the carried value's rank) and stays valid."""
    then_g = h.make_graph(
        [
            h.make_node("Shape", ["y_in"], ["s"]),
            h.make_node("Reshape", ["y_in", "s"], ["t"]),
            h.make_node("Neg", ["t"], ["tn"]),
        ],
        "then",
        [],
        [_vi("tn", TP.FLOAT, 2)],
    )
    else_g = h.make_graph([h.make_node("Identity", ["y_in"], ["e"])], "else", [], [_vi("e", TP.FLOAT, 2)])
    body = h.make_graph(
        [
            _ints("two", [2]),
            h.make_node("Cast", ["i"], ["i1"], to=TP.INT64),
            h.make_node("Mod", ["i1", "two"], ["odd"]),
            h.make_node("Cast", ["odd"], ["oddb"], to=TP.BOOL),
            h.make_node("Squeeze", ["oddb"], ["c"]),
            h.make_node("If", ["c"], ["y_out"], then_branch=then_g, else_branch=else_g),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", TP.INT64, []),
            h.make_tensor_value_info("cond_in", TP.BOOL, []),
            h.make_tensor_value_info("y_in", TP.FLOAT, ["n", 3]),
        ],
        [h.make_tensor_value_info("cond_out", TP.BOOL, []), h.make_tensor_value_info("y_out", TP.FLOAT, ["n", 3])],
    )
    m = _model(
        [h.make_node("Loop", ["trips", "", "x"], ["y"], body=body)],
        [h.make_tensor_value_info("trips", TP.INT64, []), h.make_tensor_value_info("x", TP.FLOAT, ["n", 3])],
        [h.make_tensor_value_info("y", TP.FLOAT, ["n", 3])],
    )
    out, report = optimize_with_report(m)
    _checked(out)
    assert report.subgraph_nodes_after <= report.subgraph_nodes_before - 2
    inner = next(n for n in out.graph.node[0].attribute[0].g.node if n.op_type == "If")
    then_ops = [n.op_type for n in next(a.g for a in inner.attribute if a.name == "then_branch").node]
    assert then_ops == ["Neg"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for trips in (0, 1, 3):
        _same(m, out, {"trips": np.array(trips), "x": x})


def test_an_input_with_a_default_is_not_a_constant_inside_a_branch():
    """``k`` is a graph input with an initializer (a default the caller may override): a branch
    reading it must not fold its value into the Reshape target."""
    then_g = h.make_graph(
        [
            _ints("m1", [-1]),
            h.make_node("Concat", ["k", "m1"], ["target"], axis=0),
            h.make_node("Reshape", ["x", "target"], ["t"]),
        ],
        "then",
        [],
        [_vi("t", TP.FLOAT, 2)],
    )
    else_g = h.make_graph(
        [_ints("shape", [1, -1]), h.make_node("Reshape", ["x", "shape"], ["e"])], "else", [], [_vi("e", TP.FLOAT, 2)]
    )
    m = h.make_model(
        h.make_graph(
            [h.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
            "g",
            [
                h.make_tensor_value_info("flag", TP.BOOL, []),
                h.make_tensor_value_info("x", TP.FLOAT, [12]),
                h.make_tensor_value_info("k", TP.INT64, [1]),
            ],
            [_vi("y", TP.FLOAT, 2)],
            [onnx.numpy_helper.from_array(np.array([2], np.int64), "k")],
        ),
        opset_imports=[h.make_opsetid("", 17)],
        ir_version=8,
    )
    _checked(m)
    out = _checked(optimize(m))
    x = np.arange(12, dtype=np.float32)
    for k in (2, 3, 4):
        _same(m, out, {"flag": np.array(True), "x": x, "k": np.array([k], np.int64)})
    _same(m, out, {"flag": np.array(True), "x": x})  # the default
