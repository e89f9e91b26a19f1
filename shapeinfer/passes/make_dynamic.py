"""``make-dynamic``: make input axes of a statically exported model symbolic, rewriting every
constant that baked the old size in, or refuse.

:func:`make_dynamic` takes a model and ``{input: {axis: symbol}}``, each listed axis a static dim
(its *old size*), and returns a rewritten copy (the caller's model is never changed) or raises
:class:`MakeDynamicError` listing each node that cannot be made to follow the size and why.

How a constant is found to come from the size (provenance, never value): the listed axes are
made symbolic and the model inferred; then, repeatedly, the *first* node in graph order that
shows a baked size is repaired and the model inferred again (everything before that node is
then known to follow the symbols, so its facts are trusted). A node shows a baked size when:

- **Reshape** with a constant target whose data has a dim in the new symbols: the data's dims
  (evaluated at the old sizes) and the target's entries are aligned into the minimal groups of
  equal element count, left to right (so a symbolic dim of old size 1 joins the group at its
  own place); an entry of a group whose data dims carry a symbol takes their product. A group
  of several entries is symbolic in one entry only: the one the target wrote as ``-1``, else the
  one whose value is the group's symbolic factor at the old size; anything else is ambiguous
  and refused. This is why, in ``Reshape(x[1, seq, 64], [1, 16, -1, 16])`` at seq 16, the
  first 16 becomes ``seq`` (it is x's dim 1) and the last stays 16 (a factor of the static 64).
  The one exception splits a dim merged from several symbols back into them
  (``[batch*seq, 192]`` to ``[2, 8, 192]``, GPT-2's Conv1D): each symbol takes the one entry of
  its old size, only when that assignment is unique (refused at batch 4, seq 4).
- **a guard**: inference had to assume a new symbol equals its old size (a broadcast of ``seq``
  against 16, a MatMul's inner dims). The static side of the guard is traced back, axis by
  axis, through the ops that carry a dim from input to output (elementwise and broadcasting
  ops, Cast, Unsqueeze/Squeeze, Transpose, Gather, MatMul, Concat off its axis, a 1-to-1
  Reshape group, a Reshape whose target copies the dim with ``Shape(t)``) to where that dim was
  made: an Expand / ConstantOfShape shape entry (also
  behind TorchScript's ``Where(Equal(c, -1), 1, c)`` wrapping), a Tile repeat, a Range limit, a
  Slice end over a static axis, or a constant. The dim there is the symbol's expression.

A constant that is the source of such a dim is regenerated only when it is an integer
``arange`` along that axis and constant along every other (position ids: ``Range`` of the
size), or a float table equal, bit for bit, to that arange times a vector along the other axes
(a rotary embedding's angles, ``positions * inv_freq``: each entry one correctly rounded
product, so ``Range`` cast and multiplied gives the same table at the old size and the formula
at any other); any other constant (a weight of exactly that many rows, a table of cos values,
a causal mask folded at the size) is refused. An Expand whose constant shape spells as the old
size a dim its data has in the symbol (LLaMA's repeat_kv) gets 1 there, which keeps the
data's dim. So is a guard that cannot be traced, a
``Gather`` that reads an axis in the new symbols at indices made from constants alone (the
batch rows of a mask folded at batch 1; indices computed from the shapes, as BERT's and GPT-2's
``mask.flatten()[b * seq + s]`` once its aranges are regenerated, follow the size), a Slice
that cuts a fixed length out of such an axis, an If whose condition follows the size, and a
Reshape target that stays ambiguous.

Each rewritten dim is a shape computation from the graph inputs: one ``Shape`` per input that
declares a symbol (the fewest roots), ``Gather`` of the axis, ``Mul``/``Add``/``Div`` for the
expression, ``Concat`` for a vector; a Reshape entry that copies the data's dim at the same
index becomes 0 and a single remaining symbolic entry -1. The new nodes go at the head of the
graph (they read graph inputs only); the nodes and constants a rewrite leaves unused are
removed, and nothing else changes.

The proof: the rewritten model is inferred again and must have no equality or broadcast guard
on a new symbol (no condition tying it to one size; a bound such as ``seq <= 512`` from a
table's rows is the model's own range, as its dynamic export has it) and every graph output's
rank known; the graph outputs then declare the dims inference proves, and so does every
declared type (``value_info`` in every graph, a subgraph's outputs) whose static dim now
follows the symbols.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx

from shapeinfer.base.text import text
from shapeinfer.inference.engine import infer
from shapeinfer.inference.policy import PASSES_POLICY
from shapeinfer.passes._dynamic_proof import Proof
from shapeinfer.passes._dynamic_shapes import MakeDynamicError, Refusal, Refused, ShapeBuilder
from shapeinfer.symbolic import dims as D

__all__ = ["MakeDynamicError", "Refusal", "make_dynamic"]

_UNARY = {
    "Cast", "Neg", "Not", "Identity", "Abs", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Erf", "Sqrt",
    "Reciprocal", "Floor", "Ceil", "Softmax", "LogSoftmax", "LayerNormalization", "Dropout", "Gelu",
    "IsNaN", "IsInf", "Sin", "Cos", "CastLike", "Round", "Sign", "LeakyRelu", "Elu", "HardSigmoid",
    "Clip",
}  # fmt: skip
_BROADCAST = {
    "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
    "And", "Or", "Xor", "Where", "Max", "Min", "Mod", "BitShift", "Sum", "Mean",
}  # fmt: skip
_MAX_ROUNDS = 400
_DEBUG = bool(__import__("os").environ.get("SHAPEINFER_MAKE_DYNAMIC_DEBUG"))


def make_dynamic(
    model: onnx.ModelProto, dims: Mapping[str, Mapping[int, str]], *, base_dir: str | None = None
) -> onnx.ModelProto:
    """A copy of ``model`` with each ``dims[input][axis]`` made the symbol named, and every
    constant that baked that axis' old size in rewritten to follow it (see the module docstring
    for the rule and the proof). ValueError for a request that cannot be right (an input the
    graph lacks, an axis out of range or not a static dim, a symbol given two old sizes, a bad
    symbol name); :class:`MakeDynamicError` when the rewrite cannot be proved, nothing returned.
    ``base_dir``: the model's folder, where its external data is (small constants stored there
    are read from it; without it they are unknown).
    """
    work = onnx.ModelProto()
    work.CopyFrom(model)
    old = _symbolise_inputs(work, dims)
    rw = _Rewriter(work, old, base_dir)
    rw.run()
    return work


def _symbolise_inputs(model: onnx.ModelProto, dims: Mapping[str, Mapping[int, str]]) -> dict[str, int]:
    """Write the symbols into the graph inputs; returns each symbol's old size."""
    inputs = {i.name: i for i in model.graph.input}
    init = {t.name for t in model.graph.initializer}
    old: dict[str, int] = {}
    if not dims or not any(dims.values()):
        raise ValueError("no axis to make dynamic: name at least one (dims={'x': {0: 'batch'}}, --dim x:0=batch)")
    for name, axes in dims.items():
        if not isinstance(axes, Mapping):
            raise ValueError(f"dims[{name!r}] maps axes to symbol names ({{0: 'batch'}}), not {axes!r}")
        vi = inputs.get(name)
        if vi is None or name in init:
            shown = ", ".join(text(i) for i in inputs if i not in init)
            raise ValueError(f"no graph input named {name!r} (inputs: {shown})")
        shape = vi.type.tensor_type.shape
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            raise ValueError(f"input {name!r} declares no shape")
        rank = len(shape.dim)
        for axis, symbol in axes.items():
            a = int(axis)
            if a < -rank or a >= rank:
                raise ValueError(f"input {name!r} has rank {rank}: no axis {axis}")
            a %= rank
            if not isinstance(symbol, str) or not symbol.isidentifier():
                raise ValueError(f"symbol {symbol!r} for {name}:{axis} is not a name")
            d = shape.dim[a]
            if not d.HasField("dim_value") or d.dim_value < 1:
                raise ValueError(f"input {name!r} axis {a} is not a static dim (nothing to make dynamic)")
            if old.setdefault(symbol, d.dim_value) != d.dim_value:
                raise ValueError(
                    f"symbol {symbol!r} names axes of sizes {old[symbol]} and {d.dim_value}: one symbol is one"
                    " size (give each size a symbol of its own)"
                )
            d.Clear()
            d.dim_param = symbol
    return old


