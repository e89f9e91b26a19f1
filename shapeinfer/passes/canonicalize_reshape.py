"""canonicalize-reshape: shape inputs computed at runtime are rewritten from their symbolic values.

Contract (main graph, default-domain consumers). A *shape input* is: Reshape's target,
Expand's shape, ConstantOfShape's input, Tile's repeats, Range's start/limit/delta, Slice's
starts/ends/axes/steps, the axes input of Squeeze/Unsqueeze/Reduce*, Split's sizes, Pad's
pads and axes, Resize's sizes, TopK's k and OneHot's depth. For each one that a node computes
(not an initializer or Constant) and whose every value inference knows (an int or a symbolic
dim, whatever chain of ops computed it):

1. When the consumer lets the values be spelled as a constant, the input becomes an
   initializer of its type:

   - Reshape (``allowzero`` 0): ``0`` where the output dim equals the input dim at the same
     index, ints as they are, and at most one ``-1`` for the dim left over (derived from the
     element count; never used when a dim is a literal 0).
   - Expand: ``1`` where the input already has the dim at the right-aligned position, ints
     elsewhere; leading entries the input provides may be dropped. Not when an output dim is
     a literal 0: onnxruntime's ExpandElimination takes a constant 0 for a 1 and removes the
     Expand (see fold-shapes); such a shape input stays as the model computes it.
   - Slice starts/ends with known positive steps and axes: a bound provably at or past the dim
     becomes the type's max, a bound ``dim - k`` (k > 0, provably >= 0) becomes ``-k``.

2. The others are rebuilt together, from the fewest nodes: ``Shape(T, start, end)`` slices of
   tensors T that carry the needed dims (graph inputs first, then data tensors computed before
   the consumer that a Shape reads already: a new reader of an activation keeps a runtime from
   fusing its producer), one Concat with constant pieces when there are several, Squeeze for a
   scalar, Cast to the input's type. Taken in graph order, each shape input gets the spelling
   that adds the fewest nodes to those made for the inputs before it: a value computed once
   (a Shape slice, a whole vector, a piece of a Concat) serves every later input that needs it,
   whichever tensor the model read it from (value numbering of shape vectors by their symbolic
   values), so the graph's targets come from a few Shape roots. The rebuild is taken only when
   it leaves fewer nodes than the shape computations it replaces (counted over the whole graph,
   nodes other readers keep alive included).

A shape input already in the form 1 or 2 would give is left alone (so the pass reaches a
fixpoint); the chain that fed a rewritten input is left for ``dce``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.ir.graph import Constant, GraphModel, set_input
from shapeinfer.ir.queries import const_array, default_opset, producer, toposort
from shapeinfer.passes._shape_plans import (
    MAX_SOURCES,
    Entry,
    Sources,
    describe,
    finish,
    normalize,
    shape_only_nodes,
    slot_key,
    slot_options,
)
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result

INT64 = onnx.TensorProto.INT64


# ---------------------------------------------------------------------- building


class Builder:
    """Creates the nodes and initializers of plans, sharing identical ones."""

    def __init__(self, gm: GraphModel, opset: int, index: _Index) -> None:
        self.gm = gm
        self.g = gm.graph
        self.opset = opset
        self.index = index  # its tensors: name -> tensor
        self.memo: dict[tuple, object] = {}
        self.inserted: dict[int, list] = {}  # position -> new nodes to place before it
        self.nodes_made = 0
        self.inits_made = 0

    def build(self, plan: tuple, pos: int, base: str):
        hit = self.memo.get(plan)
        if hit is not None:
            return hit
        kind = plan[0]
        if kind == "const":
            dtype, shape, values = plan[1], plan[2], plan[3]
            arr = np.array(values, dtype=onnx.helper.tensor_dtype_to_np_dtype(dtype)).reshape(shape)
            out = self.gm.constant(self.g, base, arr)
            self.inits_made += 1
        elif kind == "shape":
            out = self._shape(plan[1], plan[2], plan[3], pos, base)
        elif kind == "concat":
            parts = [self.build(p, pos, base + "_part") for p in plan[1]]
            out = self._node("Concat", parts, pos, base, {"axis": 0}, INT64)
        elif kind == "squeeze":
            inner = self.build(plan[1], pos, base)
            if self.opset >= 13:
                axes = self.build(("const", INT64, (1,), (0,)), pos, base + "_axes")
                out = self._node("Squeeze", [inner, axes], pos, base + "_scalar", {}, INT64)
            else:
                out = self._node("Squeeze", [inner], pos, base + "_scalar", {"axes": [0]}, INT64)
        elif kind == "cast":
            inner = self.build(plan[1], pos, base)
            out = self._node("Cast", [inner], pos, base + "_cast", {"to": int(plan[2])}, plan[2])
        else:  # pragma: no cover
            raise ValueError(f"unknown plan {kind}")
        self.memo[plan] = out
        return out

    def _node(self, op: str, inputs: list, pos: int, base: str, attrs: dict, dtype: int):
        out = self.gm.variable(base, dtype=onnx.helper.tensor_dtype_to_np_dtype(dtype))
        node = self.gm.node(op, base + "_" + op, inputs, [out], attrs)
        self.inserted.setdefault(pos, []).append(node)
        self.nodes_made += 1
        return out

    def _shape(self, name: str, start: int, end: int, pos: int, base: str):
        src = self.index.tensors[name]
        if self.opset >= 15:
            attrs = {}
            if start:
                attrs["start"] = start
            if end is not None:
                attrs["end"] = end
            return self._node("Shape", [src], pos, base + "_shape", attrs, INT64)
        full = self.memo.get(("shape", name, 0, None))
        if full is None:
            full = self._node("Shape", [src], pos, base + "_shape", {}, INT64)
            self.memo[("shape", name, 0, None)] = full
        if start == 0 and end is None:
            return full
        idx = self.build(("const", INT64, (end - start,), tuple(range(start, end))), pos, base + "_idx")
        return self._node("Gather", [full, idx], pos, base + "_dims", {"axis": 0}, INT64)

    def place(self) -> None:
        """Put the new nodes just before the consumers they were made for."""
        if not self.inserted:
            return
        nodes = []
        for k, n in enumerate(self.g.nodes):
            nodes.extend(self.inserted.get(k, ()))
            nodes.append(n)
        self.g.nodes = nodes


# ---------------------------------------------------------------------- the pass


def _candidates(g, facts, only: set[int]) -> list[tuple[str, tuple, int]]:
    """The tensors a rebuilt shape input may read with Shape: the graph inputs, and the data
    tensors a ``Shape`` reads already. Not any other: a new reader of an activation keeps a
    runtime from fusing its producer with the op after it (onnxruntime's Conv with its
    BatchNormalization and Relu) and makes it convert the tensor out of its blocked layout
    (NCHWc) only to read its shape."""
    graph_inputs = {t.name for t in g.inputs}
    cands = []
    for t in g.inputs:
        f = facts.get(t.name)
        if f is not None and f.kind == "tensor" and f.shape:
            cands.append((t.name, f.shape, -1))
    for k, n in enumerate(g.nodes):
        if id(n) in only or n.domain:
            continue
        for t in n.outputs:
            if not t.name or t.name in graph_inputs:
                continue
            if not any(r.op == "Shape" and not r.domain for r in t.outputs):
                continue
            f = facts.get(t.name)
            if f is not None and f.kind == "tensor" and f.shape:
                cands.append((t.name, f.shape, k))
    return cands


class _Index:
    """What rebuilding from Shape slices needs, built on first use (a pass whose every rewrite
    is a constant never walks the graph for it)."""

    def __init__(self, g, facts) -> None:
        self.g = g
        self.facts = facts
        self._only: set[int] | None = None
        self._sources: Sources | None = None
        self._ranks: dict[str, int] | None = None
        self._tensors: dict | None = None

    @property
    def only(self) -> set[int]:
        if self._only is None:
            self._only = shape_only_nodes(self.g)
        return self._only

    @property
    def sources(self) -> Sources:
        if self._sources is None:
            self._sources = Sources(_candidates(self.g, self.facts, self.only))
        return self._sources

    @property
    def ranks(self) -> dict[str, int]:
        if self._ranks is None:
            self._ranks = {name: len(dims) for name, dims, _ in self.sources.cands}
        return self._ranks

    @property
    def tensors(self) -> dict:
        """Tensor name -> tensor, for the main graph's inputs and node outputs."""
        if self._tensors is None:
            tensors = {t.name: t for t in self.g.inputs}
            for n in self.g.nodes:
                for t in n.outputs:
                    if t.name:
                        tensors[t.name] = t
            self._tensors = tensors
        return self._tensors


