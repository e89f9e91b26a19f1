"""remove-expand: an Expand whose readers broadcast anyway is removed.

Elementwise ops with multidirectional broadcasting (:data:`BROADCASTING`) compute each output
element from the input elements at the broadcast index, so reading ``Expand(c, s)`` or ``c``
itself gives the same values whenever the output shape comes out the same. Contract (main
graph, default-domain nodes, dims from inference):

- ``t = Expand(c, s)`` (not a graph output) whose every reader is one of :data:`BROADCASTING`
  and whose outputs' dims (as inference knows them) are the broadcast of its inputs' dims with
  ``c``'s in place of ``t``'s: the readers read ``c`` and the Expand goes. Dims are compared
  exactly; a symbolic dim broadcast only against 1 or itself (else the Expand stays).
- ``R(Expand(c, s), k...)`` where ``c`` and every ``k`` are stored constants, R is the
  Expand's only reader and one of :data:`BROADCASTING`, and the result of ``R(c, k...)`` has
  at most ``ctx.fold_cap`` elements, becomes ``Expand(R(c, k...), s)`` (the same values: R
  commutes with broadcasting), so that ``fold-constants`` evaluates ``R(c, k...)`` and the
  rule above may then remove the Expand. R's output keeps its name and value.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from shapeinfer.ir.graph import rename, replace_uses, set_input, set_output
from shapeinfer.ir.queries import const_array, is_stored_constant, lazy_node_ids
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

#: Elementwise default-domain ops with multidirectional broadcasting over all their inputs.
BROADCASTING = {
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "Where",
    "And",
    "Or",
    "Xor",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "Max",
    "Min",
}


def broadcast(shapes: list) -> tuple | None:
    """The multidirectional broadcast of ``shapes`` (tuples of ints or symbolic dims), or None
    when it is not known for every value of the symbols (a symbol against another dim > 1)."""
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        rest = [d for d in dims if not (type(d) is int and d == 1)]
        if not rest:
            out.append(1)
            continue
        first = rest[0]
        if any(d != first for d in rest[1:]):
            return None
        out.append(first)
    return tuple(out)


def _shape(facts, t) -> tuple | None:
    f = facts.get(t.name)
    if f is None or f.kind != "tensor" or f.shape is None:
        return None
    return tuple(f.shape)


def _is_expand(n) -> bool:
    return n.op == "Expand" and n.domain in ("", "ai.onnx") and len(n.inputs) == 2 and len(n.outputs) == 1


def _broadcasting(n) -> bool:
    return (
        n.op in BROADCASTING and n.domain in ("", "ai.onnx") and len(n.outputs) == 1 and all(t.name for t in n.inputs)
    )


def _same_dims(a: tuple | None, b: tuple | None) -> bool:
    return a is not None and b is not None and len(a) == len(b) and all(x == y for x, y in zip(a, b))


def _reads_unchanged(r, t, c_shape: tuple, facts) -> bool:
    """True when reader ``r`` of ``t`` gives outputs of the same dims reading ``c`` instead."""
    shapes = []
    for x in r.inputs:
        s = c_shape if x is t else _shape(facts, x)
        if s is None:
            return False
        shapes.append(s)
    return _same_dims(broadcast(shapes), _shape(facts, r.outputs[0]))


def _leading_only(c, c_shape: tuple, t_shape: tuple | None, graph_inputs: set[int], cap: int):
    """What the readers of ``t = Expand(c, ...)`` may read instead so that they broadcast it
    over leading dims only: ``(c_shape, None)`` when ``c`` already is such an operand (its dims
    from the first that is not 1 on are ``t``'s), ``(shape, array)`` for constant ``c``
    expanded over ``t``'s static trailing dims (at most ``cap`` elements), else None.
    (onnxruntime broadcasts an operand over inner dims element by element, slower than reading
    the expanded tensor; over leading dims only it is as fast: docs/decisions.md.)"""
    if t_shape is None or len(c_shape) > len(t_shape):
        return None
    r = len(t_shape)
    cs = (1,) * (r - len(c_shape)) + tuple(c_shape)
    p = next((i for i in range(r) if not (type(cs[i]) is int and cs[i] == 1)), r)
    if all(cs[i] == t_shape[i] for i in range(p, r)):
        return c_shape, None
    tail = t_shape[p:]
    if not is_stored_constant(c, graph_inputs) or any(type(d) is not int for d in tail) or math.prod(tail) > cap:
        return None
    v = const_array(c)
    if v is None:
        return None
    shape = (1,) * p + tuple(tail)
    return shape, np.broadcast_to(v.reshape(cs), shape).copy()


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Remove (or move towards folding) the Expands of the main graph that broadcasting
    readers make redundant (see the module docstring)."""
    facts = result.facts
    g = gm.graph
    outputs = {t.name for t in g.outputs}
    graph_inputs = {id(t) for t in g.inputs}
    main_ids = lazy_node_ids(g)  # ids of the main graph's nodes, asked only in rare cases

    removed: set[int] = set()
    stats = {"expands removed": 0, "expands moved after constant operations": 0}
    for e in [n for n in g.nodes if _is_expand(n)]:
        c, t = e.inputs[0], e.outputs[0]
        if t.name in outputs or not t.outputs or not c.name:
            continue
        c_shape = _shape(facts, c)
        if c_shape is None:
            continue
        readers = list(dict.fromkeys(t.outputs))
        small = _leading_only(c, c_shape, _shape(facts, t), graph_inputs, ctx.fold_cap)
        if small is not None and all(_broadcasting(r) and _reads_unchanged(r, t, small[0], facts) for r in readers):
            operand = c if small[1] is None else gm.constant(g, f"{c.name}_expanded", small[1])
            for r in readers:
                for k, x in enumerate(r.inputs):
                    if x is t:
                        set_input(r, k, operand)
            removed.add(id(e))
            stats["expands removed"] += 1
            continue
        if len(readers) != 1 or not is_stored_constant(c, graph_inputs):
            continue
        r = readers[0]
        y = r.outputs[0] if r.outputs else None
        if not _broadcasting(r) or y is None or y.name in outputs or id(r) not in main_ids():
            continue
        if not all(x is t or is_stored_constant(x, graph_inputs) for x in r.inputs):
            continue
        shapes = [c_shape if x is t else _shape(facts, x) for x in r.inputs]
        small = None if None in shapes else broadcast(shapes)
        if small is None or any(type(d) is not int for d in small) or math.prod(small) > ctx.fold_cap:
            continue
        # R(c, k...) into a new tensor; Expand it into R's old output (same name, same value)
        name = y.name
        rename(y, gm.fresh(name + "__small"))
        old_out = gm.variable(name, y.dtype)
        replace_uses(y, old_out)
        for k, x in enumerate(r.inputs):
            if x is t:
                set_input(r, k, c)
        set_input(e, 0, y)
        set_output(e, 0, old_out)
        # the Expand now reads R's output: it goes after R in the node order
        g.nodes.remove(e)
        g.nodes.insert(g.nodes.index(r) + 1, e)
        stats["expands moved after constant operations"] += 1
    if not any(stats.values()):
        return PassResult()
    gm.remove_nodes(g, removed)
    return PassResult(stats, edited=True)


PASS = Pass(
    "remove-expand",
    run,
    keeps_values=True,
    infers_first=True,
)
