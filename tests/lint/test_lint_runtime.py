"""Lint targets agree with their runtimes (issue 24): an error under a target means that runtime
refuses the model, a warning a fallback. The runtimes are the oracles: onnx's checker and
onnxruntime always (test dependencies), OpenVINO where it is installed (not a test dependency:
those checks skip without it). The full comparison is benchmarks/lint_vs_runtime.py."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.common import ROOT, model_path

from shapeinfer.cli.main import main
from shapeinfer.lint import RULES, lint_model
from testkit.runtime_probe import RUNTIME_OF, available, lint_verdict, probe

DEPLOY = ROOT / "tests" / "models" / "deploy"
SKLEARN = ROOT / "tests" / "models" / "sklearn"
HAVE_OPENVINO = available("openvino")
needs_openvino = pytest.mark.skipif(not HAVE_OPENVINO, reason="openvino is not installed (not a test dependency)")


def lint(*args: str):
    return CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)


def codes(findings, severity: str | None = None) -> set[str]:
    return {f.code for f in findings if severity is None or f.severity == severity}


# ---------------------------------------------------------------------------- false errors


BOOL_RESHAPES = [model_path("gpt2_ts"), DEPLOY / "gpt2_ts.tfopt.nbits_gather.onnx"]


@pytest.mark.parametrize("path", BOOL_RESHAPES, ids=lambda p: p.name)
def test_openvino_target_passes_bool_reshapes(path):
    """gpt2_ts's attention-mask Reshapes are bool: OpenVINO runs them, so no error (P001 is info)."""
    r = lint(str(path), "--rules", "openvino")
    assert r.exit_code == 0, r.output
    assert "P001 [info]" in r.output and "[error]" not in r.output


@needs_openvino
def test_openvino_compiles_the_bool_reshape_model():
    assert probe("openvino", str(model_path("gpt2_ts"))) is None


# ---------------------------------------------------------------------------- missed errors


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("bert_ts.tfopt.qdyn.onnx", {"com.microsoft.QAttention", "com.microsoft.QEmbedLayerNormalization"}),
        ("vit_dynamo.ortall.onnx", {"com.microsoft.nchwc.Conv", "com.microsoft.nchwc.ReorderOutput"}),
    ],
)
def test_openvino_target_reports_ops_without_a_conversion_rule(name, ops):
    findings = lint_verdict(str(DEPLOY / name), "openvino")
    named = {f.message.split("conversion rule for ")[1].split(" at opset")[0] for f in findings if f.code == "P003"}
    assert named == ops
    r = lint(str(DEPLOY / name), "--rules", "openvino")
    assert r.exit_code == 1 and "P003 [error]" in r.output and "read_model refuses the model" in r.output


def test_openvino_target_reports_zipmap_outputs():
    findings = lint_verdict(str(SKLEARN / "logreg_zipmap.onnx"), "openvino")
    p004 = [f for f in findings if f.code == "P004"]
    assert [f.tensor for f in p004] == ["output_probability"]


@needs_openvino
@pytest.mark.parametrize("path", [DEPLOY / "bert_ts.tfopt.qdyn.onnx", SKLEARN / "logreg_zipmap.onnx"], ids=str)
def test_openvino_refuses_what_the_openvino_target_reports(path):
    assert probe("openvino", str(path)) is not None


# ---------------------------------------------------------------------------- oneDNN


def test_onednn_reshape_data_type_is_a_fallback_warning():
    """P101 (int64/bool Reshape data) is a fallback, as --explain says: a warning, said in the message."""
    assert RULES["P101"].severity == "warning"
    r = lint(str(model_path("gpt2_ts")), "--rules", "onednn")
    assert r.exit_code == 0, r.output
    p101 = [line for line in r.output.splitlines() if " P101 " in line]
    assert p101 and all("[warning]" in line and "falls back" in line for line in p101)
    assert "fallback" in lint("--explain", "P101").output


# ---------------------------------------------------------------------------- onnx's checker


ORT_ONLY = DEPLOY / "llama_ts.tfopt.ortext.nbits.onnx"  # SimplifiedLayerNormalization in the default domain


def test_onnx_target_reports_ops_onnx_does_not_know():
    assert probe("onnx", str(ORT_ONLY)) is not None  # the checker refuses it
    r = lint(str(ORT_ONLY), "--select", "E,G")
    assert r.exit_code == 1 and "G014 [error]" in r.output and "SimplifiedLayerNormalization" in r.output
    # onnxruntime runs it: not an error for that target
    assert probe("onnxruntime", str(ORT_ONLY)) is None
    assert lint_verdict(str(ORT_ONLY), "onnxruntime") == []


