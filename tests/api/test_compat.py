"""The drop-ins of shapeinfer.compat against the originals they replace: onnx's
``infer_shapes`` / ``infer_shapes_path`` and onnxruntime's ``SymbolicShapeInference``."""

from __future__ import annotations

import subprocess
import sys

import onnx
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper
from support.common import load_stripped, model_path

from shapeinfer.compat import onnx as compat_onnx
from shapeinfer.compat.onnxruntime import SymbolicShapeInference
from shapeinfer.symbolic import dims as D


def _dims(vi: onnx.ValueInfoProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def _types(m: onnx.ModelProto) -> dict[str, tuple]:
    g = m.graph
    return {vi.name: (vi.type.tensor_type.elem_type, tuple(_dims(vi))) for vi in (*g.value_info, *g.output)}


def _static_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.0] * 108)
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [2, -1])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["y"]),
    ]
    g = helper.make_graph(nodes, "g", [x], [y], initializer=[w, shape])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_infer_shapes_agrees_with_onnx_where_onnx_knows_the_dims():
    m = _static_model()
    ours = compat_onnx.infer_shapes(m)
    theirs = onnx.shape_inference.infer_shapes(m)
    assert _types(ours) == _types(theirs) and len(_types(ours)) == 4
    assert ours is not m and len(m.graph.value_info) == 0  # the input is not modified
    assert _types(compat_onnx.infer_shapes(m.SerializeToString())) == _types(theirs)


def test_onnx_infer_shapes_on_a_real_model_has_every_tensor_and_the_symbolic_dims():
    m = load_stripped("bert_ts")
    ours = compat_onnx.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    theirs = onnx.shape_inference.infer_shapes(m, data_prop=True)
    produced = {o for n in m.graph.node for o in n.output if o}
    assert set(_types(ours)) >= produced
    for name, (dtype, dims) in _types(theirs).items():  # where onnx knows a dim, the same
        o_dtype, o_dims = _types(ours)[name]
        assert o_dtype == dtype and len(o_dims) == len(dims), name
        for a, b in zip(o_dims, dims):
            if isinstance(b, int) and b > 0:
                assert a == b, name
    assert _dims(ours.graph.output[0]) == ["batch", "seq", 64]


def test_onnx_infer_shapes_takes_no_path_like_onnx():
    with pytest.raises(TypeError) as theirs:
        onnx.shape_inference.infer_shapes(str(model_path("bert_ts")))
    with pytest.raises(TypeError) as ours:
        compat_onnx.infer_shapes(str(model_path("bert_ts")))
    assert str(ours.value) == str(theirs.value)  # onnx's words (its own tests match them)