class _Rewriter(ShapeBuilder, Proof):
    """The repair loop of one model (in place)."""

    def __init__(self, model: onnx.ModelProto, old: dict[str, int], base_dir: str | None = None) -> None:
        super().__init__(model, old, base_dir)
        used = self._used()
        #: what was unused before any rewrite: kept as it is (only what a rewrite orphans goes)
        self._orig_dead = {n.name for n in self.graph.node if not any(o in used for o in n.output)}
        self._orig_unused_inits = {t.name for t in self.graph.initializer if t.name not in used}

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        last_key = None
        for _ in range(_MAX_ROUNDS):
            self.flush()
            # the declarations were written at the old sizes: claims to check, never facts
            result = infer(self.model, base_dir=self.base_dir, policy=PASSES_POLICY)
            self.result = result
            self.producers = {o: n for n in self.graph.node for o in n.output}
            # guards name a node by its name, else "<op_type> #<index>" (NodeContext.label)
            self.index = {n.name or f"{n.op_type} #{i}": i for i, n in enumerate(self.graph.node)}
            guard = self._first_guard(result)
            # an equality guard is applied to every fact inferred: the facts before the node that
            # raised it are read from an inference of the graph up to that node
            self.facts = result.facts if guard is None else self._prefix_facts(guard[0])
            issue = self._first_issue(guard)
            if issue is None:
                break
            key = (issue[0], issue[1])
            if key == last_key:  # a repair that changed nothing: it would never end
                raise MakeDynamicError([Refusal(issue[1], "the rewrite did not remove the baked size")])
            last_key = key
            if _DEBUG:
                print("make-dynamic repair:", issue[0], issue[1])
            try:
                issue[2]()
            except Refused as e:
                raise MakeDynamicError([e.refusal]) from None
        else:
            raise MakeDynamicError([Refusal("<model>", f"more than {_MAX_ROUNDS} rewrites")])
        self.facts = result.facts
        self._prove(result)
        self._sweep()

    def _prefix_facts(self, upto: int) -> dict:
        """The facts of an inference of the main graph's first ``upto`` nodes."""

        part = onnx.ModelProto()
        part.CopyFrom(self.model)
        del part.graph.node[upto:]
        del part.graph.output[:]
        del part.graph.value_info[:]
        return infer(part, base_dir=self.base_dir, policy=PASSES_POLICY).facts

    def _first_guard(self, result):
        """(node index, node, expression) of the first guard that ties a new symbol to its old size."""
        for kind, a, b, where in result.guard_events:
            if kind not in ("broadcast", "equality"):
                continue
            for sym_side, other in ((a, b), (b, a)):
                if self._dim_new(sym_side) and isinstance(other, int) and self._eval(sym_side) == other:
                    i = self.index.get(where)
                    return (len(self.graph.node) if i is None else i, where, sym_side)
        return None

    def _dim_new(self, d: D.Dim) -> bool:
        return not isinstance(d, int) and bool(D.symbols(d) & self.new)

    def _eval(self, d: D.Dim) -> int | None:
        try:
            return D.evaluate(d, self.old)
        except KeyError:
            return None

    def _shape(self, name: str) -> tuple | None:
        f = self.facts.get(name)
        return None if f is None else f.shape

    def _first_issue(self, guard):
        """(node index, node name, repair) of the first node in graph order showing a baked size."""
        limit = len(self.graph.node) if guard is None else guard[0] + 1  # (the guarded node too)
        for i, node in enumerate(self.graph.node[:limit]):
            if node.op_type == "Reshape":
                fix = self._reshape_fix(node)
                if fix is not None:
                    return (i, node.name or f"Reshape #{i}", fix)
        if guard is None:
            return None
        i, where, expr = guard
        return (i, where, lambda: self._repair_guard(where, expr))

    # ------------------------------------------------------------------ Reshape

    def _reshape_fix(self, node: onnx.NodeProto):
        if len(node.input) < 2:
            return None
        target = self.value_of(node.input[1])
        dshape = self._shape(node.input[0])
        if target is None or dshape is None or not any(self._dim_new(d) for d in dshape):
            return None
        allowzero = any(a.name == "allowzero" and a.i for a in node.attribute)
        t = [int(v) for v in target.ravel()]
        ds = [self._eval(d) for d in dshape]
        if any(v is None for v in ds):
            return None
        ts = list(t)
        for j, v in enumerate(ts):
            if v == 0 and not allowzero:
                ts[j] = ds[j]
        numel = int(np.prod(ds)) if ds else 1
        if -1 in ts:
            rest = int(np.prod([v for v in ts if v != -1])) if len(ts) > 1 else 1
            if rest == 0 or numel % rest:
                return None
            ts[ts.index(-1)] = numel // rest
        if int(np.prod(ts)) != numel:
            return None
        groups = _align(ds, ts)
        if groups is None:
            return None
        name = node.name or "Reshape"
        exprs: list[D.Dim] = list(ts)
        for gi, gj in groups:
            if not any(self._dim_new(dshape[i]) for i in gi):
                continue
            prod = D.product([dshape[i] for i in gi])
            if len(gj) == 1:
                exprs[gj[0]] = prod
                continue
            cands = []
            for j in gj:
                others = int(np.prod([ts[k] for k in gj if k != j]))
                q = D.exact_div(prod, others) if others else None
                if q is not None and self._eval(q) == ts[j]:
                    cands.append((j, q))
            pick = [c for c in cands if t[c[0]] == -1]
            if not pick:
                plain = [c for c in cands if not isinstance(c[1], int) and all(cf == 1 for _, cf in c[1].terms)]
                pick = plain if len(plain) == 1 else []
            split = self._split(prod, gj, ts) if len(pick) != 1 else None
            if split is not None:
                for j, e in split.items():
                    exprs[j] = e
                continue
            if len(pick) != 1:
                msg = f"cannot tell which of the target entries {[t[k] for k in gj]} follows {D.format(prod)}"

                def refuse(name=name, msg=msg):
                    raise Refused(name, msg)

                return refuse
            exprs[pick[0][0]] = pick[0][1]
        # encode: 0 where the entry copies the data's dim at that index, one -1, else the value
        entries: list = []
        sym_left = []
        for j, e in enumerate(exprs):
            if not self._dim_new(e):
                entries.append(int(e))
            elif not allowzero and j < len(dshape) and dshape[j] == e:
                entries.append(0)
            else:
                entries.append(e)
                sym_left.append(j)
        if len(sym_left) == 1:
            entries[sym_left[0]] = -1
        if all(isinstance(e, int) for e in entries) and entries == t:
            return None
        if all(isinstance(e, int) for e in entries) and self._same_reshape(t, entries, dshape, allowzero):
            return None
        return lambda: self._set_input(node, 1, self._vector(entries, name))

    def _split(self, prod: D.Dim, gj: list[int], ts: list[int]) -> dict[int, D.Dim] | None:
        """Target entries ``gj`` that split a data dim ``prod`` merged from several new symbols
        back into them (``[batch*seq, 192]`` to ``[2, 8, 192]`` at batch 2, seq 8): ``prod`` is
        ``c * s1 * ... * sk`` (distinct new symbols, exponent 1) and each symbol takes the one
        entry of its old size, the entries left multiplying to ``c``. None unless that assignment
        is the only one (no two symbols of one old size, no two entries of a symbol's size)."""
        if isinstance(prod, int) or len(prod.terms) != 1:
            return None
        mono, coeff = prod.terms[0]
        names = [a.name for a in mono if a.kind == "sym"]
        if len(names) != len(mono) or len(set(names)) != len(names) or len(names) < 2:
            return None
        if any(n not in self.new for n in names):
            return None
        olds = [self.old[n] for n in names]
        if len(set(olds)) != len(olds):
            return None
        out: dict[int, D.Dim] = {}
        for n, v in zip(names, olds):
            at = [j for j in gj if ts[j] == v]
            if len(at) != 1:
                return None
            out[at[0]] = D.sym(n)
        rest = [ts[j] for j in gj if j not in out]
        if int(np.prod(rest)) != coeff:
            return None
        return out

    def _same_reshape(self, t, entries, dshape, allowzero) -> bool:
        """Whether two constant targets give the same output over the symbolic data (nothing to do)."""
        return _out_dims(t, dshape, allowzero) == _out_dims(entries, dshape, allowzero)

    # ------------------------------------------------------------------ guards

    def _repair_guard(self, where: str, expr: D.Dim) -> None:
        i = self.index.get(where)
        if i is None:
            raise Refused(where, f"inference assumed {D.format(expr)} == {self._eval(expr)} here, at no node to trace")
        node = self.graph.node[i]
        old = self._eval(expr)
        hits = []
        for k, name in enumerate(node.input):
            s = self._shape(name) if name else None
            if s is None:
                continue
            for a, d in enumerate(s):
                if isinstance(d, int) and d == old and not self._dim_new(d):
                    partner = self._partner(node, k, a, expr)
                    if partner:
                        hits.append((k, a))
        if not hits and node.op_type == "Expand" and self._expand_to_data(node):
            return
        if not hits:
            raise Refused(where, f"inference assumed {D.format(expr)} == {old} here and no input of it is traced")
        for k, a in hits:
            self._trace(node.input[k], a, expr, node, k, set())

    def _expand_to_data(self, node: onnx.NodeProto) -> bool:
        """An Expand whose constant shape spells, as their old sizes, dims its data has in the new
        symbols (``x[batch, 2, 1, seq, 8]`` to ``[2, 2, 2, 12, 8]``, LLaMA's repeat_kv): those
        entries become 1, which keeps the data's dims (the same output at the old size, the
        symbols at any other). False when there is none."""
        vec, _src = self._shape_const(node.input[1])
        xs = self._shape(node.input[0])
        if vec is None or xs is None:
            return False
        entries: list = [v if isinstance(v, D.Expr) else int(v) for v in vec]  # (a vector a repair wrote)
        hit = False
        for pos, v in enumerate(entries):
            b = pos - len(entries) + len(xs)
            if 0 <= b < len(xs) and v != 1 and self._dim_new(xs[b]) and self._eval(xs[b]) == v:
                entries[pos] = 1  # (every symbol's entry at once: batch and seq alike)
                hit = True
        if hit:
            self._set_input(node, 1, self._vector(entries, node.name or "Expand"))
        return hit

    def _partner(self, node, k, a, expr) -> bool:
        """Whether input k's static axis a faces ``expr`` at ``node`` (right-aligned broadcast, or a
        MatMul's inner / batch dims)."""
        shapes = [self._shape(n) if n else None for n in node.input]
        rk = len(shapes[k])
        if node.op_type == "MatMul" and len(shapes) == 2 and all(s is not None for s in shapes):
            o = shapes[1 - k]
            if k == 0 and a == rk - 1:
                return (len(o) >= 2 and o[-2] == expr) or (len(o) == 1 and o[0] == expr)
            if k == 1 and a == rk - 2:
                return o[-1] == expr
        for j, s in enumerate(shapes):
            if j == k or s is None:
                continue
            b = a - rk + len(s)
            if 0 <= b < len(s) and s[b] == expr:
                return True
        return False

    def _trace(self, name: str, axis: int, expr: D.Dim, consumer, k: int, seen: set) -> None:
        """Make axis ``axis`` of tensor ``name`` (as read by ``consumer``'s input ``k``) follow
        ``expr``, by rewriting where that dim was made."""
        key = (name, axis)
        if key in seen:
            return
        seen.add(key)
        shape = self._shape(name)
        old = self._eval(expr)
        if shape is None or axis >= len(shape) or shape[axis] != old:
            return
        node = self.producers.get(name)
        cname = consumer.name or consumer.op_type
        if node is None or node.op_type == "Constant":
            arr = self.value_of(name)
            if arr is None:  # a graph input: it is what it declares
                raise Refused(cname, f"input {name!r} has a static dim {old} where {D.format(expr)} is needed")
            new = self._arange(arr, axis, expr)
            if new is None:
                what = "a weight" if any(t.name == name for t in self.graph.initializer) else "a constant"
                raise Refused(
                    cname,
                    f"{what} {name!r} of shape {list(arr.shape)} has {old} along axis {axis}, the old size of "
                    f"{D.format(expr)}: folded from the size, it cannot be regenerated",
                )
            self._set_input(consumer, k, new)
            return
        op = node.op_type
        nname = node.name or op
        ins = [self._shape(n) if n else None for n in node.input]
        rank = len(shape)
        if op in _UNARY:
            return self._trace(node.input[0], axis, expr, node, 0, seen)
        if op in _BROADCAST:
            traced = False
            for j, s in enumerate(ins):
                if s is None:
                    continue
                b = axis - rank + len(s)
                if 0 <= b < len(s) and s[b] == old:
                    self._trace(node.input[j], b, expr, node, j, seen)
                    traced = True
            if not traced:
                raise Refused(nname, f"cannot trace dim {old} of {name!r} back")
            return
        if op in ("Expand", "ConstantOfShape", "Tile"):
            si = 1 if op != "ConstantOfShape" else 0
            vec, _src = self._shape_const(node.input[si])
            if vec is None:
                raise Refused(
                    nname, f"its shape input is computed, not a constant, and gives {old} for {D.format(expr)}"
                )
            pos = axis - rank + len(vec)
            xs = ins[0] if op != "ConstantOfShape" else None
            entries: list = [
                1 if (op == "Expand" and isinstance(v, int) and v == -1) else v if isinstance(v, D.Expr) else int(v)
                for v in vec
            ]
            if op == "Tile":
                xd = xs[axis]
                if xd == old:
                    return self._trace(node.input[0], axis, expr, node, 0, seen)
                if xd != 1:
                    raise Refused(nname, f"repeats a dim of {xd} to {old}: cannot follow {D.format(expr)}")
                entries[axis] = expr
            else:
                if pos < 0 or entries[pos] != old:
                    if xs is not None:
                        b = axis - rank + len(xs)
                        if 0 <= b < len(xs) and xs[b] == old:
                            return self._trace(node.input[0], b, expr, node, 0, seen)
                    raise Refused(nname, f"cannot trace dim {old} of {name!r} back")
                entries[pos] = expr
                if xs is not None:
                    b = axis - rank + len(xs)
                    src = node.input[0]
                    arr = self.value_of(src) if old == 1 else None
                    weight_one = arr is not None and arr.dtype.kind == "f"
                    if 0 <= b < len(xs) and xs[b] == old and not weight_one:
                        self._trace(src, b, expr, node, 0, seen)
                        entries[pos] = 1
                    # (a float constant's 1 broadcasts: the entry alone makes the size, as
                    # ViT's cls_token.expand(batch, -1, -1) exported at batch 1; an integer
                    # one may be an offset folded at batch 1, arange(1), and is traced)
            self._set_input(node, si, self._vector(entries, nname))
            return
        if op == "Range":
            vals = [self.value_of(n) for n in node.input[:3]]
            if any(v is None for v in vals):
                raise Refused(nname, f"a Range of {old} from computed bounds")
            start, _limit, delta = (vals[0].item(), vals[1].item(), vals[2].item())
            if vals[0].dtype.kind != "i" or start != 0 or delta != 1:
                raise Refused(
                    nname, f"a Range of {old} elements from {start} by {delta}: only 0..n by 1 is regenerated"
                )
            self._set_input(node, 1, self._scalar(expr, nname, vals[1].dtype))
            return
        if op == "Slice":
            return self._trace_slice(node, axis, expr, ins, seen)
        if op == "Unsqueeze":
            axes = self._axes(node, rank)
            if axis in axes:
                raise Refused(nname, f"an inserted axis cannot have {old} elements")
            b = axis - sum(1 for x in axes if x < axis)
            return self._trace(node.input[0], b, expr, node, 0, seen)
        if op == "Squeeze":
            xs = ins[0]
            axes = self._axes(node, len(xs)) if xs is not None else None
            if axes is None:
                raise Refused(nname, "a Squeeze of unknown axes")
            kept = [i for i in range(len(xs)) if i not in axes]
            return self._trace(node.input[0], kept[axis], expr, node, 0, seen)
        if op == "Transpose":
            perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), list(range(rank))[::-1])
            return self._trace(node.input[0], perm[axis], expr, node, 0, seen)
        if op == "Gather":
            ga = next((a.i for a in node.attribute if a.name == "axis"), 0)
            ds, is_ = ins[0], ins[1]
            ga %= len(ds)
            if axis < ga:
                return self._trace(node.input[0], axis, expr, node, 0, seen)
            if axis < ga + len(is_):
                return self._trace(node.input[1], axis - ga, expr, node, 1, seen)
            return self._trace(node.input[0], axis - len(is_) + 1, expr, node, 0, seen)
        if op == "GatherElements":
            return self._trace(node.input[1], axis, expr, node, 1, seen)
        if op == "MatMul":
            a_s, b_s = ins
            if axis == rank - 1:
                return self._trace(node.input[1], len(b_s) - 1, expr, node, 1, seen)
            if axis == rank - 2 and len(a_s) >= 2:
                return self._trace(node.input[0], len(a_s) - 2, expr, node, 0, seen)
            for j, s in enumerate(ins):
                b = axis - rank + len(s)
                if 0 <= b < len(s) - 2 and s[b] == old:
                    self._trace(node.input[j], b, expr, node, j, seen)
            return
        if op == "Concat":
            ca = next((a.i for a in node.attribute if a.name == "axis"), 0) % rank
            if ca == axis:
                raise Refused(nname, f"joins pieces into the {old} of {D.format(expr)}: cannot follow it")
            for j, s in enumerate(ins):
                if s is not None and s[axis] == old:
                    self._trace(node.input[j], axis, expr, node, j, seen)
            return
        if op == "Reshape":
            xs = ins[0]
            target = self.value_of(node.input[1])
            if xs is not None and target is not None:
                # (an output dim with no value at the static sizes, a fresh symbol: no alignment)
                outs = [self._eval(d) for d in shape]
                ds = [v if (v := self._eval(d)) is not None else -7 for d in xs]
                groups = None if None in outs else _align(ds, outs)
                for gi, gj in groups or []:
                    if gj == [axis] and len(gi) == 1 and xs[gi[0]] == old:
                        self._trace(node.input[0], gi[0], expr, node, 0, seen)
                        t = [int(v) for v in target.ravel()]
                        if t[axis] == old:
                            t[axis] = 0 if gi[0] == axis else expr
                            if not isinstance(t[axis], int):
                                t[axis] = -1 if -1 not in t else expr
                            self._set_input(node, 1, self._vector(t, nname))
                        return
                    if gj == [axis] and len(gi) == 1:
                        t = [int(v) for v in target.ravel()]
                        if t[axis] == old:
                            raise Refused(nname, f"reshapes into a dim {old} that no input dim gives")
            src = self._shape_source(node.input[1], axis) if target is None else None
            if src is not None:
                return self._trace(src[0], src[1], expr, src[2], 0, seen)
            raise Refused(nname, f"cannot trace dim {old} of {name!r} back through the Reshape")
        raise Refused(nname, f"cannot trace dim {old} of {name!r} back through {op}")

    def _shape_source(self, name: str, j: int):
        """Where entry ``j`` of a computed shape vector comes from when it copies a tensor's dim:
        ``(tensor, its axis, the Shape node reading it)`` for ``Shape(x)`` (``start``/``end``
        included) or a ``Concat`` with such a piece at ``j``; else None."""
        node = self.producers.get(name)
        if node is None:
            return None
        if node.op_type == "Shape":
            xs = self._shape(node.input[0])
            if xs is None:
                return None
            r = len(xs)
            start = next((a.i for a in node.attribute if a.name == "start"), 0)
            end = next((a.i for a in node.attribute if a.name == "end"), r)
            start = min(max(start + r if start < 0 else start, 0), r)
            end = min(max(end + r if end < 0 else end, 0), r)
            return (node.input[0], start + j, node) if start + j < end else None
        if node.op_type == "Concat":
            at = 0
            for piece in node.input:
                ps = self._shape(piece)
                if ps is None or len(ps) != 1 or not isinstance(ps[0], int):
                    return None
                if j < at + ps[0]:
                    return self._shape_source(piece, j - at)
                at += ps[0]
        return None

    def _trace_slice(self, node, axis, expr, ins, seen) -> None:
        nname = node.name or "Slice"
        old = self._eval(expr)
        xs = ins[0]
        starts, ends = (self.value_of(n) for n in node.input[1:3])
        axes = self.value_of(node.input[3]) if len(node.input) > 3 and node.input[3] else None
        steps = self.value_of(node.input[4]) if len(node.input) > 4 and node.input[4] else None
        if starts is None or ends is None:
            raise Refused(nname, f"a Slice of {old} from computed bounds")
        axes_l = [int(a) % len(xs) for a in (axes.ravel() if axes is not None else range(starts.size))]
        if axis not in axes_l:
            return self._trace(node.input[0], axis, expr, node, 0, seen)
        p = axes_l.index(axis)
        step = int(steps.ravel()[p]) if steps is not None else 1
        start = int(starts.ravel()[p])
        if step != 1 or start < 0 or self._dim_new(xs[axis]):
            raise Refused(nname, f"a Slice of {old} elements that cannot follow {D.format(expr)}")
        new_ends = [int(v) for v in ends.ravel()]
        new_ends[p] = D.add(expr, start)
        self._set_input(node, 2, self._vector(new_ends, nname))

    def _axes(self, node, rank) -> list[int]:
        arr = self.value_of(node.input[1]) if len(node.input) > 1 else None
        if arr is None:
            arr = next(
                (np.array(list(a.ints)) for a in node.attribute if a.name == "axes"), np.array([], dtype=np.int64)
            )
        return sorted(int(a) % rank for a in arr.ravel())

    def _shape_const(self, name: str):
        """The constant behind a shape input: itself, or ``c`` of TorchScript's
        ``Where(Equal(c, -1 * ConstantOfShape), ConstantOfShape(1), c)``."""
        if name in self.vectors:  # made by an earlier repair: its entries as written
            return list(self.vectors[name]), name
        arr = self.value_of(name)
        if arr is not None:
            return [int(v) for v in arr.ravel()], name
        node = self.producers.get(name)
        if node is not None and node.op_type == "Where" and len(node.input) == 3:
            c = self.value_of(node.input[2])
            if c is not None:
                return [int(v) for v in c.ravel()], node.input[2]
        return None, None

    # ------------------------------------------------------------------ the sweep

    def _used(self) -> set[str]:
        """The names the main graph's nodes (their subgraphs included) and outputs read."""
        return _graph_reads(self.graph) | {o.name for o in self.graph.output}

    def _sweep(self) -> None:
        """Remove the nodes and initializers the rewrites left unused (nothing else)."""
        changed = True
        while changed:
            changed = False
            used = self._used()
            keep = [n for n in self.graph.node if any(o in used for o in n.output) or n.name in self._orig_dead]
            if len(keep) != len(self.graph.node):
                del self.graph.node[:]
                self.graph.node.extend(keep)
                changed = True
        used = self._used()
        keep_init = [t for t in self.graph.initializer if t.name in used or t.name in self._orig_unused_inits]
        if len(keep_init) != len(self.graph.initializer):
            del self.graph.initializer[:]
            self.graph.initializer.extend(keep_init)


