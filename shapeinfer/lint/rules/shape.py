"""Shape rules S001-S004: the Shape op, where dims turn into values.

S001-S003 come from the Shape rules of :mod:`shapeinfer.inference.ops.shape` (engine diagnostics); S004
is a check over the inferred facts.
"""

from __future__ import annotations

from shapeinfer.inference.ops.shape import shape_slice
from shapeinfer.lint.context import LintContext, dims_text
from shapeinfer.lint.registry import check


@check("S004")
def shape_of_static(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "Shape" or n.domain not in ("", "ai.onnx"):
            continue
        data = ref.input_fact(0)
        if data is None or not data.is_static:
            continue
        dims = list(data.shape)
        schema = ctx.schema(n)
        if schema is not None and schema.since_version >= 15:
            s, e, _ = shape_slice(len(dims), ref.attr("start", 0), ref.attr("end"))
            dims = dims[s:e] if s < e else []
        foldable = ref.graph == "main" and n.output[0] not in ctx.graph_outputs("main")
        ctx.report(
            "S004",
            f"Shape of a tensor with static shape {dims_text(data.shape)} is the constant {dims}: fold it",
            ref,
            fix=foldable,
        )
