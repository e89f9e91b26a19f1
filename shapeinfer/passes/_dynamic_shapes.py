"""The shape computations make-dynamic writes: each rewritten dim a computation from the
graph inputs (one ``Shape`` per input that declares a symbol, ``Gather`` of the axis,
``Mul``/``Add``/``Div``/``Min``/``Max`` for the expression, ``Concat`` for a vector), built once
and shared, put at the head of the main graph (they read graph inputs and constants only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from shapeinfer.io.external import ExternalDataError, tensor_array
from shapeinfer.symbolic import dims as D

#: the prefix of every name make-dynamic creates
PREFIX = "make_dynamic"


@dataclass(frozen=True)
class Refusal:
    """One node that cannot be made to follow the size: its name and why."""

    node: str
    why: str

    def __str__(self) -> str:
        return f"{self.node}: {self.why}"


class MakeDynamicError(Exception):
    """The model cannot be made dynamic as asked: :attr:`refusals` names each node and why."""

    def __init__(self, refusals: list[Refusal]) -> None:
        self.refusals = refusals
        super().__init__("; ".join(str(r) for r in refusals))


class Refused(Exception):
    def __init__(self, node: str, why: str) -> None:
        super().__init__(why)
        self.refusal = Refusal(node, why)


def const_array(model: onnx.ModelProto, name: str, producers: dict, base_dir: str | None = None) -> np.ndarray | None:
    """The value of ``name`` when an initializer or a Constant node of ``model`` holds it (an
    initializer stored as external data read from ``base_dir``, the model's folder, when it is
    small and readable); None otherwise."""
    for t in model.graph.initializer:
        if t.name == name:
            return _value(t, base_dir)
    node = producers.get(name)
    if node is not None and node.op_type == "Constant":
        for a in node.attribute:
            if a.name == "value":
                return _value(a.t, base_dir)
            if a.name == "value_ints":
                return np.array(list(a.ints), dtype=np.int64)
            if a.name == "value_int":
                return np.array(a.i, dtype=np.int64)
    return None


def _value(t: onnx.TensorProto, base_dir: str | None) -> np.ndarray | None:
    try:  # (a shape constant is small: external weights are above the cap and never read)
        return tensor_array(t, base_dir)
    except ExternalDataError:
        return None


class ShapeBuilder:
    """Builds shape computations into ``model``'s main graph (:meth:`flush` puts them in)."""

    def __init__(self, model: onnx.ModelProto, old: dict[str, int], base_dir: str | None = None) -> None:
        self.model = model
        self.base_dir = base_dir  # the model's folder: its external data
        self.graph = model.graph
        self.old = old
        self.new = frozenset(old)
        self.roots: dict[str, str] = {}  # symbol -> 1-D tensor of its value
        self.cache: dict[object, str] = {}
        self.head: list[onnx.NodeProto] = []  # nodes to put at the graph's head
        self.flushed = 0  # nodes at the graph's head put there by earlier flushes
        self.vectors: dict[str, list] = {}  # shape vector made -> its entries (ints, expressions)
        self.names = {o for n in self.graph.node for o in n.output} | {t.name for t in self.graph.initializer}
        self.names |= {i.name for i in self.graph.input}
        self.node_names = {n.name for n in self.graph.node}
        self.counter = 0

    def value_of(self, name: str) -> np.ndarray | None:
        """:func:`const_array` of ``name`` in this model (``self.producers``: its nodes by output)."""
        return const_array(self.model, name, self.producers, self.base_dir)

    def _fresh(self, base: str) -> str:
        while True:
            self.counter += 1
            name = f"{PREFIX}/{base}_{self.counter}"
            if name not in self.names and name not in self.node_names:
                self.names.add(name)
                return name

    def _const(self, values, dtype=np.int64) -> str:
        arr = np.array(values, dtype=dtype)
        key = ("const", arr.shape, tuple(arr.ravel().tolist()), arr.dtype.str)
        if key not in self.cache:
            name = self._fresh("const")
            self.graph.initializer.append(numpy_helper.from_array(arr, name))
            self.cache[key] = name
        return self.cache[key]

    def _node(self, op: str, inputs: list[str], base: str, **attrs) -> str:
        out = self._fresh(base)
        self.head.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def _root(self, symbol: str) -> str:
        """A 1-D int64 tensor [value of ``symbol``]: Gather of the Shape of the first graph input
        that declares it (one Shape per input)."""
        if symbol in self.roots:
            return self.roots[symbol]
        for vi in self.graph.input:
            for a, d in enumerate(vi.type.tensor_type.shape.dim):
                if d.dim_param == symbol:
                    skey = ("shape", vi.name)
                    if skey not in self.cache:
                        self.cache[skey] = self._node("Shape", [vi.name], "shape")
                    g = self._node("Gather", [self.cache[skey], self._const([a])], symbol, axis=0)
                    self.roots[symbol] = g
                    return g
        raise Refused("<model>", f"no graph input declares {symbol}")

    def _expr(self, e: D.Dim, where: str) -> str:
        """A 1-D int64 tensor of one element, the value of ``e``."""
        if isinstance(e, int):
            return self._const([e])
        key = ("expr", e)
        if key in self.cache:
            return self.cache[key]
        total = None
        for mono, coeff in e.terms:
            factors = [self._atom(a, where) for a in mono]
            t = factors[0] if factors else self._const([coeff])
            for f in factors[1:]:
                t = self._node("Mul", [t, f], "mul")
            if factors and coeff != 1:
                t = self._node("Mul", [t, self._const([coeff])], "mul")
            total = t if total is None else self._node("Add", [total, t], "add")
        self.cache[key] = total
        return total

    def _atom(self, atom, where: str) -> str:
        if atom.kind == "sym":
            if atom.name not in self.new:
                raise Refused(where, f"the size follows {atom.name}, which is no symbol asked for")
            return self._root(atom.name)
        if atom.kind == "floordiv" and len(atom.args) == 2:
            return self._node("Div", [self._expr(atom.args[0], where), self._expr(atom.args[1], where)], "div")
        if atom.kind in ("min", "max"):
            op = "Min" if atom.kind == "min" else "Max"
            return self._node(op, [self._expr(a, where) for a in atom.args], atom.kind)
        raise Refused(where, f"cannot compute {atom!r} from shapes")

    def _vector(self, entries: list, where: str) -> str:
        """A 1-D int64 tensor of ``entries`` (ints and expressions); :attr:`vectors` keeps what
        it holds, so a later repair of the same shape input reads the entries back."""
        out = self._made_vector(entries, where)
        self.vectors[out] = list(entries)
        return out

    def _made_vector(self, entries: list, where: str) -> str:
        if all(isinstance(e, int) for e in entries):
            return self._const(entries)
        parts: list[str] = []
        run: list[int] = []
        for e in entries:
            if isinstance(e, int):
                run.append(e)
                continue
            if run:
                parts.append(self._const(run))
                run = []
            parts.append(self._expr(e, where))
        if run:
            parts.append(self._const(run))
        return parts[0] if len(parts) == 1 else self._node("Concat", parts, "shape_of", axis=0)

    def _scalar(self, e: D.Dim, where: str, dtype) -> str:
        t = self._node("Squeeze", [self._expr(e, where), self._const([0])], "scalar")
        if np.dtype(dtype) != np.int64:
            t = self._node("Cast", [t], "cast", to=int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))
        return t

    def _arange(self, arr: np.ndarray, axis: int, expr: D.Dim) -> str | None:
        """A tensor computing ``arr`` at every size, or None. ``arr`` is regenerated when it is
        an integer arange along ``axis`` (constant along the others, which must be 1): position
        ids; or a float table that is, bit for bit, that arange times a vector of its own dtype
        along the other axes (``arange(n)[:, None] * f``, the angles of a rotary embedding: row 1
        is ``f``, and each entry is one correctly rounded product, so the table at any size is
        ``Range`` cast to the dtype times ``f``)."""
        if axis >= arr.ndim:
            return None
        if arr.dtype.kind in "iu":
            if any(n != 1 for i, n in enumerate(arr.shape) if i != axis):
                return None
            if not np.array_equal(arr.ravel(), np.arange(arr.shape[axis])):
                return None
            return self._positions(arr.ndim, axis, expr, arr.dtype)
        if arr.dtype.kind != "f" or arr.shape[axis] < 2:
            return None
        shape = [1] * arr.ndim
        shape[axis] = -1
        steps = (
            np.arange(arr.shape[axis])
            .astype(arr.dtype)
            .reshape([arr.shape[axis] if k == axis else 1 for k in range(arr.ndim)])
        )
        f = np.take(arr, [1], axis=axis)
        with np.errstate(all="ignore"):
            if not np.array_equal(steps * f, arr) or not np.all(np.isfinite(arr)):
                return None
        positions = self._positions(arr.ndim, axis, expr, arr.dtype)
        return self._node("Mul", [positions, self._const(f, arr.dtype)], "angles")

    def _positions(self, ndim: int, axis: int, expr: D.Dim, dtype) -> str:
        """``0 .. expr-1`` along ``axis`` of a rank-``ndim`` tensor of 1s elsewhere, of ``dtype``."""
        r = self._node(
            "Range",
            [self._const(0, np.int64), self._scalar(expr, "arange", np.int64), self._const(1, np.int64)],
            "range",
        )
        shape = [1] * ndim
        shape[axis] = -1
        r = self._node("Reshape", [r, self._const(shape)], "positions")
        if np.dtype(dtype) != np.int64:
            r = self._node("Cast", [r], "cast", to=int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))
        return r

    def _set_input(self, node: onnx.NodeProto, k: int, name: str) -> None:
        node.input[k] = name

    def flush(self) -> None:
        """Put the new nodes at the graph's head, after those put there before, in the order
        they were made (they read graph inputs, constants and each other only)."""
        if not self.head:
            return
        nodes = list(self.graph.node)
        nodes[self.flushed : self.flushed] = self.head
        self.flushed += len(self.head)
        self.head = []
        del self.graph.node[:]
        self.graph.node.extend(nodes)
