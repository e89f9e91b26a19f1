"""shapeinfer.compat.onnx_shape_inference against onnx-shape-inference, the original it replaces,
and against onnxruntime, the judge of the dims: the policies, the adoption of declared names,
SYM_DATA_KEY, the exceptions and the warnings, on small models and on real ones."""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import onnx
import pytest
from support.common import ROOT, model_path

from shapeinfer.compat import onnx_shape_inference as osi
from testkit.ort_oracle import feeds, run_all

ir = pytest.importorskip("onnx_ir")

F32, I64 = ir.DataType.FLOAT, ir.DataType.INT64


def _original():
    return pytest.importorskip("onnx_shape_inference")


def _value(name, dtype=None, shape=None):
    return ir.Value(
        name=name,
        type=None if dtype is None else ir.TensorType(dtype),
        shape=None if shape is None else ir.Shape(shape),
    )


def _model(nodes, inputs, outputs, opset=21, inits=()):
    return ir.Model(
        ir.Graph(inputs, outputs, nodes=nodes, initializers=list(inits), opset_imports={"": opset}, name="g"),
        ir_version=10,
    )


def _const(name, data):
    arr = np.asarray(data, dtype=np.int64)
    return ir.Value(
        name=name, const_value=ir.Tensor(arr, name=name), type=ir.TensorType(I64), shape=ir.Shape(arr.shape)
    )


def _shapes(model) -> dict[str, tuple]:
    out = {}
    for node in model.graph:
        for v in node.outputs:
            out[v.name] = (v.dtype, None if v.shape is None else tuple(str(d) for d in v.shape.dims))
    return out


def _both(build, **kwargs):
    """``build()`` inferred by the original and by the drop-in (two fresh models)."""
    theirs = _original().infer_symbolic_shapes(build(), **kwargs)
    ours = osi.infer_symbolic_shapes(build(), **kwargs)
    return theirs, ours


def _ort_dims_hold(proto: onnx.ModelProto, model, binding: dict[str, int], names: dict[str, str] | None = None):
    """Every dim the drop-in wrote on a main-graph node output of ``model`` equals the shape
    onnxruntime computes for ``proto`` at ``binding`` (dims of symbols not bound skipped).
    Returns how many dims were compared."""
    actual = run_all(proto, feeds(proto, binding))
    compared = 0
    for node in model.graph:
        for v in node.outputs:
            if v.shape is None or v.name not in actual:
                continue
            arr = actual[v.name]
            assert len(v.shape) == arr.ndim, (v.name, v.shape, arr.shape)
            for i, d in enumerate(v.shape.dims):
                want = d if isinstance(d, int) else _evaluate(str(d.value), binding)
                if want is None:  # a data-dependent dim (an invented _dN)
                    continue
                compared += 1
                assert want == arr.shape[i], (v.name, i, d, arr.shape)
    return compared


def _evaluate(text: str, binding: dict[str, int]) -> int | None:
    import sympy

    if not set(re.findall(r"[A-Za-z_]\w*", text)) - {"floor", "Max", "Min", "Mod"} <= binding.keys():
        return None
    local = {k: sympy.Integer(v) for k, v in binding.items()}
    local.update(floor=sympy.floor, Max=sympy.Max, Min=sympy.Min, Mod=sympy.Mod)
    e = sympy.sympify(text, locals=local)
    return int(e) if e.is_Integer else None


# ---------------------------------------------------------------------------------------- real models


@pytest.mark.parametrize(
    ("name", "bindings"),
    [
        ("bert_ts", [{"batch": 1, "seq": 5}, {"batch": 3, "seq": 13}]),
        ("llama_dynamo", [{"batch": 2, "seq": 7}]),
    ],
)
def test_every_dim_written_on_a_real_model_is_onnxruntimes(name, bindings):
    path = str(model_path(name))
    model = ir.load(path)
    assert osi.infer_symbolic_shapes(model) is model
    written = sum(1 for node in model.graph for v in node.outputs if v.shape is not None)
    assert written == sum(1 for node in model.graph for v in node.outputs)  # every value has a shape
    proto = onnx.load(path)
    assert sum(_ort_dims_hold(proto, model, b) for b in bindings) > 500


