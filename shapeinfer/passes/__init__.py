"""Graph-rewriting passes built on inference: ``shapeinfer optimize`` and :func:`optimize`.

Every pass takes a model and returns a model that computes exactly what its input computed
(same graph inputs, same graph outputs under the same names, same values) together with a
count of what it changed. Passes use inference facts (:func:`shapeinfer.inference.engine.infer`) to
decide, and a light index of the protobuf (:mod:`shapeinfer.ir.graph`) to rewrite.

The passes, in pipeline order (each module's docstring states its contract):

- ``fold-if`` — an If whose condition is known becomes its taken branch; Loops that never run go.
- ``reshape-v1-to-v5`` — Reshape-1 (target in the ``shape`` attribute) to Reshape-5 form.
- ``fold-shapes`` — tensors with fully static small integer values become initializers.
- ``fold-constants`` — nodes whose inputs are all constant are evaluated into initializers.
- ``canonicalize-reshape`` — runtime-computed shape inputs rewritten from their symbolic
  values: constant where the op's encoding allows it (Reshape ``0``/``-1``, Expand ``1``...),
  else rebuilt from the fewest ``Shape`` slices.
- ``remove-noop-reshape`` — shape-preserving data movement removed, reshape chains collapsed.
- ``remove-neutral`` — ``x * 1``, ``x / 1``, ``x + 0`` where exact (signed zeros) removed.
- ``merge-transposes`` — a Transpose of a Transpose made one (or none: the identity).
- ``remove-expand`` — an Expand whose readers broadcast to the same dims anyway removed.
- ``dedupe-shapes`` — common subexpression elimination.
- ``dce`` — dead-code elimination (always runs after the selected passes).

Each pass module declares itself as one :class:`~shapeinfer.passes.base.Pass` named ``PASS``
(its traits), registered by name in :mod:`shapeinfer.passes.registry`;
:mod:`shapeinfer.passes.manager` runs optimize, :mod:`shapeinfer.passes.rounds` its rounds.
"""

from __future__ import annotations

from shapeinfer.inference.bindings import specialise_inputs
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.passes.context import PassContext, run_pass
from shapeinfer.passes.errors import OptimizeError
from shapeinfer.passes.manager import check_bind, optimize_with_report
from shapeinfer.passes.registry import (
    DEFAULT_PASSES,
    FOLD_CAP,
    MAX_FOLD_GROWTH,
    MAX_ROUNDS,
    PASSES,
    describe_passes,
    get_pass,
    pass_module,
)
from shapeinfer.passes.report import OptimizeReport, PassReport

__all__ = [
    "DEFAULT_PASSES",
    "FOLD_CAP",
    "MAX_FOLD_GROWTH",
    "MAX_ROUNDS",
    "PASSES",
    "OptimizeError",
    "OptimizeReport",
    "Pass",
    "PassContext",
    "PassReport",
    "PassResult",
    "check_bind",
    "describe_passes",
    "get_pass",
    "optimize_with_report",
    "pass_module",
    "run_pass",
    "specialise_inputs",
]
