"""The passes whose rewrites do not depend on shapes, in model-local function bodies.

A function body serves every call site, at whatever shapes and attribute values each call has,
and inference records no fact that holds at all of them: the passes that read facts (folding
shape arithmetic, canonicalizing targets, removing no-op Reshapes) never run there. Two do not
read any and keep every value at every call:

- ``dedupe-shapes``' merge (:func:`shapeinfer.passes.dedupe_shapes.merge`): two deterministic
  default-domain nodes with the same op, attributes and inputs compute the same outputs for any
  input; an attribute that refers to the function's own attributes (``ref_attr_name``) counts
  as part of the node, so a node reading ``@axis`` merges only with one reading ``@axis`` too.
- ``dce``'s sweep: a node no function output depends on is removed.

The function's signature (inputs, outputs, attributes, opset imports) never changes, and a
function is kept even when no node calls it.
"""

from __future__ import annotations

from shapeinfer.passes.dce import _sweep
from shapeinfer.passes.dedupe_shapes import merge

#: The passes run in function bodies (``dce`` always runs, as after every pipeline).
IN_FUNCTIONS = ("dedupe-shapes", "dce")

#: Rounds of merge and sweep in one body before giving up on a fixpoint.
MAX_ROUNDS = 8


def _default_opset(fp, model_opset: int) -> int:
    for imp in fp.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    return model_opset


def optimize_functions(gm, names, model_opset: int) -> dict[str, dict[str, int]]:
    """Run the passes of :data:`IN_FUNCTIONS` selected in ``names`` (dce always) in every
    model-local function body of index ``gm``. Returns pass name -> counts of what changed
    (keys ``... in functions``); ``gm`` is edited in place."""
    merged = removed = 0
    for f in gm.graph.functions:
        opset = _default_opset(f.proto, model_opset)
        interface = {t.name for t in f.inputs}
        for _ in range(MAX_ROUNDS):
            changed = 0
            if "dedupe-shapes" in names:
                stats, _ = merge(gm, f, opset, set())
                merged += stats.get("nodes merged", 0)
                changed += sum(stats.values())
            stats = {"nodes removed": 0, "initializers removed": 0}
            _sweep(f, gm, stats, interface)
            removed += stats["nodes removed"]
            changed += sum(stats.values())
            if not changed:
                break
    out: dict[str, dict[str, int]] = {}
    if merged:
        out["dedupe-shapes"] = {"nodes merged in functions": merged}
    if removed:
        out["dce"] = {"nodes removed in functions": removed}
    return out


def function_nodes(model) -> int:
    """Nodes of the model-local function bodies of ``model`` (not of subgraphs inside them)."""
    return sum(len(fp.node) for fp in model.functions)
