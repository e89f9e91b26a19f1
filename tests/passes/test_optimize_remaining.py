"""optimize says what stays dynamic and why (issue 23): each Shape/Size node, runtime-computed
shape input and kept all-constant node with its reason, in the text report and --json."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.common import model_path

from shapeinfer.cli.main import main
from shapeinfer.passes import optimize_with_report

pytest.importorskip("onnxruntime")


def _nonzero_model() -> onnx.ModelProto:
    """x[batch, seq] -> NonZero -> Transpose -> Shape -> ConstantOfShape: a data-dependent size."""
    nodes = [
        h.make_node("NonZero", ["x"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0]),
        h.make_node("Shape", ["nzt"], ["s"]),
        h.make_node("ConstantOfShape", ["s"], ["y"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_a_data_dependent_shape_is_named_with_the_op_that_makes_it():
    _, report = optimize_with_report(_nonzero_model(), bind={"batch": 2, "seq": 3})
    left = report.remaining
    assert not left.fully_static and left.open_symbols == []
    kinds = {(i.kind, i.op): i for i in left.items}
    for key in [("shape_node", "Shape"), ("shape_input", "ConstantOfShape")]:
        item = kinds[key]
        assert item.reason == "data_dependent" and item.symbols == []
        assert [o["op"] for o in item.origin] == ["NonZero"]
        assert "no --bind removes it" in item.text


def test_an_open_symbol_is_named_with_the_bind_that_removes_it():
    _, report = optimize_with_report(str(model_path("bert_ts")), bind={"batch": 1})
    left = report.remaining
    assert not left.fully_static and left.open_symbols == ["seq"]
    assert left.items and all(i.reason == "open_symbols" and i.symbols == ["seq"] for i in left.items)
    assert all("--bind seq=N removes it" in i.text for i in left.items)
    # and binding it leaves nothing dynamic
    out, report = optimize_with_report(str(model_path("bert_ts")), bind={"batch": 1, "seq": 9})
    assert report.remaining.fully_static and report.remaining.items == []
    assert not any(n.op_type in ("Shape", "Size") for n in out.graph.node)


def _expanded_constant(n: int) -> onnx.ModelProto:
    """An Expand of two initializers to [n, n], read by a MatMul (an Add would broadcast the
    scalar itself, and remove-expand removes the Expand): fold-constants folds it when small."""
    nodes = [h.make_node("Expand", ["one", "shape"], ["mask"]), h.make_node("MatMul", ["x", "mask"], ["y"])]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [n, n])],
        [h.make_tensor_value_info("y", T.FLOAT, [n, n])],
        [
            numpy_helper.from_array(np.array(1.0, np.float32), "one"),
            numpy_helper.from_array(np.array([n, n], np.int64), "shape"),
        ],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_a_capped_constant_node_is_listed_with_the_flag(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_expanded_constant(256), str(src))
    r = CliRunner().invoke(main, ["optimize", str(src), "--json"])
    assert r.exit_code == 0, r.output
    left = json.loads(r.stdout)["remaining"]
    assert left["fully_static"] and left["counts"] == {"shape_node": 0, "shape_input": 0, "constant_node": 1}
    (item,) = left["items"]
    assert item["kind"] == "constant_node" and item["op"] == "Expand" and item["reason"] == "size_cap"
    assert "--max-fold-growth" in item["text"]
    r = CliRunner().invoke(main, ["optimize", str(src)])
    assert "fully static" in r.stdout and "1 all-constant node kept" in r.stdout


def test_text_report_groups_open_symbols_and_lists_other_reasons(tmp_path):
    src = tmp_path / "nz.onnx"
    onnx.save(_nonzero_model(), str(src))
    r = CliRunner().invoke(main, ["optimize", str(src)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    summary = next(x for x in lines if x.startswith("stays dynamic:"))
    assert "1 Shape/Size node" in summary and "1 runtime-computed shape input" in summary
    assert sum("from NonZero" in x for x in lines) == 3  # the two items and the sizes' line
    assert any(
        x.startswith("  tensor shapes depend on sizes known only at run time (unk_0 from NonZero") for x in lines
    )


def test_every_shipped_model_reports_what_stays_with_o(tmp_path):
    # (node labels were once keyed by the id of protobuf wrappers, which -o's run recycles)
    for name in ("bert_ts", "vit_dynamo"):
        r = CliRunner().invoke(main, ["optimize", str(model_path(name)), "-o", str(tmp_path / "o.onnx"), "--json"])
        assert r.exit_code == 0, r.output
        left = json.loads(r.stdout)["remaining"]
        assert left["counts"]["shape_node"] >= 1 and all(i["reason"] == "open_symbols" for i in left["items"])


def test_declared_types_kept_by_the_load_check_are_not_fully_static(tmp_path):
    from support.builders import runtime_guard_model

    src = tmp_path / "in.onnx"
    onnx.save(runtime_guard_model(), str(src))
    r = CliRunner().invoke(main, ["optimize", str(src), "--bind", "batch=2", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["notes"] and doc["remaining"]["declared_types_kept"] and not doc["remaining"]["fully_static"]
    r = CliRunner().invoke(main, ["optimize", str(src), "--bind", "batch=2"])
    assert "declared types kept" in r.stdout and "fully static" not in r.stdout


def _if_model() -> onnx.ModelProto:
    """An If on a runtime condition whose branches compute x's shape: y = Expand(1, Shape(x))."""

    def branch(name: str) -> onnx.GraphProto:
        nodes = [
            h.make_node("Shape", ["x"], [f"{name}_s"]),
            h.make_node("ConstantOfShape", [f"{name}_s"], [f"{name}_y"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
        ]
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"{name}_y", T.FLOAT, None)])

    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=branch("then"), else_branch=branch("else"))],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_subgraphs_are_reported_with_the_node_holding_them():
    _, report = optimize_with_report(_if_model(), bind={"batch": 2})
    left = report.remaining
    assert not left.fully_static
    sub = [i for i in left.items if i.graph]
    assert {(i.kind, i.op) for i in sub} == {("shape_node", "Shape"), ("shape_input", "ConstantOfShape")}
    assert all(i.graph.startswith("If '#0'.") and i.reason == "open_symbols" and i.symbols == ["seq"] for i in sub)
    assert all(i.text.startswith("If '#0'.") for i in sub)
    _, report = optimize_with_report(_if_model(), bind={"batch": 2, "seq": 3})
    left = report.remaining
    assert left.fully_static  # each branch's output stays a ConstantOfShape of a constant, as it must
    assert {(i.kind, i.op, i.reason) for i in left.items} == {("constant_node", "ConstantOfShape", "kept")}
    assert all("output of its graph" in i.text for i in left.items)


