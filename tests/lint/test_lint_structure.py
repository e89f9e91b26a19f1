"""The model-structure rules M001-M031 against their oracles: on every fixture model of
``testkit/structure_models.py``, an M finding is an error under a target exactly when that
target's runtime refuses the model (``onnx.checker`` full_check for ``onnx``, onnxruntime's
InferenceSession for ``onnxruntime``), and every refused model gets an error finding."""

from __future__ import annotations

import onnx
import pytest
from support.common import ROOT

from shapeinfer.lint import RULES, lint_model
from shapeinfer.lint.config import resolve
from shapeinfer.lint.runner import lint_path
from testkit.structure_models import MODELS

ort = pytest.importorskip("onnxruntime")


def refuses(runtime: str, path: str) -> bool:
    try:
        if runtime == "onnx":
            onnx.checker.check_model(path, full_check=True)
        else:
            so = ort.SessionOptions()
            so.log_severity_level = 4
            ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception:
        return True
    return False


#: refused models whose error is not structural and that lint misses today (other rules' work)
KNOWN_MISSES = {("onnxruntime", "experimental-upsample")}  # no kernel for Upsample-1: P201's table says it loads


@pytest.mark.parametrize("label", list(MODELS))
@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_m_errors_agree_with_the_runtime(label, target, tmp_path):
    path = str(tmp_path / f"{label}.onnx")
    with open(path, "wb") as f:
        f.write(MODELS[label]().SerializeToString())
    refused = refuses(target, path)
    findings = lint_path(path, resolve(rules="default", target=target, isolated=True)).findings
    m_errors = [f for f in findings if f.code.startswith("M") and f.severity == "error"]
    if not refused:
        assert m_errors == [], [f.message for f in m_errors]
    elif (target, label) not in KNOWN_MISSES:
        assert any(f.severity == "error" for f in findings), [(f.code, f.severity) for f in findings]


def test_severity_follows_the_target():
    """The main graph without a name: onnx.checker refuses it, onnxruntime and OpenVINO load it."""
    m = MODELS["empty-graph-name"]()
    got = {
        t: [f.severity for f in lint_model(m, "m.onnx", target=t) if f.code == "M010"] for t in ("onnx", "onnxruntime")
    }
    assert got == {"onnx": ["error"], "onnxruntime": ["warning"]}
    # a nameless subgraph is refused by onnxruntime too
    sub = [f.severity for f in lint_model(MODELS["empty-subgraph-name"](), "m.onnx", target="onnxruntime")]
    assert "error" in sub


def test_findings_name_the_place():
    (f,) = [f for f in lint_model(MODELS["if-shadows-outer"](), "m.onnx") if f.code == "M014"]
    assert (f.graph, f.node, f.op_type, f.tensor) == ("main/1.then_branch", "t", "Identity", "r")
    (f,) = [f for f in lint_model(MODELS["duplicate-graph-input"](), "m.onnx") if f.code == "M011"]
    assert (f.graph, f.tensor) == ("main", "x")
    (f,) = [f for f in lint_model(MODELS["unused-node"](), "m.onnx") if f.code == "M025"]
    assert (f.node, f.op_type, f.severity) == ("bad", "Neg", "info")


def test_unused_opset_imports_are_one_finding():
    m = MODELS["unused-opset"]()
    m.opset_import.append(onnx.helper.make_opsetid("com.microsoft.nchwc", 1))
    (f,) = [f for f in lint_model(m, "m.onnx") if f.code == "M006"]
    assert "ai.onnx.ml:3" in f.message and "com.microsoft.nchwc:1" in f.message


def test_function_opset_versions_compared_per_op():
    """A function may import another opset version when its ops are the same there (Relu-14 at 16
    and 17): only a version that changes an op (Relu-6 at 12) is M008, and the checker agrees."""
    ok, bad = MODELS["function-opset-mismatch"](), MODELS["function-opset-changes-op"]()
    assert not [f for f in lint_model(ok, "m.onnx") if f.code == "M008"]
    onnx.checker.check_model(ok, full_check=True)
    (f,) = [f for f in lint_model(bad, "m.onnx") if f.code == "M008"]
    assert "Relu-6" in f.message and "Relu-14" in f.message
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(bad, full_check=True)


def test_every_m_rule_has_a_fixture():
    from testkit.structure_models import cases

    codes = {c.code for c in cases() if c.triggers}
    assert {c for c in RULES if c.startswith("M")} == codes
    assert codes == {f"M{i:03d}" for i in range(1, 32)}


def test_the_imports_onnxruntime_saves_are_not_reported():
    """onnxruntime's optimizer writes eight imports into every model it saves (the deploy models):
    not M006, unless another unused import is there too."""
    from shapeinfer.lint.rules.structure import ORT_SAVED_IMPORTS

    m = MODELS["base"]()
    for d in sorted(ORT_SAVED_IMPORTS):
        m.opset_import.append(onnx.helper.make_opsetid(d, 1))
    assert not [f for f in lint_model(m, "m.onnx") if f.code == "M006"]
    m.opset_import.append(onnx.helper.make_opsetid("com.example", 1))
    (f,) = [f for f in lint_model(m, "m.onnx") if f.code == "M006"]
    assert f.message.endswith("used by no node: com.example:1")
    shipped = onnx.load(ROOT / "tests" / "models" / "deploy" / "bert_ts.tfopt.onnx", load_external_data=False)
    assert {o.domain for o in shipped.opset_import} >= ORT_SAVED_IMPORTS
