"""Check that what shapeinfer writes runs in onnxruntime like its input, and count verify mismatches.

For each model: ``shapeinfer M -o A`` and ``shapeinfer optimize M -o B`` (the installed command);
if onnxruntime loads M, both A and B must load (default session options) and give M's outputs
(sessions with graph optimizations off; exact for integer and bool outputs, rtol 1e-4 /
atol 1e-5 for floats) at two bindings of the input symbols. Then
``shapeinfer verify M --bind batch=2,seq=7 --bind batch=3,seq=11`` and its mismatch count.

Needs onnxruntime. Usage::

    python benchmarks/deploy_roundtrip.py MODEL.onnx ... [--no-verify] [--json]

Prints one line per model and the totals; exit 1 when any output failed to load or differed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testkit import ort_oracle  # the tests' inputs and comparison of results
from testkit.roundtrip import BINDINGS, feeds


def run(path: Path, model: onnx.ModelProto) -> list[list[np.ndarray]]:
    """Outputs of ``path`` at each binding (raises when onnxruntime cannot load or run it).

    onnxruntime must load the model with its default graph optimizations; the values come from a
    session with optimizations off, so that fusions onnxruntime picks differently once shapes are
    annotated (fp16 models differ in the last bits then) do not count as different outputs.
    """
    ort_oracle.session(str(path), optimize=True)
    sess = ort_oracle.session(str(path))
    return [sess.run(None, feeds(model, b, seed=i)) for i, b in enumerate(BINDINGS)]


def same(a: list[list[np.ndarray]], b: list[list[np.ndarray]], fp16: bool = False) -> str | None:
    """None when the outputs agree, else what differs.

    For a model that computes in float16, onnxruntime's CPU provider runs fp16 nodes without an
    fp16 kernel in float32 between inserted Casts and drops Cast pairs where the graph allows, so
    two equivalent graphs can round differently: those differences within fp16 rounding
    (rtol / atol 1e-2) are reported as such, not as different outputs.
    """
    for runs_a, runs_b in zip(a, b):
        if len(runs_a) != len(runs_b):
            return f"{len(runs_a)} outputs vs {len(runs_b)}"
        for i, (x, y) in enumerate(zip(runs_a, runs_b)):
            diff = ort_oracle.outputs_differ(x, y, rtol=1e-4, atol=1e-5)
            if diff is None:
                continue
            if fp16 and ort_oracle.outputs_differ(x, y, rtol=1e-2, atol=1e-2) is None:
                return f"same within fp16 rounding (output {i}: {diff})"
            return f"output {i}: {diff}"
    return None


def check(path: Path, do_verify: bool) -> dict:
    """One model's row."""
    row: dict = {"model": path.name}
    model = onnx.load(str(path), load_external_data=False)
    fp16 = any(t.data_type == onnx.TensorProto.FLOAT16 for t in model.graph.initializer) or any(
        a.name == "to" and a.i == onnx.TensorProto.FLOAT16 for n in model.graph.node for a in n.attribute
    )
    try:
        ref = run(path, model)
    except Exception as e:
        row["input"] = f"onnxruntime refuses the input: {ort_oracle.error_line(e, 120)}"
        ref = None
    with tempfile.TemporaryDirectory() as tmp:
        for kind, cmd in (("o", ["shapeinfer", str(path)]), ("optimize", ["shapeinfer", "optimize", str(path)])):
            out = Path(tmp) / f"{kind}.onnx"
            p = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True)
            if p.returncode != 0 or not out.exists():
                row[kind] = f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1][:160] if p.stderr else ''}"
                continue
            if ref is None:
                row[kind] = "not compared"
                continue
            try:
                got = run(out, model)
            except Exception as e:
                row[kind] = f"LOAD FAIL: {ort_oracle.error_line(e, 160)}"
                continue
            row[kind] = same(ref, got, fp16) or "same"
    if do_verify:
        binds = [f"--bind={','.join(f'{k}={v}' for k, v in b.items())}" for b in BINDINGS]
        p = subprocess.run(["shapeinfer", "verify", str(path), *binds], capture_output=True, text=True)
        text = p.stdout + p.stderr
        found = re.findall(r"(\d+) mismatch\w*, (\d+) unresolved", text)  # the last line is the total
        row["verify_exit"] = p.returncode
        row["verify"] = int(found[-1][0]) if found else (text.strip().splitlines() or ["no output"])[-1][:160]
        if found:
            row["verify_unresolved"] = int(found[-1][1])
    return row


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for path in args.models:
        row = check(path, not args.no_verify)
        rows.append(row)
        if not args.json:
            print(
                f"{row['model']:44} -o: {row.get('o')}; optimize: {row.get('optimize')}"
                + (f"; verify: {row.get('verify')}" if "verify" in row else "")
                + (f"; {row['input']}" if "input" in row else ""),
                flush=True,
            )
    compared = [r for r in rows if "input" not in r]

    def ok(v: object) -> bool:
        return isinstance(v, str) and v.startswith("same")

    bad = [r for r in compared if not ok(r.get("o")) or not ok(r.get("optimize"))]
    totals = {
        "models": len(rows),
        "onnxruntime loads input": len(compared),
        "-o same outputs": sum(r.get("o") == "same" for r in compared),
        "optimize same outputs": sum(r.get("optimize") == "same" for r in compared),
        "same within fp16 rounding": sum(
            str(r.get(k)).startswith("same within") for r in compared for k in ("o", "optimize")
        ),
        "load failures or different outputs": len(bad),
        "verify 0 mismatches": sum(r.get("verify") == 0 for r in rows),
        "verify mismatches total": sum(r["verify"] for r in rows if isinstance(r.get("verify"), int)),
    }
    if args.json:
        print(json.dumps({"rows": rows, "totals": totals}, indent=1))
    else:
        print("totals: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
