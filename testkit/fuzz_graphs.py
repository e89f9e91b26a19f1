"""Differential fuzzing of shape inference against onnxruntime: graphs, bindings, checks.

:func:`cases` is a hypothesis strategy of :class:`Case`: a random ONNX model built from
shape-computation and layout ops (Shape with start/end, Gather, Slice, Concat, Unsqueeze,
Squeeze, Reshape with 0 / -1 / allowzero, Expand, Transpose, Flatten, MatMul, broadcasting
Add / Mul, Range, ConstantOfShape, Where) over graph inputs with symbolic dims (``a``, ``b``,
``c``, some unnamed, some static), together with 2-3 positive bindings of the symbols.

Validity by construction: the generator keeps its own model of every tensor's dims and int
values (:class:`G`, a polynomial over the symbols or an opaque function of the binding with a
known lower bound), and only emits a node when it is valid for *every* positive binding —
broadcasting only between dims that are structurally equal or a static 1, Reshape targets
that regroup the input's dims (spelled from ``Shape`` outputs and constants, 0 only where it
copies the same dim, -1 only where the other dims can never be 0), Gather indices inside the
axis' lower bound, and so on. There is therefore nothing to filter: a model onnxruntime
rejects is reported as a failure (kind ``"ort"``), never discarded. The only discards are
draws that produced no node at all (counted in :data:`STATS`).

:func:`check_case` runs the model in onnxruntime at each binding (graph optimisations off,
every node output exposed) and compares each tensor's actual shape (and element type, and
the int values inference tracked) with ``shapeinfer.infer``'s facts evaluated at the binding.
A dim holding a fresh symbol is *unresolved* (counted, allowed); a wrong int, a wrong rank, a
wrong evaluated expression, a wrong tracked value or an error diagnostic is a failure. The same
holds for ``shapeinfer.infer(model, bind=first binding)``. It then runs ``shapeinfer.optimize``
(symbolic, and specialised to the first binding) and requires the optimized models to pass
``onnx.checker`` (full check) and to give the same outputs as the original. The generator's
own dims and values are held against onnxruntime too (kind ``"generator"``: a bug of the
fuzzer, not of shapeinfer).

Open bugs it keeps finding are listed in :data:`KNOWN_ISSUES` (each tied to a strict xfail
regression test) and counted apart, so that they do not hide new failures.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import onnx
from hypothesis import assume
from hypothesis import strategies as st
from onnx import TensorProto, helper

from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

#: Opsets the generator targets (the first is what hypothesis shrinks towards).
OPSETS = (17, 21, 13, 23, 11)

#: Symbols of the graph inputs' named dims; bindings give each a value in ``BIND_RANGE``.
SYMBOLS = ("a", "b", "c")
BIND_RANGE = (1, 6)

#: Largest tensor (elements, at the largest binding) the generator lets a node produce.
MAX_ELEMENTS = 20_000

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

#: Slice bounds: small ones, ones past any dim, and the int64 / int32 extremes exporters use.
SLICE_BOUNDS = (0, 1, 2, -1, -2, 3, -3, 1000, -1000, INT64_MAX, INT64_MIN, 2**31 - 1, -(2**31))
SLICE_STEPS = (1, 2, -1, -2, 3)

#: onnxruntime's kernel reads an end of INT32_MAX / INT64_MAX with a negative step as "through
#: index 0" (microsoft/onnxruntime#11107), where the spec (and onnx's shape inference, which
#: onnxruntime also runs when it loads a model) clamps it to ``dim - 1``. A graph built on one
#: reading is invalid under the other, so the generator never uses these ends with a negative
#: step (``slice_ends``); ``_py_slice_len`` still models the kernel for completeness.
ORT_REVERSE_END_QUIRK = (2**31 - 1, INT64_MAX)


def slice_ends(step: int) -> tuple[int, ...]:
    """The end bounds the generator uses with ``step``."""
    return SLICE_BOUNDS if step > 0 else tuple(b for b in SLICE_BOUNDS if b not in ORT_REVERSE_END_QUIRK)


# ---------------------------------------------------------------------------- generator dims


class G:
    """The generator's own view of a dim or an int value (independent of shapeinfer.symbolic.dims).

    Either an integer polynomial over the symbols (``poly``: sorted ``(monomial, coeff)`` pairs,
    a monomial a sorted tuple of symbol names) or an opaque function of the binding (slice and
    range lengths). ``key`` is structural: two G with equal keys are equal at every binding;
    different keys prove nothing, so the generator treats them as different. ``lo`` is a lower
    bound valid at every positive binding (None when unknown).
    """

    __slots__ = ("fn", "key", "lo", "poly")

    def __init__(self, poly: tuple | None = None, fn: Callable | None = None, key: Any = None, lo: int | None = None):
        self.poly = poly
        self.fn = fn
        if poly is not None:
            self.key = ("p", poly)
            self.lo = _poly_lo(poly)
        else:
            self.key = key
            self.lo = lo

    def __eq__(self, other: object) -> bool:
        return isinstance(other, G) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"G({self.text()})"

    @property
    def static(self) -> int | None:
        """The value when it is the same at every binding (a constant polynomial)."""
        if self.poly is None:
            return None
        if not self.poly:
            return 0
        if len(self.poly) == 1 and self.poly[0][0] == ():
            return self.poly[0][1]
        return None

    @property
    def symbol(self) -> str | None:
        """The symbol name when this is exactly one symbol."""
        if self.poly is not None and len(self.poly) == 1:
            mono, c = self.poly[0]
            if c == 1 and len(mono) == 1:
                return mono[0]
        return None

    def ev(self, binding: Mapping[str, int]) -> int:
        """The value at ``binding``."""
        if self.poly is None:
            return self.fn(binding)
        total = 0
        for mono, c in self.poly:
            v = c
            for s in mono:
                v *= binding[s]
            total += v
        return total

    def text(self) -> str:
        """Python syntax for a polynomial (``2*a + 1``, ``a*b``)."""
        if self.poly is None:
            return f"opaque{self.key!r}"
        if not self.poly:
            return "0"
        parts = []
        for mono, c in sorted(self.poly, key=lambda mc: (-len(mc[0]), mc[0])):
            m = "*".join(mono)
            parts.append(str(c) if not m else m if c == 1 else f"{c}*{m}")
        return " + ".join(parts).replace("+ -", "- ")


def _poly_lo(poly: tuple) -> int | None:
    # Non-negative coefficients on every non-constant monomial: nondecreasing in each symbol,
    # so the smallest value is at all symbols = 1.
    if any(c < 0 for mono, c in poly if mono):
        return None
    return sum(c for _, c in poly)


def _make_poly(terms: dict) -> G:
    return G(poly=tuple(sorted((m, c) for m, c in terms.items() if c)))


def gconst(n: int) -> G:
    return _make_poly({(): n})


def gsym(name: str) -> G:
    return _make_poly({(name,): 1})


def _opaque(key: Any, fn: Callable, lo: int | None) -> G:
    return G(fn=fn, key=key, lo=lo)


def gadd(a: G, b: G) -> G:
    if a.poly is not None and b.poly is not None:
        t: dict = {}
        for m, c in a.poly + b.poly:
            t[m] = t.get(m, 0) + c
        return _make_poly(t)
    lo = a.lo + b.lo if a.lo is not None and b.lo is not None else None
    key = ("+", *sorted((a.key, b.key), key=repr))
    return _opaque(key, lambda bd: a.ev(bd) + b.ev(bd), lo)


def gmul(a: G, b: G) -> G:
    if a.poly is not None and b.poly is not None:
        t: dict = {}
        for (m1, c1), (m2, c2) in itertools.product(a.poly, b.poly):
            m = tuple(sorted(m1 + m2))
            t[m] = t.get(m, 0) + c1 * c2
        return _make_poly(t)
    lo = a.lo * b.lo if a.lo is not None and b.lo is not None and a.lo >= 0 and b.lo >= 0 else None
    key = ("*", *sorted((a.key, b.key), key=repr))
    return _opaque(key, lambda bd: a.ev(bd) * b.ev(bd), lo)


def gsub(a: G, b: G) -> G:
    return gadd(a, gmul(gconst(-1), b))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def gdiv(a: G, b: G) -> G:
    """ONNX integer Div (truncating toward zero): exact on polynomials when every term divides."""
    if a.static is not None and b.static is not None:
        return gconst(_trunc_div(a.static, b.static))
    if a.poly is not None and b.poly is not None and len(b.poly) == 1:
        (bm, bc), out = b.poly[0], {}
        for m, c in a.poly:
            rest = list(m)
            ok = c % bc == 0
            for sym in bm:
                if sym in rest:
                    rest.remove(sym)
                else:
                    ok = False
            if not ok:
                break
            out[tuple(rest)] = c // bc
        else:
            return _make_poly(out)
    return _opaque(("/", a.key, b.key), lambda bd: _trunc_div(a.ev(bd), b.ev(bd)), None)


def gprod(ds: Sequence[G]) -> G:
    out = gconst(1)
    for d in ds:
        out = gmul(out, d)
    return out


def _py_slice_len(d: int, s: int, e: int, k: int) -> int:
    """ONNX Slice's length as onnxruntime computes it: negative bounds get ``d`` added, then
    for ``k > 0`` both clamp to ``[0, d]``; for ``k < 0`` start to ``[0, d-1]``, end to
    ``[-1, d-1]`` (see ``ORT_REVERSE_END_QUIRK``). Unlike Python, a start below ``-d`` with a
    negative step takes element 0."""
    if d <= 0:
        return 0
    quirk = k < 0 and e in ORT_REVERSE_END_QUIRK
    s = s + d if s < 0 else s
    e = e + d if e < 0 else e
    if k > 0:
        s, e = min(max(s, 0), d), min(max(e, 0), d)
    else:
        s, e = min(max(s, 0), d - 1), -1 if quirk else min(max(e, -1), d - 1)
    return len(range(s, e, k))


def _slice_indices(d: int, s: int, e: int, k: int) -> range:
    n = _py_slice_len(d, s, e, k)
    if n == 0:
        return range(0)
    first = min(max(s + d if s < 0 else s, 0), d if k > 0 else d - 1)
    return range(first, first + n * k, k)


def gslice_len(d: G, s: G, e: G, k: int) -> G:
    """The length of ``range(d)[s:e:k]`` (ONNX clamping)."""
    ss, es, ds = s.static, e.static, d.static
    if ss is not None and es is not None:
        if ds is not None:
            return gconst(_py_slice_len(ds, ss, es, k))
        big = 2**31 - 1
        if k == 1 and (ss == 0 or ss <= -big) and es >= big:
            return d
        if k == -1 and (ss == -1 or ss >= big) and es <= -big:
            return d
        # Past a few dozen, the length is monotone in d for these small bounds (and +-1000 or
        # the extremes act as "past the end" for every dim a test binding produces).
        lo = min(_py_slice_len(n, ss, es, k) for n in range(max(d.lo or 0, 0), 48))
    else:
        lo = 0
    return _opaque(
        ("slice", d.key, s.key, e.key, k), lambda bd: _py_slice_len(d.ev(bd), s.ev(bd), e.ev(bd), k), max(lo, 0)
    )


def grange_len(start: G, limit: G, delta: int) -> G:
    """``max(ceil((limit - start) / delta), 0)``."""
    if start.static is not None and limit.static is not None:
        return gconst(max(-((start.static - limit.static) // delta), 0))
    if start.static == 0 and delta == 1 and limit.lo is not None and limit.lo >= 0:
        return limit
    return _opaque(
        ("range", start.key, limit.key, delta),
        lambda bd: max(-((start.ev(bd) - limit.ev(bd)) // delta), 0),
        0,
    )


def _static(shape: Sequence[G]) -> tuple[int, ...] | None:
    """The ints of a shape whose every dim is static, else None."""
    out = tuple(d.static for d in shape)
    return None if any(v is None for v in out) else out


def _vals_index(shape: Sequence[G]) -> range:
    n = 1
    for d in _static(shape):
        n *= d
    return range(n)


def moved(x: T, fn: Callable[[np.ndarray], np.ndarray]) -> tuple[G, ...] | None:
    """Values of an op that only moves ``x``'s elements: ``fn`` maps x's index array to the output's."""
    shp = _static(x.shape)
    if x.vals is None or shp is None:
        return None
    out = np.asarray(fn(np.arange(len(x.vals), dtype=np.int64).reshape(shp)))
    if out.size > 64:
        return None
    return tuple(x.vals[i] for i in out.reshape(-1).tolist())


