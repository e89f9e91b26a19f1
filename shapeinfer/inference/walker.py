"""The walk: :class:`Engine`, one inference run over one model, infers every graph's nodes in
order (topologically when the graph is not sorted), each through its native rule
(:mod:`shapeinfer.inference.ops`) or onnx's per-node inference (:mod:`.fallback`), function
calls through their bodies (:mod:`.functions`), and completes what it cannot infer from the
types the graph declares (:mod:`.declared_types`). The contract of a run is
:func:`shapeinfer.inference.engine.infer`'s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

import onnx
from onnx import AttributeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic, InferenceError
from shapeinfer.base.ir_version import initializers_are_inputs
from shapeinfer.base.toposort import lexicographic_order
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.declared_types import DeclaredTypes
from shapeinfer.inference.fallback import Fallback, OnnxNodeInference
from shapeinfer.inference.functions import infer_function
from shapeinfer.inference.limits import MAX_EXPR_SIZE, capped, ranged
from shapeinfer.inference.node_context import MAIN, GraphScope, NodeContext
from shapeinfer.inference.op_registry import BoundsRule
from shapeinfer.inference.policy import DEFAULT_POLICY, InferencePolicy
from shapeinfer.io.external import (
    ExternalDataError,
    ExternalDataInvalid,
    ExternalDataMissing,
    external_tensors,
    missing_data_files,
)
from shapeinfer.io.onnxio import tensor_fact, tensor_numel, tensor_problem, type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact
from shapeinfer.symbolic.names import ident, is_placeholder
from shapeinfer.symbolic.scope import SymbolScope

_UNKNOWN = Fact()
_GRAPH_ATTRS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


class InferenceTimeout(Exception):
    """Inference ran past its time limit."""


class Engine:
    """One inference run over one model."""

    def __init__(
        self,
        model: onnx.ModelProto,
        base_dir: str | None = None,
        max_expr_size: int = MAX_EXPR_SIZE,
        timeout: float | None = None,
        dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
        policy: InferencePolicy = DEFAULT_POLICY,
        soft_guards: bool = True,
    ) -> None:
        self.model = model
        #: the readings the run takes besides shapeinfer's own (rules see it as ``ctx.policy``)
        self.policy = policy
        #: rules may take soft guards (see :meth:`NodeContext.assume`); off in the second run
        #: :func:`~shapeinfer.inference.engine.infer` makes when a soft guard the hard ones do
        #: not imply was taken
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
        #: the functions being inferred, innermost last (a call of one of them is recursion)
        self.active_functions: set[tuple[str, str, str]] = set()
        self.node_reads: list | None = None  # set to a list to have the main graph's walk fill it
        self.graph_facts: dict[str, dict[str, Fact]] = {}
        #: graph path -> the tensor types it declares (value_info, outputs): claims to check
        self.graph_declared: dict[str, dict[str, onnx.TypeProto]] = {}
        self.capped = 0
        #: subgraphs that never run (an If branch not taken, a Loop of no iteration) in which an
        #: op fails: their facts are kept for annotation, their errors are not reported
        self.dead_with_errors = 0
        #: (graph path, tensor) whose type is not to be written: an input of a Concat that may be
        #: empty where its other dims may differ from the other inputs' (see Result.unwritten)
        self.unwritten: set[tuple[str, str]] = set()
        self.max_expr_size = max_expr_size
        self._memo: dict[tuple, tuple] = {}
        self.graph_nodes: dict[str, Sequence[onnx.NodeProto]] = {}  # graph path -> its nodes
        #: Also run onnx's per-node inference on nodes a native rule handles, as a validator.
        self.validate_nodes = True
        #: the values computed from a node found invalid (an error diagnostic), by name: onnx's
        #: check of the nodes after it would fail for what that node's error already says
        self.after_error: set[str] = set()
        #: onnx's per-node inference: the fallback for ops without a rule, and the validator
        self.onnx = OnnxNodeInference()
        #: completes facts from the types the graphs declare
        self.declared_types = DeclaredTypes(self.symbols, self.diagnostics)
        #: op type -> (its value-bounds rule, whether it makes bounds from none), as declared
        self._bounds_rules: dict[str, tuple[BoundsRule | None, bool]] = {}
        #: Small initializers of graph inputs (defaults a caller may override), by name.
        self.defaults: dict[str, onnx.TensorProto] = {}
        self._missing_files: list | None = None  # see missing_data
        #: tensors whose facts may rest on a soft reading (see :meth:`NodeContext.assume`): the
        #: outputs of a node that took a soft guard or read such a tensor, by name in any graph;
        #: empty in a run without soft guards
        self.soft_values: set[str] = set()
        #: how many nodes have marked their outputs so (a subgraph or function body that took a
        #: soft guard is seen by its growth, even where its names were marked before)
        self.soft_marks = 0
        #: whether the node being inferred rests on a soft reading (its NodeContext reads it),
        #: and whether the nodes of the subgraphs and function bodies it infers all do
        self.node_soft = False
        self.soft_context = False

    def mark_soft(self, names: Sequence[str]) -> None:
        """Tensors ``names`` (a node's outputs) may rest on a soft reading: add them to
        :attr:`soft_values` and count the marking in :attr:`soft_marks`."""
        self.soft_values.update(o for o in names if o)
        self.soft_marks += 1

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
        """Attribute name -> AttributeProto type the op's schema declares (see
        :meth:`OnnxNodeInference.attr_types`)."""
        return self.onnx.attr_types(domain, op_type, version)

    # ---------------------------------------------------------------- symbols
    def fresh(self) -> D.Expr:
        return self.symbols.fresh()

    def resolve_fact(self, f: Fact) -> Fact:
        """``f`` with the bound symbols replaced (see :meth:`SymbolScope.resolve`). A dim the
        bindings leave undefined (a divisor they make 0: ``4*n//(n - 1)`` under ``n == 1``,
        where the model cannot run as read) becomes a fresh symbol, a value unknown."""
        if not self.symbols.subst or (f.shape is None and f.value is None and f.elem is None):
            return f
        resolve = self.symbols.resolve
        try:
            shape = None if f.shape is None else tuple(resolve(d) for d in f.shape)
            value = None
            if f.value is not None:
                value = tuple(resolve(v) if isinstance(v, D.Expr) else v for v in f.value)
        except ZeroDivisionError:
            shape = None if f.shape is None else tuple(self._resolve_or(d, self.fresh) for d in f.shape)
            value = None
            if f.value is not None:
                value = tuple(self._resolve_or(v, lambda: None) if isinstance(v, D.Expr) else v for v in f.value)
        elem = None if f.elem is None else self.resolve_fact(f.elem)
        return Fact(f.dtype, shape, value, f.kind, elem)

    def _resolve_or(self, d: D.Dim, undefined) -> D.Dim | None:
        try:
            return self.symbols.resolve(d)
        except ZeroDivisionError:
            return undefined()

    # ---------------------------------------------------------------- graphs
    def input_fact(self, vi: onnx.ValueInfoProto) -> Fact:
        """The fact of main-graph input ``vi`` as declared: a dim without a value or a name, with
        a negative value (warning E006) or with a placeholder name (``?``, ``None``, ``-1``: see
        :func:`~shapeinfer.symbolic.names.is_placeholder`; info E009, naming the axes) is the input
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
        scope = GraphScope(parent, name)
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
        overridable = not initializers_are_inputs(self.model.ir_version)  # (before IR 4: a constant, not a default)
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
                if not (self.policy.defaults_as_constants and parent is None):
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
        self.declared_types.forget_open()
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
        value_bounds = self.value_bounds  # filled by follow_bounds from a Range on
        bounds_rules = self._bounds_rules
        versions: dict[str, tuple[str, int]] = {}  # node domain -> (domain, opset version)
        count = 0
        reads = self.node_reads if graph == MAIN else None
        # A subgraph's or function body's declarations speak of this instance only: the names
        # they use are private to it (see DeclaredTypes.with_declared), and only the fresh symbols drawn from
        # here on are its own.
        private: dict[str, D.Dim] | None = None if graph == MAIN else {}
        own_from = len(self.symbols.fresh_symbols)
        declared_types = self.declared_types
        soft_values = self.soft_values
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
            on_soft = False
            if soft_values:
                # a node reading a tensor that may rest on a soft reading rests on it, as does
                # every node of a subgraph or function body it infers (the body may read such a
                # tensor of the outer graph by name); a node taking a soft guard marks its own
                # outputs (NodeContext.assume)
                outer = self.soft_context
                on_soft = (
                    outer
                    or any(n in soft_values for n in in_names)
                    or any(a.type in _GRAPH_ATTRS for a in node.attribute)
                )
                self.node_soft = self.soft_context = on_soft
            if reads is not None:
                reads[k] = (op_type, raw_domain, in_names, out_names)
            dv = versions.get(raw_domain)
            if dv is None:
                dv = versions[raw_domain] = self._domain_version(raw_domain)
            domain, version = dv
            fn = functions.get((raw_domain, op_type, node.overload)) if functions else None
            if fn is not None:
                ctx = NodeContext(self, node, version, k, graph, scope, call_attrs)
                marks = self.soft_marks
                outs = infer_function(self, ctx, fn, ins)
                if self.soft_marks > marks:  # the body took a soft guard
                    self.mark_soft(out_names)
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
            if raw_domain in ("", "ai.onnx"):
                bounds = bounds_rules.get(op_type)
                if bounds is None:
                    traits = registry.op_traits(op_type)  # declared with the op's rule
                    bounds = bounds_rules[op_type] = (traits.value_bounds, traits.bounds_source)
                if bounds[0] is not None and (value_bounds or bounds[1]):
                    # the rule runs where an input has bounds, or where it makes them from none
                    in_bounds = [value_bounds.get((graph, n)) for n in in_names] if value_bounds else []
                    if bounds[1] or in_bounds.count(None) < len(in_bounds):
                        self.node_soft = on_soft
                        self.follow_bounds(bounds[0], node, ins, outs, in_bounds, version, k, graph, scope, call_attrs)
            if on_soft:
                self.soft_context = outer
                self.mark_soft(out_names)
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
                    if declared and o in declared and not self.policy.claims_unassumed:
                        g, assumed = declared_types.with_declared(
                            f, declared[o], node.name or f"{op_type} #{k}", private, own_from
                        )
                        if assumed and not any(d.severity == "error" for d in self.diagnostics[ndiag:]):
                            declared_types.adopted(o, f, g, declared[o], node, k, graph)  # (an invalid node's: moot)
                        f = g
                    facts[o] = _UNKNOWN if f is None else f
        return True

    def _domain_version(self, raw_domain: str) -> tuple[str, int]:
        """A node's domain as the opsets key it (``ai.onnx`` is ``""``) and the opset version it
        is read at (the latest onnx opset, or 1, for a domain the model does not import)."""
        domain = "" if raw_domain == "ai.onnx" else raw_domain
        version = self.opsets.get(domain)
        if version is None:
            version = onnx.defs.onnx_opset_version() if domain == "" else 1
        return domain, version

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
        outs = capped(self, self._apply(rule, ctx, ins), ctx)
        if self.symbols.ranges:
            symbols = self.symbols
            outs = [ranged(symbols, f) for f in outs]
        if key is not None and not self.symbols.changed_since(mark):
            self._memo[key] = (outs, self.diagnostics[ndiag:])
        return outs

    def follow_bounds(
        self,
        rule: BoundsRule,
        node: onnx.NodeProto,
        ins: list[Fact | None],
        outs: list[Fact | None],
        in_bounds: list[tuple[D.Dim, D.Dim] | None],
        version: int,
        index: int,
        graph: str,
        scope: GraphScope,
        call_attrs: Mapping[str, AttributeProto] | None,
    ) -> None:
        """Track element-value bounds along index paths: ``rule`` (the op's, declared with its
        shape rule) gets the node's input facts, output facts and each input's proven bounds
        (``in_bounds``: None where none is known) and gives the bounds of its first output, or
        None; it may record the guards the bounds require (a Gather's indices within the axis)."""
        ctx = NodeContext(self, node, version, index, graph, scope, call_attrs)
        out = rule(ctx, ins, outs, in_bounds)
        if out is not None and node.output and node.output[0]:
            self.value_bounds[(graph, node.output[0])] = out

    def _apply(self, rule, ctx: NodeContext, ins: list[Fact | None]) -> list[Fact | None]:
        """The rule's outputs; onnx's inference when there is none or it declines. Whatever a node
        holds, this does not raise: an invalid node is an error diagnostic, a rule that fails a
        warning (E001), and the outputs are left unknown."""
        after = self.after_error
        downstream = bool(after) and any(i in after for i in ctx.node.input)
        if downstream:  # (computed from an invalid node: so is what this one computes)
            after.update(o for o in ctx.node.output if o)
        try:
            if rule is not None:
                mark = len(self.diagnostics)
                try:
                    outs = rule(ctx, ins)
                except Fallback:
                    pass
                else:
                    # a node the rule already found invalid is not reported twice, nor a node
                    # whose inputs an invalid node computed (onnx's check fails for its reason)
                    if (
                        self.validate_nodes
                        and not downstream
                        and not any(d.severity == "error" for d in self.diagnostics[mark:])
                    ):
                        self.onnx.validate(ctx, ins)
                    return outs
            return self.onnx.fallback(ctx, ins)
        except InferenceError as e:
            ctx.diag("error", e.code, e.message)
            after.update(o for o in ctx.node.output if o)
        except (InferenceTimeout, ExternalDataError, KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:
            ctx.diag("warning", codes.INFERENCE_FAILED, f"could not infer: {type(e).__name__}: {e}")
        return []
