"""dedupe-shapes: common subexpression elimination, so repeated shape chains are computed once.

Contract (main graph):

- Two deterministic default-domain nodes without subgraphs, with the same op, the same
  attributes and the same inputs, compute the same outputs: the later one's readers read
  the earlier one's outputs and the later one goes. Inputs are the same when they are the
  same tensor (after earlier merges) or small initializers/Constant values (at most 1024
  elements) of equal type, shape and values. This merges the repeated
  Shape/Gather/Unsqueeze/Concat/Cast chains exporters emit, and any other repeated
  computation.
- Readers of a small initializer equal to an earlier one read the earlier one. An
  initializer listed as a graph input (a default the caller may override) is never merged.
- A node producing a graph output is never the one removed.
- optimize also merges in model-local function bodies (:func:`merge`, from
  :mod:`shapeinfer.passes._functions`): there an attribute referring to the function's own
  attributes is part of what must be equal.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.ir.graph import Constant, replace_uses, set_input
from shapeinfer.ir.queries import default_opset
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.ir.graph import GraphModel

#: Initializers up to this many elements are compared by value.
VALUE_CAP = 1024


def _const_key(c) -> tuple | None:
    try:
        n = 1
        for d in c.shape:
            n *= int(d)
        if n > VALUE_CAP:
            return None
        arr = np.asarray(c.values)
    except Exception:
        return None
    if arr.dtype == object:
        return None
    return ("c", str(arr.dtype), arr.shape, arr.tobytes())


def _same_value(default: object, v: object) -> bool:
    if isinstance(default, (int, float, str)) and isinstance(v, (int, float, str)):
        return type(default) is type(v) and default == v
    return False


def _attr_key(v) -> object:
    if isinstance(v, Constant):
        k = _const_key(v)
        return k if k is not None else ("id", id(v))
    if isinstance(v, list):
        return ("l", tuple(_attr_key(x) for x in v))
    if isinstance(v, float):
        return ("f", repr(v))
    if isinstance(v, (int, str, bytes)):
        return (type(v).__name__, v)
    return ("id", id(v))


_DEFAULTS: dict[tuple[str, int], dict[str, object]] = {}


def schema_defaults(op: str, opset: int) -> dict[str, object]:
    """Default attribute values of default-domain ``op`` at ``opset``, from onnx.defs."""
    key = (op, opset)
    d = _DEFAULTS.get(key)
    if d is None:
        d = {}
        try:
            schema = onnx.defs.get_schema(op, opset, "")
        except Exception:
            schema = None
        if schema is not None:
            for name, a in schema.attributes.items():
                if a.default_value is not None and a.default_value.type:
                    v = onnx.helper.get_attribute_value(a.default_value)
                    d[name] = v.decode() if isinstance(v, bytes) else v
        _DEFAULTS[key] = d
    return d


def _equal_initializers(gm, g, overridable: set[str]) -> bool:
    """True when two initializers of ``g`` (whether read or not, dropped ones included) that
    are not ``overridable`` have equal small values: only then can readers be merged."""
    gp = g.proto if isinstance(g.proto, onnx.GraphProto) else None
    consts = [Constant(t.name, t, graph=g, base_dir=gm.base_dir) for t in gp.initializer] if gp is not None else []
    consts += gm.new_constants(g)
    seen: set = set()
    for c in consts:
        if c.name and c.name not in overridable:
            k = _const_key(c)
            if k is not None:
                if k in seen:
                    return True
                seen.add(k)
    return False


_OP = attrgetter("op")
_INPUTS = attrgetter("inputs")
_NAME = attrgetter("name")


def _mergeable(nodes: list) -> list:
    """The nodes of ``nodes`` a merge may take: deterministic default-domain nodes with outputs
    and without subgraphs."""
    return [n for n in nodes if not n.domain and n.outputs and not n.graphs and not op_traits(n.op).nondeterministic]


def _may_merge(nodes: list) -> bool:
    """False when no two of ``nodes`` (:func:`_mergeable` ones) have the same op and inputs (so
    none merges); True when some may.

    Such a pair reads one first input (which then has two readers), or none, or unnamed ones:
    only nodes like that are keyed, by op and input tensors, in bulk (nodes and tensors hash by
    identity). Unnamed inputs are distinct tensors that the merge takes for equal: with one
    among them, the answer is True.
    """
    cands = [n for n in nodes if not n.inputs or len(n.inputs[0].outputs) > 1 or not n.inputs[0].name]
    keys = list(zip(map(_OP, cands), map(tuple, map(_INPUTS, cands))))
    if len(set(keys)) != len(keys):
        return True
    return "" in map(_NAME, chain.from_iterable(map(_INPUTS, cands)))


def run(gm: GraphModel, result: None, ctx) -> PassResult:
    """Merge repeated computations and equal small initializers in the main graph."""
    # An initializer that is also a graph input is a default the caller may override.
    overridable = set(ctx.graph_inputs())
    stats, settled = merge(gm, gm.graph, default_opset(gm.model) or 0, overridable)
    if not any(stats.values()):
        return PassResult(settled=settled)
    return PassResult(stats, edited=True)


def _ref_attrs(n) -> tuple:
    """The attributes of ``n`` that refer to attributes of the function holding it (its decoded
    ``attrs`` leave them out): (name, referred name) pairs."""
    if n.proto is None or not n.proto.attribute:
        return ()
    return tuple(sorted((a.name, a.ref_attr_name) for a in n.proto.attribute if a.ref_attr_name))


def merge(gm, g, opset: int, overridable: set[str]) -> tuple[dict[str, int], bool]:
    """Merge the repeated computations and equal small initializers of graph (or function body)
    ``g`` of index ``gm`` whose default-domain opset is ``opset``; ``overridable`` names the
    initializers that are graph inputs. Returns the counts and whether a run that changed
    nothing vouches for ``PASS.settled_under``."""
    outputs = {t.name for t in g.outputs}
    canon_const: dict[tuple, object] = {}
    const_keys: dict[int, tuple | None] = {}
    stats = {"nodes merged": 0, "initializers merged": 0}

    def in_key(t) -> object:
        if not t.name:
            return ""
        if isinstance(t, Constant) and t.name not in overridable:
            k = const_keys.get(id(t), ())
            if k == ():
                k = _const_key(t)
                const_keys[id(t)] = k
            if k is not None:
                return k
        return ("t", t.name)

    # Equal small initializers: readers use the first (in node order). Nothing changes unless
    # two initializers have the same value key: that is checked on all of the graph's first.
    first_of: dict[int, object] = {}  # id of an initializer read -> the one its readers read
    for n in g.nodes if _equal_initializers(gm, g, overridable) else ():
        for i, t in enumerate(n.inputs):
            if type(t) is Constant and t.name:
                first = first_of.get(id(t))
                if first is None:
                    k = in_key(t)
                    first = first_of[id(t)] = canon_const.setdefault(k, t) if k[0] == "c" else t
                if first is not t:
                    set_input(n, i, first)
                    stats["initializers merged"] += 1
    # Two nodes compute the same when they have the same op, inputs (after the merges above,
    # equal small initializers are one tensor, so identity decides), output count and
    # attributes. Nodes are grouped by the first three, which are cheap; attributes are decoded
    # and compared only within a group of two or more.
    groups: dict[tuple, Any] = {}  # structure -> its only node so far, or attributes -> first node
    akeys: dict[int, tuple | None] = {}

    def attr_key(n) -> tuple | None:
        key = id(n)
        if key in akeys:
            return akeys[key]
        if n._attrs is None and n.proto is not None and not n.proto.attribute:
            akey: tuple | None = ()  # no attributes (skip decoding)
        else:
            defaults = schema_defaults(n.op, opset)
            attrs = {k: v for k, v in n.attrs.items() if not (k in defaults and _same_value(defaults[k], v))}
            try:
                akey = (*sorted((k, _attr_key(v)) for k, v in attrs.items()), *_ref_attrs(n))
            except TypeError:
                akey = None  # not comparable: never merged
        akeys[key] = akey
        return akey

    def structure(n) -> tuple:
        return (n.op, len(n.outputs), *[id(t) if t.name else 0 for t in n.inputs])

    nodes = _mergeable(g.nodes)
    if not stats["initializers merged"] and not _may_merge(nodes):
        # No two nodes have the same op and inputs: no attributes are compared, nothing merges.
        return {}, True
    # A cheaper first level: op and first input. Most nodes are alone there, and their full
    # structure key is computed only when a second node joins them.
    firsts: dict[tuple, Any] = {}
    removed: set[int] = set()
    blocked_by_unnamed = False
    for n in nodes:
        ins = n.inputs
        fkey = (n.op, (id(ins[0]) if ins[0].name else 0) if ins else None)
        alone = firsts.get(fkey)
        if alone is None:
            firsts[fkey] = n
            continue
        if alone is not True:  # a second node: the first goes to the full level now
            firsts[fkey] = True
            groups[structure(alone)] = alone
        skey = structure(n)
        group = groups.get(skey)
        if group is None:
            groups[skey] = n  # alone so far: its attributes are not needed yet
            continue
        if type(group) is not dict:
            first = group
            group = groups[skey] = {}
            if attr_key(first) is not None:
                group[attr_key(first)] = first
        akey = attr_key(n)
        if akey is None:
            continue
        rep = group.setdefault(akey, n)
        if rep is n:
            continue
        if any(t.name in outputs for t in n.outputs):
            continue
        pairs = list(zip(list(n.outputs), list(rep.outputs)))
        if any(mine.name and not theirs.name for mine, theirs in pairs):
            blocked_by_unnamed = True
            continue
        for mine, theirs in pairs:
            if mine.name:
                replace_uses(mine, theirs)
        removed.add(id(n))
        stats["nodes merged"] += 1
    if not any(stats.values()):
        return {}, not blocked_by_unnamed
    gm.remove_nodes(g, removed)
    return stats, False


# After a run that changed nothing (and said ``settled``), dce's removals leave nothing to
# merge: the nodes that stay keep their ops, attributes and inputs, so any equal pair among
# them was one before. (A merge blocked only because the first node's output has no name is
# the exception: with that node gone, a later pair may merge; such a run does not settle.)
PASS = Pass(
    "dedupe-shapes",
    run,
    keeps_values=True,
    settled_under=frozenset({"dce"}),
)