def test_a_vision_model_with_dynamic_height_and_width_agrees_with_onnxruntime():
    path = str(ROOT / "tests" / "models" / "vision" / "yolo11_det.onnx")
    model = ir.load(path)
    osi.infer_symbolic_shapes(model)
    proto = onnx.load(path)
    with open(path.replace(".onnx", ".json"), encoding="utf-8") as f:
        spec = json.load(f)
    assert sum(_ort_dims_hold(proto, model, b) for b in spec["bindings"]) > 1000
    # the original leaves the anchor axis of the detect head's Concat a fresh symbol; shapeinfer
    # says what it is
    head = model.graph.node("/model.23/Concat_3").outputs[0]
    assert "height" in str(head.shape[2]) and "width" in str(head.shape[2])


def test_where_the_original_knows_an_integer_dim_so_does_the_drop_in():
    theirs = _original().infer_symbolic_shapes(ir.load(str(model_path("bert_ts"))))
    ours = osi.infer_symbolic_shapes(ir.load(str(model_path("bert_ts"))))
    a, b = _shapes(theirs), _shapes(ours)
    compared = 0
    for name, (dtype, dims) in a.items():
        if dims is None:
            continue
        assert b[name][0] == dtype
        for x, y in zip(dims, b[name][1]):
            if x.isdigit():
                compared += 1
                assert y == x, name
    assert compared > 200


# ---------------------------------------------------------------------------------------- policies


def _declared_relu(declared, dtype=F32):
    """x[N, 4] -> Relu -> y declared ``declared`` (its dims) -> Identity -> z."""

    def build():
        x = _value("x", F32, ["N", 4])
        y = _value("y", dtype, declared)
        z = _value("z")
        return _model([ir.Node("", "Relu", [x], outputs=[y]), ir.Node("", "Identity", [y], outputs=[z])], [x], [z])

    return build


@pytest.mark.parametrize("policy", ["refine", "strict", "override", "skip"])
@pytest.mark.parametrize("declared", [[None, None], ["N", None], ["M", 4], [None, 4], None])
def test_each_policy_merges_as_the_original_does(policy, declared):
    theirs, ours = _both(_declared_relu(declared), policy=policy)
    assert _shapes(ours)["y"] == _shapes(theirs)["y"]


@pytest.mark.parametrize("policy", ["refine", "override", "skip"])
def test_a_declared_dim_inference_contradicts_stays_or_goes_as_the_original_says(policy):
    theirs, ours = _both(_declared_relu([None, 5]), policy=policy)
    assert _shapes(ours)["y"] == _shapes(theirs)["y"]
    assert _shapes(ours)["y"][1][1] == ("4" if policy == "override" else "5")
    # downstream, the drop-in follows what the model computes (4: onnxruntime's), where the
    # original carries a declared 5 forward under refine and skip
    assert _shapes(ours)["z"][1][1] == "4"


def test_strict_raises_the_originals_error_for_a_contradicted_dim_and_writes_nothing():
    build = _declared_relu([None, 5])
    with pytest.raises(osi.ShapeInferenceError) as ours:
        m = build()
        osi.infer_symbolic_shapes(m, policy="strict")
    assert str(ours.value) == "Relu (node 'node_Relu_0'): Shape inference failed for ::Relu"
    assert isinstance(ours.value.__cause__, ValueError)
    assert str(ours.value.__cause__) == "Shape conflict for y at dim 1: existing 5 vs inferred 4"
    assert m.graph.outputs[0].shape is None  # nothing written
    original = _original()
    with pytest.raises(original.ShapeInferenceError) as theirs:
        original.infer_symbolic_shapes(build(), policy="strict")
    assert str(theirs.value) == str(ours.value) and str(theirs.value.__cause__) == str(ours.value.__cause__)


