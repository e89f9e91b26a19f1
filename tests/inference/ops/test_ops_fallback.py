"""The fallback to onnx's per-node inference: symbols survive it, a contradicted dim becomes fresh,
custom-domain ops get unknown outputs with an info diagnostic, and failures never raise."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

import shapeinfer
from shapeinfer.inference.ops.common import check_against_probe, probe_binding
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opsets, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets], ir_version=9)


def test_ml_ops_keep_symbolic_dims_through_onnx() -> None:
    nodes = [
        helper.make_node("Binarizer", ["x"], ["n"], domain="ai.onnx.ml"),
        helper.make_node("ArrayFeatureExtractor", ["n", "idx"], ["a"], domain="ai.onnx.ml"),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F, ["batch", "feat"])],
        ["n", "a", "y"],
        [("", 18), ("ai.onnx.ml", 3)],
        [helper.make_tensor("idx", TensorProto.INT64, [3], [0, 2, 1])],
    )
    r = shapeinfer.infer(model)
    assert r.facts["n"].shape == (D.sym("batch"), D.sym("feat"))
    assert r.facts["y"].shape == (D.sym("batch"), 3)
    assert not [d for d in r.diagnostics if d.severity != "info"]


def test_expression_dims_round_trip_through_onnx() -> None:
    # a dim that is an expression (2*seq from a Concat) goes to onnx as dim_param text and comes back
    nodes = [
        helper.make_node("Concat", ["x", "x"], ["c"], axis=0),
        helper.make_node("Binarizer", ["c"], ["y"], domain="ai.onnx.ml"),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["seq", 4])], ["y"], [("", 18), ("ai.onnx.ml", 3)])
    r = shapeinfer.infer(model)
    assert r.facts["y"].shape == (D.mul(2, D.sym("seq")), 4)


def test_custom_domain_op_is_unknown_with_an_info_diagnostic() -> None:
    nodes = [
        helper.make_node("MyOp", ["x"], ["m"], domain="com.example"),
        helper.make_node("Relu", ["m"], ["y"]),
        helper.make_node("Relu", ["x"], ["z"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["n", 3])], ["y", "z"], [("", 18), ("com.example", 1)])
    r = shapeinfer.infer(model)
    assert r.facts["y"].shape is None
    assert r.facts["z"].shape == (D.sym("n"), 3)
    assert [(d.severity, d.code) for d in r.diagnostics] == [("info", "G007")]


def test_onnx_rejection_is_a_diagnostic_not_an_exception() -> None:
    # TfIdfVectorizer (no native rule) on a rank-3 input (it takes 1-D or 2-D): onnx's inference
    # rejects it, which is an error diagnostic (E011), outputs unknown
    node = helper.make_node(
        "TfIdfVectorizer",
        ["x"],
        ["y"],
        mode="TF",
        min_gram_length=1,
        max_gram_length=1,
        max_skip_count=0,
        ngram_counts=[0],
        ngram_indexes=[0],
        pool_int64s=[1],
    )
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 3, 4])], ["y"], [("", 18)])
    r = shapeinfer.infer(model)
    assert r.facts["y"].shape is None
    assert [(d.severity, d.code) for d in r.diagnostics] == [("error", "E011")]


def test_probe_drops_dims_the_concrete_run_contradicts() -> None:
    n, m = D.sym("n"), D.sym("m")
    binding = probe_binding([Fact(F, (n, m, 4))])
    assert len(set(binding.values())) == 2 and min(binding.values()) > 1000
    fresh = iter(D.sym(f"unk_{k}") for k in range(10))
    sym = Fact(F, (n, 0, D.mul(4, m), 7))  # 0 is a dim_value read from an absent one
    probe = Fact(F, (binding["n"], 4 * binding["m"], 4 * binding["m"], None))
    checked = check_against_probe(sym, probe, binding, lambda: next(fresh))
    assert checked.shape == (n, D.sym("unk_0"), D.mul(4, m), 7)
    # a rank the probe contradicts is unknown
    assert check_against_probe(sym, Fact(F, (1, 2)), binding, lambda: next(fresh)).shape is None


def test_fallback_result_is_right_at_every_binding() -> None:
    # LinearClassifier: (N, C) -> labels (N,), scores (N, classes); checked against the reference
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(
        "LinearClassifier",
        ["x"],
        ["label", "scores"],
        domain="ai.onnx.ml",
        classlabels_ints=[0, 1, 2],
        coefficients=[0.1] * 6,
        intercepts=[0.0, 0.0, 0.0],
    )
    model = _model(
        [node], [helper.make_tensor_value_info("x", F, ["n", 2])], ["label", "scores"], [("", 18), ("ai.onnx.ml", 1)]
    )
    r = shapeinfer.infer(model)
    ref = ReferenceEvaluator(model)
    for n in (1, 4):
        label, scores = ref.run(None, {"x": np.zeros((n, 2), np.float32)})
        for name, arr in (("label", label), ("scores", scores)):
            assert tuple(D.evaluate(d, {"n": n}) for d in r.facts[name].shape) == arr.shape


def test_names_onnx_invents_are_cleared_not_shared() -> None:
    from shapeinfer.inference.ops.common import clear_foreign_params

    tp = helper.make_tensor_type_proto(F, ["n", "2*n + 1", "unk__0", "m"])
    clear_foreign_params(tp, {"n"})
    dims = tp.tensor_type.shape.dim
    assert [d.dim_param for d in dims] == ["n", "2*n + 1", "", ""]
    assert not any(d.HasField("dim_value") for d in dims)


def test_no_op_without_a_native_rule_makes_inference_raise() -> None:
    # every schema that reaches the fallback, fed odd inputs (symbolic dims, no attributes)
    from shapeinfer.inference import op_registry as registry

    checked = 0
    for schema in onnx.defs.get_all_schemas():
        if registry.lookup(schema.domain, schema.name, schema.since_version) is not None:
            continue
        n_in = max(1, len(schema.inputs))
        inputs = [helper.make_tensor_value_info(f"x{i}", F, ["n", 3]) for i in range(n_in)]
        outs = [f"y{i}" for i in range(max(1, len(schema.outputs)))]
        node = helper.make_node(schema.name, [vi.name for vi in inputs], outs, domain=schema.domain)
        opsets = [("", 21)] + ([(schema.domain, schema.since_version)] if schema.domain else [])
        r = shapeinfer.infer(_model([node], inputs, outs, opsets))
        assert set(outs) <= set(r.facts)
        checked += 1
    assert checked >= 2  # TfIdfVectorizer, Gradient (the ai.onnx.ml ops have rules: test_ops_ml.py)
