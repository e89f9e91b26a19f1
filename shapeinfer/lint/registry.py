"""The rule catalog: every lint code, its name, default severity, fix and documentation.

A rule is declared once, in the module of its family (:mod:`~shapeinfer.lint.rules.reshape`,
:mod:`~shapeinfer.lint.rules.shape`, :mod:`~shapeinfer.lint.rules.graph`,
:mod:`~shapeinfer.lint.rules.targets`, :mod:`~shapeinfer.lint.rules.structure`), either

- with :func:`rule` as a decorator on a check function ``fn(ctx) -> None`` that reports
  findings through ``ctx.report(...)`` (the function's docstring is the rule's documentation),
- or with :func:`declare` for a rule the inference engine itself reports as a diagnostic
  (``R001``-``R005``, ``S001``-``S003``, ``G002``...): the linter turns those diagnostics into
  findings, so the same semantics is never derived twice.

``RULES`` maps a code to its :class:`Rule`; ``CHECKS`` lists ``(code, check function)`` in
declaration order; ``REMAPS`` turns an engine diagnostic code into another finding code where
the engine's code does not name the rule (``REMAPS`` entries are added with :func:`remaps`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from shapeinfer.base.diagnostics import SEVERITIES

TARGETS = ("onnx", "onnxruntime", "openvino", "onednn")
FAMILIES = {
    "R": "Reshape",
    "S": "Shape",
    "G": "Graph",
    "P": "Targets",
    "E": "Model and inference",
    "M": "Model structure",
}

_CODE = re.compile(r"^[A-Z][0-9]{3}$")


@dataclass(frozen=True)
class Rule:
    """One lint rule.

    ``fix`` names the optimize pass that rewrites a finding away (None: not fixable);
    ``target`` is the ``--target`` the rule belongs to (None: every target); ``function`` is
    the check that reports it, or None when the inference engine reports it.
    """

    code: str
    name: str
    severity: str
    summary: str
    doc: str
    fix: str | None = None
    target: str | None = None
    function: Callable | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def family(self) -> str:
        return FAMILIES.get(self.code[0], "Other")


RULES: dict[str, Rule] = {}
#: (code, check function) in declaration order
CHECKS: list[tuple[str, Callable]] = []
#: engine diagnostic code -> ``fn(diagnostic, node_ref) -> (code, message)`` giving the finding
REMAPS: dict[str, Callable] = {}


def _clean_doc(text: str) -> str:
    return inspect.cleandoc(text).strip()


def _add(r: Rule) -> None:
    if not _CODE.match(r.code):
        raise ValueError(f"bad rule code {r.code!r}")
    if r.severity not in SEVERITIES:
        raise ValueError(f"{r.code}: bad severity {r.severity!r}")
    if r.target is not None and r.target not in TARGETS:
        raise ValueError(f"{r.code}: bad target {r.target!r}")
    if r.code in RULES:
        raise ValueError(f"rule {r.code} declared twice")
    RULES[r.code] = r


def declare(
    code: str,
    name: str,
    severity: str,
    summary: str,
    doc: str,
    fix: str | None = None,
    target: str | None = None,
) -> Rule:
    """Declare a rule whose findings come from the inference engine's diagnostics."""
    r = Rule(code, name, severity, summary, _clean_doc(doc), fix, target, None)
    _add(r)
    return r


def rule(
    code: str,
    name: str,
    severity: str,
    summary: str,
    fix: str | None = None,
    target: str | None = None,
) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn(ctx)`` as the check for ``code``; its docstring is the doc."""

    def deco(fn: Callable) -> Callable:
        _add(Rule(code, name, severity, summary, _clean_doc(fn.__doc__ or summary), fix, target, fn))
        CHECKS.append((code, fn))
        return fn

    return deco


def also_checks(code: str) -> Callable[[Callable], Callable]:
    """Decorator: a further check function for an already declared rule."""

    def deco(fn: Callable) -> Callable:
        if code not in RULES:
            raise ValueError(f"rule {code} is not declared")
        CHECKS.append((code, fn))
        return fn

    return deco


def remaps(engine_code: str) -> Callable[[Callable], Callable]:
    """Decorator: ``fn(diag, ref)`` turns the engine's ``engine_code`` diagnostics into (code, message)."""

    def deco(fn: Callable) -> Callable:
        REMAPS[engine_code] = fn
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
    from shapeinfer.base.suggest import closest

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
