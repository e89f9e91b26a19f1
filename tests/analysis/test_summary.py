"""shapeinfer MODEL --summary: the model at a glance, its figures checked against the model read
independently (numpy for the parameter sizes)."""

from __future__ import annotations

import json
from collections import Counter

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import MODEL_NAMES, model_path, run_cli

from shapeinfer.analysis.summary import format_summary, model_summary


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_summary_figures_match_the_model(name):
    m = onnx.load(str(model_path(name)))
    s = model_summary(m)
    arrays = [numpy_helper.to_array(t) for t in m.graph.initializer]
    assert s["parameters"] == sum(a.size for a in arrays)
    assert s["parameter_bytes"] == sum(a.nbytes for a in arrays)
    assert s["initializers"] == len(arrays)
    assert s["nodes"] == len(m.graph.node) and s["subgraph_nodes"] == 0
    assert s["ops"] == dict(Counter(n.op_type for n in m.graph.node))
    assert list(s["ops"].values()) == sorted(s["ops"].values(), reverse=True)
    assert s["ir_version"] == m.ir_version and s["opsets"]["ai.onnx"] == m.opset_import[0].version
    assert s["producer"].startswith(m.producer_name)


def test_summary_counts_subgraphs_domains_and_packed_types():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    def branch(op):
        out = helper.make_tensor_value_info(f"{op}_o", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node(op, ["x"], [f"{op}_o"])], op, [], [out])

    nodes = [
        helper.make_node("If", ["c"], ["i"], then_branch=branch("Relu"), else_branch=branch("Neg")),
        helper.make_node("Gelu", ["i"], ["y"], domain="com.microsoft"),
    ]
    w4 = helper.make_tensor("w4", TensorProto.INT4, [3, 5], [0] * 15)
    g = helper.make_graph(nodes, "g", [x, c], [y], initializer=[w4])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    s = model_summary(m)
    assert (s["nodes"], s["subgraph_nodes"]) == (2, 2)
    assert s["ops"] == {"If": 1, "Neg": 1, "Relu": 1, "com.microsoft::Gelu": 1}
    assert (s["parameters"], s["parameter_bytes"]) == (15, 8)  # 4 bits each, rounded up
    assert s["opsets"] == {"ai.onnx": 21, "com.microsoft": 1}
    lines = format_summary(s, top=2)
    assert len(lines) == 3 and "(2 more op types)" in lines[1] and "+2 in subgraphs" in lines[1]


def test_summary_flag_plain_and_json():
    path = str(model_path("llama_dynamo"))
    r = run_cli(path, "--summary")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == path and lines[1].startswith("  ir_version ") and lines[3].startswith("  parameters ")
    assert "inputs:" in r.stdout  # the report follows
    assert "ir_version" not in run_cli(path).stdout  # only when asked
    doc = json.loads(run_cli(path, "--summary", "--json").stdout)
    assert doc["model_summary"] == model_summary(onnx.load(path))
