"""What a rule sees: :class:`NodeContext` (its node, attributes, opset version, and the run's
symbolic side, the :class:`~shapeinfer.symbolic.scope.SymbolScope`) and :class:`GraphScope`
(the facts visible in one graph).

Rules (:mod:`shapeinfer.inference.ops`) import this module, never the engine: they see their node's
inputs' facts and this context, and reach the engine only through the context's methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import onnx
from onnx import AttributeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic, InferenceError
from shapeinfer.inference.ops.common import MAX_RANK
from shapeinfer.inference.policy import InferencePolicy
from shapeinfer.io.external import ExternalDataInvalid, ExternalDataMissing
from shapeinfer.io.onnxio import attribute_value, graph_path, subgraph_attrs, tensor_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.guards import Ledger
from shapeinfer.symbolic.scope import SymbolScope

#: The path of a model's main graph (a subgraph's is :func:`~shapeinfer.io.onnxio.graph_path`).
MAIN = "main"


class Walker(Protocol):
    """What a :class:`NodeContext`, and the modules the walk delegates to (:mod:`.fallback`,
    :mod:`.declared_types`, :mod:`.functions`, :mod:`.limits`), need of the engine that runs
    them (:class:`shapeinfer.inference.walker.Engine`)."""

    model: onnx.ModelProto
    symbols: SymbolScope
    diagnostics: list[Diagnostic]
    base_dir: str | None
    #: the readings the run takes besides shapeinfer's own
    policy: InferencePolicy
    #: whether rules may take soft guards (see :meth:`NodeContext.assume`)
    soft_guards: bool
    #: whether the node being inferred rests on a soft reading, and the tensors that may (see
    #: :meth:`NodeContext.assume`)
    node_soft: bool
    soft_values: set[str]
    soft_marks: int

    def mark_soft(self, names: Sequence[str]) -> None: ...

    #: opset imports by domain (``""`` for onnx's), as the node being inferred reads them
    opsets: dict[str, int]
    #: small initializers of graph inputs (defaults a caller may override), by name
    defaults: dict[str, onnx.TensorProto]
    #: graph path -> its nodes, and the tensor types it declares
    graph_nodes: dict[str, Sequence[onnx.NodeProto]]
    graph_declared: dict[str, dict[str, onnx.TypeProto]]
    #: the functions being inferred (a call of one of them is recursion)
    active_functions: set[tuple[str, str, str]]
    #: the size past which an expression becomes a fresh symbol, and how many did
    max_expr_size: int
    capped: int

    def fresh(self) -> D.Expr: ...

    def resolve_fact(self, f: Fact) -> Fact: ...

    def missing_data(self, e: Exception) -> bool: ...

    def attr_types(self, domain: str, op_type: str, version: int) -> dict[str, int]: ...

    def run_graph(
        self,
        graph: onnx.GraphProto,
        parent: GraphScope | None,
        inputs: Sequence[Fact | None] | None,
        name: str = ...,
        call_attrs: Mapping[str, AttributeProto] | None = ...,
    ) -> list[Fact]: ...

    def run_nodes(
        self,
        nodes: Sequence[onnx.NodeProto],
        scope: GraphScope,
        graph: str,
        call_attrs: Mapping[str, AttributeProto] | None = ...,
    ) -> None: ...


def show_number(d: D.Dim) -> str:
    """``d`` as short text: a number past a few dozen digits is shown by its size (Python will
    not even print one of 4,300 digits)."""
    if type(d) is int:
        return str(d) if d.bit_length() <= 128 else f"a {d.bit_length()}-bit number"
    return "an expression with a coefficient past int64"


class GraphScope:
    """The facts visible in one graph, with the enclosing graph's scope behind it."""

    __slots__ = ("declared", "facts", "parent", "path")

    def __init__(self, parent: GraphScope | None = None, path: str | None = None) -> None:
        self.facts: dict[str, Fact] = {}
        self.parent = parent
        self.path = path  # the graph's path in Engine.graph_facts (None: a function body)
        self.declared: dict[str, onnx.TypeProto] = {}  # types the graph declares (value_info, outputs)

    def get(self, name: str) -> Fact | None:
        s: GraphScope | None = self
        while s is not None:
            f = s.facts.get(name)
            if f is not None:
                return f
            s = s.parent
        return None


