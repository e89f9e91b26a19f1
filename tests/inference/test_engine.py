"""The engine on real models, checked against onnxruntime's actual shapes, and its contracts:
symbols, fresh symbols, equalities, the complexity cap, overrides and bindings."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from support.common import load_stripped

import shapeinfer
from shapeinfer.io.annotate import annotate
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

BINDINGS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 11}]


def _ort_shapes(model: onnx.ModelProto, binding: dict[str, int]) -> dict[str, tuple]:
    """Every node output's actual shape from onnxruntime at ``binding``."""
    return {n: np.asarray(v).shape for n, v in ort_oracle.run_all(model, ort_oracle.feeds(model, binding)).items()}


def test_shipped_model_matches_onnxruntime(model_name):
    """Every tensor fully resolved over the input symbols and right at two bindings."""
    model = load_stripped(model_name)
    r = shapeinfer.infer(model)
    assert not r.fresh_symbols
    assert not [d for d in r.diagnostics if d.severity == "error"]
    checked = 0
    for binding in BINDINGS:
        for name, actual in _ort_shapes(model, binding).items():
            f = r.facts[name]
            assert f.shape is not None, name
            got = tuple(D.evaluate(d, binding) for d in f.shape)
            assert got == actual, (name, [D.format(d) for d in f.shape], actual)
            checked += 1
    assert checked > 300


def test_annotate_writes_every_tensor_and_outputs():
    model = load_stripped("bert_ts")
    n_outputs = sum(1 for n in model.graph.node for o in n.output if o)
    out = annotate(shapeinfer.infer(model))
    annotated = {vi.name for vi in out.graph.value_info} | {o.name for o in out.graph.output}
    assert len(annotated) == n_outputs
    o = out.graph.output[0].type.tensor_type
    assert [d.dim_param or d.dim_value for d in o.shape.dim] == ["batch", "seq", 64]
    onnx.checker.check_model(out)


def test_infer_shapes_returns_copy():
    model = load_stripped("vit_dynamo")
    before = model.SerializeToString()
    out = shapeinfer.infer_shapes(model)
    assert model.SerializeToString() == before
    assert len(out.graph.value_info) > 200


def test_infer_accepts_a_path(tmp_path):
    from support.common import model_path

    r = shapeinfer.infer(model_path("gpt2_ts"))
    assert r.dims(r.model.graph.output[0].name) == (D.sym("batch"), D.sym("seq"), 1000)


def _chain_model(input_shape, opset=17):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
        helper.make_node("Reshape", ["x", "n"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def test_unnamed_input_dims_get_stable_names():
    m = _chain_model(["batch", None, 3])
    r1, r2 = shapeinfer.infer(m), shapeinfer.infer(m)
    assert r1.dims("x") == (D.sym("batch"), D.sym("x_d1"), 3)
    assert r1.dims("y") == (3 * D.sym("batch") * D.sym("x_d1"),)
    assert r1.dims("y") == r2.dims("y")
    assert r1.input_symbols == {"batch", "x_d1"}


def test_dim_param_expressions_from_other_tools_are_parsed():
    m = _chain_model(["batch*seq", "seq + 1"])
    r = shapeinfer.infer(m)
    b, s = D.sym("batch"), D.sym("seq")
    assert r.dims("y") == (b * s * (s + 1),)
    m = _chain_model(["batch size", "N/A"])
    r = shapeinfer.infer(m)
    assert r.dims("y") == (D.sym("batch size") * D.sym("N/A"),)


def test_input_shape_override_and_bind():
    m = _chain_model(["batch", "seq", 3])
    r = shapeinfer.infer(m, input_shapes={"x": [4, "n", 3]})
    assert r.dims("y") == (12 * D.sym("n"),)
    r = shapeinfer.infer(_chain_model(["batch", "seq", 3]), bind={"batch": 2, "seq": 5})
    assert r.dims("y") == (30,)
    assert r.facts["s"].value == (2, 5, 3)


def test_fresh_symbols_are_deterministic_and_unresolved():
    """A data-dependent dim (NonZero) becomes unk_<n>, numbered the same on every run."""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Transpose", ["nz"], ["t"])]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("t", TensorProto.INT64, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    dims = [shapeinfer.infer(m).dims("t") for _ in range(2)]
    assert dims[0] == dims[1]
    assert dims[0][1] == 2
    assert D.symbols(dims[0][0]) == {"unk_0"}


def test_broadcast_of_two_symbols_is_the_larger_under_a_guard():
    """n and m may each be 1 alone: the sum has the larger size wherever it runs (at n = 1,
    m = 3 onnxruntime gives 3), and the condition it runs under is a guard."""
    nodes = [helper.make_node("Add", ["a", "b"], ["c"], name="add")]
    g = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m", 4]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    r = shapeinfer.infer(m)
    assert r.dims("c") == (D.dmax(D.sym("m"), D.sym("n")), 4)
    assert [(d.code, d.node) for d in r.diagnostics] == [("G003", "add")]
    assert [g.text for g in r.guards()] == ["m == n or m == 1 or n == 1"]
    assert not r.equalities and not r.substitution
    for n, k in ((1, 3), (3, 1), (2, 2)):
        (out,) = ort_oracle.run(m, {"a": np.zeros((n, 4), np.float32), "b": np.zeros((k, 4), np.float32)})
        assert out.shape == (D.evaluate(r.dims("c")[0], {"n": n, "m": k}), 4)


def test_incompatible_broadcast_is_a_diagnostic():
    nodes = [helper.make_node("Add", ["a", "b"], ["c"])]
    g = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [5, 4]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    r = shapeinfer.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert [d.code for d in r.diagnostics if d.severity == "error"] == ["G002"]
    assert r.facts["c"].shape is None


def test_complexity_cap_replaces_huge_expressions():
    """Repeated (x*x + 1) on a symbolic value grows past the cap and becomes a fresh symbol."""
    nodes = [helper.make_node("Shape", ["x"], ["v0"])]
    for i in range(8):
        nodes.append(helper.make_node("Mul", [f"v{i}", f"v{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Add", [f"m{i}", "one"], [f"v{i + 1}"]))
    nodes.append(helper.make_node("ConstantOfShape", ["v8"], ["y"]))
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1], np.int64), "one")],
    )
    r = shapeinfer.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    (d,) = r.dims("y")
    assert r.capped >= 1
    assert D.symbols(d) <= set(r.fresh_symbols)


