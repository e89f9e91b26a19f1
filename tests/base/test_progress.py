"""The progress line: drawn on a terminal's stderr only after the work has run a while, erased at
the end; nothing when stderr is not a terminal."""

from __future__ import annotations

import io
import subprocess
import sys

from support.common import model_path

from shapeinfer.base import progress
from shapeinfer.passes import optimize_with_report


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_line_appears_after_the_delay_and_is_erased(monkeypatch):
    monkeypatch.delenv("SHAPEINFER_PROGRESS", raising=False)
    out = Tty()
    p = progress.Progress("verify", total=2, stream=out)
    p.step("batch=1")
    assert out.getvalue() == ""  # quick work: nothing
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    p.step("batch=2")
    assert "verify [1/2] batch=2" in out.getvalue()
    p.close()
    assert out.getvalue().endswith("\r") and out.getvalue().split("\r")[-2].strip() == ""


def test_nothing_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("SHAPEINFER_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    out = io.StringIO()
    p = progress.Progress("lint", total=3, stream=out)
    p.advance()
    p.close()
    assert out.getvalue() == ""


def test_optimize_reports_its_passes(monkeypatch, capsys):
    monkeypatch.setenv("SHAPEINFER_PROGRESS", "1")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    optimize_with_report(str(model_path("bert_ts")))
    err = capsys.readouterr().err
    assert "optimize fold-shapes (round 1" in err and "dce (round" in err and err.endswith("\r")


def test_optimize_command_writes_no_progress_to_a_pipe(tmp_path):
    out = tmp_path / "o.onnx"
    cmd = [sys.executable, "-m", "shapeinfer.cli", "optimize", str(model_path("bert_ts")), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr
