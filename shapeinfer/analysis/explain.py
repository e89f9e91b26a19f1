"""Why a tensor's dims are what they are (``shapeinfer explain``).

For each dim of a main-graph tensor, :func:`explain` gives its expression, the chain of nodes
it came through (from a graph input's dim, through ``Shape``, ``Gather``, ``Concat``, ...,
to the tensor's producer), the guards it may rest on (each with the node that imposed it),
and, for a dim inference could not express in the input symbols, the reason: a data-dependent
size, a shape input whose values are computed from data, branches of an ``If`` that disagree,
a size given up at a limit, a node inference found invalid, or an op with no rule.

The chain is read back from the facts, not recorded during inference: at each node, the input
that carries the dim (the same value in a shape tensor, the same dim, or failing both the
input sharing most of its symbols) is followed. It names the path a reader would follow by
hand; where two inputs carry the dim, the shape tensor is preferred.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from shapeinfer.base import codes
from shapeinfer.base.text import text
from shapeinfer.inference.engine import Result
from shapeinfer.inference.op_registry import lookup
from shapeinfer.io.onnxio import graphs_with_paths
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

__all__ = ["DATA_DEPENDENT", "DimExplanation", "UnknownTensor", "explain", "find"]

#: ops whose output sizes depend on their inputs' values, not only on their shapes
DATA_DEPENDENT = frozenset(
    {
        "NonZero",
        "NonMaxSuppression",
        "Unique",
        "Compress",
        "TopK",
        "StringSplit",
        "Tokenizer",
        "RegexFullMatch",
        "SequenceAt",
        "SplitToSequence",
        "Loop",
        "Scan",
    }
)
_MAX_STEPS = 400


class UnknownTensor(KeyError):
    """No main-graph tensor of that name; ``close`` are the nearest names."""

    def __init__(self, name: str, close: list[str]) -> None:
        super().__init__(name)
        self.name, self.close = name, close

    def __str__(self) -> str:
        hint = f" (closest: {', '.join(self.close)})" if self.close else ""
        return f"no tensor named {self.name!r} in the model{hint}"


@dataclass
class DimExplanation:
    """One dim: ``text`` its expression (``?`` unknown), ``known`` whether it is an expression in
    the input symbols, ``chain`` the steps from where it starts to the tensor, ``guards`` as
    ``(condition, node)``, ``reason`` why it is unknown (None when known)."""

    axis: int
    text: str
    known: bool
    chain: list[str] = field(default_factory=list)
    guards: list[tuple[str, str]] = field(default_factory=list)
    reason: str | None = None
    graph: str = "main"  # the graph holding the tensor (main, or a body's path)

    def as_dict(self) -> dict:
        return {
            "axis": self.axis,
            "dim": self.text,
            "known": self.known,
            "chain": self.chain,
            "guards": [{"condition": c, "node": n} for c, n in self.guards],
            "reason": self.reason,
            "graph": self.graph,
        }


class _Graph:
    def __init__(self, result: Result, g=None, facts=None) -> None:
        g = result.model.graph if g is None else g
        self.result = result
        self.facts = result.facts if facts is None else facts
        self.producer = {o: n for n in g.node for o in n.output if o}
        self.position = {id(n): k for k, n in enumerate(g.node)}
        self.inputs = {v.name for v in g.input}
        self.inits = {t.name for t in g.initializer}
        self.syms = set(result.input_symbols)
        self.origin: dict[str, object] = {}  # fresh symbol -> the first node whose outputs have it
        for n in g.node:
            for o in n.output:
                f = self.facts.get(o)
                if f is None or f.kind != "tensor":
                    continue
                for d in (*(f.shape or ()), *(v for v in (f.value or ()) if D.is_symbolic(v))):
                    for s in D.symbols(d) - self.syms:
                        self.origin.setdefault(s, n)
        self.diags: dict[str, list] = {}
        for d in result.diagnostics:
            if d.node:
                self.diags.setdefault(d.node, []).append(d)

    def fact(self, name: str) -> Fact | None:
        """The fact of ``name`` in this graph, or of the enclosing main graph's value it reads."""
        f = self.facts.get(name)
        return self.result.facts.get(name) if f is None and self.facts is not self.result.facts else f

    def node_name(self, n) -> str:
        return n.name or f"{n.op_type} -> {n.output[0]}"

    def ancestors(self, tensor: str) -> set[str]:
        """Names of the nodes ``tensor`` depends on (itself's producer included)."""
        seen, out, todo = set(), set(), [tensor]
        while todo:
            t = todo.pop()
            n = self.producer.get(t)
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            out.add(self.node_name(n))
            todo.extend(i for i in n.input if i)
        return out


def _same(a: D.Dim, b: D.Dim) -> bool:
    try:
        return D.sub(a, b) == 0
    except (TypeError, ValueError):
        return False


def _carriers(f: Fact | None) -> list[tuple[int, D.Dim]]:
    """(score, element) of what a fact carries: its values (2) before its dims (1)."""
    if f is None or f.kind != "tensor":
        return []
    out = [(2, v) for v in (f.value or ()) if type(v) is int or D.is_symbolic(v)]
    return out + [(1, d) for d in (f.shape or ())]


