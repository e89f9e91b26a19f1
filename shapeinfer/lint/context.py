"""What a check sees: the model, the inference result, the declared shapes, and a way to report.

:class:`LintContext` walks every node of the main graph and of its subgraphs (If/Loop/Scan
bodies) with the facts inference found for that graph, under the graph path the engine uses
for its facts and diagnostics (``main``, ``main/3.then_branch``, see
:func:`shapeinfer.inference.engine.graph_path`), so a finding from a check and a diagnostic from the
engine name the same node the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, fields, replace

import onnx

from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.base.runtimes import RUNTIME_NAMES, judging_runtime
from shapeinfer.inference.declarations import dims_text, dtype_name  # noqa: F401  (re-exported for the checks)
from shapeinfer.inference.engine import graph_path
from shapeinfer.inference.type_check import model_opsets, opset_in_force, schema_in_force
from shapeinfer.io.onnxio import initializer_names, subgraph_attrs
from shapeinfer.lint.registry import RULES
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

_DIAG_FIELDS = tuple(f.name for f in fields(Diagnostic))


@dataclass
class Finding:
    """One lint finding: a rule code at a place in a model.

    A finding is a :class:`~shapeinfer.base.diagnostics.Diagnostic` (code, severity, message, and
    where: ``node``/``op_type``/``index``/``graph``, ``tensor``) in a model file, plus what lint
    adds: ``path`` (the model file as given), ``fix`` (the optimize pass that rewrites it away,
    None when not fixable) and the rule's ``name``. The diagnostic's fields read through (a
    field added to Diagnostic is a finding's field too, in ``to_dict`` as well); ``severity``
    can be re-graded, visibly: :meth:`regrade` keeps the severity ``shapeinfer MODEL``, its
    ``--json`` and the Python API report (``default_severity``: the engine's for an engine
    code, the rule's under the default target for a lint check) and says why it changed
    (``regraded``: a ``--target`` whose runtime judges otherwise, a profile's or a project's
    ``severity`` table, ``warnings-as-errors``).
    """

    path: str
    diagnostic: Diagnostic
    fix: str | None = None
    name: str = ""
    #: the severity before any re-grading (the one ``infer`` and the API give); None: not re-graded
    default_severity: str | None = None
    #: why the severity is not ``default_severity`` (``--target openvino: OpenVINO loads the model``)
    regraded: str | None = None

    @classmethod
    def of(
        cls, path: str, code: str, severity: str, message: str, *, fix: str | None = None, name: str = "", **where
    ) -> Finding:
        """A finding built from its fields (``where``: node, op_type, index, graph, tensor)."""
        return cls(path, Diagnostic(severity, code, message, **where), fix, name)

    def __getattr__(self, attr: str):
        # only reached for names that are not the finding's own: the diagnostic's fields
        diagnostic = self.__dict__.get("diagnostic")  # absent while unpickling
        if diagnostic is not None and attr in _DIAG_FIELDS:
            return getattr(diagnostic, attr)
        raise AttributeError(attr)

    @property
    def severity(self) -> str:
        return self.diagnostic.severity

    @severity.setter
    def severity(self, value: str) -> None:
        self.diagnostic = replace(self.diagnostic, severity=value)

    def regrade(self, severity: str, why: str) -> None:
        """Report the finding at ``severity`` instead, for the reason ``why``; the first severity
        stays in ``default_severity``, and back at it, the finding is as it was."""
        if severity == self.severity:
            return
        default = self.default_severity or self.severity
        self.severity = severity
        if severity == default:
            self.default_severity = self.regraded = None
        else:
            self.default_severity = default
            self.regraded = why if self.regraded is None else f"{self.regraded}; {why}"

    def to_dict(self) -> dict:
        """Every field, None included: path, code, severity, the diagnostic's others, fix, name,
        ``default_severity`` (the severity ``infer`` and the API report: ``severity`` unless
        re-graded) and ``regraded`` (why they differ, None when they do not)."""
        d = {"path": self.path, "code": self.diagnostic.code, "severity": self.diagnostic.severity}
        for k in _DIAG_FIELDS:
            d.setdefault(k, getattr(self.diagnostic, k))
        d["fix"] = self.fix
        d["name"] = self.name
        d["default_severity"] = self.default_severity or self.diagnostic.severity
        d["regraded"] = self.regraded
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        where = {k: d.get(k) for k in _DIAG_FIELDS if k not in ("code", "severity", "message")}
        f = cls.of(d["path"], d["code"], d["severity"], d["message"], fix=d.get("fix"), name=d.get("name", ""), **where)
        if d.get("regraded"):
            f.default_severity, f.regraded = d.get("default_severity"), d["regraded"]
        return f

    @property
    def severity_note(self) -> str:
        """`` (error by default: --target openvino: OpenVINO loads the model)`` for a re-graded
        finding, else empty."""
        if not self.regraded:
            return ""
        return f" ({self.default_severity} by default; {self.regraded})"

    @property
    def location(self) -> str:
        """``name[Op#index]`` for a node, ``name[tensor]`` for a value, ``[graph g]`` or ``[model]``."""
        prefix = f"{self.graph}/" if self.graph and self.graph != "main" else ""
        if self.op_type is not None:
            idx = f"#{self.index}" if self.index is not None else ""
            return f"{prefix}{self.node or ''}[{self.op_type}{idx}]"
        if self.tensor is not None:
            return f"{prefix}{self.tensor}[tensor]"
        if self.graph is not None:
            return f"[graph {self.graph}]"
        return "[model]"

    def sort_key(self) -> tuple:
        return (self.path, self.graph or "", -1 if self.index is None else self.index, self.code, self.message)


@dataclass
class NodeRef:
    """A node in its graph, with the facts inference found for that graph and its enclosing ones."""

    node: onnx.NodeProto
    index: int
    graph: str
    chain: list[dict[str, Fact]]
    consts: list[set[str]]

    def fact(self, name: str) -> Fact | None:
        """The fact of tensor ``name`` as seen from this node (None if unknown or omitted)."""
        if not name:
            return None
        for facts in self.chain:
            f = facts.get(name)
            if f is not None:
                return f
        return None

    def input_fact(self, i: int) -> Fact | None:
        return self.fact(self.node.input[i]) if i < len(self.node.input) else None

    def output_fact(self, i: int) -> Fact | None:
        return self.fact(self.node.output[i]) if i < len(self.node.output) else None

    def is_constant(self, name: str) -> bool:
        """True when ``name`` is an initializer or the output of a Constant node (any enclosing graph)."""
        return any(name in c for c in self.consts)

    def attr(self, name: str, default=None):
        for a in self.node.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        return default

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.node.attribute)


@dataclass
class LintContext:
    """One model being linted. Checks call :meth:`report`; the findings collect in ``findings``."""

    model: onnx.ModelProto
    result: object  # shapeinfer.inference.engine.Result
    declared: dict[str, dict[str, onnx.TypeProto]]  # graph path -> declared value_info/outputs
    path: str
    target: str = "onnx"
    base_dir: str | None = None  # the model's folder (external data), None for a model in memory
    findings: list[Finding] = field(default_factory=list)
    error_nodes: set[tuple[str, int]] = field(default_factory=set)  # (graph, index) of invalid nodes

    def __post_init__(self) -> None:
        self.opsets = model_opsets(self.model)
        self.functions = {(f.domain, f.name) for f in self.model.functions}
        self.fresh = set(self.result.fresh_symbols) - set(self.result.input_symbols)
        self._nodes: list[tuple[onnx.GraphProto, str, list[NodeRef]]] | None = None
        self._producers: dict[str, dict[str, NodeRef]] | None = None  # graph -> tensor -> producer

    # ------------------------------------------------------------------ model facts
    def opset(self, domain: str) -> int:
        """The opset version in force for ``domain`` (the latest onnx knows when not imported)."""
        return opset_in_force(self.opsets, domain)

    def schema(self, node: onnx.NodeProto) -> onnx.defs.OpSchema | None:
        """The onnx schema in force for ``node``, None for model-local functions and unknown ops."""
        return schema_in_force(node, self.opsets, self.functions)

    def is_fresh(self, d: D.Dim) -> bool:
        """True when dim ``d`` involves a symbol inference had to invent (unresolved)."""
        return type(d) is not int and bool(D.symbols(d) & self.fresh)

    def resolved(self, d: D.Dim) -> bool:
        """True for an int or an expression over the graph-input symbols only."""
        return type(d) is int or D.symbols(d) <= set(self.result.input_symbols)

    # ------------------------------------------------------------------ walking
    def graphs(self) -> list[tuple[onnx.GraphProto, str, list[NodeRef]]]:
        """Every (graph, graph name, its nodes) of the model: main first, then subgraphs."""
        if self._nodes is None:
            out: list[tuple[onnx.GraphProto, str, list[NodeRef]]] = []
            self._walk(self.model.graph, "main", [], [], out)
            self._nodes = out
        return self._nodes

    def graph_outputs(self, graph: str) -> set[str]:
        """The output names of the graph at path ``graph``."""
        for g, name, _ in self.graphs():
            if name == graph:
                return {o.name for o in g.output}
        return set()

    def producer(self, graph: str, tensor: str) -> NodeRef | None:
        """The node of graph ``graph`` that produces ``tensor`` (the first, if several), or None."""
        if self._producers is None:
            self._producers = {}
            for _, name, refs in self.graphs():
                made: dict[str, NodeRef] = {}
                for r in refs:
                    for o in r.node.output:
                        if o:
                            made.setdefault(o, r)
                self._producers.setdefault(name, made)
        return self._producers.get(graph, {}).get(tensor)

    def nodes(self) -> Iterator[NodeRef]:
        for _, _, refs in self.graphs():
            yield from refs

    def _walk(self, graph: onnx.GraphProto, name: str, chain: list, consts: list, out: list) -> None:
        facts = self.result.graph_facts.get(name, {})
        local = set(initializer_names(graph))
        for n in graph.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                local.update(o for o in n.output if o)
        chain = [facts, *chain]
        consts = [local, *consts]
        refs = [NodeRef(n, k, name, chain, consts) for k, n in enumerate(graph.node)]
        out.append((graph, name, refs))
        for ref in refs:
            for attr, g in subgraph_attrs(ref.node):
                self._walk(g, graph_path(name, ref.index, attr), chain, consts, out)

    # ------------------------------------------------------------------ reporting
    def report(
        self,
        code: str,
        message: str,
        ref: NodeRef | None = None,
        *,
        tensor: str | None = None,
        graph: str | None = None,
        severity: str | None = None,
        fix: str | bool | None = True,
        refused_by: Collection[str] | None = None,
        otherwise: str = "warning",
    ) -> None:
        """Record a finding of rule ``code``; ``severity`` defaults to the rule's, ``fix`` to the
        rule's pass (pass ``False``/``None`` when this particular finding cannot be fixed).
        ``refused_by`` (runtimes: ``onnx``, ``onnxruntime``, ``openvino``) grades it by the
        target's runtime instead: an error where that runtime refuses the model, else
        ``otherwise``; a target whose runtime judges otherwise than onnx's checker (the default
        target's) re-grades it visibly (:meth:`Finding.regrade`)."""

        r = RULES[code]
        if refused_by is not None:
            severity = "error" if "onnx" in refused_by else otherwise
        self.findings.append(
            Finding.of(
                self.path,
                code,
                severity or r.severity,
                message,
                node=(ref.node.name or None) if ref else None,
                op_type=ref.node.op_type if ref else None,
                index=ref.index if ref else None,
                graph=ref.graph if ref else graph,
                tensor=tensor,
                fix=r.fix if fix is True else (fix or None),
                name=r.name,
            )
        )
        if refused_by is not None:
            runtime = judging_runtime(self.target)
            refused = runtime in refused_by
            self.findings[-1].regrade("error" if refused else otherwise, target_reason(self.target, refused))


def target_reason(target: str, refused: bool) -> str:
    """Why a ``--target`` re-grades a finding: ``--target openvino: OpenVINO loads the model``."""
    return f"--target {target}: {RUNTIME_NAMES[judging_runtime(target)]} {'refuses' if refused else 'loads'} the model"
