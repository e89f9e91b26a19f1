"""What a form of the model for inference to walk would cost (issue 34's "one form"), in process.

    python benchmarks/ir_forms.py [MODEL ...] [--reps 9]

Per model (default: examples/models/llama_ts.onnx; the figure issue 34 asks is on llama32_ts),
the median over ``--reps`` rounds of, each after a collection of the heap, in one process:

    infer          shapeinfer's inference as it runs (it walks the protobuf)
    +reads         the same, keeping what the walk read of each node (op, domain, inputs,
                   outputs: ``record_reads``, what optimize asks for)
    node views     one ``__slots__`` object per node made from those reads, holding its
                   NodeProto: the least an engine walking its own node objects would build
                   before walking them (no tensors, no links)
    index          the passes' index (``GraphModel``) built from the reads: nodes, tensors and
                   their producer / consumer links

and each as a share of ``infer``. An engine that walked node views would cost about ``+reads``
plus ``node views`` (it reads its fields from the views instead of the protobuf); one that
walked the passes' index, ``+reads`` plus ``index``. docs/decisions.md keeps the figures.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from shapeinfer.inference.engine import infer  # noqa: E402
from shapeinfer.ir.graph import GraphModel  # noqa: E402


class NodeView:
    """A node as an engine over its own objects would hold it."""

    __slots__ = ("domain", "inputs", "op", "outputs", "proto")


def node_views(model: onnx.ModelProto, reads: list) -> list[NodeView]:
    out = []
    new = NodeView.__new__
    for p, (op, domain, ins, outs) in zip(model.graph.node, reads):
        v = new(NodeView)
        v.op, v.domain, v.inputs, v.outputs, v.proto = op, domain, ins, outs, p
        out.append(v)
    return out


def timed(fn) -> tuple[float, object]:
    gc.collect()
    t = time.perf_counter()
    x = fn()
    return (time.perf_counter() - t) * 1000, x


def measure(path: str, reps: int) -> dict[str, float]:
    model = onnx.load(path, load_external_data=False)
    runs: dict[str, list[float]] = {k: [] for k in ("infer", "+reads", "node views", "index")}
    for _ in range(reps):  # interleaved: a change in the machine's load hits every row alike
        ms, _ = timed(lambda: infer(model))
        runs["infer"].append(ms)
        ms, res = timed(lambda: infer(model, record_reads=True))
        runs["+reads"].append(ms)
        reads = res.node_reads
        ms, _ = timed(lambda reads=reads: node_views(model, reads))
        runs["node views"].append(ms)
        ms, _ = timed(lambda reads=reads: GraphModel(model, reads=reads))
        runs["index"].append(ms)
    return {k: statistics.median(v) for k, v in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", default=[os.path.join(ROOT, "examples", "models", "llama_ts.onnx")])
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    for path in a.models:
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        m = measure(path, a.reps)
        base = m["infer"]
        print(f"{os.path.basename(path)} ({nodes} nodes, median of {a.reps})")
        for k, v in m.items():
            print(f"  {k:<11} {v:8.2f} ms  {v / base:6.1%} of infer")
        print(f"  engine over node views ~ {(m['+reads'] + m['node views']) / base:6.1%} of infer")
        print(f"  engine over the index  ~ {(m['+reads'] + m['index']) / base:6.1%} of infer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