def _concat_vals(parts: Sequence[T], axis: int) -> tuple[G, ...] | None:
    if any(p.vals is None or _static(p.shape) is None for p in parts):
        return None
    flat: list[G] = []
    arrays = []
    for p in parts:
        arrays.append(np.arange(len(flat), len(flat) + len(p.vals), dtype=np.int64).reshape(_static(p.shape)))
        flat.extend(p.vals)
    out = np.concatenate(arrays, axis=axis)
    return None if out.size > 64 else tuple(flat[i] for i in out.reshape(-1).tolist())


def _elementwise_vals(fn: Callable[[G, G], G], parts: Sequence[T], out: Sequence[G]) -> tuple[G, ...] | None:
    shp = _static(out)
    if shp is None or any(p.vals is None or _static(p.shape) is None for p in parts):
        return None
    idx = [np.broadcast_to(np.arange(len(p.vals)).reshape(_static(p.shape)), shp).reshape(-1) for p in parts]
    if idx[0].size > 64:
        return None
    a, b = parts
    return tuple(fn(a.vals[i], b.vals[j]) for i, j in zip(idx[0].tolist(), idx[1].tolist()))


def nameable(d: G) -> bool:
    """A dim a graph input can declare: static, or a positive polynomial (dim_param text)."""
    return d.static is not None or (d.poly is not None and d.lo is not None and d.lo >= 1)


def eval_dim_param(text: str, binding: Mapping[str, int]) -> int:
    """The value of dim_param text written by :meth:`G.text` (``2*a + 1``) at ``binding``."""
    import ast

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Name):
            return binding[n.id]
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = ev(n.left), ev(n.right)
            return a + b if isinstance(n.op, ast.Add) else a - b if isinstance(n.op, ast.Sub) else a * b
        raise ValueError(f"not a dim expression: {text!r}")

    return ev(ast.parse(text, mode="eval"))


def _nonempty(d: G) -> bool:
    return d.lo is not None and d.lo >= 1


def max_binding(symbols: Sequence[str]) -> dict[str, int]:
    return dict.fromkeys(symbols, BIND_RANGE[1])


# ---------------------------------------------------------------------------- graph builder


@dataclass
class T:
    """A tensor the builder made: name, element type, dims, and int values when known.

    ``vals`` (flattened, row-major) is set for int64 tensors of static shape whose every value
    the generator knows as a :class:`G`. ``bound`` is set for int64 index tensors whose values
    all lie in ``[0, bound)``.
    """

    name: str
    dtype: int
    shape: tuple[G, ...]
    vals: tuple[G, ...] | None = None
    bound: G | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