def _graph_reads(g: onnx.GraphProto) -> set[str]:
    out = {i for n in g.node for i in n.input}
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out |= _graph_reads(a.g)
    return out


def _out_dims(t, dshape, allowzero) -> list | None:
    out = []
    for j, v in enumerate(t):
        if v == 0 and not allowzero:
            if j >= len(dshape):
                return None
            out.append(dshape[j])
        else:
            out.append(v)
    if -1 in out:
        known = D.product([v for v in out if v != -1])
        q = D.exact_div(D.product(dshape), known) if known != 0 else None
        if q is None:
            return None
        out[out.index(-1)] = q
    return out


def _align(ds: list[int], ts: list[int]) -> list[tuple[list[int], list[int]]] | None:
    """The minimal groups of equal element count, left to right: ``[(data axes, target axes)]``.
    A trailing run of 1s joins the last group; None when the counts do not meet (a 0 dim)."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    n, m = len(ds), len(ts)
    while i < n or j < m:
        if i >= n or j >= m:
            rest_d, rest_t = ds[i:], ts[j:]
            if groups and all(v == 1 for v in rest_d) and all(v == 1 for v in rest_t):
                groups[-1][0].extend(range(i, n))
                groups[-1][1].extend(range(j, m))
                return groups
            return None
        gi, gj = [i], [j]
        pi, pj = ds[i], ts[j]
        i += 1
        j += 1
        while pi != pj:
            if pi < pj:
                if i >= n:
                    return None
                gi.append(i)
                pi *= ds[i]
                i += 1
            else:
                if j >= m:
                    return None
                gj.append(j)
                pj *= ts[j]
                j += 1
        groups.append((gi, gj))
    return groups
