"""reshape-v1-to-v5 on legacy models built at default-domain opsets 1 to 4.

The originals run in onnx's reference evaluator, taught Reshape-1 (and Gemm-1, Cast-1) as
small custom ops; the rewritten models must be valid at their new opset and compute the same,
in the reference evaluator at opset 5 and in onnxruntime after lifting to 13.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnx.inliner
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper, version_converter
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

import shapeinfer
from shapeinfer.base import isolated
from shapeinfer.passes import OptimizeError, PassContext, optimize_with_report, run_pass

ort = pytest.importorskip("onnxruntime")

OPSETS = [1, 2, 3, 4]


class Reshape(OpRun):
    """Reshape-1: the target is the ``shape`` attribute; 0 copies the input dim."""

    op_domain = ""

    def _run(self, data, shape=None, consumed_inputs=None, allowzero=None):
        dims = [data.shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return (data.reshape(dims),)


class Gemm(OpRun):
    """Gemm-1 (``broadcast`` attribute), which the reference evaluator lacks."""

    op_domain = ""

    def _run(self, a, b, c=None, alpha=None, beta=None, transA=None, transB=None, broadcast=None):
        a = a.T if transA else a
        b = b.T if transB else b
        y = (1.0 if alpha is None else alpha) * (a @ b)
        if c is not None:
            y = y + (1.0 if beta is None else beta) * c
        return (y.astype(a.dtype),)


class Cast(OpRun):
    """Cast-1, whose ``to`` is a type name."""

    op_domain = ""

    def _run(self, x, to=None, saturate=None, round_mode=None):
        if isinstance(to, (str, bytes)):
            to = T.DataType.Value(to.decode() if isinstance(to, bytes) else to)
        return (x.astype(onnx.helper.tensor_dtype_to_np_dtype(to)),)


def reshape1(x: str, y: str, shape: list[int], **kw) -> onnx.NodeProto:
    n = h.make_node("Reshape", [x], [y], **kw)
    n.attribute.append(h.make_attribute("shape", shape, attr_type=onnx.AttributeProto.INTS))
    return n


def legacy(graph: onnx.GraphProto, opset: int, **kw) -> onnx.ModelProto:
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], **kw)
    onnx.checker.check_model(m)
    return m


def with_inputs(inits: list[onnx.TensorProto]) -> list[onnx.ValueInfoProto]:
    """IR 3: initializers are graph inputs too."""
    return [h.make_tensor_value_info(t.name, t.data_type, t.dims) for t in inits]


def cnn(opset: int) -> onnx.ModelProto:
    """Conv -> Relu -> MaxPool -> Reshape-1 [0, -1] (consumed_inputs) -> MatMul and Gemm."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((36, 5)).astype(np.float32), "W2"),
        numpy_helper.from_array(rng.standard_normal((36, 6)).astype(np.float32), "W3"),
        numpy_helper.from_array(rng.standard_normal((6,)).astype(np.float32), "B3"),
    ]
    nodes = [
        h.make_node("Conv", ["x", "W"], ["c"], kernel_shape=[3, 3]),
        h.make_node("Relu", ["c"], ["r"], consumed_inputs=[0]),
        h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        reshape1("p", "f", [0, -1], consumed_inputs=[0]),
        h.make_node("MatMul", ["f", "W2"], ["y1"]),
        h.make_node("Gemm", ["f", "W3", "B3"], ["y2"], broadcast=1),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3, 8, 8])
    outs = [h.make_tensor_value_info("y1", T.FLOAT, [2, 5]), h.make_tensor_value_info("y2", T.FLOAT, [2, 6])]
    return legacy(h.make_graph(nodes, "cnn", [x, *with_inputs(inits)], outs, inits), opset, ir_version=3)


def chain(opset: int) -> onnx.ModelProto:
    """Reshape-1 four times, the last to a scalar target []."""
    nodes = [
        reshape1("x", "a", [0, -1]),
        reshape1("a", "b", [-1]),
        reshape1("b", "c", [1, 1]),
        reshape1("c", "y", []),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 1, 1])
    y = h.make_tensor_value_info("y", T.FLOAT, [])
    return legacy(h.make_graph(nodes, "chain", [x], [y]), opset, ir_version=3)