def _defaults_model() -> onnx.ModelProto:
    """A Reshape whose target shape is a graph input with an initializer: a default the
    caller may override (IR >= 4), which onnx's inference reads as a constant."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 12])
    shape_in = helper.make_tensor_value_info("shape", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    shape = helper.make_tensor("shape", TensorProto.INT64, [3], [2, 3, -1])
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Relu", ["r"], ["y"])],
        "g",
        [x, shape_in],
        [y],
        initializer=[shape],
    )
    return helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_infer_shapes_reads_initializer_defaults_like_onnx_and_says_so(caplog):
    """onnx's inference reads an input's initializer as a constant: so does the drop-in, with
    an info G013 in its log; shapeinfer's own inference keeps the value open (it may be
    overridden). onnxruntime, run at the default, gives the same dims."""
    import numpy as np
    import onnxruntime

    m = _defaults_model()
    theirs = onnx.shape_inference.infer_shapes(m)
    with caplog.at_level("INFO", logger="shapeinfer.compat"):
        ours = compat_onnx.infer_shapes(m, strict_mode=True)
    assert _types(ours) == _types(theirs)
    assert _types(ours)["y"] == (TensorProto.FLOAT, (2, 3, 4))
    assert any("G013" in r.getMessage() and "'shape'" in r.getMessage() for r in caplog.records)
    sess = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, {"x": np.zeros((2, 12), np.float32)})
    assert out.shape == (2, 3, 4)
    from shapeinfer.api import infer

    default = infer(m)  # the tool itself: a default is not a constant
    assert default.dims("y") != [2, 3, 4] and not any(d.code == "G013" for d in default.diagnostics)


def _broken_model() -> onnx.ModelProto:
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "g", [a, b], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_drop_in_is_as_silent_as_onnx():
    """A model with an error-level diagnostic: onnx prints nothing, and neither does the drop-in
    (the diagnostic is logged, with a NullHandler, not printed by logging's last resort)."""
    code = (
        "import onnx\n"
        "from onnx import TensorProto as T, helper as h\n"
        "from shapeinfer.compat import onnx as c\n"
        "g = h.make_graph([h.make_node('Add', ['x', 'y'], ['z'])], 'g',\n"
        "    [h.make_tensor_value_info('x', T.FLOAT, [2]), h.make_tensor_value_info('y', T.FLOAT, [3])],\n"
        "    [h.make_tensor_value_info('z', T.FLOAT, [7])])\n"
        "m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])\n"
        "c.infer_shapes(m)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout == "" and r.stderr == "", r.stderr


def test_onnx_infer_shapes_path_raises_onnxs_type_for_a_missing_file(tmp_path):
    with pytest.raises(onnx.checker.ValidationError) as ours:
        compat_onnx.infer_shapes_path(str(tmp_path / "missing.onnx"))
    with pytest.raises(onnx.checker.ValidationError):
        onnx.shape_inference.infer_shapes_path(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in str(ours.value)


def test_strict_mode_raises_onnx_inference_error_like_onnx():
    m = _broken_model()
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(m, strict_mode=True)
    with pytest.raises(onnx.shape_inference.InferenceError, match="ShapeInferenceError"):
        compat_onnx.infer_shapes(m, strict_mode=True)
    assert isinstance(compat_onnx.infer_shapes(m), onnx.ModelProto)  # not strict: returned
    assert len(m.graph.value_info) == 0


def test_onnx_infer_shapes_path(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_static_model(), str(src))
    out = tmp_path / "out.onnx"
    compat_onnx.infer_shapes_path(src, out)
    onnx.shape_inference.infer_shapes_path(str(src), str(tmp_path / "theirs.onnx"))
    assert _types(onnx.load(str(out))) == _types(onnx.load(str(tmp_path / "theirs.onnx")))
    compat_onnx.infer_shapes_path(str(src))  # no output: over the input, as onnx does
    assert _types(onnx.load(str(src))) == _types(onnx.load(str(out)))
    broken = tmp_path / "broken.onnx"
    onnx.save(_broken_model(), str(broken))
    with pytest.raises(onnx.shape_inference.InferenceError):
        compat_onnx.infer_shapes_path(broken, tmp_path / "never.onnx", strict_mode=True)
    assert not (tmp_path / "never.onnx").exists()


@pytest.fixture
def ort_tool():
    pytest.importorskip("onnxruntime")
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as Original

    return Original


@pytest.mark.parametrize("name", ["bert_ts", "gpt2_ts"])
def test_ort_infer_shapes_agrees_with_onnxruntime(name, ort_tool, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # onnxruntime's tool may write sym_shape_infer_temp.onnx here
    m = load_stripped(name)
    ours = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    theirs = ort_tool.infer_shapes(m, auto_merge=True)
    assert [_dims(o) for o in ours.graph.output] == [_dims(o) for o in theirs.graph.output]
    ours_t, theirs_t = _types(ours), _types(theirs)
    assert set(ours_t) == set(theirs_t)
    for name_, (dtype, dims) in theirs_t.items():
        assert ours_t[name_][0] == dtype and len(ours_t[name_][1]) == len(dims), name_
        for a, b in zip(ours_t[name_][1], dims):
            if isinstance(b, int) and b > 0:  # where onnxruntime knows a dim, the same (its symbolic dims can
                assert a == b, name_  # differ: it writes 'seq' for a slice of 512 where shapeinfer says min(seq, 512))
    assert len(m.graph.value_info) == 0
    assert {o.name for o in ours.graph.output} <= {vi.name for vi in ours.graph.value_info}  # as onnxruntime's


def test_ort_infer_shapes_on_torch_export_models_where_onnxruntime_fails(ort_tool, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = onnx.load(str(model_path("llama_dynamo")))
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime's tool crashes on torch.export models)
        ort_tool.infer_shapes(m, auto_merge=True)
    ours = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    assert _dims(ours.graph.output[0]) == ["batch", "seq", 1000]


def test_ort_contract_incomplete_and_old_opset():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Mystery", ["x"], ["y"], domain="custom.x")], "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.x", 1)])
    with pytest.raises(Exception, match=r"^Incomplete symbolic shape inference$"):
        SymbolicShapeInference.infer_shapes(m)
    old = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 6)],
    )
    assert SymbolicShapeInference.infer_shapes(old) is None


def test_ort_command_line(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(load_stripped("bert_ts"), str(src))
    out = tmp_path / "out.onnx"
    args = ["--input", str(src), "--output", str(out), "--auto_merge", "--int_max", "100", "--guess_output_rank"]
    r = subprocess.run([sys.executable, "-m", "shapeinfer.compat.onnxruntime", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _dims(onnx.load(str(out)).graph.output[0]) == ["batch", "seq", 64]
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.compat.onnxruntime", "--input", str(tmp_path / "none.onnx")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "error:" in r.stderr and "Traceback" not in r.stderr


def test_if_branches_of_two_types_raise_onnxruntimes_value_error(tmp_path):
    """onnxruntime's own test (test_mismatched_types): a ValueError naming the node and both
    types, from its tool and from the drop-in alike; onnxruntime refuses to load the model."""
    import onnxruntime
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference as Original

    def branch(name: str, dtype: int) -> onnx.GraphProto:
        c = helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, [], [1]))
        return helper.make_graph([c], name, [], [helper.make_tensor_value_info(name, dtype, [])])

    node = helper.make_node(
        "If",
        ["x"],
        ["out"],
        name="if_node",
        then_branch=branch("f", TensorProto.FLOAT),
        else_branch=branch("d", TensorProto.DOUBLE),
    )
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    for tool in (Original, SymbolicShapeInference):
        with pytest.raises(ValueError, match=r"if_node.*FLOAT.*DOUBLE"):
            tool.infer_shapes(model, auto_merge=True)
    with pytest.raises(Exception):  # noqa: B017
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "shapeinfer.compat.onnxruntime",
            "--input",
            str(path),
            "--output",
            str(tmp_path / "o.onnx"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "if_node" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o.onnx").exists()


def _matmulnbits_model(domain: str, out_type: int = TensorProto.UNDEFINED) -> onnx.ModelProto:
    """onnxruntime's own test_matmulnbits model: a 4-bit MatMul of K=10, N=4, blocks of 16."""
    import numpy as np
    from onnx import numpy_helper

    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.integers(0, 255, (4, 1, 8), dtype=np.uint8), "b"),
        numpy_helper.from_array(rng.random(4, dtype=np.float32), "scale"),
        numpy_helper.from_array(rng.integers(0, 255, 4, dtype=np.uint8), "zero_point"),
    ]
    node = helper.make_node(
        "MatMulNBits", ["x", "b", "scale", "zero_point"], ["y"], name="mm", domain=domain, K=10, N=4, block_size=16
    )
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2, 3, 10])],
        [helper.make_tensor_value_info("y", out_type, None)],
        inits,
    )
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(g, opset_imports=opsets)