def external_model(folder, small: bool) -> str:
    """A MatMul weight (and with ``small`` an int64 Reshape target, a value inference reads)
    stored in ``m.data``, which is then deleted (Git LFS not pulled)."""
    os.makedirs(folder, exist_ok=True)
    w = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    t = numpy_helper.from_array(np.array([-1, 8], np.int64), "t")
    nodes = [h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Reshape", ["m", "t"], ["y"])]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 8])],
        [w, t] if small else [w],
    )
    if not small:
        g.initializer.append(t)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    for tensor in m.graph.initializer:
        if small or tensor.name == "w":
            onnx.external_data_helper.set_external_data(tensor, "m.data", offset=0 if tensor.name == "w" else 256)
            tensor.ClearField("raw_data")
            tensor.ClearField("float_data")
            tensor.ClearField("int64_data")
    path = os.path.join(folder, "m.onnx")
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("small", [False, True], ids=["weight", "weight-and-target"])
def test_missing_external_data_is_an_error(tmp_path, small):
    path = external_model(str(tmp_path / "m"), small)
    for target in ("onnx", "onnxruntime"):
        assert probe(RUNTIME_OF[target], path) is not None  # both refuse the model
        found = lint_verdict(path, target)
        # one finding for the missing file, naming it and how many tensors are stored in it
        assert [(f.code, f.tensor) for f in found] == [("E003", None)]
        assert "'m.data' is missing" in found[0].message
        assert ("2 tensors" if small else "1 tensor is") in found[0].message
    r = lint(path, "--select", "E003")
    assert r.exit_code == 1 and "E003 [error]" in r.output and "(E003)" not in r.output and "E001" not in r.output


def test_truncated_external_data_is_an_error(tmp_path):
    """A data file shorter than the weight (what a Git LFS pointer file looks like)."""
    path = external_model(str(tmp_path / "m"), small=False)
    with open(tmp_path / "m" / "m.data", "w") as f:
        f.write("version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 256\n")
    found = lint_verdict(path, "onnx")
    assert [(f.code, f.tensor) for f in found] == [("E003", "w")] and "for a tensor of 256 bytes" in found[0].message
    assert probe("onnxruntime", path) is not None


def test_e003_is_a_catalog_code_of_its_own(tmp_path):
    assert "E003" in RULES
    assert lint("--explain", "E003").exit_code == 0
    # in memory (no folder to look in), the engine's E003 keeps its code, not "E001 ... (E003)"
    path = external_model(str(tmp_path / "m"), small=True)
    found = lint_model(onnx.load(path, load_external_data=False), "m.onnx")
    assert "E003" in codes(found) and not any("(E003)" in f.message for f in found)


# ---------------------------------------------------------------------------- the harness's slice

SLICE = [
    model_path("gpt2_ts"),
    DEPLOY / "bert_ts.tfopt.qdyn.onnx",
    DEPLOY / "vit_dynamo.ortall.onnx",
    ORT_ONLY,
    SKLEARN / "logreg_zipmap.onnx",
]


@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "openvino"])
def test_lint_errors_agree_with_the_runtime(tmp_path, target):
    """A bounded slice of benchmarks/lint_vs_runtime.py: lint error <-> the runtime refuses."""
    if not available(RUNTIME_OF[target]):
        pytest.skip(f"{RUNTIME_OF[target]} is not installed")
    disagree = []
    for path in [*SLICE, Path(external_model(str(tmp_path / "ext"), small=False))]:
        refused = probe(RUNTIME_OF[target], str(path))
        errors = lint_verdict(str(path), target)
        if bool(refused) != bool(errors):
            disagree.append((path.name, refused, [(f.code, f.message) for f in errors[:2]]))
    assert disagree == []


def test_target_warnings_say_which_slower_path():
    """A warning under a target means a fallback or a slower path, and its message says which."""
    from shapeinfer.lint.config import resolve
    from shapeinfer.lint.runner import lint_path

    findings = lint_path(str(model_path("gpt2_ts")), resolve(rules="onednn", isolated=True)).findings
    warned = [f for f in findings if f.code.startswith("P") and f.severity == "warning"]
    assert {f.code for f in warned} == {"P101", "P103"}
    assert all("falls back" in f.message or "slower path" in f.message for f in warned), warned


