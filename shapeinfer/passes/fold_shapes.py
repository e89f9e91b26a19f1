"""fold-shapes: shape arithmetic whose values are fully static becomes initializers.

Contract (main graph only):

- A tensor produced by a node becomes an initializer of the same name when inference knows
  every one of its values as a plain integer (no symbol, no unknown element), its type is an
  integer or bool type, it has at most ``ctx.fold_cap`` elements, it is not a graph output,
  and its producer is a deterministic default-domain node without subgraphs. The producer is
  removed when every output it has that is used folds. This is folding shape math, not
  weights: a ConstantOfShape, Expand or Tile whose output is large stays a node.
- A Constant node (not ``sparse_value``, output not a graph output) becomes an initializer of
  the same name: its value is already stored in the model, as a node it only costs a kernel.
- Initializers only an already-folded node read are left for ``dce``.
- Nothing an Expand's shape input is computed from folds when that shape holds a 0: as a
  constant, onnxruntime's ExpandElimination takes a target dim of 0 for one of 1 and removes
  the Expand (the output then has 1 where the input model gives 0, or fails to load). Computed
  at runtime, as in the input, it stays an Expand. Nor does a Reshape target whose ints (a 0
  read as the dim it copies) multiply to 0 beside a -1 or a symbolic entry: onnx's load-time
  inference, which onnxruntime runs, reads the symbol as -1 and refuses the constant parts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.ir.graph import rename, replace_uses
from shapeinfer.ir.queries import constant_node_value, producer
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

_INT_TYPES = INT_TYPES | {onnx.TensorProto.BOOL}


def static_array(fact, cap: int) -> np.ndarray | None:
    """The fact's values as a numpy array when they are all static ints of an integer type."""
    if fact is None or fact.kind != "tensor" or fact.dtype not in _INT_TYPES or not fact.is_static:
        return None
    if not fact.known_values or any(type(v) is not int for v in fact.value):
        return None
    if len(fact.value) > cap:
        return None
    dt = onnx.helper.tensor_dtype_to_np_dtype(fact.dtype)
    info = np.iinfo(np.int8 if dt == np.bool_ else dt)
    if any(v < info.min or v > info.max for v in fact.value):
        return None
    return np.array(fact.value, dtype=dt).reshape(fact.shape)


def _distinct_values(facts) -> list:
    """The tracked values of the distinct fact objects of ``facts`` (inference shares one fact
    between many tensors)."""
    return [f.value for f in {id(f): f for f in facts.values() if f.value is not None}.values()]


def _zero_count_target(n, facts) -> bool:
    """Whether Reshape ``n`` (allowzero 0) has a known target whose int entries, a 0 read as the
    input dim it copies, multiply to 0 beside an entry that is -1 or not a number: onnx's
    load-time inference, which onnxruntime runs, propagates a symbolic entry as -1 and refuses
    such a target once its ints are constants ("Invalid Target shape product of 0 ... in
    combination with -1"), though the model runs (a computed 0 copies a dim of 0)."""
    if n.attrs.get("allowzero", 0):
        return False
    data, target = facts.get(n.inputs[0].name), facts.get(n.inputs[1].name)
    if target is None or target.value is None or data is None or data.shape is None:
        return False
    count, open_entry = 1, False
    for i, v in enumerate(target.value):
        if type(v) is not int or v == -1:
            open_entry = True
            continue
        d = v if v != 0 else (data.shape[i] if i < len(data.shape) else None)
        if type(d) is int:
            count *= d
    return open_entry and count == 0


def zero_expand_sources(g, facts) -> set[int]:
    """Ids of the nodes an Expand's shape input is computed from (itself included) when inference
    knows a 0 in that shape, and those of a Reshape target whose entries other than -1 multiply
    to 0 (:func:`_zero_count_target`): see the module docstring, they must not become
    constants."""
    if not any(0 in v for v in _distinct_values(facts)):
        return set()  # no tensor holds a 0 (ints compare equal to floats and bools alike: a superset)
    stack = []
    for n in g.nodes:
        if n.op == "Expand" and not n.domain and len(n.inputs) > 1:
            f = facts.get(n.inputs[1].name)
            if f is not None and f.value is not None and any(type(v) is int and v == 0 for v in f.value):
                stack.append(n.inputs[1])
        elif n.op == "Reshape" and not n.domain and len(n.inputs) > 1 and _zero_count_target(n, facts):
            stack.append(n.inputs[1])
    seen: set[int] = set()
    while stack:
        p = producer(stack.pop())
        if p is not None and id(p) not in seen:
            seen.add(id(p))
            stack.extend(p.inputs)
    return seen


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Fold static shape tensors and Constant nodes of the main graph into initializers."""
    facts = result.facts
    g = gm.graph
    outputs = {t.name for t in g.outputs}
    fold: set[int] = set()
    arrays: dict[str, np.ndarray] = {}
    constants = 0
    cap = ctx.fold_cap
    facts_get = facts.get
    # Only nodes writing a tensor whose tracked values are all ints of an integer type (or
    # Constant nodes, or nodes with several outputs) are looked at. Inference shares facts
    # between tensors: each distinct one is tested once.
    ints: dict[int, bool] = {}
    maybe = set()
    for name, f in [(name, f) for name, f in facts.items() if f.value is not None]:
        ok = ints.get(id(f))
        if ok is None:
            ok = ints[id(f)] = f.dtype in _INT_TYPES and all(type(v) is int for v in f.value)
        if ok:
            maybe.add(name)
    nodes = [
        n for n in g.nodes if n.op == "Constant" or len(n.outputs) > 1 or (n.outputs and n.outputs[0].name in maybe)
    ]
    arrays_of: dict[int, np.ndarray | None] = {}
    keep = zero_expand_sources(g, facts) if nodes else set()
    for n in nodes:
        if n.domain or op_traits(n.op).nondeterministic or n.graphs or not n.outputs or id(n) in keep:
            continue
        if n.op == "Constant":
            if any(t.name in outputs for t in n.outputs):
                continue
            v = constant_node_value(n)
            if v is None or len(n.outputs) != 1:
                continue
            fold.add(id(n))
            arrays[n.outputs[0].name] = v
            constants += 1
            continue
        found = {}
        for t in n.outputs:
            if not t.name or not t.outputs:
                continue
            f = facts_get(t.name)
            if f is None or f.value is None:
                break
            arr = arrays_of.get(id(f), False)
            if arr is False:
                arr = arrays_of[id(f)] = static_array(f, cap)
            if arr is None:
                break
            found[t.name] = arr
        else:
            if found and not any(t.name in outputs for t in n.outputs):
                arrays.update(found)
                fold.add(id(n))
    if not fold:
        return PassResult()
    folded_tensors = 0
    for n in g.nodes:
        if id(n) not in fold:
            continue
        for t in list(n.outputs):
            if t.name not in arrays:
                continue
            if all(id(c) in fold for c in t.outputs):
                continue  # only read by other folded nodes
            v = arrays[t.name]
            name = t.name
            rename(t, gm.fresh(name + "__folded"))  # free the name for the initializer
            c = gm.constant(g, name, v, exact=True)
            replace_uses(t, c)
            if n.op != "Constant":
                folded_tensors += 1
    gm.remove_nodes(g, fold)
    changes = {
        "tensors folded to initializers": folded_tensors,
        "Constant nodes made initializers": constants,
        "nodes removed": len(fold),
    }
    return PassResult(changes, edited=True)


PASS = Pass(
    "fold-shapes",
    run,
    keeps_values=True,
    infers_first=True,
)
