"""The limits every inferred fact is kept within before it is stored: expressions past a size
cap become fresh symbols (:func:`cap`), numbers outside int64 are overflows (E013), element
types that are not ONNX types are invalid (:func:`capped`), and the symbols' ranges decide the
``min``/``max`` they can (:func:`ranged`). No writer ever sees a number outside int64."""

from __future__ import annotations

import onnx

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.inference.node_context import NodeContext, Walker, show_number
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.scope import SymbolScope

#: Expressions larger than this (see :func:`shapeinfer.symbolic.dims.size`) become fresh symbols.
MAX_EXPR_SIZE = 256

_DATA_TYPES = frozenset(onnx.TensorProto.DataType.values())
_UINT64_MAX = 2**64 - 1


def _coeff_overflow(d: D.Dim) -> bool:
    """True when expression ``d`` holds an integer (a coefficient, a divisor) outside int64."""
    if type(d) is int:
        return not -D.INT64_MAX - 1 <= d <= D.INT64_MAX
    for m, c in d.terms:
        if not -D.INT64_MAX - 1 <= c <= D.INT64_MAX:
            return True
        for atom in m:
            if any(_coeff_overflow(x) for x in atom.args):
                return True
    return False


def cap(eng: Walker, d: D.Dim, ctx: NodeContext | None = None, what: str = "") -> D.Dim:
    """``d``, or a fresh symbol when its expression is larger than the cap (an info G016
    of the node saying so, where there is one)."""
    if type(d) is int or D.size(d) <= eng.max_expr_size:
        return d
    eng.capped += 1
    f = eng.fresh()
    if ctx is not None:
        msg = (
            f"{what}: an expression of size {D.size(d)} is past the cap of {eng.max_expr_size}"
            f" ({D.format(d)[:60]}...): given up as {D.format(f)}"
        )
        ctx.diag("info", codes.DIM_GIVEN_UP, msg)
    return f


def ranged(symbols: SymbolScope, f: Fact | None) -> Fact | None:
    """``f`` with the min/max its dims and values hold decided by the symbols' ranges."""
    if f is None or f.kind != "tensor" or (f.shape is None and f.value is None):
        return f
    simplify = symbols.simplify
    shape = None if f.shape is None else tuple(simplify(d) for d in f.shape)
    value = f.value
    if value is not None:
        value = tuple(simplify(v) if isinstance(v, D.Expr) else v for v in value)
    if shape == f.shape and value == f.value:
        return f
    return Fact(f.dtype, shape, value, f.kind, f.elem)


def capped(eng: Walker, outs: list[Fact | None], ctx: NodeContext | None = None) -> list[Fact | None]:
    """``outs`` bounded before they are stored: symbolic dims and shape values past the
    complexity cap become fresh symbols (an expression bomb stops growing at the first node
    past the cap), and an int dim or value that does not fit int64 (or an expression with
    such a coefficient) is an overflow: error E013, the dim a fresh symbol, the value
    unknown. No writer ever sees a number outside int64."""
    res = outs
    for i, f in enumerate(outs):
        if f is None:
            continue
        g = bounded(eng, f, ctx, i)
        if g is not f:
            if res is outs:
                res = list(outs)
            res[i] = g
    return res


def bounded(eng: Walker, f: Fact, ctx: NodeContext | None, i: int) -> Fact:
    """``f`` with what :func:`capped` bounds bounded (its element fact too), the diagnostics
    said; ``f`` itself when nothing changed."""
    shape, value, elem, dtype = f.shape, f.value, f.elem, f.dtype
    bad = None
    if dtype and dtype not in _DATA_TYPES:  # an element type taken from an attribute (Cast's ``to``)
        msg = f"output {i}: element type {show_number(dtype)} is not an ONNX type: left unknown"
        if ctx is not None:
            ctx.diag("error", codes.INVALID_NODE, msg)
        else:
            eng.diagnostics.append(Diagnostic("error", codes.INVALID_NODE, msg))
        dtype = 0
    if shape is not None and not all(type(d) is int and 0 <= d <= D.INT64_MAX for d in shape):
        out = []
        for d in shape:
            if type(d) is int:
                if not 0 <= d <= D.INT64_MAX:
                    bad = d if bad is None else bad
                    d = eng.fresh()
            elif _coeff_overflow(d):
                bad = d if bad is None else bad
                d = eng.fresh()
            else:
                d = cap(eng, d, ctx, f"output {i} dim {len(out)}")
            out.append(d)
        if tuple(out) != shape:
            shape = tuple(out)
            value = None
    if value is not None:
        vals = None
        for k, v in enumerate(value):
            if type(v) is int:
                if -D.INT64_MAX - 1 <= v <= _UINT64_MAX:
                    continue
                bad = v if bad is None else bad
                nv = None
            elif isinstance(v, D.Expr):
                if _coeff_overflow(v):
                    bad = v if bad is None else bad
                    nv = None
                else:
                    nv = cap(eng, v, ctx, f"output {i} value {k}")
                    if nv is v:
                        continue
            else:
                continue
            if vals is None:
                vals = list(value)
            vals[k] = nv
        if vals is not None:
            value = tuple(vals)
    if elem is not None:
        elem = bounded(eng, elem, ctx, i)
    if bad is not None:
        shown = show_number(bad)
        msg = f"output {i}: {shown} overflows int64: left unknown"
        if ctx is not None:
            ctx.diag("error", codes.INT64_OVERFLOW, msg)
        else:
            eng.diagnostics.append(Diagnostic("error", codes.INT64_OVERFLOW, msg))
    if shape is f.shape and value is f.value and elem is f.elem and dtype == f.dtype:
        return f
    return Fact(dtype, shape, value, f.kind, elem)
