"""Differential harness: does ``shapeinfer lint --rules TARGET`` report an error exactly when the
target's runtime refuses the model?

For every model file (tests/models, examples/models and the folders given with ``--models`` or
in ``$SHAPEINFER_MODEL_DIRS``, separated by ``os.pathsep``, each searched recursively) and every
target, lint runs with the target's profile and the runtime loads the file
(``testkit/runtime_probe.py``: the onnx checker with ``full_check=True``, onnxruntime's CPU
``InferenceSession``, OpenVINO ``read_model`` + ``compile_model("CPU")``). oneDNN Graph has no
installable runtime: its column shows lint only.

    python benchmarks/lint_vs_runtime.py [--models DIR ...] [--python PY] [--targets onnx,openvino]
                                         [--markdown] [--json OUT]

``--python`` runs the runtimes with another interpreter (one that has openvino installed). The
table gives, per target: models, runtime refusals, lint errors, and the agreement counts
(both, neither, false errors = lint error but the runtime loads it, missed = the runtime refuses
but lint has no error); then every disagreement with the runtime's message and lint's codes.
Exit 1 when any target disagrees on any model.

"Refuses" is loading (and for OpenVINO compiling) the model: a model that loads and then fails
when run (R004, G002 on its inputs) is outside this table. More models: the deployment variants
of ``make_deploy_variants.py MODEL... --out DIR`` (``--models DIR``). OpenVINO 2026.4's CPU
plugin fails in ``compile_model`` on onnxruntime ``quantize_static`` QDQ variants of the
TorchScript exports (low-precision MultiplyPartialTransformation, "index '0' out of range"),
where a quantized constant scales a quantized MatMul result and nothing else reads it: rule P006.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]  # this checkout's shapeinfer and testkit, whatever is installed

from shapeinfer.lint.runner import LintUsageError, discover  # noqa: E402
from testkit.runtime_probe import RUNTIME_OF, available, lint_verdict, probe  # noqa: E402

TARGETS = ("onnx", "onnxruntime", "openvino", "onednn")


def model_files(extra: list[str]) -> list[str]:
    """Every ``*.onnx`` of tests/models, examples/models and each folder of ``extra``, searched
    the way ``shapeinfer lint`` searches folders (:func:`shapeinfer.lint.runner.discover`:
    recursively, hidden folders and ``*.fixed.onnx`` skipped, each file once, so a folder given
    beside one of its subfolders adds nothing twice); a one-line exit for a folder without models."""
    try:
        return discover([os.path.join(ROOT, "tests", "models"), os.path.join(ROOT, "examples", "models"), *extra])
    except LintUsageError as e:
        raise SystemExit(f"lint_vs_runtime: {e}") from None


def default_dirs() -> list[str]:
    """The further folders ``$SHAPEINFER_MODEL_DIRS`` names (none when it is not set)."""
    dirs = [d for d in os.environ.get("SHAPEINFER_MODEL_DIRS", "").split(os.pathsep) if d]
    missing = [d for d in dirs if not os.path.isdir(d)]
    if missing:
        raise SystemExit(f"lint_vs_runtime: SHAPEINFER_MODEL_DIRS names no folder {missing[0]}")
    return dirs


def short(path: str) -> str:
    """The path relative to the repository, or its folder and name for a model outside it."""
    rel = os.path.relpath(path, ROOT)
    return rel if not rel.startswith("..") else os.path.join(*os.path.abspath(path).split(os.sep)[-2:])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--models", action="append", default=None, help="a further folder of *.onnx, searched recursively (repeatable)"
    )
    ap.add_argument("--python", default=None, help="interpreter that runs the runtimes (default: this one)")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", default=None, help="write every verdict to this file")
    args = ap.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    files = model_files(default_dirs() if args.models is None else args.models)
    have = {rt: available(rt, args.python) for rt in {"onnx", "onnxruntime", "openvino"}}
    rows = []
    t0 = time.monotonic()
    for path in files:
        for target in targets:
            rt = RUNTIME_OF[target]
            errors = lint_verdict(path, target)
            refused = probe(rt, path, python=args.python) if rt and have[rt] else None
            rows.append(
                {
                    "model": short(path),
                    "target": target,
                    "runtime": rt if rt and have[rt] else None,
                    "refused": refused,
                    "lint": sorted({f.code for f in errors}),
                    "lint_first": errors[0].message[:140] if errors else None,
                }
            )
        print(f"  {short(path)} done ({time.monotonic() - t0:.0f}s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return report(rows, targets, files, args.markdown)


def report(rows: list[dict], targets: list[str], files: list[str], md: bool) -> int:
    head = ("target", "runtime", "models", "refused", "lint errors", "both", "neither", "false errors", "missed")
    table = []
    bad = []
    for t in targets:
        rs = [r for r in rows if r["target"] == t]
        judged = [r for r in rs if r["runtime"]]
        both = sum(bool(r["refused"]) and bool(r["lint"]) for r in judged)
        neither = sum(not r["refused"] and not r["lint"] for r in judged)
        false = [r for r in judged if r["lint"] and not r["refused"]]
        missed = [r for r in judged if r["refused"] and not r["lint"]]
        bad += false + missed
        rt = judged[0]["runtime"] if judged else "-"
        n = len(judged)
        table.append(
            (
                t,
                rt,
                str(len(rs)),
                str(sum(bool(r["refused"]) for r in judged)) if n else "-",
                str(sum(bool(r["lint"]) for r in rs)),
                str(both) if n else "-",
                str(neither) if n else "-",
                str(len(false)) if n else "-",
                str(len(missed)) if n else "-",
            )
        )
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for r in table:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(x[i]) for x in [head, *table]) for i in range(len(head))]
        for r in [head, *table]:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(r)))
    print(f"\n{len(files)} models")
    if bad:
        print("\ndisagreements:")
        for r in bad:
            kind = "FALSE ERROR" if r["lint"] else "MISSED"
            print(f"  [{r['target']}] {kind} {r['model']}")
            if r["lint"]:
                print(f"      lint: {', '.join(r['lint'])}: {r['lint_first']}")
            else:
                print(f"      runtime: {r['refused']}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
