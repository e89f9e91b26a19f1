"""What :func:`~shapeinfer.inference.engine.infer` returns: :class:`Result`, every fact inference
learned about a model, with the guards and ranges read from them."""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.io.external import has_small_external_initializer
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.guards import CONTRADICTION, Guard, Ledger


@dataclass
class Result:
    """Everything inference learned about a model."""

    model: onnx.ModelProto
    facts: dict[str, Fact]  # main graph: tensor name -> fact
    graph_facts: dict[str, dict[str, Fact]]  # graph path (see graph_path) -> its tensors' facts
    input_symbols: set[str]
    fresh_symbols: list[str]
    equalities: list[tuple[str, str]]
    diagnostics: list[Diagnostic]
    capped: int = 0
    substitution: dict[str, D.Dim] = field(default_factory=dict)
    #: what inference assumed of the input symbols, as (kind, lhs, rhs, node) in walk order;
    #: :meth:`guards` gives the simplified set
    guard_events: list[tuple[str, D.Dim, D.Dim, str]] = field(default_factory=list)
    #: the ranges the caller gave (``SYM -> (lo, hi)``, hi None when unbounded)
    dim_ranges: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    #: with ``infer(..., record_reads=True)``: per main-graph node, in graph order, the fields
    #: the walk read of it, ``(op_type, domain, inputs, outputs)`` (the last two as lists of
    #: names), for a caller that would otherwise read them again (the optimize passes' index)
    node_reads: list[tuple[str, str, list[str], list[str]]] | None = None
    #: the fresh symbols that stand for one of several alternatives (If branches that differ):
    #: no declared dim replaces them
    join_symbols: frozenset[str] = frozenset()
    #: the values the run specialised input symbols to (``infer(bind=...)``)
    bind: dict[str, int] = field(default_factory=dict)
    #: the graph inputs' dims the run overrode (``infer(input_shapes=...)``), by input name
    input_shapes: dict[str, tuple[D.Dim, ...]] = field(default_factory=dict)
    #: subgraphs that never run (an If branch not taken, a Loop of no iteration) in which an op
    #: fails: their facts describe values never computed, which onnxruntime's loader may refuse
    dead_with_errors: int = 0
    #: (graph path, tensor) whose type the annotation leaves out: an input of a Concat that may be
    #: empty where its dims off the axis may differ from another input's. onnxruntime's kernel
    #: reads none of an empty input's dims, but onnx's inference (run when onnxruntime loads a
    #: model) requires them equal: written, the input's type can make the loader refuse a model
    #: that runs (and optimize's folding can expose them too: its output is then load-checked);
    #: with it, the types its shape follows from (its producers' inputs, a Loop body's outputs)
    unwritten: frozenset[tuple[str, str]] = frozenset()

    def written_types_may_not_load(self) -> bool:
        """Whether types written from this result may make onnxruntime's loader refuse a model
        that loads without them, whatever the sizes asked for: an op found failing, reported (an
        error diagnostic) or not (in a part that never runs: :attr:`dead_with_errors`); a type
        left out (:attr:`unwritten`), whose neighbours' types may still tell onnx's inference; a
        small initializer stored as external data (the loader cannot read its value where the
        written types let its inference need it). The write then checks its output."""
        if self.dead_with_errors or self.unwritten:
            return True
        if any(d.severity == "error" for d in self.diagnostics):
            return True
        return has_small_external_initializer(self.model.graph)

    def contradicted(self) -> bool:
        """Whether inference found guards no input allowed by the ranges, input shapes or
        binding satisfies (G015 errors): its shapes then hold for no input asked about."""
        return any(d.code == CONTRADICTION for d in self.diagnostics)

    def ledger(self) -> Ledger:
        """Every guard inference recorded, one per condition, nodes merged."""
        led = Ledger()
        for kind, a, b, node in self.guard_events:
            led.add(kind, self._resolved(a), self._resolved(b), node)
        return led

    def _resolved(self, d: D.Dim) -> D.Dim:
        """``d`` with the fresh symbols inference bound later replaced; input symbols stay
        (a guard ``Q == P`` must not become ``P == P`` through the binding it recorded)."""
        fresh = {k: v for k, v in self.substitution.items() if k not in self.input_symbols}
        return D.resolve(d, fresh)

    def guards(self) -> list[Guard]:
        """The conditions on the input symbols under which the inferred shapes hold, simplified
        (bounds on one symbol merged, guards the ranges prove dropped)."""
        return self.ledger().simplified(self.dim_ranges, self.input_symbols)

    def ranges(self) -> dict[str, tuple[int, int | None]]:
        """Each input symbol's valid range: the caller's, tightened by the bound guards."""
        return self.ledger().ranges(self.dim_ranges, sorted(self.input_symbols))

    def dims(self, name: str) -> tuple[D.Dim, ...] | None:
        """The dims of main-graph tensor ``name``: None when its rank is unknown, KeyError when
        the main graph has no tensor of that name."""
        f = self.facts.get(name)
        if f is None:
            raise KeyError(f"no tensor named {name!r} in the main graph")
        return f.shape

    def __repr__(self) -> str:
        """One line: the counts, not the model and every fact (``.facts``, ``.guards()``,
        ``.diagnostics`` give the detail)."""
        shapes = [f.shape for f in self.facts.values() if f.kind == "tensor"]
        known = sum(s is not None and not any(D.symbols(d) - self.input_symbols for d in s) for s in shapes)
        sev = {k: sum(d.severity == k for d in self.diagnostics) for k in ("error", "warning", "info")}
        name = self.model.graph.name or "?"
        return (
            f"<Result of {name!r}: {len(self.facts)} tensors, {known} with every dim known, "
            f"{len(self.fresh_symbols)} fresh symbols, {len(self.guard_events) and len(self.guards())} guards, "
            f"diagnostics {sev['error']} error / {sev['warning']} warning / {sev['info']} info>"
        )
