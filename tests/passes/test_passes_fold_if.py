"""fold-if and `optimize --bind` on control flow: what is written loads in onnxruntime and computes
the original's outputs at the binding; decidable Ifs are gone, names stay unique."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from support.builders import F32, I64, _model, runtime_guard_model

from shapeinfer.passes import optimize_with_report
from testkit import ort_oracle

pytest.importorskip("onnxruntime")


def _squeeze_guard(x: str, prefix: str) -> tuple[list, str]:
    """PyTorch's export of ``x.squeeze(0)`` on a dynamic dim: If(Equal(Gather(Shape(x), 0), 1))."""
    p = prefix
    then = h.make_graph(
        [h.make_node("Squeeze", [x, p + "axes"], [p + "sq"])],
        p + "then",
        [],
        [h.make_tensor_value_info(p + "sq", F32, None)],
        [h.make_tensor(p + "axes", I64, [1], [0])],
    )
    other = h.make_graph(
        [h.make_node("Identity", [x], [p + "id"])], p + "else", [], [h.make_tensor_value_info(p + "id", F32, None)]
    )
    nodes = [
        h.make_node("Shape", [x], [p + "shape"]),
        h.make_node("Gather", [p + "shape", p + "zero"], [p + "dim0"], axis=0),
        h.make_node("Equal", [p + "dim0", p + "one"], [p + "cond"]),
        h.make_node("If", [p + "cond"], [p + "out"], then_branch=then, else_branch=other),
    ]
    return nodes, p + "out"


def _consts(prefix: str) -> list:
    return [h.make_tensor(prefix + "zero", I64, [], [0]), h.make_tensor(prefix + "one", I64, [], [1])]


def squeeze_guard_model() -> onnx.ModelProto:
    nodes, out = _squeeze_guard("x", "")
    nodes.append(h.make_node("Mul", [out, "two"], ["y"]))
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F32, ["batch", 4])],
        [h.make_tensor_value_info("y", F32, None), h.make_tensor_value_info("out", F32, None)],
        _consts("") + [h.make_tensor("two", F32, [], [2.0])],
    )


def _ops(g: onnx.GraphProto) -> list[str]:
    out = []
    for n in g.node:
        out.append(n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out += _ops(a.g)
    return out


def _check_bound(model: onnx.ModelProto, binding: dict) -> onnx.ModelProto:
    """optimize --bind: valid, loads in onnxruntime, same outputs as the original there."""
    out, _ = optimize_with_report(model, bind=binding)
    onnx.checker.check_model(out, full_check=True)
    ort_oracle.assert_same_outputs(model, out, ort_oracle.feeds(model, binding))
    return out


@pytest.mark.parametrize("batch", [2, 1])
def test_if_guarded_squeeze_bound_loads_and_matches_with_no_if_left(batch):
    m = squeeze_guard_model()
    out = _check_bound(m, {"batch": batch})
    assert "If" not in _ops(out.graph)
    assert [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim] == [batch, 4]
    rank = 1 if batch == 1 else 2
    assert len(next(o for o in out.graph.output if o.name == "out").type.tensor_type.shape.dim) == rank


def test_if_guarded_squeeze_unbound_keeps_the_if():
    m = squeeze_guard_model()
    out, _ = optimize_with_report(m)
    assert "If" in _ops(out.graph)
    for batch in (1, 3):
        ort_oracle.assert_same_outputs(m, out, ort_oracle.feeds(m, {"batch": batch}))


def nested_model() -> onnx.ModelProto:
    """An outer squeeze guard whose then-branch holds another guard; both branches define ``t``."""
    inner_nodes, inner_out = _squeeze_guard("x", "in_")
    then = h.make_graph(
        [*inner_nodes, h.make_node("Neg", [inner_out], ["t"])],
        "outer_then",
        [],
        [h.make_tensor_value_info("t", F32, None)],
        _consts("in_"),
    )
    other = h.make_graph(
        [h.make_node("Abs", ["x"], ["t"])], "outer_else", [], [h.make_tensor_value_info("t", F32, None)]
    )
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "one"], ["d1"], axis=0),
        h.make_node("Equal", ["d1", "four"], ["c"]),  # x is [batch, 4]: always true
        h.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other),
        h.make_node("Identity", ["x"], ["t_outer"]),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F32, ["batch", 4])],
        [h.make_tensor_value_info("r", F32, None), h.make_tensor_value_info("t_outer", F32, None)],
        [h.make_tensor("one", I64, [], [1]), h.make_tensor("four", I64, [], [4])],
    )


@pytest.mark.parametrize("batch", [1, 3])
def test_nested_ifs_fold_with_unique_names(batch):
    out = _check_bound(nested_model(), {"batch": batch})
    assert "If" not in _ops(out.graph)
    names = [o for n in out.graph.node for o in n.output]
    assert len(names) == len(set(names))


