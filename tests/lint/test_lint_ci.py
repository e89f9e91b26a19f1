"""`shapeinfer lint` as a CI gate (issue 24, "CI ergonomics"): the sizes a model takes
(--dim-range, `ranges` in [tool.shapeinfer] and profiles), the exit threshold (--fail-on),
counts per code (--statistics), --explain by code or name in plain text, and what --fix that
wrote nothing exits with. onnxruntime is the oracle for what a range proves or rules out."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from support.common import ROOT, model_path

from shapeinfer.base.codes import ENGINE
from shapeinfer.cli.main import main
from shapeinfer.lint import RULES
from testkit.lint_models import CASES, make, out, reshape_const, vi

#: Hugging Face BERT exports (torch.export, and the TorchScript export after onnxruntime's
#: transformer optimizer): their position embeddings hold 512 rows, so the models run for
#: seq <= 512 only, and lint assumes min(seq, 512) == seq (G003) unless told the range.
BERTS = [model_path("bert_dynamo"), ROOT / "tests" / "models" / "deploy" / "bert_ts.tfopt.onnx"]


def lint(*args: str, cwd=None):
    """Run ``shapeinfer lint ARGS`` in-process (in ``cwd`` when given); the click result."""
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, ["lint", "--isolated", *map(str, args)], catch_exceptions=False)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, ["lint", *map(str, args)], catch_exceptions=False)
    finally:
        os.chdir(old)


def findings(result) -> list[dict]:
    return json.loads(result.stdout)


def ort_runs(path, seq: int) -> bool:
    """Whether onnxruntime runs the BERT model at batch 1 and this seq."""
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    s = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.ones((1, seq), dtype=np.int64) for i in s.get_inputs()}
    try:
        s.run(None, feeds)
    except Exception:
        return False
    return True


# ------------------------------------------------------------------ ranges


@pytest.mark.parametrize("path", BERTS, ids=lambda p: p.name)
def test_strict_passes_bert_when_seq_is_at_most_512(path):
    assert ort_runs(path, 512) and not ort_runs(path, 513)  # the model's own limit
    r = lint(path, "--rules", "strict", "--format", "json")
    assert r.exit_code == 1
    assumed = [f for f in findings(r) if f["code"] == "G003"]
    assert assumed and all("min(seq, 512) == seq" in f["message"] for f in assumed)
    r = lint(path, "--rules", "strict", "--dim-range", "seq=1:512")
    assert r.exit_code == 0, r.output
    assert "All checks passed" in r.output
    # a range that does not prove it keeps the assumption (sound: seq = 600 fails in onnxruntime)
    r = lint(path, "--rules", "strict", "--dim-range", "seq=500:600", "--format", "json")
    assert r.exit_code == 1 and "G003" in {f["code"] for f in findings(r)}


def test_strict_passes_the_torchscript_bert_export_after_fix(tmp_path):
    """The raw TorchScript export also has no-op Reshapes (R009, errors under strict): --fix
    removes them, writing no value_info (the export has none), and the written model passes
    strict under seq <= 512."""
    src = tmp_path / "bert.onnx"
    shutil.copy(model_path("bert_ts"), src)
    assert lint(src, "--rules", "strict", "--dim-range", "seq=1:512").exit_code == 1  # R009
    r = lint(src, "--rules", "strict", "--dim-range", "seq=1:512", "--fix")
    assert r.exit_code == 0, r.output
    fixed = tmp_path / "bert.fixed.onnx"
    assert not onnx.load(str(fixed)).graph.value_info
    assert ort_runs(fixed, 512) and not ort_runs(fixed, 513)
    r = lint(fixed, "--rules", "strict", "--dim-range", "seq=1:600", "--format", "json")
    assert r.exit_code == 1 and {f["code"] for f in findings(r)} == {"G003"}  # not proven: assumed


@pytest.mark.parametrize("rng, g006", [(None, True), ((1, 512), False), ((1, 600), True), ((600, 700), True)])
def test_declared_min_is_read_under_the_ranges(rng, g006):
    """A value_info declaring min(seq, 512) where inference gives seq: the same dim for seq in
    1..512, a possible mismatch when the range allows more, a provable one when it allows only
    more: a G006 warning either way, as no runtime refuses a contradiction between symbolic dims
    (tests/inference/test_declaration_severity.py)."""
    from shapeinfer.inference.engine import infer

    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Neg", ["r"], ["y"], name="neg")]
    decl = [vi("r", T.FLOAT, ["min(seq, 512)", 4])]
    model = make(nodes, [vi("x", T.FLOAT, ["seq", 4])], [out(rank=2)], value_info=decl)
    found = [d for d in infer(model, dim_ranges={"seq": rng} if rng else None).diagnostics if d.code == "G006"]
    assert bool(found) == g006, found
    if found:
        assert [d.severity for d in found] == ["warning"]
        assert found[0].message.endswith("equal") == (rng != (600, 700))  # "unless those symbols are equal"


@pytest.mark.parametrize("path", BERTS[:1], ids=lambda p: p.name)
def test_a_range_the_model_cannot_run_in_is_g015(path):
    assert not ort_runs(path, 513) and not ort_runs(path, 600)
    r = lint(path, "--dim-range", "seq=513:600", "--format", "json")
    assert r.exit_code == 1
    g015 = [f for f in findings(r) if f["code"] == "G015"]
    assert len(g015) == 1 and g015[0]["severity"] == "error"
    assert "seq=513:600" in g015[0]["message"] and "cannot run" in g015[0]["message"]


def test_ranges_in_pyproject_and_in_a_profile(tmp_path):
    bert = BERTS[0]
    proj = tmp_path / "proj"
    (proj / "models").mkdir(parents=True)
    shutil.copy(bert, proj / "models" / "bert.onnx")
    onnx.save(reshape_const([2, 3, 4], [4, 6]), str(proj / "models" / "static.onnx"))  # no seq: range not used
    pyproject = proj / "pyproject.toml"
    pyproject.write_text('[tool.shapeinfer]\nrules = "strict"\nranges = {seq = [1, 512]}\n')
    r = lint("models", cwd=proj)
    assert r.exit_code == 0, r.output
    assert "warning: range" not in r.stderr  # one of the models has seq
    pyproject.write_text('[tool.shapeinfer]\nrules = "strict"\nranges = {seq = "1:512"}\n')
    assert lint("models", cwd=proj).exit_code == 0
    pyproject.write_text('[tool.shapeinfer]\nrules = "strict"\nranges = {seq = "1:"}\n')  # no upper bound
    assert lint("models", cwd=proj).exit_code == 1
    # the flag wins over the project's range
    pyproject.write_text("[tool.shapeinfer]\nranges = {seq = [1, 512]}\n")
    r = lint("models", "--dim-range", "seq=513:600", "--select", "G015", cwd=proj)
    assert r.exit_code == 1 and "G015" in r.output
    # a profile carries ranges too, and the project's table is layered over it
    (proj / "ci.toml").write_text('extends = "strict"\n[ranges]\nseq = [1, 512]\n')
    pyproject.write_text('[tool.shapeinfer]\nrules = "ci.toml"\n')
    assert lint("models", cwd=proj).exit_code == 0
    assert lint(proj / "models", "--rules", proj / "ci.toml").exit_code == 0
    pyproject.write_text('[tool.shapeinfer]\nrules = "ci.toml"\nranges = {seq = [1, 600]}\n')
    assert lint("models", cwd=proj).exit_code == 1


@pytest.mark.parametrize(
    "table, says",
    [
        ("ranges = {seq = [0, 512]}", "seq=0:512: symbols stand for sizes of at least 1"),
        ("ranges = {seq = [600, 512]}", "the range is empty"),
        ("ranges = {seq = [1]}", 'expected [lo, hi] or "lo:hi"'),
        ("ranges = {seq = [1.5, 512]}", "a range is (lo, hi) or (lo, hi, step) with ints"),
        ('ranges = {seq = "1-512"}', "a range is (lo, hi)"),
        ("ranges = [1, 512]", "ranges must be a table"),
        ('fail-on = "warnings"', "fail-on must be one of error, warning, info"),
    ],
)
def test_bad_ranges_and_fail_on_in_pyproject(tmp_path, table, says):
    onnx.save(reshape_const([2, 3, 4], [4, 6]), str(tmp_path / "m.onnx"))
    (tmp_path / "pyproject.toml").write_text(f"[tool.shapeinfer]\n{table}\n")
    r = lint("m.onnx", cwd=tmp_path)
    assert r.exit_code == 2
    assert "pyproject.toml [tool.shapeinfer]" in r.stderr and says in r.stderr, r.stderr


def test_dim_range_flag_is_checked_like_infers(tmp_path):
    bert = BERTS[0]
    for bad, says in [("seq=0:5", "at least 1"), ("seq=5:1", "the range is empty"), ("seq", "expected SYM=LO:HI")]:
        r = lint(bert, "--dim-range", bad)
        assert r.exit_code == 2 and r.stderr.startswith("shapeinfer: error: --dim-range") and says in r.stderr
    # a symbol no linted model has: a warning with a suggestion, the lint itself goes on
    r = lint(bert, "--dim-range", "sq=1:512")
    assert r.exit_code == 0
    assert "range sq (--dim-range): no linted model has an input dim named 'sq' (did you mean 'seq'?)" in r.stderr


# ------------------------------------------------------------------ --fail-on


@pytest.fixture
def noop(tmp_path):
    """A model whose only finding is an R009 warning (a no-op Reshape that --fix removes)."""
    p = tmp_path / "noop.onnx"
    nodes = [h.make_node("Reshape", ["x", "t"], ["r"], name="noop"), h.make_node("Relu", ["r"], ["y"], name="relu")]
    t = onnx.numpy_helper.from_array(np.array([2, 3], np.int64), "t")
    onnx.save(make(nodes, [vi("x", T.FLOAT, [2, 3])], [out(rank=2)], [t]), str(p))
    return p


def test_fail_on_threshold(noop, tmp_path):
    sev = {f["severity"] for f in findings(lint(noop, "--format", "json"))}
    assert sev == {"warning"}
    assert lint(noop).exit_code == 0  # default: error
    assert lint(noop, "--fail-on", "error").exit_code == 0
    assert lint(noop, "--fail-on", "warning").exit_code == 1
    assert lint(noop, "--fail-on", "info").exit_code == 1
    assert lint(noop, "--fail-on", "info", "--ignore", "R009").exit_code == 0
    # S004 is info: only --fail-on info fails on it
    gpt2 = model_path("gpt2_ts")
    codes = {f["code"]: f["severity"] for f in findings(lint(gpt2, "--select", "S004", "--format", "json"))}
    assert codes == {"S004": "info"}
    assert lint(gpt2, "--select", "S004", "--fail-on", "warning").exit_code == 0
    assert lint(gpt2, "--select", "S004", "--fail-on", "info").exit_code == 1
    # in pyproject, and the flag wins
    (tmp_path / "pyproject.toml").write_text('[tool.shapeinfer]\nfail-on = "warning"\n')
    assert lint("noop.onnx", cwd=tmp_path).exit_code == 1
    assert lint("noop.onnx", "--fail-on", "error", cwd=tmp_path).exit_code == 0
    assert lint("noop.onnx", "--fail-on", "bad").exit_code == 2


def test_fix_that_wrote_nothing_fails_at_the_threshold(noop):
    fixed = noop.with_name("noop.fixed.onnx")
    fixed.write_bytes(b"left from an earlier run")  # --fix does not overwrite it: nothing written
    r = lint(noop, "--fix", "--fail-on", "warning")
    assert r.exit_code == 1
    assert "already exists and is not overwritten" in r.stderr and "R009" in r.stdout
    assert "--fix wrote no file (1 fixable finding left)" in r.stderr
    assert fixed.read_bytes() == b"left from an earlier run"
    assert lint(noop, "--fix").exit_code == 0  # a warning is under the default threshold
    # nothing to fix: said so, and the exit code is the findings' as without --fix
    r = lint(noop, "--fix", "--fail-on", "warning", "--ignore", "R009")
    assert r.exit_code == 0 and "--fix wrote no file (no fixable finding)" in r.stderr
    fixed.unlink()
    r = lint(noop, "--fix", "--fail-on", "warning")  # written: the fixed model has no finding left
    assert r.exit_code == 0, r.output
    assert "wrote" in r.stderr and fixed.exists()
    assert lint(fixed, "--fail-on", "info").exit_code == 0


# ------------------------------------------------------------------ --statistics


def test_statistics_counts_per_code(noop):
    paths = [model_path("gpt2_ts"), model_path("bert_ts"), noop]
    every = findings(lint(*paths, "--format", "json"))
    expect = Counter(f["code"] for f in every)
    assert len(expect) >= 3
    r = lint(*paths, "--statistics", "--format", "json")
    rows = json.loads(r.stdout)
    assert {row["code"]: row["count"] for row in rows} == dict(expect)
    assert [row["count"] for row in rows] == sorted((row["count"] for row in rows), reverse=True)
    for row in rows:
        assert row["name"] == RULES[row["code"]].name
        assert row["fixable"] == sum(1 for f in every if f["code"] == row["code"] and f["fix"])
    text = lint(*paths, "--statistics")
    assert text.exit_code == lint(*paths).exit_code
    lines = text.stdout.splitlines()
    assert len(lines) == len(rows) + 2 and lines[-1].startswith(f"Found {len(every)} findings")
    assert lines[-2] == "[*] every finding fixable with --fix, [-] some, [ ] none"  # pip users get no rules/README
    for line, row in zip(lines, rows):
        count, code, mark, sev, name = re.fullmatch(r" *(\d+)  (\w+)  (\[.\])  (\w+) +(\S+)", line).groups()
        assert (int(count), code, sev, name) == (row["count"], row["code"], row["severity"], row["name"])
        assert mark == ("[*]" if row["fixable"] == row["count"] else "[-]" if row["fixable"] else "[ ]")
        assert row["severities"] == {row["severity"]: row["count"]}
    r = lint(noop, "--statistics", "--format", "sarif")
    assert r.exit_code == 2 and "--statistics prints text or json" in r.stderr


def test_statistics_severity_cells_add_up_to_the_totals():
    """A code whose findings have two levels (a target regrades some) shows each level's count,
    so the column adds up to the summary line's totals, not the worst level for all of them."""
    from shapeinfer.lint.session import statistics_lines

    rows = [
        {
            "code": "G006",
            "name": "declared-shape-mismatch",
            "severity": "error",
            "count": 67,
            "fixable": 0,
            "severities": {"error": 20, "warning": 47},
        },
        {
            "code": "R009",
            "name": "reshape-noop",
            "severity": "warning",
            "count": 3,
            "fixable": 3,
            "severities": {"warning": 3},
        },
    ]
    lines = statistics_lines(rows)
    assert lines[0].split() == ["67", "G006", "[", "]", "20", "error,", "47", "warning", "declared-shape-mismatch"]
    assert lines[1].split()[:5] == ["3", "R009", "[*]", "warning", "reshape-noop"]