def branches(opset: int) -> onnx.ModelProto:
    """Reshape-1 inside both branches of an If (different targets; If before 11 wants one shape)."""
    then = h.make_graph(
        [reshape1("x", "t", [0, -1], consumed_inputs=[0])],
        "then",
        [],
        [h.make_tensor_value_info("t", T.FLOAT, [2, 12])],
    )
    els = h.make_graph(
        [h.make_node("Neg", ["x"], ["n"]), reshape1("n", "e", [-1, 12])],
        "else",
        [],
        [h.make_tensor_value_info("e", T.FLOAT, [2, 12])],
    )
    node = h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els)
    ins = [h.make_tensor_value_info("cond", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])]
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 12])
    return legacy(h.make_graph([node], "branches", ins, [y]), opset, ir_version=3)


def in_function(opset: int) -> onnx.ModelProto:
    """Reshape-1 inside a model-local function."""
    f = h.make_function("local", "Flat", ["a"], ["b"], [reshape1("a", "b", [0, -1])], [h.make_opsetid("", opset)])
    call = h.make_node("Flat", ["x"], ["y"], domain="local")
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 12])
    return h.make_model(
        h.make_graph([call], "fn", [x], [y]),
        opset_imports=[h.make_opsetid("", opset), h.make_opsetid("local", 1)],
        functions=[f],
        ir_version=8,
    )


def feeds_for(name: str) -> list[dict]:
    rng = np.random.default_rng(3)
    if name == "cnn":
        return [{"x": rng.standard_normal((2, 3, 8, 8)).astype(np.float32)}]
    if name == "chain":
        return [{"x": np.array([[[3.5]]], np.float32)}]
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    if name == "branches":
        return [{"cond": np.array(True), "x": x}, {"cond": np.array(False), "x": x}]
    return [{"x": x}]


BUILDERS = {"cnn": cnn, "chain": chain, "branches": branches, "in_function": in_function}


def reference(model: onnx.ModelProto, feeds: dict, ops: list) -> list:
    # The evaluator runs functions without the custom ops: inline them first.
    return ReferenceEvaluator(onnx.inliner.inline_local_functions(model), new_ops=ops).run(None, feeds)


def reshapes(model: onnx.ModelProto):
    def walk(g):
        for n in g.node:
            if n.op_type == "Reshape":
                yield n
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from walk(a.g)

    yield from walk(model.graph)
    for f in model.functions:
        for n in f.node:
            if n.op_type == "Reshape":
                yield n


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(BUILDERS))
def test_legacy_reshape_comes_out_valid_at_opset_5_and_computes_the_same(name, opset):
    m = BUILDERS[name](opset)
    out, report = optimize_with_report(m)
    onnx.checker.check_model(out, full_check=True)
    assert report.opset_before == opset and report.opset_after == 5
    changes = next(p for p in report.passes if p.name == "reshape-v1-to-v5").changes
    assert changes["reshapes rewritten"] == sum(1 for _ in reshapes(m))
    for n in reshapes(out):
        assert len(n.input) == 2 and not [a.name for a in n.attribute if a.name in ("shape", "consumed_inputs")]
    for feeds in feeds_for(name):
        want = reference(m, feeds, [Reshape, Gemm])
        got = reference(out, feeds, [Gemm, Cast])
        for a, b in zip(want, got):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(BUILDERS))
