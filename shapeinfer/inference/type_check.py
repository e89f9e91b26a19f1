"""A node's input types against its op's type constraints, read from ``onnx.defs`` in the opset
in force: the check behind lint's G008 and the onnx drop-in's ``check_type``.

:func:`constraint_problems` checks one node given the facts inference found for its inputs;
:func:`type_errors` checks every node of an inferred model (main graph, then each subgraph, in
the order lint walks them) and returns one error diagnostic per node that breaks its schema.
Reshape is left out: its data and target types are lint's R008 and R011.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import onnx

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.inference.declarations import dtype_name
from shapeinfer.io.onnxio import graph_path, subgraph_attrs
from shapeinfer.symbolic.facts import Fact


def type_string(f: Fact | None) -> str | None:
    """The schema spelling of a fact's type (``tensor(float)``), None when not known."""
    if f is None or not f.dtype or f.kind not in ("tensor", "sparse_tensor"):
        return None
    return f"{f.kind}({dtype_name(f.dtype)})"


def formal_input(schema: onnx.defs.OpSchema, i: int):
    """The formal parameter input ``i`` binds to (the last one when it is variadic), or None."""
    ins = schema.inputs
    if i < len(ins):
        return ins[i]
    if ins and ins[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        return ins[-1]
    return None


def allowed_types(schema: onnx.defs.OpSchema, param) -> list[str]:
    """The type strings a formal parameter accepts, read from the schema's type constraints."""
    for tc in schema.type_constraints:
        if tc.type_param_str == param.type_str:
            return list(tc.allowed_type_strs)
    return [param.type_str]


def short_types(types: list[str], limit: int = 8) -> str:
    """``float16, float, double`` from schema type strings (elided past ``limit``)."""
    names = [t[len("tensor(") : -1] if t.startswith("tensor(") else t for t in types]
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", ... ({len(names)} types)"
    return ", ".join(names)


def model_opsets(model: onnx.ModelProto) -> dict[str, int]:
    """The model's opset imports, domain -> version (``ai.onnx`` spelled ``""``)."""
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}


def opset_in_force(opsets: Mapping[str, int], domain: str) -> int:
    """The opset version in force for ``domain`` (the latest onnx knows for the default domain
    when the model does not import it, 1 for another domain)."""
    domain = "" if domain == "ai.onnx" else domain
    v = opsets.get(domain)
    if v is None:
        return onnx.defs.onnx_opset_version() if domain == "" else 1
    return v


def schema_in_force(
    node: onnx.NodeProto, opsets: Mapping[str, int], functions: Collection[tuple[str, str]]
) -> onnx.defs.OpSchema | None:
    """The onnx schema in force for ``node``, None for a model-local function (``functions``:
    their ``(domain, name)``) and for an op onnx does not know."""
    if (node.domain, node.op_type) in functions:
        return None
    domain = "" if node.domain == "ai.onnx" else node.domain
    try:
        return onnx.defs.get_schema(node.op_type, opset_in_force(opsets, domain), domain)
    except onnx.defs.SchemaError:
        return None


def constraint_problems(
    node: onnx.NodeProto, schema: onnx.defs.OpSchema, fact: Callable[[str], Fact | None]
) -> str | None:
    """What ``node``'s input types break in ``schema`` (an input type its formal parameter does
    not allow, inputs bound to one type variable with different types), as one message
    (``Sqrt-13: input 0 'x' is tensor(int64), X takes ...``); None when nothing does. ``fact``
    gives the fact inference found for a tensor name (None: unknown, not checked)."""
    problems = []
    bound: dict[str, tuple[str, str]] = {}
    done: set[tuple[str, str]] = set()
    for i, name in enumerate(node.input):
        param = formal_input(schema, i)
        if param is None or (name, param.name) in done:
            continue  # the same tensor at the same formal (a variadic input repeated): no news
        done.add((name, param.name))
        have = type_string(fact(name)) if name else None
        if have is None:
            continue
        allowed = allowed_types(schema, param)
        if have not in allowed:
            problems.append(f"input {i} {name!r} is {have}, {param.name} takes {short_types(allowed)}")
            continue
        if param.type_str in {tc.type_param_str for tc in schema.type_constraints} and param.is_homogeneous:
            prev = bound.get(param.type_str)
            if prev is None:
                bound[param.type_str] = (have, name)
            elif prev[0] != have:
                problems.append(
                    f"inputs {prev[1]!r} ({prev[0]}) and {name!r} ({have}) must have the same type {param.type_str}"
                )
    if not problems:
        return None
    return f"{node.op_type}-{schema.since_version}: " + "; ".join(problems)


def is_checked(node: onnx.NodeProto) -> bool:
    """Whether :func:`type_errors` checks ``node``: every op but Reshape of the default domain."""
    return not (node.op_type == "Reshape" and node.domain in ("", "ai.onnx"))


def type_errors(model: onnx.ModelProto, graph_facts: Mapping[str, Mapping[str, Fact]]) -> list[Diagnostic]:
    """One error diagnostic (:data:`~shapeinfer.base.codes.TYPE_CONSTRAINT_VIOLATION`) per node of
    ``model`` whose input types break its schema, given the facts inference found per graph path
    (``Result.graph_facts``): the main graph's nodes first, then each subgraph's, depth first.
    A subgraph's node sees the facts of its enclosing graphs too."""
    opsets = model_opsets(model)
    functions = {(f.domain, f.name) for f in model.functions}
    severity = codes.CATALOG[codes.TYPE_CONSTRAINT_VIOLATION].severity
    out: list[Diagnostic] = []

    def walk(graph: onnx.GraphProto, name: str, chain: list) -> None:
        chain = [graph_facts.get(name, {}), *chain]

        def fact(tensor: str) -> Fact | None:
            for facts in chain:
                f = facts.get(tensor)
                if f is not None:
                    return f
            return None

        for k, n in enumerate(graph.node):
            schema = schema_in_force(n, opsets, functions) if is_checked(n) else None
            msg = constraint_problems(n, schema, fact) if schema is not None else None
            if msg is not None:
                out.append(
                    Diagnostic(
                        severity,
                        codes.TYPE_CONSTRAINT_VIOLATION,
                        msg,
                        node=n.name or None,
                        op_type=n.op_type,
                        index=k,
                        graph=name,
                    )
                )
        for k, n in enumerate(graph.node):
            for attr, g in subgraph_attrs(n):
                walk(g, graph_path(name, k, attr), chain)

    walk(model.graph, "main", [])
    return out
