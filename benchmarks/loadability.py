"""Do the models ``shapeinfer -o`` and ``shapeinfer optimize`` write load and compute the same?

    python benchmarks/loadability.py MODEL.onnx ... [--tmp DIR]

For each model: runs both commands, loads input and outputs in onnxruntime (default session
options, CPU), feeds the same inputs (open dims 2, ``seq`` 5; token ids in [0, 50), masks of
ones, floats from a normal) and prints a markdown table row: whether the input loads, the
largest absolute difference of each output's results from the input's, and whether
``onnx.checker.check_model(full_check=True)`` accepts input / ``-o`` / ``optimize`` output.
Needs onnxruntime.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile

import numpy as np
import onnx


def feeds(path: str) -> dict[str, np.ndarray]:
    """Inputs for a model whose graph inputs are tensors."""
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(0)
    out = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 5 if d.dim_param == "seq" else 2 for d in tt.shape.dim]
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if "mask" in i.name:
            out[i.name] = np.ones(shape, dt)
        elif dt.kind in "iu":
            out[i.name] = rng.integers(0, 50, shape).astype(dt)
        else:
            out[i.name] = rng.standard_normal(shape).astype(dt)
    return out


def run(path: str, inputs: dict) -> list | str:
    """onnxruntime's outputs, or the load / run error's first line."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:
        return "LOAD FAIL: " + str(e).strip().splitlines()[0][:150]
    try:
        return sess.run(None, inputs)
    except Exception as e:
        return "RUN FAIL: " + str(e).strip().splitlines()[0][:150]


def max_diff(want: list | str, got: list | str) -> str:
    if isinstance(got, str):
        return got
    if isinstance(want, str):
        return "input fails"
    worst = 0.0
    for x, y in zip(want, got):
        d = _diff(x, y)
        if isinstance(d, str):
            return d
        worst = max(worst, d)
    return f"max diff {worst:.1e}"


def _diff(x, y) -> float | str:
    """Largest absolute difference between two outputs: tensors, or what onnxruntime returns for
    sequences and maps (lists, dicts, e.g. a ZipMap's list of label -> probability dicts)."""
    if isinstance(x, dict) or isinstance(y, dict):
        if not (isinstance(x, dict) and isinstance(y, dict)) or x.keys() != y.keys():
            return "MAP KEYS differ"
        parts = [_diff(np.asarray(x[k]), np.asarray(y[k])) for k in x]
    elif isinstance(x, list) or isinstance(y, list):
        if not (isinstance(x, list) and isinstance(y, list)) or len(x) != len(y):
            return "SEQUENCE LENGTH differs"
        parts = [_diff(a, b) for a, b in zip(x, y)]
    else:
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return f"SHAPE {x.shape} vs {y.shape}"
        if not x.size:
            return 0.0
        if x.dtype.kind in "OUS" or y.dtype.kind in "OUS":
            return 0.0 if np.array_equal(x, y) else "STRINGS differ"
        return float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
    for d in parts:
        if isinstance(d, str):
            return d
    return max(parts, default=0.0)


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
            cells.append(max_diff(want, run(out, inputs)))
        checks = "/".join("yes" if checker_accepts(p) else "no" for p in [path, *written.values()] if os.path.exists(p))
        loads = "yes" if not isinstance(want, str) else want
        print(f"| {name} | {loads} | {cells[0]} | {cells[1]} | {checks} |", flush=True)
        for out in written.values():
            if os.path.exists(out):
                os.unlink(out)


if __name__ == "__main__":
    main()
