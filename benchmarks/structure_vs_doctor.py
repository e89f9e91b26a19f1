"""Side by side on the model-structure fixtures: onnx-doctor, ``shapeinfer lint``, and the
runtimes that judge them.

Writes every model of ``testkit/structure_models.py`` (one structural defect each, or a close
valid model) to a temporary folder, then per model:

- the runtimes' verdicts: ``onnx.checker.check_model(path, full_check=True)``, onnxruntime
  ``InferenceSession`` (CPU), OpenVINO ``read_model`` + ``compile_model("CPU")`` (each in a child
  process of ``--python``, see ``testkit/runtime_probe.py``); ``-`` when the runtime is missing;
- onnx-doctor's codes (``onnx-doctor check --output-format json``, from its own venv:
  ``--doctor`` or ``$ONNX_DOCTOR``, else ``onnx-doctor`` on ``PATH``; install it in a venv of its
  own with ``python -m venv VENV && VENV/bin/pip install onnx-doctor==0.2.0``);
- this checkout's ``shapeinfer lint`` codes under each ``--targets`` target (default profile).

Codes carry their severity (``ONNX001:e``, ``M010:e``, ``SIM003:i``). The summary counts, per
tool: models flagged, error findings on models every runtime loads (false errors for the onnx
target: an error where ``onnx.checker`` accepts), and the models onnx-doctor flags that
shapeinfer does not. Exit 1 when shapeinfer misses a model onnx-doctor flags with an error
that a runtime confirms, or reports an error under a target whose runtime loads the model.

    python benchmarks/structure_vs_doctor.py [--markdown] [--python PY] [--doctor EXE] [--only SUBSTR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]  # this checkout's shapeinfer and testkit, whatever is installed

from testkit.runtime_probe import available, probe  # noqa: E402
from testkit.structure_models import MODELS  # noqa: E402

RUNTIMES = ("onnx", "onnxruntime", "openvino")
#: lint target -> the runtime that judges its errors
JUDGE = {"onnx": "onnx", "onnxruntime": "onnxruntime", "openvino": "openvino"}


def doctor_codes(exe: str, path: str) -> list[str] | None:
    """onnx-doctor's findings on ``path`` as ``CODE:s`` (None when it could not run)."""
    try:
        r = subprocess.run([exe, "check", path, "--output-format", "json"], capture_output=True, text=True, timeout=300)
        found = json.loads(r.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return sorted({f"{f['code']}:{f['severity'][0]}" for f in found})


def lint_codes(path: str, target: str) -> list[str]:
    """``shapeinfer lint --target TARGET`` (default profile, no project settings) as ``CODE:s``."""
    from shapeinfer.lint.config import resolve
    from shapeinfer.lint.runner import lint_path

    cfg = resolve(rules="default", target=target, isolated=True)
    return sorted({f"{f.code}:{f.severity[0]}" for f in lint_path(path, cfg).findings})


def names(rows: list[dict]) -> str:
    return ", ".join(r["model"] for r in rows) or "-"


def has_error(codes) -> bool:
    return any(c.endswith(":e") for c in codes or ())


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter with onnxruntime and openvino")
    ap.add_argument("--doctor", default=os.environ.get("ONNX_DOCTOR", ""), help="onnx-doctor (or $ONNX_DOCTOR)")
    ap.add_argument("--targets", default="onnx,onnxruntime,openvino")
    ap.add_argument("--only", default="", help="models whose label contains this")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    args.doctor = args.doctor or shutil.which("onnx-doctor") or ""
    if not os.access(args.doctor, os.X_OK):
        ap.error("no onnx-doctor: give --doctor PATH or set ONNX_DOCTOR (pip install onnx-doctor==0.2.0)")
    targets = [t for t in args.targets.split(",") if t]
    runtimes = [rt for rt in RUNTIMES if available(rt, args.python)]
    labels = [x for x in MODELS if args.only in x]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for label in labels:
            paths[label] = os.path.join(tmp, f"{label}.onnx")
            with open(paths[label], "wb") as f:
                f.write(MODELS[label]().SerializeToString())
        jobs = [(rt, label) for label in labels for rt in runtimes]
        with ThreadPoolExecutor(2) as ex:
            verdicts = dict(
                zip(jobs, ex.map(lambda j: probe(j[0], paths[j[1]], python=args.python, timeout=300), jobs))
            )
        rows = []
        for label in labels:
            rows.append(
                {
                    "model": label,
                    "refused": {rt: verdicts[(rt, label)] for rt in runtimes},
                    "doctor": doctor_codes(args.doctor, paths[label]),
                    "lint": {t: lint_codes(paths[label], t) for t in targets},
                }
            )
    return report(rows, runtimes, targets, args.markdown)


def report(rows: list[dict], runtimes: list[str], targets: list[str], md: bool) -> int:
    head = ["model", *runtimes, "onnx-doctor", *(f"shapeinfer ({t})" for t in targets)]

    def cells(r):
        out = [r["model"]]
        out += [
            "-" if rt not in r["refused"] else ("refuses" if r["refused"][rt] else "loads")
            for rt in RUNTIMES
            if rt in runtimes
        ]
        out.append("(not run)" if r["doctor"] is None else " ".join(r["doctor"]) or "·")
        out += [" ".join(r["lint"][t]) or "·" for t in targets]
        return out

    table = [cells(r) for r in rows]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for c in table:
            print("| " + " | ".join(c) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(head, *table)]
        for c in [head, *table]:
            print("  ".join(x.ljust(w) for x, w in zip(c, widths)).rstrip())
    print()
    bad = 0
    refused_any = [r for r in rows if any(r["refused"].values())]
    doc_flags = [r for r in rows if r["doctor"]]
    doc_err_confirmed = [r for r in rows if has_error(r["doctor"]) and any(r["refused"].values())]
    doc_false = [
        r for r in rows if has_error(r["doctor"]) and "onnx" in r["refused"] and not any(r["refused"].values())
    ]
    print(f"models: {len(rows)}, refused by at least one runtime: {len(refused_any)}")
    print(
        f"onnx-doctor: flags {len(doc_flags)}; errors a runtime confirms on {len(doc_err_confirmed)}; "
        f"errors on {len(doc_false)} models every runtime loads: {', '.join(r['model'] for r in doc_false) or '-'}"
    )
    missed_refusals = [r for r in refused_any if not r["doctor"]]
    print(f"onnx-doctor: silent on {len(missed_refusals)} refused models: {names(missed_refusals)}")
    for t in targets:
        flags = [r for r in rows if r["lint"][t]]
        judge = JUDGE.get(t)
        false = [r for r in rows if judge in r["refused"] and has_error(r["lint"][t]) and not r["refused"][judge]]
        missed = [r for r in rows if judge in r["refused"] and r["refused"][judge] and not has_error(r["lint"][t])]
        not_flagged = [r for r in doc_flags if not r["lint"][t]]
        print(
            f"shapeinfer --target {t}: flags {len(flags)}; false errors (the {judge} runtime loads): {len(false)} "
            f"{names(false)}; missed refusals: {len(missed)} {names(missed)}"
        )
        print(f"    onnx-doctor flags, shapeinfer does not: {', '.join(r['model'] for r in not_flagged) or '-'}")
        # a model onnx-doctor flags with an error that this target's runtime confirms, and lint is silent on
        bad += len(false) + len([r for r in doc_err_confirmed if r["refused"].get(judge) and not r["lint"][t]])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
