"""The passes whose rewrites do not depend on shapes, in model-local function bodies.

A function body serves every call site, at whatever shapes and attribute values each call has,
and inference records no fact that holds at all of them: the passes that read facts of the
call (folding shape arithmetic, canonicalizing targets, removing no-op Reshapes) never run
there. Three keep every value at every call:

- ``fold-constants`` (:func:`shapeinfer.passes.fold_constants.fold`): a node whose inputs are all
  Constant nodes of the body (or folded nodes) computes the same at every call. Its facts come
  from inferring those nodes alone, as a model of their own; a node with an attribute that
  refers to the function's (``ref_attr_name``), and a function importing another default-domain
  opset than the model's, are never folded. The values become Constant nodes of the body.
- ``dedupe-shapes``' merge (:func:`shapeinfer.passes.dedupe_shapes.merge`): two deterministic
  default-domain nodes with the same op, attributes and inputs compute the same outputs for any
  input; an attribute that refers to the function's own attributes (``ref_attr_name``) counts
  as part of the node, so a node reading ``@axis`` merges only with one reading ``@axis`` too.
- ``dce``'s sweep: a node no function output depends on is removed.

The function's signature (inputs, outputs, attributes, opset imports) never changes, and a
function is kept even when no node calls it.
"""

from __future__ import annotations

import onnx

from shapeinfer.inference.engine import infer
from shapeinfer.ir.export import _export_node
from shapeinfer.ir.queries import function_opset
from shapeinfer.passes.dce import _sweep
from shapeinfer.passes.dedupe_shapes import merge
from shapeinfer.passes.fold_constants import fold

#: The passes run in function bodies (``dce`` always runs, as after every pipeline).
IN_FUNCTIONS = ("fold-constants", "dedupe-shapes", "dce")

#: Rounds of merge and sweep in one body before giving up on a fixpoint.
MAX_ROUNDS = 8


def _constant_facts(gm, f) -> dict:
    """Inference facts of the nodes of function body ``f`` that read only Constant nodes of the
    body (and such nodes), inferred as a model of their own (the body's opset imports)."""

    made: set[int] = set()  # ids of the tensors those nodes compute
    protos = []
    for n in f.nodes:
        if n.domain not in ("", "ai.onnx") or n.graphs or not n.outputs:
            continue
        if n.proto is not None and any(a.ref_attr_name for a in n.proto.attribute):
            continue
        if all(not t.name or id(t) in made for t in n.inputs):
            protos.append(_export_node(gm, n))
            made.update(id(t) for t in n.outputs)
    if len(protos) < 2:
        return {}
    outs = [onnx.helper.make_value_info(name, onnx.TypeProto()) for p in protos for name in p.output if name]
    graph = onnx.helper.make_graph(protos, f.name or "function", [], outs)
    model = onnx.helper.make_model(graph, opset_imports=list(f.proto.opset_import), ir_version=gm.model.ir_version)
    try:
        return infer(model).facts
    except Exception:
        return {}


def optimize_functions(gm, names, model_opset: int, max_growth: int = 1 << 16) -> dict[str, dict[str, int]]:
    """Run the passes of :data:`IN_FUNCTIONS` selected in ``names`` (dce always) in every
    model-local function body of index ``gm``; ``max_growth`` is fold-constants' size cap.
    Returns pass name -> counts of what changed (keys ``... in functions``); ``gm`` is edited
    in place."""

    merged = removed = evaluated = 0
    for f in gm.graph.functions:
        opset = function_opset(f.proto, model_opset)
        interface = {t.name for t in f.inputs}
        for _ in range(MAX_ROUNDS):
            changed = 0
            if "fold-constants" in names and opset == model_opset and gm.model.ir_version >= 4:
                facts = _constant_facts(gm, f)
                if facts:
                    stats = fold(gm, f, facts, max_growth, in_function=True)
                    evaluated += stats.get("tensors evaluated to initializers", 0)
                    changed += sum(stats.values())
            if "dedupe-shapes" in names:
                stats, _ = merge(gm, f, opset, set())
                merged += stats.get("nodes merged", 0)
                changed += sum(stats.values())
            stats = {"nodes removed": 0, "initializers removed": 0}
            _sweep(f, gm, stats, interface)
            removed += stats["nodes removed"] + stats["initializers removed"]  # (constants are nodes here)
            changed += sum(stats.values())
            if not changed:
                break
    out: dict[str, dict[str, int]] = {}
    if evaluated:
        out["fold-constants"] = {"tensors evaluated in functions": evaluated}
    if merged:
        out["dedupe-shapes"] = {"nodes merged in functions": merged}
    if removed:
        out["dce"] = {"nodes removed in functions": removed}
    return out