TF_WHILE_LOOP = ROOT / "tests" / "models" / "exporters" / "tf_while_loop.onnx"


def test_openvino_target_reports_a_loop_that_passes_a_state_through():
    """tf2onnx's while loop returns two of its body inputs unchanged: P005 under openvino,
    nothing under onnxruntime (which runs it)."""
    findings = lint_verdict(str(TF_WHILE_LOOP), "openvino")
    assert [f.code for f in findings] == ["P005"] and "'while_strided_slice_0:0'" in findings[0].message
    assert not lint_verdict(str(TF_WHILE_LOOP), "onnxruntime")


@needs_openvino
@pytest.mark.parametrize("pass_through", [True, False])
def test_openvino_refuses_a_loop_exactly_when_it_passes_a_state_through(tmp_path, pass_through):
    """The oracle for P005: OpenVINO refuses the Loop whose body returns an input unchanged and
    loads the same loop with the value renamed through an Identity; onnxruntime runs both."""
    from testkit.lint_models import loop_state

    path = tmp_path / "loop.onnx"
    onnx.save(loop_state(pass_through), path)
    assert (probe("openvino", str(path)) is not None) == pass_through
    if available("onnxruntime"):
        assert probe("onnxruntime", str(path)) is None
    assert bool(lint_verdict(str(path), "openvino")) == pass_through


def _upsample(opset: int) -> onnx.ModelProto:
    """One Upsample (nearest, x2 on H and W) in its form at ``opset``: 1 (attributes
    ``height_scale``/``width_scale``), 7 (``scales`` attribute) or 9 (``scales`` input)."""
    ins = []
    if opset < 7:
        node = h.make_node("Upsample", ["x"], ["y"], name="bad", height_scale=2.0, width_scale=2.0, mode="nearest")
    elif opset < 9:
        node = h.make_node("Upsample", ["x"], ["y"], name="bad", scales=[1.0, 1.0, 2.0, 2.0], mode="nearest")
    else:
        node = h.make_node("Upsample", ["x", "s"], ["y"], name="bad", mode="nearest")
        ins = [h.make_tensor("s", T.FLOAT, [4], [1, 1, 2, 2])]
    g = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 4, 4])],
        ins,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


@pytest.mark.parametrize("opset, refused", [(1, True), (6, True), (7, False), (9, False)])
def test_upsample_before_opset_7_has_no_onnxruntime_kernel(tmp_path, opset, refused):
    """onnxruntime's CPU kernels for Upsample start at opset 7: Upsample-1 is P201 under
    onnxruntime (the kernel table once said it loads: its probe node lacked the required
    attributes), Upsample-7 and -9 are not."""
    path = tmp_path / "upsample.onnx"
    onnx.save(_upsample(opset), path)
    if available("onnxruntime"):
        assert (probe("onnxruntime", str(path)) is not None) == refused
    assert [f.code for f in lint_verdict(str(path), "onnxruntime") if f.code == "P201"] == (["P201"] if refused else [])


def _one_node(op: str, opset: int) -> onnx.ModelProto:
    """One RoiAlign (float X and rois, int64 batch indices) or Multinomial at ``opset``."""
    if op == "RoiAlign":
        node = h.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="bad", output_height=2, output_width=2)
        ins = [
            h.make_tensor_value_info("x", T.FLOAT, [1, 2, 8, 8]),
            h.make_tensor_value_info("rois", T.FLOAT, [3, 4]),
            h.make_tensor_value_info("idx", T.INT64, [3]),
        ]
        out = h.make_tensor_value_info("y", T.FLOAT, [3, 2, 2, 2])
    else:
        node = h.make_node("Multinomial", ["x"], ["y"], name="bad", sample_size=2)
        ins = [h.make_tensor_value_info("x", T.FLOAT, [1, 4])]
        out = h.make_tensor_value_info("y", T.INT32, [1, 2])
    g = h.make_graph([node], "g", ins, [out])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=10)


