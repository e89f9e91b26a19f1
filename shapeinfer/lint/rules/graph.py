"""Graph rules G001-G011, and the model-level E codes.

G002-G005, G007, G009, G010 and G011 come from the engine's diagnostics; G001, G006 and G008 are checks over the
graph, the inferred facts and (for G006) the model's own declared shapes.
"""

from __future__ import annotations

from shapeinfer.lint.context import LintContext, allowed_types, dims_text, formal_input, short_types, type_string
from shapeinfer.lint.registry import declare, rule
from shapeinfer.symbolic import dims as D


@rule("G001", "unresolved-dims", "warning", "dims left unresolved (names the op where resolution was lost)")
def unresolved_dims(ctx: LintContext) -> None:
    """
    Inference could not express some dims in terms of the graph inputs' dims and invented a
    symbol (``unk_<n>``) or lost the rank. The finding is reported once, at the first node whose
    output has an unknown its inputs did not have, which is where resolution was lost
    (data-dependent ops such as NonZero, an op with no schema, a shape computed from values
    inference cannot see); nodes downstream that merely carry the unknown are not reported.
    Unresolved dims block static memory planning and compilation; bind the input symbols
    (``--bind``) or make the values the op depends on constant. ``strict`` makes this an error.
    """
    for _, _, refs in ctx.graphs():
        for ref in refs:
            n = ref.node
            if (ref.graph, ref.index) in ctx.error_nodes:
                continue  # the node is invalid: its error finding says why its outputs are unknown
            seen: set[str] = set()
            ranks_known = True
            for name in dict.fromkeys(n.input):  # a Concat of one tensor 100k times: checked once
                f = ref.fact(name)
                if f is None:
                    continue
                if f.kind == "tensor" and f.shape is None:
                    ranks_known = False
                seen |= _fresh_in(ctx, f)
            for o in n.output:
                f = ref.fact(o)
                if not o or f is None or f.kind != "tensor":
                    continue
                if f.shape is None:
                    if ranks_known:
                        ctx.report(
                            "G001",
                            f"rank of output {o!r} is unknown: inference lost it at this {n.op_type}",
                            ref,
                            tensor=o,
                        )
                    continue
                new = sorted(_fresh_in(ctx, f) - seen)
                if new:
                    axes = [i for i, d in enumerate(f.shape) if D.symbols(d) & set(new)] if f.shape else []
                    ctx.report(
                        "G001",
                        f"output {o!r} has unresolved dims {dims_text(f.shape)} (axis {', '.join(map(str, axes))}: "
                        f"{', '.join(new)}): inference could not determine them at this {n.op_type}",
                        ref,
                        tensor=o,
                    )


def _fresh_in(ctx: LintContext, f) -> set[str]:
    out: set[str] = set()
    for d in f.shape or ():
        if type(d) is not int:
            out |= D.symbols(d) & ctx.fresh
    for v in f.value or ():
        if isinstance(v, D.Expr):
            out |= D.symbols(v) & ctx.fresh
    if f.elem is not None:
        out |= _fresh_in(ctx, f.elem)
    return out


@rule("G008", "type-constraint-violation", "error", "an input type the op's schema does not allow")
def type_constraints(ctx: LintContext) -> None:
    """
    An input's element type is not among those the op's type constraint allows in the opset in
    force (read from ``onnx.defs``: ``Sqrt`` of int64, ``MatMul`` of bool), or inputs bound to
    the same type variable have different types (``Add`` of float and int64). The node is
    invalid and runtimes refuse the model. Insert a ``Cast`` or fix the producer. Reshape's
    inputs are covered by R008 and R011.
    """
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type == "Reshape" and n.domain in ("", "ai.onnx"):
            continue
        schema = ctx.schema(n)
        if schema is None:
            continue
        problems = []
        bound: dict[str, tuple[str, str]] = {}
        done: set[tuple[str, str]] = set()
        for i, name in enumerate(n.input):
            param = formal_input(schema, i)
            if param is None or (name, param.name) in done:
                continue  # the same tensor at the same formal (a variadic input repeated): no news
            done.add((name, param.name))
            have = type_string(ref.fact(name))
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
        if problems:
            ctx.report("G008", f"{n.op_type}-{schema.since_version}: " + "; ".join(problems), ref)


declare(
    "E900",
    "unreadable-model",
    "error",
    "a file that cannot be read as an ONNX model",
    """
    The file is missing, empty, truncated, not a protobuf, or has no graph. It is reported as a
    finding so that the other files of a multi-file lint are still checked; the lint exits with
    code 2 (could not run) when any file is unreadable.
    """,
)