# ------------------------------------------------------------------ --explain


def test_explain_takes_codes_and_names_in_plain_text():
    by_code = lint("--explain", "R009")
    assert by_code.exit_code == 0 and by_code.stdout.startswith("R009 reshape-noop (warning)")
    assert lint("--explain", "reshape-noop").stdout == by_code.stdout
    assert lint("--explain", "r009").stdout == by_code.stdout
    both = lint("--explain", "reshape-noop,S004")
    assert both.exit_code == 0 and "R009 reshape-noop" in both.stdout and "S004 shape-of-static-tensor" in both.stdout
    for code, r in RULES.items():
        out = lint("--explain", code).stdout
        assert "``" not in out and "`shapeinfer" not in out, code
        assert out.startswith(f"{code} {r.name} ({r.severity})")
    r = lint("--explain", "reshape-nop")
    assert r.exit_code == 2 and "did you mean 'reshape-noop'" in r.stderr


# ------------------------------------------------------------------ every code under its own code


def test_every_code_literal_in_the_package_is_in_the_catalog():
    """The engine, the ops and the checks emit codes as literals ("E031", ctx.diag(..., "E017"));
    each is a catalog entry, so --select/--ignore/--explain/severity work on it."""
    package = ROOT / "shapeinfer"
    found = {}
    for p in package.rglob("*.py"):
        for m in re.finditer(r"""["']([A-Z]\d{3})["']""", p.read_text(encoding="utf-8")):
            found.setdefault(m.group(1), p.relative_to(ROOT).as_posix())
    assert len(found) > 60
    assert {c: where for c, where in found.items() if c not in RULES} == {}


