"""Attributes against the op's schema (G017 unknown attribute; E007 wrong type and E030 missing
required attribute, which the engine reports too where a rule reads the attribute).

The schemas are onnx's (``onnx.defs.get_schema`` at the opset in force: the default domain,
``ai.onnx.ml``, ``ai.onnx.preview.training``) and onnxruntime's contrib schemas
(``com.microsoft``, from the table of :mod:`shapeinfer.inference.ops.contrib.schemas`). The check
is the one ``onnx.checker`` runs on every node (``OpSchema::Verify``) and onnxruntime runs when it
loads a model (its graph resolution calls onnx's node checker with its own schema registry, the
contrib schemas included): an attribute the schema does not define ("Unrecognized attribute"),
one of another type ("Mismatched attribute type"), a required one absent ("Required attribute
... is missing"). Names starting with ``__`` are internal and not checked (both runtimes load
them). The severity under each target is measured on the fixtures of
tests/lint/test_lint_attributes.py: onnx's checker refuses the onnx-domain cases only (it checks
no ``com.microsoft`` node), onnxruntime all of them; OpenVINO ignores an attribute it does not
read, and refuses a missing or mistyped one only where its converter reads it (a warning under
``--target openvino``: which attributes a converter reads is not known here). An attribute the
contrib table lacks is a warning everywhere (G017's documentation says why).
"""

from __future__ import annotations

import re

import onnx

from shapeinfer.lint.context import LintContext, NodeRef
from shapeinfer.lint.registry import check

AttributeType = onnx.AttributeProto.AttributeType

#: The runtimes that refuse a node whose attributes contradict its schema, by where the schema
#: comes from (measured: tests/lint/test_lint_attributes.py).
REFUSED_BY = {"onnx": frozenset({"onnx", "onnxruntime"}), "contrib": frozenset({"onnxruntime"})}


def _schema(ctx: LintContext, ref: NodeRef) -> tuple[str, dict[str, tuple[int, bool]]] | None:
    """``(source, {attribute: (type, required)})`` of the schema in force for the node: onnx's
    (source ``"onnx"``) or onnxruntime's contrib table (``"contrib"``); None without one."""
    n = ref.node
    s = ctx.schema(n)
    if s is not None:
        return "onnx", {name: (int(a.type), bool(a.required)) for name, a in s.attributes.items()}
    domain = "" if n.domain == "ai.onnx" else n.domain
    if domain != "com.microsoft" or (n.domain, n.op_type) in ctx.functions:
        return None
    from shapeinfer.inference.ops.contrib import schemas as contrib_schemas

    c = contrib_schemas.lookup(domain, n.op_type, ctx.opset(domain))
    return None if c is None else ("contrib", dict(c.attributes))


def _engine_reported(ctx: LintContext, code: str, ref: NodeRef, name: str | None = None) -> bool:
    """Whether the engine already reported ``code`` on this node (for attribute ``name``)."""
    return any(
        f.code == code and f.graph == ref.graph and f.index == ref.index and (name is None or f"{name!r}" in f.message)
        for f in ctx.findings
    )


def _where(ref: NodeRef, ctx: LintContext) -> str:
    d = "" if ref.node.domain == "ai.onnx" else ref.node.domain
    return f"{d or 'ai.onnx'}.{ref.node.op_type} (opset {ctx.opset(d)})"


def _who(refused: frozenset[str]) -> str:
    """``onnx.checker and onnxruntime refuse`` / ``onnxruntime refuses``."""
    names = " and ".join("onnx.checker" if r == "onnx" else r for r in sorted(refused))
    return f"{names} {'refuse' if len(refused) > 1 else 'refuses'}"


def _checked(ctx: LintContext):
    """``(ref, schema source, attributes)`` for every node with a schema, main graph and subgraphs."""
    for ref in ctx.nodes():
        found = _schema(ctx, ref)
        if found is not None:
            yield ref, found[0], found[1]


@check("G017")
def unknown_attribute(ctx: LintContext) -> None:
    for ref, source, attrs in _checked(ctx):
        for a in ref.node.attribute:
            if a.name in attrs or a.name.startswith("__"):
                continue
            if source == "contrib":
                # the table is onnxruntime's documented schema of an older version, and later
                # versions add attributes to an op without a new since_version (MatMulNBits'
                # weight_prepacked): that the installed onnxruntime refuses is not known here
                from shapeinfer.inference.ops.contrib import schemas as contrib_schemas

                found = re.search(r"version [0-9.]+", contrib_schemas.source())
                doc = found.group(0) if found else contrib_schemas.source()
                ctx.report(
                    "G017",
                    f"attribute {a.name!r} is not in onnxruntime's contrib schema of {_where(ref, ctx)} "
                    f"(its ContribOperators.md, {doc}): onnxruntime refuses the model unless a later "
                    "version added it",
                    ref,
                    severity="warning",
                )
                continue
            refused = REFUSED_BY[source]
            ctx.report(
                "G017",
                f"attribute {a.name!r} is not defined for {_where(ref, ctx)}: {_who(refused)} the model",
                ref,
                refused_by=refused,
            )


@check("E007")
def attribute_wrong_type(ctx: LintContext) -> None:
    """E007 for every attribute of a node with a schema, not only those a shape rule reads (the
    engine's E007): a type other than the schema's is refused as :data:`REFUSED_BY` says. An
    attribute without a type (UNDEFINED) is M027's business, a reference to a function attribute
    is checked in the function."""
    for ref, source, attrs in _checked(ctx):
        for a in ref.node.attribute:
            want = attrs.get(a.name)
            if want is None or a.ref_attr_name or a.type == onnx.AttributeProto.UNDEFINED or a.type == want[0]:
                continue
            if _engine_reported(ctx, "E007", ref, a.name):
                continue
            refused = REFUSED_BY[source]
            ctx.report(
                "E007",
                f"attribute {a.name!r} is {AttributeType.Name(a.type).lower()}; {_where(ref, ctx)} takes "
                f"{AttributeType.Name(want[0]).lower()}: {_who(refused)} the model",
                ref,
                refused_by=refused,
            )


@check("E030")
def required_attribute_missing(ctx: LintContext) -> None:
    """E030 for a required attribute (by the op's schema) the node lacks, refused as
    :data:`REFUSED_BY` says; not reported where the engine already found the node invalid (an
    error on it: a Concat without ``axis`` is E025)."""
    for ref, source, attrs in _checked(ctx):
        if (ref.graph, ref.index) in ctx.error_nodes:
            continue
        have = {a.name for a in ref.node.attribute}
        for name, (_, required) in attrs.items():
            if not required or name in have:
                continue
            refused = REFUSED_BY[source]
            ctx.report(
                "E030",
                f"{_where(ref, ctx)} requires attribute {name!r}: {_who(refused)} the model",
                ref,
                refused_by=refused,
            )
