"""scalar-if-condition: an If whose condition has rank 2 or more reads it reshaped to a scalar.

ONNX takes an If condition of any rank holding one element (onnxruntime runs ``[1, 1]``);
OpenVINO's ``If`` requires rank 0 or 1 and ``read_model`` refuses the model (lint's P007). The
condition holds exactly one element wherever the model runs, so ``Reshape(cond, [])`` is the
same value as a scalar: the model computes the same everywhere it runs.

Contract (main graph only; opset 5 and later, where Reshape takes its shape as an input):

- each ``If`` of the default domain whose condition inference gives a known rank of 2 or more
  reads ``Reshape(cond, [])`` instead, the empty shape an initializer (a ``Constant`` node
  before IR 4, from opset 9; below that nothing is changed), names fresh across the model;
- nothing else changes. Not among the default passes: ``lint --fix --target openvino`` (P007)
  and ``optimize --passes scalar-if-condition`` run it.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from shapeinfer.ir.queries import default_opset
from shapeinfer.passes._subgraphs import defined_names, fresh_name
from shapeinfer.passes.base import Pass, PassResult, Stage

_DEFAULT = ("", "ai.onnx")


def high_rank_conditions(model: onnx.ModelProto, facts) -> list[int]:
    """Positions of the main graph's Ifs whose condition has a known rank of 2 or more."""
    out = []
    for k, n in enumerate(model.graph.node):
        if n.op_type != "If" or n.domain not in _DEFAULT or not n.input or not n.input[0]:
            continue
        f = facts.get(n.input[0])
        if f is not None and f.kind == "tensor" and f.shape is not None and len(f.shape) >= 2:
            out.append(k)
    return out


def run(model: onnx.ModelProto, ctx) -> PassResult:
    opset = default_opset(model) or 0
    if opset < 5 or not any(n.op_type == "If" for n in model.graph.node):
        return PassResult()
    constant_node = model.ir_version < 4
    if constant_node and opset < 9:  # no int64 Constant node before opset 9
        return PassResult()
    targets = high_rank_conditions(model, ctx.infer(model, whole=True).facts)  # the rounds' facts, if fresh
    if not targets:
        return PassResult()
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    taken = defined_names(out)
    shape = fresh_name("scalar_if_condition_shape", taken)
    empty = helper.make_tensor(shape, TensorProto.INT64, [0], [])
    nodes = list(g.node)
    new_nodes = []
    if constant_node:
        new_nodes.append(helper.make_node("Constant", [], [shape], name=fresh_name(shape, taken), value=empty))
    else:
        g.initializer.append(empty)
    for k, n in enumerate(nodes):
        if k in targets:
            scalar = fresh_name(f"{n.input[0]}_scalar", taken)
            new_nodes.append(helper.make_node("Reshape", [n.input[0], shape], [scalar], name=fresh_name(scalar, taken)))
            n.input[0] = scalar
        new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)
    return PassResult({"reshaped": len(targets)}, model=out)


PASS = Pass("scalar-if-condition", Stage.PROTO, run, idempotent=True)