def test_the_layers_below_lint_name_every_code_by_its_constant():
    """inference, its ops, io, the symbolic algebra and the passes name codes by constant
    (``codes.SLICE_INVALID``), never by literal; the constants are the entries of
    ``base.codes.CATALOG``, which lint reads as its rules."""
    from shapeinfer.base.codes import CATALOG

    literal = re.compile(r"""["'][EGRSMP]\d{3}["']""")
    for layer in ("inference", "io", "symbolic", "passes"):
        for p in (ROOT / "shapeinfer" / layer).rglob("*.py"):
            assert not literal.search(p.read_text(encoding="utf-8")), p
    assert len(CATALOG) > 60
    assert RULES is CATALOG


def test_reshape_1_without_its_attribute_is_r007_for_inference_and_lint():
    """Inference reported a Reshape-1 without its ``shape`` attribute as R006 (the code of the
    legacy attribute form, a warning), which lint turned into R007; both now say R007."""
    from shapeinfer.inference.engine import infer
    from shapeinfer.lint import lint_model

    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad")
    m = make([node], [vi("x", T.FLOAT, [2, 3]), vi("t", T.INT64, [1])], [out("y")], opset=4)
    assert [d.code for d in infer(m).diagnostics if d.code[0] == "R"] == ["R007"]
    found = [f for f in lint_model(m, "m.onnx") if f.code[0] == "R"]
    assert [f.code for f in found] == ["R007"]
    assert (
        "takes its target as the 'shape' attribute, but it has none (the target is given as an input"
        in found[0].message
    )


