"""Ask a runtime whether it accepts a model file, and ask lint the same question per target.

Shared by ``tests/lint/test_lint_runtime.py`` (a bounded slice) and ``benchmarks/lint_vs_runtime.py``
(every model). A runtime *refuses* a model when loading it fails:

- ``onnx``: ``onnx.checker.check_model(path, full_check=True)`` (the path form, so that external
  data files are checked too);
- ``onnxruntime``: ``InferenceSession(path, providers=["CPUExecutionProvider"])``;
- ``openvino``: ``Core().read_model(path)`` then ``compile_model(model, "CPU")``.

Each probe runs in a child process (a runtime may abort or take the memory of a bad model), so a
crash is a refusal too. :func:`lint_verdict` lints the file with the target's rule profile (as
``shapeinfer lint --rules TARGET``) and returns its error-level findings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

#: lint target -> the runtime that judges it (oneDNN Graph has no installable Python runtime).
RUNTIME_OF = {"onnx": "onnx", "onnxruntime": "onnxruntime", "openvino": "openvino", "onednn": None}
#: lint target -> the rule profile ``shapeinfer lint --rules`` takes for it.
PROFILE_OF = {"onnx": "default", "onnxruntime": "onnxruntime", "openvino": "openvino", "onednn": "onednn"}

_PROBE = r"""
import json, sys
runtime, paths = sys.argv[1], sys.argv[2:]
out = {}
for path in paths:
    try:
        if runtime == "onnx":
            import onnx
            onnx.checker.check_model(path, full_check=True)
        elif runtime == "onnxruntime":
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.log_severity_level = 4
            ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        elif runtime == "openvino":
            import openvino as ov
            core = ov.Core()
            core.compile_model(core.read_model(path), "CPU")
        else:
            raise SystemExit(f"unknown runtime {runtime}")
        out[path] = None
    except Exception as e:
        out[path] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""


def available(runtime: str, python: str | None = None) -> bool:
    """Whether ``runtime`` can be imported (by ``python``, else this interpreter)."""
    module = {"onnx": "onnx", "onnxruntime": "onnxruntime", "openvino": "openvino"}[runtime]
    if python is None or python == sys.executable:
        return importlib.util.find_spec(module) is not None
    r = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=120)
    return r.returncode == 0


def probe(runtime: str, path: str, *, python: str | None = None, timeout: float = 600) -> str | None:
    """None when ``runtime`` loads the model at ``path``, else the reason it refused (one line)."""
    return probe_many(runtime, [path], python=python, timeout=timeout)[path]


def probe_many(
    runtime: str, paths: list[str], *, python: str | None = None, timeout: float = 600
) -> dict[str, str | None]:
    """:func:`probe` of each of ``paths`` in one process of ``runtime`` (path as given -> None or
    the reason); a crash or a timeout is every path's reason."""
    absolute = [os.path.abspath(p) for p in paths]
    try:
        r = subprocess.run(
            [python or sys.executable, "-c", _PROBE, runtime, *absolute],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return dict.fromkeys(paths, f"timeout after {timeout:g}s")
    lines = [x for x in r.stdout.splitlines() if x.strip()]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return dict.fromkeys(paths, f"crashed (exit {r.returncode}): {tail[:200]}")
    verdicts = json.loads(lines[-1])
    return {p: (None if verdicts[a] is None else one_line(verdicts[a])) for p, a in zip(paths, absolute)}


def one_line(text: str, width: int = 160) -> str:
    """The most telling line of a runtime's message, cut to ``width``: OpenVINO puts the cause
    last (after "Exception from ..." and "Check ... failed at ..."), onnx and onnxruntime first."""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()] or [""]
    return (lines[-1] if "Exception from" in lines[0] else lines[0])[:width]


def lint_verdict(path: str, target: str):
    """The error-level findings of ``shapeinfer lint --rules PROFILE`` for ``target`` on ``path``."""
    from shapeinfer.lint.config import profile_names, resolve
    from shapeinfer.lint.runner import lint_path

    profile = PROFILE_OF[target] if PROFILE_OF[target] in profile_names() else "default"
    cfg = resolve(rules=profile, isolated=True)
    return [f for f in lint_path(path, cfg).findings if f.severity == "error"]
