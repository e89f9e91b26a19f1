"""The plans canonicalize-reshape chooses from: for each shape input of a node, the spellings
its values allow (:func:`slot_options`: constant entries, Reshape's ``0``/``-1``, Expand's
``1``, Slice bounds past the dim), and what the graph already computes (:func:`describe`).

A plan is a nested tuple naming the computation of a shape vector (a constant, a Shape slice
of a tensor, a Concat of plans, a Squeeze, a Cast); :class:`Sources` finds the tensors whose
dims carry each needed value.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.ir.queries import const_array, producer
from shapeinfer.symbolic import dims as D

INT64 = onnx.TensorProto.INT64

#: Occurrences of one dim value kept per value when looking for Shape sources.
MAX_SOURCES = 48


def shape_slots(node) -> dict[int, str]:
    """The shape-valued inputs of ``node`` (index -> kind); empty for other ops or domains."""
    if node.domain:
        return {}
    return dict(op_traits(node.op).shape_inputs)


# ---------------------------------------------------------------------- plans
# A plan is a hashable tuple describing how to compute a value:
#   ("const", dtype, shape, values)     an initializer
#   ("shape", tensor, start, end)       Shape(tensor)[start:end], int64 1-D
#   ("concat", (plan, ...))             int64 1-D concatenation
#   ("squeeze", plan)                   1-element 1-D -> scalar
#   ("cast", plan, dtype)


@dataclass
class Entry:
    """One element of a shape input: its true value and the constants that may spell it."""

    value: D.Dim
    consts: tuple[int, ...]
    runtime: bool = True  # may be read at run time (a Shape slice); False where that could be wrong


class Sources:
    """Tensors whose dims can be read with Shape, indexed by dim value."""

    def __init__(self, cands: list[tuple[str, tuple, int]]) -> None:
        self.cands = cands  # (tensor name, dims, position of producer; -1 for graph inputs)
        self.index: dict[D.Dim, list[tuple[int, int]]] = {}
        for ci, (_, dims, _) in enumerate(cands):
            for axis, d in enumerate(dims):
                occ = self.index.setdefault(d, [])
                if len(occ) < MAX_SOURCES * 4:
                    occ.append((ci, axis))

    def runs(self, entries: list[Entry], i: int, before: int) -> list[tuple[str, int, int]]:
        """Shape slices (tensor, start, end) that spell ``entries[i:]``'s values from ``i`` on."""
        out = []
        seen = 0
        for ci, axis in self.index.get(entries[i].value, ()):
            name, dims, pos = self.cands[ci]
            if pos >= before:
                continue
            seen += 1
            if seen > MAX_SOURCES:
                break
            length = 0
            while (
                i + length < len(entries)
                and axis + length < len(dims)
                and entries[i + length].runtime
                and dims[axis + length] == entries[i + length].value
            ):
                length += 1
            for ln in range(1, length + 1):
                out.append((name, axis, axis + ln))
        return out


def finish(plan: tuple, dtype: int, scalar: bool) -> tuple:
    """Give an int64 1-D plan the slot's type and rank."""
    if plan[0] == "const":
        shape = () if scalar else plan[2]
        return ("const", dtype, shape, plan[3])
    if scalar:
        plan = ("squeeze", plan)
    if dtype != INT64:
        plan = ("cast", plan, dtype)
    return plan


# ---------------------------------------------------------------------- per-kind entries


def _exact_entries(values) -> list[Entry]:
    return [Entry(v, (v,) if type(v) is int else ()) for v in values]


def reshape_options(values, in_dims, zero_copies: bool) -> list[list[Entry]]:
    """Spellings of a Reshape target: one per choice of the -1 entry (or none)."""
    if any(type(v) is int and v == 0 for v in values):
        return [_exact_entries(values)] if not zero_copies else []
    if any(type(v) is int and v < 0 for v in values):
        return []
    base = []
    for i, v in enumerate(values):
        consts: tuple[int, ...] = ()
        if type(v) is int:
            consts = (v,)
        elif zero_copies and in_dims is not None and i < len(in_dims) and in_dims[i] == v:
            consts = (0,)
        base.append(Entry(v, consts))
    options = [base]
    positive = [(D.lower_bound(e.value) or 0) >= 1 for e in base]  # provably >= 1
    n_maybe_zero = positive.count(False)
    empty_in = in_dims is not None and any(type(d) is int and d == 0 for d in in_dims)
    if not empty_in:
        for i, e in enumerate(base):
            # A -1 is inferred only when the other dims provably multiply to a nonzero count,
            # and only where inference of the rewritten node gives the same dim from the input's
            # element count without a guard (else the optimized model's proven shapes would be
            # weaker than the original's: a dim that needed a guard becomes unknown).
            others_nonzero = n_maybe_zero - (not positive[i]) == 0
            if not e.consts and others_nonzero and _derivable(e.value, i, values, in_dims):
                opt = list(base)
                opt[i] = Entry(e.value, (-1,))
                options.append(opt)
    if zero_copies:
        # An entry read at run time that can be 0 would copy an input dim instead: such entries
        # are spelled by their constants only, and options that would need them at run time go.
        options = [
            [e if positive[i] else Entry(e.value, e.consts, runtime=False) for i, e in enumerate(o)] for o in options
        ]
        options = [o for o in options if all(e.consts or e.runtime for e in o)]
    return options


