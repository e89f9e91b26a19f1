"""Registry of native inference rules, keyed by (domain, op type) and opset version.

A rule is a plain function ``rule(ctx, inputs) -> outputs``: ``ctx`` is the engine's
:class:`~shapeinfer.inference.node_context.NodeContext` (attributes, opset version, fresh symbols,
diagnostics), ``inputs`` a list of :class:`~shapeinfer.symbolic.facts.Fact` (``None`` for an omitted
optional input) and the result a list of facts, one per node output (shorter lists and
``None`` entries leave those outputs unknown). A rule raises
:class:`~shapeinfer.inference.fallback.Fallback` to hand the node to onnx's own per-node inference.

Rules live in the op-family modules of :mod:`shapeinfer.inference.ops`, each registering its rules with
:func:`register` when it is imported; that is the only place a rule is declared. The families
are imported lazily: :func:`lookup` imports the modules that register the op it is asked for,
as :mod:`shapeinfer.inference.ops.rule_index` lists them, so a command imports only the families its
model uses. That index is generated from the registrations themselves
(``python tools/gen_rule_index.py``, which records the module each :func:`register` call runs
in) and a test checks that it still matches them.

An op's traits (:class:`OpTraits`: random outputs, shape-valued inputs, value-bounds rules) are
declared in the same module as its rule with :func:`declare_traits`; the engine and the passes
read them with :func:`op_traits` instead of keeping lists of op names of their own.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

Rule = Callable[[Any, list], list]

#: A value-bounds rule: ``bounds(ctx, inputs, outputs, input_bounds) -> (lo, hi) | None``, with
#: ``ctx`` the node's :class:`~shapeinfer.inference.node_context.NodeContext`, ``inputs`` and
#: ``outputs`` its facts, ``input_bounds`` each input's proven element-value bounds (None where
#: none is known; an empty list when no tensor of the run has any); returns the bounds of the
#: first output's elements, or None. It may record through ``ctx`` the guards they need.
BoundsRule = Callable[[Any, list, list, list], "tuple[Any, Any] | None"]

_RULES: dict[tuple[str, str], list[tuple[int, Rule]]] = {}

#: For each key, the modules whose import registered a rule for it (what the index records).
_SOURCES: dict[tuple[str, str], set[str]] = {}

#: Keys whose modules have all been imported (their ``_RULES`` entry is complete).
_COMPLETE: set[tuple[str, str]] = set()

#: The package of op-family modules and the generated index of which module registers what.
OPS_PACKAGE = "shapeinfer.inference.ops"
INDEX_MODULE = "shapeinfer.inference.ops.rule_index"


def register(op_types: str | list[str], since: int = 1, domain: str = "") -> Callable[[Rule], Rule]:
    """Decorator: register the function as the rule for ``op_types`` from opset ``since`` on."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)

    def deco(fn: Rule) -> Rule:
        module = sys._getframe(1).f_globals.get("__name__", "")  # the module whose import registers it
        for name in names:
            entries = _RULES.setdefault((domain, name), [])
            entries.append((since, fn))
            entries.sort(key=lambda e: e[0])
            _SOURCES.setdefault((domain, name), set()).add(module)
        return fn

    return deco


@dataclass(frozen=True)
class OpTraits:
    """What the passes and the engine know of an op besides its shape rule, declared by the op
    family beside the rule (:func:`declare_traits`) and read with :func:`op_traits`.

    - ``nondeterministic``: the outputs are random, so no pass merges, folds or moves the node.
    - ``shape_inputs``: the inputs whose values are shapes, sizes or axes (input index -> kind),
      which canonicalize-reshape may spell as constants: ``"reshape"`` (a Reshape target: 0
      copies the input's dim, -1 is inferred), ``"expand"`` (an Expand target: 1 broadcasts),
      ``"start"`` / ``"end"`` (Slice bounds, clamped to the dim), ``"exact"`` (the value is
      used as it is).
    - ``value_bounds``: the op's :data:`BoundsRule`, with which the engine follows integer
      element-value bounds along index paths (a Gather's rule checks its indices against them);
      None: bounds stop at the op. ``bounds_source``: the rule makes bounds where its inputs
      have none (Range), so the engine asks it even before any tensor has bounds.
    - ``movement``: the op only moves the data of its first input, so remove-noop-reshape may
      find it a no-op: ``"reshape"`` (the same elements in the same order under other dims:
      chains of them collapse into one Reshape), ``"copy"`` (elements copied, selected,
      broadcast, permuted or converted: the output is the input when the op's own condition
      holds, e.g. a Cast to the input's type). None: it computes.
    """

    nondeterministic: bool = False
    shape_inputs: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    value_bounds: BoundsRule | None = None
    movement: str | None = None
    bounds_source: bool = False


