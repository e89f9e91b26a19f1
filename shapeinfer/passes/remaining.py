"""What stays dynamic after ``optimize``, and why (the report's ``remaining``; not a pass).

:func:`remaining` looks at the optimized model's main graph with its final inference facts
and every If / Loop / Scan body, and lists, each with the reason it stays:

- every ``Shape`` / ``Size`` node (``kind`` ``shape_node``);
- every runtime-computed shape input: an input its op declares shape-valued (``shape_inputs`` of
  :func:`~shapeinfer.inference.op_registry.op_traits`: Reshape's and Expand's shape, Slice's
  bounds, ...) that is not a constant (``shape_input``);
- every node left whose inputs are all constant (``constant_node``), but random ops and
  quantization boundaries, which are kept on purpose.

Reasons (``reason``, a machine key, with ``text`` for people):

- ``open_symbols``: the value depends on input symbols the binding leaves open (``symbols``:
  ``--bind`` of them removes it);
- ``data_dependent``: it depends on a size computed from tensor values at run time
  (``origin``: the node that creates it, e.g. a NonZero): no binding removes it;
- ``unknown_size``: on a size inference could not determine (``origin`` as above);
- ``size_cap``: its values are static but storing them would grow the model past a bound
  (``--max-fold-growth``, fold-shapes' element cap);
- ``kept``: its values are static and kept for another reason (an Expand target holding a 0,
  whose constant form onnxruntime misreads; onnxruntime not installed to evaluate an op).

``summary`` gives the counts and whether the model is fully static (every main-graph tensor's
shape static, no Shape/Size node, no runtime-computed shape input).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import onnx

from shapeinfer.inference.engine import graph_path
from shapeinfer.inference.op_registry import op_traits
from shapeinfer.ir.graph import Graph, GraphModel, Node
from shapeinfer.ir.queries import named_subgraphs
from shapeinfer.passes.fold_constants import never_folded
from shapeinfer.symbolic.dims import symbols

#: Ops whose output sizes come from tensor values at run time.
DATA_DEPENDENT = {
    "NonZero",
    "Unique",
    "Compress",
    "NonMaxSuppression",
    "TopK",
    "Loop",
    "Scan",
    "If",
    "StringSplit",
    "RegexFullMatch",
    "Range",
    "Reshape",
    "Expand",
    "ConstantOfShape",
    "Tile",
    "Slice",
    "Pad",
    "Resize",
    "OneHot",
    "Squeeze",
    "Unsqueeze",
    "Split",
    "CenterCropPad",
}

#: How many entries the text report lists (``--json`` lists all).
TEXT_LIMIT = 20


@dataclass
class Remaining:
    """One thing that stays dynamic (see the module docstring for the fields' meaning)."""

    kind: str  # "shape_node" | "shape_input" | "constant_node"
    op: str
    node: str  # its name, or #position in the main graph when it has none
    tensor: str  # the Shape/Size node's input, the shape input, the constant node's output
    reason: str
    input: int | None = None  # which input of the node, for a shape_input
    symbols: list[str] = field(default_factory=list)
    origin: list[dict] = field(default_factory=list)  # [{"op", "node", "symbol"}]
    detail: str = ""
    graph: str = ""  # "" for the main graph, else the nodes and attributes holding the subgraph

    @property
    def text(self) -> str:
        what = {
            "shape_node": f"{self.op} {self.node!r} of {self.tensor}",
            "shape_input": f"{self.op} {self.node!r} input {self.input} ({self.tensor})",
            "constant_node": f"{self.op} {self.node!r} (all inputs constant)",
        }[self.kind]
        what = f"{self.graph}{what}"
        if self.reason == "open_symbols":
            bind = ",".join(f"{s}=N" for s in self.symbols)
            why = f"depends on {', '.join(self.symbols)}, which the binding leaves open (--bind {bind} removes it)"
        elif self.reason in ("data_dependent", "unknown_size"):
            src = ", ".join(f"{o['symbol']} from {o['op']} {o['node']!r}" for o in self.origin) or "unknown"
            kind = "a size inference could not determine"
            if self.reason == "data_dependent":
                kind = "a size computed from tensor values at run time"
            why = f"depends on {kind} ({src}): no --bind removes it"
        else:
            why = self.detail
        return f"{what}: {why}"

    def as_json(self) -> dict:
        return {
            "kind": self.kind,
            "graph": self.graph,
            "op": self.op,
            "node": self.node,
            "input": self.input,
            "tensor": self.tensor,
            "reason": self.reason,
            "symbols": self.symbols,
            "origin": self.origin,
            "text": self.text,
        }


@dataclass
class RemainingReport:
    """:func:`remaining`'s result."""

    items: list[Remaining]
    tensors: int  # main-graph tensors with a type inference knows
    dynamic_tensors: int  # of them, those whose shape is not fully static
    open_symbols: list[str]  # input symbols the remaining dynamic shapes depend on
    #: the load check wrote declared types instead of some bound ones (optimize's notes say which)
    declared_types_kept: bool = False
    #: the nodes creating the sizes inference could not tie to input symbols that dynamic
    #: tensors depend on ({"op", "node", "symbol"}: a data-dependent op, an If on a runtime condition)
    dynamic_origins: list[dict] = field(default_factory=list)

    @property
    def fully_static(self) -> bool:
        if self.declared_types_kept:
            return False
        return self.dynamic_tensors == 0 and not any(i.kind != "constant_node" for i in self.items)

    def counts(self) -> dict[str, int]:
        out = {"shape_node": 0, "shape_input": 0, "constant_node": 0}
        for i in self.items:
            out[i.kind] += 1
        return out

    def as_json(self) -> dict:
        return {
            "fully_static": self.fully_static,
            "tensors": self.tensors,
            "dynamic_tensors": self.dynamic_tensors,
            "open_symbols": self.open_symbols,
            "declared_types_kept": self.declared_types_kept,
            "dynamic_origins": self.dynamic_origins,
            "counts": self.counts(),
            "items": [i.as_json() for i in self.items],
        }


def _syms(dims, cache: dict | None = None) -> set[str]:
    """The symbols of ``dims``; ``cache`` (dim expression -> its symbols) spares walking an
    expression again: the same ``batch*seq`` is on thousands of tensors of a large model."""
    out: set[str] = set()
    for d in dims:
        if d is None or type(d) is int or type(d) is float:
            continue
        s = None if cache is None else cache.get(d)
        if s is None:
            try:
                s = symbols(d)
            except Exception:
                continue
            if cache is not None:
                cache[d] = s
        out |= s
    return out


def remaining(
    gm: GraphModel, res, max_fold_growth: int, fold_cap: int, ran: Sequence[str] | None = None
) -> RemainingReport:
    """What stays dynamic in the model indexed as ``gm`` by its inference result ``res``
    (:class:`shapeinfer.inference.engine.Result`, of the model ``gm`` writes out), as a
    :class:`RemainingReport`: the main graph and every If / Loop / Scan body (an item's
    ``graph`` names the node and attribute holding it). ``max_fold_growth`` and ``fold_cap``:
    the bounds the passes ran with (the reasons name them); ``ran``: the passes that ran (None:
    all), so that a reason names a pass that was not run."""
    growth, cap = max_fold_growth, fold_cap
    folding = _folding_note(ran)
    inputs = set(res.input_symbols)
    graph_facts = getattr(res, "graph_facts", None) or {}
    items: list[Remaining] = []
    origins: dict[str, dict] = {}  # fresh symbol -> the first node whose outputs show it
    seen: dict = {}  # dim expression -> its symbols (for _syms)

    listed_new = gm.lists_initializers_as_inputs  # the initializers the passes created are inputs too

    def scan(g: Graph, path: str, facts, outer_consts: set[str], where: str) -> None:
        inputs_written = {t.name for t in g.inputs}
        if listed_new:
            inputs_written.update(c.name for c in gm.new_constants(g))
        consts = set(outer_consts) | (set(gm.initializer_names(g)) - inputs_written)
        nodes = g.nodes
        for n in nodes:
            if n.op == "Constant" and not n.domain:
                consts.update(t.name for t in n.outputs if t.name)
        labels = [n.name or f"#{k}" for k, n in enumerate(nodes)]  # a node without a name: its position
        outputs = {t.name for t in g.outputs}
        for k, n in enumerate(nodes):
            for t in n.outputs:
                f = facts.get(t.name)
                if f is None or f.shape is None:
                    continue
                for sym in _syms(f.shape, seen) | _syms(f.value or (), seen):
                    if sym not in inputs and sym not in origins:
                        origins[sym] = {"op": n.op, "node": labels[k], "symbol": sym}
        for pos, n in enumerate(nodes):
            for attr, sg in named_subgraphs(n):
                sub = graph_path(path, pos, attr)
                scan(sg, sub, graph_facts.get(sub, {}), consts, f"{where}{n.op} {labels[pos]!r}.{attr} / ")
            items.extend(_node_items(n, labels[pos], facts, consts, cap, growth, where, outputs, folding))

    scan(gm.graph, MAIN_PATH, res.facts, set(), "")

    for item in items:
        syms = item.symbols
        item.symbols = []
        fresh = set(syms) - inputs
        if fresh:
            item.origin = [origins.get(x, {"op": "?", "node": "", "symbol": x}) for x in sorted(fresh)]
            ops = {o["op"] for o in item.origin}
            item.reason = "data_dependent" if ops & DATA_DEPENDENT else "unknown_size"
        elif syms and item.reason != "unknown_size":  # (a binding cannot make an unknown value known)
            item.reason = "open_symbols"
            item.symbols = sorted(syms)
    dynamic = 0
    open_syms: set[str] = set()
    fresh_syms: set[str] = set()
    typed = 0
    for facts in [res.facts, *(v for k, v in graph_facts.items() if k != MAIN_PATH)]:
        for f in facts.values():
            if f.kind != "tensor" or not f.dtype:
                continue
            typed += 1
            if not f.is_static:
                dynamic += 1
                shape_syms = _syms(f.shape or (), seen)
                open_syms |= shape_syms & inputs
                fresh_syms |= shape_syms - inputs
    for i in items:
        open_syms.update(i.symbols)
    origins_left = [origins.get(x, {"op": "?", "node": "", "symbol": x}) for x in sorted(fresh_syms)]
    return RemainingReport(items, typed, dynamic, sorted(open_syms), dynamic_origins=origins_left)


#: ``Result.graph_facts``' key of the main graph.
MAIN_PATH = "main"


def _folding_note(ran: Sequence[str] | None) -> str:
    """Why fold-constants left a node of constant inputs: not run, no onnxruntime, or failed."""

    if ran is not None and "fold-constants" not in ran:
        return "not evaluated: fold-constants was not among the passes run (--passes)"
    if importlib.util.find_spec("onnxruntime") is None:
        return "not evaluated: fold-constants evaluates it with onnxruntime, which is not installed"
    return "not evaluated: onnxruntime failed to evaluate it"


def _node_items(
    n: Node,
    label: str,
    facts,
    consts: set[str],
    cap: int,
    growth: int,
    where: str,
    outputs: set[str],
    folding: str = "not evaluated",
) -> list[Remaining]:
    """The items node ``n`` gives (its ``symbols`` hold every symbol it depends on, sorted out
    by :func:`remaining`); ``reason`` is ``kept`` / ``unknown_size`` / ``size_cap`` until then."""
    op = n.op
    if n.domain not in ("", "ai.onnx"):
        return []
    ins = [t.name for t in n.inputs]
    outs = [t.name for t in n.outputs]
    out: list[Remaining] = []
    if op in ("Shape", "Size") and ins:
        f = facts.get(ins[0])
        dims = () if f is None or f.shape is None else f.shape
        item = Remaining("shape_node", op, label, ins[0], "kept", graph=where)
        unknown = f is None or f.shape is None
        res = facts.get(outs[0]) if outs else None
        numel = len(dims) if op == "Shape" else 1
        syms = _syms(dims)
        if res is not None and res.value is not None and not any(v is None for v in res.value):
            syms = _syms(res.value)  # (a Shape with start / end reads some of the dims)
            unknown = False
        item.symbols = sorted(syms)
        if unknown:
            item.reason, item.detail = "unknown_size", "its values are not known to inference"
        elif numel > cap:
            item.detail = f"its {numel} values are static but over fold-shapes' cap of {cap} elements"
        else:
            item.detail = "its values are static; kept (an Expand target holding 0, or a graph output)"
        return [item]
    for k in sorted(op_traits(op, n.domain).shape_inputs):
        if k >= len(ins) or not ins[k] or ins[k] in consts:
            continue
        t = ins[k]
        f = facts.get(t)
        vals = None if f is None else f.value
        item = Remaining("shape_input", op, label, t, "kept", input=k, graph=where)
        item.symbols = sorted(_syms(vals or ()))
        if vals is None or any(v is None for v in vals):
            item.reason, item.detail = "unknown_size", "its values are not known to inference"
        else:
            item.detail = "its values are static and kept"
        out.append(item)
    if ins and outs and all(not i or i in consts for i in ins) and not never_folded(op, n.domain, ins):
        o = outs[0]
        f = facts.get(o)
        item = Remaining("constant_node", op, label, o, "kept", graph=where)
        size = None
        if f is not None and f.is_static and f.dtype:
            try:
                size = onnx.helper.tensor_dtype_to_np_dtype(f.dtype).itemsize * math.prod(f.shape)
            except Exception:
                size = None
        if o in outputs:
            item.detail = "its output is an output of its graph (fold-constants keeps those as nodes)"
        elif size is not None and size > growth:
            item.reason = "size_cap"
            item.detail = f"its {size} bytes are over --max-fold-growth ({growth} bytes)"
        else:
            item.detail = folding
        out.append(item)
    return out


__all__ = ["DATA_DEPENDENT", "Remaining", "RemainingReport", "remaining"]
