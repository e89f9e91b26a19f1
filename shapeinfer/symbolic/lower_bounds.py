"""The refinements of :func:`~shapeinfer.symbolic.dims.lower_bound` past interval arithmetic:
a lower bound through one term's max/min argument, through ``y*(x//y)``, by the residue cases of
one symbol, and through the remainders of floor divisions. Registered with the algebra when the
:mod:`shapeinfer.symbolic` package is imported (see
:func:`~shapeinfer.symbolic.expr.register_lower_bound_refinements`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from shapeinfer.symbolic.dims import (
    INF,
    Dim,
    Expr,
    add,
    bounds,
    lower_bound,
    mul,
    range_of,
    sub,
    substitute,
    sym,
    symbols,
)
from shapeinfer.symbolic.expr import mono_div, register_lower_bound_refinements


def _lower_bound_by_argument(a: Expr, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> int | None:
    """A lower bound of ``a`` through one term ``c*max(g1, g2, ...)`` with ``c > 0`` (or
    ``c*min(...)`` with ``c < 0``): that term is at least ``c*gi`` for every argument, so ``a`` is
    at least the rest plus ``c*gi``, bounded with the rest (``max(x, 10) - x >= 0``,
    ``max(d - 1, 0) + 1 - d >= 0``). The best over the arguments of the first such term; None
    when ``a`` has none."""
    for m, c in a.terms:
        if len(m) != 1 or not ((c > 0 and m[0].kind == "max") or (c < 0 and m[0].kind == "min")):
            continue
        rest = sub(a, Expr(((m, c),)))
        best = -INF
        for g in m[0].args:
            e = add(rest, mul(c, g))
            lo = bounds(e, ranges)[0]
            if lo == -INF and isinstance(e, Expr):
                r = _lower_bound_by_remainder(e, ranges)
                lo = -INF if r is None else r
            best = max(best, lo)
        return None if best == -INF else int(best)
    return None


def _lower_bound_by_modulo(a: Expr, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> int | None:
    """A lower bound of ``a`` through one term ``c*y*(x//y)``, ``y`` a monomial that is at
    least 1: ``y*(x//y)`` is ``x - r`` with ``0 <= r <= y - 1``, so ``a`` is at least the rest
    plus ``c*x`` (``c < 0``) or ``c*x - c*(y - 1)`` (``c > 0``). torch's roll writes
    ``Mod(3, H)`` as ``3 - H*(3//H)``: at least 0, and at most ``H - 1``. None when ``a`` has no
    such term."""
    for m, c in a.terms:
        for atom in m:
            if atom.kind != "floordiv" or type(atom.args[1]) is int:
                continue
            x, y = atom.args
            if len(y.terms) != 1 or y.terms[0][1] != 1:
                continue
            rest_mono = mono_div(m, (atom,))
            if rest_mono is None or sorted(a_.key for a_ in rest_mono) != sorted(a_.key for a_ in y.terms[0][0]):
                continue
            ylo = lower_bound(y, ranges)
            if ylo is None or ylo < 1:
                continue
            rest = sub(a, Expr(((m, c),)))
            e = add(rest, mul(c, x)) if c < 0 else add(rest, sub(mul(c, x), mul(c, sub(y, 1))))
            return lower_bound(e, ranges)
    return None


#: The largest modulus :func:`_lower_bound_by_cases` splits a symbol by.
CASES_MODULUS = 64

#: The name of the quotient symbol in :func:`_lower_bound_by_cases` (at least 1, as every symbol).
_CASE = "__case__"


def _int_divisors(d: Dim, name: str, out: set[int]) -> bool:
    """Add to ``out`` every int divisor of a floor division whose numerator holds ``name``;
    False when a division by an expression holds it, in its numerator or its divisor (cases
    cannot make that exact, and a divisor ``n - 2*(n//2)`` is 0 in half of them)."""
    if type(d) is int:
        return True
    for m, _ in d.terms:
        for atom in m:
            if atom.kind == "floordiv" and name in symbols(atom.args[0]) | symbols(atom.args[1]):
                k = atom.args[1]
                if type(k) is not int:
                    return False
                out.add(abs(k))
            if not all(_int_divisors(x, name, out) for x in atom.args):
                return False
    return True


def _lower_bound_by_cases(a: Expr, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> int | None:
    """A lower bound of ``a``, an expression of one symbol ``n``, through the residue of ``n``
    modulo the divisors of its floor divisions (their lcm at most :data:`CASES_MODULUS`): with
    ``n = m*(c + q0 - 1) + r`` for each residue ``r`` (``c >= 1``, ``q0`` the least quotient
    inside ``n``'s range) every division of ``n`` is exact, so the bound of each case sees what
    the divisions share (``n//4 - n//8`` is at least 1 for ``n >= 4``: ``q + [r >= 4]`` with
    ``q >= 1`` where ``r < 4``). The least over the cases; None when ``a`` has several symbols,
    a division by an expression, or a larger modulus."""
    names = symbols(a)
    if len(names) != 1 or _CASE in names:
        return None
    (name,) = names
    found: set[int] = set()
    if not _int_divisors(a, name, found) or not found:
        return None
    m = math.lcm(*found)
    if m > CASES_MODULUS or m == 1:
        return None
    lo, hi = range_of(name, ranges)
    best: int | float = INF
    case = sym(_CASE)
    for r in range(m):
        q0 = -((r - lo) // m)  # the least q with m*q + r >= lo
        q1 = None if hi is None else (hi - r) // m
        if q1 is not None and q0 > q1:
            continue
        v = substitute(a, {name: add(mul(m, add(case, q0 - 1)), r)})
        best = min(best, bounds(v, {_CASE: (1, None if q1 is None else q1 - q0 + 1)})[0])
        if best == -INF:
            return None
    return None if best in (INF, -INF) else int(best)


#: The names standing for divisions' remainders in :func:`_lower_bound_by_remainder`.
_REMAINDER = "__remainder_{}__"

#: How many floor divisions :func:`_lower_bound_by_remainder` replaces at most.
_REMAINDER_STEPS = 6


def _lower_bound_by_remainder(a: Expr, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> int | None:
    """A lower bound of ``a`` through ``x//k == (x - r)/k`` with ``0 <= r < k``: for a term
    ``c*(x//k)`` (an int ``k > 0``), ``k*a`` is ``c*(x - r)`` plus ``k`` times the rest, exactly,
    with ``r`` a new symbol in ``[0, k - 1]``; repeated on the divisions inside ``x``, so nested
    divisions cancel against the symbols they divide (``seq - seq//2 >= 1``,
    ``seq - 3*(seq//3) >= 0``, ``s - 2*(((s//10 + 1)//2 - 1)//2) >= 1``), which interval
    arithmetic alone cannot see. An atom that also occurs inside another atom or a product keeps
    its own interval there (sound, only less precise). The best bound over the steps; None when
    ``a`` has no such term or no step bounds it."""
    scaled: Dim = a
    scale = 1
    rem_ranges: dict[str, tuple[int, int | None]] = dict(ranges or {})
    best: int | float = -INF
    for step in range(_REMAINDER_STEPS):
        if type(scaled) is int:
            break
        found = None
        for m, c in scaled.terms:
            if len(m) == 1 and m[0].kind == "floordiv":
                x, k = m[0].args
                if type(k) is int and k > 0:
                    found = (m, c, x, k)
                    break
        if found is None:
            break
        m, c, x, k = found
        name = _REMAINDER.format(step)
        rest = sub(scaled, Expr(((m, c),)))
        scaled = add(mul(c, sub(x, sym(name))), mul(k, rest))
        scale *= k
        rem_ranges[name] = (0, k - 1)
        lo = bounds(scaled, rem_ranges)[0]
        if lo != -INF:
            best = max(best, -((-int(lo)) // scale))  # ceil(lo / scale): a is an integer
            if best >= 1:
                break
    return None if best == -INF else int(best)


register_lower_bound_refinements(
    _lower_bound_by_remainder,
    _lower_bound_by_argument,
    _lower_bound_by_modulo,
    _lower_bound_by_cases,
)
