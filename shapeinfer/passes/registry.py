"""The passes by name: :data:`PASSES` (name -> module), the default selection and the limits
optimize's rounds work under. A pass module declares its :class:`~shapeinfer.passes.base.Pass`
as ``PASS``; :func:`get_pass` finds it by name."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from shapeinfer.base.suggest import did_you_mean
from shapeinfer.passes.base import Pass
from shapeinfer.passes.errors import OptimizeError

#: Pass name -> module implementing it (``run(model, ctx) -> (model, changes)``).
PASSES: dict[str, str] = {
    "fold-if": "shapeinfer.passes.fold_if",
    "reshape-v1-to-v5": "shapeinfer.passes.reshape_v1_to_v5",
    "fold-shapes": "shapeinfer.passes.fold_shapes",
    "fold-constants": "shapeinfer.passes.fold_constants",
    "canonicalize-reshape": "shapeinfer.passes.canonicalize_reshape",
    "remove-noop-reshape": "shapeinfer.passes.remove_noop_reshape",
    "remove-neutral": "shapeinfer.passes.remove_neutral",
    "merge-transposes": "shapeinfer.passes.merge_transposes",
    "remove-expand": "shapeinfer.passes.remove_expand",
    "dedupe-shapes": "shapeinfer.passes.dedupe_shapes",
    "dce": "shapeinfer.passes.dce",
    "scalar-if-condition": "shapeinfer.passes.scalar_if_condition",
    "empty-branch-constants": "shapeinfer.passes.empty_branch_constants",
}

#: the passes optimize runs unless told: every pass but those that serve one runtime only
#: (OpenVINO's If: lint --fix runs scalar-if-condition for P007, empty-branch-constants for P008)
OPENVINO_PASSES = ("scalar-if-condition", "empty-branch-constants")
DEFAULT_PASSES: tuple[str, ...] = tuple(p for p in PASSES if p not in OPENVINO_PASSES)

#: Rounds of the repeated passes before giving up on reaching a fixpoint.
MAX_ROUNDS = 8

#: Largest tensor (elements) fold-shapes writes as an initializer.
FOLD_CAP = 1024

#: Bytes one tensor fold-constants stores may add to the model (``max_fold_growth``).
MAX_FOLD_GROWTH = 1 << 16


def pass_module(name: str):
    """The module implementing pass ``name``; OptimizeError for an unknown name."""
    mod = PASSES.get(name)
    if mod is None:
        raise OptimizeError(f"unknown pass {name!r}{did_you_mean(name, PASSES)} (passes: {', '.join(PASSES)})")
    return importlib.import_module(mod)


def get_pass(name: str) -> Pass:
    """The declared pass ``name`` (its module's ``PASS``); OptimizeError for an unknown name."""
    return pass_module(name).PASS


def selected_passes(passes: Sequence[str] | None) -> list[str]:
    """The names of ``passes`` (None: every default pass, in pipeline order), each checked
    (:func:`get_pass`: OptimizeError naming the passes there are), none twice (OptimizeError);
    TypeError for a string, which is one name, not a list of them."""
    if isinstance(passes, str):
        raise TypeError(f"passes is a list of pass names ([{passes!r}]), not a string")
    names = list(DEFAULT_PASSES if passes is None else passes)
    for n in names:
        get_pass(n)
    if len(set(names)) != len(names):
        raise OptimizeError(f"a pass is listed twice in {','.join(names)}")
    return names


def describe_passes() -> list[tuple[str, str]]:
    """(name, one-line summary) of every pass, in pipeline order."""
    out = []
    for name in PASSES:
        doc = (pass_module(name).__doc__ or "").strip().splitlines()
        first = doc[0] if doc else ""
        text = first.split(": ", 1)[-1] if first.startswith(name) else first
        out.append((name, text.replace("``", "")))
    return out
