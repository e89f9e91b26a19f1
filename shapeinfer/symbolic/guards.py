"""The guard ledger: conditions on input symbols under which the inferred shapes hold.

Knows nothing of ONNX. A :class:`Guard` is one condition with its kind and the nodes that
imposed it:

- ``equality``: ``lhs == rhs`` (broadcasting, unify, an op contract);
- ``bound``: ``lhs <= rhs`` (a ``min`` taken as one of its sides, a fixed-size table);
- ``divisibility``: ``lhs % rhs == 0`` (a Reshape ``-1`` whose quotient is not provably exact,
  a pool/concat that only lines up then);
- ``broadcast``: ``lhs == 1 or lhs == rhs`` (a dim broadcast against one that is never 1
  alone, which inference takes as the result: an unknown dim against a known one, a stride-16
  level ``(h + 15)//16`` against an upsampled ``2*((h + 31)//32)``);
- ``mutual_broadcast``: ``lhs == rhs or lhs == 1 or rhs == 1`` (two dims either of which may be
  1 alone, broadcast against each other: the result is the larger).

An equality of the form ``min(x, c) == x`` is recorded as the bound ``x <= c`` (``max``: ``x >=
c`` as ``c <= x``), and ``c*(x//c) == x`` as the divisibility ``x % c == 0``: the same condition,
said plainly. :meth:`Ledger.simplified` merges bounds on one symbol (the tightest stays, with
the nodes of every guard it implies) and drops guards the ranges already prove.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.base.text import text
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.intervals import (
    Range,
    Ranges,
    holds_eq,
    holds_le,
    interval,
    monotone,
    range_list,
    residues_where,
    simplify,
    step_of,
    threshold,
    with_bounds,
)

__all__ = ["Contradiction", "Guard", "Ledger", "check", "contradiction_diagnostics", "contradictions"]


@dataclass
class Guard:
    """One condition: ``kind`` is ``equality`` / ``bound`` / ``divisibility``; ``nodes`` are
    the names (or ``op #index``) of the nodes that imposed it, in the order met."""

    kind: str
    lhs: D.Dim
    rhs: D.Dim
    nodes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The condition in the dims syntax: ``seq <= 512``, ``H % 32 == 0``, ``a == b``; a
        bound ``x - y <= 0`` as ``x <= y``, and ``min(u, v, ...) <= 0`` as the alternatives it
        holds by (``u <= 0 or v <= 0``, an argument ``max(w, -w)`` as ``w == 0``), each said so."""
        a, b = D.format(self.lhs), D.format(self.rhs)
        if self.kind == "equality":
            return f"{a} == {b}"
        if self.kind == "bound":
            return _bound_text(self.lhs, self.rhs)
        if self.kind == "broadcast":
            return f"{a} == 1 or {a} == {b}"
        if self.kind == "mutual_broadcast":
            return f"{a} == {b} or {a} == 1 or {b} == 1"
        return f"{_wrap(self.lhs)} % {_wrap(self.rhs)} == 0"

    @property
    def symbols(self) -> frozenset[str]:
        return D.symbols(self.lhs) | D.symbols(self.rhs)

    def key(self) -> tuple:
        return (self.kind, self.lhs, self.rhs)

    def to_dict(self) -> dict:
        """The guard as JSON data; a node name read as bytes (not UTF-8) decoded, escaped."""
        return {"kind": self.kind, "text": self.text, "nodes": [text(n) for n in self.nodes]}


def _off(a: D.Dim, b: D.Dim) -> D.Dim:
    """``|a - b|``: 0 exactly where ``a == b``."""
    return D.absolute(D.sub(a, b))


def violation(kind: str, lhs: D.Dim, rhs: D.Dim) -> D.Dim:
    """``m`` with ``m <= 0`` exactly where the guard ``lhs <kind> rhs`` holds, as one bound
    (a divisibility's divisor is not 0: a guard that says it is, is never taken)."""
    if kind == "bound":
        return D.sub(lhs, rhs)
    if kind == "equality":
        return _off(lhs, rhs)
    if kind == "divisibility":
        return _off(D.mod(lhs, rhs), 0)
    if kind == "broadcast":
        return D.dmin(_off(lhs, 1), _off(lhs, rhs))
    if kind == "mutual_broadcast":
        return D.dmin(_off(lhs, rhs), _off(lhs, 1), _off(rhs, 1))
    raise ValueError(f"unknown guard kind {kind!r}")


def _signed_sides(d: D.Dim) -> tuple[D.Dim, D.Dim]:
    """``(p, q)`` with ``d == p - q``: ``p`` the terms of positive coefficient, ``q`` the others
    negated, the constant on ``q``'s side."""
    if type(d) is int:
        return 0, -d
    pos = tuple(t for t in d.terms if t[0] and t[1] > 0)
    neg = tuple((m, -c) for m, c in d.terms if m and c < 0)
    const = sum(c for m, c in d.terms if not m)
    p = D.Expr(pos) if pos else 0  # (a subsequence of canonical terms is canonical)
    q = D.Expr(neg) if neg else 0
    return p, D.sub(q, const)


def _bound_text(lhs: D.Dim, rhs: D.Dim) -> str:
    """``lhs <= rhs`` said plainly (see :attr:`Guard.text`)."""
    if lhs == 1:
        args = _abs_args(rhs)
        if args is not None:
            return _sides_text(args, "!=")  # 1 <= max(w, -w): w is not 0
    zero_side = lhs if rhs == 0 else (rhs if lhs == 0 else None)
    if zero_side is None or type(zero_side) is int:
        return f"{D.format(lhs)} <= {D.format(rhs)}"
    d = zero_side if rhs == 0 else D.neg(zero_side)  # d <= 0
    atom = _minmax_atom(d)
    if atom is not None and atom.kind == "min":
        return " or ".join(_alternative_text(x) for x in atom.args)
    return _alternative_text(d)


def _alternative_text(d: D.Dim) -> str:
    """``d <= 0`` as ``p <= q`` (``p == q`` for ``max(w, -w) <= 0``, ``a % b == 0`` for the
    remainder ``a - b*(a//b)`` by a positive ``b``)."""
    args = _abs_args(d)
    if args is not None:
        return _sides_text(args, "==")
    rem = _remainder_args(d)
    if rem is not None:
        return f"{_wrap(rem[0])} % {rem[1]} == 0"
    p, q = _signed_sides(d)
    if p == 0:  # every symbol negative: the constant moves left (3 - n <= 0 reads 3 <= n)
        c = -q if type(q) is int else -sum(coef for m, coef in q.terms if not m)
        p, q = c, D.add(q, c)
    g = _common_factor(p, q)
    if g > 1:  # 2*n <= 2 reads n <= 1 (the sides are integers: dividing keeps the condition)
        p, q = D.exact_div(p, g), D.exact_div(q, g)
    return f"{D.format(p)} <= {D.format(q)}"


def _remainder_args(d: D.Dim) -> tuple[D.Dim, int] | None:
    """``(a, b)`` when ``d`` is ``a - b*(a//b)`` for an int ``b >= 2`` (``a % b``, never
    negative); else None."""
    if type(d) is int:
        return None
    for mono, c in d.terms:
        if len(mono) == 1 and mono[0].kind == "floordiv" and type(mono[0].args[1]) is int:
            a, b = mono[0].args
            if b >= 2 and c == -b and D.sub(d, D.mod(a, b)) == 0:
                return a, b
    return None


def _common_factor(p: D.Dim, q: D.Dim) -> int:
    """The gcd of every coefficient (constants too) of ``p`` and ``q``; 0 when both are 0."""
    g = 0
    for side in (p, q):
        if type(side) is int:
            g = math.gcd(g, side)
        else:
            for _, coef in side.terms:
                g = math.gcd(g, coef)
    return g


def _abs_args(d: D.Dim) -> tuple | None:
    """``(w, -w)`` when ``d`` is ``max(w, -w)``, |w|; else None."""
    atom = _minmax_atom(d)
    if atom is not None and atom.kind == "max" and len(atom.args) == 2 and D.add(*atom.args) == 0:
        return atom.args
    return None


def _sides_text(args: tuple, op: str) -> str:
    """``w op 0`` for ``args`` ``(w, -w)`` said as ``p op q`` with ``w == p - q``, from the
    argument that has a positive symbol (``h == 2``, not ``0 == h - 2``)."""
    p, q = _signed_sides(args[0])
    if p == 0:
        p, q = _signed_sides(args[1])
    return f"{D.format(p)} {op} {D.format(q)}"


def _wrap(d: D.Dim) -> str:
    t = D.format(d)
    return t if type(d) is int or t.isidentifier() else f"({t})"


def check(g: Guard, binding: Mapping[str, int]) -> bool | None:
    """Whether ``g`` holds at ``binding``; None when the binding leaves one of its symbols free."""
    try:
        a, b = D.evaluate(g.lhs, binding), D.evaluate(g.rhs, binding)
    except (KeyError, ZeroDivisionError):
        return None
    if g.kind == "equality":
        return a == b
    if g.kind == "bound":
        return a <= b
    if g.kind == "broadcast":
        return a in (1, b)
    if g.kind == "mutual_broadcast":
        return a == b or 1 in (a, b)
    return b != 0 and a % b == 0


def _minmax_atom(d: D.Dim) -> D.Atom | None:
    if isinstance(d, D.Expr) and len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1:
        atom = d.terms[0][0][0]
        if atom.kind in ("min", "max"):
            return atom
    return None


def _divisibility(a: D.Dim, b: D.Dim) -> tuple[D.Dim, D.Dim] | None:
    """``(x, c)`` when ``a - b`` is ``±(x % c)``: then ``a == b`` says ``x % c == 0``."""
    diff = D.sub(a, b)
    if type(diff) is int:
        return None
    for m, _ in diff.terms:
        for atom in m:
            if atom.kind == "floordiv":
                x, c = atom.args
                r = D.mod(x, c)
                if diff == r or diff == D.neg(r):
                    return x, c
    return None


def split_equality(a: D.Dim, b: D.Dim) -> list[tuple[str, D.Dim, D.Dim]]:
    """The guards ``a == b`` amounts to, said plainly (see the module docstring)."""
    for x, y in ((a, b), (b, a)):
        atom = _minmax_atom(x)
        if atom is not None and y in atom.args:
            rest = [z for z in atom.args if z != y]
            if atom.kind == "min":
                return [("bound", y, z) for z in rest]
            return [("bound", z, y) for z in rest]
    div = _divisibility(a, b)
    if div is not None:
        return [("divisibility", div[0], div[1])]
    return [("equality", a, b)]


def _never_is(d: D.Dim, v: int) -> bool:
    """True when ``d`` provably never equals ``v`` (its interval excludes it)."""
    lo, hi = interval(d)
    return (lo is not None and lo > v) or (hi is not None and hi < v)


def narrow_broadcast(kind: str, a: D.Dim, b: D.Dim) -> tuple[str, D.Dim, D.Dim]:
    """A broadcast guard with the alternatives that never hold left out: ``a == 1 or a == b``
    is ``a == b`` where ``a`` is never 1 and ``a == 1`` where ``a`` never equals ``b``
    (``seq == 1 or seq == seq + 1`` reads ``seq == 1``); a mutual broadcast whose side is never
    1 is a broadcast of the other side, one whose sides are never equal is ``a == 1 or b == 1``
    (a bound of a ``min``, said as its alternatives), and its sides are in text order."""
    if kind == "mutual_broadcast":
        if _never_is(a, 1):
            kind, a, b = "broadcast", b, a
        elif _never_is(b, 1):
            kind = "broadcast"
        elif _never_is(D.sub(a, b), 0):
            a, b = sorted((a, b), key=D.format)
            one_a, one_b = D.sub(a, 1), D.sub(b, 1)
            return "bound", D.dmin(D.absolute(one_a), D.absolute(one_b)), 0
        else:
            a, b = sorted((a, b), key=D.format)  # one text whatever the operands' order
            return kind, a, b
    if _never_is(a, 1):
        return "equality", a, b
    if _never_is(D.sub(a, b), 0):
        return "equality", a, 1
    return kind, a, b


class Ledger:
    """Guards in the order they were imposed, one per condition (nodes merged)."""

    def __init__(self) -> None:
        self._guards: dict[tuple, Guard] = {}

    def __len__(self) -> int:
        return len(self._guards)

    def __iter__(self):
        return iter(self._guards.values())

    def add(self, kind: str, lhs: D.Dim, rhs: D.Dim, node: str | None = None) -> None:
        """Record one guard (equalities are split as :func:`split_equality` says, broadcasts
        narrowed as :func:`narrow_broadcast` says)."""
        if kind in ("broadcast", "mutual_broadcast"):
            kind, lhs, rhs = narrow_broadcast(kind, lhs, rhs)
        parts = split_equality(lhs, rhs) if kind == "equality" else [(kind, lhs, rhs)]
        for k, a, b in parts:
            if k == "bound":
                if D.compare(a, b) in (-1, 0):
                    continue  # always true
                a, b = normal_bound(a, b)
            if k == "divisibility":
                if type(b) is int and type(a) is not int:  # 3*n % 6 == 0 reads n % 2 == 0
                    g = abs(b)
                    for _, coef in a.terms:
                        g = math.gcd(g, coef)
                    a, b = D.exact_div(a, g), abs(b) // g
                if D.exact_div(a, b) is not None or b in (1, -1):
                    continue
            g = self._guards.get((k, a, b))
            if g is None:
                g = self._guards[(k, a, b)] = Guard(k, a, b)
            if node and node not in g.nodes:
                g.nodes.append(node)

    def ranges(
        self, user: Ranges | None, symbols: Iterable[str], guards: Iterable[Guard] | None = None
    ) -> dict[str, Range]:
        """Each symbol's range: the user's (default ``[1, inf)``; for a fresh symbol, an unknown
        dim's, which may be 0: :func:`~shapeinfer.symbolic.dims.range_of`) tightened by bound
        guards between the symbol and an int (of ``guards``, by default the ledger's)."""
        out = {s: D.range_of(s, user) for s in symbols}
        for g in self._guards.values() if guards is None else guards:
            if g.kind != "bound":
                continue
            name = lone_symbol(g.lhs)
            if name is not None and type(g.rhs) is int:
                r = out.get(name) or D.range_of(name, user)
                out[name] = with_bounds(r, r[0], g.rhs if r[1] is None else min(r[1], g.rhs))
            name = lone_symbol(g.rhs)
            if name is not None and type(g.lhs) is int:
                r = out.get(name) or D.range_of(name, user)
                out[name] = with_bounds(r, max(r[0], g.lhs), r[1])
        return out

    def simplified(self, user: Ranges | None = None, symbols: Iterable[str] = ()) -> list[Guard]:
        """The guards left once bounds on one symbol are merged (the tightest stays, with the
        nodes of those it implies) and guards the ranges prove are dropped."""
        user = dict(user or {})
        syms = set(symbols)
        guards = []
        for g in self._guards.values():
            syms |= g.symbols
            if g.kind == "bound":  # 3 <= samples//10 reads 30 <= samples
                lhs, rhs = as_symbol_bound(g.lhs, g.rhs, user)
                if lhs is not g.lhs or rhs is not g.rhs:
                    g = Guard("bound", lhs, rhs, list(g.nodes))
            guards.append(g)
        ranges = self.ranges(user, syms, guards)
        out: list[Guard] = []
        merged: dict[tuple, Guard] = {}
        for g in guards:
            if g.kind == "bound":
                name, side = lone_symbol(g.lhs), "hi"
                if name is None or type(g.rhs) is not int:
                    name, side = lone_symbol(g.rhs), "lo"
                    if type(g.lhs) is not int:
                        name = None
                if name is not None:
                    lo, hi = ranges[name]
                    ulo, uhi = D.range_of(name, user)
                    tight = hi if side == "hi" else lo
                    user_tight = uhi if side == "hi" else ulo
                    if user_tight is not None and (tight == user_tight):
                        continue  # the user's range already says it
                    key = (name, side)
                    m = merged.get(key)
                    if m is None:
                        lhs, rhs = (D.sym(name), tight) if side == "hi" else (tight, D.sym(name))
                        m = merged[key] = Guard("bound", lhs, rhs)
                        out.append(m)
                    m.nodes.extend(x for x in g.nodes if x not in m.nodes)
                    continue
            out.append(g)
        final = []
        for g in out:
            if g in merged.values():
                final.append(g)
                continue
            narrowed = {k: v for k, v in ranges.items()}
            if g.kind == "bound" and holds_le(g.lhs, g.rhs, narrowed):
                continue
            if g.kind in ("equality", "broadcast", "mutual_broadcast") and holds_eq(g.lhs, g.rhs, narrowed):
                continue  # (a broadcast whose sides are equal holds too)
            if g.kind == "divisibility" and type(g.rhs) is int:
                lo, hi = interval(g.lhs, narrowed)
                if lo is not None and lo == hi and lo % g.rhs == 0:
                    continue
            final.append(g)
        return _by_residue(final, ranges)


def _floor_divisors(d: D.Dim, out: set[int]) -> None:
    if type(d) is int:
        return
    for m, _ in d.terms:
        for atom in m:
            if atom.kind == "floordiv" and type(atom.args[1]) is int:
                out.add(abs(atom.args[1]))
            for x in atom.args:
                _floor_divisors(x, out)


def _by_residue(guards: list[Guard], ranges: Ranges) -> list[Guard]:
    """``guards`` with the equalities and divisibilities of one symbol that only its residue
    decides said as the one residue they leave, where they leave one: YOLO's feature-pyramid
    equalities ``2*((h + 31)//32) == (h + 15)//16``, ... at each level together say ``h % 32 ==
    0`` (one guard, with the nodes of all). Guards of several symbols, or that depend on more
    than a residue, stay as they are."""
    by_symbol: dict[str, list[Guard]] = {}
    for g in guards:
        if g.kind in ("equality", "divisibility") and len(g.symbols) == 1:
            by_symbol.setdefault(next(iter(g.symbols)), []).append(g)
    out = list(guards)
    for name, group in by_symbol.items():
        divisors: set[int] = set()
        for g in group:
            _floor_divisors(g.lhs, divisors)
            _floor_divisors(g.rhs, divisors)
            if g.kind == "divisibility" and type(g.rhs) is int:
                divisors.add(abs(g.rhs))
        divisors.discard(0)
        if not divisors:
            continue
        m = math.lcm(*divisors)
        left: set[int] | None = set(range(m))
        for g in group:
            where = residues_where(g.kind, g.lhs, g.rhs, name, m, ranges)
            if where is None:
                left = None
                break
            left &= where
        if left is None or not left or (len(group) == 1 and group[0].kind == "divisibility"):
            continue
        if len(left) == 1:
            (r,) = left
            lhs, k = (D.sym(name) if r == 0 else D.sub(D.sym(name), r)), m
        else:  # a floor division's parity (or other residue) may say it: (h + 15)//16 % 2 == 0
            found = _as_division_residue(group, name, m, left, ranges)
            if found is None:
                continue
            lhs, k = found
        merged = Guard("divisibility", lhs, k, [x for g in group for x in g.nodes])
        merged.nodes = list(dict.fromkeys(merged.nodes))
        at = out.index(group[0])
        out = [g for g in out if g not in group]
        out.insert(min(at, len(out)), merged)
    return out


def _as_division_residue(
    group: list[Guard], name: str, m: int, where: set[int], ranges: Ranges
) -> tuple[D.Dim, int] | None:
    """``(x//k, j)`` for a floor division ``x//k`` of ``name`` in ``group`` and a divisor ``j``
    of ``m`` such that ``x//k % j == 0`` holds at exactly the residues ``where`` (modulo ``m``):
    a YOLO neck of maxpool/conv k3 s2 p1 levels runs where ``h % 32`` is 0 or 31, which is
    ``((h + 1)//2) % 16 == 0``."""
    atoms: list[D.Dim] = []
    for g in group:
        for side in (g.lhs, g.rhs):
            if type(side) is int:
                continue
            for mono, _ in side.terms:
                for atom in mono:
                    e = D.Expr((((atom,), 1),))
                    if atom.kind == "floordiv" and e not in atoms:
                        atoms.append(e)
    for e in atoms:
        for j in [j for j in range(2, m + 1) if m % j == 0]:
            if residues_where("divisibility", e, j, name, m, ranges) == where:
                return e, j
    return None


def normal_bound(a: D.Dim, b: D.Dim) -> tuple[D.Dim, D.Dim]:
    """``a <= b`` as ``e <= c`` (or ``c <= e``) with the int ``c`` alone on its side, the
    symbolic side's leading coefficient positive and its coefficients' common factor divided
    out: ``seq - 1 <= 1023`` reads ``seq <= 1024``."""
    d = D.sub(a, b)
    if type(d) is int:
        return a, b
    c = sum(coef for m, coef in d.terms if not m)
    e = D.sub(d, c)  # e + c <= 0
    g = 0
    for _, coef in e.terms:
        g = math.gcd(g, coef)
    if e.terms[0][1] > 0:  # e <= -c  ->  e/g <= floor(-c/g)
        return D.exact_div(e, g), (-c) // g
    # -e >= c  ->  (-e)/g >= ceil(c/g)
    return -((-c) // g), D.exact_div(D.neg(e), g)


def lone_symbol(d: D.Dim) -> str | None:
    if isinstance(d, D.Expr) and len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1:
        atom = d.terms[0][0][0]
        if atom.kind == "sym":
            return atom.name
    return None


def monotone_bound(side: D.Dim, c: int, upper: bool, ranges: Ranges | None = None) -> tuple[str, int, bool] | None:
    """``side <= c`` (``upper``) or ``c <= side``, for a ``side`` with one symbol in which it is
    monotone, as the bound of that symbol it amounts to inside the symbol's range (default
    ``[1, inf)``): ``1 <= (s//10 + 1)//2`` is ``s >= 10``. Returns ``(name, value, upper)``
    (the symbol is at most / at least ``value``), or None (several symbols, not shown monotone,
    or no value of the range satisfies it)."""
    names = D.symbols(side)
    if len(names) != 1:
        return None
    (name,) = names
    ranges = ranges or {}
    direction = monotone(side, name, ranges)
    if not direction:
        return None
    f = side if direction > 0 else D.neg(side)
    if direction < 0:
        c, upper = -c, not upper  # side <= c  <=>  -side >= -c
    lo, hi = D.range_of(name, ranges)
    if upper:  # f(v) <= c: v lies below the first value where f exceeds c
        first = threshold(f, name, c + 1, lo, hi)
        return None if first is None or first <= lo else (name, first - 1, True)
    first = threshold(f, name, c, lo, hi)
    return None if first is None else (name, first, False)


def as_symbol_bound(lhs: D.Dim, rhs: D.Dim, ranges: Ranges | None = None) -> tuple[D.Dim, D.Dim]:
    """``lhs <= rhs`` as a bound of its one symbol where it is monotone in it (``3 <=
    samples//10`` reads ``30 <= samples``), the same condition inside the symbol's range; else
    as given."""
    a, b = normal_bound(lhs, rhs)
    for side, other, upper in ((a, b, True), (b, a, False)):
        if type(other) is int and lone_symbol(side) is None:
            bound = monotone_bound(side, other, upper, ranges)
            if bound is not None:
                name, value, upper = bound
                return (D.sym(name), value) if upper else (value, D.sym(name))
    return lhs, rhs


#: Nodes named in a contradiction's message before "and N more".
_SHOWN_NODES = 3


def _never(g: Guard, ranges: Ranges) -> bool:
    """True when no binding of ``g``'s symbols inside ``ranges`` (default ``[1, inf)``)
    satisfies ``g``: proven with sound intervals, so False means "not proven impossible"."""
    a, b = simplify(g.lhs, ranges), simplify(g.rhs, ranges)

    def excludes(d: D.Dim, v: int) -> bool:
        lo, hi = interval(d, ranges)
        return (lo is not None and lo > v) or (hi is not None and hi < v)

    if g.kind == "equality":
        return excludes(D.sub(a, b), 0)
    if g.kind == "bound":
        lo, _ = interval(D.sub(a, b), ranges)
        return lo is not None and lo > 0
    if g.kind == "broadcast":
        return excludes(a, 1) and excludes(D.sub(a, b), 0)
    if g.kind == "mutual_broadcast":
        return excludes(a, 1) and excludes(b, 1) and excludes(D.sub(a, b), 0)
    if type(b) is not int or b == 0:  # divisibility by an expression: not decided here
        return False
    lo, hi = interval(a, ranges)
    return lo is not None and hi is not None and hi // abs(b) * abs(b) < lo  # no multiple in [lo, hi]


def _range_text(name: str, r: Range) -> str:
    """``seq=513:``, ``seq=1:512``; a one-value range (a binding) as ``seq=600``."""
    lo, hi = r
    if lo == hi:
        return f"{name}={lo}"
    step = step_of(r)
    return f"{name}={lo}:{'' if hi is None else hi}" + (f":{step}" if step != 1 else "")


def _nodes_text(nodes: list[str]) -> str:
    if not nodes:
        return "no node recorded"
    shown = ", ".join(nodes[:_SHOWN_NODES])
    more = len(nodes) - _SHOWN_NODES
    return f"{'node' if len(nodes) == 1 else 'nodes'} {shown}" + (f" and {more} more" if more > 0 else "")


@dataclass
class Contradiction:
    """Guards that no input inside the ranges can satisfy: the model cannot run there.

    ``guards``: the guard, or the bounds on one symbol that cannot hold together, each with the
    nodes that imposed it. ``ranges``: the caller's ranges that rule them out (``SYM -> (lo,
    hi)``); empty when the guards fail for every size (an input shape that makes the model
    invalid, such as ``seq + 1 == seq``).
    """

    guards: list[Guard]
    ranges: dict[str, Range] = field(default_factory=dict)

    def _said(self) -> tuple[str, str, str]:
        """(the guards with their nodes, "the guard(s)", "never holds" / "cannot all hold")."""
        said = "; ".join(f"{g.text} (from {_nodes_text(g.nodes)})" for g in self.guards)
        one = len(self.guards) == 1
        return said, "the guard" if one else "the guards", "never holds" if one else "cannot all hold"

    @property
    def message(self) -> str:
        """One line naming the ranges, the guards and the nodes that imposed them."""
        said, what, how = self._said()
        if self.ranges:
            given = ", ".join(_range_text(k, v) for k, v in self.ranges.items())
            if all(lo == hi for lo, hi in self.ranges.values()):  # bindings
                return f"the value {given} contradicts {what} {said}: the model cannot run there"
            return f"the range {given} contradicts {what} {said}: the model cannot run at any size in the range"
        return f"{what} {said} {how}: the model cannot run at any input size"

    def message_at(self, given: str) -> str:
        """The message of guards that fail at every size once some sizes are given (``given``:
        ``height=1``, the input shapes): they rule out those sizes, not every size."""
        said, what, how = self._said()
        return f"{what} {said} {how} at {given}: the model cannot run there"

    def to_dict(self) -> dict:
        return {
            "guards": [g.to_dict() for g in self.guards],
            "ranges": {k: range_list(v) for k, v in self.ranges.items()},
            "message": self.message,
        }


def contradictions(ledger: Ledger, user: Ranges | None, symbols: Iterable[str] = ()) -> list[Contradiction]:
    """The guards of ``ledger`` that no binding of the input ``symbols`` inside the ``user``
    ranges (default ``[1, inf)``) satisfies: each guard alone, and the bounds on one symbol
    together (``seq <= 100`` and ``200 <= seq``). A guard that fails for every size comes with
    no range; one that only the user's ranges rule out names them. Sound: an interval proof, so
    a listed contradiction is real (given the guards), and some may be missed.
    """
    user = dict(user or {})
    out: list[Contradiction] = []
    ruled: set[str] = set()  # symbols whose bounds a contradiction already names
    for g in ledger:
        if _never(g, {}):
            out.append(Contradiction([g]))
        elif user and _never(g, user):
            out.append(Contradiction([g], {k: user[k] for k in sorted(g.symbols) if k in user}))
        else:
            continue
        if g.kind == "bound":
            ruled |= g.symbols
    said = {id(g) for c in out for g in c.guards}
    syms = set(symbols)
    for g in ledger:
        syms |= g.symbols
    narrowed = ledger.ranges(user, syms)

    def tightest(name: str) -> tuple[list[Guard], dict[str, Range]]:
        """The bounds that give ``name`` its narrowed range: a guard's on each side, else the
        user's range."""
        lo, hi = narrowed[name]
        upper = [g for g in ledger if g.kind == "bound" and lone_symbol(g.lhs) == name and g.rhs == hi]
        lower = [g for g in ledger if g.kind == "bound" and lone_symbol(g.rhs) == name and g.lhs == lo]
        given = {name: user[name]} if name in user and not (upper and lower) else {}
        return lower[:1] + upper[:1], given

    for name, (lo, hi) in sorted(narrowed.items()):
        if hi is None or lo <= hi or name in ruled:
            continue
        bounds, given = tightest(name)
        out.append(Contradiction(bounds, given))
    # a guard the bounds on its symbols rule out (seq <= 512 and seq == 600): the set is
    # unsatisfiable because the narrowed ranges follow from those bounds and the user's ranges
    for g in ledger:
        if id(g) in said or not g.symbols or _is_symbol_bound(g):
            continue
        if any(narrowed[k][1] is not None and narrowed[k][0] > narrowed[k][1] for k in g.symbols):
            continue  # an empty range: said above
        if not _never(g, {k: narrowed[k] for k in g.symbols}):
            continue
        bounds: list[Guard] = []
        given: dict[str, Range] = {}
        for k in sorted(g.symbols):
            b, r = tightest(k)
            bounds += b
            given.update(r)
        out.append(Contradiction([*bounds, g], given))
    return out


def _is_symbol_bound(g: Guard) -> bool:
    """``x <= c`` or ``c <= x`` with ``x`` one symbol and ``c`` an int: what narrows a range."""
    if g.kind != "bound":
        return False
    return (lone_symbol(g.lhs) is not None and type(g.rhs) is int) or (
        lone_symbol(g.rhs) is not None and type(g.lhs) is int
    )


#: The diagnostic code of a contradiction (an error: the model cannot run in the ranges).
CONTRADICTION = codes.UNSATISFIABLE_GUARD


def contradiction_diagnostics(
    ledger: Ledger,
    user: Ranges | None,
    symbols: Iterable[str] = (),
    overridden: Iterable[str] = (),
    pinned: Mapping[str, int] | None = None,
) -> list[Diagnostic]:
    """One ``G015`` error per :func:`contradictions` entry. ``overridden``: the graph inputs
    whose shapes the caller gave (``--input-shape``); ``pinned``: the symbols the run took as
    those values (a binding, a range of one value). Either can make a guard fail at every size
    left (``2 == 1`` once ``height`` is 1): its message then names them instead of saying the
    model cannot run at any input size."""
    given = [f"{k}={v}" for k, v in (pinned or {}).items()]
    names = ", ".join(overridden)
    if names:
        given.append(f"the input shapes given for {names}")
    out = []
    for c in contradictions(ledger, user, symbols):
        message = c.message if c.ranges or not given else c.message_at(", ".join(given))
        out.append(Diagnostic("error", CONTRADICTION, message))
    return out