def test_annotate_keeps_declared_output_where_inference_knows_less():
    """A custom-domain op gives unknown outputs: the declared output type must survive -o."""
    g = helper.make_graph(
        [helper.make_node("Mystery", ["x"], ["y"], domain="com.example"), helper.make_node("Relu", ["x"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, "k"]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [7, 4]),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    out = annotate(shapeinfer.infer(m))
    y, z = (o.type.tensor_type for o in out.graph.output)
    assert y.elem_type == TensorProto.FLOAT
    assert [d.dim_value or d.dim_param for d in y.shape.dim] == [3, "k"]
    assert [d.dim_value or d.dim_param for d in z.shape.dim] == ["n", 4]  # inference wins where it knows


def test_inference_of_its_own_annotated_output_gives_the_same_facts(model_name):
    """Declared value_info (here: what -o wrote) completes only what inference leaves open, so
    inferring the annotated model again gives every tensor the same fact."""
    model = load_stripped(model_name)
    first = shapeinfer.infer(model)
    annotated = onnx.ModelProto.FromString(model.SerializeToString())
    annotate(shapeinfer.infer(annotated))
    assert len(annotated.graph.value_info) > 0
    again = shapeinfer.infer(annotated)
    assert again.facts == first.facts


def test_declared_dims_complete_each_fresh_dim():
    """Outputs whose count dim is fresh (NonZero) take the declared dim, every time: the same
    fresh symbol never leaks past a declaration, and a dim inference knows is never replaced."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    nodes, decl = [], []
    for i in range(3):
        nodes.append(helper.make_node("NonZero", ["x"], [f"nz{i}"]))
        decl.append(helper.make_tensor_value_info(f"nz{i}", TensorProto.INT64, [2, f"count{i}"]))
    nodes.append(helper.make_node("Relu", ["x"], ["y"]))
    decl.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["wrong", 4]))
    outs = [helper.make_tensor_value_info(f"nz{i}", TensorProto.INT64, None) for i in range(3)]
    outs.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "g", [x], outs, value_info=decl)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    r = shapeinfer.infer(m)
    for i in range(3):
        assert r.facts[f"nz{i}"].shape == (2, D.sym(f"count{i}"))
    assert r.facts["y"].shape == (D.sym("n"), 4)


def test_a_run_leaves_no_reference_cycle():
    """An inference run is freed as soon as its result is dropped, without waiting for the
    cyclic collector: a process that infers many models stays flat (nothing in the run refers
    back to the engine)."""
    import gc
    import pathlib

    from shapeinfer.inference.engine import infer

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models" / "bert_ts.onnx"
    model = onnx.load(str(path), load_external_data=False)
    infer(model)  # imports the op families (modules hold cycles of their own)
    gc.collect()
    gc.disable()
    try:
        infer(model)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_failed_node_is_reported_once_not_again_by_every_node_after_it():
    """A Concat whose dims cannot match (G002) leaves its output's element type unknown; the
    Conv after it knows its rank from the weight, and onnx's check of the Relu after that failed
    for want of an element type: an E011 per node downstream, for the one cause."""
    f = onnx.TensorProto.FLOAT
    w = onnx.numpy_helper.from_array(np.ones((2, 6, 1, 1), np.float32), "w")
    g = onnx.helper.make_graph(
        [
            onnx.helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
            onnx.helper.make_node("Conv", ["c", "w"], ["d"]),
            onnx.helper.make_node("Relu", ["d"], ["e"]),
            onnx.helper.make_node("Transpose", ["e"], ["y"], perm=[0, 2, 3, 1]),
        ],
        "g",
        [
            onnx.helper.make_tensor_value_info("a", f, [1, 3, 4, 4]),
            onnx.helper.make_tensor_value_info("b", f, [1, 3, 5, 4]),
        ],
        [onnx.helper.make_tensor_value_info("y", f, None)],
        [w],
    )
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)
    r = shapeinfer.infer(m)
    assert [(d.code, d.op_type) for d in r.diagnostics if d.severity == "error"] == [("G002", "Concat")]
