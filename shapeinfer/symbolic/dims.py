"""Symbolic dimensions: a small integer algebra that knows nothing of ONNX.

A *dim* is either a Python ``int`` or an :class:`Expr`, a symbolic expression over named
symbols built from sums, products, integer coefficients, floor division, ceil division,
modulo, min and max. Symbols stand for positive integers (tensor dimensions; a zero-size
dim is written as the literal 0), except a symbol of an unknown dim (``unk_<n>``, which the
symbolic scope draws), which may be 0 (:func:`range_of`).

Contract:

- Every expression has one canonical form. Two dims are equal (``==``) exactly when their
  canonical forms are equal, and ``hash`` agrees with ``==``. A symbolic expression that
  simplifies to a constant is returned as a plain ``int``; an :class:`Expr` never equals an
  ``int``.
- Ceil division and modulo are expressed through floor division
  (``ceildiv(a, b) == -((-a) // b)``, ``a % b == a - b*(a // b)``), so they share its
  canonical form.
- :func:`format` writes Python syntax over symbol names and :func:`parse` reads it back:
  ``parse(format(e)) == e`` for expressions over identifier-named symbols (and powers of an
  atom up to ``s**64``; a higher power reads back as one opaque symbol). Text that is not
  such an expression (``"batch size"``, ``"N/A"``) parses as one opaque symbol.
- :func:`evaluate` gives the integer value under a binding of every symbol.
- :func:`exact_div` returns ``a / b`` only when the quotient is provably exact.

``Expr`` supports ``+ - * // %`` and unary ``-`` with ints and other ``Expr`` objects, so
rule code can compute on dims without caring which kind it holds.

This module is the algebra's public face: parsing, evaluation, substitution and comparison
live here; the canonical form, the arithmetic, the bounds and the text are
:mod:`shapeinfer.symbolic.expr`'s, and :func:`lower_bound`'s refinements
:mod:`shapeinfer.symbolic.lower_bounds`'s; their public names are imported here.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping

from shapeinfer.base.text import text as decoded
from shapeinfer.symbolic.expr import (
    DEFAULT_RANGE,
    INF,
    INT64_MAX,
    UNKNOWN_PREFIX,
    UNKNOWN_RANGE,
    Atom,
    Dim,
    Expr,
    _atom_expr,
    add,
    atom_kinds,
    bounds,
    dmax,
    dmin,
    exact_div,
    floordiv,
    format,
    lower_bound,
    mod,
    mul,
    neg,
    range_of,
    sub,
    sym,
    symbols,
)

__all__ = [
    "DEFAULT_RANGE",
    "INF",
    "INT64_MAX",
    "UNKNOWN_PREFIX",
    "UNKNOWN_RANGE",
    "Atom",
    "Dim",
    "Expr",
    "absolute",
    "add",
    "atom_kinds",
    "bounds",
    "ceildiv",
    "compare",
    "dmax",
    "dmin",
    "evaluate",
    "exact_div",
    "floordiv",
    "format",
    "is_symbolic",
    "lower_bound",
    "mod",
    "mul",
    "neg",
    "never_zero",
    "parse",
    "product",
    "range_of",
    "resolve",
    "size",
    "sub",
    "substitute",
    "sym",
    "symbols",
]


def is_symbolic(d: object) -> bool:
    """True for an :class:`Expr` (a dim that is not a known integer)."""
    return isinstance(d, Expr)


def product(dims: Iterable[Dim]) -> Dim:
    """The product of ``dims`` (1 for none)."""
    p: Dim = 1
    for d in dims:
        p = mul(p, d)
    return p


def absolute(d: Dim) -> Dim:
    """``|d|``, as ``max(d, -d)``: 0 exactly where ``d`` is (a bound ``|a - b| <= 0`` says ``a == b``)."""
    return dmax(d, neg(d))


def ceildiv(a: Dim, b: Dim) -> Dim:
    """``ceil(a / b)``."""
    if type(b) is int and b > 0:
        return floordiv(add(a, b - 1), b)
    return neg(floordiv(neg(a), b))


def never_zero(d: Dim) -> bool:
    """True when ``d`` is provably never 0: an int other than 0, or an expression whose
    non-constant terms' coefficients share a factor that does not divide its constant
    (``7*((h + 24)//28) - 6`` is 1 modulo 7)."""
    if type(d) is int:
        return d != 0
    g = 0
    c = 0
    for m, coef in d.terms:
        if m:
            g = math.gcd(g, coef)
        else:
            c = coef
    return g > 1 and c % g != 0


def compare(a: Dim, b: Dim) -> int | None:
    """The sign of ``a - b`` (-1, 0, 1) when provable for all bindings, else None."""
    d = sub(a, b)
    if type(d) is int:
        return (d > 0) - (d < 0)
    lb = lower_bound(d)
    if lb is not None and lb > 0:
        return 1
    lb = lower_bound(neg(d))
    if lb is not None and lb > 0:
        return -1
    return None


def size(d: Dim) -> int:
    """A measure of expression complexity: 1 for an int, grows with terms, atoms and nesting."""
    if type(d) is int:
        return 1
    if d._size is None:
        n = 0
        for m, _ in d.terms:
            n += 1
            for atom in m:
                n += 1 + sum(size(x) for x in atom.args)
        d._size = n
    return d._size


def resolve(d: Dim, subst: Mapping[str, Dim], rounds: int = 8) -> Dim:
    """``d`` with the symbols ``subst`` binds replaced, repeatedly (a binding may name another
    bound symbol), at most ``rounds`` times."""
    if type(d) is int or not subst:
        return d
    for _ in range(rounds):
        if not (symbols(d) & subst.keys()):
            break
        d = substitute(d, subst)
    return d


def evaluate(d: Dim, binding: Mapping[str, int]) -> int:
    """The integer value of ``d`` with every symbol bound. Raises KeyError for a free symbol."""
    if type(d) is int:
        return d
    total = 0
    for m, c in d.terms:
        v = c
        for atom in m:
            v *= _eval_atom(atom, binding)
        total += v
    return total


def _eval_atom(atom: Atom, binding: Mapping[str, int]) -> int:
    if atom.kind == "sym":
        return binding[atom.name]
    vals = [evaluate(x, binding) for x in atom.args]
    if atom.kind == "floordiv":
        return vals[0] // vals[1]
    return max(vals) if atom.kind == "max" else min(vals)


def substitute(d: Dim, mapping: Mapping[str, Dim]) -> Dim:
    """``d`` with each symbol named in ``mapping`` replaced by its dim (recanonicalised)."""
    if type(d) is int or not mapping:
        return d
    total: Dim = 0
    for m, c in d.terms:
        v: Dim = c
        for atom in m:
            v = mul(v, _subst_atom(atom, mapping))
        total = add(total, v)
    return total


def _subst_atom(atom: Atom, mapping: Mapping[str, Dim]) -> Dim:
    if atom.kind == "sym":
        r = mapping.get(atom.name)
        return _atom_expr(atom) if r is None else r
    args = [substitute(x, mapping) for x in atom.args]
    if atom.kind == "floordiv":
        return floordiv(args[0], args[1])
    return dmax(*args) if atom.kind == "max" else dmin(*args)


class _Unsupported(Exception):
    pass


def _cheap_power(base: Dim, n: int, max_terms: int = 1024) -> bool:
    """Whether ``base**n`` is small enough to expand; bigger powers are left as opaque text. A
    sum of k terms to the n has up to C(n + k - 1, n) terms once multiplied out (a 10-term sum
    squared four times over: 24,310), so that count is capped, not the base's size."""
    if type(base) is int:
        return base.bit_length() * n <= 4096
    if len(base.terms) == 1:  # a monomial (format writes ``s**12``): grows linearly
        return n <= 64 and size(base) * n <= 4096
    return n <= 8 and size(base) * n <= 256 and math.comb(n + len(base.terms) - 1, n) <= max_terms


_CALLS = {"max": "max", "Max": "max", "min": "min", "Min": "min"}


#: Two-argument functions torch.export (sympy) writes in dim_param text: ``Mod(a, b)`` is floor
#: modulo (the divisor's sign), ``FloorDiv`` / ``CleanDiv`` floor division, ``CeilDiv`` ceiling.
_BINARY_CALLS = {
    "Mod": "mod",
    "PythonMod": "mod",
    "FloorDiv": "floor",
    "CleanDiv": "floor",
    "CeilDiv": "ceil",
}


def _from_ast(n: ast.AST, max_size: int = 4096, budget: int = 100_000) -> Dim:
    """The dim syntax tree ``n`` spells; :class:`_Unsupported` for anything else, and for text
    whose expansion would cost more than ``budget`` steps of the algebra (terms added or
    multiplied, min/max arguments compared, sizes divided) or grow past ``max_size`` at any node,
    so that parsing any text (a hostile ``dim_param``: a product of sums, a chain of ``%`` that
    doubles at each level, a max of hundreds of nested maxes) takes bounded time; such text stays
    one opaque symbol."""
    left_: list[int] = [budget]

    def charge(work: int) -> None:
        left_[0] -= work
        if left_[0] < 0:
            raise _Unsupported

    def terms(d: Dim) -> int:
        return 1 if type(d) is int else len(d.terms)

    def bounded(d: Dim) -> Dim:
        if type(d) is not int and size(d) > max_size:
            raise _Unsupported
        return d

    def flat_args(args: list[Dim], kind: str) -> int:  # how many args min/max compares
        count = 0
        for x in args:
            m = x.terms[0][0] if type(x) is not int and len(x.terms) == 1 and x.terms[0][1] == 1 else ()
            count += len(m[0].args) if len(m) == 1 and m[0].kind == kind else 1
        return count

    def conv(n: ast.AST) -> Dim:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.Name):
            return sym(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = conv(n.operand)
            charge(terms(v))
            return neg(v) if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            left, right = conv(n.left), conv(n.right)
            op = n.op
            if isinstance(op, (ast.Add, ast.Sub)):
                charge(terms(left) + terms(right))
                return bounded(add(left, right) if isinstance(op, ast.Add) else sub(left, right))
            if isinstance(op, ast.Mult):
                # a product of sums multiplies out: past 1,024 terms (a chain of ten 10-term
                # sums would be 92,378, of six 10-term sums over distinct symbols 10**6) it
                # stays opaque
                if terms(left) * terms(right) > 1024 and type(left) is not int and type(right) is not int:
                    raise _Unsupported
                charge(terms(left) * terms(right))
                return bounded(mul(left, right))
            if isinstance(op, (ast.FloorDiv, ast.Mod)):
                if right == 0:
                    raise _Unsupported
                charge(32 * (size(left) + size(right)))
                return bounded(floordiv(left, right) if isinstance(op, ast.FloorDiv) else mod(left, right))
            if isinstance(op, ast.Pow) and type(right) is int and right >= 0 and _cheap_power(left, right):
                charge(terms(left) * right * 64)
                return bounded(product([left] * right))
            if isinstance(op, ast.Div):
                charge(8 * (size(left) + size(right)))
                q = exact_div(left, right)
                if q is not None:
                    return bounded(q)
            raise _Unsupported
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            fname = n.func.id
            if fname in _CALLS and n.args:
                args = [conv(a) for a in n.args]
                kind = _CALLS[fname]
                k = flat_args(args, kind)
                charge(4 * k * k * (1 + max(size(a) for a in args)))  # each pair compared once
                return bounded(dmax(*args) if kind == "max" else dmin(*args))
            if fname in _BINARY_CALLS and len(n.args) == 2:  # sympy / torch.export spellings
                x, y = conv(n.args[0]), conv(n.args[1])
                if y == 0:
                    raise _Unsupported
                charge(32 * (size(x) + size(y)))
                kind = _BINARY_CALLS[fname]
                return bounded(mod(x, y) if kind == "mod" else floordiv(x, y) if kind == "floor" else ceildiv(x, y))
            if fname in ("FloorToInt", "CeilToInt") and len(n.args) == 1:
                fname = "floor" if fname == "FloorToInt" else "ceil"
            if fname in ("floor", "ceil", "ceiling") and len(n.args) == 1:
                a = n.args[0]
                if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Div):
                    x, y = conv(a.left), conv(a.right)
                    if y == 0:
                        raise _Unsupported
                    charge(32 * (size(x) + size(y)))
                    return bounded(floordiv(x, y) if fname == "floor" else ceildiv(x, y))
                return conv(a)
        raise _Unsupported

    return conv(n)


#: :func:`parse`'s results by text; cleared when full (as :data:`_SYMS`).
_PARSED: dict[str, Dim] = {}
_PARSED_SIZE = 1 << 14


def parse_expression(text: str, max_nodes: int = 100) -> Dim:
    """The dim ``text`` spells when it is an int or an expression over symbol names; ValueError
    otherwise (for text a user types, where junk such as ``seq]`` must not silently become an
    opaque symbol). Text with more than ``max_nodes`` syntax nodes is refused before it is
    expanded, so a hostile product of sums cannot take long."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body if len(text) <= 4000 else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is None:
        raise ValueError(f"{text!r} is not an int or a dims expression over symbol names")
    if sum(1 for _ in ast.walk(tree)) > max_nodes:
        raise ValueError(f"{text[:20]!r}...: expression too long ({max_nodes} syntax nodes at most)")
    try:
        return _from_ast(tree)
    except (_Unsupported, RecursionError):
        raise ValueError(f"{text!r} is not an int or a dims expression over symbol names") from None


def parse(text: str) -> Dim:
    """The dim spelled by ``text``; text that is not a valid expression is one opaque symbol
    (``bytes`` that are not valid UTF-8 are decoded with escapes first)."""
    if type(text) is bytes:
        text = decoded(text)
    r = _PARSED.get(text)
    if r is not None:
        return r
    try:
        if len(text) > 4000:
            raise _Unsupported
        r = _from_ast(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, _Unsupported, RecursionError, MemoryError):
        r = sym(text)
    if len(_PARSED) >= _PARSED_SIZE:
        _PARSED.clear()
    _PARSED[text] = r
    return r