@pytest.mark.parametrize("case", [c for c in CASES if c.triggers], ids=lambda c: c.id)
def test_lint_keeps_the_engines_codes(case):
    """Each diagnostic inference reports on a rule's fixture is a finding under the same code,
    never folded into another (E010 ... (E031), E001 ... (E002))."""
    from shapeinfer.inference.engine import infer
    from shapeinfer.lint import lint_model

    model = case.build()
    engine = {d.code for d in infer(case.build()).diagnostics}
    found = lint_model(model, "m.onnx", target=case.target)
    assert engine <= {f.code for f in found}
    for f in found:
        assert not re.search(r"\([A-Z]\d{3}\)$", f.message), f.message
        assert f.name == RULES[f.code].name


ENGINE_ERRORS = [
    c
    for c in CASES
    if c.triggers and RULES[c.code].severity == "error" and ENGINE in RULES[c.code].by and c.code[0] == "E"
]


@pytest.mark.parametrize("case", ENGINE_ERRORS, ids=lambda c: c.id)
def test_an_engine_error_is_a_model_onnxruntime_refuses(case):
    """An inference code whose default severity is error (E004, E007, E015-E090...) names a node
    onnxruntime refuses, at load or when it runs (graph inputs fed with ones, dims 2)."""
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    model = case.build()
    try:
        s = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception:
        return
    feeds = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 2 for d in i.shape or []]
        dtype = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(bool)": bool}[i.type]
        feeds[i.name] = np.ones(shape, dtype)
    with pytest.raises(Exception):  # noqa: B017 (onnxruntime raises its own Fail/InvalidArgument classes)
        s.run(None, feeds)


