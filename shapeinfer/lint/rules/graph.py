"""The graph checks: G001 (dims left unresolved, reported where resolution was lost) and G008
(input types against the op's type constraints, :mod:`shapeinfer.inference.type_check`). The
other G codes are the engine's diagnostics."""

from __future__ import annotations

from shapeinfer.inference.type_check import constraint_problems, is_checked
from shapeinfer.lint.context import LintContext, dims_text
from shapeinfer.lint.registry import check
from shapeinfer.symbolic import dims as D


@check("G001")
def unresolved_dims(ctx: LintContext) -> None:
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


@check("G008")
def type_constraints(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        if not is_checked(ref.node):
            continue  # Reshape: R008 and R011
        schema = ctx.schema(ref.node)
        msg = constraint_problems(ref.node, schema, ref.fact) if schema is not None else None
        if msg is not None:
            ctx.report("G008", msg, ref)