def test_nested_if_folds_without_bind_when_the_condition_is_static():
    # The outer condition reads a static dim: no binding needed; the inner one stays.
    out, _ = optimize_with_report(nested_model())
    ops = _ops(out.graph)
    assert ops.count("If") == 1
    for batch in (1, 2):
        ort_oracle.assert_same_outputs(nested_model(), out, ort_oracle.feeds(out, {"batch": batch}))


def loop_model(trip_zero: bool) -> onnx.ModelProto:
    """A Loop whose body squeezes behind the guard and adds; trip count batch-1 or batch*0."""
    guard, g_out = _squeeze_guard("x", "b_")
    body = h.make_graph(
        [
            *guard,
            h.make_node("ReduceSum", [g_out], ["b_sum"], keepdims=0),
            h.make_node("Add", ["acc", "b_sum"], ["acc_out"]),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", I64, []),
            h.make_tensor_value_info("cond_in", TP.BOOL, []),
            h.make_tensor_value_info("acc", F32, []),
        ],
        [h.make_tensor_value_info("cond_out", TP.BOOL, []), h.make_tensor_value_info("acc_out", F32, [])],
        _consts("b_"),
    )
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        h.make_node("Mul" if trip_zero else "Sub", ["n", "k"], ["trip"]),
        h.make_node("Loop", ["trip", "", "acc0"], ["acc_final"], body=body),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F32, ["batch", 4])],
        [h.make_tensor_value_info("acc_final", F32, [])],
        [
            h.make_tensor("zero", I64, [], [0]),
            h.make_tensor("k", I64, [], [0 if trip_zero else 1]),
            h.make_tensor("acc0", F32, [], [0.5]),
        ],
    )


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_loop_body_guard_folds_under_bind(batch):
    out = _check_bound(loop_model(trip_zero=False), {"batch": batch})
    assert "If" not in _ops(out.graph)


def test_loop_that_never_runs_is_removed():
    m = loop_model(trip_zero=True)
    out = _check_bound(m, {"batch": 2})
    assert "Loop" not in _ops(out.graph)
    out2, rep = optimize_with_report(m)  # batch*0 is 0 for any batch: no binding needed
    assert "Loop" not in _ops(out2.graph)
    assert any(p.changes.get("Loop nodes that never run removed") for p in rep.passes)


def scan_model() -> onnx.ModelProto:
    """A Scan over x's rows whose body squeezes the outer x behind the guard."""
    guard, g_out = _squeeze_guard("x", "s_")
    body = h.make_graph(
        [
            *guard,
            h.make_node("ReduceSum", [g_out], ["s_sum"], keepdims=0),
            h.make_node("ReduceSum", ["row"], ["r_sum"], keepdims=0),
            h.make_node("Add", ["state", "s_sum"], ["st1"]),
            h.make_node("Add", ["st1", "r_sum"], ["state_out"]),
            h.make_node("Identity", ["state_out"], ["scan_out"]),
        ],
        "scan_body",
        [h.make_tensor_value_info("state", F32, []), h.make_tensor_value_info("row", F32, [4])],
        [h.make_tensor_value_info("state_out", F32, []), h.make_tensor_value_info("scan_out", F32, [])],
        _consts("s_"),
    )
    nodes = [h.make_node("Scan", ["st0", "x"], ["st_final", "per_row"], body=body, num_scan_inputs=1)]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F32, ["batch", 4])],
        [h.make_tensor_value_info("st_final", F32, []), h.make_tensor_value_info("per_row", F32, ["batch"])],
        [h.make_tensor("st0", F32, [], [0.0])],
    )


@pytest.mark.parametrize("batch", [1, 2])
def test_scan_body_guard_folds_under_bind(batch):
    out = _check_bound(scan_model(), {"batch": batch})
    assert "If" not in _ops(out.graph)


@pytest.mark.parametrize("batch", [2, 1])
def test_bind_keeps_an_input_symbolic_where_an_undecided_branch_is_invalid_at_the_binding(batch):
    # batch=2: the then-branch's Squeeze is invalid at 2 and the condition is a runtime value, so
    # the If stays; x's declared dims must stay or onnxruntime refuses the whole model at load.
    m = runtime_guard_model()
    out, rep = optimize_with_report(m, bind={"batch": batch})
    onnx.checker.check_model(out, full_check=True)
    x = np.random.default_rng(0).standard_normal((batch, 3)).astype(np.float32)
    flags = [0.0] if batch == 2 else [0.0, 1.0]  # flag 1 at batch 2 fails in the original too
    for flag in flags:
        ort_oracle.assert_same_outputs(m, out, {"x": x, "flag": np.array([flag], np.float32)})
    dims = out.graph.input[0].type.tensor_type.shape.dim
    if batch == 2:
        assert dims[0].dim_param == "batch" and len(rep.notes) == 1 and "graph input x" in rep.notes[0]
    else:
        assert dims[0].dim_value == 1 and rep.notes == []
    assert [d.dim_value for d in out.graph.input[1].type.tensor_type.shape.dim] == [1]  # flag untouched