def _derivable(v, i: int, values, in_dims) -> bool:
    """Whether entry ``i`` of a Reshape target ``values`` (its value ``v``) is the input's
    element count divided by the other entries (what inference makes of a -1 there),
    identically in the input symbols."""
    if in_dims is None:
        return False
    others = D.product(x for k, x in enumerate(values) if k != i)
    numel = D.product(in_dims)
    q = D.exact_div(numel, others)
    return D.sub(D.floordiv(numel, others) if q is None else q, v) == 0


def _expand_options(values, in_dims) -> list[list[Entry]]:
    """Spellings of an Expand shape: 1 where the input has the dim; droppable leading entries."""
    n = len(values)
    r = len(in_dims) if in_dims is not None else None
    entries = []
    provided = []
    for i, v in enumerate(values):
        ax = None if r is None else i - (n - r)
        has = ax is not None and ax >= 0 and (in_dims[ax] == v or v == 1)
        consts: tuple[int, ...] = (1,) if has else ((v,) if type(v) is int else ())
        entries.append(Entry(v, consts))
        provided.append(has)
    options = [entries]
    for s in range(1, n + 1):
        if not provided[s - 1]:
            break
        options.append(entries[s:])
    return options


def _slice_bound_entries(values, data_dims, axes, steps, dtype: int) -> list[Entry]:
    """Slice starts or ends: past-the-dim bounds clamp (type max), ``dim - k`` counts from the end."""
    big = 2**31 - 1 if dtype == onnx.TensorProto.INT32 else 2**63 - 1
    out = []
    for i, v in enumerate(values):
        if type(v) is int:
            out.append(Entry(v, (v,)))
            continue
        consts: tuple[int, ...] = ()
        if axes is not None and steps is not None and i < len(axes) and data_dims is not None:
            ax = axes[i] + len(data_dims) if axes[i] < 0 else axes[i]
            if 0 <= ax < len(data_dims) and steps[i] > 0:
                d = data_dims[ax]
                c = D.compare(v, d)
                diff = D.sub(v, d)
                if c is not None and c >= 0:
                    consts = (big,)
                elif type(diff) is int and diff < 0 and (D.lower_bound(v) or 0) >= 0:
                    consts = (diff,)
        out.append(Entry(v, consts))
    return out


def _ints(fact) -> tuple[int, ...] | None:
    if fact is None or fact.value is None or not all(type(v) is int for v in fact.value):
        return None
    return fact.value


def attr(node, name: str, default):
    """``node.attrs.get(name, default)``, without decoding the attributes of a node that has none."""
    if node._attrs is None and node.proto is not None and not node.proto.attribute:
        return default
    return node.attrs.get(name, default)


def slot_options(node, k: int, kind: str, facts) -> list[list[Entry]]:
    """Every spelling of input ``k`` of ``node`` worth costing (empty when values are unknown)."""
    t = node.inputs[k]
    f = facts.get(t.name)
    if f is None or f.shape is None or len(f.shape) > 1:
        return []
    data = facts.get(node.inputs[0].name) if node.inputs else None
    in_dims = data.shape if data is not None else None
    if kind in ("reshape", "expand"):
        # What the op computes is fixed by its output dims: spell those, whatever the target says.
        out = facts.get(node.outputs[0].name) if node.outputs else None
        if out is None or out.shape is None:
            return []
        if kind == "reshape":
            return reshape_options(out.shape, in_dims, not attr(node, "allowzero", 0))
        if in_dims is None or any(type(d) is int and d == 0 for d in out.shape):
            return []
        return _expand_options(out.shape, in_dims)
    values = f.value
    if values is None or any(v is None or not (type(v) is int or isinstance(v, D.Expr)) for v in values):
        return []
    if kind in ("start", "end"):
        axes = _ints(facts.get(node.inputs[3].name)) if len(node.inputs) > 3 and node.inputs[3].name else None
        if axes is None and not (len(node.inputs) > 3 and node.inputs[3].name):
            axes = tuple(range(len(values)))
        steps = _ints(facts.get(node.inputs[4].name)) if len(node.inputs) > 4 and node.inputs[4].name else None
        if steps is None and not (len(node.inputs) > 4 and node.inputs[4].name):
            steps = (1,) * len(values)
        return [_slice_bound_entries(values, in_dims, axes, steps, f.dtype)]
    return [_exact_entries(values)]


