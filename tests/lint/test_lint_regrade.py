"""One severity per diagnostic: lint reports an engine code at the severity ``shapeinfer MODEL``
and the Python API give it, under its default target; a ``--target``, a profile or a project's
``severity`` table may raise or lower it, and then the finding says so (``default_severity``,
``regraded``, and a note in the text, SARIF and GitHub formats)."""

from __future__ import annotations

import json
import os

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import shapeinfer
from shapeinfer.cli.main import main
from shapeinfer.lint import lint_model
from testkit.lint_models import nonzero_chain, out_of_order
from testkit.runtime_probe import available, probe

X = h.make_tensor_value_info("x", T.FLOAT, [2])
Y = h.make_tensor_value_info("y", T.FLOAT, [2])


def _model(nodes, inputs=(X,), outputs=(Y,)):
    g = h.make_graph(nodes, "g", list(inputs), list(outputs))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _branch_out_of_order() -> onnx.ModelProto:
    """An If whose branches read ``t`` before the Neg that makes it."""

    def branch(name):
        nodes = [h.make_node("Relu", ["t"], [f"o{name}"]), h.make_node("Neg", ["x"], ["t"])]
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(f"o{name}", T.FLOAT, [2])])

    n = h.make_node("If", ["c"], ["y"], then_branch=branch("a"), else_branch=branch("b"))
    return _model([n], [X, h.make_tensor_value_info("c", T.BOOL, [])])


def _defined_twice() -> onnx.ModelProto:
    return _model(
        [h.make_node("Neg", ["x"], ["t"]), h.make_node("Relu", ["x"], ["t"]), h.make_node("Abs", ["t"], ["y"])]
    )


def lint(*args, cwd=None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["lint", *map(str, args)], catch_exceptions=False)
    finally:
        os.chdir(old)


def _only(findings, code):
    found = [f for f in findings if f.code == code]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    "build, code, refused_by",
    [
        (out_of_order, "G004", {"onnx"}),
        (_branch_out_of_order, "G004", {"onnx", "onnxruntime", "openvino"}),
        (_defined_twice, "E004", {"onnx", "onnxruntime"}),
    ],
    ids=["main-out-of-order", "branch-out-of-order", "defined-twice"],
)
@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "openvino"])
def test_an_engine_error_is_lowered_only_where_the_targets_runtime_loads_the_model(
    tmp_path, build, code, refused_by, target
):
    """The engine reports it as an error (onnx's checker refuses it): ``infer``, the API and
    lint's default target agree; a target whose runtime loads the model lowers it, visibly."""
    path = tmp_path / "m.onnx"
    onnx.save(build(), path)
    if available(target):
        assert (probe(target, str(path)) is not None) == (target in refused_by)
    engine = [d.severity for d in shapeinfer.infer(str(path)).diagnostics if d.code == code]
    assert engine and set(engine) == {"error"}  # one per branch for the If
    found = [f for f in lint_model(build(), str(path), target=target) if f.code == code]
    assert len(found) == len(engine)
    for f in found:
        if target in refused_by:
            assert (f.severity, f.regraded, f.default_severity) == ("error", None, None)
        else:
            assert f.severity == "warning" and f.default_severity == "error"
            assert f.regraded.startswith(f"--target {target}: ") and f.regraded.endswith("loads the model")


def test_a_target_regrade_shows_in_every_format(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(out_of_order(), path)
    r = lint(path, "--isolated", "--target", "openvino")
    assert "G004 [warning] nodes are not in topological order (error by default; --target openvino: " in r.output
    r = lint(path, "--isolated", "--target", "openvino", "--format", "json")
    (g004,) = [f for f in json.loads(r.output) if f["code"] == "G004"]
    assert (g004["severity"], g004["default_severity"]) == ("warning", "error")
    assert g004["regraded"] == "--target openvino: OpenVINO loads the model"
    r = lint(path, "--isolated", "--target", "openvino", "--format", "sarif")
    (res,) = [x for x in json.loads(r.output)["runs"][0]["results"] if x["ruleId"] == "G004"]
    assert res["level"] == "warning" and res["properties"]["defaultSeverity"] == "error"
    r = lint(path, "--isolated", "--target", "openvino", "--format", "github")
    assert "(error by default; --target openvino: OpenVINO loads the model)" in r.output
    r = lint(path, "--isolated", "--format", "json")  # the default target: as infer reports it
    (g004,) = [f for f in json.loads(r.output) if f["code"] == "G004"]
    assert (g004["severity"], g004["default_severity"], g004["regraded"]) == ("error", "error", None)


def test_a_structure_rule_regraded_by_the_target_says_so(tmp_path):
    """M001 (no ir_version): onnx's checker refuses the model, OpenVINO loads it."""
    m = _model([h.make_node("Relu", ["x"], ["y"])])
    m.ir_version = 0
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    default = _only(lint_model(m, str(path)), "M001")
    assert (default.severity, default.regraded) == ("error", None)
    ov = _only(lint_model(m, str(path), target="openvino"), "M001")
    assert (ov.severity, ov.default_severity) == ("warning", "error")
    assert ov.regraded == "--target openvino: OpenVINO loads the model"


def test_a_profile_severity_and_warnings_as_errors_say_so(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(nonzero_chain(), path)
    r = lint(path, "--isolated", "--rules", "strict", "--format", "json")
    (g001,) = [f for f in json.loads(r.output) if f["code"] == "G001"]
    assert (g001["severity"], g001["default_severity"]) == ("error", "warning")
    assert g001["regraded"] == "severity.G001 = 'error' (profile strict)"
    r = lint(path, "--isolated", "--format", "json")
    (g001,) = [f for f in json.loads(r.output) if f["code"] == "G001"]
    assert (g001["severity"], g001["regraded"]) == ("warning", None)


def test_a_severity_lowered_in_pyproject_does_not_change_fail_on(tmp_path):
    """``severity`` entries and ``fail-on`` are separate settings: lowering a rule to info must
    not make every info finding fail the lint."""
    path = tmp_path / "m.onnx"
    onnx.save(nonzero_chain(), path)
    (tmp_path / "pyproject.toml").write_text('[tool.shapeinfer]\nseverity = {G001 = "info"}\n')
    r = lint(path, "--format", "json", cwd=tmp_path)
    found = json.loads(r.output)
    (g001,) = [f for f in found if f["code"] == "G001"]
    assert g001["severity"] == "info" and "pyproject.toml" in g001["regraded"]
    assert not [f for f in found if f["severity"] == "error"]
    assert r.exit_code == 0, r.output