class Builder:
    """Builds one random valid model from hypothesis draws (``draw`` of a composite strategy)."""

    def __init__(self, draw: Callable, opset: int) -> None:
        self.draw = draw
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.pool: list[T] = []  # float data tensors and int64 tensors with known values
        self.symbols: list[str] = []
        self.n = 0
        self.shape_cache: dict[str, T] = {}

    # ---- random choices (index 0 is what hypothesis shrinks towards)
    def int_(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, seq: Sequence):
        return seq[self.int_(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.int_(0, 99) < percent

    def fresh_name(self, prefix: str = "t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    # ---- emission
    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs) -> list[str]:
        outs = [self.fresh_name() for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=f"n{len(self.nodes)}_{op}", **attrs))
        return outs

    def add(self, t: T) -> T:
        self.pool.append(t)
        return t

    def const_ints(
        self, values: Sequence[int], shape: Sequence[int] | None = None, dtype: int = TensorProto.INT64
    ) -> T:
        """An int64 (or ``dtype``) constant: an initializer or a Constant node."""
        shape = (len(values),) if shape is None else tuple(shape)
        arr = np.array(values, dtype=helper.tensor_dtype_to_np_dtype(dtype)).reshape(shape)
        if self.chance(50):
            name = self.fresh_name("c")
            self.inits.append(onnx.numpy_helper.from_array(arr, name))
        else:
            (name,) = self.node("Constant", [], value=onnx.numpy_helper.from_array(arr, "value"))
        return T(name, dtype, tuple(gconst(s) for s in shape), tuple(gconst(int(v)) for v in values))

    def const_float(self, value: float, shape: Sequence[int] = ()) -> T:
        arr = np.full(tuple(shape), value, dtype=np.float32)
        name = self.fresh_name("c")
        self.inits.append(onnx.numpy_helper.from_array(arr, name))
        return T(name, TensorProto.FLOAT, tuple(gconst(s) for s in shape))

    def new_input(self, dims: Sequence[G | str], dtype: int = TensorProto.FLOAT) -> T:
        """A graph input; ``dims`` are :func:`nameable` G (a polynomial is written as dim_param
        text, which shapeinfer reads as an expression), or ``"?"`` for an unnamed dim."""
        name = f"x{len(self.inputs)}"
        spelled: list[Any] = []
        shape: list[G] = []
        for axis, d in enumerate(dims):
            if d == "?":
                s = f"{name}_d{axis}"  # shapeinfer's name for an open dim
                spelled.append(None)
                shape.append(gsym(s))
                if s not in self.symbols:
                    self.symbols.append(s)
            elif d.static is not None:
                spelled.append(d.static)
                shape.append(d)
            else:
                spelled.append(d.text())
                shape.append(d)
                for s in sorted({x for mono, _ in d.poly for x in mono}):
                    if s not in self.symbols:
                        self.symbols.append(s)
        self.inputs.append(helper.make_tensor_value_info(name, dtype, spelled))
        return T(name, dtype, tuple(shape))

    # ---- size guard
    def too_big(self, shape: Sequence[G]) -> bool:
        b = max_binding(self.symbols)
        n = 1
        for d in shape:
            v = d.ev(b)
            if v < 0:
                return True
            n *= v
        return n > MAX_ELEMENTS

    # ---- version-dependent spellings
    def unsqueeze(self, x: str, axes: Sequence[int]) -> str:
        if self.opset >= 13:
            return self.node("Unsqueeze", [x, self.const_ints(axes).name])[0]
        return self.node("Unsqueeze", [x], axes=list(axes))[0]

    def squeeze(self, x: str, axes: Sequence[int] | None) -> str:
        if axes is None:
            return self.node("Squeeze", [x])[0]
        if self.opset >= 13:
            return self.node("Squeeze", [x, self.const_ints(axes).name])[0]
        return self.node("Squeeze", [x], axes=list(axes))[0]

    # ---- reading dims as values
    def shape_of(self, t: T, start: int | None = None, end: int | None = None) -> T:
        """``Shape(t)`` (with start/end from opset 15), cached sometimes as exporters do."""
        r = t.rank
        if start is None and end is None:
            cached = self.shape_cache.get(t.name)
            if cached is not None and self.chance(50):
                return cached
            (name,) = self.node("Shape", [t.name])
            out = T(name, TensorProto.INT64, (gconst(r),), t.shape)
            self.shape_cache[t.name] = out
            return out
        attrs = {}
        if start is not None:
            attrs["start"] = start
        if end is not None:
            attrs["end"] = end
        (name,) = self.node("Shape", [t.name], **attrs)
        s = 0 if start is None else start
        e = r if end is None else end
        s = min(max(s + r if s < 0 else s, 0), r)
        e = min(max(e + r if e < 0 else e, 0), r)
        vals = t.shape[s:e] if s < e else ()
        return T(name, TensorProto.INT64, (gconst(len(vals)),), tuple(vals))

    def dim_vec(self, t: T, i: int, n: int = 1) -> T:
        """A 1-D int64 tensor holding dims ``i .. i+n-1`` of ``t``."""
        r = t.rank
        vals = t.shape[i : i + n]
        how = self.int_(0, 3)
        if how == 0 and self.opset >= 15:
            start = i - r if self.chance(30) else i
            end = None if i + n == r and self.chance(50) else (i + n - r if self.chance(30) and i + n < r else i + n)
            return self.shape_of(t, start, end)
        sh = self.shape_of(t)
        if how == 2 and n == 1:
            idx = self.const_ints([i - r if self.chance(30) else i])
            (name,) = self.node("Gather", [sh.name, idx.name], axis=0)
        elif how == 3 and n == 1:
            sc = self.dim_scalar(t, i)
            name = self.unsqueeze(sc.name, [0])
        else:
            starts = self.const_ints([i])
            ends = self.const_ints([i + n if i + n < r or self.chance(50) else INT64_MAX])
            ins = [sh.name, starts.name, ends.name]
            if self.chance(50):
                ins.append(self.const_ints([0 if self.chance(50) else -1]).name)
            (name,) = self.node("Slice", ins)
        return T(name, TensorProto.INT64, (gconst(n),), tuple(vals))

    def dim_scalar(self, t: T, i: int) -> T:
        """A 0-D int64 tensor holding dim ``i`` of ``t``."""
        r = t.rank
        if self.chance(60):
            sh = self.shape_of(t)
            idx = self.const_ints([i - r if self.chance(30) else i], shape=())
            (name,) = self.node("Gather", [sh.name, idx.name], axis=0)
        else:
            v = self.dim_vec(t, i)
            name = self.squeeze(v.name, [0] if self.chance(80) else [-1])
        return T(name, TensorProto.INT64, (), (t.shape[i],))

    def sources(self, g: G) -> list[tuple[T, int]]:
        """Tensors (and positions) where ``g`` appears as a dim or a known int value."""
        out = []
        for t in self.pool:
            for i, d in enumerate(t.shape):
                if d == g:
                    out.append((t, i))
            if t.vals is not None and t.rank == 1:
                for i, v in enumerate(t.vals):
                    if v == g:
                        out.append((t, -1 - i))  # a value, not a dim
        return out

    def value_vec(self, g: G, depth: int = 0) -> T | None:
        """A ``[1]`` int64 tensor with value ``g``, read from the pool or computed; None if unknown."""
        if g.static is not None:
            return self.const_ints([g.static])
        src = self.sources(g)
        if src:
            t, i = self.pick(src)
            if i >= 0:
                return self.dim_vec(t, i)
            j = -1 - i
            if self.chance(50):
                (name,) = self.node("Slice", [t.name, self.const_ints([j]).name, self.const_ints([j + 1]).name])
            else:
                (name,) = self.node("Gather", [t.name, self.const_ints([j]).name], axis=0)
            return T(name, TensorProto.INT64, (gconst(1),), (g,))
        if g.symbol is not None and depth < 2:
            # a symbol only seen inside a product dim m (a*b): m / (m / a), like hidden / heads
            prods = [d for t in self.pool for d in t.shape if d.poly and len(d.poly) == 1 and g.symbol in d.poly[0][0]]
            prods = [d for d in prods if d != g]
            if prods:
                m = self.pick(prods)
                num, den = self.value_vec(m, depth + 1), self.value_vec(gdiv(m, g), depth + 1)
                if num is not None and den is not None:
                    return self._arith("Div", num, den)
            return None
        if g.poly is None or g.symbol is not None:
            return None  # opaque, or a symbol no tensor shows on its own
        # Build it: a sum of coefficient * product-of-symbols terms.
        acc: T | None = None
        for mono, c in g.poly:
            term: T | None = None
            for s in mono:
                f = self.value_vec(gsym(s), depth)
                if f is None:
                    return None
                term = f if term is None else self._arith("Mul", term, f)
            if term is None:
                term = self.const_ints([c])
            elif c != 1:
                term = self._arith("Mul", term, self.const_ints([c]))
            acc = term if acc is None else self._arith("Add", acc, term)
        return acc

    def _arith(self, op: str, x: T, y: T) -> T:
        (name,) = self.node(op, [x.name, y.name])
        f = {"Add": gadd, "Mul": gmul, "Sub": gsub, "Div": gdiv}[op]
        return T(name, TensorProto.INT64, x.shape, tuple(f(a, b) for a, b in zip(x.vals, y.vals)))

    def spell(self, entries: Sequence[G]) -> T | None:
        """A 1-D int64 tensor whose values are ``entries`` (runs read with one Shape slice)."""
        pieces: list[T] = []
        j = 0
        while j < len(entries):
            # a run of consecutive dims of one tensor?
            run = None
            if len(entries) - j >= 2 and self.chance(60):
                for t in self.pool:
                    for i in range(t.rank - 1):
                        n = 0
                        while i + n < t.rank and j + n < len(entries) and t.shape[i + n] == entries[j + n]:
                            n += 1
                        if n >= 2 and (run is None or n > run[2]):
                            run = (t, i, n)
            if run is not None:
                t, i, n = run
                pieces.append(self.dim_vec(t, i, n))
                j += n
                continue
            if entries[j].static is not None:
                k = j
                while k < len(entries) and entries[k].static is not None:
                    k += 1
                pieces.append(self.const_ints([e.static for e in entries[j:k]]))
                j = k
                continue
            v = self.value_vec(entries[j])
            if v is None:
                return None
            pieces.append(v)
            j += 1
        if not pieces:
            return self.const_ints([])
        if len(pieces) == 1:
            return pieces[0]
        (name,) = self.node("Concat", [p.name for p in pieces], axis=0)
        return T(name, TensorProto.INT64, (gconst(len(entries)),), tuple(entries))

    # ---- operand selection
    def floats(self) -> list[T]:
        return [t for t in self.pool if t.dtype == TensorProto.FLOAT]

    def pick_float(self, min_rank: int = 0) -> T | None:
        c = [t for t in self.floats() if t.rank >= min_rank]
        if not c:
            return None
        return c[len(c) - 1 - self.int_(0, len(c) - 1)]  # most recent first

    def pick_data(self, min_rank: int = 0) -> T | None:
        """A float tensor, or (a third of the time) an int64 one: shape values, Range outputs."""
        ints = [t for t in self.pool if t.dtype == TensorProto.INT64 and t.rank >= min_rank]
        if ints and self.chance(33):
            return ints[len(ints) - 1 - self.int_(0, len(ints) - 1)]
        return self.pick_float(min_rank)

    def same_dtype(self, x: T) -> list[T]:
        return [t for t in self.pool if t.dtype == x.dtype]

    def any_dim(self) -> G:
        """A dim somewhere in the pool, or a small static one."""
        dims = [d for t in self.pool for d in t.shape]
        if not dims or self.chance(30):
            return gconst(self.int_(1, 3))
        return self.pick(dims)

    def broadcast(self, shapes: Sequence[Sequence[G]]) -> tuple[G, ...] | None:
        """Structural multidirectional broadcast: None unless valid at every binding."""
        r = max(len(s) for s in shapes)
        out = []
        one = gconst(1)
        for k in range(r):
            ds = [s[len(s) - r + k] for s in shapes if len(s) - r + k >= 0]
            non1 = {d for d in ds if d != one}
            if len(non1) > 1:
                return None
            out.append(non1.pop() if non1 else one)
        return tuple(out)

    def partner_shape(self, x: T) -> list[G]:
        """A shape that broadcasts with ``x`` at every binding (1s, x's dims, new leading dims)."""
        drop = self.int_(0, min(2, x.rank))
        dims = []
        for d in x.shape[drop:]:
            if d.static == 1 and self.chance(30):
                dims.append(self.any_dim())  # x's 1 broadcasts to anything
            elif self.chance(35):
                dims.append(gconst(1))
            else:
                dims.append(d)
        lead = [self.any_dim() for _ in range(self.int_(0, 1) if drop == 0 else 0)]
        return lead + dims

    def make_float(self, shape: Sequence[G], dtype: int = TensorProto.FLOAT) -> T | None:
        """A tensor of ``shape``: a new graph input (plain dims) or ConstantOfShape."""
        plain = all(nameable(d) for d in shape)
        if plain and len(self.inputs) < 5 and self.chance(50):
            return self.new_input(shape, dtype)
        if not shape:
            return self.const_float(0.5) if dtype == TensorProto.FLOAT else self.const_ints([2], shape=())
        target = self.spell(shape)
        if target is None:
            return None
        fill = self.int_(1, 4)
        if dtype == TensorProto.FLOAT:
            value = helper.make_tensor("value", TensorProto.FLOAT, [1], [fill / 2])
        else:
            value = helper.make_tensor("value", TensorProto.INT64, [1], [fill])
        (name,) = self.node("ConstantOfShape", [target.name], value=value)
        out = T(name, dtype, tuple(shape))
        if dtype == TensorProto.INT64 and _static(shape) is not None and len(_vals_index(shape)) <= 64:
            out.vals = (gconst(fill),) * len(_vals_index(shape))
        return out

    # ============================================================== the ops

    def op_transpose(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        if x.rank == 0 or self.chance(20):
            perm = list(range(x.rank - 1, -1, -1))
            (name,) = self.node("Transpose", [x.name])
        else:
            perm = self.draw(st.permutations(range(x.rank)))
            (name,) = self.node("Transpose", [x.name], perm=list(perm))
        return T(name, x.dtype, tuple(x.shape[p] for p in perm), moved(x, lambda i: np.transpose(i, perm)))

    def op_flatten(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        axis = self.int_(-x.rank, x.rank)
        (name,) = self.node("Flatten", [x.name], axis=axis)
        a = axis + x.rank if axis < 0 else axis
        return T(name, x.dtype, (gprod(x.shape[:a]), gprod(x.shape[a:])), x.vals)

    def op_unsqueeze(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        k = self.int_(1, 2)
        r = x.rank + k
        pos = sorted(self.draw(st.lists(st.integers(0, r - 1), min_size=k, max_size=k, unique=True)))
        axes = [p - r if self.chance(30) else p for p in pos]
        if self.chance(30):
            axes = axes[::-1]
        name = self.unsqueeze(x.name, axes)
        shape = list(x.shape)
        for p in pos:
            shape.insert(p, gconst(1))
        return T(name, x.dtype, tuple(shape), x.vals)

    def op_squeeze(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        ones = [i for i, d in enumerate(x.shape) if d.static == 1]
        if not ones:
            return None
        if all(d.static is not None for d in x.shape) and self.chance(30):
            name = self.squeeze(x.name, None)
            return T(name, x.dtype, tuple(d for d in x.shape if d.static != 1), x.vals)
        chosen = [i for i in ones if self.chance(60)] or ones[:1]
        axes = [i - x.rank if self.chance(30) else i for i in chosen]
        name = self.squeeze(x.name, axes)
        return T(name, x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in chosen), x.vals)

    def op_slice(self) -> T | None:
        x = self.pick_data(min_rank=1)
        if x is None:
            return None
        r = x.rank
        axes = self.draw(st.lists(st.integers(0, r - 1), min_size=1, max_size=r, unique=True))
        starts: list[T] = []
        ends: list[T] = []
        steps = []
        shape = list(x.shape)
        for a in axes:
            k = self.pick(SLICE_STEPS)
            s, e = self._slice_bound(x, a, SLICE_BOUNDS), self._slice_bound(x, a, slice_ends(k))
            steps.append(k)
            starts.append(s)
            ends.append(e)
            shape[a] = gslice_len(x.shape[a], s.vals[0], e.vals[0], k)
        if self.too_big(shape):
            return None
        st_t = self._join(starts)
        en_t = self._join(ends)
        ins = [x.name, st_t.name, en_t.name]
        full_axes = sorted(axes) == axes and len(axes) == r
        if not (full_axes and self.chance(30) and all(k == 1 for k in steps)):
            ins.append(self.const_ints([a - r if self.chance(30) else a for a in axes]).name)
            if any(k != 1 for k in steps) or self.chance(50):
                ins.append(self.const_ints(steps).name)
        (name,) = self.node("Slice", ins)

        def take(i: np.ndarray) -> np.ndarray:
            for a, s, e, k in zip(axes, starts, ends, steps):
                i = np.take(i, list(_slice_indices(i.shape[a], s.vals[0].static, e.vals[0].static, k)), axis=a)
            return i

        static_bounds = all(b.vals[0].static is not None for b in starts + ends)
        return T(name, x.dtype, tuple(shape), moved(x, take) if static_bounds else None)

    def _slice_bound(self, x: T, axis: int, consts: Sequence[int]) -> T:
        """A ``[1]`` slice bound: a constant, or computed from the dim (``d - 1``, ``d // 1``)."""
        if x.shape[axis].static is None and self.chance(25):
            d = self.dim_vec(x, axis)
            off = self.pick((-1, 0, 1, -2))
            if off == 0:
                return d
            return self._arith("Add", d, self.const_ints([off]))
        return self.const_ints([self.pick(consts)])

    def _join(self, parts: Sequence[T]) -> T:
        if len(parts) == 1:
            return parts[0]
        if all(p.vals[0].static is not None for p in parts) and self.chance(70):
            return self.const_ints([p.vals[0].static for p in parts])
        (name,) = self.node("Concat", [p.name for p in parts], axis=0)
        return T(name, TensorProto.INT64, (gconst(len(parts)),), tuple(p.vals[0] for p in parts))

    def op_reshape(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        dims = list(x.shape)
        # split dims into factors (6 -> 2, 3; a*b -> a, b; 2*a -> 2, a), then regroup the
        # factors in any order: any grouping keeps the element count
        factors = [f for d in dims for f in self._factors(d)]
        order = list(range(len(factors)))
        if self.chance(25):
            order = list(self.draw(st.permutations(order)))
        groups: list[G] = []
        cur: list[G] = []
        for i in order:
            cur.append(factors[i])
            if self.chance(50):
                groups.append(gprod(cur))
                cur = []
        if cur:
            groups.append(gprod(cur))
        for _ in range(self.int_(0, 2)):
            groups.insert(self.int_(0, len(groups)), gconst(1))
        if not groups:
            groups = [gconst(1)] if self.chance(50) else []
        if not groups and not all(d.static == 1 for d in dims):
            return None
        allowzero = 1 if self.opset >= 14 and self.chance(25) else 0
        enc = self._reshape_encoding(dims, groups, allowzero)
        if enc is None and self.opset >= 14 and not allowzero:
            allowzero = 1
            enc = self._reshape_encoding(dims, groups, allowzero)
        if enc is None:
            return None
        target = self.spell(enc)
        if target is None:
            return None
        attrs = {"allowzero": allowzero} if self.opset >= 14 and (allowzero or self.chance(30)) else {}
        (name,) = self.node("Reshape", [x.name, target.name], **attrs)
        return T(name, x.dtype, tuple(groups), x.vals)

    def _factors(self, d: G) -> list[G]:
        if d.static is not None and d.static >= 4 and self.chance(40):
            divs = [k for k in range(2, d.static) if d.static % k == 0]
            if divs:
                k = self.pick(divs)
                return [gconst(k), gconst(d.static // k)]
        if d.poly is not None and len(d.poly) == 1 and self.chance(50):
            mono, c = d.poly[0]
            parts = [gsym(s) for s in mono] + ([gconst(c)] if c != 1 else [])
            if len(parts) >= 2:
                return parts
        return [d]

    def _reshape_encoding(self, dims: list[G], groups: list[G], allowzero: int) -> list[G] | None:
        """Target values for ``groups``: literal dims, 0 copying ``dims[i]``, at most one -1."""
        positive = [g.lo is not None and g.lo >= 1 for g in groups]
        enc: list[G] = list(groups)
        infer = None
        if self.chance(50):
            cands = [i for i in range(len(groups)) if all(positive[:i] + positive[i + 1 :])]
            if cands:
                infer = self.pick(cands)
                enc[infer] = gconst(-1)
        for i, g in enumerate(groups):
            if i == infer:
                continue
            same = i < len(dims) and dims[i] == g
            if not allowzero and same and self.chance(40):
                enc[i] = gconst(0)  # copy the input dim
            elif not allowzero and not positive[i] and not same:
                return None  # a runtime 0 here would copy dims[i] instead
            elif allowzero and infer is not None and not positive[i]:
                return None  # 0 and -1 together are invalid with allowzero=1
        return enc

    def op_expand(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        r_out = x.rank + self.int_(0, 2) - (self.int_(0, min(1, x.rank)) if self.chance(20) else 0)
        target: list[G] = []
        for k in range(r_out):
            xi = x.rank - r_out + k
            if xi < 0:
                target.append(self.any_dim())
            elif x.shape[xi].static == 1:
                target.append(self.any_dim() if self.chance(60) else gconst(1))
            else:
                target.append(x.shape[xi] if self.chance(60) else gconst(1))
        out = self.broadcast([x.shape, target])
        if out is None or self.too_big(out):
            return None
        t = self.spell(target)
        if t is None:
            return None
        (name,) = self.node("Expand", [x.name, t.name])
        shp = _static(out)
        return T(name, x.dtype, out, None if shp is None else moved(x, lambda i: np.broadcast_to(i, shp)))

    def op_gather(self) -> T | None:
        x = self.pick_data(min_rank=1)
        if x is None:
            return None
        axis = self.int_(0, x.rank - 1)
        d = x.shape[axis]
        rng = [t for t in self.pool if t.bound is not None and t.bound == d]
        if rng and self.chance(60):
            idx = self.pick(rng)
        else:
            lo = d.lo or 0
            if lo < 1:
                return None
            ishape = [self.int_(1, 3) for _ in range(self.int_(0, 2))]
            n = int(np.prod(ishape)) if ishape else 1
            vals = [self.int_(-lo, lo - 1) for _ in range(n)]
            idx = self.const_ints(vals, shape=ishape, dtype=TensorProto.INT32 if self.chance(20) else TensorProto.INT64)
        shape = x.shape[:axis] + idx.shape + x.shape[axis + 1 :]
        if self.too_big(shape):
            return None
        (name,) = self.node("Gather", [x.name, idx.name], axis=axis - x.rank if self.chance(30) else axis)
        vals = None
        if idx.vals is not None and all(v.static is not None for v in idx.vals):
            iv = np.array([v.static for v in idx.vals], dtype=np.int64).reshape(_static(idx.shape))
            vals = moved(x, lambda i: np.take(i, iv, axis=axis))
        return T(name, x.dtype, shape, vals)

    def op_concat(self) -> T | None:
        x = self.pick_data(min_rank=1)
        if x is None:
            return None
        axis = self.int_(0, x.rank - 1)
        mates = [
            t
            for t in self.same_dtype(x)
            if t.rank == x.rank and all(t.shape[i] == x.shape[i] for i in range(x.rank) if i != axis)
        ]
        others = [self.pick(mates) for _ in range(self.int_(1, 2))]
        parts = [x, *others]
        if self.chance(30):
            parts = parts[::-1]
        shape = list(x.shape)
        total = gconst(0)
        for p in parts:
            total = gadd(total, p.shape[axis])
        shape[axis] = total
        if self.too_big(shape):
            return None
        (name,) = self.node("Concat", [p.name for p in parts], axis=axis - x.rank if self.chance(30) else axis)
        return T(name, x.dtype, tuple(shape), _concat_vals(parts, axis))

    def op_matmul(self) -> T | None:
        # Only operands that are never empty: onnxruntime fails on (0, k) @ (k,) and leaves the
        # output uninitialised for (m, 0) @ (0,), where numpy gives () and zeros.
        x = self.pick_float(min_rank=1)
        if x is None or not all(_nonempty(d) for d in x.shape):
            return None
        how = self.int_(0, 2)
        if how == 0 and x.rank >= 2:  # x @ x^T over the last two axes
            perm = list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]
            (xt,) = self.node("Transpose", [x.name], perm=perm)
            shape = x.shape[:-1] + (x.shape[-2],)
            if self.too_big(shape):
                return None
            (name,) = self.node("MatMul", [x.name, xt])
            return T(name, x.dtype, shape)
        k = x.shape[-1]
        if how == 1 and x.rank >= 2:  # a vector on the left: (k2) @ (..., k2, n)
            k2 = x.shape[-2]
            v = self.make_float([k2])
            if v is None:
                return None
            shape = x.shape[:-2] + x.shape[-1:]
            (name,) = self.node("MatMul", [v.name, x.name])
            return T(name, x.dtype, shape)
        # x @ w with w (k), (k, n) or (batch..., k, n)
        wr = self.int_(1, 3)
        n = self.any_dim()
        if wr == 1:
            wshape: list[G] = [k]
        else:
            wshape = [k, n]
            if wr == 3:
                wshape = [gconst(1) if self.chance(50) or x.rank < 3 else x.shape[-3], *wshape]
        wshape_t = tuple(wshape)
        xa = x.shape if x.rank >= 2 else (gconst(1), *x.shape)
        wa = wshape_t if len(wshape_t) >= 2 else (*wshape_t, gconst(1))
        batch = self.broadcast([xa[:-2], wa[:-2]])
        if batch is None:
            return None
        shape = batch + ((xa[-2],) if x.rank >= 2 else ()) + ((wa[-1],) if len(wshape_t) >= 2 else ())
        if self.too_big(shape) or self.too_big(wshape_t) or not _nonempty(n):
            return None
        w = self.make_float(wshape_t)
        if w is None:
            return None
        (name,) = self.node("MatMul", [x.name, w.name])
        return T(name, x.dtype, tuple(shape))

    def op_binary(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        op = self.pick(("Add", "Mul"))
        mates = [t for t in self.same_dtype(x) if self.broadcast([x.shape, t.shape]) is not None]
        if mates and self.chance(50):
            y = self.pick(mates)
        else:
            y = self.make_float(self.partner_shape(x), x.dtype)
            if y is None:
                return None
        out = self.broadcast([x.shape, y.shape])
        if out is None or self.too_big(out):
            return None
        a, b = (x, y) if self.chance(50) else (y, x)
        (name,) = self.node(op, [a.name, b.name])
        return T(name, x.dtype, out, _elementwise_vals(gadd if op == "Add" else gmul, [a, b], out))

    def op_where(self) -> T | None:
        x = self.pick_data()
        if x is None:
            return None
        cshape = self.partner_shape(x)
        plain = all(nameable(d) for d in cshape)
        if plain and len(self.inputs) < 5:
            cond = self.new_input(cshape, TensorProto.BOOL)
        else:
            cshape = []
            (cname,) = self.node("Constant", [], value=helper.make_tensor("value", TensorProto.BOOL, [], [True]))
            cond = T(cname, TensorProto.BOOL, (), (gconst(1),))
        mates = [t for t in self.same_dtype(x) if self.broadcast([x.shape, t.shape, cond.shape]) is not None]
        if mates and self.chance(60):
            y = self.pick(mates)
        elif x.dtype == TensorProto.FLOAT:
            y = self.const_float(-1.0)
        else:
            y = self.const_ints([-1], shape=())
        out = self.broadcast([cond.shape, x.shape, y.shape])
        if out is None or self.too_big(out):
            return None
        a, b = (x, y) if self.chance(50) else (y, x)
        (name,) = self.node("Where", [cond.name, a.name, b.name])
        vals = _elementwise_vals(lambda p, q: p, [a, b], out) if cond.shape == () and cond.vals else None
        return T(name, x.dtype, out, vals)

    def op_constant_of_shape(self) -> T | None:
        shape = [self.any_dim() for _ in range(self.int_(0, 3))]
        if self.too_big(shape):
            return None
        target = self.spell(shape)
        if target is None:
            return None
        attrs = {}
        if self.chance(60):
            attrs["value"] = helper.make_tensor("value", TensorProto.FLOAT, [1], [1.5])
        (name,) = self.node("ConstantOfShape", [target.name], **attrs)
        return T(name, TensorProto.FLOAT, tuple(shape))

    def op_range(self) -> T | None:
        """Range over a dim: as Gather indices into that axis, or just as a tensor."""
        x = self.pick_float(min_rank=1)
        if x is None:
            return None
        axis = self.int_(0, x.rank - 1)
        d = x.shape[axis]
        dsc = self.dim_scalar(x, axis)
        how = self.int_(0, 2)
        if how == 0:  # range(0, d, step): indices
            step = self.pick((1, 2, 3))
            start = self.const_ints([0], shape=())
            (name,) = self.node("Range", [start.name, dsc.name, self.const_ints([step], shape=()).name])
            n = grange_len(gconst(0), d, step)
            bound = d
        elif how == 1:  # range(d - 1, -1, -step): reversed indices
            step = self.pick((1, 2))
            last = self._arith("Add", dsc, self.const_ints([-1], shape=()))
            (name,) = self.node(
                "Range", [last.name, self.const_ints([-1], shape=()).name, self.const_ints([-step], shape=()).name]
            )
            n = grange_len(gadd(d, gconst(-1)), gconst(-1), -step)
            bound = d
        else:  # range(start, d + off, step): maybe empty, not indices
            s0 = self.pick((0, 1, 2, 5))
            step = self.pick((1, 2))
            (name,) = self.node(
                "Range", [self.const_ints([s0], shape=()).name, dsc.name, self.const_ints([step], shape=()).name]
            )
            n = grange_len(gconst(s0), d, step)
            bound = None
        t = T(name, TensorProto.INT64, (n,), bound=bound)
        if n.static is not None and n.static <= 16 and bound is None:
            t.vals = tuple(gconst(s0 + i * step) for i in range(n.static))
        return t

    def op_shape_values(self) -> T | None:
        """Shape arithmetic for its own sake: Shape / Gather / Slice / Concat / Add / Mul / Where."""
        x = self.pick_float()
        if x is None:
            return None
        how = self.int_(0, 5)
        r = x.rank
        if how == 0 and self.opset >= 15:
            start = self.int_(-r - 1, r + 1) if self.chance(70) else None
            end = self.int_(-r - 1, r + 1) if self.chance(70) else None
            return self.shape_of(x, start, end)
        sh = self.shape_of(x)
        if how == 1 and r >= 1:  # Gather with 1-D / 2-D indices
            ishape = [self.int_(1, 3) for _ in range(self.int_(1, 2))]
            vals = [self.int_(-r, r - 1) for _ in range(int(np.prod(ishape)))]
            idx = self.const_ints(vals, shape=ishape, dtype=TensorProto.INT32 if self.chance(20) else TensorProto.INT64)
            (name,) = self.node("Gather", [sh.name, idx.name], axis=0)
            out = tuple(x.shape[v] for v in vals)
            if len(ishape) != 1:
                return T(name, TensorProto.INT64, tuple(gconst(s) for s in ishape), out)
            return T(name, TensorProto.INT64, (gconst(len(vals)),), out)
        if how == 2:  # Slice of the shape vector, any step and bounds
            k = self.pick(SLICE_STEPS)
            s, e = self.pick(SLICE_BOUNDS), self.pick(slice_ends(k))
            ins = [sh.name, self.const_ints([s]).name, self.const_ints([e]).name]
            if k != 1 or self.chance(50):
                ins += [self.const_ints([0]).name, self.const_ints([k]).name]
            (name,) = self.node("Slice", ins)
            vals = tuple(x.shape[i] for i in _slice_indices(x.rank, s, e, k))
            return T(name, TensorProto.INT64, (gconst(len(vals)),), vals)
        if how == 3:  # shape + - * / const (broadcast scalar or vector)
            op = self.pick(("Add", "Mul", "Sub", "Div"))
            c = self.int_(1, 3) if op == "Div" else self.int_(-2, 3)
            cst = self.const_ints([c], shape=() if self.chance(50) else (1,))
            if r != 1 and cst.rank == 1 and self.chance(50):
                cst = self.const_ints([c] * r)
            first = op in ("Sub", "Div") or self.chance(50)  # shape - c, shape / c (c - shape is fine too)
            if op == "Sub" and self.chance(30):
                first = False
            (name,) = self.node(op, [sh.name, cst.name] if first else [cst.name, sh.name])
            f = {"Add": gadd, "Mul": gmul, "Sub": gsub, "Div": gdiv}[op]
            vals = tuple(f(d, gconst(c)) if first else f(gconst(c), d) for d in x.shape)
            return T(name, TensorProto.INT64, (gconst(r),), vals)
        if how == 4 and r >= 1:  # Where(const cond, shape, ones)
            cond = [self.chance(50) for _ in range(r)]
            cname = self.fresh_name("c")
            self.inits.append(onnx.numpy_helper.from_array(np.array(cond, dtype=bool), cname))
            ones = self.const_ints([1] * r if self.chance(50) else [1], shape=None)
            (name,) = self.node("Where", [cname, sh.name, ones.name])
            vals = tuple(d if c else gconst(1) for d, c in zip(x.shape, cond))
            return T(name, TensorProto.INT64, (gconst(r),), vals)
        # Concat of pieces of two tensors' shapes, Unsqueeze of a scalar dim
        y = self.pick_float()
        parts = [sh, self.shape_of(y)]
        if r >= 1 and self.chance(50):
            i = self.int_(0, r - 1)
            sc = self.dim_scalar(x, i)
            (u,) = [self.unsqueeze(sc.name, [0])]
            parts.append(T(u, TensorProto.INT64, (gconst(1),), (x.shape[i],)))
        (name,) = self.node("Concat", [p.name for p in parts], axis=0)
        vals = tuple(v for p in parts for v in p.vals)
        return T(name, TensorProto.INT64, (gconst(len(vals)),), vals)

    OPS = (
        "reshape",
        "transpose",
        "slice",
        "gather",
        "concat",
        "unsqueeze",
        "squeeze",
        "flatten",
        "expand",
        "matmul",
        "binary",
        "where",
        "constant_of_shape",
        "range",
        "shape_values",
    )

    def step(self) -> T | None:
        op = self.pick(self.OPS)
        before = (len(self.nodes), len(self.inits), len(self.inputs), self.n, dict(self.shape_cache))
        before_inputs_syms = list(self.symbols)
        out = getattr(self, f"op_{op}")()
        if out is None:  # not applicable: undo whatever helper nodes were emitted
            del self.nodes[before[0] :]
            del self.inits[before[1] :]
            del self.inputs[before[2] :]
            self.shape_cache = before[4]
            self.symbols = before_inputs_syms
            return None
        return self.add(out)

    def model(self) -> onnx.ModelProto:
        produced = [o for n in self.nodes for o in n.output]
        consumed = {i for n in self.nodes for i in n.input}
        sinks = [o for o in produced if o not in consumed]
        types = {t.name: t.dtype for t in self.pool}
        outputs = []
        for o in sinks:
            dtype = types.get(o)
            if dtype is None:  # a helper's output nobody used (e.g. an undone step's tail)
                continue
            outputs.append(helper.make_tensor_value_info(o, dtype, None))
        if not outputs:
            last = self.pool[-1]
            outputs.append(helper.make_tensor_value_info(last.name, last.dtype, None))
        graph = helper.make_graph(self.nodes, "fuzz", self.inputs, outputs, initializer=self.inits)
        opsets = [helper.make_opsetid("", self.opset)]
        return helper.make_model(
            graph, opset_imports=opsets, ir_version=helper.find_min_ir_version_for(opsets), producer_name="fuzz"
        )


# ---------------------------------------------------------------------------- the strategy


@dataclass
class Case:
    """One fuzz example: a model and the bindings to check it at.

    ``expected`` (from the generator) holds its own view of tensors' dims and int values, which
    :func:`check_case` also holds against onnxruntime (a failure there is a fuzzer bug).
    """

    model: onnx.ModelProto
    bindings: list[dict[str, int]]
    expected: dict[str, T] | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        try:
            text = onnx.printer.to_text(self.model)
        except Exception:
            text = helper.printable_graph(self.model.graph)
        return f"Case(bindings={self.bindings!r}, model=\n{text}\n)"


@dataclass
class Checks:
    """What was checked, and what inference left unresolved: per case (:class:`CaseReport`) and
    summed over a run (:class:`Stats`)."""

    tensors_checked: int = 0
    dims_checked: int = 0
    dims_unresolved: int = 0
    ranks_unresolved: int = 0
    values_checked: int = 0
    optimize_checked: int = 0

    def add(self, other: Checks) -> None:
        """Add ``other``'s counts to these."""
        for f in fields(Checks):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class Stats(Checks):
    """Counters over a fuzz run (module-level :data:`STATS`, reset with :meth:`reset`)."""

    examples: int = 0
    discards: int = 0
    nodes: int = 0
    failures: list = field(default_factory=list)  # (Failure, Case)
    known: list = field(default_factory=list)  # (KnownIssue, Failure, Case)
    by_op: dict = field(default_factory=dict)

    def reset(self) -> None:
        self.__init__()


STATS = Stats()


def _dims_for_input(draw: Callable) -> list:
    """Symbols (mostly), static dims, unnamed dims, and now and then an expression (``2*a``)."""
    out: list = []

    def symbol() -> G:
        return gsym(SYMBOLS[draw(st.integers(0, len(SYMBOLS) - 1))])

    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 11))
        if kind < 6:
            out.append(symbol())
        elif kind < 9:
            out.append(gconst(draw(st.integers(1, 4))))
        elif kind == 9:
            out.append("?")
        elif kind == 10:
            out.append(gmul(gconst(draw(st.integers(2, 3))), symbol()))
        else:
            out.append(gmul(symbol(), symbol()) if draw(st.booleans()) else gadd(symbol(), gconst(1)))
    return out


@st.composite
def cases(draw: Callable, max_steps: int = 8, opsets: Sequence[int] = OPSETS) -> Case:
    """A random valid model over symbolic inputs and 2-3 positive bindings of its symbols."""
    opset = draw(st.sampled_from(list(opsets)))
    b = Builder(draw, opset)
    for _ in range(draw(st.integers(1, 2))):
        b.add(b.new_input(_dims_for_input(draw)))
    for _ in range(draw(st.integers(1, max_steps))):
        b.step()
    if not b.nodes:
        STATS.discards += 1
        assume(False)
    lo, hi = BIND_RANGE
    bindings = []
    for _ in range(draw(st.integers(2, 3))):
        bindings.append({s: draw(st.integers(lo, hi)) for s in b.symbols})
    return Case(b.model(), bindings, {t.name: t for t in b.pool})


# ---------------------------------------------------------------------------- checking


@dataclass
class Failure:
    """One disagreement: ``kind`` is dim / rank / dtype / value / diagnostic / ort / infer /
    optimize / optimize-bind."""

    kind: str
    tensor: str | None
    op: str | None
    binding: dict[str, int] | None
    detail: str

    def __str__(self) -> str:
        where = f"{self.tensor} ({self.op})" if self.tensor else "model"
        at = f" at {self.binding}" if self.binding is not None else ""
        return f"{self.kind}: {where}{at}: {self.detail}"


@dataclass
class CaseReport(Checks):
    """What :func:`check_case` found for one case (``known``: failures of a :class:`KnownIssue`)."""

    failures: list[Failure] = field(default_factory=list)
    known: list[tuple[KnownIssue, Failure]] = field(default_factory=list)


@dataclass(frozen=True)
class KnownIssue:
    """An open bug the fuzzer keeps finding, set aside (and counted) so it does not mask others.

    Each has regression tests marked ``xfail(strict=True)`` in tests/inference/test_fuzz_regressions.py
    (``tests``): when the bug is fixed they pass, fail as XPASS, and the entry must go.
    ``match(failure, case, optimized)`` must recognise the bug's cause, not just a symptom.
    """

    name: str
    tests: tuple[str, ...]
    match: Callable[[Failure, Case, onnx.ModelProto | None], bool]


#: Open bugs set aside so they do not hide new failures; each names its strict-xfail
#: regression tests. Empty: every bug the fuzzer has found so far is fixed.
KNOWN_ISSUES: tuple[KnownIssue, ...] = ()


def feeds_for(model: onnx.ModelProto, binding: Mapping[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for every graph input at ``binding``: dims the generator's way (expressions
    such as ``2*a`` evaluated, unnamed dims ``<input>_d<axis>``), values as
    :func:`ort_oracle.random_input` makes them, integers in [-3, 10) (negative indices too)."""
    rng = np.random.default_rng(seed)
    out = {}
    inits = {t.name for t in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dims = []
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.dim_param:
                dims.append(eval_dim_param(d.dim_param, binding))
            else:
                dims.append(binding[f"{vi.name}_d{axis}"])
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        out[vi.name] = ort_oracle.random_input(rng, vi.name, dtype, dims, ints=(-3, 10))
    return out


session = ort_oracle.session


def run_all(model: onnx.ModelProto, bindings: Sequence[Mapping[str, int]]) -> list[dict[str, np.ndarray]]:
    """Every node output of ``model`` at each binding, by name (raises what onnxruntime raises)."""
    sess = session(ort_oracle.observable(model))
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, sess.run(None, feeds_for(model, b)))) for b in bindings]


def run_outputs(model: onnx.ModelProto, bindings: Sequence[Mapping[str, int]]) -> list[dict[str, np.ndarray]]:
    """The declared graph outputs of ``model`` at each binding."""
    sess = session(model)
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, sess.run(None, feeds_for(model, b)))) for b in bindings]


def _np_dtype(t: int):
    return np.dtype(helper.tensor_dtype_to_np_dtype(t))


def compare_tensor(
    fact, actual: np.ndarray, binding: Mapping[str, int], fresh: set[str], report: CaseReport
) -> tuple[str, str] | None:
    """Compare one inferred fact with onnxruntime's array; ``(kind, detail)`` on a failure.

    Unresolved dims (fresh symbols) and unknown ranks are counted in ``report``, not failures.
    """
    report.tensors_checked += 1
    if fact is None or fact.shape is None:
        report.ranks_unresolved += 1
        report.dims_unresolved += actual.ndim
        return None
    shape = fact.shape
    if len(shape) != actual.ndim:
        return "rank", f"inferred {_fmt(shape)}, actual {list(actual.shape)}"
    for k, (d, a) in enumerate(zip(shape, actual.shape)):
        report.dims_checked += 1
        if type(d) is int:
            if d != a:
                return (
                    "dim",
                    f"axis {k}: inferred {d}, actual {a} (inferred {_fmt(shape)}, actual {list(actual.shape)})",
                )
            continue
        syms = D.symbols(d)
        if syms & fresh:
            report.dims_unresolved += 1
            continue
        if not syms <= binding.keys():
            return "dim", f"axis {k}: {D.format(d)} uses symbols that are neither input nor fresh"
        try:
            v = D.evaluate(d, binding)
        except (ZeroDivisionError, ValueError, OverflowError) as e:
            return "dim", f"axis {k}: {D.format(d)} cannot be evaluated: {e}"
        if v != a:
            return "dim", (
                f"axis {k}: inferred {D.format(d)} = {v}, actual {a} (inferred {_fmt(shape)}, "
                f"actual {list(actual.shape)})"
            )
    if fact.dtype and _np_dtype(fact.dtype) != actual.dtype:
        return "dtype", f"inferred {_np_dtype(fact.dtype)}, actual {actual.dtype}"
    if fact.value is not None and len(fact.value) == actual.size:
        flat = actual.reshape(-1).tolist()
        for k, (v, a) in enumerate(zip(fact.value, flat)):
            if v is None:
                continue
            if isinstance(v, float) or isinstance(a, float):
                if not (isinstance(v, D.Expr) or np.isclose(float(v), float(a), equal_nan=True)):
                    return "value", f"element {k}: inferred {v}, actual {a}"
                continue
            if isinstance(v, D.Expr):
                if D.symbols(v) & fresh or not D.symbols(v) <= binding.keys():
                    continue
                v = D.evaluate(v, binding)
            report.values_checked += 1
            if v != a:
                return "value", f"element {k}: inferred {fact.value[k]!s} = {v}, actual {a}"
    return None


def _generator_disagrees(t: T, actual: np.ndarray, binding: Mapping[str, int]) -> str | None:
    """How the generator's own view of a tensor differs from onnxruntime's (None when it does not)."""
    want = [d.ev(binding) for d in t.shape]
    if want != list(actual.shape):
        return f"generator expected shape {want}, actual {list(actual.shape)}"
    if t.vals is not None:
        vals = [v.ev(binding) for v in t.vals]
        if vals != actual.reshape(-1).tolist():
            return f"generator expected values {vals}, actual {actual.reshape(-1).tolist()}"
    if t.bound is not None and actual.size and not (actual.min() >= 0 and actual.max() < t.bound.ev(binding)):
        return f"generator expected indices below {t.bound.ev(binding)}, actual {actual.reshape(-1).tolist()}"
    return None


def _fmt(shape) -> str:
    return "[" + ", ".join(str(d) if type(d) is int else D.format(d) for d in shape) + "]"


def _same_outputs(want: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray]) -> str | None:
    """None when ``got`` has each of ``want``'s outputs, equal (floats within rtol 1e-5, atol 1e-6:
    both runs are onnxruntime's with its optimisations off, on small graphs)."""
    for name, a in want.items():
        if name not in got:
            return f"output {name} missing"
        why = ort_oracle.outputs_differ(a, got[name], rtol=1e-5, atol=1e-6)
        if why:
            return f"output {name}: {why}"
    return None


def check_case(case: Case, *, optimize: bool = True) -> CaseReport:
    """Differential check of one case (see the module docstring); failures in the report."""
    import shapeinfer

    rep = CaseReport()
    model = case.model
    producer = {o: n.op_type for n in model.graph.node for o in n.output}
    try:
        res = shapeinfer.infer(model)
    except Exception as e:  # inference must never raise
        rep.failures.append(Failure("infer", None, None, None, f"{type(e).__name__}: {e}"))
        return rep
    for dg in res.diagnostics:
        if dg.severity == "error":
            rep.failures.append(Failure("diagnostic", dg.tensor, dg.op_type, None, str(dg)))
    try:
        actual = run_all(model, case.bindings)
    except Exception as e:
        rep.failures.append(
            Failure("ort", None, None, None, f"onnxruntime rejects the model: {ort_oracle.error_line(e)}")
        )
        return rep
    fresh = set(res.fresh_symbols)
    for b, outs in zip(case.bindings, actual):
        for name, arr in outs.items():
            if name not in producer:
                continue
            bad = compare_tensor(res.facts.get(name), np.asarray(arr), b, fresh, rep)
            if bad:
                f = res.facts.get(name)
                detail = f"{bad[1]}; fact {_fmt(f.shape) if f and f.shape is not None else '?'}"
                rep.failures.append(Failure(bad[0], name, producer[name], dict(b), detail))
            t = (case.expected or {}).get(name)
            if t is not None:
                why = _generator_disagrees(t, np.asarray(arr), b)
                if why:
                    rep.failures.append(Failure("generator", name, producer[name], dict(b), why))
    # inference specialised to the first binding (``--bind``) gives that binding's shapes
    b0 = case.bindings[0]
    try:
        res_b = shapeinfer.infer(model, bind=b0)
    except Exception as e:
        rep.failures.append(Failure("bind", None, None, b0, f"infer(bind=...) raised {type(e).__name__}: {e}"))
    else:
        fresh_b = set(res_b.fresh_symbols)
        scratch = CaseReport()
        for name, arr in actual[0].items():
            if name in producer:
                bad = compare_tensor(res_b.facts.get(name), np.asarray(arr), b0, fresh_b, scratch)
                if bad:
                    rep.failures.append(Failure("bind", name, producer[name], dict(b0), f"{bad[0]}: {bad[1]}"))
    if not optimize:
        return rep
    outs_names = [o.name for o in model.graph.output]
    want = [{k: v for k, v in outs.items() if k in outs_names} for outs in actual]
    for kind, bind, bindings in (
        ("optimize", None, case.bindings),
        ("optimize-bind", case.bindings[0], case.bindings[:1]),
    ):
        try:
            opt = shapeinfer.optimize(model, bind=bind)
        except Exception as e:
            rep.failures.append(Failure(kind, None, None, bind, f"optimize raised {type(e).__name__}: {e}"))
            continue
        try:  # optimize promises a model onnx's checker accepts, with its full shape check
            onnx.checker.check_model(opt, full_check=True)
        except Exception as e:
            rep.failures.append(
                Failure(kind, None, None, bind, f"optimized model fails onnx.checker: {ort_oracle.error_line(e)}")
            )
        fail = None
        try:
            got = run_outputs(opt, bindings)
        except Exception as e:
            fail = Failure(kind, None, None, bind, f"optimized model fails: {ort_oracle.error_line(e)}")
        else:
            rep.optimize_checked += 1
            for b, w, g in zip(bindings, want, got):
                why = _same_outputs(w, g)
                if why:
                    fail = Failure(kind, None, None, dict(b), why)
                    break
        if fail is not None:
            known = next((k for k in KNOWN_ISSUES if k.match(fail, case, opt)), None)
            if known is None:
                rep.failures.append(fail)
            else:
                rep.known.append((known, fail))
    return rep


def record(case: Case, rep: CaseReport) -> None:
    """Add one checked case to :data:`STATS`."""
    STATS.examples += 1
    STATS.nodes += len(case.model.graph.node)
    STATS.add(rep)
    for n in case.model.graph.node:
        STATS.by_op[n.op_type] = STATS.by_op.get(n.op_type, 0) + 1
    for f in rep.failures:
        STATS.failures.append((f, case))
    for k, f in rep.known:
        STATS.known.append((k, f, case))


def check_and_record(case: Case, *, optimize: bool = True) -> CaseReport:
    """:func:`check_case` then :func:`record`."""
    rep = check_case(case, optimize=optimize)
    record(case, rep)
    return rep


def describe(rep: CaseReport) -> str:
    """The failures of one report, one per line."""
    return "\n".join(str(f) for f in rep.failures)


def check_or_raise(case: Case, *, optimize: bool = True) -> CaseReport:
    """:func:`check_and_record`, raising AssertionError (for hypothesis to shrink) on a failure."""
    rep = check_and_record(case, optimize=optimize)
    if rep.failures:
        raise AssertionError(f"{len(rep.failures)} failure(s):\n{describe(rep)}\n{case!r}")
    return rep


def ancestors_model(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """The part of ``model`` that computes ``names`` (made the graph outputs): a smaller repro."""
    producer = {o: n for n in model.graph.node for o in n.output}
    keep: set[int] = set()
    need = list(names)
    seen: set[str] = set()
    while need:
        t = need.pop()
        if t in seen:
            continue
        seen.add(t)
        n = producer.get(t)
        if n is not None and id(n) not in keep:
            keep.add(id(n))
            need.extend(i for i in n.input if i)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    nodes = [n for n in model.graph.node if id(n) in keep]
    del g.node[:]
    g.node.extend(nodes)
    kept_inits = [t for t in model.graph.initializer if t.name in seen]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    kept_inputs = [vi for vi in model.graph.input if vi.name in seen]
    del g.input[:]
    g.input.extend(kept_inputs)
    types = {o.name: o for o in model.graph.output}
    del g.output[:]
    for name in names:
        g.output.append(types.get(name) or helper.make_empty_tensor_value_info(name))
    return m


def run_fuzz(
    examples: int,
    seed: int | None = None,
    *,
    max_steps: int = 8,
    optimize: bool = True,
    derandomize: bool = False,
    stop_on_failure: bool = False,
) -> tuple[Stats, float]:
    """Check ``examples`` generated cases; returns :data:`STATS` (reset first) and the seconds taken.

    Failures are collected in the stats; with ``stop_on_failure`` the first one raises and
    hypothesis shrinks it to a minimal case (printed as its falsifying example).
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed

    STATS.reset()
    phases = list(Phase) if stop_on_failure else [Phase.generate]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )
    @given(cases(max_steps=max_steps))
    def run(case: Case) -> None:
        if stop_on_failure:
            check_or_raise(case, optimize=optimize)
        else:
            check_and_record(case, optimize=optimize)

    if seed is not None:
        run = with_seed(seed)(run)
    t = time.perf_counter()
    run()
    return STATS, time.perf_counter() - t


def summary(stats: Stats, seconds: float) -> str:
    """A multi-line report of a fuzz run: counts, unresolved share, failures, known issues."""
    share = stats.dims_unresolved / stats.dims_checked if stats.dims_checked else 0.0
    lines = [
        f"examples: {stats.examples} in {seconds:.1f}s ({stats.examples / seconds if seconds else 0:.1f}/s)",
        f"discards: {stats.discards}",
        f"nodes: {stats.nodes}, tensor checks: {stats.tensors_checked}, dim checks: {stats.dims_checked}, "
        f"value checks: {stats.values_checked}, optimize checks: {stats.optimize_checked}",
        f"unresolved dims: {stats.dims_unresolved} ({100 * share:.2f}% of dim checks), "
        f"unknown ranks: {stats.ranks_unresolved}",
        f"failures: {len(stats.failures)}",
    ]
    kinds: dict[str, int] = {}
    for f, _ in stats.failures:
        key = f"{f.kind} {f.op or ''}".strip()
        kinds[key] = kinds.get(key, 0) + 1
    lines += [f"  {n} x {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])]
    known: dict[str, int] = {}
    for k, _, _ in stats.known:
        known[k.name] = known.get(k.name, 0) + 1
    lines.append(f"known open issues hit: {len(stats.known)}")
    lines += [f"  {n} x {k}" for k, n in known.items()]
    ops = ", ".join(f"{op} {n}" for op, n in sorted(stats.by_op.items(), key=lambda kv: -kv[1]))
    lines.append(f"ops generated: {ops}")
    return "\n".join(lines)
