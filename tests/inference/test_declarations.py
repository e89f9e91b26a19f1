"""Declarations are claims, not facts (issue 21, case 1): a declared type fills only what
inference does not know, using it is visible (G013), a contradiction is G006 in ``infer`` as in
``lint``, and ``-o`` writes the inferred type. onnxruntime runs the written models: what they
declare must be what it computes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.cli.main import main as cli_main
from shapeinfer.io.annotate import annotate
from shapeinfer.symbolic import dims as D

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
ort = pytest.importorskip("onnxruntime")


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, value_info=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, value_info=list(value_info))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def codes(r, code):
    return [d for d in r.diagnostics if d.code == code]


def declared_dims(m: onnx.ModelProto, name: str) -> list:
    for v in list(m.graph.value_info) + list(m.graph.output):
        if v.name == name:
            return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]
    raise KeyError(name)


def run(m: onnx.ModelProto, feeds: dict, outputs: list[str]) -> dict:
    """Run ``m`` in onnxruntime with every listed tensor made a graph output."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    have = {o.name for o in m.graph.output}
    for name in outputs:
        if name not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(name))
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def relu_declared_wrong() -> onnx.ModelProto:
    """x[N, 4] -> Relu -> y, with y declared [N, 5]."""
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F, ["N", 4])], [vi("y", F, ["N", 5])])


def test_contradicted_output_is_g006_in_infer_and_the_file_gets_the_inferred_shape(tmp_path):
    m = relu_declared_wrong()
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    (g006,) = codes(r, "G006")
    assert g006.severity == "error" and g006.tensor == "y" and "[N, 5]" in g006.message
    assert r.dims("y") == (D.sym("N"), 4)
    p, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(m, p)
    res = CliRunner().invoke(cli_main, [str(p), "--fail-on", "error", "-o", str(out)])
    assert res.exit_code == 1 and "G006" in res.output
    written = onnx.load(out)
    assert declared_dims(written, "y") == ["N", 4]
    got = run(written, {"x": np.ones((3, 4), np.float32)}, ["y"])
    assert got["y"].shape == (3, 4)


def test_lint_and_infer_report_the_same_g006():
    from shapeinfer.lint import lint_model

    m = relu_declared_wrong()
    found = [f for f in lint_model(m) if f.code == "G006"]
    r = shapeinfer.infer(relu_declared_wrong())
    assert [f.message for f in found] == [d.message for d in codes(r, "G006")]


def test_constant_declared_as_scalar_is_written_as_its_value_shape(tmp_path):
    """onnxruntime-genai's builder declares 1-D Constant outputs as scalars: the Constant's
    shape is known exactly, so the declaration is G006 and the file gets [1] / [3]."""
    one = helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array([1], np.int64), "v1"))
    three = helper.make_node(
        "Constant", [], ["shape3"], value=numpy_helper.from_array(np.array([0, -1, 2], np.int64), "v3")
    )
    nodes = [
        one,
        three,
        helper.make_node("Add", ["n", "one"], ["n1"]),
        helper.make_node("Reshape", ["x", "shape3"], ["y"]),
    ]
    m = model(
        nodes,
        [vi("x", F, ["b", "s", 4]), vi("n", I64, [1])],
        [vi("y", F, ["b", None, 2]), vi("n1", I64, [1])],
        value_info=[vi("one", I64, []), vi("shape3", I64, [])],
    )
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    bad = {d.tensor for d in codes(r, "G006") if d.severity == "error"}
    assert bad == {"one", "shape3"}
    written = annotate(r)
    assert declared_dims(written, "one") == [1] and declared_dims(written, "shape3") == [3]
    feeds = {"x": np.ones((2, 3, 4), np.float32), "n": np.array([5], np.int64)}
    got = run(written, feeds, ["one", "shape3"])
    assert got["one"].shape == (1,) and got["shape3"].shape == (3,)


def merged_decoder() -> onnx.ModelProto:
    """optimum's merged decoder in miniature: ``If(use_cache_branch)``, the cache branch grows
    the past by one step, the other starts from the new tokens; ``present`` declared as
    ``past + 1`` (true in one branch only)."""
    step = helper.make_node("Slice", ["new", "z", "o", "o"], ["step"])  # one row of the new tokens
    cache = helper.make_graph(
        [helper.make_node("Concat", ["past", "step"], ["grown"], axis=1)],
        "with_past",
        [],
        [vi("grown", F, None)],
    )
    fresh = helper.make_graph(
        [helper.make_node("Identity", ["new"], ["started"])], "no_past", [], [vi("started", F, None)]
    )
    consts = [
        helper.make_node("Constant", [], ["z"], value=numpy_helper.from_array(np.array([0], np.int64), "z_v")),
        helper.make_node("Constant", [], ["o"], value=numpy_helper.from_array(np.array([1], np.int64), "o_v")),
    ]
    nodes = [
        *consts,
        step,
        helper.make_node("If", ["use_cache_branch"], ["present"], then_branch=cache, else_branch=fresh),
    ]
    return model(
        nodes,
        [vi("past", F, ["batch", "past_len", 8]), vi("new", F, ["batch", "seq", 8]), vi("use_cache_branch", B, [1])],
        [vi("present", F, ["batch", "past_len + 1", 8])],
    )


