"""Shape rules S001-S004: the Shape op, where dims turn into values.

S001-S003 come from the Shape rules of :mod:`shapeinfer.inference.ops.shape` (engine diagnostics); S004
is a check over the inferred facts.
"""

from __future__ import annotations

from shapeinfer.inference.ops.shape import shape_slice
from shapeinfer.lint.context import LintContext, dims_text
from shapeinfer.lint.registry import declare, rule

declare(
    "S001",
    "shape-start-end-before-v15",
    "warning",
    "start/end attributes where Shape-15 is not in force",
    """
    ``start`` and ``end`` were added in Shape-15. Under an older opset they are not part of the
    op: onnx inference and most runtimes ignore them and return every dim, so the graph computes
    something else than its author meant. Import opset 15 or later, or slice the result with
    ``Slice``/``Gather``.
    """,
)

declare(
    "S002",
    "shape-slice-clamped",
    "info",
    "Shape start/end clamped to the input rank",
    """
    Shape-15 clamps ``start``/``end`` to ``[0, rank]`` (after adding the rank to negative
    values), so ``end=10`` on a rank-3 input means 3. Legal, but it often hides an assumption
    about the rank that no longer holds; write the bounds that match the rank.
    """,
)

declare(
    "S003",
    "shape-empty-slice",
    "warning",
    "Shape start >= end: an empty shape",
    """
    After normalising negative values and clamping, ``start >= end``: the Shape node returns an
    empty 1-D tensor. Downstream shape arithmetic (a Concat into a Reshape target, a Gather)
    then silently computes with no dims. Check the bounds against the input rank.
    """,
)


@rule(
    "S004",
    "shape-of-static-tensor",
    "info",
    "Shape of a tensor whose shape is fully static",
    fix="fold-shapes",
)
def shape_of_static(ctx: LintContext) -> None:
    """
    Every dim of the Shape node's input is a known integer, so its output is a constant: the
    node and the arithmetic on it can be folded away, which shrinks the graph and lets
    consumers (a Reshape target, an Expand) see constants. Fixable: ``fold-shapes`` (main
    graph, when the Shape's output is not a graph output, which keeps its producer).
    """
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
