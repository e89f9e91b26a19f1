"""Symbolic dim expressions (:class:`Expr`) in their one canonical form: construction, the
arithmetic (sums, products, floor division, modulo, min and max), sound interval bounds
(:func:`bounds`, :func:`lower_bound`), the symbols an expression holds and its text
(:func:`format`). The contract, and the rest of the algebra (parsing, evaluation,
substitution, comparison), is :mod:`shapeinfer.symbolic.dims`'s, which re-exports these names;
callers import that module."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Union

from shapeinfer.base.text import text as decoded

#: The largest value a dim (and any ONNX int64) may take.
INT64_MAX = 2**63 - 1

#: The largest value a dim (and any ONNX int64) may take.
INT64_MAX = 2**63 - 1


class Atom:
    """An indivisible factor of a monomial: a symbol or an opaque function application."""

    __slots__ = ("_hash", "args", "key", "kind", "name")

    def __init__(self, kind: str, name: str | None, args: tuple = ()) -> None:
        self.kind = kind  # "sym" | "floordiv" | "min" | "max"
        self.name = name
        self.args = args
        if kind == "sym":
            self.key = (0, name)
        else:
            self.key = (1, kind, tuple(_sortkey(a) for a in args))
        self._hash = hash((kind, name, args))

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Atom)
            and self._hash == other._hash
            and self.kind == other.kind
            and self.name == other.name
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Atom({_atom_text(self)})"


def _sortkey(d: Dim) -> tuple:
    if type(d) is int:
        return (0, d)
    return (1, d.sortkey)


def _mono_key(mono: tuple[Atom, ...]) -> tuple:
    return (-len(mono), tuple(a.key for a in mono))


class Expr:
    """A canonical symbolic expression: a sum of integer-coefficient monomials over atoms.

    Never constructed directly: use :func:`sym`, :func:`parse` or arithmetic on dims.
    """

    __slots__ = ("_hash", "_size", "_text", "sortkey", "terms")

    def __init__(self, terms: tuple) -> None:
        self.terms = terms  # ((mono, coeff), ...) sorted by _mono_key; mono = tuple of Atoms
        self._hash = hash(terms)
        self._text: str | None = None
        self._size: int | None = None
        self.sortkey = tuple((tuple(a.key for a in m), c) for m, c in terms)

    # Equality and hashing are structural on the canonical form.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Expr):
            return self._hash == other._hash and self.terms == other.terms
        return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Expr({format(self)!r})"

    def __str__(self) -> str:
        return format(self)

    def __add__(self, o: Dim) -> Dim:
        return add(self, o)

    __radd__ = __add__

    def __sub__(self, o: Dim) -> Dim:
        return sub(self, o)

    def __rsub__(self, o: Dim) -> Dim:
        return sub(o, self)

    def __mul__(self, o: Dim) -> Dim:
        return mul(self, o)

    __rmul__ = __mul__

    def __floordiv__(self, o: Dim) -> Dim:
        return floordiv(self, o)

    def __rfloordiv__(self, o: Dim) -> Dim:
        return floordiv(o, self)

    def __mod__(self, o: Dim) -> Dim:
        return mod(self, o)

    def __rmod__(self, o: Dim) -> Dim:
        return mod(o, self)

    def __neg__(self) -> Dim:
        return neg(self)

    def __pos__(self) -> Expr:
        return self


Dim = Union[int, Expr]  # noqa: UP007  (a runtime alias; X | Y needs both to be types)


# --------------------------------------------------------------------------- construction

#: The expression of each symbol name, built once and shared while it is here; cleared when
#: full, so that a process inferring many models keeps at most this many.
_SYMS: dict[str, Expr] = {}
_SYMS_SIZE = 1 << 14


def sym(name: str) -> Expr:
    """The expression consisting of the single symbol ``name`` (any string; ``bytes`` that are
    not valid UTF-8, as protobuf gives such a ``dim_param``, are decoded with escapes)."""
    if type(name) is bytes:
        name = decoded(name)
    e = _SYMS.get(name)
    if e is None:
        e = Expr((((Atom("sym", name),), 1),))
        if len(_SYMS) >= _SYMS_SIZE:
            _SYMS.clear()
        _SYMS[name] = e
    return e


def _atom_expr(atom: Atom) -> Expr:
    return Expr((((atom,), 1),))


def _terms(d: Dim) -> tuple:
    if type(d) is int:
        return (((), d),) if d else ()
    if isinstance(d, Expr):
        return d.terms
    if isinstance(d, bool) or not isinstance(d, int):
        raise TypeError(f"not a dim: {d!r}")
    return (((), int(d)),) if d else ()


def _make(tdict: dict) -> Dim:
    items = [(m, c) for m, c in tdict.items() if c]
    if not items:
        return 0
    if len(items) == 1 and items[0][0] == ():
        return items[0][1]
    items.sort(key=lambda mc: _mono_key(mc[0]))
    return Expr(tuple(items))


def _mono_mul(m1: tuple, m2: tuple) -> tuple:
    if not m1:
        return m2
    if not m2:
        return m1
    return tuple(sorted(m1 + m2, key=lambda a: a.key))


# --------------------------------------------------------------------------- arithmetic


def add(a: Dim, b: Dim) -> Dim:
    """``a + b``."""
    if type(a) is int and type(b) is int:
        return a + b
    d: dict = {}
    for m, c in _terms(a):
        d[m] = c
    for m, c in _terms(b):
        d[m] = d.get(m, 0) + c
    if len(d) >= 2:
        _merge_halves(d)
    return _make(d)


def _merge_halves(d: dict) -> None:
    """Rewrite in ``d`` (monomial -> coefficient) every pair ``c*(x//q) - c*(x//(2*q))`` for an
    int ``q > 0`` as ``c*((x + q)//(2*q))``: ``y - y//2`` is ``(y + 1)//2`` for ``y = x//q``, and
    floor divisions compose. A padded halving (Swin's patch merging, ``h//4 - h//8``) reads
    ``(h + 4)//8``, and the next stage's ``(h + 12)//16``."""
    halves = {}
    for m, c in d.items():
        if c and len(m) == 1 and m[0].kind == "floordiv" and type(m[0].args[1]) is int and m[0].args[1] > 0:
            halves[m[0].args] = (m, c)
    if len(halves) < 2:
        return
    for (x, q), (m, c) in list(halves.items()):
        pair = halves.get((x, 2 * q))
        if pair is None or d.get(m) != c or d.get(pair[0]) != -c:
            continue
        del d[m], d[pair[0]]
        for mm, cc in _terms(floordiv(add(x, q), 2 * q)):
            d[mm] = d.get(mm, 0) + c * cc


def neg(a: Dim) -> Dim:
    """``-a``."""
    if type(a) is int:
        return -a
    return Expr(tuple((m, -c) for m, c in a.terms))


def sub(a: Dim, b: Dim) -> Dim:
    """``a - b``."""
    if type(a) is int and type(b) is int:
        return a - b
    return add(a, neg(b))


def mul(a: Dim, b: Dim) -> Dim:
    """``a * b``."""
    if type(a) is int and type(b) is int:
        return a * b
    if type(b) is int:
        a, b = b, a
    if type(a) is int:
        if a == 0:
            return 0
        if a == 1:
            return b
        return Expr(tuple((m, c * a) for m, c in b.terms))
    d: dict = {}
    for m1, c1 in a.terms:
        for m2, c2 in b.terms:
            m = _mono_mul(m1, m2)
            d[m] = d.get(m, 0) + c1 * c2
    return _make(d)


def mono_div(m: tuple, by: tuple) -> tuple | None:
    """``m / by`` for monomials, or None when ``by`` does not divide ``m``."""
    if not by:
        return m
    rest = list(m)
    for a in by:
        try:
            rest.remove(a)
        except ValueError:
            return None
    return tuple(rest)


def exact_div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when the quotient is provably an exact integer expression, else None."""
    if type(b) is int:
        if b == 0:
            return None
        if type(a) is int:
            return a // b if a % b == 0 else None
        if any(c % b for _, c in a.terms):
            return None
        return Expr(tuple((m, c // b) for m, c in a.terms))
    if type(a) is int:
        return 0 if a == 0 else None
    if a == b:
        return 1
    # Multivariate division by leading terms (graded order); exact only if it leaves nothing.
    rem = dict(a.terms)
    bl_m, bl_c = b.terms[0]
    quot: dict = {}
    for _ in range(256):
        if not rem:
            return _make(quot)
        lm = min(rem, key=_mono_key)
        lc = rem[lm]
        qm = mono_div(lm, bl_m)
        if qm is None or lc % bl_c:
            return None
        qc = lc // bl_c
        quot[qm] = quot.get(qm, 0) + qc
        for m, c in b.terms:
            pm = _mono_mul(qm, m)
            v = rem.get(pm, 0) - qc * c
            if v:
                rem[pm] = v
            else:
                rem.pop(pm, None)
    return None


def floordiv(a: Dim, b: Dim) -> Dim:
    """``a // b`` with floor semantics. Raises ZeroDivisionError for ``b == 0``."""
    if type(b) is int:
        if b == 0:
            raise ZeroDivisionError("dim floor division by zero")
        if type(a) is int:
            return a // b
        if b < 0:
            a, b = neg(a), -b
        if b == 1:
            return a
        # a = b*q + r: nonconstant remainders keep their coefficient's sign (|r| < b), the
        # constant remainder lies in [0, b).
        q: dict = {}
        r: dict = {}
        for m, c in a.terms:
            if m:
                qc = -((-c) // b) if c < 0 else c // b
                rc = c - qc * b
            else:
                qc, rc = divmod(c, b)
            if qc:
                q[m] = qc
            if rc:
                r[m] = rc
        rest = _make(r)
        if type(rest) is int:  # 0 <= rest < b
            return _make(q)
        g = math.gcd(b, *(c for m, c in rest.terms if m))
        if g > 1:  # (g*x + c)//(g*k) == (x + c//g)//k: floor(y/k) == floor(floor(y)/k)
            rest, b = _make({m: c // g for m, c in rest.terms}), b // g
            if type(rest) is int:
                return add(_make(q), rest // b)
        if rest.terms[0][1] < 0:
            # floor(r/b) == -floor((b - 1 - r)/b): keep the numerator's leading coefficient positive
            return sub(_make(q), floordiv(add(neg(rest), b - 1), b))
        spread = _minmax_part(rest)
        if spread is not None:  # floor division by a positive int is monotone: it goes inside
            kind, args, c = spread
            parts = [floordiv(add(x, c), b) for x in args]
            return add(_make(q), dmax(*parts) if kind == "max" else dmin(*parts))
        nested = _nested_floordiv(rest)
        if nested is not None:
            x, p, e = nested
            return add(_make(q), floordiv(add(x, mul(p, e)), p * b))
        return add(_make(q), _decided(_atom_expr(Atom("floordiv", None, (rest, b)))))
    e = exact_div(a, b)
    if e is not None:
        return e
    common = _common_factor(a, b)
    if common is not None:
        a, b = common
        if type(b) is int:
            return floordiv(a, b)
    if b.terms[0][1] < 0:  # a // b == (-a) // (-b): keep the divisor's leading coefficient positive
        a, b = neg(a), neg(b)
    return _decided(_atom_expr(Atom("floordiv", None, (a, b))))


def _common_factor(a: Dim, b: Expr) -> tuple[Dim, Dim] | None:
    """``(a/f, b/f)`` for the largest positive factor ``f`` (an int content times a product of
    symbols, which are positive sizes) that divides every term of ``a`` and ``b``, when it is
    not 1: ``a//b == (a/f)//(b/f)``, so ``(24*batch*n)//(96*batch)`` is ``n//4``. None otherwise."""
    terms = _terms(a) + b.terms
    g = 0
    for _, c in terms:
        g = math.gcd(g, c)
    shared: list[Atom] | None = None
    for m, _ in terms:
        syms = [x for x in m if x.kind == "sym"]
        if shared is None:
            shared = syms
        else:
            keep = []
            for x in syms:
                if x in shared:
                    shared.remove(x)
                    keep.append(x)
            shared = keep
        if not shared and g == 1:
            return None
    f = Expr(((tuple(sorted(shared or (), key=lambda x: x.key)), g),)) if shared else g
    if f == 1:
        return None
    qa, qb = exact_div(a, f), exact_div(b, f)
    return None if qa is None or qb is None else (qa, qb)


def _minmax_part(rest: Expr) -> tuple[str, tuple, int] | None:
    """``(kind, args, c)`` when ``rest`` is ``max(args) + c`` (or ``min``) for an int ``c``:
    then ``rest // k`` is ``max((a + c)//k for a in args)`` for an int ``k > 0`` (a pool after a
    pool: ``max(h//2, 1)//2`` is ``max(h//4, 0)``, so ``h//4``)."""
    c = 0
    found = None
    for m, coef in rest.terms:
        if not m:
            c = coef
        elif found is None and coef == 1 and len(m) == 1 and m[0].kind in ("max", "min"):
            found = m[0]
        else:
            return None
    return None if found is None else (found.kind, found.args, c)


def _nested_floordiv(rest: Expr) -> tuple[Dim, int, Dim] | None:
    """``(x, p, e)`` when ``rest`` is ``x//p + e`` for an int ``p > 0`` and an ``e`` free of floor
    divisions; then ``(x//p + e) // q == (x + p*e) // (p*q)`` for every int ``q > 0`` (``x//p + e``
    is ``(x + p*e)//p``, and floor divisions by positive ints compose). So chains of strided
    windows collapse: ``((h + 1)//2 + 1)//2`` is ``(h + 3)//4``. None otherwise."""
    found = None
    for m, c in rest.terms:
        kinds = [a.kind == "floordiv" for a in m]
        if not any(kinds):
            continue
        if found is not None or c != 1 or len(m) != 1:
            return None
        x, p = m[0].args
        if type(p) is not int or p <= 0:
            return None
        found = (m, x, p)
    if found is None:
        return None
    m, x, p = found
    e = _make({mm: cc for mm, cc in rest.terms if mm != m})
    if type(e) is not int and any(a.kind != "sym" for mm, _ in e.terms for a in mm):
        return None  # min/max in e: keep the nesting (their bounds are read per atom)
    return x, p, e


def _decided(q: Expr) -> Dim:
    """A floor-division atom ``q`` whose value its operands' bounds fix (``2 // (8*h)`` is 0,
    ``min(s, 3) // 8`` is 0 for positive sizes) as that int; else ``q``."""
    lo, hi = bounds(q)
    return int(lo) if lo == hi and lo not in (INF, -INF) else q


def mod(a: Dim, b: Dim) -> Dim:
    """``a % b`` with the sign of ``b`` (Python / floor semantics)."""
    if type(a) is int and type(b) is int:
        return a % b
    return sub(a, mul(b, floordiv(a, b)))


#: Positive and negative infinity of :func:`bounds` (an unbounded side).
INF = float("inf")

#: The range of a symbol nobody constrained: a positive size.
DEFAULT_RANGE: tuple[int, int | None] = (1, None)

#: Prefix of the symbols that stand for dims nothing determined (a data-dependent count, a dim
#: past an op inference cannot see through): the symbolic scope draws them as ``unk_<n>``.
UNKNOWN_PREFIX = "unk_"

#: The range of such a symbol: an unknown dim may be 0 (NonZero or NMS may keep nothing).
UNKNOWN_RANGE: tuple[int, int | None] = (0, None)


def range_of(name: str, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> tuple[int, int | None]:
    """``name``'s range in ``ranges``; unconstrained, a positive size (:data:`DEFAULT_RANGE`), or
    for an unknown dim's symbol (``unk_<n>``) a size that may be 0 (:data:`UNKNOWN_RANGE`)."""
    r = ranges.get(name) if ranges else None
    if r is not None:
        return r
    return UNKNOWN_RANGE if name.startswith(UNKNOWN_PREFIX) else DEFAULT_RANGE


def _mul_ext(a: int | float, b: int | float) -> int | float:
    if a == 0 or b == 0:
        return 0
    return a * b


def _fdiv_ext(a: int | float, b: int | float) -> int | float:
    """Floor division for b > 0 (finite or inf) in the extended integers."""
    if b == INF:
        if a in (INF, -INF):  # dominated by another corner in every use
            return 0 if a > 0 else -1
        return 0 if a >= 0 else -1
    if a in (INF, -INF):
        return a
    return a // b


def bounds(d: Dim, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> tuple[int | float, int | float]:
    """Sound ``(lo, hi)`` of ``d`` (``-INF`` / ``INF`` where unbounded) for every binding of its
    symbols inside ``ranges`` (``SYM -> (lo, hi)``, hi None when unbounded; a symbol without one
    is a positive size, ``[1, inf)``). The one bounds analysis of the package: interval
    arithmetic over monomials, min/max and floor division; :mod:`shapeinfer.symbolic.intervals` builds
    its proofs and simplification on it."""
    if type(d) is int:
        return d, d
    if ranges is None:
        ranges = {}
    lo: int | float = 0
    hi: int | float = 0
    for m, c in d.terms:
        mlo: int | float = c
        mhi: int | float = c
        for atom in m:
            alo, ahi = _atom_bounds(atom, ranges)
            cands = (_mul_ext(mlo, alo), _mul_ext(mlo, ahi), _mul_ext(mhi, alo), _mul_ext(mhi, ahi))
            mlo, mhi = min(cands), max(cands)
        lo += mlo
        hi += mhi
    return lo, hi


def _atom_bounds(atom: Atom, ranges: Mapping[str, tuple[int, int | None]]) -> tuple[int | float, int | float]:
    if atom.kind == "sym":
        lo, hi = range_of(atom.name, ranges)
        return lo, (INF if hi is None else hi)
    if atom.kind == "floordiv":
        x, y = atom.args
        xlo, xhi = _refined(x, ranges)
        ylo, yhi = bounds(y, ranges)
        if ylo <= 0 <= yhi:
            return -INF, INF
        if yhi < 0:  # x // y == (-x) // (-y)
            xlo, xhi, ylo, yhi = -xhi, -xlo, -yhi, -ylo
        cands = (_fdiv_ext(xlo, ylo), _fdiv_ext(xlo, yhi), _fdiv_ext(xhi, ylo), _fdiv_ext(xhi, yhi))
        return min(cands), max(cands)
    ivs = [_refined(x, ranges) for x in atom.args]
    if atom.kind == "min":
        return min(i[0] for i in ivs), min(i[1] for i in ivs)
    return max(i[0] for i in ivs), max(i[1] for i in ivs)


def _refined(d: Dim, ranges: Mapping[str, tuple[int, int | None]]) -> tuple[int | float, int | float]:
    """:func:`bounds` of an atom's argument, its low end refined by :func:`lower_bound` where
    intervals leave it unbounded (``n//4 - n//8`` is at least 0: so ``max(min(n//4 - n//8, 3), 0)``
    is the min)."""
    lo, hi = bounds(d, ranges)
    if lo == -INF and type(d) is not int and not _polynomial(d):
        better = lower_bound(d, ranges)
        if better is not None:
            lo = better
    return lo, hi


def _polynomial(d: Expr) -> bool:
    """True when ``d`` has no floor division, min or max (the refinements have nothing to see)."""
    return all(atom.kind == "sym" for m, _ in d.terms for atom in m)


#: The refinements :func:`lower_bound` tries, in order, where intervals leave the bound below 1:
#: each ``refine(a, ranges) -> int | None``. They build on this algebra, so they live above it
#: (:mod:`shapeinfer.symbolic.lower_bounds`) and are registered with
#: :func:`register_lower_bound_refinements` when the :mod:`shapeinfer.symbolic` package is
#: imported, before any of its modules can be used.
_REFINEMENTS: tuple[Callable[[Expr, Mapping[str, tuple[int, int | None]] | None], int | None], ...] = ()


def register_lower_bound_refinements(*refinements: Callable) -> None:
    """Set the refinements :func:`lower_bound` tries, in order (replacing any set before)."""
    global _REFINEMENTS
    _REFINEMENTS = tuple(refinements)


#: lower_bound's refined results by (expression, the ranges of its symbols); cleared when full.
_LOWER: dict[tuple, int | float] = {}
_LOWER_SIZE = 1 << 15


def lower_bound(a: Dim, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> int | None:
    """A proven lower bound of ``a`` for all bindings of its symbols inside ``ranges`` (default:
    positive integers): the low end of :func:`bounds`, refined where that is below 1; None when
    unbounded below."""
    if type(a) is int:
        return a
    lo = bounds(a, ranges)[0]
    if lo < 1 and not _polynomial(a):  # maybe too weak where an atom is correlated with the rest
        key = (a, tuple(sorted((k, v) for k, v in ranges.items() if k in symbols(a)))) if ranges else (a,)
        known = _LOWER.get(key)
        if known is None:
            known = lo
            if not _REFINEMENTS:
                raise RuntimeError("lower_bound's refinements are not registered (import shapeinfer.symbolic)")
            for refine in _REFINEMENTS:
                better = refine(a, ranges)
                if better is not None and better > known:
                    known = better
                    if known >= 1:
                        break
            if len(_LOWER) >= _LOWER_SIZE:
                _LOWER.clear()
            _LOWER[key] = known
        lo = max(lo, known)
    return None if lo == -INF else int(lo)


def _minmax(kind: str, args: Iterable[Dim]) -> Dim:
    flat: list[Dim] = []
    for x in args:
        if isinstance(x, Expr) and len(x.terms) == 1 and x.terms[0][1] == 1:
            m = x.terms[0][0]
            if len(m) == 1 and m[0].kind == kind:
                flat.extend(m[0].args)
                continue
        flat.append(x)

    def worse(x: Dim, y: Dim) -> bool:  # x can be dropped in favour of y
        lb = lower_bound(sub(y, x) if kind == "max" else sub(x, y))
        return lb is not None and lb >= 0

    # Sorted first so that, of two args each provably no better than the other (equal
    # values, different forms), the same one survives whatever the argument order.
    flat.sort(key=_sortkey)
    out: list[Dim] = []
    for x in flat:
        if any(worse(x, y) for y in out):
            continue
        out = [y for y in out if not worse(y, x)]
        out.append(x)
    if not out:
        raise ValueError(f"{kind}() of no dims")
    if len(out) == 1:
        return out[0]
    out.sort(key=lambda d: (type(d) is int, _sortkey(d)))  # constants last: ``max(s, 8)``
    return _atom_expr(Atom(kind, None, tuple(out)))


def dmax(*args: Dim) -> Dim:
    """``max(args...)``."""
    if all(type(x) is int for x in args):
        return max(args)
    return _minmax("max", args)


def dmin(*args: Dim) -> Dim:
    """``min(args...)``."""
    if all(type(x) is int for x in args):
        return min(args)
    return _minmax("min", args)


# --------------------------------------------------------------------------- inspection


def _walk_atoms(d: Dim):
    if type(d) is int:
        return
    for m, _ in d.terms:
        for atom in m:
            yield atom
            for x in atom.args:
                yield from _walk_atoms(x)


def symbols(d: Dim) -> frozenset[str]:
    """The names of the symbols ``d`` depends on."""
    return frozenset(a.name for a in _walk_atoms(d) if a.kind == "sym")


def atom_kinds(d: Dim) -> frozenset[str]:
    """The kinds of the atoms ``d`` is built of (``sym``, ``min``, ``max``, ``floordiv``...)."""
    return frozenset(a.kind for a in _walk_atoms(d))


# --------------------------------------------------------------------------- text


#: Characters that make an opaque symbol's name (dim_param text this module could not read, such
#: as ``seq + foo(seq)``) read as an expression: such a name is parenthesised wherever it is not
#: the whole dim, so that ``2*(seq + foo(seq))`` does not print as ``2*seq + foo(seq)``.
_OPERATOR_CHARS = frozenset(" +-*/%(),<>=!&|^~")


def _is_plain(d: Dim) -> bool:
    """True when ``d`` formats as a single token (non-negative int or bare symbol/call)."""
    if type(d) is int:
        return d >= 0
    if len(d.terms) != 1:
        return False
    m, c = d.terms[0]
    if c != 1 or len(m) != 1 or m[0].kind == "floordiv":
        return False
    return m[0].kind != "sym" or _OPERATOR_CHARS.isdisjoint(m[0].name)


def _wrapped(d: Dim) -> str:
    t = format(d)
    return t if _is_plain(d) else f"({t})"


def _atom_text(atom: Atom) -> str:
    if atom.kind == "sym":
        name = atom.name
        return f"({name})" if not _OPERATOR_CHARS.isdisjoint(name) else name
    if atom.kind == "floordiv":
        return f"{_wrapped(atom.args[0])}//{_wrapped(atom.args[1])}"
    return f"{atom.kind}({', '.join(format(x) for x in atom.args)})"


def _mono_text(m: tuple, alone: bool) -> str:
    parts = []
    i = 0
    while i < len(m):
        j = i
        while j < len(m) and m[j] == m[i]:
            j += 1
        t = _atom_text(m[i])
        power = j - i
        if m[i].kind == "floordiv" and (not alone or power > 1 or len(m) > 1):
            t = f"({t})"
        parts.append(t if power == 1 else f"{t}**{power}")
        i = j
    return "*".join(parts)


def format(d: Dim) -> str:
    """Python-syntax text of ``d``: ``batch*seq``, ``seq + 1``, ``(seq + 1)//2``, ``max(s, 8)``."""
    if type(d) is int:
        return str(d)
    if d._text is not None:
        return d._text
    if len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1 and d.terms[0][0][0].kind == "sym":
        d._text = d.terms[0][0][0].name  # a lone symbol is its name, whatever it spells
        return d._text
    out = []
    for k, (m, c) in enumerate(d.terms):
        if not m:
            body, mag = str(abs(c)), None
        else:
            mag = abs(c)
            body = _mono_text(m, alone=((mag == 1 and c > 0) or (mag == 1 and k > 0)))
            if mag != 1:
                body = f"{mag}*{body}"
        if k == 0:
            out.append(f"-{body}" if c < 0 else body)
        else:
            out.append(f" - {body}" if c < 0 else f" + {body}")
    text = "".join(out)
    folded = _folded_text(d)
    d._text = folded if folded is not None and len(folded) < len(text) else text
    return d._text


def _folded_text(d: Expr) -> str | None:
    """``p + x//k`` (a polynomial ``p``, one floor division by an int ``k > 0``) as the one
    division ``(k*p + x)//k`` it equals, which :func:`format` writes where it is shorter:
    ``21*batch + batch//3`` reads ``(64*batch)//3``, ``(h + 15)//16 + 1`` reads ``(h + 31)//16``.
    None for any other expression."""
    found = None
    rest: dict = {}
    for m, c in d.terms:
        if len(m) == 1 and m[0].kind == "floordiv" and c == 1 and found is None:
            x, k = m[0].args
            if type(k) is not int or k <= 0:
                return None
            found = (x, k)
        elif any(a.kind != "sym" for a in m):
            return None
        else:
            rest[m] = c
    if found is None or not rest:
        return None
    x, k = found
    num = add(mul(k, _make(rest)), x)
    return f"{_wrapped(num)}//{k}"
