"""Integer ranges of symbolic dims: proofs and simplification over :mod:`shapeinfer.symbolic.dims`
expressions, on the package's one bounds analysis, :func:`shapeinfer.symbolic.dims.bounds`.

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

import itertools
import math
from collections.abc import Callable, Mapping

from shapeinfer.symbolic import dims as D

__all__ = [
    "DEFAULT_RANGE",
    "Range",
    "Ranges",
    "Stepped",
    "by_residue",
    "holds_eq",
    "holds_le",
    "interval",
    "monotone",
    "one_forces_one",
    "range_list",
    "residues_where",
    "simplify",
    "step_of",
    "threshold",
    "with_bounds",
]

Range = tuple[int, "int | None"]
Ranges = Mapping[str, Range]

#: The range of a symbol nobody constrained: a positive size.
DEFAULT_RANGE: Range = D.DEFAULT_RANGE


class Stepped(tuple):
    """A range whose symbol takes only every ``step``-th value from ``lo``: ``lo``, ``lo +
    step``, ... up to ``hi`` (None: no upper bound), so ``n % step == lo % step``. A 2-tuple
    ``(lo, hi)`` like every range (code that reads only the bounds reads it as one); ``step``
    and ``residue`` say the rest. ``hi`` is the last value the step reaches."""

    step: int

    def __new__(cls, lo: int, hi: int | None, step: int) -> Stepped:
        if step < 1:
            raise ValueError(f"a range's step is at least 1, got {step}")
        if hi is not None:
            hi = lo + (hi - lo) // step * step
        self = super().__new__(cls, (lo, hi))
        self.step = step
        return self

    @property
    def residue(self) -> int:
        return self[0] % self.step

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, other) and getattr(other, "step", 1) == self.step

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self[0], self[1], self.step))

    def __repr__(self) -> str:
        return f"Stepped({self[0]}, {self[1]}, {self.step})"

    def __reduce__(self):
        return (Stepped, (self[0], self[1], self.step))


def step_of(r: Range) -> int:
    """The step of range ``r`` (1 for a plain ``(lo, hi)``)."""
    return getattr(r, "step", 1)


def range_list(r: Range) -> list:
    """``r`` as JSON writes it: ``[lo, hi]``, with the step third where it is above 1."""
    step = step_of(r)
    return [r[0], r[1], step] if step != 1 else [r[0], r[1]]


def with_bounds(r: Range, lo: int, hi: int | None) -> Range:
    """``r`` narrowed to ``[lo, hi]``, keeping its step (``lo`` moved up to the next value the
    step reaches)."""
    step = step_of(r)
    if step == 1:
        return (lo, hi)
    lo += (r[0] - lo) % step  # the least value >= lo with r's residue
    if hi is not None and hi < lo:
        return (lo, hi)  # empty: a contradiction the caller reports
    return Stepped(lo, hi, step)


#: Prefix of the quotient symbol that stands for a stepped symbol inside this module.
_STEP_QUOTIENT = "__step_q_{}__"


def _quotients(symbols: frozenset[str], ranges: Ranges) -> tuple[dict, dict, dict] | None:
    """For the stepped symbols among ``symbols``: ``(forward, back, qranges)`` where ``forward``
    maps each to ``m*q + base`` (``q`` a quotient symbol of at least 1, every value of the
    symbol's range reached exactly once), ``back`` maps ``q`` to ``(n - base)//m`` and
    ``qranges`` is ``ranges`` with the quotients' ranges in place of the stepped ones. None when
    no symbol of ``symbols`` is stepped."""
    forward: dict[str, D.Dim] = {}
    back: dict[str, tuple[str, int, int]] = {}
    qranges = dict(ranges)
    for name in symbols:
        r = ranges.get(name)
        m = 1 if r is None else step_of(r)
        if m == 1:
            continue
        lo, hi = r
        q = _STEP_QUOTIENT.format(name)
        base = lo - m  # n = m*q + base with q >= 1: q = 1 is lo
        forward[name] = D.add(D.mul(m, D.sym(q)), base)
        back[q] = (name, m, base)
        del qranges[name]
        qranges[q] = (1, None if hi is None else (hi - base) // m)
    return (forward, back, qranges) if forward else None


def _back(d: D.Dim, back: dict) -> D.Dim:
    """``d`` over quotient symbols, written over the stepped symbols again: a quotient ``q`` of
    ``n = m*q + base`` is ``(n - base)//m``, and a term's coefficient is shared out among its
    quotients where it divides their steps, evenly (``16*q_h*q_w`` of ``h = 32*q_h``,
    ``w = 32*q_w`` reads ``(h//8)*(w//8)``: ``(g*(n - base))//m`` is exact)."""
    if type(d) is int or not back.keys() & D.symbols(d):
        return d
    quot = {q: D.floordiv(D.sub(D.sym(n), base), m) for q, (n, m, base) in back.items()}
    total: D.Dim = 0
    for mono, c in d.terms:
        qs = [back[a.name] for a in mono if a.kind == "sym" and a.name in back]
        rest = D.substitute(D.Expr(((tuple(a for a in mono if not (a.kind == "sym" and a.name in back)), 1),)), quot)
        shares = [1] * len(qs)
        left = c
        for p in _primes(math.lcm(*(m for _, m, _ in qs)) if qs else 1):
            while left % p == 0:
                room = [(m // shares[i], i) for i, (_, m, _) in enumerate(qs) if (m // shares[i]) % p == 0]
                if not room:
                    break
                shares[max(room)[1]] *= p
                left //= p
        term: D.Dim = D.mul(left, rest)
        for (n, m, base), g in zip(qs, shares):
            term = D.mul(term, D.floordiv(D.mul(g, D.sub(D.sym(n), base)), m))
        total = D.add(total, term)
    return total


def _primes(n: int) -> list[int]:
    """The prime factors of ``n > 0``, each once, ascending."""
    out, p = [], 2
    while p * p <= n:
        if n % p == 0:
            out.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return [*out, n] if n > 1 else out


def _stepped_view(d: D.Dim, ranges: Ranges) -> tuple[D.Dim, Ranges, dict] | None:
    """``(d over quotients, their ranges, back)`` when ``d`` holds a stepped symbol, else None."""
    if type(d) is int:
        return None
    q = _quotients(D.symbols(d), ranges)
    if q is None:
        return None
    forward, back, qranges = q
    return D.substitute(d, forward), qranges, back


def _ival(d: D.Dim, ranges: Ranges) -> tuple[int | float, int | float]:
    return D.bounds(d, ranges)


def _finite(v: int | float) -> int | None:
    return None if v in (D.INF, -D.INF) else int(v)


def interval(d: D.Dim, ranges: Ranges | None = None) -> tuple[int | None, int | None]:
    """A sound interval ``(lo, hi)`` of ``d`` over the symbols' ``ranges`` (None: unbounded)."""
    view = _stepped_view(d, ranges or {})
    if view is not None:
        return interval(view[0], view[1])
    lo, hi = _ival(d, ranges or {})
    return _finite(lo), _finite(hi)


def holds_le(a: D.Dim, b: D.Dim, ranges: Ranges | None = None) -> bool:
    """True when ``a <= b`` is proven for every binding inside ``ranges``."""
    if D.compare(a, b) in (-1, 0):
        return True
    lo = D.lower_bound(D.sub(b, a))  # over all sizes (every range is within them): ``1 <= seq``
    if lo is not None and lo >= 0:
        return True
    view = _stepped_view(D.sub(b, a), ranges or {})
    if view is not None:
        return holds_le(0, view[0], view[1])
    diff = D.sub(simplify(b, ranges), simplify(a, ranges))
    if type(diff) is int:
        return diff >= 0
    lo = D.lower_bound(diff, ranges or {})
    return lo is not None and lo >= 0


def holds_eq(a: D.Dim, b: D.Dim, ranges: Ranges | None = None) -> bool:
    """True when ``a == b`` is proven for every binding inside ``ranges``."""
    if a == b:
        return True
    sa, sb = simplify(a, ranges), simplify(b, ranges)
    if sa == sb:
        return True
    diff = D.sub(sa, sb)
    lo, hi = interval(diff, ranges)
    if lo == hi == 0:
        return True
    return _zero_past_threshold(diff, ranges or {})


#: The thresholds :func:`_zero_past_threshold` tries: below one, every value is checked.
_THRESHOLDS = (16, 128, 1024)


def _zero_past_threshold(d: D.Dim, ranges: Ranges) -> bool:
    """True when ``d``, of one symbol ``n`` and holding a min or max, is 0 at every ``n`` in its
    range: checked value by value below a threshold ``T`` past which the ranges decide every
    min and max (``simplify`` under ``n >= T`` gives 0). So Swin's clamped window length
    ``max(x - 3, 0) + max(x - max(x - 3, 0), 0)`` is ``x``: the two forms differ only in the
    min/max pieces, which settle once ``x >= 3``."""
    if type(d) is int:
        return d == 0
    names = D.symbols(d)
    if len(names) != 1 or all(atom.kind != "max" and atom.kind != "min" for m, _ in d.terms for atom in m):
        return False
    (name,) = names
    r = D.range_of(name, ranges)
    lo, hi = r
    step = step_of(r)
    values = itertools.count(lo, step)
    v = next(values)
    for top in _THRESHOLDS:
        end = max(top, lo) if hi is None else min(max(top, lo), hi + 1)
        while v < end:  # every value below the threshold, on the range's step
            try:
                if D.evaluate(d, {name: v}) != 0:
                    return False
            except ZeroDivisionError:
                return False
            v = next(values)
        if hi is not None and v > hi:
            return True
        if simplify(d, {**ranges, name: with_bounds(r, v, hi)}) == 0:  # from v on, the ranges decide
            return True
    return False


def simplify(d: D.Dim, ranges: Ranges | None = None) -> D.Dim:
    """``d`` with every ``min``/``max`` the ranges decide replaced by the winning argument (and a
    floor division whose quotient the ranges fix replaced by it); equal to ``d`` inside them."""
    if type(d) is int or not ranges:
        return d
    view = _stepped_view(d, ranges)
    if view is not None:  # decided over the quotients, where the step makes divisions exact
        return _back(simplify(view[0], view[1]), view[2])
    total: D.Dim = 0
    for m, c in d.terms:
        v: D.Dim = c
        for atom in m:
            v = D.mul(v, _simplify_atom(atom, ranges))
        total = D.add(total, v)
    return total


def _simplify_atom(atom: D.Atom, ranges: Ranges) -> D.Dim:
    if atom.kind == "sym":
        lo, hi = D.range_of(atom.name, ranges)
        return lo if lo == hi else D.sym(atom.name)
    args = [simplify(x, ranges) for x in atom.args]
    if atom.kind == "floordiv":
        if args[1] == 0:  # a divisor the ranges make 0: no value there, nothing to simplify
            return D.Expr((((atom,), 1),))
        r = D.floordiv(args[0], args[1])
        lo, hi = interval(r, ranges)
        return lo if lo is not None and lo == hi else r

    # keep the arguments that can still win: drop x when another y is provably as good (of two
    # provably equal ones, the earlier stays)
    def better(y: D.Dim, x: D.Dim) -> bool:
        diff = D.sub(y, x) if atom.kind == "min" else D.sub(x, y)
        if _ival(diff, ranges)[1] <= 0:
            return True
        lo = D.lower_bound(D.neg(diff), ranges) if isinstance(diff, D.Expr) else None
        return lo is not None and lo >= 0

    keep = [
        x
        for i, x in enumerate(args)
        if not any(j != i and better(y, x) and (j < i or not better(x, y)) for j, y in enumerate(args))
    ] or args
    return D.dmin(*keep) if atom.kind == "min" else D.dmax(*keep)


def monotone(d: D.Dim, name: str, ranges: Ranges | None = None) -> int | None:
    """The direction in which ``d`` moves with the symbol ``name`` alone (its other symbols held
    fixed): 1 non-decreasing, -1 non-increasing, 0 constant, None not shown. Read from the
    structure: sums of same-direction terms, floor division by a positive int, min and max of
    same-direction arguments, a product of factors whose bounds over ``ranges`` are non-negative."""
    if type(d) is int or name not in D.symbols(d):
        return 0
    ranges = ranges or {}
    total = 0
    for m, c in d.terms:
        direction = 1 if c > 0 else -1
        moving = [atom for atom in m if name in D.symbols(D.Expr((((atom,), 1),)))]
        if not moving:
            continue
        if len(m) > 1:  # a product: monotone when every factor is >= 0 and the moving ones agree
            for atom in m:
                if D.bounds(D.Expr((((atom,), 1),)), ranges)[0] < 0:
                    return None
        for atom in moving:
            ad = _atom_monotone(atom, name, ranges)
            if ad is None:
                return None
            direction *= ad
            if ad == 0:
                break
        if direction == 0:
            continue
        if total and direction != total:
            return None
        total = direction
    return total


def _atom_monotone(atom: D.Atom, name: str, ranges: Ranges) -> int | None:
    if atom.kind == "sym":
        return 1 if atom.name == name else 0
    if atom.kind == "floordiv":
        x, k = atom.args
        if type(k) is not int or k == 0:
            return None
        inner = monotone(x, name, ranges)
        return None if inner is None else inner * (1 if k > 0 else -1)
    total = 0
    for x in atom.args:
        ad = monotone(x, name, ranges)
        if ad is None or (ad and total and ad != total):
            return None
        total = total or ad
    return total


#: How many values of a symbol :func:`one_forces_one` checks one by one at most.
_ONES_CHECKED = 64


def one_forces_one(a: D.Dim, b: D.Dim, ranges: Ranges | None = None) -> bool:
    """True when ``a == 1`` implies ``b == 1`` at every binding inside ``ranges`` (vacuously when
    ``a`` is never 1): then a broadcast of ``a`` against ``b`` runs only where they are equal.
    Proven for ``a`` of one symbol, monotone in it, with ``b`` over that symbol alone: the values
    where ``a`` is 1 form one interval, on which ``b`` is checked (value by value, or at its ends
    where ``b`` is monotone). False means "not proven"."""
    ranges = ranges or {}
    lo, hi = interval(a, ranges)
    if (lo is not None and lo > 1) or (hi is not None and hi < 1):
        return True
    names = D.symbols(a)
    if len(names) != 1 or not D.symbols(b) <= names:
        return False
    (name,) = names
    if monotone(a, name, ranges) != 1:
        return False
    slo, shi = D.range_of(name, ranges)
    try:
        first = threshold(a, name, 1, slo, shi)
        past = None if first is None else threshold(a, name, 2, first, shi)  # where a first exceeds 1
    except ZeroDivisionError:
        return False
    if first is None:
        return True
    last = (_SEARCH_TOP if shi is None else shi) if past is None else past - 1
    if last < first or D.evaluate(a, {name: first}) != 1:
        return True  # a jumps over 1
    try:
        if last - first < _ONES_CHECKED:
            return all(D.evaluate(b, {name: v}) == 1 for v in range(first, last + 1))
        if monotone(b, name, ranges) is None:
            return False
        return D.evaluate(b, {name: first}) == 1 and D.evaluate(b, {name: last}) == 1
    except ZeroDivisionError:
        return False


#: The largest value :func:`threshold` searches.
_SEARCH_TOP = 1 << 62


def threshold(d: D.Dim, name: str, at_least: int, lo: int, hi: int | None) -> int | None:
    """For ``d`` non-decreasing in its one symbol ``name``: the least value ``v`` in
    ``[lo, hi]`` with ``d(v) >= at_least``, found by bisection; None when none is (or when it
    would lie beyond ``2**62``)."""
    top = _SEARCH_TOP if hi is None else hi
    if lo > top or D.evaluate(d, {name: top}) < at_least:
        return None
    while lo < top:
        mid = (lo + top) // 2
        if D.evaluate(d, {name: mid}) >= at_least:
            top = mid
        else:
            lo = mid + 1
    return lo


#: The largest modulus :func:`by_residue` splits a symbol by.
MAX_MODULUS = 8

#: The names of the quotient symbols inside :func:`by_residue`: the case's own, at least 1 like
#: every symbol the algebra simplifies with, and the common one the cases are compared in.
_CASE = "__residue_case__"
_QUOTIENT = "__residue_quotient__"


def _divisors(d: D.Dim, name: str, out: set[int]) -> None:
    if type(d) is int:
        return
    for m, _ in d.terms:
        for atom in m:
            if atom.kind == "floordiv":
                x, k = atom.args
                if type(k) is int and k > 1 and name in D.symbols(x):
                    out.add(k)
            for x in atom.args:
                _divisors(x, name, out)


#: The largest modulus :func:`residues_where` splits a symbol by.
RESIDUE_MODULUS = 1024


def residues_where(kind: str, a: D.Dim, b: D.Dim, name: str, m: int, ranges: Ranges | None = None) -> set[int] | None:
    """The residues ``r`` of ``name`` modulo ``m`` at which ``a == b`` (``kind`` ``equality``) or
    ``a % b == 0`` (``divisibility``, ``b`` an int) holds for EVERY value of ``name`` with that
    residue inside its range, when at each residue it holds everywhere or nowhere; None when
    that is not so (at some residue it depends on more than the residue), when the divisions of
    ``name`` do not all divide ``m``, or ``m`` is above :data:`RESIDUE_MODULUS`. ``a`` and ``b``
    hold ``name`` alone."""
    if m > RESIDUE_MODULUS or (kind == "divisibility" and (type(b) is not int or b == 0)):
        return None
    found: set[int] = set()
    for d in (a, b):
        _divisors(d, name, found)
    if any(m % k for k in found):
        return None
    lo, hi = D.range_of(name, ranges)
    case = D.sym(_CASE)
    out: set[int] = set()
    diff = D.sub(a, b) if kind == "equality" else a
    for r in range(m):
        qlo = -((r - lo) // m)
        qhi = None if hi is None else (hi - r) // m
        if qhi is not None and qlo > qhi:
            continue
        v = D.substitute(diff, {name: D.add(D.mul(m, D.add(case, qlo - 1)), r)})
        if not _polynomial(v):
            return None
        if kind == "equality":
            if type(v) is not int:
                return None
            holds = v == 0
        else:
            k = abs(b)
            seen = {D.evaluate(v, {_CASE: c}) % k == 0 for c in range(1, k + 1)}  # periodic in c
            if len(seen) != 1:
                return None
            holds = seen.pop()
        if holds:
            out.add(r)
    return out


def by_residue(
    f: Callable[[list[D.Dim], Ranges], D.Dim | None], args: list[D.Dim], name: str, ranges: Ranges | None = None
) -> D.Dim | None:
    """``f(args, ranges)`` decided case by case over ``name``'s residue modulo the floor divisors
    of ``name`` inside ``args``: with ``name = m*q + r`` for each ``r`` in ``[0, m)`` the
    divisions become exact (``(h + 1)//2`` is ``q`` or ``q + 1``), so ``f`` can decide what it
    could not for ``name`` at large. When every case's result is a polynomial ``f0(q) + c*r``
    for one int ``c``, the answer is ``f0(name//m) + c*(name - m*(name//m))``, equal to ``f`` at
    every value of ``name`` inside its range; else (a case None or not a polynomial, or ``m``
    above :data:`MAX_MODULUS`) None. Each case is decided with a quotient symbol of at least 1,
    as the algebra assumes of every symbol."""
    ranges = dict(ranges or {})
    found: set[int] = set()
    for a in args:
        _divisors(a, name, found)
    if not found:
        return None
    m = math.lcm(*found)
    if m > MAX_MODULUS:
        return None
    lo, hi = D.range_of(name, ranges)
    case, q = D.sym(_CASE), D.sym(_QUOTIENT)
    results: dict[int, D.Dim] = {}
    for r in range(m):
        qlo = -((r - lo) // m)  # ceil((lo - r) / m): name = m*qq + r with qq >= qlo
        qhi = None if hi is None else (hi - r) // m
        if qhi is not None and qlo > qhi:
            continue  # no value of name has this residue inside its range
        # qq = case + qlo - 1 with case >= 1: the algebra takes every symbol to be a positive
        # size, so the case's symbol must be one (qq itself may be 0)
        case_ranges = {**ranges, _CASE: (1, None if qhi is None else qhi - qlo + 1)}
        case_ranges.pop(name, None)
        value = D.add(D.mul(m, D.add(case, qlo - 1)), r)
        case_args = [D.substitute(a, {name: value}) for a in args]
        out = f(case_args, case_ranges)
        if out is None:
            return None
        out = simplify(out, case_ranges)
        if not _polynomial(out):
            return None  # a min/max/division of the case symbol: renaming it could re-decide it
        results[r] = D.substitute(out, {_CASE: D.add(q, 1 - qlo)})  # exact on polynomials
    if not results:
        return None
    r0 = min(results)
    base, c = results[r0], None
    for r, v in results.items():
        if r == r0:
            continue
        diff = D.sub(v, base)
        if type(diff) is not int or diff % (r - r0):
            return None
        step = diff // (r - r0)
        if c is not None and step != c:
            return None
        c = step
    c = c or 0
    quotient = D.floordiv(D.sym(name), m)
    base = D.substitute(D.sub(base, c * r0), {_QUOTIENT: quotient})
    return D.add(base, D.mul(c, D.sub(D.sym(name), D.mul(m, quotient))))


def _polynomial(d: D.Dim) -> bool:
    """True when ``d`` is a polynomial in its symbols (no floor division, min or max)."""
    return type(d) is int or all(atom.kind == "sym" for m, _ in d.terms for atom in m)