def test_lifted_to_13_runs_in_onnxruntime_with_the_same_outputs(name, opset):
    m = BUILDERS[name](opset)
    out = shapeinfer.optimize(m, target_opset=13)
    onnx.checker.check_model(out, full_check=True)
    assert [o.version for o in out.opset_import if o.domain == ""] == [13]
    sess = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    for feeds in feeds_for(name):
        want = reference(m, feeds, [Reshape, Gemm])
        for a, b in zip(want, sess.run(None, feeds)):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def looped(opset: int) -> onnx.ModelProto:
    """Reshape-1 three times in a Loop body: on the carried value and on a scan output."""
    body = h.make_graph(
        [
            reshape1("v", "flat", [-1]),
            h.make_node("Add", ["flat", "flat"], ["dbl"]),
            reshape1("dbl", "v_out", [2, 3, 4]),
            h.make_node("Identity", ["cond"], ["cond_out"]),
            reshape1("v_out", "scan_out", [-1, 4]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond", T.BOOL, []),
            h.make_tensor_value_info("v", T.FLOAT, [2, 3, 4]),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_value_info("v_out", T.FLOAT, [2, 3, 4]),
            h.make_tensor_value_info("scan_out", T.FLOAT, [6, 4]),
        ],
    )
    ins = [
        h.make_tensor_value_info("n", T.INT64, []),
        h.make_tensor_value_info("c", T.BOOL, []),
        h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4]),
    ]
    outs = [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 4]), h.make_tensor_value_info("ys", T.FLOAT, ["k", 6, 4])]
    node = h.make_node("Loop", ["n", "c", "x"], ["y", "ys"], body=body)
    return legacy(h.make_graph([node], "looped", ins, outs), opset, ir_version=3)


@pytest.mark.parametrize("opset", OPSETS)
def test_reshape1_in_a_loop_body(opset):
    m = looped(opset)
    feeds = {"n": np.array(3, np.int64), "c": np.array(True), "x": np.arange(24, dtype=np.float32).reshape(2, 3, 4)}
    want = reference(m, feeds, [Reshape])
    out = shapeinfer.optimize(m)
    onnx.checker.check_model(out, full_check=True)
    assert sum(1 for _ in reshapes(out)) == 3 and all(len(n.input) == 2 for n in reshapes(out))
    for a, b in zip(want, reference(out, feeds, [])):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    lifted = shapeinfer.optimize(m, target_opset=13)
    onnx.checker.check_model(lifted, full_check=True)
    y, ys = ort.InferenceSession(lifted.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_array_equal(y, want[0])
    # onnxruntime stacks scan outputs per iteration, as the spec says ([3, 6, 4]); the
    # reference evaluator concatenates them ([18, 4]). The values agree.
    assert ys.shape == (3, 6, 4)
    np.testing.assert_array_equal(ys.reshape(-1), want[1].reshape(-1))


def test_onnx_converter_alone_fails_on_reshape1_into_gemm_where_shapes_make_it_work():
    m = cnn(3)
    with pytest.raises(Exception, match="Shape of input"):
        version_converter.convert_version(m, 13)
    out = shapeinfer.optimize(m, passes=["reshape-v1-to-v5"], target_opset=13)
    onnx.checker.check_model(out, full_check=True)


def test_opset_5_and_later_models_are_unchanged():
    node = h.make_node("Reshape", ["x", "t"], ["y"])
    t = numpy_helper.from_array(np.array([0, -1], np.int64), "t")
    g = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 12])],
        [t],
    )
    for opset in (5, 13, 17):
        m = legacy(g, opset, ir_version=8)
        out, changes = run_pass("reshape-v1-to-v5", m, PassContext())
        assert not any(changes.values())
        assert out.SerializeToString() == m.SerializeToString()


def test_target_opset_below_the_model_is_refused():
    """The API's message names the argument as the API spells it (it said `--target-opset 3`);
    the command line's names the flag."""
    with pytest.raises(OptimizeError, match="only lifting") as e:
        shapeinfer.optimize(cnn(4), target_opset=3)
    assert str(e.value).startswith("target_opset=3 is below the model's opset 5")
    assert e.value.flag_message().startswith("--target-opset 3 is below the model's opset 5")


