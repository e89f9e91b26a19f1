"""`shapeinfer lint` as users and CI run it: exit codes, the four formats, project settings,
many files (process pool, broken files), --fix."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from support.common import MODEL_NAMES, MODELS_DIR, ROOT, model_path, run_cli

from shapeinfer.cli.main import main
from shapeinfer.lint import RULES
from testkit.lint_models import make, out, reshape_const, reshape_runtime_canonical, reshape_v1, vi

TEXT_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<node>.+?): (?P<code>[A-Z]\d{3}) \[(?P<sev>error|warning|info)\] (?P<msg>.+)$"
)
GITHUB_LINE = re.compile(r"^::(error|warning|notice) file=(?P<file>[^,:]+),title=(?P<title>[^:]+)::(?P<msg>.+)$")


def run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return run_cli("lint", *args, cwd=cwd)


def invoke(*args: str):
    return CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)


@pytest.fixture
def models(tmp_path):
    """A folder with a clean model, one with an error (R004) and one with a warning (R009)."""
    d = tmp_path / "models"
    (d / "sub").mkdir(parents=True)
    onnx.save(reshape_const([2, 3, 4], [4, 6]), str(d / "clean.onnx"))
    onnx.save(reshape_const([2, 3, 4], [5, 5]), str(d / "sub" / "broken_count.onnx"))
    onnx.save(reshape_const([2, 3], [2, 3]), str(d / "noop.onnx"))
    (d / "notes.txt").write_text("not a model, not *.onnx: skipped")
    return d


# ------------------------------------------------------------------ exit codes


def test_exit_codes(models, tmp_path):
    r = run(str(models / "clean.onnx"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "All checks passed" in r.stdout
    r = run(str(models / "noop.onnx"))  # a warning only
    assert r.returncode == 0 and "R009" in r.stdout
    r = run(str(models))  # the folder, recursively: contains an error
    assert r.returncode == 1, r.stderr
    assert "R004" in r.stdout and "broken_count.onnx" in r.stdout
    # usage errors: one line on stderr, exit 2 (in-process: same code path, faster)
    for args, needle in [
        ((str(tmp_path / "missing.onnx"),), "no such file"),
        ((str(models), "--select", "Q999"), "Q999"),
        ((str(models), "--in-place"), "--fix"),
        ((str(models), "--rules", "nope"), "unknown rule profile"),
    ]:
        r = invoke(*args)
        assert r.exit_code == 2 and r.stderr.startswith("shapeinfer: error:") and needle in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    r = invoke(str(empty))
    assert r.exit_code == 2 and "no *.onnx" in r.stderr


def test_broken_file_is_a_finding_and_the_others_are_checked(models):
    (models / "garbage.onnx").write_bytes(b"\x08\x07 this is not a protobuf model \xff\xfe")
    (models / "empty.onnx").write_bytes(b"")
    r = run(str(models), "--format", "json")
    assert r.returncode == 2
    assert "could not be read" in r.stderr and "Traceback" not in r.stderr
    found = json.loads(r.stdout)
    e900 = {os.path.basename(f["path"]) for f in found if f["code"] == "E900"}
    assert e900 == {"garbage.onnx", "empty.onnx"}
    assert any(f["code"] == "R004" for f in found)  # the readable models were still linted


# ------------------------------------------------------------------ formats


def test_text_format(models):
    r = run(str(models))
    lines = r.stdout.strip().splitlines()
    body, summary = lines[:-1], lines[-1]
    assert body and all(TEXT_LINE.match(x) for x in body), body
    m = next(TEXT_LINE.match(x) for x in body if " R004 " in x)
    assert m["node"] == "bad[Reshape#0]" and m["sev"] == "error"
    assert "\x1b[" not in r.stdout  # no colour when piped
    assert summary.startswith("Found 2 findings (1 error, 1 warning, 0 info) in 2 of 3 files")


def test_text_format_is_one_line_per_finding_whatever_the_names(tmp_path):
    """A node named ``evil\nname`` split its finding over two lines (the API review): the
    text format escapes control characters in the path and the names, as the message does."""
    relu = h.make_node("Relu", ["x"], ["c\n::%"], name="evil\nname")
    bad = make([relu], [vi("x", T.FLOAT, [3])], [vi("c\n::%", T.FLOAT, [4])])
    path = tmp_path / "m.onnx"
    onnx.save(bad, str(path))
    r = run(str(path))
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2, lines  # the finding and the summary
    assert "evil\\nname" in lines[0] and "G006" in lines[0]


def test_json_format_has_every_field(models):
    r = run(str(models), "--format", "json")
    found = json.loads(r.stdout)
    assert isinstance(found, list) and found
    fields = {"path", "code", "name", "severity", "message", "node", "op_type", "index", "graph", "tensor", "fix"}
    for f in found:
        assert fields <= f.keys()
    r004 = next(f for f in found if f["code"] == "R004")
    assert r004["node"] == "bad" and r004["op_type"] == "Reshape" and r004["index"] == 0 and r004["graph"] == "main"
    assert r004["name"] == RULES["R004"].name and r004["severity"] == "error"
    r009 = next(f for f in found if f["code"] == "R009")
    assert r009["fix"] == "remove-noop-reshape" or r009["fix"] is None


def check_sarif(doc: dict, n_results: int | None = None) -> None:
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].startswith("https://") and "sarif" in doc["$schema"]
    assert len(doc["runs"]) == 1
    run_ = doc["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "shapeinfer" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    for rule in driver["rules"]:
        assert rule["help"]["text"] and rule["shortDescription"]["text"] and rule["name"]
    if n_results is not None:
        assert len(run_["results"]) == n_results
    for res in run_["results"]:
        assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert res["message"]["text"]
        loc = res["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith(".onnx")
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
        assert loc["logicalLocations"][0]["name"] and loc["logicalLocations"][0]["fullyQualifiedName"]


def test_sarif_format(models, tmp_path):
    out_file = tmp_path / "lint.sarif"
    r = run(str(models), "--format", "sarif", "-o", str(out_file))
    assert r.returncode == 1 and r.stdout == ""
    doc = json.loads(out_file.read_text())
    check_sarif(doc, n_results=2)
    res = next(x for x in doc["runs"][0]["results"] if x["ruleId"] == "R004")
    assert res["level"] == "error"
    assert res["locations"][0]["logicalLocations"][0]["name"] == "bad"
    assert res["properties"]["opType"] == "Reshape" and res["properties"]["index"] == 0


def test_sarif_of_the_shipped_models():
    r = run(str(MODELS_DIR), "--format", "sarif")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    check_sarif(doc)
    uris = {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in doc["runs"][0]["results"]}
    assert {os.path.basename(u) for u in uris} <= {f"{n}.onnx" for n in MODEL_NAMES}


def test_github_format(models):
    r = run(str(models), "--format", "github")
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        m = GITHUB_LINE.match(line)
        assert m, line
        assert m["file"].endswith(".onnx") and re.match(r"[A-Z]\d{3} ", m["title"])
    assert any(line.startswith("::error file=") and "R004" in line for line in lines)
    assert any(line.startswith("::warning file=") and "R009" in line for line in lines)


# ------------------------------------------------------------------ settings


def test_pyproject_settings_and_flags_win(models, monkeypatch):
    (models.parent / "pyproject.toml").write_text(
        '[tool.shapeinfer]\nignore = ["R009"]\n[tool.shapeinfer.per-path-ignores]\n"models/sub/*.onnx" = ["R004"]\n'
    )
    monkeypatch.chdir(models.parent)
    r = invoke("models", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == []  # R009 ignored, R004 ignored under models/sub
    # the flag's selection replaces the project's (R009 back on); per-path ignores still apply, as in ruff
    r = invoke("models", "--format", "json", "--select", "R")
    assert {f["code"] for f in json.loads(r.stdout)} == {"R009"}
    r = invoke("models", "--format", "json", "--isolated")
    assert r.exit_code == 1
    (models.parent / "pyproject.toml").write_text('[tool.shapeinfer]\ntarget = "onednn"\n')
    r = invoke("models", "--format", "json")
    assert "P103" not in r.stdout and "P101" not in r.stdout  # float data, constant targets
    onnx.save(reshape_const([2, 3], [3, 2], dtype=T.INT64), str(models / "ints.onnx"))
    r = invoke("models", "--format", "json")
    assert "P101" in {f["code"] for f in json.loads(r.stdout)}
    r = invoke("models", "--format", "json", "--target", "onnx")
    assert "P101" not in {f["code"] for f in json.loads(r.stdout)}


def test_profiles_by_name_and_path(tmp_path):
    bert = str(model_path("bert_ts"))
    assert run(bert).returncode == 0
    r = run(bert, "--rules", "strict")
    assert r.returncode == 1 and "G003 [error]" in r.stdout
    prof = tmp_path / "mine.toml"
    prof.write_text('extends = "strict"\nignore = ["G003", "R009"]\n')
    assert run(bert, "--rules", str(prof)).returncode == 0
    r = run(bert, "--rules", "nonesuch")
    assert r.returncode == 2 and "unknown rule profile" in r.stderr


def test_explain_and_list_rules():
    r = invoke("--explain", "R010")
    assert r.exit_code == 0 and "canonicalize-reshape" in r.stdout and RULES["R010"].name in r.stdout
    r = invoke("--list-rules")
    assert r.exit_code == 0 and all(code in r.stdout for code in RULES)


def test_pool_gives_the_same_findings(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    for n in ("bert_ts", "gpt2_ts", "vit_dynamo"):
        shutil.copy(model_path(n), d / f"{n}.onnx")
    one = run(str(d), "--format", "json", "--jobs", "1")
    two = run(str(d), "--format", "json", "--jobs", "2")
    assert one.returncode == two.returncode == 0
    assert json.loads(one.stdout) == json.loads(two.stdout) != []
    assert "linting" not in two.stderr  # no progress bar when stderr is not a terminal


# ------------------------------------------------------------------ --fix


def fix_models():
    """Models whose findings the optimize passes fix; outputs are not graph outputs."""
    s004 = make(
        [h.make_node("Shape", ["x"], ["s"], name="bad"), h.make_node("Reshape", ["z", "s"], ["y"], name="r")],
        [vi("x", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [6])],
        [out(rank=2)],
    )
    r009 = make(
        [h.make_node("Reshape", ["x", "t"], ["r"], name="bad"), h.make_node("Relu", ["r"], ["y"], name="relu")],
        [vi("x", T.FLOAT, [2, 3])],
        [out(rank=2)],
        [onnx.numpy_helper.from_array(np.array([2, 3], np.int64), "t")],
    )
    return {"S004": s004, "R009": r009, "R010": reshape_runtime_canonical(), "R006": reshape_v1([2, 3, 4], [6, 4])}


@pytest.mark.parametrize("code", ["S004", "R009", "R010", "R006"])
def test_fix_writes_a_valid_model_without_the_finding(code, tmp_path):
    from shapeinfer.lint.runner import available_passes

    if available_passes([RULES[code].fix])[1]:
        pytest.skip(f"pass {RULES[code].fix} not in this installation")
    src = tmp_path / "m.onnx"
    onnx.save(fix_models()[code], str(src))
    assert code in run(str(src)).stdout
    r = run(str(src), "--fix", "--format", "json")
    fixed = tmp_path / "m.fixed.onnx"
    assert fixed.exists(), r.stderr
    assert f"wrote {fixed}" in r.stderr and code in r.stderr
    assert all(f["path"] == str(fixed) for f in json.loads(r.stdout))
    assert code not in {f["code"] for f in json.loads(r.stdout)}
    m = onnx.load(str(fixed))
    onnx.checker.check_model(m, full_check=True)
    if code != "R006":  # onnxruntime runs opset >= 7 only; R006's model is opset 4
        ort = pytest.importorskip("onnxruntime")
        feeds = {
            i.name: np.random.default_rng(0)
            .random([d.dim_value or 2 for d in i.type.tensor_type.shape.dim])
            .astype(np.float32)
            for i in onnx.load(str(src)).graph.input
        }
        a = ort.InferenceSession(str(src)).run(None, feeds)
        b = ort.InferenceSession(str(fixed)).run(None, feeds)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_fix_in_place_and_shipped_model(tmp_path):
    from shapeinfer.lint.runner import available_passes

    if available_passes(["fold-shapes", "canonicalize-reshape", "remove-noop-reshape"])[1]:
        pytest.skip("optimize passes not in this installation")
    ort = pytest.importorskip("onnxruntime")
    src = tmp_path / "bert.onnx"
    shutil.copy(model_path("bert_ts"), src)
    before = json.loads(run(str(src), "--format", "json").stdout)
    assert {"R009", "R010", "S004"} <= {f["code"] for f in before}
    orig = str(model_path("bert_ts"))
    r = run(str(src), "--fix", "--in-place", "--format", "json")
    assert r.returncode == 0 and f"wrote {src}" in r.stderr
    after = json.loads(r.stdout)
    assert not {"R009", "R010", "S004"} & {f["code"] for f in after}
    assert not (tmp_path / "bert.fixed.onnx").exists()
    feeds = {"input_ids": np.arange(14, dtype=np.int64).reshape(2, 7), "attention_mask": np.ones((2, 7), np.int64)}
    a = ort.InferenceSession(orig).run(None, feeds)
    b = ort.InferenceSession(str(src)).run(None, feeds)
    assert all(np.allclose(x, y, atol=1e-5) for x, y in zip(a, b))


@pytest.mark.parametrize("existing", [False, True])
def test_the_report_never_replaces_the_model_fix_writes(tmp_path, existing):
    """``-o MODEL.fixed.onnx`` with ``--fix`` named the file the fix writes: the report replaced
    the fixed model just written. Refused before any work (exit 2), whether or not an earlier
    run left that file."""
    src = tmp_path / "m.onnx"
    onnx.save(fix_models()["R009"], str(src))
    fixed = tmp_path / "m.fixed.onnx"
    if existing:
        fixed.write_bytes(b"an earlier fix")
    r = invoke(str(src), "--fix", "-o", str(fixed))
    assert r.exit_code == 2 and "the model --fix writes" in r.stderr
    if existing:
        assert fixed.read_bytes() == b"an earlier fix"
    else:
        assert not fixed.exists()
        r = invoke(str(src), "--fix", "-o", str(tmp_path / "report.txt"))
        assert r.exit_code == 0 and onnx.load(str(fixed)).graph.node


def test_fix_without_the_passes_says_so_and_writes_nothing(tmp_path, monkeypatch):
    import shapeinfer.lint.runner as runner

    monkeypatch.setattr(runner, "available_passes", lambda names: ([], list(names)))
    src = tmp_path / "m.onnx"
    onnx.save(fix_models()["R009"], str(src))
    r = invoke(str(src), "--fix")
    assert "not available in this installation: remove-noop-reshape" in r.stderr
    assert "nothing written" in r.stderr
    assert not (tmp_path / "m.fixed.onnx").exists()
    assert "R009" in r.stdout


def test_fix_copies_are_not_linted_again_nor_overwritten(tmp_path):
    # `lint DIR --fix` writes m.fixed.onnx beside m.onnx: the next `lint DIR` lints m.onnx only,
    # and a second --fix leaves the first copy as it is, saying so.
    from shapeinfer.lint.runner import available_passes

    if available_passes(["remove-noop-reshape"])[1]:
        pytest.skip("remove-noop-reshape not in this installation")
    d = tmp_path / "models"
    d.mkdir()
    onnx.save(fix_models()["R009"], str(d / "m.onnx"))
    r = invoke(str(d), "--fix", "--format", "json")
    fixed = d / "m.fixed.onnx"
    assert fixed.exists() and f"wrote {fixed}" in r.stderr
    r = invoke(str(d), "--format", "json")
    assert {f["path"] for f in json.loads(r.stdout)} == {str(d / "m.onnx")}
    assert "1 file" in invoke(str(d)).stdout
    fixed.write_bytes(b"left by the user")
    r = invoke(str(d), "--fix")
    assert f"{fixed} already exists and is not overwritten" in r.stderr
    assert fixed.read_bytes() == b"left by the user"
    assert "R009" in r.stdout  # the finding is reported, not fixed
    r = invoke(str(fixed))  # named explicitly, a *.fixed.onnx file is linted
    assert "E900" in r.stdout


def test_unknown_profile_suggests_the_closest():
    r = run(str(model_path("bert_ts")), "--rules", "strct")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "shapeinfer: error: unknown rule profile 'strct' (did you mean 'strict'?) "
        "(shipped: default, onednn, onnxruntime, openvino, strict; or give a path)"
    ]


# ------------------------------------------------------------------ CI files


def test_pre_commit_hook_and_workflow_example():
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: shapeinfer-lint" in hooks and "entry: shapeinfer lint" in hooks
    assert re.search(r"files: ['\"]?\\\.onnx\$", hooks)
    wf = next(p for p in (ROOT / "examples").iterdir() if "workflow" in p.name)
    text = wf.read_text()
    assert "shapeinfer lint" in text and "--format sarif" in text and "upload-sarif" in text


def test_folder_search_finds_models_whatever_the_suffix_case(tmp_path):
    """``BERT.ONNX`` in a folder is linted like ``bert.onnx`` (issue 24); ``--fix`` copies
    (``*.fixed.onnx``, any case) are still skipped."""
    d = tmp_path / "upper"
    d.mkdir()
    onnx.save(reshape_const([2, 3, 4], [5, 5]), str(d / "BROKEN.ONNX"))
    onnx.save(reshape_const([2, 3, 4], [5, 5]), str(d / "OLD.FIXED.ONNX"))
    r = run(str(d), "--format", "json")
    found = json.loads(r.stdout)
    assert {os.path.basename(f["path"]) for f in found if f["code"] == "R004"} == {"BROKEN.ONNX"}
    assert r.returncode == 1
