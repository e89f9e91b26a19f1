"""Do the models ``shapeinfer -o`` and ``shapeinfer optimize`` write load and compute the same?

    python benchmarks/loadability.py MODEL.onnx ... [--tmp DIR]

For each model: runs both commands, loads input and outputs in onnxruntime (default session
options, CPU), feeds the same inputs (``ort_oracle.feeds``, as tests/io/test_loadability.py does:
open dims 2, ``seq`` 5; token ids in [0, 50), masks of ones, floats from a normal, strings a
sentence) and prints a markdown table row: whether the input loads, whether the outputs' results
are identical to the input's, the same within the tests' tolerance or different (with the first
output that is not identical: the largest absolute difference of a float output), and whether
``onnx.checker.check_model(full_check=True)`` accepts input / ``-o`` / ``optimize`` output.
Needs onnxruntime.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testkit import ort_oracle  # the tests' inputs and comparison of results


def feeds(path: str) -> dict[str, np.ndarray]:
    """The inputs tests/io/test_loadability.py feeds the model at ``path`` (tensor inputs only)."""
    return ort_oracle.feeds(onnx.load(path, load_external_data=False), {"seq": 5}, unbound=2)


def run(path: str, inputs: dict) -> list | str:
    """onnxruntime's outputs (default session options), or the load / run error's first line."""
    try:
        sess = ort_oracle.session(path, optimize=True)
    except Exception as e:
        return "LOAD FAIL: " + ort_oracle.error_line(e, 150)
    try:
        return sess.run(None, inputs)
    except Exception as e:
        return "RUN FAIL: " + ort_oracle.error_line(e, 150)


def compare(want: list | str, got: list | str) -> str:
    """``identical``; ``same within tolerance`` (:func:`ort_oracle.outputs_differ`'s, as the tests
    use) and the first inexact output; or ``DIFFERENT`` and the first output beyond it."""
    if isinstance(got, str):
        return got
    if isinstance(want, str):
        return "input fails"
    inexact = None
    for i, (x, y) in enumerate(zip(want, got)):
        diff = ort_oracle.outputs_differ(x, y)
        if diff:
            return f"DIFFERENT: output {i}: {diff}"
        if inexact is None and (diff := ort_oracle.outputs_differ(x, y, rtol=0, atol=0)):
            inexact = f"output {i}: {diff}"
    return f"same within tolerance ({inexact})" if inexact else "identical"


def checker_accepts(path: str) -> bool:
    try:
        onnx.checker.check_model(path, full_check=True)
    except Exception:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--tmp", help="folder for the written models (default: a temporary one)")
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="loadability-")
    print("| model | input loads | `-o` | `optimize` | checker input/-o/optimize |\n|---|---|---|---|---|")
    for path in args.models:
        name = os.path.basename(path)[: -len(".onnx")]
        written = {"-o": os.path.join(tmp, name + ".o.onnx"), "optimize": os.path.join(tmp, name + ".opt.onnx")}
        commands = {"-o": ["shapeinfer", path, "-o"], "optimize": ["shapeinfer", "optimize", path, "-o"]}
        inputs = feeds(path)
        want = run(path, inputs)
        cells = []
        for how, out in written.items():
            if os.path.exists(out):
                os.unlink(out)
            r = subprocess.run([*commands[how], out], capture_output=True, text=True)
            if not os.path.exists(out):
                cells.append(f"no output (exit {r.returncode})")
                continue
            cells.append(compare(want, run(out, inputs)))
        checks = "/".join("yes" if checker_accepts(p) else "no" for p in [path, *written.values()] if os.path.exists(p))
        loads = "yes" if not isinstance(want, str) else want
        print(f"| {name} | {loads} | {cells[0]} | {cells[1]} | {checks} |", flush=True)
        for out in written.values():
            if os.path.exists(out):
                os.unlink(out)


if __name__ == "__main__":
    main()