def test_ort_reads_a_default_domain_contrib_op_by_name_like_onnxruntime_and_says_so(
    ort_tool, caplog, tmp_path, monkeypatch
):
    """onnxruntime's tool reads MatMulNBits without its domain as com.microsoft's (it matches
    ops by name): so does the drop-in, with a warning, and the model keeps its domain. The
    dims are those onnxruntime computes for the com.microsoft node."""
    import numpy as np
    import onnxruntime

    monkeypatch.chdir(tmp_path)
    m = _matmulnbits_model("")
    with caplog.at_level("WARNING", logger="shapeinfer.compat"):
        ours = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    theirs = ort_tool.infer_shapes(m, auto_merge=True)
    assert _types(ours)["y"] == _types(theirs)["y"] == (TensorProto.FLOAT, ("batch", 2, 3, 4))
    assert any("MatMulNBits" in r.getMessage() and "com.microsoft" in r.getMessage() for r in caplog.records)
    assert ours.graph.node[0].domain == "" and [o.domain for o in ours.opset_import] == [""]
    assert len(m.graph.value_info) == 0 and m.graph.node[0].domain == ""
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime itself refuses the default-domain node)
        onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    fixed = _matmulnbits_model("com.microsoft", TensorProto.FLOAT)
    sess = onnxruntime.InferenceSession(fixed.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, {"x": np.zeros((5, 2, 3, 10), np.float32)})
    assert out.shape == (5, 2, 3, 4) and out.dtype == np.float32
    # an op nobody defines stays unknown: the incomplete-inference exception, as before
    m.graph.node[0].op_type = "MatMulNBitz"
    with pytest.raises(Exception, match=r"^Incomplete symbolic shape inference$"):
        SymbolicShapeInference.infer_shapes(m)