def test_strict_raises_for_a_declared_element_type_inference_contradicts():
    build = _declared_relu([None, 4], dtype=ir.DataType.DOUBLE)
    with pytest.raises(osi.ShapeInferenceError) as e:
        osi.infer_symbolic_shapes(build(), policy="strict")
    assert str(e.value.__cause__) == "Dtype conflict for y: existing DOUBLE vs inferred FLOAT"
    with pytest.raises(ValueError):  # the original raises the same
        _original().infer_symbolic_shapes(build(), policy="strict")


# ---------------------------------------------------------------------------------------- adoption


def _nonzero(declared):
    """x[batch, seq] -> NonZero -> Transpose -> y declared ``declared``."""

    def build():
        x = _value("x", F32, ["batch", "seq"])
        nz = _value("nz")
        y = _value("y", I64, declared)
        nodes = [
            ir.Node("", "NonZero", [x], outputs=[nz]),
            ir.Node(
                "", "Transpose", [nz], attributes={"perm": ir.Attr("perm", ir.AttributeType.INTS, [1, 0])}, outputs=[y]
            ),
        ]
        return _model(nodes, [x], [y])

    return build


@pytest.mark.parametrize("adopt", [True, False])
@pytest.mark.parametrize("policy", ["refine", "strict", "override", "skip"])
def test_a_declared_name_is_adopted_upstream_where_the_original_adopts_it(adopt, policy):
    theirs, ours = _both(_nonzero(["nnz", 2]), policy=policy, adopt_declared_symbols=adopt)
    assert _shapes(ours)["nz"] == _shapes(theirs)["nz"]
    assert _shapes(ours)["nz"][1] == ("2", "nnz" if adopt and policy in ("refine", "strict") else "_d0")


def test_a_declared_expression_is_solved_for_the_invented_symbol():
    def build():
        x = _value("x", F32, ["batch", "seq"])
        nz, flat, y = _value("nz"), _value("flat"), _value("y", I64, ["2*dnz"])
        nodes = [
            ir.Node("", "NonZero", [x], outputs=[nz]),
            ir.Node("", "Reshape", [nz, _const("shape", [-1])], outputs=[flat]),
            ir.Node("", "Identity", [flat], outputs=[y]),
        ]
        return _model(nodes, [x], [y])

    theirs, ours = _both(build)
    assert _shapes(ours)["nz"] == _shapes(theirs)["nz"] == (I64, ("2", "dnz"))
    assert _shapes(ours)["flat"] == _shapes(theirs)["flat"] == (I64, ("2*dnz",))


def test_a_declared_integer_is_not_taken_for_a_data_dependent_count():
    """A declaration is a claim: the count of NonZero stays a symbol (onnxruntime's run gives
    another count than the 7 declared), as the original leaves it."""
    theirs, ours = _both(_nonzero([7, 2]))
    assert _shapes(ours)["nz"] == _shapes(theirs)["nz"] == (I64, ("2", "_d0"))
    assert _shapes(ours)["y"] == (I64, ("7", "2"))  # refine keeps the declaration on the value itself


# ---------------------------------------------------------------------------------------- invented names


def test_anonymous_input_dims_are_named_on_the_input_past_the_models_names():
    def build():
        x = _value("x", F32, [None, "_d0", None])
        y = _value("y")
        return _model([ir.Node("", "Relu", [x], outputs=[y])], [x], [y])

    theirs, ours = _both(build)
    assert [str(d) for d in ours.graph.inputs[0].shape.dims] == ["_d1", "_d0", "_d2"]
    assert [str(d) for d in theirs.graph.inputs[0].shape.dims] == ["_d1", "_d0", "_d2"]
    assert _shapes(ours)["y"] == _shapes(theirs)["y"]


