"""Model-local functions (``ModelProto.functions``) inferred at each call site: the body runs
through the walk with the call's input facts and attributes, at the function's own opset
imports (:func:`infer_function`)."""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from shapeinfer.base import codes
from shapeinfer.inference.node_context import GraphScope, NodeContext, Walker
from shapeinfer.io.onnxio import graph_path
from shapeinfer.symbolic.facts import Fact


def infer_function(eng: Walker, ctx: NodeContext, fn: onnx.FunctionProto, ins: list[Fact | None]) -> list[Fact | None]:
    """Infer a model-local function's body at this call site.

    The body sees only its formal inputs, bound to this site's facts (a formal the site
    omits is an omitted input inside the body too); attributes are this site's (references
    to an enclosing function's attributes resolved), else the function's defaults; ops are
    read at the function's own opset imports. Nested calls recurse; a function that calls
    itself is an error diagnostic, not a hang.
    """
    key = (fn.domain, fn.name, fn.overload)
    if key in eng.active_functions:
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
    saved = eng.opsets
    eng.opsets = dict(saved)
    for o in fn.opset_import:
        eng.opsets["" if o.domain == "ai.onnx" else o.domain] = o.version
    eng.active_functions.add(key)
    name = graph_path(ctx.graph, ctx.index, fn.name)
    try:
        eng.run_nodes(nodes, scope, name, attrs)
        if scope.declared:
            eng.graph_declared[name] = scope.declared
    finally:
        eng.opsets = saved
        eng.active_functions.discard(key)
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
        outs.append(None if f is None else eng.resolve_fact(f))
    return outs