class NodeContext:
    """What a rule sees of its node and of the engine."""

    __slots__ = (
        "_attrs",
        "call_attrs",
        "domain",
        "engine",
        "graph",
        "index",
        "node",
        "on_soft",
        "op_type",
        "policy",
        "scope",
        "symbols",
        "version",
    )

    def __init__(
        self,
        engine: Walker,
        node: onnx.NodeProto,
        version: int,
        index: int,
        graph: str,
        scope: GraphScope,
        call_attrs: Mapping[str, AttributeProto] | None = None,
    ) -> None:
        self.engine = engine
        self.symbols = engine.symbols
        #: the readings the run takes besides shapeinfer's own (:class:`InferencePolicy`)
        self.policy = engine.policy
        self.node = node
        self.op_type = node.op_type
        self.domain = node.domain
        self.version = version
        self.index = index
        self.graph = graph
        self.scope = scope
        self.call_attrs = call_attrs
        self._attrs: dict[str, AttributeProto] | None = None
        #: the node's dims may be forms that hold only under the run's soft guards: it reads a
        #: tensor computed from a soft reading, or has taken a soft guard (see :meth:`assume`)
        self.on_soft = engine.node_soft

    # ---- attributes
    def _attr_protos(self) -> dict[str, AttributeProto]:
        if self._attrs is None:
            attrs = {}
            for a in self.node.attribute:
                if a.ref_attr_name:
                    if self.call_attrs and a.ref_attr_name in self.call_attrs:
                        attrs[a.name] = self.call_attrs[a.ref_attr_name]
                    continue
                attrs[a.name] = a
            self._attrs = attrs
        return self._attrs

    def has_attr(self, name: str) -> bool:
        return name in self._attr_protos()

    def attr(self, name: str, default: Any = None) -> Any:
        """The decoded value of attribute ``name`` (ints, floats, strings, lists, tensors, graphs)."""
        a = self._attr_protos().get(name)
        if a is None:
            return default
        expected = self.engine.attr_types(self.domain, self.op_type, self.version).get(name)
        if expected is not None and a.type != expected:
            have = AttributeProto.AttributeType.Name(a.type).lower()
            want = AttributeProto.AttributeType.Name(expected).lower()
            raise InferenceError(
                codes.ATTRIBUTE_WRONG_TYPE, f"attribute {name!r} is {have}; {self.op_type} takes {want}"
            )
        return attribute_value(a)

    def attr_tensor_fact(self, name: str) -> Fact | None:
        a = self._attr_protos().get(name)
        if a is None or a.type != AttributeProto.TENSOR:
            return None
        try:
            return tensor_fact(a.t, self.engine.base_dir)
        except (ExternalDataMissing, ExternalDataInvalid) as e:
            if not self.engine.missing_data(e):  # a missing file is reported once, for the file
                sev = "warning" if isinstance(e, ExternalDataMissing) else "error"
                self.diag(sev, codes.EXTERNAL_DATA_UNREADABLE, f"attribute {name!r}: {e}: values unknown")
            return tensor_fact(a.t, None, with_value=False)

    @property
    def num_outputs(self) -> int:
        return len(self.node.output)

    # ---- symbols and diagnostics
    def fresh(self) -> D.Expr:
        """A new symbol for a dim inference cannot determine."""
        return self.symbols.fresh()

    def fresh_shape(self, rank: int) -> tuple[D.Expr, ...]:
        """``rank`` new symbols; a rank past MAX_RANK (a length read from the model) is E012."""
        if type(rank) is not int or rank > MAX_RANK:
            raise InferenceError(
                codes.RANK_TOO_LARGE,
                f"a rank of {D.format(rank) if type(rank) is not int else show_number(rank)} "
                f"(over {MAX_RANK}) cannot be built",
            )
        fresh = self.symbols.fresh
        return tuple(fresh() for _ in range(rank))

    def diag(self, severity: str, code: str, message: str) -> None:
        self.engine.diagnostics.append(
            Diagnostic(severity, code, message, self.node.name or None, self.op_type, self.index, self.graph)
        )

    def producer(self, name: str, anywhere: bool = False) -> tuple[int, onnx.NodeProto] | None:
        """``(index, node)`` of the node of this graph that produces tensor ``name``: among the
        nodes before this one (``anywhere``: in the whole graph), the last such; None when none."""
        nodes = self.engine.graph_nodes.get(self.graph, ())
        limit = len(nodes) if anywhere else min(self.index, len(nodes))
        for k in range(limit - 1, -1, -1):
            if name in nodes[k].output:
                return k, nodes[k]
        return None

    @property
    def label(self) -> str:
        """The node as guards name it: its name, else ``<op_type> #<index>``."""
        return self.node.name or f"{self.op_type} #{self.index}"

    def _took_soft(self) -> None:
        """The node has taken a soft guard: its outputs may rest on the soft reading."""
        self.on_soft = True
        self.engine.mark_soft(self.node.output)

    def unify(self, a: D.Dim, b: D.Dim) -> D.Dim:
        """Record that dims ``a`` and ``b`` must be equal (a guard of this node, and a G003
        warning when it equates symbols that are not all fresh); returns the representative.
        Two different ints raise G002."""
        rep, other = self.symbols.unify(a, b, self.label, self.on_soft)
        if other is not None and not all(self.symbols.is_fresh(s) for s in D.symbols(other)):
            self.diag("warning", codes.ASSUMED_DIM_EQUALITY, f"assuming {D.format(other)} == {D.format(rep)}")
        return rep

    def assume(self, kind: str, lhs: D.Dim, rhs: D.Dim, report: bool = False, soft: bool = False) -> None:
        """Record that the inferred shapes hold only when ``lhs <kind> rhs`` (see
        :mod:`shapeinfer.symbolic.guards`). ``report`` also makes it a G012 diagnostic of the node (for
        the guards no other code reports: G003 says the equalities, G009 the float bounds).
        ``soft``: the model may run where it does not hold (see :meth:`SymbolScope.assume`); a
        rule asks :attr:`soft_guards` first, and gives a form that holds everywhere when they
        are off. Every guard of a node :attr:`on_soft` is soft as well: it speaks of a form
        that holds only under the soft guards (a Reshape entry ``n//2`` read literally, 0 at
        n = 1 where it copies the input's dim), and may fail where the model runs (the run
        without soft guards says it of the exact forms)."""
        if soft and not self.on_soft and self.engine.soft_guards:
            self._took_soft()
        lhs, rhs = self.symbols.assume(kind, lhs, rhs, self.label, soft or self.on_soft)
        if report:
            led = Ledger()
            led.add(kind, lhs, rhs)
            for g in led:
                self.diag("info", codes.INPUT_GUARD, f"the inferred shapes hold only when {g.text}")

    def infer_graph(self, graph: onnx.GraphProto, inputs: Sequence[Fact | None], attr: str | None = None) -> list[Fact]:
        """Infer subgraph ``graph`` (outer scope visible) with its inputs' facts; returns outputs'.

        ``attr`` names the node attribute holding the graph (found by comparison when omitted).
        """
        if attr is None:
            attr = next((name for name, g in subgraph_attrs(self.node) if g == graph), "?")
        marks = self.engine.soft_marks
        outs = self.engine.run_graph(
            graph, self.scope, inputs, name=graph_path(self.graph, self.index, attr), call_attrs=self.call_attrs
        )
        if self.engine.soft_marks > marks and not self.on_soft:
            self._took_soft()  # the subgraph took a soft guard
        return outs