@pytest.mark.parametrize("op", ["RoiAlign", "Multinomial"])
@pytest.mark.parametrize("opset, refused", [(21, False), (22, True), (28, True)])
def test_a_kernel_open_at_the_top_does_not_serve_a_later_schema(tmp_path, op, opset, refused):
    """onnxruntime 1.32 registers RoiAlign's CPU kernel for versions [16, INT_MAX] and
    Multinomial's for [7, INT_MAX], and still refuses RoiAlign-22 and Multinomial-22: a kernel
    serves the schema it starts at, or a later one only when its range is closed. The table
    once read the open range as every later opset, and lint passed what onnxruntime refuses
    (optimize --target-opset 22 of torchvision's Mask R-CNN, fuzz_cli seed 148, case 717)."""
    path = tmp_path / "one.onnx"
    onnx.save(_one_node(op, opset), path)
    if available("onnxruntime"):
        assert (probe("onnxruntime", str(path)) is not None) == refused
    assert [f.code for f in lint_verdict(str(path), "onnxruntime") if f.code == "P201"] == (["P201"] if refused else [])


@needs_openvino
@pytest.mark.parametrize(
    "variant, zero_point, refused",
    [
        ("alone", np.uint8, True),
        ("alone", np.int8, True),
        ("shared", np.uint8, False),
        ("float_scale", np.uint8, False),
        ("alone", np.int16, False),
    ],
)
def test_openvino_fails_on_a_quantized_matmul_times_a_quantized_constant_used_once(
    tmp_path, variant, zero_point, refused
):
    """The oracle for P006: OpenVINO's CPU plugin fails in compile_model on
    Mul(DQ(Q(MatMul)), DQ(Q(Constant))) when the quantized constant has no other reader, and
    compiles the same graph with the constant shared by a second such Mul, with a float
    constant, or with 16-bit quantization; onnxruntime runs all of them. Lint says so for
    openvino only."""
    from testkit.lint_models import qdq_matmul_scale

    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_matmul_scale(variant, zero_point), path)
    verdict = probe("openvino", str(path))
    assert (verdict is not None) == refused, verdict
    if refused:
        assert "index '0' out of range" in verdict
    assert [f.code for f in lint_verdict(str(path), "openvino")] == (["P006"] if refused else [])
    if available("onnxruntime"):
        assert probe("onnxruntime", str(path)) is None
    assert not lint_verdict(str(path), "onnxruntime")


@needs_openvino
def test_openvino_refuses_a_model_local_function_that_onnxruntime_inlines(tmp_path):
    """The oracle for P003 on a model-local function call: OpenVINO does not expand it,
    onnxruntime does; lint says so for openvino only."""
    from testkit.lint_models import local_function_call

    path = tmp_path / "local_function.onnx"
    onnx.save(local_function_call(), path)
    assert probe("openvino", str(path)) is not None
    assert [f.code for f in lint_verdict(str(path), "openvino")] == ["P003"]
    if available("onnxruntime"):
        assert probe("onnxruntime", str(path)) is None
    assert not lint_verdict(str(path), "onnxruntime")


MERGED = ROOT / "tests" / "models" / "optimum" / "gpt2_tiny_merged.onnx"


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_a_symbolic_declaration_contradiction_is_a_warning_every_runtime_loads(target):
    """optimum's merged decoder declares its no-cache branch's ``present`` as ``past + seq`` where
    that branch computes ``seq``: G006, a warning, since the checker and onnxruntime load it."""
    if not available(target):
        pytest.skip(f"{target} is not installed")
    assert probe(target, str(MERGED)) is None
    findings = lint_model(onnx.load(str(MERGED)), str(MERGED), target=target)
    assert "G006" in codes(findings, "warning") and not codes(findings, "error")