def slot_key(node, k: int, kind: str, facts) -> tuple:
    """Everything :func:`slot_options` reads for input ``k`` of ``node``: equal keys, equal
    spellings (so repeated layers are costed once)."""
    get = facts.get
    ins = node.inputs
    key: tuple = (kind, get(ins[k].name), get(ins[0].name))
    if kind in ("reshape", "expand"):
        key += (get(node.outputs[0].name) if node.outputs else None,)
        if kind == "reshape":
            key += (attr(node, "allowzero", 0),)
    elif kind in ("start", "end"):
        for j in (3, 4):
            named = len(ins) > j and bool(ins[j].name)
            key += (named, get(ins[j].name) if named else None)
    return key


# ---------------------------------------------------------------------- the existing graph


def describe(t, opset: int, depth: int = 0) -> tuple | None:
    """The plan an existing tensor's producers spell (as :func:`build` would write it), or None."""
    if depth > 8:
        return None
    arr = const_array(t)
    if arr is not None:
        if arr.dtype.kind not in "iuf" or arr.size > 64:
            return None
        dtype = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
        vals = tuple(int(x) for x in arr.reshape(-1).tolist()) if arr.dtype.kind in "iu" else None
        if vals is None:
            return None
        return ("const", dtype, tuple(arr.shape), vals)
    p = producer(t)
    if p is None or p.domain:
        return None
    if p.op == "Shape" and len(p.inputs) == 1:
        src = p.inputs[0].name
        return ("shape", src, p.attrs.get("start", 0), p.attrs.get("end", None))
    if p.op == "Gather" and opset < 15:
        inner = describe(p.inputs[0], opset, depth + 1)
        idx = const_array(p.inputs[1])
        if inner and inner[0] == "shape" and inner[2] == 0 and inner[3] is None and idx is not None and idx.ndim == 1:
            ii = [int(x) for x in idx]
            if ii and ii == list(range(ii[0], ii[0] + len(ii))):
                return ("shape", inner[1], ii[0], ii[-1] + 1)
        return None
    if p.op == "Concat" and p.attrs.get("axis") == 0:
        parts = tuple(describe(x, opset, depth + 1) for x in p.inputs)
        if any(x is None for x in parts):
            return None
        return ("concat", parts)
    if p.op == "Squeeze":
        inner = describe(p.inputs[0], opset, depth + 1)
        return None if inner is None else ("squeeze", inner)
    if p.op == "Cast":
        inner = describe(p.inputs[0], opset, depth + 1)
        return None if inner is None else ("cast", inner, p.attrs.get("to"))
    return None


def normalize(plan: tuple | None, ranks: dict[str, int]) -> tuple | None:
    """Plans with Shape ends resolved against tensor ranks, for comparing."""
    if plan is None:
        return None
    kind = plan[0]
    if kind == "shape":
        r = ranks.get(plan[1])
        start, end = plan[2], plan[3]
        if r is not None:
            start = start + r if start < 0 else start
            end = r if end is None else (end + r if end < 0 else min(end, r))
        return ("shape", plan[1], start, end)
    if kind == "concat":
        return ("concat", tuple(normalize(p, ranks) for p in plan[1]))
    if kind in ("squeeze", "cast"):
        return (kind, normalize(plan[1], ranks), *plan[2:])
    return plan


def shape_only_nodes(g) -> set[int]:
    """ids of main-graph nodes whose outputs feed only shape inputs and Shape/Size nodes."""
    outs = {t.name for t in g.outputs}
    node_ids = {id(n) for n in g.nodes}
    only: set[int] = set()
    for n in reversed(g.nodes):
        if not n.outputs:
            continue
        ok = True
        used = False
        for t in n.outputs:
            if not t.name:
                continue
            if t.name in outs:
                ok = False
                break
            for c in t.outputs:
                used = True
                if id(c) not in node_ids:
                    ok = False
                    break
                if c.op in ("Shape", "Size") or id(c) in only:
                    continue
                slots = shape_slots(c)
                if all(c.inputs[k] is not t or k in slots for k in range(len(c.inputs))):
                    continue
                ok = False
                break
            if not ok:
                break
        if ok and used:
            only.add(id(n))
    return only
