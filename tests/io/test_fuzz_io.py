"""A bounded slice of tools/fuzz/fuzz_io.py (hostile command lines and external-data entries over
every subcommand, from different working directories): no traceback, hang, memory blow-up, file
opened outside the model's folder, or changed input. The long run is
``python tools/fuzz/fuzz_io.py --cases 600``."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 2))


def test_fuzz_io_slice(tmp_path):
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "fuzz", "fuzz_io.py"), "--cases", "30", "--seed", "11"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "30 cases" in r.stdout and " 0 failing" in r.stdout
