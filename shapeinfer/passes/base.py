"""The pass protocol: what a pass declares about itself and what a run of it returns.

A pass module defines one :class:`Pass` named ``PASS``, found by name in
:data:`shapeinfer.passes.registry.PASSES`; the rounds (:mod:`shapeinfer.passes.rounds`) run it
and :class:`~shapeinfer.passes.context.PassContext` alone decides when to infer, index, export
or write the model. The shape
follows onnx_ir's ``PassBase`` / ``PassResult`` / ``PassManager`` and tract's ``TypedPass``
(a declared object that says what it keeps), without their code.

Two stages:

- :attr:`Stage.INDEX`: ``run(gm, facts, ctx) -> PassResult``. The pass edits the index
  (:class:`~shapeinfer.ir.graph.GraphModel`) in place; ``facts`` is the inference result
  of the model the index stands for when the pass declares ``infers_first`` (else None). The
  manager exports the index when the result says ``edited``.
- :attr:`Stage.PROTO`: ``run(model, ctx) -> PassResult``. The pass reads the protobuf itself
  (reshape-v1-to-v5, which may hand the model to onnx's version converter); it never modifies
  ``model`` and returns the new ModelProto in :attr:`PassResult.model` (None: unchanged). It
  runs once, before the rounds.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


class Stage(enum.Enum):
    """Where a pass works: on the protobuf (before the rounds) or on the index (in them)."""

    PROTO = "proto"
    INDEX = "index"


@dataclass(frozen=True)
class PassResult:
    """What one run of a pass did.

    ``changes``: counts by kind of change (a run changed the model when one is non-zero).
    ``edited``: an index pass edited the index (the manager exports it); a proto pass sets
    ``model`` instead. ``settled``: the run changed nothing and vouches that only the passes in
    its ``settled_under`` changing the model cannot give it work.
    """

    changes: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    edited: bool = False
    model: Any = None
    settled: bool = False

    @property
    def changed(self) -> bool:
        return any(self.changes.values())


@dataclass(frozen=True)
class Pass:
    """A pass as the manager sees it: its name, its stage, its ``run`` and typed traits.

    - ``keeps_values``: every main-graph tensor that survives a run keeps its value, so the
      facts inferred before it still stand for the model after it.
    - ``idempotent``: a run on its own unchanged output changes nothing (not rerun then).
    - ``settled_under``: passes whose changes cannot give it work once a run of it found none
      and said so (:attr:`PassResult.settled`).
    - ``infers_first``: an index pass that reads the facts; the manager infers the model before
      it indexes it (the index then takes what inference read of each node).
    - ``whole_facts``: the facts it reads are a fresh inference of the model it is given,
      subgraphs included (not facts carried over earlier passes).
    """

    name: str
    stage: Stage
    run: Callable[..., PassResult]
    keeps_values: bool = False
    idempotent: bool = False
    infers_first: bool = False
    whole_facts: bool = False
    settled_under: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.infers_first and self.stage is not Stage.INDEX:
            raise ValueError(f"pass {self.name}: infers_first is a trait of index passes")
        if self.whole_facts and not self.infers_first:
            raise ValueError(f"pass {self.name}: whole_facts is a trait of passes that infer first")
