"""Reshape rules R001-R011.

R001-R005 are the target errors :func:`shapeinfer.inference.ops.reshape.reshape_dims` raises while
inferring (reported from the engine's diagnostics). The others are checks over the graph and the
inferred facts.
"""

from __future__ import annotations

from collections.abc import Sequence

from shapeinfer.inference.engine import MAIN
from shapeinfer.inference.type_check import allowed_types, formal_input, short_types, type_string
from shapeinfer.lint.context import LintContext, NodeRef, dims_text, dtype_name
from shapeinfer.lint.registry import check, engine_message
from shapeinfer.symbolic import dims as D


@check("R006")
def reshape_legacy(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        if _version(ctx, ref) < 5 and ref.has_attr("shape"):
            ctx.report(
                "R006",
                f"Reshape-1 attribute form (shape={list(ref.attr('shape'))}, opset {ctx.opset('')}): "
                "move the target to an int64 input (reshape-v1-to-v5)",
                ref,
            )


@check("R007")
def reshape_target_form(ctx: LintContext) -> None:
    """R007 (declared in :mod:`shapeinfer.base.codes`) for the forms inference accepts: a target
    given both ways, which the node's version ignores one of."""
    for ref in _reshapes(ctx):
        v = _version(ctx, ref)
        n_in = len(ref.node.input)
        if v >= 5 and ref.has_attr("shape") and n_in >= 2:
            ctx.report(
                "R007",
                f"Reshape-{v} has a 'shape' attribute (the Reshape-1 form), which it ignores: "
                "drop it, the target is the second input",
                ref,
            )
        elif v < 5 and ref.has_attr("shape") and n_in >= 2 and ref.node.input[1]:
            ctx.report(
                "R007",
                f"Reshape-1 (opset {ctx.opset('')}) ignores its second input {ref.node.input[1]!r}: "
                "the target is the 'shape' attribute",
                ref,
            )


@engine_message("R007")
def _target_form(diag, ref: NodeRef | None) -> str:
    """Say how to fix the engine's R007: a Reshape-1 without its ``shape`` attribute, a
    Reshape-5+ without its target input."""
    if diag.message.startswith("Reshape-1"):
        msg = "Reshape-1 takes its target as the 'shape' attribute, but it has none"
        if ref is not None and len(ref.node.input) >= 2:
            msg += " (the target is given as an input, the form of opset >= 5: import opset 5 or later)"
        return msg
    msg = diag.message
    if ref is not None and ref.has_attr("shape"):
        msg += " (it has a 'shape' attribute, the Reshape-1 form: move the target to an int64 input)"
    return msg


@check("R008")
def reshape_data_type(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        schema = ctx.schema(ref.node)
        have = type_string(ref.input_fact(0))
        if schema is None or have is None:
            continue
        allowed = allowed_types(schema, formal_input(schema, 0))
        if have not in allowed:
            ctx.report(
                "R008",
                f"Reshape-{schema.since_version} (opset {ctx.opset('')}) does not accept "
                f"{dtype_name(ref.input_fact(0).dtype)} data; it takes {short_types(allowed)}",
                ref,
                tensor=ref.node.input[0],
            )


@check("R009")
def reshape_noop(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        data, out = ref.input_fact(0), ref.output_fact(0)
        if data is None or out is None or data.shape is None or out.shape is None:
            continue
        if data.shape == out.shape:
            ctx.report(
                "R009",
                f"Reshape leaves the shape {dims_text(data.shape)} unchanged: remove it",
                ref,
                fix=_removable(ctx, ref),
            )


def _removable(ctx: LintContext, ref: NodeRef) -> bool:
    """Whether remove-noop-reshape can take the node out (its contract: main graph; a graph
    output keeps its name only if the input can be renamed to it)."""
    if ref.graph != MAIN:
        return False
    outs = ctx.graph_outputs(MAIN)
    if ref.node.output[0] not in outs:
        return True
    src = ref.node.input[0]
    return src not in outs and ctx.producer(MAIN, src) is not None


def canonical_target(
    in_shape: Sequence[D.Dim] | None, out_shape: Sequence[D.Dim] | None, allowzero: bool = False
) -> list[int] | None:
    """The constant Reshape target that gives ``out_shape`` from ``in_shape``, or None.

    The spelling canonicalize-reshape uses: every output dim an int, or (``allowzero`` 0 only)
    ``0`` where it equals the input dim at its index, except at most one dim written ``-1``
    (not when the input has a zero-size dim). With a literal zero-size output dim only an
    all-int target under ``allowzero=1`` says the same.
    """
    if out_shape is None:
        return None
    ints = [d for d in out_shape if type(d) is int]
    if 0 in ints:
        return list(out_shape) if allowzero and len(ints) == len(out_shape) else None
    if any(d < 0 for d in ints):
        return None
    target: list[int] = []
    for i, d in enumerate(out_shape):
        if type(d) is int:
            target.append(d)
        elif not allowzero and in_shape is not None and i < len(in_shape) and in_shape[i] == d:
            target.append(0)
        else:
            target.append(-1)
    if target.count(-1) > 1:
        return None
    if -1 in target and in_shape is not None and any(type(d) is int and d == 0 for d in in_shape):
        return None
    return target


def runtime_target(ref: NodeRef) -> bool:
    """True when the Reshape's target is computed by the graph (not an initializer/Constant)."""
    return len(ref.node.input) >= 2 and bool(ref.node.input[1]) and not ref.is_constant(ref.node.input[1])


def constant_target_for(ctx: LintContext, ref: NodeRef) -> list[int] | None:
    """The constant target a runtime-target Reshape could use instead, or None."""
    if not runtime_target(ref):
        return None
    data, out = ref.input_fact(0), ref.output_fact(0)
    if out is None or out.shape is None:
        return None
    allowzero = bool(ref.attr("allowzero", 0)) if _version(ctx, ref) >= 14 else False
    return canonical_target(None if data is None else data.shape, out.shape, allowzero)


@check("R010")
def reshape_runtime_target(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        if _version(ctx, ref) < 5:
            continue
        target = constant_target_for(ctx, ref)
        if target is not None:
            ctx.report(
                "R010",
                f"target {ref.node.input[1]!r} is computed at run time but is always {target}: make it a constant",
                ref,
                fix=ref.graph == MAIN,
            )


def _reshapes(ctx: LintContext):
    for ref in ctx.nodes():
        if ref.node.op_type == "Reshape" and ref.node.domain in ("", "ai.onnx"):
            yield ref


def _version(ctx: LintContext, ref: NodeRef) -> int:
    schema = ctx.schema(ref.node)
    return schema.since_version if schema is not None else ctx.opset("")