@pytest.mark.skipif(not isolated.ENABLED, reason="the converter runs in process where the platform cannot fork")
def test_target_opset_on_a_model_the_converter_aborts_on_is_an_error_not_a_crash(tmp_path):
    """onnx's version converter aborts the process (a ``std::clamp`` assertion, exit 134) on a
    Slice of an AveragePool whose output size is negative (width 1, kernel 3): a model that
    cannot run. The lift says so instead, nothing written; the process lives on."""
    g = h.make_graph(
        [
            h.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3], auto_pad="VALID"),
            h.make_node("Slice", ["a", "s", "e", "ax"], ["y"]),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 1])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [h.make_tensor(n, T.INT64, [1], [v]) for n, v in (("s", 0), ("e", 1), ("ax", 2))],
    )
    model = tmp_path / "m.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8), model)
    with pytest.raises(OptimizeError, match=r"cannot lift opset 13 to 21: it crashed \(signal 6\)"):
        optimize_with_report(str(model), target_opset=21)
    cmd = ["optimize", str(model), "--target-opset", "21", "-o", str(tmp_path / "o.onnx")]
    r = subprocess.run([sys.executable, "-m", "shapeinfer.cli", *cmd], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "it crashed (signal 6)" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o.onnx").exists()


def _with_parts(m: onnx.ModelProto) -> onnx.ModelProto:
    """``m`` with the parts onnx's version converter drops: a graph metadata entry, a
    quantization annotation and a sparse initializer no node reads."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    m.graph.metadata_props.add(key="owner", value="team")
    qa = m.graph.quantization_annotation.add(tensor_name="x")
    qa.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="W")
    sp = m.graph.sparse_initializer.add()
    sp.values.CopyFrom(numpy_helper.from_array(np.array([1.0], np.float32), "unused_sparse"))
    sp.indices.CopyFrom(numpy_helper.from_array(np.array([0], np.int64), "unused_sparse_idx"))
    sp.dims.extend([4])
    return m


def _parts(m: onnx.ModelProto) -> tuple:
    g = m.graph
    return (list(g.metadata_props), list(g.quantization_annotation), list(g.sparse_initializer))


@pytest.mark.parametrize("opset", [3, 4])
def test_a_lift_keeps_what_the_converter_drops_and_no_opset_changes(opset):
    """The graph's metadata, quantization annotations and unused sparse initializers survive a
    lift by onnx's converter (a model below opset 4 in any optimize, --target-opset in any),
    as they survive every other pass."""
    m = _with_parts(cnn(opset))
    out = shapeinfer.optimize(m, target_opset=13)
    assert max(o.version for o in out.opset_import if o.domain in ("", "ai.onnx")) == 13
    assert _parts(out) == _parts(m)


def test_a_lift_of_a_model_with_training_info_is_refused():
    """The converter drops training_info, whose graphs would run at the new opset unconverted
    if kept: the lift is refused, nothing is written."""
    m = cnn(4)
    m.training_info.add().algorithm.CopyFrom(h.make_graph([h.make_node("Identity", ["x"], ["x2"])], "algo", [], []))
    with pytest.raises(OptimizeError, match="training_info"):
        shapeinfer.optimize(m, target_opset=13)


def roi_align(opset: int, *, inside_if: bool = False) -> onnx.ModelProto:
    """RoiAlign (onnxruntime 1.32 has CPU kernels for RoiAlign-10 and -16, none for -22) over a
    Relu, at ``opset``; ``inside_if``: in the then branch of an If."""
    ra = h.make_node("RoiAlign", ["r", "rois", "idx"], ["y"], output_height=2, output_width=2)
    nodes = [h.make_node("Relu", ["x"], ["r"])]
    if inside_if:
        branch = h.make_graph([ra], "then", [], [h.make_tensor_value_info("y", T.FLOAT, None)])
        other = h.make_graph(
            [h.make_node("Constant", [], ["z"], value=numpy_helper.from_array(np.zeros((3, 2, 2, 2), np.float32)))],
            "else",
            [],
            [h.make_tensor_value_info("z", T.FLOAT, None)],
        )
        nodes.append(h.make_node("If", ["cond"], ["out"], then_branch=branch, else_branch=other))
    else:
        nodes.append(h.make_node("Identity", ["y"], ["out"]))
        nodes.insert(1, ra)
    ins = [
        h.make_tensor_value_info("x", T.FLOAT, [1, 2, 8, 8]),
        h.make_tensor_value_info("rois", T.FLOAT, [3, 4]),
        h.make_tensor_value_info("idx", T.INT64, [3]),
    ] + ([h.make_tensor_value_info("cond", T.BOOL, [])] if inside_if else [])
    g = h.make_graph(nodes, "g", ins, [h.make_tensor_value_info("out", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def _roi_feeds(inside_if: bool) -> dict:
    rng = np.random.default_rng(0)
    feeds = {
        "x": rng.random((1, 2, 8, 8), dtype=np.float32),
        "rois": np.array([[0, 0, 4, 4], [1, 1, 7, 7], [2, 0, 6, 3]], np.float32),
        "idx": np.zeros(3, np.int64),
    }
    return {**feeds, "cond": np.array(True)} if inside_if else feeds


@pytest.mark.parametrize("inside_if", [False, True])
def test_a_lift_onnxruntime_has_no_kernel_for_is_refused(tmp_path, inside_if):
    """optimize --target-opset 22 lifted torchvision's Mask R-CNN (RoiAlign-16) to RoiAlign-22,
    which onnxruntime 1.32 refuses (fuzz seed 148, case 717). The lift is refused, naming the op
    and the highest opset that keeps its kernel; that opset's result runs as the input does;
    --force (``runtime_check=False``) lifts anyway, and onnxruntime refuses what it writes."""
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    src = tmp_path / "roi.onnx"
    onnx.save(roi_align(16, inside_if=inside_if), src)
    feeds = _roi_feeds(inside_if)
    want = ort.InferenceSession(str(src)).run(None, feeds)

    with pytest.raises(OptimizeError, match=r"no CPU kernel for RoiAlign-22: .* at opset 21 it has it") as e:
        shapeinfer.optimize(str(src), target_opset=22)
    assert str(e.value).startswith("target_opset=22: ") and str(e.value).endswith("(runtime_check=False lifts anyway)")
    r = CliRunner().invoke(main, ["optimize", str(src), "--target-opset", "22", "-o", str(tmp_path / "o.onnx")])
    assert r.exit_code == 2 and "RoiAlign-22" in r.output and not (tmp_path / "o.onnx").exists()
    assert "--target-opset 22: " in r.output and "(--force lifts anyway)" in r.output

    at21 = shapeinfer.optimize(str(src), target_opset=21)
    got = ort.InferenceSession(at21.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)

    forced = tmp_path / "forced.onnx"
    r = CliRunner().invoke(main, ["optimize", str(src), "--target-opset", "22", "--force", "-o", str(forced)])
    assert r.exit_code == 0, r.output
    with pytest.raises(Exception, match="RoiAlign"):
        ort.InferenceSession(str(forced))


def test_a_lift_of_a_model_onnxruntime_refuses_already_is_not_refused():
    """The check is about making things worse: beside RoiAlign-16, an ImageDecoder-20, which
    onnxruntime 1.32 has no kernel for, so it refuses the input; the lift to 22 is done as asked."""
    m = roi_align(20)
    m.graph.node.append(h.make_node("ImageDecoder", ["img"], ["pixels"]))
    m.graph.input.append(h.make_tensor_value_info("img", T.UINT8, [None]))
    m.graph.output.append(h.make_tensor_value_info("pixels", T.UINT8, None))
    with pytest.raises(Exception, match="ImageDecoder"):
        ort.InferenceSession(m.SerializeToString())
    lifted = shapeinfer.optimize(m, target_opset=22)
    assert lifted.opset_import[0].version == 22


# ------------------------------------------------------------------------ constants in subgraphs
# Before IR 4 a subgraph holds no initializer, and below opset 9 Constant takes float types
# only: an int64 constant the passes make inside an If branch (a folded Shape, a Reshape target)
# must live in the main graph, read from the branch as an outer-scope value.


def gathered(opset: int, ir: int) -> onnx.ModelProto:
    """If branches: Gather(Reshape(x, [24]), Shape(x)): the Shape folds to an int64 constant
    inside the branch. Reshape-1 below opset 5, else Reshape-5 with a main-graph target."""
    inits = [] if opset < 5 else [numpy_helper.from_array(np.array([24], np.int64), "flat")]

    def branch(name: str, op: str) -> onnx.GraphProto:
        if opset < 5:
            flat = reshape1("x", f"{name}_r", [24])
        else:
            flat = h.make_node("Reshape", ["x", "flat"], [f"{name}_r"])
        nodes = [
            flat,
            h.make_node("Shape", ["x"], [f"{name}_s"]),
            h.make_node("Gather", [f"{name}_r", f"{name}_s"], [f"{name}_g"], axis=0),
            h.make_node(op, [f"{name}_g"], [f"{name}_o"]),
        ]
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"{name}_o", T.FLOAT, [3])])

    node = h.make_node("If", ["cond"], ["y"], then_branch=branch("then", "Relu"), else_branch=branch("else", "Neg"))
    ins = [h.make_tensor_value_info("cond", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])]
    if ir < 4:
        ins += with_inputs(inits)
    y = h.make_tensor_value_info("y", T.FLOAT, [3])
    return legacy(h.make_graph([node], "gathered", ins, [y], inits), opset, ir_version=ir)


def nested_targets(opset: int, ir: int) -> onnx.ModelProto:
    """An If in each branch of an If, each inner branch reshaping x to the shape of a Relu of
    it (Shape -> Reshape: canonicalize-reshape makes the target an int64 constant). The inner
    graphs use the same names in both outer branches (allowed: each is its own scope)."""

    def inner(name: str) -> onnx.GraphProto:
        nodes = [
            h.make_node("Relu", ["x"], [f"{name}_a"]),
            h.make_node("Shape", [f"{name}_a"], [f"{name}_s"]),
            h.make_node("Reshape", ["x", f"{name}_s"], [f"{name}_o"]),
        ]
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"{name}_o", T.FLOAT, [2, 3, 4])])

    def outer(name: str, op: str) -> onnx.GraphProto:
        nodes = [
            h.make_node("If", ["cond"], ["z"], then_branch=inner("then"), else_branch=inner("else")),
            h.make_node(op, ["z"], [f"{name}_o"]),
        ]
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"{name}_o", T.FLOAT, [2, 3, 4])])

    node = h.make_node("If", ["cond"], ["y"], then_branch=outer("a", "Relu"), else_branch=outer("b", "Neg"))
    ins = [h.make_tensor_value_info("cond", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])]
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3, 4])
    return legacy(h.make_graph([node], "nested", ins, [y]), opset, ir_version=ir)


def _runs(model: onnx.ModelProto, feeds: dict) -> list | None:
    """onnxruntime's outputs, or None when it does not load the model (opset 5, Reshape-1)."""
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:
        return None
    return sess.run(None, feeds)


@pytest.mark.parametrize("ir", [3, 7])
@pytest.mark.parametrize("opset", [1, 2, 3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("build", [gathered, nested_targets], ids=["gathered", "nested"])
def test_constants_the_passes_add_in_branches_are_valid_at_the_models_ir_and_opset(build, opset, ir):
    if build is nested_targets and opset < 5:
        pytest.skip("Reshape-5 form only")
    m = build(opset, ir)
    onnx.checker.check_model(m, full_check=True)
    out = shapeinfer.optimize(m)
    onnx.checker.check_model(out, full_check=True)  # an int64 Constant below opset 9 fails here
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    for cond in (True, False):
        feeds = {"cond": np.array(cond), "x": x}
        want = _runs(m, feeds)
        if want is None:  # onnxruntime does not load the original: onnx's reference evaluator
            want = reference(m, feeds, [Reshape])
        got = _runs(out, feeds)
        if got is None:
            assert opset < 7  # onnxruntime's kernels start at opset 7: the evaluator runs it
            got = reference(out, feeds, [])
        for a, b in zip(want, got):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("opset", OPSETS)
def test_reshape1_in_a_function_runs_in_onnxruntime_where_the_original_does(opset):
    """A function at the model's opset is inlined before the rewrite: the target is a main
    graph initializer, not a float Constant cast by Cast-1, whose ``to`` onnxruntime cannot
    type in an inlined body (the model would no longer load where the original does)."""
    m = in_function(opset)
    feeds = feeds_for("in_function")[0]
    want = _runs(m, feeds)
    assert want is not None  # onnxruntime loads Reshape-1 in a function at opsets 1-4
    out = shapeinfer.optimize(m)
    onnx.checker.check_model(out, full_check=True)
    got = _runs(out, feeds)
    assert got is not None
    np.testing.assert_array_equal(want[0], got[0])
