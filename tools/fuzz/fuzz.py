"""Long differential fuzz run: shapeinfer's dims and optimize's outputs against onnxruntime.

Usage: python tools/fuzz/fuzz.py [--examples N] [--seed S] [--max-steps K] [--no-optimize]
                                 [--stop] [--save DIR]

Generates N random valid graphs (testkit/fuzz_graphs.py: Shape/Gather/Slice/Concat/Unsqueeze/
Squeeze/Reshape/Expand/Transpose/Flatten/MatMul/Add/Mul/Range/ConstantOfShape/Where over inputs
with symbolic dims, opsets 11-23, up to K generator steps each) with hypothesis seed S, and
checks each at 2-3 random bindings: every tensor's inferred dims against onnxruntime's actual
shape, and ``shapeinfer.optimize`` (symbolic and specialised to one binding) against the
original's outputs. Unlike ``pytest -m fuzz``, which stops and shrinks at the first failure,
this counts every failure; ``--stop`` makes it stop and shrink instead. ``--save DIR`` writes
each failing model, cut down to what the failing tensor needs, with its bindings.

Prints: example count, duration, discards, unresolved dims, failures by kind, known open
issues hit (fuzz_graphs.KNOWN_ISSUES), ops generated. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)  # testkit

import onnx  # noqa: E402

from testkit import fuzz_graphs as fg  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000, help="graphs to check (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    ap.add_argument("--max-steps", type=int, default=12, help="generator steps per graph (default 12)")
    ap.add_argument("--no-optimize", action="store_true", help="check inferred dims only")
    ap.add_argument("--stop", action="store_true", help="stop at the first failure and shrink it")
    ap.add_argument("--save", metavar="DIR", help="write failing models (cut down) and bindings here")
    ap.add_argument("--show", type=int, default=3, help="failing cases to print in full (default 3)")
    args = ap.parse_args(argv)

    stats, seconds = fg.run_fuzz(
        args.examples,
        args.seed,
        max_steps=args.max_steps,
        optimize=not args.no_optimize,
        stop_on_failure=args.stop,
    )
    print(f"seed {args.seed}, max steps {args.max_steps}, optimize {'off' if args.no_optimize else 'on'}")
    print(fg.summary(stats, seconds))
    shown = set()
    for k, (f, case) in enumerate(stats.failures):
        small = case.model
        if f.tensor:
            small = fg.ancestors_model(case.model, [f.tensor])
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            onnx.save(small, os.path.join(args.save, f"failure_{k}.onnx"))
            with open(os.path.join(args.save, f"failure_{k}.json"), "w") as fh:
                json.dump({"failure": str(f), "bindings": case.bindings}, fh, indent=1)
        key = (f.kind, f.op)
        if key in shown or len(shown) >= args.show:
            continue
        shown.add(key)
        print(f"\n--- {f}")
        print(repr(fg.Case(small, case.bindings)))
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