def _flag_cases() -> dict[str, onnx.ModelProto]:
    vi = helper.make_tensor_value_info

    def model(node: onnx.NodeProto, *inputs: onnx.ValueInfoProto) -> onnx.ModelProto:
        g = helper.make_graph([node], "g", list(inputs), [vi("y", TensorProto.UNDEFINED, None)])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    f2, i2 = vi("a", TensorProto.FLOAT, [2]), vi("b", TensorProto.INT64, [2])
    return {
        "Add of float and int64": model(helper.make_node("Add", ["a", "b"], ["y"]), f2, i2),
        "Sqrt of int64": model(helper.make_node("Sqrt", ["b"], ["y"]), i2),
        "Relu of two inputs": model(helper.make_node("Relu", ["a", "c"], ["y"]), f2, vi("c", TensorProto.FLOAT, [2])),
        "Add of [2,3] and [4,5]": model(
            helper.make_node("Add", ["a", "c"], ["y"]),
            vi("a", TensorProto.FLOAT, [2, 3]),
            vi("c", TensorProto.FLOAT, [4, 5]),
        ),
        "Transpose perm [0,0]": model(
            helper.make_node("Transpose", ["a"], ["y"], perm=[0, 0]), vi("a", TensorProto.FLOAT, [2, 3])
        ),
        "valid": model(helper.make_node("Relu", ["a"], ["y"]), f2),
    }


@pytest.mark.parametrize("check_type", [False, True])
@pytest.mark.parametrize("strict_mode", [False, True])
@pytest.mark.parametrize("case", list(_flag_cases()))
def test_check_type_and_strict_mode_raise_where_onnx_raises(case, check_type, strict_mode):
    """onnx raises for type and input-count errors with check_type (strict or not), and for
    shape errors with strict_mode: the drop-in raises for the same models under the same flags."""
    m = _flag_cases()[case]

    def raises(fn) -> bool:
        try:
            fn(m, check_type, strict_mode)
        except onnx.shape_inference.InferenceError:
            return True
        return False

    assert raises(compat_onnx.infer_shapes) == raises(onnx.shape_inference.infer_shapes)


