"""What optimize reports: per pass (:class:`PassReport`) and for the run (:class:`OptimizeReport`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shapeinfer.base import codes
from shapeinfer.io.source import Source


@dataclass
class PassReport:
    """What one pass did over all rounds: change counts and main-graph node counts.

    ``nodes_before`` is the count before its first run, ``nodes_after`` after its last.
    """

    name: str
    changes: dict[str, int] = field(default_factory=dict)
    nodes_before: int = 0
    nodes_after: int = 0
    node_delta: int = 0  # main-graph nodes added (+) or removed (-) by this pass, over all runs
    runs: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return any(self.changes.values())

    def add(self, changes: Mapping[str, int]) -> None:
        """Count ``changes`` (what one run did, by kind) into :attr:`changes`."""
        for k, v in changes.items():
            self.changes[k] = self.changes.get(k, 0) + v

    def record(self, before: int, after: int, seconds: float, changes: Mapping[str, int]) -> None:
        """Count one run: the main graph's nodes ``before`` and ``after`` it, its time, its changes."""
        self.seconds += seconds
        if self.runs == 0:
            self.nodes_before = before
        self.runs += 1
        self.nodes_after = after
        self.node_delta += after - before
        self.add(changes)


@dataclass
class OptimizeReport:
    """What :func:`optimize_with_report` did."""

    def blocking(self) -> list:
        """The input's errors that make the model unfit to write (``optimize -o`` refuses it
        without ``--force``): all but a declared type that contradicts inference (G006) of a
        value that is not a graph input, which the written model declares as inferred, a main
        graph whose nodes are out of order (G004 without a cycle), which is written sorted, and
        external data that cannot be read (E003), whose references are written as they are."""
        return [
            d
            for d in self.errors
            if d.code != codes.EXTERNAL_DATA_UNREADABLE
            and not (d.code == codes.DECLARED_SHAPE_MISMATCH and not str(d.message).startswith("graph input"))
            and not (d.code == codes.GRAPH_ORDER_OR_CYCLE and d.graph in (None, "main") and "cycle" not in d.message)
        ]

    passes: list[PassReport]
    nodes_before: int
    nodes_after: int
    opset_before: int | None  # None: the model imports no default-domain opset
    opset_after: int | None
    rounds: int
    seconds: float
    notes: list[str] = field(default_factory=list)  # for the user (e.g. a --bind fallback)
    #: the error diagnostics of inference on the input model (without ``bind``), as ``infer``
    #: reports them; :meth:`blocking` those that make it unfit to write
    errors: list = field(default_factory=list)
    #: nodes of the subgraphs (If branches, Loop and Scan bodies, at every depth) before and after
    subgraph_nodes_before: int = 0
    subgraph_nodes_after: int = 0
    #: nodes of the model-local function bodies before and after
    function_nodes_before: int = 0
    function_nodes_after: int = 0
    #: where the returned model came from and what of it is serialised already (its main
    #: graph's nodes and value_info when known, the input's external data files), for
    #: :func:`shapeinfer.io.writer.save_model` (stale once the model is edited)
    source: Source = field(default_factory=Source, repr=False)
    #: what stays dynamic in the result and why (:mod:`shapeinfer.passes.remaining`)
    remaining: Any = None
