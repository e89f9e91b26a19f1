"""A model at a glance: what ``shapeinfer MODEL --summary`` prints first.

:func:`model_summary` reads only the model's headers (no weight is decoded, so a model loaded
without its large weights or with external data gives the same figures): IR version, opset
imports, producer, node counts (main graph and subgraphs), the op histogram, and the
parameters (initializers, in every graph) as an element count and their size in bytes.
"""

from __future__ import annotations

from collections import Counter

import onnx

from shapeinfer.io.onnxio import graphs_within

__all__ = ["format_summary", "model_summary"]

#: Bits per element of each onnx.TensorProto data type (STRING: counted from its data).
_BITS = {
    1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64,
    14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2,
}  # fmt: skip


def _tensor_size(t: onnx.TensorProto) -> tuple[int, int]:
    """(elements, bytes) of a tensor from its header: dims and data type."""
    n = 1
    for d in t.dims:
        n *= d
    if t.data_type == onnx.TensorProto.STRING:
        return n, sum(len(s) for s in t.string_data)
    return n, (n * _BITS.get(t.data_type, 0) + 7) // 8


def model_summary(model: onnx.ModelProto) -> dict:
    """The figures of ``model``: ``ir_version``, ``opsets`` (domain -> version, the default
    domain as ``ai.onnx``), ``producer`` (name and version), ``graph`` (the main graph's name),
    ``nodes`` (main graph), ``subgraph_nodes``, ``ops`` (``op`` or ``domain::op`` -> count over
    every graph, most frequent first), ``initializers`` (count), ``parameters`` (their elements)
    and ``parameter_bytes``; sparse initializers count their stored values."""
    ops: Counter[str] = Counter()
    total_nodes = inits = params = size = 0
    for g in graphs_within(model.graph):
        total_nodes += len(g.node)
        for n in g.node:
            ops[f"{n.domain}::{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type] += 1
        for t in g.initializer:
            e, b = _tensor_size(t)
            inits, params, size = inits + 1, params + e, size + b
        for s in g.sparse_initializer:
            e, b = _tensor_size(s.values)
            inits, params, size = inits + 1, params + e, size + b
    producer = " ".join(x for x in (model.producer_name, model.producer_version) if x)
    return {
        "ir_version": model.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "producer": producer or None,
        "graph": model.graph.name or None,
        "nodes": len(model.graph.node),
        "subgraph_nodes": total_nodes - len(model.graph.node),
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "initializers": inits,
        "parameters": params,
        "parameter_bytes": size,
    }


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def format_summary(s: dict, top: int = 12) -> list[str]:
    """The summary as a few lines of text (the ``top`` most frequent ops, then a count of the rest)."""
    opsets = ", ".join(f"{d} {v}" for d, v in s["opsets"].items()) or "none"
    head = f"ir_version {s['ir_version']}, opset {opsets}"
    if s["producer"]:
        head += f", producer {s['producer']}"
    ops = list(s["ops"].items())
    shown = ", ".join(f"{op} {c}" for op, c in ops[:top])
    if len(ops) > top:
        shown += f", ... ({len(ops) - top} more op types)"
    nodes = f"nodes {s['nodes']}" + (f" (+{s['subgraph_nodes']} in subgraphs)" if s["subgraph_nodes"] else "")
    return [
        head,
        f"{nodes}: {shown or 'no ops'}",
        f"parameters {s['parameters']:,} in {s['initializers']} initializers, {_bytes(s['parameter_bytes'])}",
    ]