NO_TRAITS = OpTraits()

#: The declared traits by key (one declaration per op; the module is recorded in ``_SOURCES``).
_TRAITS: dict[tuple[str, str], OpTraits] = {}


def declare_traits(
    op_types: str | list[str],
    domain: str = "",
    *,
    nondeterministic: bool = False,
    shape_inputs: Mapping[int, str] | None = None,
    value_bounds: BoundsRule | None = None,
    movement: str | None = None,
    bounds_source: bool = False,
) -> None:
    """Declare the traits of ``op_types`` (called in the op-family module that registers their
    rules, so the rule index finds it); a second declaration of an op replaces the first."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)
    module = sys._getframe(1).f_globals.get("__name__", "")
    if movement not in (None, "reshape", "copy"):
        raise ValueError(f"movement must be None, 'reshape' or 'copy', not {movement!r}")
    traits = OpTraits(
        nondeterministic, MappingProxyType(dict(shape_inputs or {})), value_bounds, movement, bounds_source
    )
    for name in names:
        _TRAITS[(domain, name)] = traits
        _SOURCES.setdefault((domain, name), set()).add(module)


def op_traits(op_type: str, domain: str = "") -> OpTraits:
    """The declared traits of ``op_type`` (:data:`NO_TRAITS` for an op that declares none)."""
    key = ("" if domain == "ai.onnx" else domain, op_type)
    if key not in _COMPLETE:
        _load(key)
    return _TRAITS.get(key, NO_TRAITS)


def _load(key: tuple[str, str]) -> None:
    """Import the modules the index names for ``key`` (once); afterwards its entry is complete."""
    index = importlib.import_module(INDEX_MODULE).RULE_MODULES
    for module in index.get(key, ()):
        importlib.import_module(f"{OPS_PACKAGE}.{module}")
    _COMPLETE.add(key)


def lookup(domain: str, op_type: str, version: int) -> Rule | None:
    """The rule in force for ``op_type`` at opset ``version`` of ``domain``, or None."""
    key = ("" if domain == "ai.onnx" else domain, op_type)
    if key not in _COMPLETE:
        _load(key)
    entries = _RULES.get(key)
    if not entries:
        return None
    found = None
    for since, fn in entries:
        if since <= version:
            found = fn
    return found


def family_modules() -> list[str]:
    """Every module of the op-family package (found by walking it, not from the index)."""
    import pkgutil

    package = importlib.import_module(OPS_PACKAGE)
    return sorted(
        info.name
        for info in pkgutil.walk_packages(package.__path__, OPS_PACKAGE + ".")
        if info.name != INDEX_MODULE and not info.ispkg
    )


def load_all() -> None:
    """Import every op-family module, so every rule is registered (and every key complete)."""
    for module in family_modules():
        importlib.import_module(module)
    _COMPLETE.update(_RULES)


def sources() -> dict[tuple[str, str], tuple[str, ...]]:
    """After :func:`load_all`: for each key, the op-family modules that register a rule for it
    (names relative to :data:`OPS_PACKAGE`, sorted): what :mod:`shapeinfer.inference.ops.rule_index` holds."""
    prefix = OPS_PACKAGE + "."
    out = {}
    for key, mods in sorted(_SOURCES.items()):
        family = sorted(m[len(prefix) :] for m in mods if m.startswith(prefix))
        if family:
            out[key] = tuple(family)
    return out


def registered() -> list[tuple[str, str, int]]:
    """Every registered (domain, op type, since version); imports every op family first."""
    load_all()
    return sorted((d, op, s) for (d, op), entries in _RULES.items() for s, _ in entries)
