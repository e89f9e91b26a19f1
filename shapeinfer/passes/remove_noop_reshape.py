"""remove-noop-reshape: data movement that provably changes nothing is removed; reshape chains collapse.

Contract (main graph, default-domain nodes, dims from inference):

- A node that only moves data, whose output provably equals its input, is removed and its
  readers read the input: Reshape, Flatten, Squeeze, Unsqueeze, Expand, Tile (output dims
  equal to the input's), Identity, Cast to the input's own type, Slice with known positive
  steps whose output dims equal the input's, Transpose with the identity permutation.
- A Reshape, Flatten, Squeeze or Unsqueeze reading the output of another one (a chain
  ``X -> A -> B``) is rewritten as ``Reshape(X, target)`` with a constant target spelled
  relative to X (``0`` copies, at most one ``-1``), when such a target exists and A has no
  other reader; if B's output has X's dims, B is simply removed. Element order is the same
  through every reshape, so the values are the same.
- A graph output keeps its name: when the removed node produces one, the tensor it read is
  renamed to it if a main-graph node produces that tensor and it is not a graph output
  itself; otherwise the node stays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.ir.graph import replace_uses, set_input, set_inputs, set_output, unlink_nodes
from shapeinfer.ir.queries import const_array, default_opset, lazy_node_ids, producer
from shapeinfer.passes._shape_plans import reshape_options
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel


def _movement(op: str) -> str | None:
    """How a default-domain ``op`` moves data (its declared ``movement`` trait, see
    :class:`~shapeinfer.inference.op_registry.OpTraits`): ``"reshape"``, ``"copy"`` or None."""
    return op_traits(op).movement


def _movements():
    """:func:`_movement` remembered by op for one run (a lookup a node)."""
    cache: dict[str, str | None] = {}

    def movement(op: str) -> str | None:
        try:
            return cache[op]
        except KeyError:
            m = cache[op] = _movement(op)
            return m

    return movement


def _same(a, b) -> bool:
    return (
        a is not None
        and b is not None
        and a.kind == "tensor"
        and b.kind == "tensor"
        and a.shape is not None
        and b.shape is not None
        and a.shape == b.shape
        and a.dtype == b.dtype
    )


def is_noop(node, facts, same=_same) -> bool:
    """True when ``node``'s first output provably equals its first input.

    ``same`` decides whether two facts have the same dims and type (:func:`_same`, which a
    caller may memoize by the facts' identity).
    """
    if node.domain or not node.inputs or not node.outputs or not node.inputs[0].name:
        return False
    op = node.op
    if op == "Identity":
        return True
    kind = _movement(op)
    if kind is None:
        return False
    x, y = facts.get(node.inputs[0].name), facts.get(node.outputs[0].name)
    if not same(x, y):  # (every other move must keep the dims and type)
        return False
    if kind == "reshape" or op in ("Expand", "Tile"):
        return True
    if op == "Cast":
        return node.attrs.get("to") == x.dtype
    if op == "Transpose":
        perm = node.attrs.get("perm")
        return (perm is None and len(x.shape) <= 1) or perm == list(range(len(x.shape)))
    if op != "Slice":  # a move declared since, with no condition here: not known to be a no-op
        return False
    if "starts" in node.attrs:  # Slice-1: steps are 1
        return True
    if len(node.inputs) > 4 and node.inputs[4].name:
        st = facts.get(node.inputs[4].name)
        return st is not None and st.value is not None and all(type(v) is int and v > 0 for v in st.value)
    return True


def _memo_same(memo: dict):
    """:func:`_same` remembered in ``memo`` by the facts' identity (inference shares facts)."""

    def same(a, b) -> bool:
        key = (id(a), id(b))
        r = memo.get(key)
        if r is None:
            r = memo[key] = _same(a, b)
        return r

    return same


def _bypass(node, main_ids, outputs: set[str]) -> bool:
    """Make ``node``'s readers read its input; False when a graph output forbids it."""
    x, y = node.inputs[0], node.outputs[0]
    if y.name in outputs:
        p = producer(x)
        if p is None or x.name in outputs or id(p) not in main_ids():
            return False
        # Rename: the producer writes the graph output directly.
        unlink_nodes([node])
        idx = next(k for k, t in enumerate(p.outputs) if t is x)
        replace_uses(x, y)
        set_output(p, idx, y)
        return True
    replace_uses(y, x)
    return True


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Remove no-op data movement and collapse reshape chains in the main graph."""
    facts = result.facts
    g = gm.graph
    outputs = {t.name for t in g.outputs}
    opset = default_opset(gm.model) or 0
    removed: set[int] = set()
    main_ids = lazy_node_ids(g)  # ids of the main graph's nodes, asked only in rare cases

    stats = {"no-op nodes removed": 0, "reshape chains collapsed": 0}
    memo: dict[tuple[int, int], bool] = {}
    same = _memo_same(memo)
    memo_get = memo.get
    get = facts.get
    movement = _movements()
    # (only the ops it can remove are looked at, picked out in one sweep)
    for node in [n for n in g.nodes if not n.domain and movement(n.op) and n.outputs and n.inputs]:
        # Every move but Identity keeps dims and type: that is tested first, inline (``same``).
        x, y = get(node.inputs[0].name), get(node.outputs[0].name)
        kept = memo_get((id(x), id(y)))
        if kept is None:
            kept = same(x, y)
        if (kept or node.op == "Identity") and is_noop(node, facts, same):
            if _bypass(node, main_ids, outputs):
                removed.add(id(node))
                stats["no-op nodes removed"] += 1
            continue
        if movement(node.op) != "reshape" or opset < 5:
            continue
        ps = node.inputs[0].inputs
        a = ps[0] if ps else None  # (producer, inline)
        if a is None or id(a) in removed or a.domain or movement(a.op) != "reshape" or not a.inputs:
            continue
        mid = node.inputs[0]
        if len(mid.outputs) != 1 or mid.name in outputs:
            continue
        x = a.inputs[0]
        fx, fy = facts.get(x.name), facts.get(node.outputs[0].name)
        if fx is None or fy is None or fy.shape is None or fx.shape is None:
            continue
        if same(fx, fy):
            set_input(node, 0, x)
            if _bypass(node, main_ids, outputs):
                removed.add(id(node))
                stats["reshape chains collapsed"] += 1
            else:
                set_input(node, 0, mid)
            continue
        target = None
        for entries in reshape_options(fy.shape, fx.shape, True):
            if all(e.consts for e in entries):
                target = [e.consts[0] for e in entries]
                break
        if target is None:
            continue
        if node.op == "Reshape":
            cur = const_array(node.inputs[1]) if len(node.inputs) > 1 else None
            if cur is not None and list(cur.reshape(-1)) == target and node.attrs.get("allowzero", 0) == 0:
                set_input(node, 0, x)  # same target reads the same dims from X
                stats["reshape chains collapsed"] += 1
                continue
        c = gm.constant(g, f"{node.name or 'reshape'}_target", np.array(target, dtype=np.int64))
        node.op = "Reshape"
        node.attrs = {}
        set_inputs(node, [x, c])
        stats["reshape chains collapsed"] += 1
    if not any(stats.values()):
        return PassResult()
    gm.remove_nodes(g, removed)
    return PassResult(stats, edited=True)


PASS = Pass(
    "remove-noop-reshape",
    run,
    keeps_values=True,
    infers_first=True,
)
