"""The inference engine: walks a model's graphs and subgraphs and applies the per-op rules.

Contract of :func:`infer`:

- Every tensor of every graph gets a :class:`~shapeinfer.symbolic.facts.Fact`. Dims come from the graph
  inputs (their ``dim_param`` symbols, or a stable ``<input>_d<axis>`` name for an open dim) and
  flow through native rules (:mod:`shapeinfer.inference.ops`) or, for ops without one, through onnx's own
  per-node inference with symbolic dims passed as ``dim_param`` text.
- A dim that cannot be determined becomes a fresh symbol ``unk_<n>`` (numbered in walk order,
  so the same model always gives the same names).
- When an op's contract requires two different dims to be equal, the equality is recorded,
  inference continues with one representative (a graph-input symbol over a fresh one), and a
  diagnostic reports it when it joins symbols that are not fresh.
- Nothing a model contains makes it raise: invalid nodes become diagnostics.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import onnx
from onnx import AttributeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic, InferenceError
from shapeinfer.base.toposort import lexicographic_order
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.declarations import (
    checker_refuses_declarations,
    contradictions,
    declaration_severity,
    dims_text,
    dtype_name,
    static_kind,
)
from shapeinfer.inference.node_context import GraphScope, NodeContext, _show_number
from shapeinfer.inference.ops.common import check_against_probe, clear_foreign_params, probe_binding, probe_outputs
from shapeinfer.io.external import (
    ExternalDataError,
    ExternalDataInvalid,
    ExternalDataMissing,
    external_tensors,
    missing_data_files,
)
from shapeinfer.io.onnxio import (
    dim_from_proto,
    fact_type,
    graph_path,
    ident,
    is_placeholder,
    subgraph_attrs,
    tensor_fact,
    tensor_numel,
    tensor_problem,
    type_fact,
    write_shape,
)
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact
from shapeinfer.symbolic.guards import CONTRADICTION, Guard, Ledger, contradiction_diagnostics
from shapeinfer.symbolic.guards import contradictions as guard_contradictions
from shapeinfer.symbolic.intervals import holds_le
from shapeinfer.symbolic.scope import FRESH_PREFIX, GuardEvent, SymbolScope

#: Expressions larger than this (see :func:`shapeinfer.symbolic.dims.size`) become fresh symbols.
MAX_EXPR_SIZE = 256

_DATA_TYPES = frozenset(onnx.TensorProto.DataType.values())
_UINT64_MAX = 2**64 - 1


def _coeff_overflow(d: D.Dim) -> bool:
    """True when expression ``d`` holds an integer (a coefficient, a divisor) outside int64."""
    if type(d) is int:
        return not -D.INT64_MAX - 1 <= d <= D.INT64_MAX
    for m, c in d.terms:
        if not -D.INT64_MAX - 1 <= c <= D.INT64_MAX:
            return True
        for atom in m:
            if any(_coeff_overflow(x) for x in atom.args):
                return True
    return False


MAIN = "main"
_INT_TYPES = frozenset((2, 3, 4, 5, 6, 7, 12, 13))
_UNKNOWN = Fact()
_GRAPH_ATTRS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


_OnnxInferenceError = onnx.shape_inference.InferenceError


def _onnx_message(e: Exception) -> str:
    """The last line of what onnx raised (its own verdict), at most 300 characters."""
    text = str(e).strip()
    return (text.splitlines()[-1] if text else type(e).__name__)[:300]


def _untyped(f: Fact | None) -> bool:
    """True for an input inference knows nothing of (not even its element type or rank)."""
    return f is None or (f.kind == "tensor" and f.dtype == 0 and f.shape is None)


def _arity_problem(ctx: NodeContext, schema) -> bool:
    """Report (E018) a node with more or fewer inputs or outputs than its schema allows."""
    node = ctx.node
    for what, n, lo, hi in (
        ("input", len(node.input), schema.min_input, schema.max_input),
        ("output", len(node.output), schema.min_output, schema.max_output),
    ):
        if not lo <= n <= hi:
            want = f"{lo}" if lo == hi else f"{lo} to {hi}"
            ctx.diag(
                "error",
                codes.WRONG_INPUT_OUTPUT_COUNT,
                f"{n} {what}(s) where {node.op_type}-{schema.since_version} takes {want}",
            )
            return True
    return False


class InferenceTimeout(Exception):
    """Inference ran past its time limit."""


class Fallback(Exception):
    """Raised by a rule to hand its node to onnx's per-node inference."""


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


