"""merge-transposes: a Transpose of a Transpose becomes one Transpose, or none.

Contract (main graph, default-domain ``Transpose`` nodes, ranks from inference for an omitted
``perm``):

- ``B = Transpose(A, perm=q)`` reading ``A = Transpose(X, perm=p)`` moves element
  ``X[j_p...]`` to the same place as ``Transpose(X, perm=r)`` with ``r[i] = p[q[i]]``: the
  values are the same, bit for bit (only data moves).
- When ``r`` is the identity, B is removed and its readers read X (a graph output keeps its
  name as in ``remove-noop-reshape``; if it cannot, B stays).
- Otherwise, when B is A's only reader and A is not a graph output, B reads X with ``perm=r``
  and A, read by nothing, goes. (With other readers A stays, and B is left as it is: the
  rewrite would remove no node.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapeinfer.ir.graph import set_input
from shapeinfer.ir.queries import lazy_node_ids, producer
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.passes.remove_noop_reshape import _bypass

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel


def _perm(node, facts) -> list[int] | None:
    """``node``'s permutation, the reversal when omitted (from its input's rank), else None."""
    perm = node.attrs.get("perm")
    if perm is not None:
        return [int(v) for v in perm]
    f = facts.get(node.inputs[0].name)
    if f is None or f.kind != "tensor" or f.shape is None:
        return None
    return list(range(len(f.shape)))[::-1]


def compose(p: list[int], q: list[int]) -> list[int] | None:
    """The permutation of ``Transpose(Transpose(X, p), q)`` as one Transpose of X (None when
    ``p`` and ``q`` are not permutations of the same rank)."""
    if len(p) != len(q) or sorted(p) != list(range(len(p))) or sorted(q) != list(range(len(q))):
        return None
    return [p[i] for i in q]


def _is_transpose(node) -> bool:
    return node.op == "Transpose" and node.domain in ("", "ai.onnx") and len(node.inputs) == 1 and node.inputs[0].name


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Merge the Transpose pairs of the main graph (see the module docstring)."""
    facts = result.facts
    g = gm.graph
    outputs = {t.name for t in g.outputs}
    main_ids = lazy_node_ids(g)  # ids of the main graph's nodes, asked only in rare cases

    removed: set[int] = set()
    stats = {"transpose pairs removed": 0, "transpose pairs merged": 0}
    for b in [n for n in g.nodes if _is_transpose(n)]:
        mid = b.inputs[0]
        a = producer(mid)
        if a is None or id(a) in removed or not _is_transpose(a) or len(a.outputs) != 1:
            continue
        p, q = _perm(a, facts), _perm(b, facts)
        r = None if p is None or q is None else compose(p, q)
        if r is None:
            continue
        x = a.inputs[0]
        if r == list(range(len(r))):
            set_input(b, 0, x)
            if _bypass(b, main_ids, outputs):
                removed.add(id(b))
                stats["transpose pairs removed"] += 1
                if not mid.outputs and mid.name not in outputs:
                    removed.add(id(a))
            else:
                set_input(b, 0, mid)
            continue
        if len(mid.outputs) != 1 or mid.name in outputs:
            continue
        set_input(b, 0, x)
        b.attrs = {**b.attrs, "perm": r}
        removed.add(id(a))
        stats["transpose pairs merged"] += 1
    if not any(stats.values()):
        return PassResult()
    gm.remove_nodes(g, removed)
    return PassResult(stats, edited=True)


PASS = Pass(
    "merge-transposes",
    run,
    keeps_values=True,
    infers_first=True,
)