def _follow(gr: _Graph, tensor: str, target: D.Dim) -> tuple[list[str], object | None]:
    """The chain of steps back from ``tensor`` and the node where ``target`` starts (None when it
    starts at a graph input or an initializer)."""
    steps: list[str] = []
    want = D.symbols(target)
    for _ in range(_MAX_STEPS):
        n = gr.producer.get(tensor)
        if n is None:
            where = "graph input" if tensor in gr.inputs else "initializer" if tensor in gr.inits else "outer value"
            steps.append(f"{where} {_q(tensor)} ({_shape_text(gr.fact(tensor))})")
            return _compressed(steps[::-1]), None
        steps.append(f"{n.op_type} {_q(gr.node_name(n))} -> {_q(tensor)} ({_shape_text(gr.fact(tensor))})")
        best = None  # (rank, input, element)
        for i in n.input:
            if not i:
                continue
            const = i in gr.inits or getattr(gr.producer.get(i), "op_type", "") == "Constant"
            for score, e in _carriers(gr.fact(i)):
                if const and score == 1:
                    continue  # a constant's own dims carry nothing of the sizes (its [1] is no "1")
                if _same(e, target):
                    rank = (2 + score, 0)
                elif want and D.is_symbolic(e) and D.symbols(e) & want:
                    rank = (score - 1, len(D.symbols(e) & want))
                else:
                    continue
                if best is None or rank > best[0]:
                    best = (rank, i, e)
        if best is None:
            return _compressed(steps[::-1]), n
        if n.op_type in _PASS_THROUGH and _same(best[2], target):
            steps[-1] = _KEPT + steps[-1]
        tensor, target = best[1], best[2]
        want = D.symbols(target)
    return _compressed(steps[::-1]), None


#: ops a dim goes through unchanged in long runs (activations, arithmetic, norms, convs)
_PASS_THROUGH = frozenset(
    [
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Relu",
        "Sigmoid",
        "Tanh",
        "Erf",
        "Gelu",
        "Softmax",
        "LayerNormalization",
        "BatchNormalization",
        "Conv",
        "MatMul",
        "Gemm",
        "Where",
        "Cast",
        "Identity",
        "Dropout",
        "Pow",
        "Sqrt",
        "Neg",
        "Exp",
        "Log",
        "Clip",
        "HardSwish",
        "HardSigmoid",
        "LeakyRelu",
        "Split",
        "Concat",
        "Transpose",
        "Reshape",
        "MaxPool",
        "AveragePool",
        "Resize",
        "Expand",
        "Softplus",
        "Mish",
    ]
)
_KEPT = "\0"


def _compressed(steps: list[str]) -> list[str]:
    """The chain with each run of more than three steps that keep the dim unchanged shortened
    to its first and last step and a count."""
    out, run = [], []

    def flush() -> None:
        if len(run) > 3:
            out.extend([run[0], f"... {len(run) - 2} more nodes that keep it ...", run[-1]])
        else:
            out.extend(run)
        run.clear()

    for s in steps:
        if s.startswith(_KEPT):
            run.append(s[len(_KEPT) :])
        else:
            flush()
            out.append(s)
    flush()
    return out


def _shape_text(f: Fact | None) -> str:
    if f is None or f.kind != "tensor":
        return "?"
    if f.shape is None:
        return "rank unknown"
    dims = "[" + ", ".join(D.format(d) for d in f.shape) + "]"
    if f.value is not None and len(f.value) <= 8:
        return f"{dims} = [" + ", ".join(_value_text(v) for v in f.value) + "]"
    return dims


def _value_text(v: object) -> str:
    if isinstance(v, int) or D.is_symbolic(v):
        return D.format(v)
    return "?" if v is None else repr(v)


def _q(name) -> str:
    """A tensor or node name quoted for a message: a name that is not UTF-8 (bytes) escaped once."""
    return repr(name) if type(name) is str else f"'{text(name)}'"