class Engine:
    """One inference run over one model."""

    def __init__(
        self,
        model: onnx.ModelProto,
        base_dir: str | None = None,
        max_expr_size: int = MAX_EXPR_SIZE,
        timeout: float | None = None,
        dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
        defaults_as_constants: bool = False,
        onnxruntime_conventions: bool = False,
        soft_guards: bool = True,
    ) -> None:
        self.model = model
        #: read the main graph's initializer defaults of graph inputs as constants (onnx's
        #: inference does; off by default: a caller may override them)
        self.defaults_as_constants = defaults_as_constants
        #: take onnxruntime's symbolic tool's readings, each made visible (see :func:`infer`)
        self.onnxruntime_conventions = onnxruntime_conventions
        #: rules may take soft guards (see :meth:`NodeContext.assume`); off in the run
        #: :func:`infer` makes when a soft guard the hard ones do not imply was taken
        self.soft_guards = soft_guards
        #: the run's symbolic state: input symbols, ranges, fresh symbols, substitution,
        #: equalities and guards (rules reach it as ``ctx.symbols``)
        self.symbols = SymbolScope(dim_ranges)
        # (graph, tensor) -> (lo, hi): proven bounds of an integer tensor's element values,
        # kept only along index paths (Range and ops that move or select its elements)
        self.value_bounds: dict[tuple[str, str], tuple[D.Dim, D.Dim]] = {}
        self.base_dir = base_dir
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.timeout = timeout
        self.opsets: dict[str, int] = {}
        for o in model.opset_import:
            self.opsets["" if o.domain == "ai.onnx" else o.domain] = o.version
        self.diagnostics: list[Diagnostic] = []
        if "" not in self.opsets and any(n.domain in ("", "ai.onnx") for n in model.graph.node):
            latest = onnx.defs.onnx_opset_version()
            self.opsets[""] = latest
            self.diagnostics.append(
                Diagnostic(
                    "warning",
                    codes.NO_DEFAULT_OPSET,
                    f"no opset import for the default domain; assuming opset {latest}",
                )
            )
        # IR 10 functions may be overloaded: a call names its body by (domain, name, overload).
        self.functions = {(f.domain, f.name, f.overload): f for f in model.functions}
        self._active_functions: set[tuple[str, str, str]] = set()
        self.node_reads: list | None = None  # set to a list to have the main graph's walk fill it
        self.graph_facts: dict[str, dict[str, Fact]] = {}
        #: graph path -> the tensor types it declares (value_info, outputs): claims to check
        self.graph_declared: dict[str, dict[str, onnx.TypeProto]] = {}
        self.capped = 0
        self.max_expr_size = max_expr_size
        self._type_cache: dict[Fact, onnx.TypeProto] = {}
        self._memo: dict[tuple, tuple] = {}
        self._open_memo: tuple[int, dict[D.Dim, bool]] = (0, {})  # see _open
        self.graph_nodes: dict[str, Sequence[onnx.NodeProto]] = {}  # graph path -> its nodes
        self._attr_types: dict[tuple, dict[str, int]] = {}
        #: Also run onnx's per-node inference on nodes a native rule handles, as a validator.
        self.validate_nodes = True
        self._schemas: dict[tuple, Any] = {}
        self._validate_cache: dict[Fact, tuple] = {}
        self._opset_dict: dict[str, int] | None = None
        #: Small initializers of graph inputs (defaults a caller may override), by name.
        self.defaults: dict[str, onnx.TensorProto] = {}
        self._missing_files: list | None = None  # see missing_data

    def missing_data(self, e: ExternalDataError) -> bool:
        """Whether ``e`` (raised reading a tensor of the model) is a data file missing from the
        model's folder. Each such file is reported once, as one E003 error naming it and the
        tensors stored in it (the model cannot run), the first time one of its tensors is read;
        its tensors' values stay unknown, without a diagnostic each. Without a folder (a model
        from stdin or memory) nothing is known missing: False."""
        if not isinstance(e, ExternalDataMissing) or self.base_dir is None:
            return False
        if self._missing_files is None:
            self._missing_files = missing_data_files(external_tensors(self.model), self.base_dir)
            for f in self._missing_files:
                self.diagnostics.append(Diagnostic("error", codes.EXTERNAL_DATA_UNREADABLE, f.message()))
        return bool(self._missing_files)

    def attr_types(self, domain: str, op_type: str, version: int) -> dict[str, int]:
        """Attribute name -> AttributeProto type the op's schema (onnx's, else onnxruntime's
        contrib table) declares; empty without one."""
        key = (domain, op_type, version)
        types = self._attr_types.get(key)
        if types is None:
            domain = "" if domain == "ai.onnx" else domain
            try:
                schema = onnx.defs.get_schema(op_type, version, domain)
                types = {k: int(a.type) for k, a in schema.attributes.items()}
            except onnx.defs.SchemaError:
                from shapeinfer.inference.ops.contrib import schemas as contrib_schemas  # only for contrib ops

                contrib = contrib_schemas.lookup(domain, op_type, version)
                types = contrib.attr_types if contrib is not None else {}
            self._attr_types[key] = types
        return types

    # ---------------------------------------------------------------- symbols
    def fresh(self) -> D.Expr:
        return self.symbols.fresh()

    def resolve_fact(self, f: Fact) -> Fact:
        if not self.symbols.subst or (f.shape is None and f.value is None and f.elem is None):
            return f
        resolve = self.symbols.resolve
        shape = None if f.shape is None else tuple(resolve(d) for d in f.shape)
        value = None
        if f.value is not None:
            value = tuple(resolve(v) if isinstance(v, D.Expr) else v for v in f.value)
        elem = None if f.elem is None else self.resolve_fact(f.elem)
        return Fact(f.dtype, shape, value, f.kind, elem)

    def cap(self, d: D.Dim, ctx: NodeContext | None = None, what: str = "") -> D.Dim:
        """``d``, or a fresh symbol when its expression is larger than the cap (an info G016
        of the node saying so, where there is one)."""
        if type(d) is int or D.size(d) <= self.max_expr_size:
            return d
        self.capped += 1
        f = self.fresh()
        if ctx is not None:
            msg = (
                f"{what}: an expression of size {D.size(d)} is past the cap of {self.max_expr_size}"
                f" ({D.format(d)[:60]}...): given up as {D.format(f)}"
            )
            ctx.diag("info", codes.DIM_GIVEN_UP, msg)
        return f

    # ---------------------------------------------------------------- graphs
    def input_fact(self, vi: onnx.ValueInfoProto) -> Fact:
        """The fact of main-graph input ``vi`` as declared: a dim without a value or a name, with
        a negative value (warning E006) or with a placeholder name (``?``, ``None``, ``-1``: see
        :func:`~shapeinfer.io.onnxio.is_placeholder`; info E009, naming the axes) is the input
        symbol ``<input>_d<axis>``, one per axis, so two of them are never the same dim."""
        base = ident(vi.name)
        f = type_fact(vi.type, lambda axis: D.sym(f"{base}_d{axis}"))  # a declared -1 is open
        tt = vi.type.tensor_type if vi.type.WhichOneof("value") == "tensor_type" else None
        if tt is not None and any(d.HasField("dim_value") and d.dim_value < 0 for d in tt.shape.dim):
            self.diagnostics.append(
                Diagnostic(
                    "warning",
                    codes.NEGATIVE_INPUT_DIM,
                    f"graph input {vi.name!r} declares a negative dim; treated as unknown",
                    tensor=vi.name,
                )
            )
        if tt is not None:
            named = [
                (axis, d.dim_param)
                for axis, d in enumerate(tt.shape.dim)
                if d.HasField("dim_param") and d.dim_param.strip() and is_placeholder(d.dim_param)
            ]
            if named:
                axes = ", ".join(f"{axis} ({text!r})" for axis, text in named)
                syms = ", ".join(f"{base}_d{axis}" for axis, _ in named)
                msg = (
                    f"graph input {vi.name!r} gives dim{'s' if len(named) > 1 else ''} {axes} a placeholder"
                    f" name, not a symbol: each is its own unknown dim, named {syms} (bind or range these)"
                )
                self.diagnostics.append(Diagnostic("info", codes.PLACEHOLDER_INPUT_DIM, msg, tensor=vi.name))
        for d in f.shape or ():
            self.symbols.add_inputs(D.symbols(d))
        return f

    def _check_default(self, declared: Fact, t: onnx.TensorProto, graph: str) -> None:
        """A graph input's declared type against its initializer (its default value): a different
        element type, rank or static dim is an error (G006)."""
        if declared.kind != "tensor":
            return
        problems = []
        if declared.dtype and t.data_type and declared.dtype != t.data_type:
            problems.append(f"type {declared.dtype} where the initializer has {t.data_type}")
        if declared.shape is not None:
            if len(declared.shape) != len(t.dims):
                problems.append(f"rank {len(declared.shape)} where the initializer has rank {len(t.dims)}")
            else:
                bad = [i for i, (d, x) in enumerate(zip(declared.shape, t.dims)) if type(d) is int and d != x]
                if bad:
                    problems.append(f"dims {list(declared.shape)} where the initializer has {list(t.dims)}")
        if problems:
            msg = f"graph input {t.name!r} declares {'; '.join(problems)}"
            self.diagnostics.append(Diagnostic("error", codes.DECLARED_SHAPE_MISMATCH, msg, graph=graph, tensor=t.name))

    def run_graph(
        self,
        graph: onnx.GraphProto,
        parent: GraphScope | None,
        inputs: Sequence[Fact | None] | None,
        name: str = "main",
        call_attrs: Mapping[str, AttributeProto] | None = None,
    ) -> list[Fact]:
        scope = GraphScope(parent)
        facts = scope.facts
        for t in graph.sparse_initializer:
            facts[t.values.name] = Fact(t.values.data_type, tuple(t.dims), None, "tensor")
        for i, vi in enumerate(graph.input):
            if self.deadline is not None and time.monotonic() > self.deadline:  # each reads its dims
                raise InferenceTimeout(f"inference took longer than {self.timeout:g}s")
            given = inputs[i] if inputs is not None and i < len(inputs) else None
            if given is not None:
                facts[vi.name] = given
            else:
                declared = self.input_fact(vi) if inputs is None else type_fact(vi.type, lambda axis: self.fresh())
                facts[vi.name] = declared
        # Before IR 4 every initializer had to be listed as an input: a constant, not a default.
        overridable = not (self.model.ir_version and self.model.ir_version < 4)
        for t in graph.initializer:
            problem = tensor_problem(t)
            if problem is not None:
                msg = f"initializer {t.name!r} is invalid: {problem}"
                self.diagnostics.append(Diagnostic("error", codes.INVALID_INITIALIZER, msg, graph=name, tensor=t.name))
                if t.name not in facts or not overridable:
                    facts[t.name] = Fact()  # unreadable: neither its type nor its dims are known
                continue
            if t.name in facts and overridable:  # an input with a default: its value may be overridden
                self._check_default(facts[t.name], t, name)
                if not (self.defaults_as_constants and parent is None):
                    if tensor_numel(t) <= MAX_VALUE_ELEMENTS and problem is None and not t.data_location:
                        self.defaults[t.name] = t  # validation checks nodes at the default value too
                    continue
                msg = f"graph input {t.name!r}: assuming it keeps its initializer's value (a default, overridable)"
                self.diagnostics.append(Diagnostic("info", codes.DECLARED_TYPE_ASSUMED, msg, graph=name, tensor=t.name))
            try:
                facts[t.name] = tensor_fact(t, self.base_dir)
            except (ExternalDataMissing, ExternalDataInvalid) as e:
                facts[t.name] = tensor_fact(t, None, with_value=False)
                if not self.missing_data(e):
                    sev = "warning" if isinstance(e, ExternalDataMissing) else "error"
                    diag = Diagnostic(
                        sev, codes.EXTERNAL_DATA_UNREADABLE, f"{e}: values unknown", graph=name, tensor=t.name
                    )
                    self.diagnostics.append(diag)
        for vi in (*graph.value_info, *graph.output):
            if vi.HasField("type") and vi.type.WhichOneof("value") == "tensor_type":
                scope.declared.setdefault(vi.name, vi.type)
        self.run_nodes(graph.node, scope, name, call_attrs)
        self.graph_facts[name] = facts
        if scope.declared:
            self.graph_declared[name] = scope.declared
        outs = []
        for vi in graph.output:
            f = scope.get(vi.name)
            if f is None:
                self.diagnostics.append(
                    Diagnostic(
                        "error",
                        codes.UNDEFINED_TENSOR,
                        f"graph output {vi.name!r} is never produced",
                        graph=name,
                        tensor=vi.name,
                    )
                )
                f = type_fact(vi.type, lambda axis: self.fresh())
            outs.append(self.resolve_fact(f))
        return outs

    def _topological_order(self, nodes: Sequence[onnx.NodeProto], graph: str) -> list[int]:
        """Node indices with producers first, the lowest ready index first (graph order wherever it
        is valid); nodes on a cycle come last, reported as G004."""
        producer: dict[str, int] = {}
        for k, n in enumerate(nodes):
            for o in n.output:
                if o:
                    producer.setdefault(o, k)
        preds = [[producer[i] for i in n.input if i in producer] for n in nodes]
        order = lexicographic_order(preds)
        if len(order) < len(nodes):
            placed = set(order)
            left = [k for k in range(len(nodes)) if k not in placed]
            self.diagnostics.append(
                Diagnostic(
                    "error",
                    codes.GRAPH_ORDER_OR_CYCLE,
                    f"{len(left)} node(s) form a cycle",
                    graph=graph,
                    node=nodes[left[0]].name or None,
                    op_type=nodes[left[0]].op_type,
                    index=left[0],
                )
            )
            order.extend(left)
        else:
            self.diagnostics.append(
                # onnx's checker refuses it (lint's onnxruntime and openvino targets grade it per graph)
                Diagnostic("error", codes.GRAPH_ORDER_OR_CYCLE, "nodes are not in topological order", graph=graph)
            )
        return order

    def run_nodes(
        self,
        nodes: Sequence[onnx.NodeProto],
        scope: GraphScope,
        graph: str,
        call_attrs: Mapping[str, AttributeProto] | None = None,
    ) -> None:
        """Infer ``nodes`` into ``scope``: in graph order, or topologically when the graph is not
        sorted (the partial walk in graph order is undone first)."""
        facts = scope.facts
        initial = set(facts)
        self.graph_nodes[graph] = nodes
        ndiag = len(self.diagnostics)
        mark = self.symbols.checkpoint()
        if self._walk(nodes, scope, graph, call_attrs, None):
            return
        for name in [n for n in facts if n not in initial]:
            del facts[name]
        del self.diagnostics[ndiag:]
        self.symbols.rollback(mark, release_fresh=True)
        self._open_memo = (-1, {})  # released names may be drawn again, as joins or not
        self._walk(nodes, scope, graph, call_attrs, self._topological_order(nodes, graph))

    def _walk(
        self,
        nodes: Sequence[onnx.NodeProto],
        scope: GraphScope,
        graph: str,
        call_attrs: Mapping[str, AttributeProto] | None,
        order: list[int] | None,
    ) -> bool:
        """One pass over ``nodes`` (graph order when ``order`` is None). Returns False, at once,
        when graph order meets an input that a later node produces."""
        facts = scope.facts
        get_fact = facts.get
        parent = scope.parent
        later: set[str] | None = None
        placeholders: set[str] = set()  # undefined inputs given an unknown fact (cycles)
        declared = scope.declared
        deadline = self.deadline
        infer_node = self.infer_node
        functions = self.functions
        memo = self._memo
        value_bounds = self.value_bounds  # filled by _value_bounds from a Range on
        versions: dict[str, tuple[str, int]] = {}  # node domain -> (domain, opset version)
        count = 0
        reads = self.node_reads if graph == MAIN else None
        # A subgraph's or function body's declarations speak of this instance only: the names
        # they use are private to it (see with_declared), and only the fresh symbols drawn from
        # here on are its own.
        private: dict[str, D.Dim] | None = None if graph == MAIN else {}
        own_from = len(self.symbols.fresh_symbols)
        for k in range(len(nodes)) if order is None else order:
            if deadline is not None:
                if count % 64 == 0 and time.monotonic() > deadline:
                    raise InferenceTimeout(f"inference took longer than {self.timeout:g}s")
                count += 1
            node = nodes[k]
            ndiag = len(self.diagnostics)
            in_names = node.input[:]
            ins: list[Fact | None] = []
            subst = self.symbols.subst  # only inference (below) binds symbols: the same for every input
            for name in in_names:
                if not name:
                    ins.append(None)
                    continue
                f = get_fact(name)
                if f is None and parent is not None:
                    f = parent.get(name)
                if f is None:
                    if order is None:
                        if later is None:
                            later = {o for n in nodes[k + 1 :] for o in n.output[:]}
                        if name in later:
                            return False
                    self.diagnostics.append(
                        Diagnostic(
                            "error",
                            codes.UNDEFINED_TENSOR,
                            f"input {name!r} is not defined",
                            node.name or None,
                            node.op_type,
                            k,
                            graph,
                            name,
                        )
                    )
                    f = facts[name] = Fact()
                    placeholders.add(name)
                elif subst:
                    f = self.resolve_fact(f)
                ins.append(f)
            out_names = node.output[:]
            op_type = node.op_type
            raw_domain = node.domain
            if reads is not None:
                reads[k] = (op_type, raw_domain, in_names, out_names)
            dv = versions.get(raw_domain)
            if dv is None:
                dv = versions[raw_domain] = self._domain_version(raw_domain)
            domain, version = dv
            fn = functions.get((raw_domain, op_type, node.overload)) if functions else None
            if fn is not None:
                ctx = NodeContext(self, node, version, k, graph, scope, call_attrs)
                outs = self.infer_function(ctx, fn, ins)
            else:
                # Memoise on (op, version, attributes, outputs used, input facts): repeated
                # layers infer once (see infer_node for what is stored).
                used = len(out_names) if "" not in out_names else tuple(bool(o) for o in out_names)
                attrs = node.attribute
                if attrs:
                    key = None
                    akey = []
                    size = 0
                    for a in attrs:
                        if a.ref_attr_name or a.type in _GRAPH_ATTRS:
                            break
                        b = a.SerializeToString()
                        size += len(b)
                        akey.append(b)
                    else:
                        if size <= 4096:  # large constants: hashing them costs more than inferring
                            key = (domain, op_type, version, tuple(akey), used, tuple(ins))
                else:
                    key = (domain, op_type, version, (), used, tuple(ins))
                hit = None if key is None else memo.get(key)
                if hit is None:
                    outs = infer_node(node, ins, k, graph, scope, call_attrs, op_type, domain, version, key)
                else:
                    outs, diags = hit
                    for d in diags:
                        self.diagnostics.append(replace(d, node=node.name or None, index=k, graph=graph))
            if (
                raw_domain in ("", "ai.onnx")
                and (value_bounds or op_type == "Range")
                and registry.op_traits(op_type).value_bounds  # declared with the op's rule
            ):
                self._value_bounds(node, ins, outs, k, graph, in_names, out_names)
            n_outs = len(outs)
            for i, o in enumerate(out_names):
                if o:
                    if o in facts and o not in placeholders:
                        self.diagnostics.append(
                            Diagnostic(
                                "error",
                                codes.TENSOR_DEFINED_TWICE,
                                f"tensor {o!r} is defined more than once",
                                node.name or None,
                                node.op_type,
                                k,
                                graph,
                                o,
                            )
                        )
                    f = outs[i] if i < n_outs else None
                    if declared and o in declared:
                        g, assumed = self.with_declared(
                            f, declared[o], node.name or f"{op_type} #{k}", private, own_from
                        )
                        if assumed and not any(d.severity == "error" for d in self.diagnostics[ndiag:]):
                            self._adopted(o, f, g, declared[o], node, k, graph)  # (an invalid node's: moot)
                        f = g
                    facts[o] = _UNKNOWN if f is None else f
        return True

    def _adopted(
        self, name: str, f: Fact | None, g: Fact | None, tp: onnx.TypeProto, node: onnx.NodeProto, k: int, graph: str
    ) -> None:
        """Say (info G013) that tensor ``name`` took from its declared type ``tp`` what inference
        did not know: fact ``f`` became ``g``."""
        if g is None:
            return
        took = []
        if g.dtype and (f is None or not f.dtype):
            took.append(f"element type {dtype_name(g.dtype)}")
        old = None if f is None else f.shape
        if g.shape is not None and g.shape != old:
            decl = dims_text([dim_from_proto(d) for d in tp.tensor_type.shape.dim])
            if old is None:
                took.append(f"rank {len(g.shape)} {decl}")
            else:
                took.append(f"shape {decl} (inferred {dims_text(old)})")
        if took:
            msg = f"{name!r}: assuming the declared {' and '.join(took)}, which inference could not determine"
            if graph != MAIN and g.shape is not None and g.shape != old:
                msg += " (a claim of this subgraph alone: names it declares are its own)"
            self.diagnostics.append(
                Diagnostic("info", codes.DECLARED_TYPE_ASSUMED, msg, node.name or None, node.op_type, k, graph, name)
            )

    def with_declared(
        self,
        f: Fact | None,
        declared: onnx.TypeProto,
        label: str = "",
        private: dict[str, D.Dim] | None = None,
        own_from: int = 0,
    ) -> tuple[Fact | None, bool]:
        """``f`` completed from the tensor type the graph declares for it, where inference knows
        less: an unknown element type or rank takes the declared one, a dim that is only fresh
        symbols (not a join: see :meth:`SymbolScope.join`) takes the declared dim (a declared
        ``-1``, placeholder or open dim is unknown); a lone fresh symbol is bound to it (a guard
        of ``label``). Anything inference determined wins; a declaration that contradicts it is
        G006 (see :func:`check_declarations`). A declared dim that equals a join's expression at
        every alternative is taken as proven. Returns the fact (``f`` itself when nothing was
        taken) and whether anything was assumed.

        ``private`` is given for a declaration inside a subgraph or function body (one run of
        it: an If branch, a Loop iteration, a call), whose claims hold in that instance only: a
        name it uses other than the graph inputs' symbols is the instance's own (``private`` maps
        it to what it stands for there: the unknown dim it first names alone, else a fresh
        symbol drawn at its first use), so equal names in two branches, two bodies or a body and
        the main graph are never the same dim; and only a fresh symbol the instance drew itself
        (numbered ``own_from`` or later) is bound, one from an enclosing graph being replaced in
        this tensor's fact alone."""
        if f is not None and f.kind != "tensor":
            return f, False
        tt = declared.tensor_type
        if f is None:
            f = _UNKNOWN
        dtype = f.dtype or tt.elem_type
        shape = f.shape
        symbols = self.symbols
        joins = symbols.joins
        if (
            dtype == f.dtype
            and shape is not None
            and not any(self._open(d) or (joins and not D.symbols(d).isdisjoint(joins)) for d in shape)
        ):
            return f, False  # nothing the declaration could complete: its dims are not even read
        assumed = dtype != f.dtype
        if tt.HasField("shape"):
            decl = [dim_from_proto(d) for d in tt.shape.dim]
            if shape is None:
                shape = tuple(self.fresh() if x is None else self._private_dim(x, private) for x in decl)
                assumed = True
            elif len(decl) == len(shape):
                out = []
                for d, x in zip(shape, decl):
                    if (
                        x is not None
                        and joins
                        and type(d) is not int
                        and (private is None or D.symbols(x) <= symbols.input_symbols)
                        and symbols.equal_at_every_alternative(d, x)
                    ):
                        d = x  # proven, not assumed: the declared dim holds in every alternative
                    elif x is not None and self._open(d):
                        x = self._private_dim(x, private, d)
                        if x == d:
                            out.append(d)  # the declaration names the inferred dim: nothing assumed
                            continue
                        assumed = True
                        # a lone fresh symbol is bound to the declared dim wherever it occurs
                        # (in a subgraph: one the subgraph drew itself)
                        syms = D.symbols(d)
                        lone = next(iter(syms)) if len(syms) == 1 else None
                        if lone is not None and d == D.sym(lone) and (private is None or self._own(lone, own_from)):
                            d = self.symbols.unify(d, x, label)[0]
                        else:
                            d = x
                    out.append(d)
                shape = tuple(out)
        if dtype == f.dtype and shape == f.shape:
            return f, False
        return Fact(dtype, shape, f.value if shape == f.shape else None, "tensor", None), assumed

    def _private_dim(self, x: D.Dim, private: dict[str, D.Dim] | None, d: D.Dim | None = None) -> D.Dim:
        """Declared dim ``x`` as :meth:`with_declared` reads it in a subgraph instance (``x``
        itself in the main graph, ``private`` None): each symbol that is not a graph input's
        replaced by what it stands for in the instance, recorded in ``private`` at its first
        use: the unknown dim ``d`` when ``x`` is that name alone (a name for ``d``: nothing
        assumed), else a fresh symbol."""
        if private is None or type(x) is int:
            return x
        names = D.symbols(x) - self.symbols.input_symbols
        if not names:
            return x
        if d is not None and len(names) == 1:
            (name,) = names
            if name not in private and x == D.sym(name):
                private[name] = d
                return d
        for n in sorted(names):
            if n not in private:
                private[n] = self.fresh()
        return D.substitute(x, {n: private[n] for n in names})

    def _own(self, name: str, own_from: int) -> bool:
        """Whether ``name`` is a fresh symbol drawn at position ``own_from`` or later (fresh
        symbols are numbered by position: ``unk_<n>``)."""
        if not self.symbols.is_fresh(name):
            return False
        n = name[len(FRESH_PREFIX) :]
        return n.isdigit() and int(n) >= own_from

    def _domain_version(self, raw_domain: str) -> tuple[str, int]:
        """A node's domain as the opsets key it (``ai.onnx`` is ``""``) and the opset version it
        is read at (the latest onnx opset, or 1, for a domain the model does not import)."""
        domain = "" if raw_domain == "ai.onnx" else raw_domain
        version = self.opsets.get(domain)
        if version is None:
            version = onnx.defs.onnx_opset_version() if domain == "" else 1
        return domain, version

    def _open(self, d: D.Dim) -> bool:
        """Whether :meth:`with_declared` may replace dim ``d`` by a declared one: ``d`` is not an
        int and every symbol in it (if any) is fresh. Remembered per dim while the input
        symbols (which are never fresh) stay the same."""
        if type(d) is int:
            return False
        memo = self._open_memo
        n_inputs = len(self.symbols.input_symbols)
        if memo[0] != n_inputs:
            memo = self._open_memo = (n_inputs, {})
        known = memo[1].get(d)
        if known is None:
            known = memo[1][d] = self.symbols.adoptable(d)
        return known

    def infer_node(
        self,
        node: onnx.NodeProto,
        ins: list[Fact | None],
        index: int,
        graph: str,
        scope: GraphScope,
        call_attrs: Mapping[str, AttributeProto] | None,
        op_type: str,
        domain: str,
        version: int,
        key: tuple | None,
    ) -> list[Fact | None]:
        """The facts of the outputs of ``node`` (of ``op_type`` in ``domain`` at opset
        ``version``, not a function call) that the memo has not seen: its rule's, else onnx's.
        With a memo ``key`` (op, version, attributes, outputs used, input facts), the outputs
        and diagnostics are stored under it unless inference drew fresh symbols, bound symbols,
        or recorded equalities or guards (such a node is never memoised)."""
        if key is not None:
            ndiag = len(self.diagnostics)
            mark = self.symbols.checkpoint()
        rule = registry.lookup(domain, op_type, version)
        ctx = NodeContext(self, node, version, index, graph, scope, call_attrs)
        outs = self._capped(self._apply(rule, ctx, ins), ctx)
        if self.symbols.ranges:
            outs = [self._ranged(f) for f in outs]
        if key is not None and not self.symbols.changed_since(mark):
            self._memo[key] = (outs, self.diagnostics[ndiag:])
        return outs

    def _value_bounds(
        self,
        node: onnx.NodeProto,
        ins: list,
        outs: list,
        index: int,
        graph: str,
        in_names: list[str],
        out_names: list[str],
    ) -> None:
        """Track element-value bounds along index paths, and record the guard a Gather from a
        fixed-size axis needs: its indices must lie in ``[-N, N-1]`` (onnxruntime checks this
        and fails otherwise). ``in_names``/``out_names`` are the node's input/output names."""
        op = node.op_type
        vb = self.value_bounds
        if op == "Range":
            start, delta = (ins[0] if len(ins) > 0 else None), (ins[2] if len(ins) > 2 else None)
            out = outs[0] if outs else None
            if (
                start is not None
                and delta is not None
                and start.value is not None
                and delta.value is not None
                and type(start.value[0]) is int
                and type(delta.value[0]) is int
                and delta.value[0] > 0
                and out is not None
                and out.shape is not None
                and len(out.shape) == 1
            ):
                s0, d0 = start.value[0], delta.value[0]
                vb[(graph, out_names[0])] = (s0, D.add(s0, D.mul(d0, D.sub(out.shape[0], 1))))
            return
        src = vb.get((graph, in_names[0])) if in_names else None
        if op == "Gather" and len(in_names) > 1:
            data, idx = ins[0], vb.get((graph, in_names[1]))
            axis = 0
            for a in node.attribute:
                if a.name == "axis":
                    axis = a.i
            shape = None if data is None else data.shape
            if idx is not None and shape is not None and -len(shape) <= axis < len(shape) and type(shape[axis]) is int:
                n = shape[axis]
                ctx = NodeContext(self, node, 0, index, graph, GraphScope())
                resolve = self.symbols.resolve
                ctx.assume("bound", resolve(idx[1]), n - 1, report=True)
                ctx.assume("bound", -n, resolve(idx[0]), report=True)
            if src is not None and out_names:  # elements selected from an index tensor
                vb[(graph, out_names[0])] = src
            return
        if src is not None and out_names and out_names[0]:
            if op == "Cast" and outs and outs[0] is not None and outs[0].dtype not in _INT_TYPES:
                return
            vb[(graph, out_names[0])] = src

    def _ranged(self, f: Fact | None) -> Fact | None:
        """``f`` with the min/max its dims and values hold decided by the symbols' ranges."""
        if f is None or f.kind != "tensor" or (f.shape is None and f.value is None):
            return f
        simplify = self.symbols.simplify
        shape = None if f.shape is None else tuple(simplify(d) for d in f.shape)
        value = f.value
        if value is not None:
            value = tuple(simplify(v) if isinstance(v, D.Expr) else v for v in value)
        if shape == f.shape and value == f.value:
            return f
        return Fact(f.dtype, shape, value, f.kind, f.elem)

    def _capped(self, outs: list[Fact | None], ctx: NodeContext | None = None) -> list[Fact | None]:
        """``outs`` bounded before they are stored: symbolic dims and shape values past the
        complexity cap become fresh symbols (an expression bomb stops growing at the first node
        past the cap), and an int dim or value that does not fit int64 (or an expression with
        such a coefficient) is an overflow: error E013, the dim a fresh symbol, the value
        unknown. No writer ever sees a number outside int64."""
        res = outs
        for i, f in enumerate(outs):
            if f is None:
                continue
            g = self._bounded(f, ctx, i)
            if g is not f:
                if res is outs:
                    res = list(outs)
                res[i] = g
        return res

    def _bounded(self, f: Fact, ctx: NodeContext | None, i: int) -> Fact:
        shape, value, elem, dtype = f.shape, f.value, f.elem, f.dtype
        bad = None
        if dtype and dtype not in _DATA_TYPES:  # an element type taken from an attribute (Cast's ``to``)
            msg = f"output {i}: element type {_show_number(dtype)} is not an ONNX type: left unknown"
            if ctx is not None:
                ctx.diag("error", codes.INVALID_NODE, msg)
            else:
                self.diagnostics.append(Diagnostic("error", codes.INVALID_NODE, msg))
            dtype = 0
        if shape is not None and not all(type(d) is int and 0 <= d <= D.INT64_MAX for d in shape):
            out = []
            for d in shape:
                if type(d) is int:
                    if not 0 <= d <= D.INT64_MAX:
                        bad = d if bad is None else bad
                        d = self.fresh()
                elif _coeff_overflow(d):
                    bad = d if bad is None else bad
                    d = self.fresh()
                else:
                    d = self.cap(d, ctx, f"output {i} dim {len(out)}")
                out.append(d)
            if tuple(out) != shape:
                shape = tuple(out)
                value = None
        if value is not None:
            vals = None
            for k, v in enumerate(value):
                if type(v) is int:
                    if -D.INT64_MAX - 1 <= v <= _UINT64_MAX:
                        continue
                    bad = v if bad is None else bad
                    nv = None
                elif isinstance(v, D.Expr):
                    if _coeff_overflow(v):
                        bad = v if bad is None else bad
                        nv = None
                    else:
                        nv = self.cap(v, ctx, f"output {i} value {k}")
                        if nv is v:
                            continue
                else:
                    continue
                if vals is None:
                    vals = list(value)
                vals[k] = nv
            if vals is not None:
                value = tuple(vals)
        if elem is not None:
            elem = self._bounded(elem, ctx, i)
        if bad is not None:
            shown = _show_number(bad)
            msg = f"output {i}: {shown} overflows int64: left unknown"
            if ctx is not None:
                ctx.diag("error", codes.INT64_OVERFLOW, msg)
            else:
                self.diagnostics.append(Diagnostic("error", codes.INT64_OVERFLOW, msg))
        if shape is f.shape and value is f.value and elem is f.elem and dtype == f.dtype:
            return f
        return Fact(dtype, shape, value, f.kind, elem)

    def _apply(self, rule, ctx: NodeContext, ins: list[Fact | None]) -> list[Fact | None]:
        """The rule's outputs; onnx's inference when there is none or it declines. Whatever a node
        holds, this does not raise: an invalid node is an error diagnostic, a rule that fails a
        warning (E001), and the outputs are left unknown."""
        try:
            if rule is not None:
                mark = len(self.diagnostics)
                try:
                    outs = rule(ctx, ins)
                except Fallback:
                    pass
                else:
                    # a node the rule already found invalid is not reported twice
                    if self.validate_nodes and not any(d.severity == "error" for d in self.diagnostics[mark:]):
                        self.validate(ctx, ins)
                    return outs
            return self.fallback(ctx, ins)
        except InferenceError as e:
            ctx.diag("error", e.code, e.message)
        except (InferenceTimeout, ExternalDataError, KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:
            ctx.diag("warning", codes.INFERENCE_FAILED, f"could not infer: {type(e).__name__}: {e}")
        return []

    def infer_function(self, ctx: NodeContext, fn: onnx.FunctionProto, ins: list[Fact | None]) -> list[Fact | None]:
        """Infer a model-local function's body at this call site.

        The body sees only its formal inputs, bound to this site's facts (a formal the site
        omits is an omitted input inside the body too); attributes are this site's (references
        to an enclosing function's attributes resolved), else the function's defaults; ops are
        read at the function's own opset imports. Nested calls recurse; a function that calls
        itself is an error diagnostic, not a hang.
        """
        key = (fn.domain, fn.name, fn.overload)
        if key in self._active_functions:
            ctx.diag(
                "error", codes.RECURSIVE_FUNCTION, f"function {fn.domain}.{fn.name} calls itself: outputs left unknown"
            )
            return []
        scope = GraphScope(None)
        for vi in fn.value_info:
            if vi.HasField("type") and vi.type.WhichOneof("value") == "tensor_type":
                scope.declared.setdefault(vi.name, vi.type)
        missing = set()
        for i, name in enumerate(fn.input):
            f = ins[i] if i < len(ins) else None
            if f is None:
                missing.add(name)
            elif name:
                scope.facts[name] = f
        nodes: Sequence[onnx.NodeProto] = fn.node
        if missing and any(i in missing for n in fn.node for i in n.input):
            nodes = []
            for n in fn.node:
                if any(i in missing for i in n.input):
                    c = onnx.NodeProto()
                    c.CopyFrom(n)
                    for k, i in enumerate(c.input):
                        if i in missing:
                            c.input[k] = ""
                    n = c
                nodes.append(n)
        attrs = dict(ctx._attr_protos())
        for a in fn.attribute_proto:
            attrs.setdefault(a.name, a)
        saved = self.opsets
        self.opsets = dict(saved)
        for o in fn.opset_import:
            self.opsets["" if o.domain == "ai.onnx" else o.domain] = o.version
        self._active_functions.add(key)
        name = graph_path(ctx.graph, ctx.index, fn.name)
        try:
            self.run_nodes(nodes, scope, name, attrs)
            if scope.declared:
                self.graph_declared[name] = scope.declared
        finally:
            self.opsets = saved
            self._active_functions.discard(key)
        if len(ctx.node.output) != len(fn.output):
            ctx.diag(
                "error",
                codes.FUNCTION_CALL_ARITY,
                f"the call has {len(ctx.node.output)} output(s); function {fn.name} returns {len(fn.output)}",
            )
        outs: list[Fact | None] = []
        for o in fn.output:
            f = scope.facts.get(o)
            if f is None and o not in missing:  # an omitted formal returned as is stays absent
                ctx.diag("error", codes.UNDEFINED_TENSOR, f"function {fn.name} output {o!r} is never produced")
            outs.append(None if f is None else self.resolve_fact(f))
        return outs

    # ---------------------------------------------------------------- fallback
    def typeproto(self, f: Fact) -> onnx.TypeProto:
        tp = self._type_cache.get(f)
        if tp is None:
            tp = fact_type(f)
            self._type_cache[f] = tp
        return tp

    def _schema(self, ctx: NodeContext):
        try:
            return onnx.defs.get_schema(ctx.node.op_type, ctx.version, ctx.domain or "")
        except onnx.defs.SchemaError:
            return None

    def _onnx_infer(self, ctx: NodeContext, schema, ins: list[Fact | None]) -> tuple[onnx.NodeProto, dict, dict]:
        """onnx's per-node inference of ``ctx``'s node on ``ins`` (symbolic dims as dim_param text,
        small constant values as data): the node as given to onnx, output name -> TypeProto.
        The third item is the constant data given to onnx. Raises what onnx raises."""
        node = ctx.node
        types = {}
        data = {}
        for name, f in zip(node.input, ins):
            if not name or f is None or (f.kind == "tensor" and f.dtype == 0 and f.shape is None):
                continue
            types[name] = self.typeproto(f)
            if (
                f.kind == "tensor"
                and f.known_values
                and f.is_static
                and all(not isinstance(v, D.Expr) for v in f.value)
            ):
                try:
                    import numpy as np

                    arr = np.array(f.value, dtype=onnx.helper.tensor_dtype_to_np_dtype(f.dtype)).reshape(f.shape)
                    data[name] = onnx.numpy_helper.from_array(arr, name)
                except Exception:
                    pass
        if ctx.call_attrs and any(a.ref_attr_name for a in node.attribute):
            node = self._bind_ref_attrs(node, ctx)
        out = onnx.shape_inference.infer_node_outputs(
            schema, node, types, data, None, self._opset_protos(), self.model.ir_version or onnx.IR_VERSION
        )
        return node, out, data

    def validate(self, ctx: NodeContext, ins: list[Fact | None]) -> None:
        """Run onnx's per-node inference on a node a native rule inferred, as a validator only: a
        node onnx rejects (an attribute or input its contract forbids) is an error diagnostic
        (E011); its outputs stay the rule's. Nodes with subgraphs are left to their rule.

        A graph input with an initializer is checked at its default value (a node that is
        invalid unless the caller overrides the default is reported). Costs one call into onnx
        per node the memo has not seen (serialised types and constant data are cached per fact)."""
        node = ctx.node
        if any(a.type in _GRAPH_ATTRS for a in node.attribute):
            return
        key = (ctx.domain or "", node.op_type, ctx.version)
        schema = self._schemas.get(key, False)
        if schema is False:
            schema = self._schemas[key] = self._schema(ctx)
        if schema is None:
            return
        if _arity_problem(ctx, schema):
            return
        types: dict[str, bytes] = {}
        data: dict[str, bytes] = {}
        for name, f in zip(node.input, ins):
            if not name:
                continue
            if _untyped(f):
                return  # onnx would fail for want of this input's type: no verdict on the node
            cached = self._validate_cache.get(f)
            if cached is None:
                tensor = self._constant_data(f, name)
                cached = (self.typeproto(f).SerializeToString(), None if tensor is None else tensor)
                self._validate_cache[f] = cached
            types[name] = cached[0]
            if cached[1] is None and name in self.defaults and f.value is None:
                data[name] = self.defaults[name].SerializeToString()
            elif cached[1] is not None:
                t = onnx.TensorProto()
                t.ParseFromString(cached[1])
                t.name = name
                data[name] = t.SerializeToString()
        if ctx.call_attrs and any(a.ref_attr_name for a in node.attribute):
            node = self._bind_ref_attrs(node, ctx)
        if self._opset_dict is None:
            self._opset_dict = dict(self.opsets)
        try:
            schema._infer_node_outputs(
                node.SerializeToString(),
                types,
                data,
                {},
                self._opset_dict if self._opset_dict == self.opsets else dict(self.opsets),
                self.model.ir_version or onnx.IR_VERSION,
            )
        except _OnnxInferenceError as e:
            ctx.diag("error", codes.REJECTED_BY_ONNX_INFERENCE, f"onnx inference rejects the node: {_onnx_message(e)}")
        except Exception:  # anything else onnx raises (an input it has no type for) is no verdict
            pass

    @staticmethod
    def _constant_data(f: Fact, name: str) -> bytes | None:
        """A small, static, fully known integer or float tensor fact as serialised TensorProto."""
        if f.kind != "tensor" or not (f.known_values and f.is_static):
            return None
        if any(isinstance(v, D.Expr) for v in f.value):
            return None
        try:
            return onnx.helper.make_tensor(name, f.dtype, f.shape, list(f.value)).SerializeToString()
        except Exception:
            return None

    def fallback(self, ctx: NodeContext, ins: list[Fact | None]) -> list[Fact | None]:
        """onnx's own per-node inference, with symbolic dims passed as dim_param text. A node it
        rejects is an error diagnostic (E011); any other failure a warning (E002)."""
        domain = ctx.domain or ""
        schema = self._schema(ctx)
        if schema is None:
            from shapeinfer.inference.ops.contrib import schemas as contrib_schemas  # only for ops onnx lacks

            name = f"{domain + '.' if domain else ''}{ctx.node.op_type}"
            if contrib_schemas.lookup(domain, ctx.node.op_type, ctx.version) is not None:
                # onnxruntime documents the op, but without a rule here its shapes are unknown
                ctx.diag(
                    "info", codes.NO_OP_SCHEMA, f"no rule for {name} (onnxruntime contrib op): outputs left unknown"
                )
            else:
                ctx.diag("info", codes.NO_OP_SCHEMA, f"no schema for {name}: outputs left unknown")
            return []
        if _arity_problem(ctx, schema):
            return []
        try:
            node, out, data = self._onnx_infer(ctx, schema, ins)
        except _OnnxInferenceError as e:
            if any(_untyped(f) for name, f in zip(ctx.node.input, ins) if name):
                ctx.diag(
                    "warning",
                    codes.ONNX_INFERENCE_FAILED,
                    f"onnx inference failed (an input's type is unknown): {_onnx_message(e)}",
                )
            else:
                ctx.diag(
                    "error", codes.REJECTED_BY_ONNX_INFERENCE, f"onnx inference rejects the node: {_onnx_message(e)}"
                )
            return []
        except Exception as e:
            ctx.diag("warning", codes.ONNX_INFERENCE_FAILED, f"onnx inference failed: {_onnx_message(e)}")
            return []
        # onnx rules may read an absent dim_value as 0 or copy a dim_param where the dim is
        # computed: re-run on concrete dims and keep only the symbolic dims that agree.
        binding = probe_binding(ins)
        probe = {}
        if binding and out:
            probe = probe_outputs(
                schema, node, ins, data, binding, self._opset_protos(), self.model.ir_version or onnx.IR_VERSION
            )
        res: list[Fact | None] = []
        for o in node.output:
            tp = out.get(o)
            if tp is not None:
                clear_foreign_params(tp, binding.keys())
            f = None if tp is None else type_fact(tp, lambda axis: self.fresh())
            if f is not None and binding:
                f = check_against_probe(f, probe.get(o), binding, self.fresh)
            res.append(f)
        return res

    def _opset_protos(self) -> list[onnx.OperatorSetIdProto]:
        return [onnx.helper.make_opsetid(d, v) for d, v in self.opsets.items()]

    def _bind_ref_attrs(self, node: onnx.NodeProto, ctx: NodeContext) -> onnx.NodeProto:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        del n.attribute[:]
        for a in node.attribute:
            if a.ref_attr_name:
                src = ctx.call_attrs.get(a.ref_attr_name) if ctx.call_attrs else None
                if src is not None:
                    b = n.attribute.add()
                    b.CopyFrom(src)
                    b.name = a.name
            else:
                n.attribute.add().CopyFrom(a)
        return n


# -------------------------------------------------------------------- public entry points


def apply_input_overrides(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[D.Dim]] | None) -> None:
    """Rewrite graph-input shapes in place from ``{name: dims}``; raises KeyError for unknown names."""
    if not input_shapes:
        return
    by_name = {vi.name: vi for vi in model.graph.input}
    for name, shape in input_shapes.items():
        vi = by_name.get(name)
        if vi is None:
            raise KeyError(f"no graph input named {name!r} (inputs: {', '.join(by_name)})")
        tt = vi.type.tensor_type
        tt.shape.Clear()
        write_shape(tt, tuple(shape))