def test_expressions_are_spelled_as_the_original_spells_them():
    def build():
        x = _value("x", F32, ["N", 3])
        y, z = _value("y"), _value("z")
        step = [_const("starts", [0]), _const("ends", [2**63 - 1]), _const("axes", [0]), _const("steps", [2])]
        nodes = [
            ir.Node("", "Slice", [x, *step], outputs=[y]),
            ir.Node("", "Concat", [y, y], attributes={"axis": ir.Attr("axis", ir.AttributeType.INT, 1)}, outputs=[z]),
        ]
        return _model(nodes, [x], [z])

    theirs, ours = _both(build)
    assert _shapes(ours)["y"] == _shapes(theirs)["y"] == (F32, ("-floor(-N/2)", "3"))
    assert _shapes(ours)["z"] == _shapes(theirs)["z"] == (F32, ("-floor(-N/2)", "6"))


def _ceil_pool():
    x = _value("x", F32, [1, 1, "H", 8])
    y = _value("y")
    attrs = {
        "kernel_shape": ir.Attr("kernel_shape", ir.AttributeType.INTS, [1, 1]),
        "strides": ir.Attr("strides", ir.AttributeType.INTS, [2, 2]),
        "ceil_mode": ir.Attr("ceil_mode", ir.AttributeType.INT, 1),
    }
    return _model([ir.Node("", "AveragePool", [x], attributes=attrs, outputs=[y])], [x], [y])