def _reason(gr: _Graph, node, fresh: set[str]) -> str:
    """Why the dims ``node`` gives are not expressions in the input symbols."""
    if node is None:
        return "declared so by the model: no node computes it"
    name = gr.node_name(node)
    for d in gr.diags.get(name, []):
        if d.code == codes.DIM_GIVEN_UP:
            return f"given up at a limit at {node.op_type} {_q(name)}: {d.message}"
        if d.code == codes.NO_OP_SCHEMA:
            return f"no rule for {node.domain or 'ai.onnx'}::{node.op_type} ({_q(name)}): {d.message}"
        if d.severity == "error":
            return f"{node.op_type} {_q(name)} is invalid here ({d.code}): {d.message}"
    if fresh & set(gr.result.join_symbols):
        what = "iterations" if node.op_type in ("Loop", "Scan") else "branches"
        return f"the {what} of {node.op_type} {_q(name)} give different sizes"
    if node.op_type in DATA_DEPENDENT:
        return f"data-dependent: the size {node.op_type} {_q(name)} gives depends on its inputs' values"
    unknown = [
        i
        for i in node.input[1:]
        if i
        and (f := gr.fact(i)) is not None
        and f.kind == "tensor"
        and (f.value is None or any(v is None for v in f.value))
        and i not in gr.inits
    ]
    if unknown:
        src = gr.producer.get(unknown[0])
        via = f", made by {src.op_type} {_q(gr.node_name(src))}" if src is not None else ""
        float_node = _float_step(gr, unknown[0])
        why = (
            f"computed in floating point ({float_node.op_type} {_q(gr.node_name(float_node))}), so not an exact"
            " expression in the sizes"
            if float_node is not None
            else "which depend on data inference cannot know statically"
        )
        return f"{node.op_type} {_q(name)} takes the size from the values of {_q(unknown[0])}{via}, {why}"
    for d in gr.diags.get(name, []):
        return f"{node.op_type} {_q(name)}: {d.message} ({d.code})"

    if lookup(node.domain, node.op_type, 1 << 30) is None:
        return f"no rule for {node.domain or 'ai.onnx'}::{node.op_type} ({_q(name)}): its output sizes are not inferred"
    return f"{node.op_type} {_q(name)}: its inputs' shapes and its attributes do not give this size"


def find(result: Result, tensor: str) -> str:
    """The path of the graph that holds ``tensor``: the main graph first, then the bodies in
    graph order. Raises :class:`UnknownTensor` (with the closest names of every graph)."""
    if _named(result.facts, tensor) is not None:
        return "main"
    for path, _ in graphs_with_paths(result.model.graph):
        if _named(result.graph_facts.get(path, {}), tensor) is not None:
            return path
    names = {text(n) for facts in result.graph_facts.values() for n in facts} | {text(n) for n in result.facts}
    raise UnknownTensor(tensor, difflib.get_close_matches(tensor, sorted(names), n=3, cutoff=0.5))


def _named(facts: Mapping, tensor: str):
    """The name in ``facts`` that is ``tensor``, or shows as it (a name that is not UTF-8, held as
    bytes, shows escaped: ``y\\xff``); None when there is none."""
    if tensor in facts:
        return tensor
    return next((k for k in facts if type(k) is bytes and text(k) == tensor), None)


def explain(result: Result, tensor: str) -> list[DimExplanation]:
    """One :class:`DimExplanation` per dim of ``tensor`` (one with axis -1 when its rank is
    unknown), in the main graph or, where the main graph has no such name, the first If / Loop
    / Scan body that does (:func:`find`; ``DimExplanation.graph`` names it: a chain inside a body
    starts at the body's inputs or the outer values it reads). Raises :class:`UnknownTensor` for a
    name no graph has."""
    path = find(result, tensor)
    if path == "main":
        gr = _Graph(result)
    else:
        body = dict(graphs_with_paths(result.model.graph))[path]
        gr = _Graph(result, body, result.graph_facts[path])
    tensor = _named(gr.facts, tensor)
    f = gr.facts[tensor]
    ancestors = gr.ancestors(tensor)
    guards = [g for g in result.guards() if set(g.nodes) & ancestors]
    if f.kind != "tensor" or f.shape is None:
        steps, node = _follow_rank(gr, tensor)
        return [DimExplanation(-1, "rank unknown", False, steps, [], _reason(gr, node, set()), path)]
    out = []
    for k, d in enumerate(f.shape):
        syms = D.symbols(d)
        fresh = syms - gr.syms
        steps, node = _follow(gr, tensor, d)
        rests = [(g.text, g.nodes[0] if g.nodes else "?") for g in guards if g.symbols & syms]
        reason = None
        if fresh:
            first = min(fresh, key=lambda s: gr.position.get(id(gr.origin.get(s)), len(gr.position)))
            reason = _reason(gr, gr.origin.get(first, node), fresh)
        out.append(DimExplanation(k, D.format(d), not fresh, steps, rests, reason, path))
    return out


_FLOATS = frozenset({1, 10, 11, 16})  # float, float16, double, bfloat16


def _float_step(gr: _Graph, tensor: str, limit: int = 40):
    """The nearest node upstream of ``tensor`` (within ``limit`` nodes) that makes a float value
    inference does not know, or None."""
    seen, todo = set(), [tensor]
    while todo and len(seen) < limit:
        t = todo.pop(0)
        n = gr.producer.get(t)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        f = gr.fact(t)
        if f is not None and f.dtype in _FLOATS and (f.value is None or any(v is None for v in f.value)):
            return n
        todo.extend(i for i in n.input if i)
    return None


def _follow_rank(gr: _Graph, tensor: str) -> tuple[list[str], object | None]:
    """Back from a tensor of unknown rank to the first node whose inputs' ranks are known."""
    steps = []
    for _ in range(_MAX_STEPS):
        n = gr.producer.get(tensor)
        if n is None:
            return steps[::-1], None
        steps.append(f"{n.op_type} {_q(gr.node_name(n))} -> {_q(tensor)} (rank unknown)")
        dark = [i for i in n.input if i and (f := gr.fact(i)) is not None and f.shape is None]
        if not dark:
            return steps[::-1], n
        tensor = dark[0]
    return steps[::-1], None