def infer(
    model: onnx.ModelProto,
    *,
    base_dir: str | None = None,
    input_shapes: Mapping[str, Sequence[D.Dim]] | None = None,
    bind: Mapping[str, int] | None = None,
    timeout: float | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    record_reads: bool = False,
    defaults_as_constants: bool = False,
    onnxruntime_conventions: bool = False,
) -> Result:
    """Infer every tensor's facts in ``model`` (not modified unless ``input_shapes`` is given).

    ``input_shapes`` overrides graph-input dims; ``bind`` specialises symbols to integers
    before inference so that everything derived from them folds. ``dim_ranges`` gives symbols
    integer ranges (``{"seq": (1, 512)}``, hi None for unbounded; default ``[1, inf)``): the
    ``min``/``max`` they decide are decided, and the guards they prove are not recorded.
    ``timeout`` (seconds) raises :class:`InferenceTimeout` when inference runs longer.
    ``record_reads`` keeps what the walk read of each main-graph node (``Result.node_reads``).
    ``defaults_as_constants`` reads the values of the main graph's initializers that are also
    graph inputs (defaults a caller may override, otherwise only typed) as constants, as onnx's
    inference does, with an info G013 per input saying so (:mod:`shapeinfer.compat.onnx`
    uses it).
    ``onnxruntime_conventions`` takes two readings of onnxruntime's symbolic tool, each visible
    (:mod:`shapeinfer.compat.onnxruntime` uses it): a constant negative Slice start or end counts
    from the end *within* a symbolic dim (``x[-10:]`` of ``M`` rows is 10 rows), recorded as the
    guard ``10 <= M`` with an info G012; and an Einsum whose contracted letter has two sizes (the
    node fails at run time: an error G002 all the same) still gets the output dims its other
    letters give.
    """
    if input_shapes:
        apply_input_overrides(model, input_shapes)
    deadline = None if timeout is None else time.monotonic() + timeout
    kw = dict(
        base_dir=base_dir,
        input_shapes=input_shapes,
        bind=bind,
        dim_ranges=dim_ranges,
        record_reads=record_reads,
        defaults_as_constants=defaults_as_constants,
        onnxruntime_conventions=onnxruntime_conventions,
    )
    eng, result = _run(model, timeout=timeout, soft_guards=True, **kw)
    soft = _unimplied_soft_guards(eng)
    if soft:
        # the model may run where a soft guard fails: infer again without taking any, so that
        # every shape holds wherever it runs, and say so once
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        _, result = _run(model, timeout=left, soft_guards=False, **kw)
        led = Ledger()
        for kind, a, b, node in soft:
            led.add(kind, a, b, node)
        said = "; ".join(f"{g.text} (from {', '.join(g.nodes[:3])})" for g in led)
        msg = f"not assumed: {said}; the model also runs where it fails, so its dims are the exact forms there too"
        result.diagnostics.append(Diagnostic("info", codes.INPUT_GUARD, msg))
    return result