def test_a_ceil_mode_pool_is_sized_as_onnxruntime_sizes_it_where_the_original_differs():
    """The last window of a ceil_mode pool that would start past the input is dropped: H = 2
    gives 1 row in onnxruntime (and here: ceil(H/2)), 2 in the original (ceil((H - 1)/2) + 1)."""
    theirs, ours = _both(_ceil_pool)
    assert _shapes(ours)["y"][1][2] == "-floor(-H/2)"
    assert _shapes(theirs)["y"][1][2] == "ceiling(H/2 - 1/2) + 1"
    proto = ir.serde.serialize_model(_ceil_pool())
    for h in (1, 2, 3, 4, 7):
        actual = run_all(proto, {"x": np.zeros((1, 1, h, 8), np.float32)})["y"].shape[2]
        assert actual == _evaluate("-floor(-H/2)", {"H": h})
        theirs_h = -(-(h - 1) // 2) + 1  # the original's ceiling(H/2 - 1/2) + 1
        assert (actual == theirs_h) == (h % 2 == 1)


# ---------------------------------------------------------------------------------------- SYM_DATA_KEY


def test_shape_values_carry_sym_data_and_constants_as_the_originals():
    def build():
        x = _value("x", F32, ["batch", "seq", 4])
        names = ["s", "g", "u", "c", "r"]
        s, g, u, c, r = (_value(n) for n in names)
        idx = _const("idx", [1])
        minus = _const("minus", [-1])
        nodes = [
            ir.Node("", "Shape", [x], outputs=[s]),
            ir.Node("", "Gather", [s, idx], attributes={"axis": ir.Attr("axis", ir.AttributeType.INT, 0)}, outputs=[g]),
            ir.Node("", "Mul", [g, _const("two", [2])], outputs=[u]),
            ir.Node(
                "", "Concat", [minus, u], attributes={"axis": ir.Attr("axis", ir.AttributeType.INT, 0)}, outputs=[c]
            ),
            ir.Node("", "Reshape", [x, c], outputs=[r]),
        ]
        return _model(nodes, [x], [r])

    theirs, ours = _both(build)
    key = osi.SYM_DATA_KEY
    assert key == _original().SYM_DATA_KEY
    for name, want in {"s": ["batch", "seq", 4], "g": ["seq"], "u": ["2*seq"], "c": [-1, "2*seq"]}.items():
        v = next(o for n in ours.graph for o in n.outputs if o.name == name)
        w = next(o for n in theirs.graph for o in n.outputs if o.name == name)
        assert json.loads(v.metadata_props[key]) == json.loads(w.metadata_props[key]) == want
    r = _shapes(ours)["r"]
    assert r == _shapes(theirs)["r"] and r[1][1] == "2*seq"


def test_a_fully_known_shape_value_gets_its_const_value_as_in_the_original():
    def build():
        x = _value("x", F32, [2, 3])
        s = _value("s")
        return _model([ir.Node("", "Shape", [x], outputs=[s])], [x], [s])

    theirs, ours = _both(build)
    a = ours.graph.outputs[0].const_value.numpy()
    b = theirs.graph.outputs[0].const_value.numpy()
    assert a.tolist() == b.tolist() == [2, 3] and a.dtype == b.dtype == np.int64


# ---------------------------------------------------------------------------------------- errors and warnings


def test_a_missing_required_input_is_the_originals_op_usage_error():
    def build():
        y = _value("y")
        return _model([ir.Node("", "Relu", [None], outputs=[y], name="r")], [], [y])

    with pytest.raises(osi.OpUsageError) as ours:
        osi.infer_symbolic_shapes(build())
    original = _original()
    with pytest.raises(original.OpUsageError) as theirs:
        original.infer_symbolic_shapes(build())
    assert str(ours.value) == str(theirs.value) == "Relu (node 'r'): Required input 'X' (#0) is None"


def _bad_add():
    a, b, y = _value("a", F32, [3]), _value("b", F32, [5]), _value("y")
    return _model([ir.Node("", "Add", [a, b], outputs=[y], name="add")], [a, b], [y])


def _bad_gemm():
    a, b, y = _value("a", F32, [2, 3]), _value("b", F32, [5, 4]), _value("y")
    return _model([ir.Node("", "Gemm", [a, b], outputs=[y], name="gemm")], [a, b], [y])


def test_a_node_inference_refuses_raises_shape_inference_error_except_under_skip(caplog):
    with pytest.raises(osi.ShapeInferenceError) as e:
        osi.infer_symbolic_shapes(_bad_gemm())
    assert isinstance(e.value, ValueError) and e.value.op_type == "Gemm" and e.value.node_name == "gemm"
    with pytest.raises(_original().ShapeInferenceError):
        _original().infer_symbolic_shapes(_bad_gemm())
    with caplog.at_level(logging.WARNING, logger="onnx_shape_inference._context"):
        osi.infer_symbolic_shapes(_bad_gemm(), policy="skip")
    assert any(r.getMessage().startswith("Shape inference error: Gemm (node 'gemm')") for r in caplog.records)
    with pytest.raises(Exception, match=r"dimension|[Ii]ncompatible|mismatch"):  # onnxruntime refuses it too
        run_all(
            ir.serde.serialize_model(_bad_gemm()),
            {"a": np.zeros((2, 3), np.float32), "b": np.zeros((5, 4), np.float32)},
        )


def test_inputs_that_cannot_broadcast_leave_the_output_unknown_as_in_the_original():
    theirs, ours = _both(_bad_add)
    assert ours.graph.outputs[0].shape is None and theirs.graph.outputs[0].shape is None


@pytest.mark.parametrize("warn", [True, False])
def test_an_op_no_rule_knows_is_warned_once_as_the_original_warns(warn, caplog):
    def build():
        x, y, z = _value("x", F32, [2]), _value("y"), _value("z")
        nodes = [ir.Node("com.custom", "Foo", [x], outputs=[y]), ir.Node("com.custom", "Foo", [y], outputs=[z])]
        m = _model(nodes, [x], [z])
        m.opset_imports["com.custom"] = 1
        return m

    with caplog.at_level(logging.WARNING, logger="onnx_shape_inference._engine"):
        osi.infer_symbolic_shapes(build(), warn_on_missing=warn)
    ours = [r.getMessage() for r in caplog.records if r.name == "onnx_shape_inference._engine"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="onnx_shape_inference._engine"):
        _original().infer_symbolic_shapes(build(), warn_on_missing=warn)
    theirs = [r.getMessage() for r in caplog.records if r.name == "onnx_shape_inference._engine"]
    assert ours == theirs == (["No shape inference registered for com.custom::Foo"] if warn else [])


def test_anything_but_an_onnx_ir_model_is_a_type_error():
    with pytest.raises(TypeError, match=r"onnx_ir\.Model"):
        osi.infer_symbolic_shapes(onnx.ModelProto())