def _constant_plan(node, k: int, facts, options: list[list[Entry]]) -> tuple | None:
    """The constant spelling of input ``k`` (the first option whose every entry has one), or None."""
    f = facts.get(node.inputs[k].name)
    for entries in options:
        if all(e.consts for e in entries):
            return finish(("const", INT64, (len(entries),), tuple(e.consts[0] for e in entries)), f.dtype, not f.shape)
    return None


def _sub_plans(plan: tuple):
    """``plan`` and the plans inside it that make nodes (constants are free), outermost first."""
    kind = plan[0]
    if kind == "const":
        return
    yield plan
    if kind == "concat":
        for p in plan[1]:
            yield from _sub_plans(p)
    elif kind in ("squeeze", "cast"):
        yield from _sub_plans(plan[1])


def _fits(values: tuple, entries: list[Entry], i: int) -> bool:
    """A vector computing ``values`` spells ``entries[i:i + len(values)]``."""
    if i + len(values) > len(entries):
        return False
    for v, e in zip(values, entries[i : i + len(values)]):
        if type(v) is int and v in e.consts:
            continue
        if not (e.runtime and v == e.value):
            return False
    return True


class _Shared:
    """The plans the rewrite will have computed so far, in the order of their first reader: a
    plan made for one shape input serves every later one that needs its value (value numbering
    of shape vectors), so the shape inputs of a graph are rebuilt from few ``Shape`` roots."""

    def __init__(self, dims: dict[str, tuple]) -> None:
        self.dims = dims  # source tensor name -> its dims
        self.made: set[tuple] = set()  # plans that will have nodes (built, or kept as they are)
        #: first value -> (int64 1-D plan, the values it computes) of the vectors made so far
        self.vectors: dict[object, list[tuple[tuple, tuple]]] = {}
        self.existing: dict[tuple, object] = {}  # plan -> the tensor already computing it

    def values(self, plan: tuple) -> tuple | None:
        kind = plan[0]
        if kind == "const":
            return plan[3] if len(plan[2]) == 1 else None
        if kind == "shape":
            dims = self.dims.get(plan[1])
            return None if dims is None else tuple(dims[plan[2] : plan[3]])
        if kind == "concat":
            parts = [self.values(p) for p in plan[1]]
            return None if any(p is None for p in parts) else tuple(v for p in parts for v in p)
        return None

    def cost(self, plan: tuple) -> int:
        """Nodes ``plan`` adds to what is made already."""
        return sum(1 for p in _sub_plans(plan) if p not in self.made) if plan not in self.made else 0

    def add(self, plan: tuple) -> None:
        for p in _sub_plans(plan):
            if p in self.made:
                continue
            self.made.add(p)
            if p[0] in ("shape", "concat"):
                vals = self.values(p)
                if vals:
                    same_start = self.vectors.setdefault(vals[0], [])
                    if len(same_start) < MAX_SOURCES:
                        same_start.append((p, vals))

    def keep(self, plan: tuple, t) -> None:
        """``t`` already computes ``plan``: its nodes serve later readers too."""
        self.add(plan)
        self._seed(plan, t)

    def _seed(self, plan: tuple, t) -> None:
        if plan[0] == "const" or plan in self.existing:
            return
        self.existing[plan] = t
        p = producer(t)
        if p is None:
            return
        if plan[0] == "concat" and p.op == "Concat" and len(p.inputs) == len(plan[1]):
            for sub, x in zip(plan[1], p.inputs):
                self._seed(sub, x)
        elif plan[0] in ("squeeze", "cast") and p.op in ("Squeeze", "Cast") and p.inputs:
            self._seed(plan[1], p.inputs[0])

    def vector_plan(self, entries: list[Entry], sources: Sources, before: int) -> tuple | None:
        """The plan spelling ``entries`` as an int64 1-D tensor with the fewest new nodes (then the
        fewest pieces): Shape slices (free once made), vectors made already, constants."""
        n = len(entries)
        INF = (10**9, 10**9)
        best: list[tuple[tuple[int, int], list | None]] = [(INF, None)] * (n + 1)
        best[n] = ((0, 0), [])
        for i in range(n - 1, -1, -1):
            cands: list[tuple[tuple[int, int], list]] = []
            j = i
            while j < n and entries[j].consts:
                j += 1
                rest = best[j]
                if rest[1] is not None:
                    piece = ("const", INT64, (j - i,), tuple(e.consts[0] for e in entries[i:j]))
                    cands.append(((rest[0][0], rest[0][1] + 1), [piece, *rest[1]]))
            taken: set[tuple[int, int]] = set()  # (length, extra): the first slice of each wins
            for name, a, b in sources.runs(entries, i, before):
                rest = best[i + b - a]
                if rest[1] is not None:
                    piece = ("shape", name, a, b)
                    extra = 0 if piece in self.made else 1
                    if (b - a, extra) in taken:
                        continue
                    taken.add((b - a, extra))
                    cands.append(((rest[0][0] + extra, rest[0][1] + 1), [piece, *rest[1]]))
            e = entries[i]
            starts = [e.value] if e.runtime else []
            starts += [c for c in e.consts if not (e.runtime and c == e.value)]
            for piece, vals in [v for start in starts for v in self.vectors.get(start, ())]:
                if _fits(vals, entries, i):
                    rest = best[i + len(vals)]
                    if rest[1] is not None:
                        cands.append(((rest[0][0], rest[0][1] + 1), [piece, *rest[1]]))
            if cands:
                best[i] = min(cands, key=lambda c: c[0])
        pieces = best[0][1]
        if pieces is None:
            return None
        if not pieces:
            return ("const", INT64, (0,), ())
        if len(pieces) == 1:
            return pieces[0]
        return ("concat", tuple(pieces))