def _unimplied_soft_guards(eng: Engine) -> list[GuardEvent]:
    """The soft guards of ``eng``'s run that the hard ones (with the caller's ranges) do not
    imply: the model may run where such a guard fails."""
    sym = eng.symbols
    if not sym.soft:
        return []
    soft = set(sym.soft)
    hard = Ledger()
    for i, (kind, a, b, node) in enumerate(sym.guard_events):
        if i not in soft:
            hard.add(kind, a, b, node)
    ranges = hard.ranges(sym.ranges, sym.input_symbols)
    out = []
    for i in sym.soft:
        kind, a, b, _ = sym.guard_events[i]
        if not (kind == "bound" and holds_le(D.resolve(a, sym.subst), D.resolve(b, sym.subst), ranges)):
            out.append(sym.guard_events[i])
    return out


def _run(
    model: onnx.ModelProto,
    *,
    base_dir: str | None,
    input_shapes: Mapping[str, Sequence[D.Dim]] | None,
    bind: Mapping[str, int] | None,
    timeout: float | None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None,
    record_reads: bool,
    defaults_as_constants: bool,
    onnxruntime_conventions: bool,
    soft_guards: bool,
) -> tuple[Engine, Result]:
    """One inference run of :func:`infer` (the input shapes already applied)."""
    eng = Engine(
        model,
        base_dir,
        timeout=timeout,
        dim_ranges=dim_ranges,
        defaults_as_constants=defaults_as_constants,
        onnxruntime_conventions=onnxruntime_conventions,
        soft_guards=soft_guards,
    )
    if record_reads:
        eng.node_reads = [None] * len(model.graph.node)
    graph = model.graph
    inputs = None
    if bind:
        inputs = []
        init_names = {t.name for t in graph.initializer}
        for vi in graph.input:
            f = eng.input_fact(vi)
            if f.shape is not None and vi.name not in init_names:
                f = Fact(f.dtype, tuple(D.substitute(d, bind) for d in f.shape), None, f.kind, f.elem)
            inputs.append(f)
    eng.run_graph(graph, None, inputs)
    facts = eng.graph_facts[MAIN]
    sym = eng.symbols
    if sym.subst:
        for gf in eng.graph_facts.values():
            for k, f in gf.items():
                gf[k] = eng.resolve_fact(f)
    check_declarations(eng, bind)
    result = Result(
        model,
        facts,
        eng.graph_facts,
        sym.input_symbols,
        sym.fresh_symbols,
        sym.equalities,
        eng.diagnostics,
        eng.capped,
        dict(sym.subst),
        sym.guard_events,
        dict(sym.ranges),
        eng.node_reads,
        frozenset(sym.joins),
        dict(bind or {}),
    )
    if sym.guard_events:  # guards no input in the ranges satisfies: G015 errors
        led = result.ledger()
        result.diagnostics.extend(contradiction_diagnostics(led, sym.ranges, sym.input_symbols, input_shapes or ()))
    return eng, result