def test_a_recursive_function_is_a_validation_error_like_onnx():
    """onnx refuses a model-local function that calls itself with its checker's ValidationError,
    strict or not: so does the drop-in (shapeinfer's G010)."""
    model = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: [ "" : 17, "local" : 1 ]>
        agraph (float[N] X) => (float[N] Y) { Y = local.foo (X) }
        <opset_import: [ "" : 17, "local" : 1 ], domain: "local">
        foo (x) => (y) { y = local.foo (x) }
        """
    )
    for fn in (onnx.shape_inference.infer_shapes, compat_onnx.infer_shapes):
        with pytest.raises(onnx.checker.ValidationError):
            fn(model)


@pytest.mark.parametrize("declared", [[2, "a"], [3, "a"], [2, "a", 1]])
def test_strict_mode_raises_for_declared_shapes_where_onnx_does(declared):
    """A declared output shape that contradicts the inferred one only between symbolic dims
    (``a`` declared where ``a + 3`` is inferred) is not an error to onnx's strict inference; an
    int dim or a rank that differs is. The drop-in raises for the same declarations."""
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [helper.make_node("Concat", ["x", "c"], ["y"], axis=1)],
        "g",
        [vi("x", TensorProto.FLOAT, [2, "a"]), vi("c", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, declared)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    def raises(fn) -> bool:
        try:
            fn(m, strict_mode=True)
        except onnx.shape_inference.InferenceError:
            return True
        return False

    assert raises(compat_onnx.infer_shapes) == raises(onnx.shape_inference.infer_shapes)
    assert raises(compat_onnx.infer_shapes) == (declared != [2, "a"])


def test_ort_reads_initializer_defaults_like_onnxruntimes_tool(ort_tool, tmp_path, monkeypatch):
    """onnxruntime's tool reads a graph input's initializer as a constant in its own rules: so
    does the drop-in (an info G013), and the dims are those onnxruntime computes at the default."""
    import numpy as np
    import onnxruntime

    monkeypatch.chdir(tmp_path)
    m = _defaults_model()
    ours = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    theirs = ort_tool.infer_shapes(m, auto_merge=True)
    assert _types(ours)["y"] == _types(theirs)["y"] == (TensorProto.FLOAT, (2, 3, 4))
    sess = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.zeros((2, 12), np.float32)})[0].shape == (2, 3, 4)


def _negative_slice_model(start: int, end: int, step: int) -> onnx.ModelProto:
    """``y = x[:, start:end:step]`` of ``x[B, M]``, the bounds as initializers."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "M"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [
        helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in [("s", start), ("e", end), ("a", 1), ("k", step)]
    ]
    g = helper.make_graph([helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"])], "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("start", "end", "step", "least"), [(-10, -1, 1, 10), (-1, -10, -1, 9)])
def test_ort_reads_negative_slice_indices_within_the_dim_under_a_visible_guard(start, end, step, least, caplog):
    """onnxruntime's tool writes 9 for ``x[:, -10:-1]`` and ``x[:, -1:-10:-1]`` of width M (its
    own tests expect it): right only when M >= 10 (the reversed slice: M >= 9). compat writes 9
    with exactly that guard, recorded and logged; shapeinfer itself keeps the form right at every
    M. onnxruntime is the oracle for all three."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    from shapeinfer.inference.engine import infer

    m = _negative_slice_model(start, end, step)
    with caplog.at_level("WARNING", logger="shapeinfer.compat"):
        out = SymbolicShapeInference.infer_shapes(m)
    assert _dims(out.graph.output[0]) == ["B", 9]
    assert any(f"{least} <= M" in r.getMessage() and "onnxruntime" in r.getMessage() for r in caplog.records)
    as_ort = infer(m, onnxruntime_conventions=True)
    assert [g.text for g in as_ort.guards()] == [f"{least} <= M"]
    plain = infer(m)
    assert plain.dims("y")[1] != 9 and not plain.guards()

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for width in (1, 5, 9, 10, 12, 40):
        got = sess.run(None, {"x": np.zeros((2, width), np.float32)})[0].shape[1]
        assert D.evaluate(plain.dims("y")[1], {"B": 2, "M": width}) == got
        assert (got == 9) == (width >= least)  # the guard is exactly where compat's 9 holds

    # a range that rules the reading out keeps the clamped form, and no guard
    ranged = infer(m, onnxruntime_conventions=True, dim_ranges={"M": (1, 5)})
    assert not ranged.guards() and ranged.dims("y")[1] != 9


def _einsum_model(eq: str, a: list, b: list) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in (("a", a), ("b", b))]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)], "g", ins, [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_ort_states_an_einsums_output_past_a_contracted_letter_conflict_and_logs_the_error(caplog):
    """onnxruntime's own test_einsum_matmul: ``abc,cde->abde`` with c = 8 and c = 2. The node
    fails at run time (onnxruntime refuses it); compat writes the dims the other letters give,
    as onnxruntime's tool does, and logs the G002; shapeinfer itself leaves the output unknown."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    from shapeinfer import infer

    m = _einsum_model("abc, cde -> abde", [1, "b", 8], [2, 12, "n"])
    with caplog.at_level("WARNING", logger="shapeinfer.compat"):
        out = SymbolicShapeInference.infer_shapes(m)
    assert _dims(out.graph.output[0]) == [1, "b", 12, "n"]
    assert any("G002" in r.getMessage() and "'c'" in r.getMessage() for r in caplog.records)
    plain = infer(m)
    assert plain.dims("y") is None and any(d.code == "G002" for d in plain.diagnostics)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):  # noqa: B017 (the oracle: the node cannot run)
        sess.run(None, {"a": np.zeros((1, 3, 8), np.float32), "b": np.zeros((2, 12, 5), np.float32)})
    # a letter of the output with two sizes: no dim to state, so inference stays incomplete
    with pytest.raises(Exception, match=r"^Incomplete symbolic shape inference$"):
        SymbolicShapeInference.infer_shapes(_einsum_model("ab,ab->ab", [2, 3], [4, 3]))


