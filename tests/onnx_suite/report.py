"""onnx's own shape-inference test suite run against shapeinfer, with the figures per status.

Usage: python tests/onnx_suite/report.py [-k EXPR] [--show STATUS,...] [--json OUT]

Runs the 1,066 tests vendored in tests/onnx_suite/upstream with onnx's ``infer_shapes``
replaced by shapeinfer's inference and lint (tests/onnx_suite/harness.py, plugin.py) and
prints the count per status (pass, more-precise, less-precise, wrong, missed-error,
false-error, crash, error-message, other-failure, skipped), then the tests of the statuses
named by ``--show`` with their details (and, where explained, why the status is acceptable).
``--json OUT`` writes every test's status and details. Exit status 1 when a test crashed or
an error onnx reports was missed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", dest="select", help="a pytest -k expression selecting tests")
    ap.add_argument("--show", default="", help="statuses whose tests to list, comma separated")
    ap.add_argument("--json", dest="json_out", help="write every test's status here")
    args = ap.parse_args(argv)
    results = harness.run_suite(select=args.select)
    show = tuple(s for s in args.show.split(",") if s)
    print(harness.report(results, show=show))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    c = harness.figures(results)
    return 1 if c.get("crash") or c.get("missed-error") else 0


if __name__ == "__main__":
    raise SystemExit(main())
