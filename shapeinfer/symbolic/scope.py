"""The symbolic scope: every piece of symbolic state one inference run holds, in one owner.

Knows nothing of ONNX. One :class:`SymbolScope` per run holds

- the *input symbols* (names the graph inputs declare) and their *ranges* (``SYM -> (lo, hi)``,
  hi None when unbounded; a symbol without one is a size in ``[1, inf)``);
- the *fresh symbols* drawn for dims inference cannot determine (``unk_0``, ``unk_1``, ... in
  the order they are drawn), and among them the *joins*: a symbol standing for one of several
  known alternatives (an If whose branches give different dims), which no declaration may
  replace (a declared dim equal to one branch's is wrong whenever the other branch runs);
- the *substitution*: a union-find by substitution, ``name -> representative``, built by
  :meth:`SymbolScope.unify`;
- the *equalities* unify recorded (as text, representative first) and the *guard events*:
  ``(kind, lhs, rhs, node)``, what inference assumed of the symbols (see :mod:`shapeinfer.symbolic.guards`).

Contract:

- :meth:`~SymbolScope.checkpoint` / :meth:`~SymbolScope.rollback` (or ``with scope.trial():``)
  restore the substitution, equalities and guards exactly: a branch or body that is not taken,
  or is tried and discarded, leaves no trace in them. Fresh symbols drawn since the checkpoint
  stay drawn (facts kept for annotation may name them) unless ``release_fresh`` is given, when
  the caller also drops every fact computed since.
- :meth:`~SymbolScope.unify` never binds an input symbol to a fresh one (the representative is
  the side with fewer fresh symbols, then the smaller expression); two different ints raise
  :class:`~shapeinfer.base.diagnostics.InferenceError` G002.
- Bounds and proofs (:meth:`~SymbolScope.interval`, :meth:`~SymbolScope.prove_le`,
  :meth:`~SymbolScope.prove_eq`, :meth:`~SymbolScope.simplify`) are :mod:`shapeinfer.symbolic.intervals`
  over this scope's ranges: the caller's, narrowed by the *assumed bounds*, the bound guards
  recorded so far on one input symbol (``seq <= 16777217`` from a float round trip): what the
  shapes already hold under. They roll back with their guards.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic import intervals
from shapeinfer.symbolic.guards import as_symbol_bound, lone_symbol, monotone_bound, normal_bound, violation

__all__ = ["FRESH_PREFIX", "GuardEvent", "Mark", "SymbolScope"]

#: Fresh symbols are named ``unk_<n>``: the algebra gives them the range of an unknown dim,
#: which may be 0 (:func:`shapeinfer.symbolic.dims.range_of`).
FRESH_PREFIX = D.UNKNOWN_PREFIX

#: A guard as inference recorded it: (kind, lhs, rhs, node label).
GuardEvent = tuple[str, D.Dim, D.Dim, str]

_ABSENT = object()


class Mark(NamedTuple):
    """A point in a scope's history (see :meth:`SymbolScope.checkpoint`)."""

    fresh: int
    equalities: int
    guards: int
    undo: int
    generation: int
    assumed: int


