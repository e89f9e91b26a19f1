"""empty-branch-constants: an If branch's constant of no elements is computed by ConstantOfShape.

optimum's merged seq2seq decoders return the encoder's past as a constant of no elements
(``[0, 4, 1, 8]``) on one branch of an ``If`` and as a rank-4 tensor on the other. OpenVINO's
ONNX frontend reads every tensor of no elements as rank 0, so the branches' ranks differ, the
If's rank is dynamic and the CPU plugin refuses the model (lint's P008). The same value computed
as ``ConstantOfShape(Constant([0, 4, 1, 8]))`` has the rank OpenVINO infers from its shape input:
the model computes the same everywhere it runs, and OpenVINO compiles it.

Contract (the main graph's Ifs only, as P008 reports them; opset 9 and later, where
ConstantOfShape exists):

- for each default-domain ``If`` output of rank 2 or more (as inference gives it) that exactly
  one branch returns as a constant of no elements (a Constant node's ``value``, an initializer of
  the branch or of the main graph; :func:`empty_branch_outputs`), that branch returns
  ``ConstantOfShape(shape)`` instead, both nodes in the branch: a Constant node producing the
  branch output in place is replaced where it stands (its other readers read the same value),
  otherwise the two nodes are appended and the branch output renamed; names are fresh across the
  model;
- an element type ConstantOfShape cannot produce at the model's opset is left alone;
- nothing else changes. Not among the default passes: ``lint --fix --target openvino`` (P008)
  and ``optimize --passes empty-branch-constants`` run it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, NodeProto, TensorProto, helper

from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.ir.queries import default_opset
from shapeinfer.passes._subgraphs import defined_names, fresh_name
from shapeinfer.passes.base import Pass, PassResult, Stage
from shapeinfer.symbolic.facts import Fact

_DEFAULT = ("", "ai.onnx")
_BRANCHES = ("then_branch", "else_branch")

#: Element types ConstantOfShape produces from opset 9 (bfloat16 from 20).
_COS_TYPES = {TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.BOOL} | INT_TYPES


def _empty_constant(graph: GraphProto, name: str, outer: dict[str, TensorProto]) -> TensorProto | None:
    """The constant of no elements (a tensor with a 0 dim, rank 1 or more) ``name`` is in
    ``graph``: a Constant node's ``value``, an initializer of ``graph`` or of the main graph
    (``outer``); None when ``name`` is anything else."""
    for n in graph.node:
        if name in n.output:
            if n.op_type != "Constant" or n.domain not in _DEFAULT:
                return None
            t = next((a.t for a in n.attribute if a.name == "value" and a.type == AttributeProto.TENSOR), None)
            return t if t is not None and len(t.dims) > 0 and 0 in t.dims else None
    t = next((t for t in graph.initializer if t.name == name), None) or outer.get(name)
    return t if t is not None and len(t.dims) > 0 and 0 in t.dims else None


def empty_branch_outputs(
    node: NodeProto, facts: Sequence[Fact | None], outer: dict[str, TensorProto]
) -> list[tuple[str, int]]:
    """(branch attribute name, output position) of each output of If ``node`` of rank 2 or more
    (``facts``: the If outputs' facts, by position) that exactly one branch gives as a constant
    of no elements. OpenVINO reads that constant as rank 0 and the other branch's
    output with its rank, so the If's rank is dynamic; rank 0 against rank 1 it merges into rank
    1 (torchvision's detectors compile), hence rank 2 or more."""
    branches = {a.name: a.g for a in node.attribute if a.type == AttributeProto.GRAPH}
    if any(b not in branches or len(branches[b].output) != len(node.output) for b in _BRANCHES):
        return []
    out = []
    for k, name in enumerate(node.output):
        f = facts[k] if k < len(facts) else None
        if not name or f is None or f.kind != "tensor" or f.shape is None or len(f.shape) < 2:
            continue
        empty = [_empty_constant(branches[b], branches[b].output[k].name, outer) is not None for b in _BRANCHES]
        if empty[0] != empty[1]:
            out.append((_BRANCHES[0] if empty[0] else _BRANCHES[1], k))
    return out


def run(model: onnx.ModelProto, ctx) -> PassResult:
    opset = default_opset(model) or 0
    if opset < 9 or not any(n.op_type == "If" and n.domain in _DEFAULT for n in model.graph.node):
        return PassResult()
    outer = {t.name: t for t in model.graph.initializer}  # (dims and element type are read, never changed)
    facts = None
    targets: dict[int, list[tuple[str, int]]] = {}
    for i, n in enumerate(model.graph.node):
        if n.op_type != "If" or n.domain not in _DEFAULT:
            continue
        if facts is None:
            facts = ctx.infer(model, whole=True).facts  # the facts the rounds hold for it, if fresh
        found = empty_branch_outputs(n, [facts.get(o) for o in n.output], outer)
        if found:
            targets[i] = found
    if not targets:
        return PassResult()
    out = onnx.ModelProto()
    out.CopyFrom(model)
    taken = defined_names(out)
    types = _COS_TYPES | ({TensorProto.BFLOAT16} if opset >= 20 else set())
    rewritten = 0
    for i, found in targets.items():
        branches = {a.name: a.g for a in out.graph.node[i].attribute if a.type == AttributeProto.GRAPH}
        for branch, k in found:
            g = branches[branch]
            name = g.output[k].name
            t = _empty_constant(g, name, outer)
            if t is None or t.data_type not in types:
                continue
            _compute_in_branch(g, k, t, taken)
            rewritten += 1
    if not rewritten:
        return PassResult()
    return PassResult({"constants computed": rewritten}, model=out)


def _compute_in_branch(g: GraphProto, k: int, t: TensorProto, taken: set[str]) -> None:
    """Branch ``g`` returns ``ConstantOfShape(Constant(t.dims))`` (of ``t``'s element type) as
    its output ``k`` instead of the constant of no elements ``t``."""
    name = g.output[k].name
    shape = fresh_name(f"{name}_shape", taken)
    zero = np.zeros(1, dtype=helper.tensor_dtype_to_np_dtype(t.data_type))
    shape_node = helper.make_node(
        "Constant",
        [],
        [shape],
        name=fresh_name(shape, taken),
        value=helper.make_tensor(shape, TensorProto.INT64, [len(t.dims)], list(t.dims)),
    )
    value = onnx.numpy_helper.from_array(zero, "value")
    at = next((j for j, n in enumerate(g.node) if name in n.output), None)
    if at is not None:  # the Constant node producing it: replaced where it stands
        cos = helper.make_node("ConstantOfShape", [shape], [name], name=g.node[at].name or fresh_name(name, taken))
        cos.attribute.append(helper.make_attribute("value", value))
        del g.node[at]
        g.node.insert(at, cos)
        g.node.insert(at, shape_node)
        return
    new = fresh_name(f"{name}_computed", taken)
    cos = helper.make_node("ConstantOfShape", [shape], [new], name=fresh_name(new, taken))
    cos.attribute.append(helper.make_attribute("value", value))
    g.node.extend([shape_node, cos])
    g.output[k].name = new


PASS = Pass("empty-branch-constants", Stage.PROTO, run, idempotent=True)
