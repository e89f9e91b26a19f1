"""Does what `shapeinfer optimize -o` (and `-o`) writes run slower in onnxruntime than its input?

For each MODEL the written models are made in a temporary folder, then onnxruntime (CPU, one
thread, its default optimization level, as a deployment loads a model) times the input, a byte
copy of the input (the control: what the method reads as a difference where there is none) and
each written model. Each gets ``--sessions`` fresh sessions, created interleaved (input, copy,
written, ... then the reverse order), each run ``--runs`` times after three warm-ups; a figure is
the median over sessions of each session's median. A ratio is written / input; read it against
the control's, which shows the noise of the machine. The written models: ``-o``, ``optimize``
and ``optimize --all-shapes`` (+shapes: every tensor's type in value_info, as ``-o`` writes;
docs/decisions.md says why optimize does not by default). Also printed: the op types of which
onnxruntime's optimized graph of a written model keeps more nodes than the input's (a fusion
the rewrite or the written types prevented, or enabled).

    python benchmarks/written_speed.py MODEL.onnx ... [--size SYM=N ...] [--sessions 6] [--runs 40]

Symbols not given by ``--size`` take the last binding of ``MODEL.json`` when the model has one
beside it (the fixtures and the vision corpus do), else 1 when their name has "batch" in it, else
64; the inputs are testkit's oracle's (masks all ones, integers in [0, 50), floats normal).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from testkit import ort_oracle  # noqa: E402


def _feeds(path: str, sizes: dict[str, int]) -> dict:
    """The inputs at ``sizes`` (testkit's oracle: masks all ones, ids in [0, 50), floats normal);
    a symbol not given takes its value in the last binding of the model's bindings file
    (``MODEL.json`` beside it, as the fixtures and the vision corpus have: sizes the model runs
    at), else 1 when its name has "batch" in it, else 64."""
    import json

    import onnx

    m = onnx.load(path, load_external_data=False)
    names = {d.dim_param for vi in m.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param}
    sidecar = path[: -len(".onnx")] + ".json" if path.endswith(".onnx") else None
    listed: dict[str, int] = {}
    if sidecar and os.path.exists(sidecar):
        with open(sidecar) as f:
            listed = (json.load(f).get("bindings") or [{}])[-1]
    binding = {n: sizes.get(n, listed.get(n, 1 if "batch" in n.lower() else 64)) for n in names}
    return ort_oracle.feeds(m, binding, unbound=64)


def _data_files(path: str) -> set[str]:
    import onnx

    m = onnx.load(path, load_external_data=False)
    return {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}


def _session(path: str, optimized_to: str | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 4
    if optimized_to:
        so.optimized_model_filepath = optimized_to
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _ort_ops(path: str, folder: str) -> Counter:
    import onnx

    out = os.path.join(folder, "ort_optimized.onnx")
    _session(path, out)
    return Counter(n.op_type for n in onnx.load(out, load_external_data=False).graph.node)


def _times(paths: dict[str, str], feeds: dict, sessions: int, runs: int) -> dict[str, float]:
    medians: dict[str, list[float]] = {k: [] for k in paths}
    order = list(paths)
    for k in range(sessions):
        for name in order if k % 2 == 0 else order[::-1]:
            s = _session(paths[name])
            for _ in range(3):
                s.run(None, feeds)
            t = []
            for _ in range(runs):
                t0 = time.perf_counter()
                s.run(None, feeds)
                t.append(time.perf_counter() - t0)
            medians[name].append(statistics.median(t))
            del s
    return {k: statistics.median(v) for k, v in medians.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--size", action="append", default=[], metavar="SYM=N", help="a symbol's size (repeatable)")
    ap.add_argument("--sessions", type=int, default=6)
    ap.add_argument("--runs", type=int, default=40)
    a = ap.parse_args()
    try:
        sizes = {k: int(v) for k, v in (s.split("=", 1) for s in a.size)}
    except ValueError:
        ap.error("--size takes SYM=N with N an integer")
    print(
        f"{'model':<32} {'input ms':>9} {'control':>8} {'-o':>7} {'optimize':>9} {'+shapes':>8}  "
        "onnxruntime keeps more of (optimize)"
    )
    for model in a.models:
        name = os.path.basename(model)[: -len(".onnx")] if model.endswith(".onnx") else os.path.basename(model)
        with tempfile.TemporaryDirectory() as td:
            copy = os.path.join(td, "copy", os.path.basename(model))
            os.makedirs(os.path.dirname(copy))
            shutil.copyfile(model, copy)
            for data in _data_files(model):  # (its external data beside it, as read)
                shutil.copyfile(os.path.join(os.path.dirname(model), data), os.path.join(os.path.dirname(copy), data))
            paths = {"input": model, "control": copy}
            for label, args in (("-o", []), ("optimize", ["optimize"]), ("--all-shapes", ["optimize", "--all-shapes"])):
                out = os.path.join(td, label.strip("-"), "w.onnx")
                os.makedirs(os.path.dirname(out))
                cmd = [sys.executable, "-m", "shapeinfer.cli", *args, model, "-o", out]
                r = subprocess.run(cmd, capture_output=True)
                if r.returncode == 0:
                    paths[label] = out
            try:
                t = _times(paths, _feeds(model, sizes), a.sessions, a.runs)
                base = _ort_ops(model, td)
                more = {}
                if "optimize" in paths:
                    more = {k: (base[k], v) for k, v in _ort_ops(paths["optimize"], td).items() if v > base[k]}
            except Exception as e:  # onnxruntime refusing the model or the sizes
                print(f"{name:<32} not timed: {str(e).splitlines()[0][:100]}")
                continue
        kinds = ("control", "-o", "optimize", "--all-shapes")
        ratio = {k: (f"{t[k] / t['input']:.3f}" if k in t else "-") for k in kinds}
        print(
            f"{name:<32} {t['input'] * 1e3:9.3f} {ratio['control']:>8} {ratio['-o']:>7} {ratio['optimize']:>9} "
            f"{ratio['--all-shapes']:>8}  " + ", ".join(f"{k} {x}->{y}" for k, (x, y) in sorted(more.items())),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