class SymbolScope:
    """Input symbols, ranges, fresh symbols, substitution, equalities and guards of one run."""

    __slots__ = (
        "_assumed_undo",
        "_effective",
        "_undo",
        "assumed",
        "equalities",
        "fresh_symbols",
        "generation",
        "guard_events",
        "input_symbols",
        "joins",
        "ranges",
        "soft",
        "subst",
    )

    def __init__(self, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> None:
        self.input_symbols: set[str] = set()
        self.ranges: dict[str, tuple[int, int | None]] = dict(ranges or {})
        self.fresh_symbols: list[str] = []
        #: join symbol -> the alternatives it stands for (see :meth:`join`)
        self.joins: dict[str, tuple[D.Dim, ...]] = {}
        self.subst: dict[str, D.Dim] = {}
        self.equalities: list[tuple[str, str]] = []
        self.guard_events: list[GuardEvent] = []
        #: indices into guard_events of the soft guards: assumptions outside which the model may
        #: still run, with other shapes (see :meth:`assume`)
        self.soft: list[int] = []
        #: bumped whenever the substitution changes (a cheap "did anything bind?" test)
        self.generation = 0
        self._undo: list[tuple[str, object]] = []  # (name, previous binding or _ABSENT)
        #: input symbol -> the range its bound guards give it (see :meth:`assume`)
        self.assumed: dict[str, tuple[int, int | None]] = {}
        self._assumed_undo: list[tuple[str, object]] = []
        self._effective: dict[str, tuple[int, int | None]] | None = None

    # ------------------------------------------------------------------ symbols
    def add_inputs(self, names: set[str]) -> None:
        """Declare ``names`` as input symbols (never fresh, never bound to a fresh symbol)."""
        self.input_symbols |= names

    def fresh(self) -> D.Expr:
        """A new symbol for a dim inference cannot determine."""
        name = f"{FRESH_PREFIX}{len(self.fresh_symbols)}"
        self.fresh_symbols.append(name)
        return D.sym(name)

    def join(self, alternatives: tuple[D.Dim, ...]) -> D.Expr:
        """A fresh symbol for a dim that is one of ``alternatives`` (which differ)."""
        s = self.fresh()
        self.joins[s.terms[0][0][0].name] = alternatives
        return s

    def equal_at_every_alternative(self, d: D.Dim, x: D.Dim, limit: int = 16) -> bool:
        """Whether ``d``, which holds join symbols, equals ``x`` whichever alternative each join
        takes (``min(j, 10) == 10`` for a join of 220, 110 and 90); False when not proven or
        when there are more than ``limit`` combinations."""
        names = sorted(s for s in D.symbols(d) if s in self.joins)
        if not names:
            return False
        choices = [self.joins[s] for s in names]
        count = 1
        for c in choices:
            count *= len(c)
        if count > limit:
            return False
        for combo in itertools.product(*choices):
            v = D.substitute(d, dict(zip(names, combo)))
            if not (v == x or D.compare(v, x) == 0):
                return False
        return True

    def is_fresh(self, name: str) -> bool:
        return name.startswith(FRESH_PREFIX) and name not in self.input_symbols

    def has_fresh(self, d: D.Dim) -> bool:
        """Whether dim ``d`` holds a fresh symbol: a size inference does not know (a count of
        detections, a value read at run time), so a condition on it names no input."""
        return type(d) is not int and any(self.is_fresh(s) for s in D.symbols(d))

    def adoptable(self, d: D.Dim) -> bool:
        """Whether a declared dim may stand for ``d``: ``d`` is not an int and every symbol in
        it (if any) is fresh and not a join."""
        if type(d) is int:
            return False
        joins = self.joins
        return all(self.is_fresh(s) and s not in joins for s in D.symbols(d))

    def resolve(self, d: D.Dim) -> D.Dim:
        """``d`` with every bound symbol replaced by its representative."""
        return D.resolve(d, self.subst)

    def _rank_key(self, d: D.Dim) -> tuple:
        syms = D.symbols(d)
        nfresh = sum(1 for s in syms if self.is_fresh(s))
        return (nfresh, D.size(d), D.format(d))

    def _bind(self, name: str, value: D.Dim) -> None:
        self._undo.append((name, self.subst.get(name, _ABSENT)))
        self.subst[name] = value
        self.generation += 1

    def unify(self, a: D.Dim, b: D.Dim, node: str = "", soft: bool = False) -> tuple[D.Dim, D.Dim | None]:
        """Record that ``a`` and ``b`` are equal: ``(representative, other side)``, the other
        side None when they already were. A lone symbol on the other side is bound to the
        representative; the equality is recorded and assumed (a guard of ``node``, ``soft`` as
        :meth:`assume` says). A soft equality binds nothing: the run that takes one is always
        made again without soft guards, and its forms may not even be defined where it says
        (``32//(n - 1)`` read under ``n == 1``)."""
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            return a, None
        if self.ranges:
            a, b = intervals.simplify(a, self.ranges), intervals.simplify(b, self.ranges)
            if a == b:
                return a, None
        if type(a) is int and type(b) is int:
            raise InferenceError(codes.BROADCAST_INCOMPATIBLE, f"dims {a} and {b} must be equal")
        if intervals.holds_eq(a, b, self.effective_ranges()):  # proven: nothing is assumed
            return min((a, b), key=self._rank_key), None
        rep, other = (
            (a, b) if type(a) is int or (type(b) is not int and self._rank_key(a) <= self._rank_key(b)) else (b, a)
        )
        if (
            not soft
            and isinstance(other, D.Expr)
            and len(other.terms) == 1
            and other.terms[0][1] == 1
            and len(other.terms[0][0]) == 1
            and other.terms[0][0][0].kind == "sym"
        ):
            name = other.terms[0][0][0].name
            if name not in D.symbols(rep):
                self._bind(name, rep)
        self.equalities.append((D.format(rep), D.format(other)))
        self.assume("equality", other, rep, node, soft)
        return rep, other

    def assume(self, kind: str, lhs: D.Dim, rhs: D.Dim, node: str = "", soft: bool = False) -> tuple[D.Dim, D.Dim]:
        """Record that the inferred shapes hold only when ``lhs <kind> rhs`` (a guard of
        ``node``); returns the sides as recorded (simplified under the ranges). A guard is hard
        when the model fails wherever it does not hold (a Concat's other axes, a Reshape's
        element count); ``soft`` when the model may still run there, with other shapes (an
        integer Div taken as the floor of a numerator of unproven sign)."""
        if self.ranges:
            lhs, rhs = intervals.simplify(lhs, self.ranges), intervals.simplify(rhs, self.ranges)
        if kind == "bound":
            lhs, rhs = as_symbol_bound(lhs, rhs, self.ranges)
        if soft:
            self.soft.append(len(self.guard_events))
        self.guard_events.append((kind, lhs, rhs, node))
        if soft:
            return lhs, rhs  # an assumption, not where the model runs: it narrows no range
        if kind == "bound":
            self._narrow(lhs, rhs)
        elif kind == "divisibility":
            self._step(lhs, rhs)
        return lhs, rhs

    def _step(self, lhs: D.Dim, rhs: D.Dim) -> None:
        """Give the input symbol ``lhs`` the step ``rhs`` (an int) a divisibility guard says it
        has (``n % 4 == 0``: n takes every 4th value), combined with the step it already has."""
        name = lone_symbol(lhs)
        if name is None or name not in self.input_symbols or type(rhs) is not int or rhs < 2:
            return
        old = self.assumed.get(name) or D.range_of(name, self.ranges)
        step = intervals.step_of(old)
        if old[0] % step:  # a residue other than 0: combining is not done here
            return
        new_step = math.lcm(step, rhs)
        lo = -(-old[0] // new_step) * new_step
        new = intervals.Stepped(lo, old[1], new_step)
        if new != old and (new[1] is None or new[0] <= new[1]):
            self._assumed_undo.append((name, self.assumed.get(name, _ABSENT)))
            self.assumed[name] = new
            self._effective = None

    def _narrow(self, lhs: D.Dim, rhs: D.Dim) -> None:
        """Narrow the assumed range of the one input symbol ``lhs <= rhs`` bounds, if any."""
        a, b = normal_bound(lhs, rhs)
        for side, other, upper in ((a, b, True), (b, a, False)):
            if type(other) is not int:
                continue
            name = lone_symbol(side)
            if name is None:
                bound = self._monotone_bound(side, other, upper)
                if bound is None:
                    continue
                name, other, upper = bound
            if name not in self.input_symbols:
                continue
            old = self.assumed.get(name) or D.range_of(name, self.ranges)
            lo, hi = old
            new = intervals.with_bounds(
                old, *((lo, other if hi is None else min(hi, other)) if upper else (max(lo, other), hi))
            )
            if new != old:
                self._assumed_undo.append((name, self.assumed.get(name, _ABSENT)))
                self.assumed[name] = new
                self._effective = None
            return

    def _monotone_bound(self, side: D.Dim, c: int, upper: bool) -> tuple[str, int, bool] | None:
        """``side <= c`` (``upper``) or ``c <= side`` as a bound of ``side``'s one input symbol
        over the effective ranges (see :func:`shapeinfer.symbolic.guards.monotone_bound`)."""
        names = D.symbols(side)
        if len(names) != 1 or not names <= self.input_symbols:
            return None
        return monotone_bound(side, c, upper, self.effective_ranges())

    # ------------------------------------------------------------------ bounds and proofs
    def effective_ranges(self) -> dict[str, tuple[int, int | None]]:
        """The caller's ranges narrowed by the assumed bounds."""
        eff = self._effective
        if eff is None:
            eff = self._effective = {**self.ranges, **self.assumed}
        return eff

    def simplify(self, d: D.Dim) -> D.Dim:
        """``d`` with the ``min``/``max``/floor divisions the (effective) ranges decide decided."""
        if type(d) is int:
            return d
        ranges = self.effective_ranges()
        return intervals.simplify(d, ranges) if ranges else d

    def interval(self, d: D.Dim) -> tuple[int | None, int | None]:
        """A sound ``(lo, hi)`` of ``d`` over the effective ranges (None: unbounded)."""
        return intervals.interval(d, self.effective_ranges())

    def prove_le(self, a: D.Dim, b: D.Dim) -> bool:
        """True when ``a <= b`` holds at every binding inside the effective ranges (False: not
        proven)."""
        return intervals.holds_le(a, b, self.effective_ranges())

    def one_forces_one(self, a: D.Dim, b: D.Dim) -> bool:
        """True when ``a == 1`` implies ``b == 1`` inside the effective ranges (False: not
        proven; see :func:`shapeinfer.symbolic.intervals.one_forces_one`)."""
        return intervals.one_forces_one(a, b, self.effective_ranges())

    def prove_eq(self, a: D.Dim, b: D.Dim) -> bool:
        """True when ``a == b`` holds at every binding inside the effective ranges (False: not
        proven)."""
        return intervals.holds_eq(a, b, self.effective_ranges())

    # ------------------------------------------------------------------ history
    def checkpoint(self) -> Mark:
        """The current point, for :meth:`rollback` or :meth:`changed_since`."""
        return Mark(
            len(self.fresh_symbols),
            len(self.equalities),
            len(self.guard_events),
            len(self._undo),
            self.generation,
            len(self._assumed_undo),
        )

    def changed_since(self, mark: Mark) -> bool:
        """Whether anything was drawn, bound, equated or assumed since ``mark``."""
        return (
            len(self.fresh_symbols) != mark.fresh
            or len(self.equalities) != mark.equalities
            or len(self.guard_events) != mark.guards
            or self.generation != mark.generation
        )

    def rollback(
        self, mark: Mark, release_fresh: bool = False, keep_soft: bool = False, runs_when: D.Dim | None = None
    ) -> None:
        """Undo every binding, equality and guard since ``mark`` (and the fresh symbols drawn
        since, with ``release_fresh``: only when no fact kept names them). ``keep_soft`` keeps
        the soft guards taken since, as soft guards: facts computed in the undone run that
        outlive it (an If branch that may run) rest on them, and the run without soft guards
        must be made where the hard guards do not imply them. ``runs_when``: the undone run
        is one that happens exactly where ``runs_when >= 1`` (a Loop body whose first
        iteration runs where its trip count is at least 1); each hard guard it took on input
        symbols is kept as that guard or ``runs_when <= 0``, one bound ``min(m, runs_when) <=
        0`` (``m``: the guard's :func:`~shapeinfer.symbolic.guards.violation`), unless
        ``runs_when >= 1`` implies it."""
        kept = [self.guard_events[i] for i in self.soft if i >= mark.guards] if keep_soft else ()
        if runs_when is not None and not self.has_fresh(runs_when):
            soft = set(self.soft)
            conditional = [
                (kind, lhs, rhs, node)
                for i, (kind, lhs, rhs, node) in enumerate(self.guard_events[mark.guards :], mark.guards)
                if i not in soft and not self.has_fresh(lhs) and not self.has_fresh(rhs)
            ]
        else:
            conditional = ()
        undo = self._undo
        if len(undo) > mark.undo:
            subst = self.subst
            while len(undo) > mark.undo:
                name, old = undo.pop()
                if old is _ABSENT:
                    subst.pop(name, None)
                else:
                    subst[name] = old  # type: ignore[assignment]
            self.generation += 1
        del self.equalities[mark.equalities :]
        del self.guard_events[mark.guards :]
        while self.soft and self.soft[-1] >= mark.guards:
            self.soft.pop()
        for kind, lhs, rhs, node in kept:
            self.soft.append(len(self.guard_events))
            self.guard_events.append((kind, lhs, rhs, node))
        au = self._assumed_undo
        if len(au) > mark.assumed:
            while len(au) > mark.assumed:
                name, old = au.pop()
                if old is _ABSENT:
                    self.assumed.pop(name, None)
                else:
                    self.assumed[name] = old  # type: ignore[assignment]
            self._effective = None
        if release_fresh:
            for name in self.fresh_symbols[mark.fresh :]:
                self.joins.pop(name, None)
            del self.fresh_symbols[mark.fresh :]
        for kind, lhs, rhs, node in conditional:
            off = violation(kind, lhs, rhs)
            with self.trial():  # a guard the run's own condition implies says nothing
                self.assume("bound", 1, runs_when)
                implied = self.prove_le(off, 0)
            if not implied:
                self.assume("bound", D.dmin(off, runs_when), 0, node)

    @contextmanager
    def trial(self) -> Iterator[Trial]:
        """``with scope.trial() as t:`` undoes what the block bound, equated or assumed on exit
        unless ``t.keep`` was set True inside it (the run turned out to be the one that counts)."""
        mark = self.checkpoint()
        t = Trial()
        try:
            yield t
        finally:
            if not t.keep:
                self.rollback(mark)


class Trial:
    """The handle of :meth:`SymbolScope.trial`: set ``keep`` to keep the block's effects."""

    __slots__ = ("keep",)

    def __init__(self) -> None:
        self.keep = False
