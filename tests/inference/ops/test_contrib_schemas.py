"""The contrib schema table (shapeinfer/inference/ops/contrib/schemas.json) against onnxruntime's registered
schemas, and the engine's use of it (attribute types, E007; G007 wording)."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import shapeinfer
from shapeinfer.inference.ops.contrib import schemas

ort_state = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state")

# Ops onnxruntime changed after the document version the table was generated from (its
# ``source``): new optional inputs / attributes / types, without a new since_version. The
# test requires every other op to agree with the registered schema exactly; regenerating the
# table from a newer document (tools/gen_contrib_schemas.py) should empty this list.
CHANGED_AFTER_DOC = {
    "EPContext": "variadic input's minimum arity 0",
    "GatherBlockQuantized": "float4/float8 data types",
    "GroupQueryAttention": "quantized KV cache (T_CACHE, k_scale/v_scale), q/k norm weights, query_seqlens",
    "MatMulNBits": "weight_prepacked attribute",
    "MoE": "swiglu_limit_after_activation attribute",
    "NhwcFusedConv": "float32",
    "PagedAttention": "quantized KV cache, slot_mapping, head_sink, q/k norm, attention_metadata",
    "QMoE": "float8 weights, zero points, global / activation scales",
}

OPTION = {"Single": (False, False), "Optional": (True, False), "Variadic": (False, True)}
UNBOUNDED = 2**31 - 1


def _registered() -> dict[tuple[str, str, int], object]:
    return {(s.domain, s.name, s.since_version): s for s in ort_state.get_all_operator_schema()}


def _differences(ours: schemas.Schema, theirs) -> list[str]:
    diffs = []
    for kind, mine, reg in (("input", ours.inputs, theirs.inputs), ("output", ours.outputs, theirs.outputs)):
        a = [(p.name, p.type, p.optional, p.variadic, not p.heterogeneous or not p.variadic) for p in mine]
        b = [(p.name, p.typeStr, *OPTION[p.option.name], p.isHomogeneous or p.option.name != "Variadic") for p in reg]
        if a != b:
            diffs.append(f"{kind}s {a} != {b}")
    counts = (ours.min_input, ours.max_input, ours.min_output, ours.max_output)
    reg_counts = tuple(None if c == UNBOUNDED else c for c in (theirs.min_input, theirs.max_input))
    reg_counts += tuple(None if c == UNBOUNDED else c for c in (theirs.min_output, theirs.max_output))
    if counts != reg_counts:
        diffs.append(f"input/output counts {counts} != {reg_counts}")
    reg_attrs = {k: (int(a.type), bool(a.required)) for k, a in theirs.attributes.items()}
    if ours.attributes != reg_attrs:
        diffs.append(f"attributes {ours.attributes} != {reg_attrs}")
    reg_types = {t.type_param_str: sorted(t.allowed_type_strs) for t in theirs.type_constraints}
    if {k: sorted(v) for k, v in ours.type_constraints.items()} != reg_types:
        diffs.append(f"type constraints {ours.type_constraints} != {reg_types}")
    return diffs


def test_table_agrees_with_onnxruntime_registered_schemas() -> None:
    registered = _registered()
    table = schemas.all_schemas()
    assert len(table) > 100 and schemas.source().startswith("onnxruntime docs/ContribOperators.md")
    assert set(CHANGED_AFTER_DOC) <= {s.op for s in table}
    differing = {}
    for s in table:
        theirs = registered.get((s.domain, s.op, s.since_version))
        assert theirs is not None, f"onnxruntime registers no {s.domain}.{s.op}-{s.since_version}"
        diffs = _differences(s, theirs)
        if diffs:
            differing[s.op] = diffs
    unexplained = {op: d for op, d in differing.items() if op not in CHANGED_AFTER_DOC}
    assert not unexplained


def test_lookup_by_domain_and_version() -> None:
    attention = schemas.lookup("com.microsoft", "Attention", 1)
    assert attention is not None and attention.attr_types["num_heads"] == onnx.AttributeProto.INT
    assert attention.attributes["num_heads"][1]  # required
    assert [p.name for p in attention.inputs][:2] == ["input", "weights"]
    assert attention.type_constraints["M"] == ("tensor(int32)",)
    assert schemas.lookup("", "Attention", 23) is None  # ai.onnx Attention is onnx's, not the table's
    assert schemas.lookup("com.microsoft", "Attention", 0) is None
    assert schemas.lookup("com.microsoft", "NoSuchOp", 1) is None


def _model(node: onnx.NodeProto, inputs, outputs) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )


def test_mistyped_contrib_attribute_is_e007() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [64, 192])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    good = helper.make_node("Attention", ["x", "w"], ["y"], domain="com.microsoft", num_heads=4)
    bad = helper.make_node("Attention", ["x", "w"], ["y"], domain="com.microsoft", num_heads=4.0)
    assert not [d for d in shapeinfer.infer(_model(good, [x, w], [y])).diagnostics if d.code == "E007"]
    found = [d for d in shapeinfer.infer(_model(bad, [x, w], [y])).diagnostics if d.code == "E007"]
    assert found and "num_heads" in found[0].message and "float" in found[0].message


def test_g007_names_a_documented_op_without_rule_apart_from_an_unknown_op() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    documented = helper.make_node("Inverse", ["x"], ["y"], domain="com.microsoft")  # in the table, no rule
    unknown = helper.make_node("NoSuchOp", ["x"], ["y"], domain="com.microsoft")
    for node, text in ((documented, "no rule for com.microsoft.Inverse"), (unknown, "no schema for com.microsoft")):
        g007 = [d for d in shapeinfer.infer(_model(node, [x], [y])).diagnostics if d.code == "G007"]
        assert len(g007) == 1 and text in g007[0].message