def test_loop_that_does_not_settle_is_e032_under_its_own_code(monkeypatch):
    """E032 is the safety net past the fixpoint bound (8 rounds; widening settles any loop in
    fewer): with the bound at 1, a carried value whose shape changes once reaches it."""
    import shapeinfer.inference.ops.control_flow as cf
    from shapeinfer.lint import lint_model

    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c_out"]), h.make_node("Concat", ["v", "v"], ["v_out"], axis=0)],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, None)],
        [vi("c_out", T.BOOL, []), vi("v_out", T.FLOAT, None)],
    )
    node = h.make_node("Loop", ["n", "", "v0"], ["y"], name="bad", body=body)
    model = make([node], [vi("n", T.INT64, []), vi("v0", T.FLOAT, [1, 2])], [out(rank=2)])
    assert "E032" not in {f.code for f in lint_model(model, "m.onnx")}
    monkeypatch.setattr(cf, "MAX_FIXPOINT_ITERATIONS", 1)
    e032 = [f for f in lint_model(model, "m.onnx") if f.code == "E032"]
    assert [(f.severity, f.node, f.name) for f in e032] == [("info", "bad", "loop-not-settled")]


# ------------------------------------------------------------------ external data


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling-link"])
def test_unreadable_external_data_is_a_finding(tmp_path, kind):
    """A data file that is there but cannot be read as data (a folder, a named pipe, a link to
    nothing: a checkout that did not fetch the weights) is E003 on the tensor, like a missing
    one (tests/lint/test_lint_runtime.py), and onnxruntime refuses the model."""
    from test_lint_runtime import external_model

    path = external_model(str(tmp_path / "m"), small=False)
    data = tmp_path / "m" / "m.data"
    if kind == "folder":
        data.mkdir()
    elif kind == "fifo":
        os.mkfifo(data)
    else:
        data.symlink_to("gone.bin")
    r = lint(path, "--select", "E", "--format", "json")
    assert r.exit_code == 1
    # a link to nothing is a missing file: one finding for the file, not for each tensor in it
    tensor = None if kind == "dangling-link" else "w"
    assert [(f["code"], f["tensor"], f["severity"]) for f in findings(r)] == [("E003", tensor, "error")]
    if kind != "fifo":  # onnxruntime would block reading a pipe
        ort = pytest.importorskip("onnxruntime")
        with pytest.raises(Exception, match=r"(?i)m\.data|external|directory|no such file"):
            ort.InferenceSession(path, providers=["CPUExecutionProvider"])
