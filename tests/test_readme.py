"""What the README and docs/ say a reader will see is what they see (issue 37 item 12, issue 34).

Every ``$ shapeinfer ...`` line of a ```console block in README.md and docs/*.md is run in
process (from the checkout, ``/tmp/`` mapped to a fresh folder per page, the page's commands in
order), and each line shown under it must be a line of what it prints (timings aside). A command
whose line ends in ``# exit N`` must exit N; the others must exit 0.
"""

from __future__ import annotations

import re
import shutil

import pytest
from click.testing import CliRunner
from support.common import ROOT, model_path

from shapeinfer.cli.main import main

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md") if p.name != "rules.md")]


def console_examples(text: str) -> list[tuple[str, int, list[str]]]:
    """(command line, expected exit code, lines shown) for each ``$ shapeinfer`` line of the
    ```console blocks of ``text``."""
    out: list[tuple[str, int, list[str]]] = []
    for block in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                cmd, _, code = line[2:].partition("# exit ")
                out.append((cmd.strip(), int(code) if code else 0, []))
            elif out and line.strip() and line.strip() != "...":
                out[-1][2].append(line.rstrip())
    return out


def _untimed(text: str) -> str:
    return re.sub(r" ?\(\d+\.\d+s\)", "", text)


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_commands_print_what_they_show(page, tmp_path, monkeypatch):
    examples = console_examples((ROOT / page).read_text())
    monkeypatch.chdir(ROOT)
    for cmd, code, shown in examples:
        argv = cmd.replace("/tmp/", f"{tmp_path}/").split()
        assert argv[0] == "shapeinfer", cmd
        r = CliRunner().invoke(main, argv[1:])
        assert r.exception is None or isinstance(r.exception, SystemExit), (cmd, r.exception)
        assert r.exit_code == code, (cmd, r.exit_code, r.output)
        printed = {line.rstrip() for line in _untimed(r.output).splitlines()}
        missing = [s for s in shown if _untimed(s) not in printed]
        assert not missing, (page, cmd, missing, r.output[-2000:])


@pytest.mark.parametrize("page", ["README.md", "docs/api.md", "docs/dropins.md", "docs/ranges.md"])
def test_the_pages_python_runs(page, tmp_path, monkeypatch):
    """Every ```python block of the page runs (in order, one namespace per block)."""
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(), re.M | re.S)
    assert blocks, page
    for block in blocks:
        exec(compile(block.replace("/tmp/", f"{tmp_path}/"), page, "exec"), {})


def test_the_architecture_names_every_layer():
    """docs/architecture.md has a row for every layer tests/test_layers.py enforces."""
    from testkit.layers import LAYERS

    text = (DOCS / "architecture.md").read_text()
    for rank, layer, _ in LAYERS:
        assert f"| {layer} | {rank} |" in text, layer


def test_every_page_links_and_every_command_has_an_example():
    for name in ["cli", "api", "dropins", "ranges", "diff", "explain", "make-dynamic", "architecture", "benchmarks"]:
        assert f"(docs/{name}.md" in README, name
        assert (DOCS / f"{name}.md").is_file(), name
    shown = {cmd.split()[1] for cmd, _, _ in console_examples(README)}
    for command in ["optimize", "lint", "verify", "profile", "diff", "explain", "make-dynamic"]:
        assert command in shown, command
    lines = README.splitlines()
    setup = {line for line in lines if line.startswith("python3 -m venv")}  # the two commands, verbatim
    assert len(setup) == 2 and len(lines) <= 200, (setup, len(lines))
    assert max(len(line) for line in lines if line not in setup) <= 100


def test_every_option_is_in_the_cli_manual():
    """docs/cli.md names every option of every command (the click definitions are the truth)."""
    manual = (DOCS / "cli.md").read_text()
    for name, command in main.commands.items():
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-") and opt not in ("-h", "--help"):
                    assert f"`{opt}" in manual or f" {opt}" in manual, (name, opt)


def test_the_quick_start_writes_outside_the_checkout():
    block = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    out = re.search(r" -o (\S+)", block).group(1)
    assert out.startswith("/"), out  # never an untracked file left in the checkout


def test_no_placeholder_install_line():
    assert "HOST/OWNER" not in README


def test_the_g015_example_is_the_real_message():
    ranges = (DOCS / "ranges.md").read_text()
    quoted = re.search(r'\("(the range seq=513: contradicts the guard [^"(]*)\(from', ranges.replace("\n  ", " "))
    assert quoted, "the G015 example of docs/ranges.md"
    r = CliRunner().invoke(main, [str(model_path("bert_ts")), "--dim-range", "seq=513:"])
    assert quoted.group(1).strip() in r.stdout, (quoted.group(1), r.stdout)


def test_strict_lint_of_bert_with_a_range_passes_once_fixed_as_the_docs_say(tmp_path):
    src = tmp_path / "bert_ts.onnx"
    shutil.copy(model_path("bert_ts"), src)
    strict = ["--rules", "strict", "--dim-range", "seq=1:512"]
    r = CliRunner().invoke(main, ["lint", str(src), *strict])
    assert r.exit_code == 1 and r.stdout.count("R009 [error]") == 3 and "G003" not in r.stdout, r.stdout
    assert CliRunner().invoke(main, ["lint", str(src), "--fix", "--dim-range", "seq=1:512"]).exit_code == 0
    r = CliRunner().invoke(main, ["lint", str(tmp_path / "bert_ts.fixed.onnx"), *strict])
    assert r.exit_code == 0, r.stdout


def test_the_exit_codes_table_matches_the_help():
    """One table of exit codes (issue 37 item 4), in docs/cli.md and in `shapeinfer --help`."""
    manual = (DOCS / "cli.md").read_text()
    documented = {int(m) for m in re.findall(r"^\| (\d+) \| ", manual, re.M)}
    help_text = CliRunner().invoke(main, ["--help"]).stdout
    block = help_text.split("Exit codes", 1)[1].split("Options:", 1)[0]
    helped = {int(m) for m in re.findall(r"^\s{4}(\d+)\s{2,}", block, re.M)}
    assert documented == helped == {0, 1, 2, 130}
