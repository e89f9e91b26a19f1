"""make-dynamic's proof: after the repairs, the rewritten model is inferred again and must
follow the new symbols with nothing tying them to a size (see :mod:`shapeinfer.passes.make_dynamic`).

:class:`Proof` is a part of the repair loop's class (it reads the loop's facts, shapes and
producers): the checks on what inference leaves open (guards, Gathers at constant or computed
indices, fixed Slices, Ifs on the size, unknown output ranks) and the graph outputs' declared
dims written from what inference proved.
"""

from __future__ import annotations

import numpy as np
import onnx

from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.io.onnxio import graphs_with_paths
from shapeinfer.passes._dynamic_shapes import MakeDynamicError, Refusal
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.intervals import holds_le

#: ops with explicit ``pads`` over the spatial axes of input 0
_PADDED = {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool", "ConvTranspose"}


def _auto_pad(node: onnx.NodeProto) -> bool:
    """Whether the node pads by ``auto_pad`` (the runtime computes the pads at every size)."""
    mode = next((a.s for a in node.attribute if a.name == "auto_pad"), b"NOTSET")
    return mode not in (b"NOTSET", b"")


class Proof:
    """The proof and the outputs' dims, over the repair loop's state (``graph``, ``model``,
    ``result``, ``facts``, ``producers``, ``new``, ``_shape``, ``_dim_new``, ``value_of``)."""

    def _prove(self, result) -> None:
        refusals: list[Refusal] = []
        for kind, a, b, where in result.guard_events:
            # a bound (an index within a table's rows) is the model's own valid range, as the
            # dynamic export has it; an equality ties the symbol to one size: refused. So is a
            # bound the old size sits on (batch <= 2 exported at batch 2): a size baked in, not
            # a table's rows (a model exported at its table's full length is refused too)
            new = D.symbols(a) & self.new or D.symbols(b) & self.new
            if kind in ("broadcast", "equality") and new:
                refusals.append(Refusal(where, f"holds only where {D.format(a)} == {D.format(b)}"))
            elif kind == "bound" and new and self._eval(a) is not None and self._eval(a) == self._eval(b):
                refusals.append(Refusal(where, f"holds only where {D.format(a)} <= {D.format(b)}, the old size"))
        data = self._data_derived()
        sized = self._size_derived()
        for i, node in enumerate(self.graph.node):
            nname = node.name or f"{node.op_type} #{i}"
            if node.op_type in ("Gather", "GatherElements", "GatherND"):
                ds = self._shape(node.input[0])
                ga = next((a.i for a in node.attribute if a.name == "axis"), 0)
                if ds is None or not ds or node.input[1] in data:
                    continue  # indices read from the inputs' data: the runtime's to check
                axes = range(len(ds)) if node.op_type == "GatherND" else [ga % len(ds)]
                why = None
                if node.op_type == "Gather" and node.input[1] in sized:
                    why = self._gather_from_shapes(node.input[1], ds[axes[0]])
                elif any(self._dim_new(ds[a]) for a in axes):
                    ishape = self._shape(node.input[1])
                    if ishape is None or any(self._dim_new(d) or d != 1 for d in ishape) or node.op_type != "Gather":
                        why = "reads an axis that follows the size at indices made from constants (fixed at export)"
                if why is not None:
                    refusals.append(Refusal(nname, why))
            elif node.op_type == "Slice":
                ds, os_ = self._shape(node.input[0]), self._shape(node.output[0])
                if ds is not None and os_ is not None and len(ds) == len(os_):
                    for a, (x, y) in enumerate(zip(ds, os_, strict=True)):
                        if self._dim_new(x) and not self._dim_new(y) and y != x:
                            refusals.append(
                                Refusal(nname, f"cuts a fixed {D.format(y)} out of axis {a} ({D.format(x)})")
                            )
            elif node.op_type == "If":
                cond = node.input[0]
                if cond in self._size_derived():
                    refusals.append(Refusal(nname, "a branch taken on a value that follows the size"))
            elif node.op_type in _PADDED and not _auto_pad(node):
                refusals += self._padded_for_the_old_size(node, nname)
            elif node.op_type == "Resize":
                ds, os_ = self._shape(node.input[0]), self._shape(node.output[0])
                if ds is not None and os_ is not None and len(ds) == len(os_):
                    for a, (x, y) in enumerate(zip(ds, os_, strict=True)):
                        if self._dim_new(x) and self._open(y):
                            why = f"resizes axis {a} ({D.format(x)}) to a size not told (a size exported as a scale?)"
                            refusals.append(Refusal(nname, why))
        for o in self.graph.output:
            if self.result.facts.get(o.name) is None or self.result.facts[o.name].shape is None:
                refusals.append(Refusal(o.name, "output rank unknown after the rewrite: nothing proved"))
            else:
                refusals += self._axes_that_took_the_size(o)
        if refusals:
            raise MakeDynamicError(refusals)
        self._write_outputs()
        self._refresh_declared()

    def _padded_for_the_old_size(self, node: onnx.NodeProto, nname: str) -> list[Refusal]:
        """A Conv's or pool's explicit pads that differ at the two ends of an axis that follows
        the size: the signature of 'same' padding computed for the old size (tf2onnx writes
        ``[0, 1]`` for a stride of 2 at an even size). Kept, they pad other sizes otherwise than
        'same' would (another output size at an odd one, shifted values), and nothing in the
        model says which was meant."""
        pads = next((list(a.ints) for a in node.attribute if a.name == "pads"), None)
        ds = self._shape(node.input[0]) if node.input else None
        if not pads or ds is None or len(pads) % 2:
            return []
        n = len(pads) // 2
        out = []
        for i in range(n):
            if 2 + i < len(ds) and self._dim_new(ds[2 + i]) and pads[i] != pads[i + n]:
                out.append(
                    Refusal(
                        nname,
                        f"pads ({pads[i]}, {pads[i + n]}) of axis {2 + i} ({D.format(ds[2 + i])}) differ: "
                        "computed for the old size ('same' padding?); export with dynamic axes",
                    )
                )
        return out

    def _axes_that_took_the_size(self, o: onnx.ValueInfoProto) -> list[Refusal]:
        """A graph output axis the input declared as one of the inputs' own symbols (``batch``)
        that now follows a new symbol too: the new size went into an axis that did not hold it
        (a ``Reshape(x, [-1, C, 1, 1])`` of a map that was 1x1 at the old size moves the map's
        positions into the batch: one image gives several rows)."""
        f = self.result.facts[o.name]
        dims = o.type.tensor_type.shape.dim
        if len(dims) != len(f.shape):
            return []
        own = {d.dim_param for vi in self.graph.input for d in vi.type.tensor_type.shape.dim} - self.new
        out = []
        for k, (d, e) in enumerate(zip(dims, f.shape, strict=True)):
            if d.dim_param and d.dim_param in own and e != D.sym(d.dim_param) and self._dim_new(e):
                out.append(
                    Refusal(
                        o.name,
                        f"axis {k} was {d.dim_param}; made dynamic it is {D.format(e)}: "
                        "the new size went into an axis that did not hold it",
                    )
                )
        return out

    def _data_derived(self) -> set[str]:
        """Tensors computed from graph input data (not only from shapes and constants)."""
        out = {i.name for i in self.graph.input} - {t.name for t in self.graph.initializer}
        for node in self.graph.node:
            if node.op_type in ("Shape", "Size"):
                continue
            if any(i in out for i in node.input if i):
                out.update(node.output)
        return out

    def _gather_from_shapes(self, name: str, dim: D.Dim) -> str | None:
        """Why a Gather along an axis of ``dim`` at indices ``name`` computed from the shapes (and
        maybe constants) is
        not proved to read what it read at the old size, at every size; None when it is: every
        index is proved within ``[0, dim)`` (:meth:`_value_range`), and when the axis follows the
        size and the indices are more than one, they span it (``0`` to ``dim - 1``, as
        ``mask.flatten()[b * seq + s]`` does; ``[0, seq)`` of a ``batch*seq`` axis is the first
        row's mask for every row: the batch offsets were folded)."""
        r = self._value_range(name, 0)
        if r is None:
            return "indices computed from the shapes whose values are not told"
        ishape = self._shape(name)
        single = ishape is not None and all(d == 1 for d in ishape)
        if self._dim_new(dim) and not single:
            if r[0] == 0 and D.compare(r[1], D.sub(dim, 1)) == 0:
                return None
            return (
                f"indices {D.format(r[0])}..{D.format(r[1])} read part of an axis of {D.format(dim)}: "
                "offsets folded at the old size (a batch of 1?) cannot be told from constants"
            )
        # the bounds inference found are the model's own range (a table's rows), as the twin's
        ranges = self.result.ranges()
        if holds_le(0, r[0], ranges) and holds_le(r[1], D.sub(dim, 1), ranges):
            return None
        return f"indices {D.format(r[0])}..{D.format(r[1])} not proved within the axis of {D.format(dim)}"

    def _value_range(self, name: str, depth: int) -> tuple[D.Dim, D.Dim] | None:
        """``(lo, hi)`` of an integer tensor's values as expressions in the symbols, from the
        facts' known values, ``Range(start, limit, 1)``, ``Add``, ``Mul`` of non-negative
        ranges and the ops that move values; None where it cannot be told."""
        f = self.facts.get(name)
        if f is not None and f.value is not None and len(f.value) >= 1:
            vals = list(f.value)
            if all(type(v) is int for v in vals):
                return min(vals), max(vals)
            if len(vals) == 1 and vals[0] is not None and not isinstance(vals[0], float):
                return vals[0], vals[0]
        node = self.producers.get(name)
        if node is None or node.op_type == "Constant":
            arr = self.value_of(name)
            if arr is None or arr.size == 0 or arr.dtype.kind not in "iu":
                return None
            return int(arr.min()), int(arr.max())
        op = node.op_type
        if depth > 64:
            return None
        # ops whose output values are some of input 0's values
        if op in ("Reshape", "Unsqueeze", "Squeeze", "Identity", "Expand", "Transpose", "Flatten", "Slice", "Tile"):
            return self._value_range(node.input[0], depth + 1)
        if op in ("Gather", "GatherElements", "GatherND") and f is not None and f.dtype in INT_TYPES:
            return self._value_range(node.input[0], depth + 1)
        if op == "ConstantOfShape":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            arr = onnx.numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
            return (int(arr.ravel()[0]),) * 2 if arr.size == 1 and arr.dtype.kind in "iu" else None
        if op == "Cast" and f is not None and f.dtype in INT_TYPES:
            return self._value_range(node.input[0], depth + 1)
        ins = [self._value_range(i, depth + 1) if i else None for i in node.input]
        if op == "Range" and len(ins) == 3 and None not in ins:
            (s0, s1), (_l0, l1), (d0, d1) = ins
            if s0 != s1 or d0 != 1 or d1 != 1:
                return None
            return s0, D.sub(l1, 1)
        if op in ("Add", "Mul") and len(ins) == 2 and None not in ins:
            (a0, a1), (b0, b1) = ins
            if op == "Add":
                return D.add(a0, b0), D.add(a1, b1)
            if holds_le(0, a0) and holds_le(0, b0):
                return D.mul(a0, b0), D.mul(a1, b1)
        return None

    def _size_derived(self) -> set[str]:
        out: set[str] = set()
        for node in self.graph.node:
            if node.op_type in ("Shape", "Size") or any(i in out for i in node.input if i):
                out.update(node.output)
        return out

    def _refresh_declared(self) -> None:
        """The types the model declares of its tensors (``value_info`` in every graph, the
        outputs of If branches): a static dim the rewrite made follow the new symbols is written
        as the expression inference proves, or left unknown when that has other symbols too.
        (Left as they were, an export's ``[1, 128]`` would claim the old size at every size.)"""
        for path, g in graphs_with_paths(self.graph):
            facts = self.result.graph_facts.get(path) or {}
            # a Loop or Scan body's outputs keep their types: onnxruntime shapes the scan
            # outputs of a loop that runs no iteration from them ([0, 0, 8], not [0, 0, 0])
            body = path.endswith(".body")
            declared = list(g.value_info) if path == "main" or body else [*g.value_info, *g.output]
            for vi in declared:
                f = facts.get(vi.name)
                tt = vi.type.tensor_type
                if f is None or f.shape is None or not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
                    continue
                if len(tt.shape.dim) != len(f.shape):
                    continue
                for d, e in zip(tt.shape.dim, f.shape, strict=True):
                    if d.HasField("dim_value") and (self._dim_new(e) or self._open(e)):
                        d.Clear()
                        if all(s in self.new for s in D.symbols(e)):
                            d.dim_param = D.format(e)

    def _write_outputs(self) -> None:
        """The graph outputs' declared dims: the proved expressions where they follow the size."""
        for o in self.graph.output:
            f = self.result.facts.get(o.name)
            if f is None or f.shape is None or not o.type.tensor_type.HasField("shape"):
                continue
            dims = o.type.tensor_type.shape.dim
            if len(dims) != len(f.shape):
                continue
            for d, e in zip(dims, f.shape, strict=True):
                if self._dim_new(e) and all(s in self.new for s in D.symbols(e)):
                    d.Clear()
                    d.dim_param = D.format(e)
                elif d.HasField("dim_value") and self._open(e):
                    d.Clear()  # a size of the old run inference does not prove: unknown

    def _open(self, e: D.Dim) -> bool:
        """Whether dim ``e`` holds a size inference does not know (a fresh symbol): a number
        declared there at the old size is not proved at the new ones."""
        return type(e) is not int and not D.symbols(e) <= self.result.input_symbols
