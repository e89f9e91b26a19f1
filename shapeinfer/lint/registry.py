"""Lint's view of the catalog: the codes of :mod:`shapeinfer.base.codes` as rules, and the
checks that report them.

Every code, whoever reports it, has one entry in :data:`shapeinfer.base.codes.CATALOG` (its
name, severity, summary, doc, fix, target, who reports it); lint reads it as :data:`RULES`, so
``--select E031``, ``--ignore E017``, ``severity.E032`` and ``--explain E060`` work on an
engine code like on a lint check's. A check function ``fn(ctx) -> None``, which reports
findings through ``ctx.report(...)``, attaches to its entry with :func:`check`; an engine
diagnostic whose message lint says more precisely attaches a rewording with
:func:`engine_message`.

``CHECKS`` lists ``(code, check function)`` in declaration order; ``ENGINE_MESSAGES`` maps an
engine code to ``fn(diagnostic, node_ref) -> message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from shapeinfer.base.codes import CATALOG, CHECK, TARGETS, Code
from shapeinfer.base.suggest import closest

__all__ = ["CHECKS", "ENGINE_MESSAGES", "RULES", "TARGETS", "check", "engine_message", "expand", "split_codes"]

#: code -> :class:`~shapeinfer.base.codes.Code`: the catalog itself
RULES: dict[str, Code] = CATALOG
#: (code, check function) in declaration order
CHECKS: list[tuple[str, Callable]] = []
#: engine diagnostic code -> ``fn(diagnostic, node_ref) -> message`` giving the finding's message
ENGINE_MESSAGES: dict[str, Callable] = {}


def check(code: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn(ctx)`` as a check reporting ``code``, whose catalog entry says a
    check reports it (``CHECK`` in ``Code.by``); ValueError otherwise."""
    entry = CATALOG.get(code)
    if entry is None:
        raise ValueError(f"code {code} is not in the catalog (shapeinfer/base/codes.py)")
    if CHECK not in entry.by:
        raise ValueError(f"{code}: its catalog entry does not say a lint check reports it (by={entry.by})")

    def deco(fn: Callable) -> Callable:
        CHECKS.append((code, fn))
        return fn

    return deco


def engine_message(code: str) -> Callable[[Callable], Callable]:
    """Decorator: ``fn(diag, ref) -> message`` words the engine's ``code`` diagnostics as lint
    reports them (the code stays the engine's)."""

    def deco(fn: Callable) -> Callable:
        ENGINE_MESSAGES[code] = fn
        return fn

    return deco


def expand(selectors: Iterable[str]) -> set[str]:
    """The codes a list of selectors names: ``ALL``, a family letter (``R``), a prefix
    (``R00``) or a full code (``R004``). Raises ValueError naming an unknown selector."""
    out: set[str] = set()
    for raw in selectors:
        s = raw.strip().upper()
        if not s:
            continue
        if s == "ALL":
            out |= RULES.keys()
            continue
        hit = {c for c in RULES if c.startswith(s)}
        if not hit:
            raise ValueError(f"unknown rule code or prefix {raw.strip()!r}{_suggestion(s)}")
        out |= hit
    return out


def _suggestion(s: str) -> str:
    """`` (did you mean 'R009'?)`` for a selector that misses a code's zero padding (``R9``) or
    misspells one; empty when nothing is close."""
    if len(s) >= 2 and s[0].isalpha() and s[1:].isdigit() and len(s) < 4:
        padded = s[0] + s[1:].zfill(3)
        if padded in RULES:
            return f" (did you mean {padded!r}?)"
    guess = closest(s, RULES)
    return f" (did you mean {guess!r}?)" if guess else ""


def split_codes(values: Iterable[str]) -> list[str]:
    """``("R001,R002", "G")`` as ``["R001", "R002", "G"]`` (comma or space separated)."""
    out = []
    for v in values:
        out.extend(x for x in re.split(r"[,\s]+", v) if x)
    return out