def test_merged_branches_do_not_adopt_a_one_branch_declaration(tmp_path):
    m = merged_decoder()
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    present = r.dims("present")
    assert present[0] == D.sym("batch") and present[2] == 8
    assert present[1] != D.parse("past_len + 1")  # one of past_len + 1 and seq: not known
    written = annotate(r)
    feeds = {"past": np.ones((2, 5, 8), np.float32), "new": np.ones((2, 3, 8), np.float32)}
    for flag, length in ((True, 6), (False, 3)):
        got = run(written, {**feeds, "use_cache_branch": np.array([flag])}, ["present"])
        assert got["present"].shape == (2, length, 8)
    assert declared_dims(written, "present")[1] not in ("past_len + 1", 6, 3)


def test_a_declaration_every_branch_agrees_with_is_proven_not_assumed():
    """Both branches give 4 rows after a Slice to 4: the declared 4 holds at each alternative."""
    then_g = helper.make_graph([helper.make_node("Identity", ["a"], ["ta"])], "t", [], [vi("ta", F, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["b"], ["eb"])], "e", [], [vi("eb", F, None)])
    nodes = [
        helper.make_node("If", ["c"], ["m"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Slice", ["m", "z", "four"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "z"),
        numpy_helper.from_array(np.array([4], np.int64), "four"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [vi("a", F, [6]), vi("b", F, [9]), vi("c", B, [])],
        [vi("y", F, [4])],
        initializer=inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    r = shapeinfer.infer(m)
    assert r.dims("y") == (4,)
    assert not codes(r, "G013") and not codes(r, "G006")


def test_using_a_declaration_is_visible_as_g013():
    """NonZero's count is data-dependent: the declared dim fills it, and says so."""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz"), helper.make_node("Identity", ["nz"], ["y"])]
    m = model(nodes, [vi("x", F, [2, 3])], [vi("y", I64, [2, None])], value_info=[vi("nz", I64, [2, "count"])])
    r = shapeinfer.infer(m)
    (g013,) = codes(r, "G013")
    assert g013.severity == "info" and g013.tensor == "nz" and "count" in g013.message
    assert r.dims("y") == (2, D.sym("count"))


def test_bound_symbols_do_not_contradict_their_declarations():
    """With ``bind``, a declared ``[N, 4]`` is read at the binding: no G006."""
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, ["N", 4])], [vi("y", F, ["N", 4])])
    r = shapeinfer.infer(m, bind={"N": 3})
    assert not codes(r, "G006") and r.dims("y") == (3, 4)


def test_a_declared_symbol_no_input_has_is_not_checkable():
    """optimum's decoder_model.onnx (no past inputs) declares ``present`` as
    ``past_sequence_length + sequence_length``: that symbol may be 0, so nothing contradicts."""
    m = model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", F, ["batch", "seq", 8])],
        [vi("y", F, ["batch", "past_sequence_length + seq", 8])],
    )
    r = shapeinfer.infer(m)
    assert not codes(r, "G006")
    assert r.dims("y") == (D.sym("batch"), D.sym("seq"), 8)
    assert declared_dims(annotate(r), "y") == ["batch", "seq", 8]  # the inferred dim is written


def test_onnx_aborting_on_a_model_does_not_take_inference_down(tmp_path):
    """A declaration that contradicts inference asks onnx's own inference whether its checker
    refuses the model; on a negative dim onnx aborts the process (fuzz_cli, seed 146, case 80:
    optimize died). It runs apart: the contradiction stands, as for any failure of onnx's."""
    import subprocess
    import sys

    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    import shapeinfer

    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-5, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 7])],
        [i64("s", [0]), i64("e", [1]), i64("a", [0])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    src = tmp_path / "neg.onnx"
    onnx.save(m, src)
    code = "import onnx, sys; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]), True, True)"
    assert subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True).returncode < 0  # it aborts
    res = shapeinfer.infer(m)
    assert any(d.code == "G006" for d in res.diagnostics)


def test_a_declared_number_is_not_taken_for_a_broadcast_of_an_input_dim_and_an_unknown():
    """``y = r + x`` with ``x: [batch, 4, height, width]`` and ``r`` a Resize by float scales
    inference cannot follow: y's spatial dims are height and width wherever they are at least 2
    (the unknown side broadcasts), the unknown side's at 1. The graph output declares
    ``[batch, 4, 48, 40]`` (a static export's claim): taking 48 for that dim would say y is 48
    high at every height, and onnxruntime gives 96 at a height of 96. A broadcast result is one
    of its two sides (a join), which a declaration never replaces."""
    scales = [("s1", [1, 1, 0.6666666865348816, 1.125]), ("s2", [1, 1, 1.5, 0.8888888955116272])]
    g = helper.make_graph(
        [
            helper.make_node("Resize", ["x", "", "s1"], ["r1"], mode="linear"),
            helper.make_node("Resize", ["r1", "", "s2"], ["r2"], mode="linear"),
            helper.make_node("Add", ["r2", "x"], ["y"]),
        ],
        "g",
        [vi("x", F, ["batch", 4, "height", "width"])],
        [vi("y", F, ["batch", 4, 48, 40])],
        [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in scales],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for hw in [(48, 40), (96, 80), (24, 32)]:
        assert sess.run(None, {"x": np.zeros((1, 4, *hw), np.float32)})[0].shape == (1, 4, *hw)
    y = shapeinfer.infer(m).facts["y"].shape
    assert y[:2] == (D.sym("batch"), 4) and 48 not in y and 40 not in y