def _plan_shared(node, k: int, facts, index: _Index, pos: int, options, shared: _Shared) -> tuple | None:
    """The plan for input ``k`` adding the fewest nodes to ``shared`` (then the fewest pieces)."""
    f = facts.get(node.inputs[k].name)
    best = None
    for entries in options:
        plan = shared.vector_plan(entries, index.sources, pos)
        if plan is None:
            continue
        plan = finish(plan, f.dtype, len(f.shape) == 0)
        cost = (shared.cost(plan), len(plan[1]) if plan[0] == "concat" else 1)
        if best is None or cost < best[0]:
            best = (cost, plan)
    return None if best is None else best[1]


def _freed(g, only: set[int], rewired: set[tuple[int, int]]) -> int:
    """Nodes of ``only`` (shape-only nodes) left unread once the inputs ``rewired`` ((id of a node,
    input index)) read something else; ``g``'s nodes are in topological order."""
    dead: set[int] = set()
    for n in reversed(g.nodes):
        if id(n) not in only:
            continue
        if all(
            id(c) in dead or all(x is not t or (id(c), kk) in rewired for kk, x in enumerate(c.inputs))
            for t in n.outputs
            if t.name
            for c in t.outputs
        ):
            dead.add(id(n))
    return len(dead)


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Rewrite the computed shape inputs of the main graph (see the module contract)."""
    facts = result.facts
    g = gm.graph
    opset = default_opset(gm.model)
    if opset is None:
        return PassResult()
    todo = []  # (node, input index, kind, spellings) of computed shape inputs with known values
    spellings: dict[tuple, list] = {}  # slot key -> slot_options
    # The shape inputs of each op at this opset (Reshape-1 and Slice-1 have none); those ops'
    # nodes are picked out in one sweep.
    active = {}
    for op in {n.op for n in g.nodes if not n.domain}:
        slots = op_traits(op).shape_inputs  # declared with the op's rule
        if slots and not (op == "Reshape" and opset < 5) and not (op == "Slice" and opset < 10):
            active[op] = list(slots.items())
    for node in [n for n in g.nodes if n.op in active]:
        if node.domain:
            continue
        ins = node.inputs
        for k, kind in active[node.op]:
            if k >= len(ins) or not ins[k].name:
                continue
            t = ins[k]
            ps = t.inputs
            if not ps or ((ps[0].op == "Constant" or isinstance(t, Constant)) and const_array(t) is not None):
                continue  # not computed: an input, an initializer or a Constant node's output
            key = slot_key(node, k, kind, facts)
            options = spellings.get(key)
            if options is None:
                options = spellings[key] = slot_options(node, k, kind, facts)
            if options:
                todo.append((node, k, kind, options))
    if not todo:
        return PassResult()
    # Picking the slots needs no order; the plans place nodes by position. Sorted only now (a
    # run with nothing to do skips it), the slots are then taken in the sorted graph's order.
    reordered = toposort(g)
    position = dict(zip(g.nodes, range(len(g.nodes))))  # (nodes hash by identity)
    if reordered:
        todo.sort(key=lambda item: position[item[0]])  # (stable: a node's slots keep their order)
    index = _Index(g, facts)
    builder = Builder(gm, opset, index)
    stats = {"made constant": 0, "rebuilt from Shape slices": 0}
    per_op: dict[str, int] = {}
    # 1. Constants: a constant wins whenever one is possible, wherever the node is (one per
    # slot key, built once, then shared).
    rewrites: list[tuple] = []  # (node, input index, kind, plan)
    runtime: list[tuple] = []  # (node, input index, kind, spellings) needing values read at run time
    constant_plans: dict[int, tuple | None] = {}  # id of a slot's spellings -> its constant plan
    for node, k, kind, options in todo:
        key = id(options)
        if key not in constant_plans:
            constant_plans[key] = _constant_plan(node, k, facts, options)
        plan = constant_plans[key]
        if plan is not None:
            rewrites.append((node, k, kind, plan))
        else:
            runtime.append((node, k, kind, options))
    # 2. The others, all together: each from the plan adding the fewest nodes to those made for
    # the inputs before it (shared values, Shape slices of graph inputs first). Taken only when
    # the graph ends up with fewer shape nodes than it has.
    if runtime:
        # (what is shape-only is decided on the graph as it is, before any rewrite)
        shared = _Shared({name: dims for name, dims, _ in index.sources.cands})
        changed: list[tuple] = []
        for node, k, kind, options in runtime:
            pos = position[node]
            plan = _plan_shared(node, k, facts, index, pos, options, shared)
            if plan is None:
                continue
            t = node.inputs[k]
            if normalize(describe(t, opset), index.ranks) == normalize(plan, index.ranks):
                shared.keep(plan, t)  # already in that form: it stays, and serves later inputs
                continue
            shared.add(plan)
            changed.append((node, k, kind, plan))
        if changed:
            made = sum(1 for p in shared.made if p not in shared.existing)
            constant = {(id(item[0]), item[1]) for item in rewrites}
            before = _freed(g, index.only, constant)
            after = _freed(g, index.only, constant | {(id(item[0]), item[1]) for item in changed})
            if made < after - before:
                builder.memo.update(shared.existing)
                rewrites += changed
                rewrites.sort(key=lambda item: position[item[0]])
    for node, k, kind, plan in rewrites:
        new = builder.build(plan, position[node], f"{node.name or node.op}_{kind}")
        set_input(node, k, new)
        stats["made constant" if plan[0] == "const" else "rebuilt from Shape slices"] += 1
        per_op[node.op] = per_op.get(node.op, 0) + 1
    if not any(stats.values()):
        return PassResult()
    if builder.inserted:  # inputs that became initializers keep the order sorted
        builder.place()
        toposort(g)
    stats["nodes created"] = builder.nodes_made
    for op, c in sorted(per_op.items()):
        stats[f"{op} inputs rewritten"] = c
    return PassResult(stats, edited=True)


PASS = Pass(
    "canonicalize-reshape",
    run,
    keeps_values=True,
    infers_first=True,
)
