"""What the README says a newcomer will see is what they see (issue 37 item 12)."""

from __future__ import annotations

import re
import shutil

from click.testing import CliRunner
from support.common import ROOT, model_path

from shapeinfer.cli.main import main

README = (ROOT / "README.md").read_text()


def test_the_quick_start_writes_outside_the_checkout():
    block = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    out = re.search(r" -o (\S+)", block).group(1)
    assert out.startswith("/"), out  # never an untracked file left in the checkout


def test_no_placeholder_install_line():
    assert "HOST/OWNER" not in README


def test_the_g015_example_is_the_real_message():
    quoted = re.search(r'\("(the range seq=513: contradicts the guard [^"(]*)\(from', README.replace("\n  ", " "))
    assert quoted, "the README's G015 example"
    r = CliRunner().invoke(main, [str(model_path("bert_ts")), "--dim-range", "seq=513:"])
    assert quoted.group(1).strip() in r.stdout, (quoted.group(1), r.stdout)


def test_strict_lint_of_bert_with_a_range_passes_once_fixed_as_the_readme_says(tmp_path):
    src = tmp_path / "bert_ts.onnx"
    shutil.copy(model_path("bert_ts"), src)
    strict = ["--rules", "strict", "--dim-range", "seq=1:512"]
    r = CliRunner().invoke(main, ["lint", str(src), *strict])
    assert r.exit_code == 1 and r.stdout.count("R009 [error]") == 3 and "G003" not in r.stdout, r.stdout
    assert CliRunner().invoke(main, ["lint", str(src), "--fix", "--dim-range", "seq=1:512"]).exit_code == 0
    r = CliRunner().invoke(main, ["lint", str(tmp_path / "bert_ts.fixed.onnx"), *strict])
    assert r.exit_code == 0, r.stdout


def test_the_exit_codes_table_matches_the_help():
    """One table of exit codes (issue 37 item 4), in the README and in `shapeinfer --help`."""
    readme = {int(m) for m in re.findall(r"^  \| (\d+) \| ", README, re.M)}
    help_text = CliRunner().invoke(main, ["--help"]).stdout
    block = help_text.split("Exit codes", 1)[1].split("Options:", 1)[0]
    helped = {int(m) for m in re.findall(r"^\s{4}(\d+)\s{2,}", block, re.M)}
    assert readme == helped == {0, 1, 2, 130}
