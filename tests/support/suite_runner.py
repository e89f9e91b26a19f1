"""Run a vendored or installed test suite under pytest in a child process that writes its
results as JSON (tests/onnx_suite, tests/osi_suite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: the child's address-space limit on Linux (bytes): a blow-up is a MemoryError, which the
#: suites count as a crash of that test
MEMORY_LIMIT = 6 * 2**30


def _limit_memory() -> None:  # pragma: no cover  (runs in the child)
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_for_json(cmd: list[str], *, env: dict, cwd: str, timeout: float, out: str, what: str) -> dict:
    """Run ``cmd`` (memory-limited on Linux) and return the JSON it wrote to ``out``; a run that
    wrote nothing (a crash of the interpreter, the timeout) raises RuntimeError naming ``what``,
    with the tail of its output."""
    p = subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory if sys.platform.startswith("linux") else None,
    )
    if not os.path.exists(out):
        tail = p.stdout[-3000:] + p.stderr[-3000:]
        raise RuntimeError(f"{what} produced no results (exit {p.returncode}):\n{tail}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)
