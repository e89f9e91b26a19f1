"""Helpers for the op tests: one-node models, our inferred dims and values, onnxruntime's actual ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

#: onnxruntime 1.17+ reads IR 9 (opsets up to 21); opset 23 ops need IR 10.
IR_VERSION = 9


def one_node(
    op: str,
    inputs: Sequence[tuple[str, int, Sequence | None]],
    consts: dict[str, np.ndarray] | None = None,
    attrs: dict | None = None,
    opset: int = 18,
    outputs: int = 1,
) -> onnx.ModelProto:
    """A model with one ``op`` node.

    ``inputs`` are graph inputs ``(name, elem_type, dims)`` (dims may hold symbol names);
    ``consts`` are initializers by name. The node's inputs are the graph inputs, then the
    constants (use :func:`one_node_ordered` for any other order or omitted inputs).
    """
    consts = consts or {}
    names = [n for n, _, _ in inputs] + list(consts)
    return one_node_ordered(op, names, inputs, consts, attrs, opset, outputs)


def one_node_ordered(
    op: str,
    node_inputs: Sequence[str],
    inputs: Sequence[tuple[str, int, Sequence | None]],
    consts: dict[str, np.ndarray] | None = None,
    attrs: dict | None = None,
    opset: int = 18,
    outputs: int = 1,
    ir_version: int = IR_VERSION,
) -> onnx.ModelProto:
    """A model with one ``op`` node whose inputs are ``node_inputs`` (graph inputs or constants)."""
    consts = consts or {}
    outs = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, list(node_inputs), outs, **(attrs or {}))
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def inferred(model: onnx.ModelProto, binding: dict[str, int] | None = None) -> list:
    """Each output's inferred dims, evaluated at ``binding`` (None for an open dim or rank)."""
    r = shapeinfer.infer(model)
    out = []
    for vi in model.graph.output:
        f = r.facts.get(vi.name)
        if f is None or f.shape is None:
            out.append(None)
            continue
        dims = []
        for d in f.shape:
            try:
                dims.append(D.evaluate(d, binding or {}))
            except KeyError:
                dims.append(None)
        out.append(tuple(dims))
    return out


def inferred_values(model: onnx.ModelProto) -> list:
    """Each output's tracked values (None when not tracked)."""
    r = shapeinfer.infer(model)
    return [None if r.facts.get(vi.name) is None else r.facts[vi.name].value for vi in model.graph.output]


class Runtime:
    """One onnxruntime session over a model, run on several feeds."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.sess = ort_oracle.session(model)

    def run(self, feeds: dict[str, np.ndarray]) -> list[np.ndarray] | None:
        """The outputs, or None when onnxruntime rejects the feeds."""
        try:
            return [np.asarray(v) for v in self.sess.run(None, feeds)]
        except Exception:
            return None