def test_negative_slice_reading_guards_are_exact_against_onnxruntime():
    """For every (start, end, step) of a grid, and every width M in 1..16: onnxruntime's width
    equals the dim read onnxruntime's way exactly where its guards hold (a guard is never
    stronger than needed, the dim never wrong inside it), and the plain dim everywhere."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    from shapeinfer.inference.engine import infer
    from shapeinfer.symbolic.guards import check

    big = 2**31 - 1
    bounds = [-12, -10, -3, -1, 0, 2, big, -big]
    taken = 0
    for start in bounds:
        for end in bounds:
            for step in (1, 2, -1, -3):
                m = _negative_slice_model(start, end, step)
                plain, read = infer(m), infer(m, onnxruntime_conventions=True)
                if not D.symbols(plain.dims("y")[1]) <= {"M"}:
                    assert read.dims("y")[1] == plain.dims("y")[1]  # unknown (an ambiguous end): no reading
                    continue
                guards = read.guards()
                taken += bool(guards)
                sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                for width in range(1, 17):
                    got = sess.run(None, {"x": np.zeros((1, width), np.float32)})[0].shape[1]
                    at = {"B": 1, "M": width}
                    case = (start, end, step, width)
                    assert D.evaluate(plain.dims("y")[1], at) == got, case
                    holds = all(check(g, at) for g in guards)
                    assert (D.evaluate(read.dims("y")[1], at) == got) == holds or not guards, case
                    if holds:
                        assert D.evaluate(read.dims("y")[1], at) == got, case
    assert taken >= 10  # the reading is taken on a good part of the grid


def _one_node_model(op: str, inputs: list, inits: list, opset: int = 17, **attrs) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    node = helper.make_node(op, [n for n, _, _ in inputs] + [t.name for t in inits], ["y"], **attrs)
    g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _invalid_models() -> dict[str, tuple[onnx.ModelProto, str]]:
    big = (1 << 63) - 1
    scan = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 16]>
        agraph (float[2] in0, float[2] in1, float[3, 2] in2) => (out) {
            out = Scan <num_scan_inputs = 1, body = b (float a, float s0, float s1) => (float c) {
                c = Identity(a)
            }> (in0, in1, in2)
        }
        """
    )
    zero = helper.make_tensor("split", TensorProto.INT32, (), (0,))
    # onnx's test harness makes x's dims unknown with a Reshape of two inputs, which Reshape-1
    # (opset 2) does not take: onnx's checker refuses that, its inference passes it to the Pad
    seed = [("seed", TensorProto.FLOAT, []), ("to", TensorProto.INT64, [None])]
    pad = helper.make_graph(
        [helper.make_node("Reshape", ["seed", "to"], ["x"]), helper.make_node("Pad", ["x"], ["y"], pads=[big, 1])],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in seed],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        value_info=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
    )
    return {
        "pad-2 total padding past a Reshape-1 of two inputs": (
            helper.make_model(pad, opset_imports=[helper.make_opsetid("", 2)]),
            "overflow",
        ),
        "scan state vars past the body's outputs": (scan, "loop state variables"),
        "split-to-sequence zero scalar": (
            _one_node_model("SplitToSequence", [("x", TensorProto.FLOAT, [6, 4])], [zero]),
            "greater than zero",
        ),
        "space-to-depth block area": (
            _one_node_model("SpaceToDepth", [("x", TensorProto.FLOAT, [1, 1, 1, 1])], [], blocksize=1 << 32),
            "overflow",
        ),
        "depth-to-space block area": (
            _one_node_model("DepthToSpace", [("x", TensorProto.FLOAT, [1, 1, 1, 1])], [], blocksize=1 << 32),
            "overflow",
        ),
        "conv effective kernel": (
            _one_node_model(
                "Conv", [("x", TensorProto.FLOAT, [1, 1, 5]), ("w", TensorProto.FLOAT, [1, 1, 2])], [], dilations=[big]
            ),
            "overflow",
        ),
    }