def binding_contradictions(
    model: onnx.ModelProto,
    bind: Mapping[str, int],
    *,
    base_dir: str | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    timeout: float | None = None,
) -> list[Diagnostic]:
    """G015 errors for the values of ``bind`` that contradict a guard of ``model`` inferred
    without them (in the bound run a bound symbol is gone from the guards, and the clash shows
    only as a G002 at some node): each names the value, the guard and its nodes. ``model``
    carries any input-shape overrides already."""
    free = infer(model, base_dir=base_dir, timeout=timeout, dim_ranges=dim_ranges)
    given = {**(dim_ranges or {}), **{k: (v, v) for k, v in bind.items()}}
    found = guard_contradictions(free.ledger(), given, free.input_symbols)
    return [Diagnostic("error", CONTRADICTION, c.message) for c in found if c.ranges.keys() & bind.keys()]


def check_declarations(eng: Engine, bind: Mapping[str, int] | None = None) -> None:
    """Report as G006 every declared tensor type of every graph the run inferred that contradicts
    the inferred fact (see :func:`shapeinfer.inference.declarations.contradictions`), at
    :func:`~shapeinfer.inference.declarations.declaration_severity` (an error only where onnx's
    checker refuses the model for it); declared dims are read under the run's substitution and
    ``bind``, and the caller's ranges decide their ``min``/``max``."""
    sym = eng.symbols
    subst = {**sym.subst, **bind} if bind else sym.subst
    assumed: set[frozenset] | None = None
    refused: list[bool] = []  # onnx's verdict, asked once and only for a static contradiction
    for path, declared in eng.graph_declared.items():
        facts = eng.graph_facts.get(path, {})
        outputs: set[str] | None = None
        for name, tp in declared.items():
            if eng.deadline is not None and time.monotonic() > eng.deadline:  # each parses its dims
                raise InferenceTimeout(f"inference took longer than {eng.timeout:g}s")
            f = facts.get(name)
            if f is None or not contradictions(f, tp, sym.input_symbols, subst, ranges=sym.ranges)[0]:
                continue
            if assumed is None:
                assumed = set()
                for x, y in sym.equalities:
                    try:
                        assumed.add(frozenset((D.parse(x), D.parse(y))))
                    except Exception:
                        continue
            problems, provable = contradictions(f, tp, sym.input_symbols, subst, assumed, sym.ranges)
            if not problems:
                continue
            nodes = eng.graph_nodes.get(path, ())
            k = next((i for i, n in enumerate(nodes) if name in n.output), None)
            if outputs is None:
                outputs = _graph_outputs(eng.model, path)
            where = "output" if name in outputs else "value_info"
            msg = f"{where} {name!r} declares {'; '.join(problems)}"
            if not provable:
                msg += ": they differ unless those symbols are equal"
            node = None if k is None else nodes[k]
            kind = static_kind(f, tp)
            if kind is not None and not refused:
                refused.append(checker_refuses_declarations(eng.model))
            eng.diagnostics.append(
                Diagnostic(
                    declaration_severity(kind, bool(refused) and refused[0]),
                    codes.DECLARED_SHAPE_MISMATCH,
                    msg,
                    None if node is None else node.name or None,
                    None if node is None else node.op_type,
                    k,
                    path,
                    name,
                )
            )


def _graph_outputs(model: onnx.ModelProto, path: str) -> set[str]:
    """The output names of the graph at ``path`` (empty for a function body)."""
    g = model.graph
    for part in path.split("/")[1:]:
        index, _, attr = part.partition(".")
        if not index.isdigit() or int(index) >= len(g.node):
            return set()
        sub = dict(subgraph_attrs(g.node[int(index)])).get(attr)
        if sub is None:
            return set()
        g = sub
    return {o.name for o in g.output}


def model_dir(path: str | os.PathLike | None) -> str | None:
    """The folder external data of the model at ``path`` is read from (None for ``-``, stdin)."""
    if path is None or os.fspath(path) == "-":
        return None
    return os.path.dirname(os.path.abspath(os.fspath(path)))
