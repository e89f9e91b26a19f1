"""Side by side: ``shapeinfer lint`` and ``onnx.checker.check_model(full_check=True)`` on the
lint rule test models (testkit/lint_models.py).

For every model built to trigger a rule: does ``shapeinfer lint`` report the rule (with the
target the rule needs), and does the onnx checker (which raises on the first problem it finds,
running onnx's strict shape inference with ``full_check=True``) report anything, and what.
Then a model with three independent errors, to show how many each one reports.

    python benchmarks/lint_vs_checker.py [--markdown]
"""

from __future__ import annotations

import os
import sys

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.lint import RULES, lint_model
from testkit.lint_models import CASES, make, out, vi


def checker(model: onnx.ModelProto) -> str | None:
    """The checker's first complaint (one line), or None when it accepts the model."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        lines = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
        return (lines[-1] if lines else type(e).__name__)[:110]
    return None


def three_errors() -> onnx.ModelProto:
    """R004, R001 and G002 in one graph, on independent nodes."""
    ints = onnx.numpy_helper.from_array
    import numpy as np

    nodes = [
        h.make_node("Reshape", ["x", "t1"], ["a"], name="count_mismatch"),
        h.make_node("Reshape", ["x", "t2"], ["b"], name="two_minus_ones"),
        h.make_node("Add", ["p", "q"], ["c"], name="no_broadcast"),
    ]
    inits = [ints(np.array([5, 5], np.int64), "t1"), ints(np.array([-1, -1], np.int64), "t2")]
    return make(
        nodes,
        [vi("x", T.FLOAT, [2, 3, 4]), vi("p", T.FLOAT, [2, 3]), vi("q", T.FLOAT, [4, 3])],
        [out("a", rank=2), out("b", rank=2), out("c", rank=2)],
        inits,
    )


def main(argv: list[str]) -> int:
    md = "--markdown" in argv
    rows = []
    for case in CASES:
        if not case.triggers:
            continue
        m = case.build()
        found = [f for f in lint_model(m, "m.onnx", target=case.target) if f.code == case.code]
        chk = checker(m)
        rows.append(
            (
                case.code,
                case.label,
                f"yes ({found[0].severity})" if found else "NO",
                "passes" if chk is None else f"rejects: {chk}",
            )
        )
    head = ("rule", "model", "shapeinfer lint", "onnx.checker full_check")
    if md:
        print("| " + " | ".join(head) + " |")
        print("| --- | --- | --- | --- |")
        for r in rows:
            print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    else:
        w = [max(len(r[i]) for r in [*rows, head]) for i in range(3)]
        print(f"{head[0]:<{w[0]}}  {head[1]:<{w[1]}}  {head[2]:<{w[2]}}  {head[3]}")
        for r in rows:
            print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
    clean_rejected = []
    for case in CASES:
        if not case.triggers:
            chk = checker(case.build())
            if chk is not None:
                clean_rejected.append(f"{case.code}/{case.label}: {chk}")
    missed = sorted({r[0] for r in rows if r[3] == "passes"})
    caught = sorted({r[0] for r in rows if r[3] != "passes"})
    lint_missed = sorted({r[0] for r in rows if r[2] == "NO"})
    print()
    print(f"trigger models: {len(rows)} over {len({r[0] for r in rows})} rules")
    print(f"shapeinfer lint reports its rule on {sum(r[2] != 'NO' for r in rows)}/{len(rows)} (missed: {lint_missed})")
    print(f"onnx.checker rejects {sum(r[3] != 'passes' for r in rows)}/{len(rows)} models")
    n_clean = sum(not c.triggers for c in CASES)
    print(f"  (and {len(clean_rejected)} of the {n_clean} clean models: {'; '.join(clean_rejected) or '-'})")
    print(f"  rules with a model the checker passes: {', '.join(missed)}")
    print(f"  rules the checker rejects on every model: {', '.join(c for c in caught if c not in missed)}")
    m = three_errors()
    lint = [f for f in lint_model(m, "m.onnx") if f.severity == "error"]
    chk = checker(m)
    print()
    print("one model with three independent errors (R004, R001, G002 on three nodes):")
    print(f"  shapeinfer lint: {len(lint)} errors: " + ", ".join(f"{f.code}@{f.node}" for f in lint))
    print(f"  onnx.checker:    {'passes' if chk is None else '1 error: ' + chk}")
    print()
    print(f"onnx {onnx.__version__}; rules in the catalog: {len(RULES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
