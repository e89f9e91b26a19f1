"""Registry of native inference rules, keyed by (domain, op type) and opset version.

A rule is a plain function ``rule(ctx, inputs) -> outputs``: ``ctx`` is the engine's
:class:`~shapeinfer.engine.NodeContext` (attributes, opset version, fresh symbols,
diagnostics), ``inputs`` a list of :class:`~shapeinfer.facts.Fact` (``None`` for an omitted
optional input) and the result a list of facts, one per node output (shorter lists and
``None`` entries leave those outputs unknown). A rule raises
:class:`~shapeinfer.engine.Fallback` to hand the node to onnx's own per-node inference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Rule = Callable[[Any, list], list]

_RULES: dict[tuple[str, str], list[tuple[int, Rule]]] = {}


def register(op_types: str | list[str], since: int = 1, domain: str = "") -> Callable[[Rule], Rule]:
    """Decorator: register the function as the rule for ``op_types`` from opset ``since`` on."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)

    def deco(fn: Rule) -> Rule:
        for name in names:
            entries = _RULES.setdefault((domain, name), [])
            entries.append((since, fn))
            entries.sort(key=lambda e: e[0])
        return fn

    return deco


def lookup(domain: str, op_type: str, version: int) -> Rule | None:
    """The rule in force for ``op_type`` at opset ``version`` of ``domain``, or None."""
    entries = _RULES.get(("" if domain == "ai.onnx" else domain, op_type))
    if not entries:
        return None
    found = None
    for since, fn in entries:
        if since <= version:
            found = fn
    return found


def registered() -> list[tuple[str, str, int]]:
    """Every registered (domain, op type, since version)."""
    return sorted((d, op, s) for (d, op), entries in _RULES.items() for s, _ in entries)
