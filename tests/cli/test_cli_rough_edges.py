"""The rough edges of issue 26, as a user meets them: a pipe closed early, a bare
``shapeinfer``, ``python -m shapeinfer``, the dependencies the package imports, the install
hints."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest
from support.common import ROOT, model_path, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.mark.parametrize("module", ["shapeinfer", "shapeinfer.cli"])
@pytest.mark.parametrize("command", [[], ["optimize"]])
def test_output_pipe_closed_early_is_quiet(module, command):
    """``shapeinfer M -o - | head -c 10``: the reader leaves; no 'internal error', no traceback."""
    args = [sys.executable, "-m", module, *command, str(model_path("bert_ts")), "-o", "-"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = p.stdout.read(10)
    p.stdout.close()  # as head does after 10 bytes (the model is 1 MB: the writer is still writing)
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=300) == 0  # the reader went away: not an error (the help's exit codes)
    assert len(head) == 10
    assert err == ""


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_report_pipe_closed_early_is_quiet_and_exits_0_in_text_and_json(fmt):
    """``shapeinfer M --all | head -1`` and ``... --json | head -1`` end alike (issue 37 item 4)."""
    args = [sys.executable, "-m", "shapeinfer", str(model_path("llama_ts")), "--all", *fmt]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=300) == 0
    assert "error" not in err.lower() and "Traceback" not in err


def test_dash_o_to_a_terminal_is_refused_in_one_line(monkeypatch, tmp_path):
    from click.testing import CliRunner

    import shapeinfer.cli.common as common
    from shapeinfer.cli.main import main

    monkeypatch.setattr(common, "_stdout_is_terminal", lambda: True)
    from support.common import ROOT

    cnn = str(ROOT / "tests" / "models" / "static" / "cnn.static.onnx")
    for args in ([str(model_path("bert_ts"))], ["optimize", str(model_path("bert_ts"))], ["make-dynamic", cnn]):
        dims = ["--dim", "images:0=batch"] if args[0] == "make-dynamic" else []
        r = CliRunner().invoke(main, [*args, "-o", "-", *dims])
        assert r.exit_code == 2 and r.stdout == "", r.output
        assert r.stderr.strip() == (
            "shapeinfer: error: -o - writes the binary model to standard output, which is a terminal:"
            " redirect it (> out.onnx)"
        )


def test_ctrl_c_exits_130(monkeypatch):
    """Interrupted anywhere in a run: one line, exit 130 (the shell's code for SIGINT)."""
    from click.testing import CliRunner

    import shapeinfer.document as document
    from shapeinfer.cli.main import main

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(document.Document, "infer", interrupted)
    r = CliRunner().invoke(main, [str(model_path("bert_ts"))])
    assert r.exit_code == 130 and r.stderr.strip() == "shapeinfer: error: interrupted", r.output


def test_lint_of_a_folder_without_models_says_no_models_found(tmp_path):
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    r = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert r.exit_code == 2
    assert (
        r.stderr.strip() == f"shapeinfer: error: no models found: {tmp_path} holds no *.onnx file (nothing was linted)"
    )


def test_bare_command_prints_the_help_without_error_prefix():
    r = run_cli()
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("Usage: shapeinfer MODEL [OPTIONS]")
    assert "error:" not in r.stderr
    assert "Commands:" in r.stderr and "optimize" in r.stderr


def test_python_dash_m_shapeinfer():
    r = subprocess.run([sys.executable, "-m", "shapeinfer", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("shapeinfer ")
    path = str(model_path("vit_dynamo"))
    a = subprocess.run([sys.executable, "-m", "shapeinfer", path, "--json"], capture_output=True, text=True)
    b = run_cli(path, "--json")
    assert a.returncode == b.returncode == 0
    strip = re.compile(r'"(elapsed|seconds|time)[^"]*": [0-9.e-]+')
    assert strip.sub("", a.stdout) == strip.sub("", b.stdout)
    r = subprocess.run([sys.executable, "-m", "shapeinfer", "nope.onnx"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("shapeinfer: error:")


#: Import name -> distribution name, where they differ.
_DIST = {"google": "protobuf", "onnx_graphsurgeon": "onnx-graphsurgeon", "onnx_ir": "onnx-ir"}


def _requirement_names(reqs: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[@]", r, maxsplit=1)[0].lower() for r in reqs}


def test_every_imported_package_is_declared():
    """Each third-party package shapeinfer imports is a dependency, or an extra's for the
    optional modules (those import it only when used)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _requirement_names(project["dependencies"])
    extras = set().union(*(_requirement_names(v) for v in project["optional-dependencies"].values()))
    imported: dict[str, set[str]] = {}
    for path in (ROOT / "shapeinfer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "shapeinfer" and top not in sys.stdlib_module_names and top != "tomli":
                    imported.setdefault(_DIST.get(top, top).lower(), set()).add(path.name)
    assert {"numpy", "protobuf", "onnx", "click"} <= set(imported)
    for dist, files in imported.items():
        assert dist in runtime or dist in extras, (dist, sorted(files))
        if dist not in runtime:  # optional: only the interop modules, verify and fold-constants import it
            optional = {"graphsurgeon.py", "networkx.py", "verify.py", "modelsource.py", "fold_constants.py"}
            optional |= {"onnx_shape_inference.py", "_osi_spelling.py"}  # compat's drop-in for onnx_ir models
            assert files <= optional, (dist, files)


def test_no_install_hint_names_the_unpublished_package():
    """shapeinfer is not on PyPI: every hint installs from a checkout or a repository URL."""
    unpublished = re.compile(r"pip install ['\"]?shapeinfer(?!(\[[\w,]+\])?\s*@)")
    assert unpublished.search("pip install shapeinfer[verify]") and unpublished.search("pip install 'shapeinfer'")
    assert not unpublished.search("pip install 'shapeinfer[verify] @ git+https://HOST/OWNER/shapeinfer'")
    texts = [ROOT / "README.md", ROOT / "examples" / "github-workflow.yml", *(ROOT / "shapeinfer").rglob("*.py")]
    for path in texts:
        assert not unpublished.search(path.read_text()), path


def test_a_failure_while_reporting_is_one_line_not_a_traceback(monkeypatch):
    """The report runs guarded like inference: an internal error there is one stderr line, exit 2."""
    from click.testing import CliRunner

    import shapeinfer.cli.commands.infer as infer_cmd
    from shapeinfer.cli.main import main

    def broken(*args, **kwargs):
        raise RuntimeError("report exploded")

    monkeypatch.setattr(infer_cmd, "_report", broken)
    res = CliRunner().invoke(main, [str(model_path("bert_ts"))])
    assert res.exit_code == 2
    assert "internal error: RuntimeError: report exploded" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("command", [[], ["optimize"]])
def test_in_place_without_an_output_is_a_usage_error(command, tmp_path):
    """``shapeinfer M --in-place`` wrote nothing and said nothing (exit 0): --in-place only lets
    -o name the input."""
    res = run_cli(*command, str(model_path("bert_ts")), "--in-place")
    assert res.returncode == 2
    assert "--in-place" in res.stderr and "-o" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("command", [[], ["optimize"]])
def test_external_data_for_a_model_without_any_says_so(command, tmp_path):
    out = tmp_path / "m.onnx"
    res = run_cli(*command, str(model_path("bert_ts")), "-o", str(out), "--external-data", "w.bin")
    assert res.returncode == 0 and out.exists()
    assert not (tmp_path / "w.bin").exists()
    assert "note: --external-data w.bin: the model stores no tensor as external data" in res.stderr


def test_make_dynamic_refuses_an_axis_given_two_symbols(tmp_path):
    """As --bind refuses a symbol given two values (the last one won)."""
    static = str(ROOT / "tests" / "models" / "static" / "bert.static.onnx")
    out = tmp_path / "m.onnx"
    res = run_cli("make-dynamic", static, "--dim", "input_ids:0=b", "--dim", "input_ids:0=b2", "-o", str(out))
    assert res.returncode == 2 and not out.exists()
    assert "input_ids:0 is given twice, as b and b2" in res.stderr
    cnn = str(ROOT / "tests" / "models" / "static" / "cnn.static.onnx")
    res = run_cli("make-dynamic", cnn, "--dim", "images:0=b", "--dim", "images:0=b", "-o", str(out))
    assert res.returncode == 0 and out.exists(), res.stderr  # the same symbol twice: one request