@pytest.mark.parametrize("case", list(_invalid_models()))
def test_strict_mode_raises_with_onnxs_words_where_onnx_raises(case):
    """onnx's own strict inference is the oracle: it raises for each of these invalid models
    with words its tests match; compat raises the same exception type with the same words,
    and shapeinfer's diagnostic is an error (onnxruntime refuses every one of them)."""
    from shapeinfer.inference.engine import infer

    model, words = _invalid_models()[case]
    with pytest.raises(onnx.shape_inference.InferenceError, match=words):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
    with pytest.raises(onnx.shape_inference.InferenceError, match=words):
        compat_onnx.infer_shapes(model, strict_mode=True)
    assert any(d.severity == "error" and words in d.message for d in infer(model).diagnostics)
    ort = pytest.importorskip("onnxruntime")
    with pytest.raises(Exception):  # noqa: B017 (the runtime refuses the model)
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_constant_of_shape_of_int32_has_no_dims_as_onnx_says():
    """ConstantOfShape takes int64 only: an int32 input makes the node invalid (onnxruntime
    refuses it). onnx's non-strict inference writes no shape; nor does compat, and the
    engine's error says why (before, it read the int32 values as the dims)."""
    import numpy as np
    from onnx import numpy_helper

    x = numpy_helper.from_array(np.array([4, 3], dtype=np.int32), name="x")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph([helper.make_node("ConstantOfShape", ["x"], ["y"])], "g", [], [y], [x]))
    assert not onnx.shape_inference.infer_shapes(m).graph.output[0].type.tensor_type.HasField("shape")
    out = compat_onnx.infer_shapes(m)
    assert not out.graph.output[0].type.tensor_type.HasField("shape")
    with pytest.raises(onnx.shape_inference.InferenceError):
        compat_onnx.infer_shapes(m, strict_mode=True)
    ort = pytest.importorskip("onnxruntime")
    with pytest.raises(Exception):  # noqa: B017
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_fresh_symbols_are_spelled_as_the_originals_spell_theirs():
    """onnx and onnxruntime name a dim they cannot determine unk__<n> (onnx's own
    test_array_feature_extractor expects it): the drop-ins write shapeinfer's fresh symbols that
    way, past any unk__<n> the model already uses, inside expressions too; shapeinfer itself
    keeps unk_<n>; the same symbol stays the same in every tensor."""
    from shapeinfer.inference.engine import infer

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["unk__0", 4])
    to = helper.make_tensor_value_info("to", TensorProto.INT64, [1])
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["t"]),
        helper.make_node("Concat", ["t", "t"], ["c"], axis=0),
        helper.make_node("Reshape", ["x", "to"], ["r"]),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in ("c", "r")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x, to], outs), opset_imports=[helper.make_opsetid("", 17)])
    plain = infer(m)
    assert [str(d) for d in plain.dims("c")] == ["2*unk_0", "2"]
    for out in (compat_onnx.infer_shapes(m), SymbolicShapeInference.infer_shapes(m)):
        types = _types(out)
        assert types["c"][1] == ("2*unk__1", 2)  # unk__0 is the model's own input symbol
        assert types["t"][1] == ("unk__1", 2)
        assert types["r"][1] == ("unk__2",)
        assert _dims(out.graph.input[0]) == ["unk__0", 4]


def test_an_initializer_of_undefined_type_is_unknown_as_onnx_leaves_it():
    """An initializer whose element type is UNDEFINED is unreadable (E014; onnxruntime refuses
    the model): neither its type nor its dims are known, so a ConstantOfShape of it has no
    dims, as onnx's non-strict inference leaves it (before, its declared dims gave a rank)."""
    import numpy as np
    from onnx import numpy_helper

    from shapeinfer.inference.engine import infer

    x = numpy_helper.from_array(np.array([4, 3], dtype=np.int64), name="x")
    x.data_type = TensorProto.UNDEFINED
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph([helper.make_node("ConstantOfShape", ["x"], ["y"])], "g", [], [y], [x]))
    assert not onnx.shape_inference.infer_shapes(m).graph.output[0].type.tensor_type.HasField("shape")
    assert not compat_onnx.infer_shapes(m).graph.output[0].type.tensor_type.HasField("shape")
    res = infer(m)
    assert res.dims("y") is None and any(d.code == "E014" for d in res.diagnostics)
    ort = pytest.importorskip("onnxruntime")
    with pytest.raises(Exception):  # noqa: B017
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_ort_drop_in_says_why_inference_is_incomplete(caplog):
    """A Reshape of 6 elements into [4, 2] fails at every size; onnxruntime's tool writes [4, 2]
    and the drop-in, leaving it unknown, raised onnxruntime's bare "Incomplete symbolic shape
    inference" with nothing said at the default verbosity. The error is logged (a warning)
    before the exception, so the caller learns which node cannot run."""
    import numpy as np
    from onnx import numpy_helper

    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"], name="bad"), helper.make_node("Relu", ["y"], ["z"])]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([4, 2], np.int64), "s")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    incomplete = pytest.raises(Exception, match=r"^Incomplete symbolic shape inference$")
    with caplog.at_level("WARNING", logger="shapeinfer.compat"), incomplete:
        SymbolicShapeInference.infer_shapes(m)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("bad" in s and "6" in s and "[4, 2]" in s for s in said), said
