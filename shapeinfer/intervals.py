"""Integer ranges of symbolic dims: proofs and simplification over :mod:`shapeinfer.dims`
expressions, on the package's one bounds analysis, :func:`shapeinfer.dims.bounds`.

Knows nothing of ONNX. A *range* of a symbol is ``(lo, hi)`` with ints and ``hi`` None when
unbounded; a symbol without one lies in ``[1, inf)`` (dims are positive sizes).

Contract:

- :func:`interval` returns ``(lo, hi)`` such that for every binding of the symbols inside their
  ranges, ``lo <= evaluate(d) <= hi``; ``None`` stands for minus infinity (``lo``) or plus
  infinity (``hi``). The interval may be wider than the true set of values, never narrower.
- :func:`simplify` rewrites the ``min``/``max`` (and floor division) parts of an expression
  that the ranges decide: ``min(seq, 512)`` is ``seq`` when ``seq <= 512`` in range. The
  result equals ``d`` at every binding inside the ranges.
- :func:`holds_le` / :func:`holds_eq` prove ``a <= b`` / ``a == b`` over the ranges (False
  means "not proven", not "false").
"""

from __future__ import annotations

from collections.abc import Mapping

from shapeinfer import dims as D

__all__ = ["DEFAULT_RANGE", "Range", "Ranges", "holds_eq", "holds_le", "interval", "simplify"]

Range = tuple[int, "int | None"]
Ranges = Mapping[str, Range]

#: The range of a symbol nobody constrained: a positive size.
DEFAULT_RANGE: Range = D.DEFAULT_RANGE


def _ival(d: D.Dim, ranges: Ranges) -> tuple[int | float, int | float]:
    return D.bounds(d, ranges)


def _back(v: int | float) -> int | None:
    return None if v in (D.INF, -D.INF) else int(v)


def interval(d: D.Dim, ranges: Ranges | None = None) -> tuple[int | None, int | None]:
    """A sound interval ``(lo, hi)`` of ``d`` over the symbols' ``ranges`` (None: unbounded)."""
    lo, hi = _ival(d, ranges or {})
    return _back(lo), _back(hi)


def holds_le(a: D.Dim, b: D.Dim, ranges: Ranges | None = None) -> bool:
    """True when ``a <= b`` is proven for every binding inside ``ranges``."""
    if D.compare(a, b) in (-1, 0):
        return True
    _, hi = _ival(D.sub(simplify(a, ranges), simplify(b, ranges)), ranges or {})
    return hi <= 0


def holds_eq(a: D.Dim, b: D.Dim, ranges: Ranges | None = None) -> bool:
    """True when ``a == b`` is proven for every binding inside ``ranges``."""
    if a == b:
        return True
    sa, sb = simplify(a, ranges), simplify(b, ranges)
    if sa == sb:
        return True
    lo, hi = _ival(D.sub(sa, sb), ranges or {})
    return lo == hi == 0


def simplify(d: D.Dim, ranges: Ranges | None = None) -> D.Dim:
    """``d`` with every ``min``/``max`` the ranges decide replaced by the winning argument (and a
    floor division whose quotient the ranges fix replaced by it); equal to ``d`` inside them."""
    if type(d) is int or not ranges:
        return d
    total: D.Dim = 0
    for m, c in d.terms:
        v: D.Dim = c
        for atom in m:
            v = D.mul(v, _simplify_atom(atom, ranges))
        total = D.add(total, v)
    return total


def _simplify_atom(atom: D.Atom, ranges: Ranges) -> D.Dim:
    if atom.kind == "sym":
        lo, hi = ranges.get(atom.name, DEFAULT_RANGE)
        return lo if lo == hi else D.sym(atom.name)
    args = [simplify(x, ranges) for x in atom.args]
    if atom.kind == "floordiv":
        r = D.floordiv(args[0], args[1])
        lo, hi = interval(r, ranges)
        return lo if lo is not None and lo == hi else r

    # keep the arguments that can still win: drop x when another y is provably as good (of two
    # provably equal ones, the earlier stays)
    def better(y: D.Dim, x: D.Dim) -> bool:
        diff = D.sub(y, x) if atom.kind == "min" else D.sub(x, y)
        return _ival(diff, ranges)[1] <= 0

    keep = [
        x
        for i, x in enumerate(args)
        if not any(j != i and better(y, x) and (j < i or not better(x, y)) for j, y in enumerate(args))
    ] or args
    return D.dmin(*keep) if atom.kind == "min" else D.dmax(*keep)