def _wrong_value_info() -> onnx.ModelProto:
    """Transpose of x[2, 3] declared (value_info) as [5, 5]: an int contradiction."""
    g = h.make_graph(
        [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node("Relu", ["t"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, 2])],
        value_info=[h.make_tensor_value_info("t", T.FLOAT, [5, 5])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_an_int_declaration_contradiction_is_an_error_where_the_checker_refuses(tmp_path, target):
    """The same G006 on ints: onnx's checker (strict inference) refuses the model, onnxruntime
    loads it (merging leniently); lint's severity follows each."""
    if not available(target):
        pytest.skip(f"{target} is not installed")
    path = tmp_path / "wrong_value_info.onnx"
    onnx.save(_wrong_value_info(), path)
    refused = probe(target, str(path)) is not None
    assert refused == (target == "onnx")
    findings = lint_model(_wrong_value_info(), str(path), target=target)
    assert ("G006" in codes(findings, "error")) == refused
    assert "G006" in codes(findings)


def _unsorted() -> onnx.ModelProto:
    """Relu reads ``t`` before the Neg that makes it: out of order, no cycle."""
    g = h.make_graph(
        [h.make_node("Relu", ["t"], ["y"]), h.make_node("Neg", ["x"], ["t"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "openvino"])
def test_nodes_out_of_order_are_an_error_where_the_checker_judges(tmp_path, target):
    """onnx's checker refuses nodes out of order; onnxruntime and OpenVINO sort them and run the
    model: G004 is an error under onnx only."""
    path = tmp_path / "unsorted.onnx"
    onnx.save(_unsorted(), path)
    findings = lint_model(_unsorted(), str(path), target=target)
    assert "G004" in codes(findings)
    if available(target):
        assert (probe(target, str(path)) is not None) == (target == "onnx")
    assert ("G004" in codes(findings, "error")) == (target == "onnx")


def _defined_twice() -> onnx.ModelProto:
    """Neg and Relu both write ``t``."""
    g = h.make_graph(
        [h.make_node("Neg", ["x"], ["t"]), h.make_node("Relu", ["x"], ["t"]), h.make_node("Abs", ["t"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "openvino"])
def test_a_tensor_defined_twice_is_an_error_where_the_runtime_refuses_it(tmp_path, target):
    """onnx's checker and onnxruntime refuse a second definition of a tensor; OpenVINO loads the
    model: E004 is an error under onnx and onnxruntime, a warning under openvino."""
    path = tmp_path / "defined_twice.onnx"
    onnx.save(_defined_twice(), path)
    findings = lint_model(_defined_twice(), str(path), target=target)
    assert "E004" in codes(findings)
    if available(target):
        assert (probe(target, str(path)) is not None) == (target != "openvino")
    assert ("E004" in codes(findings, "error")) == (target != "openvino")


def test_model_folders_are_searched_recursively_each_file_once(tmp_path):
    """What lint and the corpus benchmarks (lint_vs_runtime, lint_fix_openvino) search: every
    *.onnx below a folder, hidden folders skipped, a folder given beside its subfolder counted
    once."""
    from shapeinfer.lint.runner import discover

    m = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], []))
    for rel in ("top.onnx", "a/mid.onnx", "a/b/deep.onnx", ".hidden/skip.onnx", "a/weights.onnx.data"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        onnx.save(m, str(tmp_path / rel))
    found = discover([str(tmp_path), str(tmp_path / "a")])
    assert sorted(os.path.relpath(f, tmp_path) for f in found) == ["a/b/deep.onnx", "a/mid.onnx", "top.onnx"]


@pytest.mark.parametrize("op", ["Conv", "ConvInteger", "ConvTranspose"])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"])
@pytest.mark.parametrize("dilations", [[2, 2], [1, 3], [1, 1]])
def test_onnxruntime_fails_a_dilated_same_convolution_exactly_where_p203_says(op, auto_pad, dilations):
    """onnxruntime loads a convolution with dilations and auto_pad SAME_* and fails every run
    (its conv padding enforces dilation 1); P203 under --target onnxruntime says exactly that
    (ConvTranspose pads otherwise and runs)."""
    ort = pytest.importorskip("onnxruntime")
    from testkit.lint_models import dilated_conv

    m = dilated_conv(auto_pad, dilations, op)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    x = np.ones((1, 1, 9, 9), np.uint8 if op == "ConvInteger" else np.float32)
    try:
        sess.run(None, {"x": x})
        refused = False
    except Exception as e:
        assert "Dilation not supported" in str(e)
        refused = True
    reported = "P203" in codes(lint_model(m, target="onnxruntime"))
    assert reported == refused
    assert "P203" not in codes(lint_model(m, target="onnx"))


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("dilation", [1, 2, 3])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_onnxruntime_fails_a_convtranspose_exactly_where_p204_says(stride, dilation, padding):
    """onnxruntime loads a ConvTranspose and fails every run where an output padding is not
    below its stride (also where the spec allows it, below the dilation); P204 under --target
    onnxruntime says exactly that. One axis varies, the other is stride 2, padding 1 (runs)."""
    ort = pytest.importorskip("onnxruntime")
    from testkit.lint_models import conv_transpose

    m = conv_transpose([2, stride], [1, dilation], [1, padding])
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    try:
        sess.run(None, {"x": np.ones((1, 1, 4, 5), np.float32)})
        refused = False
    except Exception:
        refused = True
    assert ("P204" in codes(lint_model(m, target="onnxruntime"))) == refused
    assert refused == (padding >= stride)