def test_sizes_chosen_at_run_time_are_named_with_their_node():
    """An If on a runtime condition whose branches give different dims: its output's dim is
    known only at run time, whatever the binding (optimum's merged decoders' present.*)."""
    then = h.make_graph(
        [h.make_node("Identity", ["a"], ["ta"])], "then", [], [h.make_tensor_value_info("ta", T.FLOAT, None)]
    )
    other = h.make_graph(
        [h.make_node("Identity", ["b"], ["tb"])], "else", [], [h.make_tensor_value_info("tb", T.FLOAT, None)]
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=other)],
        "g",
        [
            h.make_tensor_value_info("c", T.BOOL, []),
            h.make_tensor_value_info("a", T.FLOAT, ["n", 3]),
            h.make_tensor_value_info("b", T.FLOAT, ["n", 5]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    _, report = optimize_with_report(m, bind={"n": 2})
    left = report.remaining
    assert not left.fully_static and left.dynamic_tensors >= 1 and left.open_symbols == []
    assert [(o["op"], o["node"]) for o in left.dynamic_origins] == [("If", "pick")]


def test_a_constant_node_left_because_fold_constants_did_not_run_says_so(tmp_path):
    """With --passes leaving fold-constants out, the reason is that, not onnxruntime."""
    src = tmp_path / "m.onnx"
    onnx.save(_expanded_constant(2), str(src))
    r = CliRunner().invoke(main, ["optimize", str(src), "--passes", "fold-shapes,canonicalize-reshape", "--json"])
    assert r.exit_code == 0, r.output
    (item,) = json.loads(r.stdout)["remaining"]["items"]
    assert item["kind"] == "constant_node" and "fold-constants was not among the passes run" in item["text"]
    assert "onnxruntime" not in item["text"]
    r = CliRunner().invoke(main, ["optimize", str(src), "--json"])
    assert json.loads(r.stdout)["remaining"]["items"] == []  # folded when it runs


def test_a_constant_node_left_without_onnxruntime_says_so(monkeypatch):
    import importlib.util

    from shapeinfer.passes.remaining import _folding_note

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "onnxruntime" else real(n, *a))
    assert "onnxruntime, which is not installed" in _folding_note(None)
    assert "fold-constants was not among" in _folding_note(["fold-shapes"])
