"""The pass protocol: what a pass declares about itself and what a run of it returns.

A pass module defines one :class:`Pass` named ``PASS``, found by name in
:data:`shapeinfer.passes.registry.PASSES`; the rounds (:mod:`shapeinfer.passes.rounds`) run it
and :class:`~shapeinfer.passes.context.PassContext` alone decides when to infer, index, export
or write the model. The shape
follows onnx_ir's ``PassBase`` / ``PassResult`` / ``PassManager`` and tract's ``TypedPass``
(a declared object that says what it keeps), without their code.

A pass runs on the index: ``run(gm, facts, ctx) -> PassResult``. It edits the index
(:class:`~shapeinfer.ir.graph.GraphModel`) in place; ``facts`` is the inference result of the
model the index stands for when the pass declares ``infers_first`` (else None). The manager
exports the index when the result says ``edited``. What only works on a ModelProto (onnx's
version converter and inliner) runs before the pass, outside it
(:func:`shapeinfer.passes.reshape_v1_to_v5.prepare`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class PassResult:
    """What one run of a pass did.

    ``changes``: counts by kind of change (a run changed the model when one is non-zero).
    ``edited``: the pass edited the index (the manager exports it). ``settled``: the run
    changed nothing and vouches that only the passes in its ``settled_under`` changing the
    model cannot give it work.
    """

    changes: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    edited: bool = False
    settled: bool = False

    @property
    def changed(self) -> bool:
        return any(self.changes.values())


@dataclass(frozen=True)
class Pass:
    """A pass as the manager sees it: its name, its ``run`` and typed traits.

    - ``keeps_values``: every main-graph tensor that survives a run keeps its value, so the
      facts inferred before it still stand for the model after it.
    - ``idempotent``: a run on its own unchanged output changes nothing (not rerun then).
    - ``settled_under``: passes whose changes cannot give it work once a run of it found none
      and said so (:attr:`PassResult.settled`).
    - ``infers_first``: the pass reads the facts; the manager infers the model before it
      indexes it (the index then takes what inference read of each node).
    - ``whole_facts``: the facts it reads are a fresh inference of the model it is given,
      subgraphs included (not facts carried over earlier passes).
    """

    name: str
    run: Callable[..., PassResult]
    keeps_values: bool = False
    idempotent: bool = False
    infers_first: bool = False
    whole_facts: bool = False
    settled_under: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.whole_facts and not self.infers_first:
            raise ValueError(f"pass {self.name}: whole_facts is a trait of passes that infer first")
