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

from typing import TYPE_CHECKING

from onnx import TensorProto, helper

from shapeinfer.ir.graph import Constant, Variable, set_input
from shapeinfer.ir.queries import default_opset
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.symbolic.facts import Fact

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

_DEFAULT = ("", "ai.onnx")


def condition_refused(f: Fact | None) -> bool:
    """True when an If condition with fact ``f`` has a known rank of 2 or more: OpenVINO's
    ``read_model`` refuses it (lint's P007), this pass reshapes it to a scalar."""
    return f is not None and f.kind == "tensor" and f.shape is not None and len(f.shape) >= 2


def run(gm: GraphModel, result: Result, ctx) -> PassResult:
    """Reshape the main graph's refused If conditions to scalars (see the module docstring)."""
    model = gm.model
    g = gm.graph
    opset = default_opset(model) or 0
    ifs = [n for n in g.nodes if n.op == "If" and n.domain in _DEFAULT]
    if opset < 5 or not ifs:
        return PassResult()
    constant_node = gm.lists_initializers_as_inputs
    if constant_node and opset < 9:  # no int64 Constant node before opset 9
        return PassResult()
    facts = result.facts
    targets = {id(n) for n in ifs if n.inputs and n.inputs[0].name and condition_refused(facts.get(n.inputs[0].name))}
    if not targets:
        return PassResult()
    name = gm.fresh("scalar_if_condition_shape")
    empty = Constant(name, helper.make_tensor(name, TensorProto.INT64, [0], []))
    nodes = []
    if constant_node:
        shape = Variable(name, graph=g)
        nodes.append(gm.node("Constant", name, [], [shape], {"value": empty}))
    else:
        shape = gm.constant(g, name, empty, exact=True)
    for n in g.nodes:
        if id(n) in targets:
            cond = n.inputs[0]
            scalar = Variable(gm.fresh(f"{cond.name}_scalar"), graph=g)
            nodes.append(gm.node("Reshape", scalar.name, [cond, shape], [scalar]))
            set_input(n, 0, scalar)
        nodes.append(n)
    g.nodes = nodes
    return PassResult({"reshaped": len(targets)}, edited=True)


PASS = Pass("scalar-if-condition", run, idempotent=True, infers_first=True)
