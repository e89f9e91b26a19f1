"""How often a run of the command calls back down into the protobuf layer (issue 34's figure).

Runs ``shapeinfer ARGS...`` in process under a profiler and records every call from a function of
one layer of the package (``testkit/layers.py``) into a function of the ``io`` layer, the
protobuf and the files. Module imports are left out. A run reads the model through ``io`` and
writes it through ``io``; every other distinct (caller, callee) pair is a place where a higher
layer goes back to the protobuf: the engine converting a tensor as it walks, a pass reading an
attribute. The figure is the number of those distinct pairs, per calling layer; the calls
column counts how often they ran. Prints the pairs with ``--list``::

    python benchmarks/layer_walk.py [--list] -- MODEL.onnx -o OUT.onnx
    python benchmarks/layer_walk.py -- optimize MODEL.onnx -o OUT.onnx
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from testkit.layers import LAYERS, layer_of  # noqa: E402


def _layer(module: str) -> str | None:
    try:
        return layer_of(module)[1]
    except AssertionError:
        return None


def trace(argv: list[str]) -> collections.Counter:
    """(caller layer, caller function, io function) -> calls, for one run of ``shapeinfer argv``."""
    from shapeinfer.cli.main import main as cli

    edges: collections.Counter = collections.Counter()

    def profile(frame, event, arg) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if not callee.startswith("shapeinfer.io") or frame.f_code.co_name == "<module>":
            return
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith("shapeinfer"):
            caller = caller.f_back
        if caller is None or caller.f_code.co_name == "<module>":
            return
        module = caller.f_globals["__name__"]
        layer = _layer(module)
        if layer is None or layer == "io":
            return
        edges[(layer, f"{module}:{caller.f_code.co_name}", f"{callee}:{frame.f_code.co_name}")] += 1

    sys.setprofile(profile)
    try:
        cli(argv, standalone_mode=False)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    return edges


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every (caller, io function) pair")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="the shapeinfer command line (after --)")
    a = ap.parse_args()
    argv = a.args[1:] if a.args[:1] == ["--"] else a.args
    if not argv:
        ap.error("give the shapeinfer command line after --")
    with open(os.devnull, "w") as null:
        out, sys.stdout = sys.stdout, null
        try:
            edges = trace(argv)
        finally:
            sys.stdout = out
    per_layer: dict[str, list] = collections.defaultdict(list)
    for (layer, caller, callee), n in edges.items():
        per_layer[layer].append((caller, callee, n))
    print(f"shapeinfer {' '.join(argv)}")
    print(f"{'layer':<10} {'pairs':>5} {'calls':>8}")
    rank = {layer: r for r, layer, _ in LAYERS}
    for layer in sorted(per_layer, key=lambda x: -rank[x]):
        rows = per_layer[layer]
        print(f"{layer:<10} {len(rows):>5} {sum(r[2] for r in rows):>8}")
        if a.list:
            for caller, callee, n in sorted(rows):
                print(f"    {caller} -> {callee} ({n})")
    print(f"{'total':<10} {len(edges):>5} {sum(edges.values()):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
