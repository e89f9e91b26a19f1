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
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto, helper

from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.ir.graph import Constant, Graph, Node, Tensor, Variable, unlink_nodes
from shapeinfer.ir.queries import default_opset
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.symbolic.facts import Fact

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

_DEFAULT = ("", "ai.onnx")
_BRANCHES = ("then_branch", "else_branch")

#: Element types ConstantOfShape produces from opset 9 (bfloat16 from 20).
_COS_TYPES = {TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.BOOL} | INT_TYPES


def _empty_constant(branch: Graph, t: Tensor, main: Graph) -> Constant | None:
    """The constant of no elements (a tensor with a 0 dim, rank 1 or more) branch output ``t``
    is: a Constant node's ``value`` in ``branch``, an initializer of ``branch`` or of the main
    graph ``main``; None when ``t`` is anything else."""
    if t.inputs and t.graph is branch:  # computed in the branch
        n = t.inputs[0]
        if n.op != "Constant" or n.domain not in _DEFAULT:
            return None
        c = n.attrs.get("value")
    elif isinstance(t, Constant) and t.graph in (branch, main):
        c = t
    else:
        return None
    if not isinstance(c, Constant):
        return None
    dims = c.shape
    return c if len(dims) > 0 and 0 in dims else None


def empty_branch_outputs(node: Node, facts: Sequence[Fact | None], main: Graph) -> list[tuple[str, int]]:
    """(branch attribute name, output position) of each output of If ``node`` (of the main graph
    ``main``) of rank 2 or more (``facts``: the If outputs' facts, by position) that exactly one
    branch gives as a constant of no elements. OpenVINO reads that constant as rank 0 and the
    other branch's output with its rank, so the If's rank is dynamic; rank 0 against rank 1 it
    merges into rank 1 (torchvision's detectors compile), hence rank 2 or more. Lint's P008
    reports what this finds."""
    branches = node.graphs
    if any(b not in branches or not isinstance(branches[b], Graph) for b in _BRANCHES):
        return []
    if any(len(branches[b].outputs) != len(node.outputs) for b in _BRANCHES):
        return []
    out = []
    for k, t in enumerate(node.outputs):
        f = facts[k] if k < len(facts) else None
        if not t.name or f is None or f.kind != "tensor" or f.shape is None or len(f.shape) < 2:
            continue
        empty = [_empty_constant(branches[b], branches[b].outputs[k], main) is not None for b in _BRANCHES]
        if empty[0] != empty[1]:
            out.append((_BRANCHES[0] if empty[0] else _BRANCHES[1], k))
    return out


def run(gm: GraphModel, result: Result, ctx) -> PassResult:
    """Compute the main graph's Ifs' empty branch constants (see the module docstring)."""
    opset = default_opset(gm.model) or 0
    g = gm.graph
    ifs = [n for n in g.nodes if n.op == "If" and n.domain in _DEFAULT]
    if opset < 9 or not ifs:
        return PassResult()
    facts = result.facts
    targets = []
    for n in ifs:
        found = empty_branch_outputs(n, [facts.get(t.name) for t in n.outputs], g)
        if found:
            targets.append((n, found))
    types = _COS_TYPES | ({TensorProto.BFLOAT16} if opset >= 20 else set())
    rewritten = 0
    for n, found in targets:
        for branch, k in found:
            b = n.graphs[branch]
            c = _empty_constant(b, b.outputs[k], g)
            if c is None or c.data_type not in types:
                continue
            _compute_in_branch(gm, b, k, c)
            rewritten += 1
    if not rewritten:
        return PassResult()
    return PassResult({"constants computed": rewritten}, edited=True)


def _compute_in_branch(gm: GraphModel, b: Graph, k: int, c: Constant) -> None:
    """Branch ``b`` returns ``ConstantOfShape(Constant(dims))`` (of ``c``'s element type) as its
    output ``k`` instead of the constant of no elements ``c``."""
    t = b.outputs[k]
    name = t.name
    dims = list(c.shape)
    shape_name = gm.fresh(f"{name}_shape")
    shape = Variable(shape_name, graph=b)
    value = Constant(shape_name, helper.make_tensor(shape_name, TensorProto.INT64, [len(dims)], dims))
    shape_node = gm.node("Constant", shape_name, [], [shape], {"value": value})
    zero = np.zeros(1, dtype=helper.tensor_dtype_to_np_dtype(c.data_type))
    attrs = {"value": Constant("value", onnx.numpy_helper.from_array(zero, "value"))}
    if t.inputs and t.graph is b:  # the Constant node producing it: replaced where it stands
        old = t.inputs[0]
        at = next(i for i, x in enumerate(b.nodes) if x is old)
        exact = bool(old.name)
        unlink_nodes([old])
        cos = gm.node("ConstantOfShape", old.name if exact else name, [shape], [t], attrs, exact=exact)
        b.nodes[at : at + 1] = [shape_node, cos]
        return
    new = Variable(gm.fresh(f"{name}_computed"), graph=b)
    cos = gm.node("ConstantOfShape", new.name, [shape], [new], attrs)
    b.nodes += [shape_node, cos]
    b.outputs[k] = new


PASS = Pass("empty-branch-constants", run, idempotent=True, infers_first=True)
