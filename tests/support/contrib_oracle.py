"""Checking contrib-op rules: many single-op cases in one model, inferred on symbolic dims and run
by onnxruntime (one session per family) at several bindings of the symbols.

A :class:`Case` is one node (plus optional helper nodes) with its own graph inputs and
constants; every name is prefixed with the case id so that cases share one model. For ops that
onnxruntime has no CPU kernel for, a case gives the documented output dims as expressions
(``expect``) instead of being run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

F, F16, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
MS = "com.microsoft"
BINDINGS = [{"b": 2, "s": 7, "p": 3, "l": 5, "h": 6, "w": 5}, {"b": 3, "s": 11, "p": 4, "l": 6, "h": 4, "w": 8}]


@dataclass
class Case:
    """One op under test. ``inputs`` are the node's inputs in order ("" for an omitted optional
    one); each is a graph input listed in ``graph_inputs`` ``(name, dtype, dims)`` or a constant in
    ``consts``. ``feeds`` builds a graph input's value from the binding (default: random data of
    its dims). ``outputs`` names the node's outputs ("" for an omitted one). ``open`` lists the
    (output index, axis) pairs allowed to stay unknown. ``expect`` (for ops without a CPU kernel)
    gives each output's documented dims as expression text and its element type."""

    id: str
    op: str
    inputs: list[str]
    graph_inputs: list[tuple[str, int, list]]
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    outputs: list[str] = field(default_factory=lambda: ["y"])
    domain: str = MS
    feeds: dict[str, Callable[[dict, np.random.Generator], np.ndarray]] = field(default_factory=dict)
    open: set = field(default_factory=set)
    expect: list[tuple[int, list[str]]] | None = None
    pre: list[onnx.NodeProto] = field(default_factory=list)
    typed: dict[str, int] = field(default_factory=dict)


def _p(case: Case, name: str) -> str:
    return f"{case.id}__{name}" if name else ""


def build(cases: list[Case], default_opset: int = 17) -> onnx.ModelProto:
    """One model holding every case's nodes, inputs and constants (names prefixed by case id)."""
    nodes, inputs, inits, outputs = [], [], [], []
    for c in cases:
        for n in c.pre:
            m = onnx.NodeProto()
            m.CopyFrom(n)
            m.input[:] = [_p(c, i) for i in n.input]
            m.output[:] = [_p(c, o) for o in n.output]
            nodes.append(m)
        nodes.append(
            helper.make_node(
                c.op, [_p(c, i) for i in c.inputs], [_p(c, o) for o in c.outputs], domain=c.domain, **c.attrs
            )
        )
        inputs += [helper.make_tensor_value_info(_p(c, n), t, d) for n, t, d in c.graph_inputs]
        inits += [numpy_helper.from_array(np.asarray(v), _p(c, k)) for k, v in c.consts.items()]
        for o in c.outputs:
            if o in c.typed:
                outputs.append(helper.make_tensor_value_info(_p(c, o), c.typed[o], None))
            elif o:
                outputs.append(helper.make_empty_tensor_value_info(_p(c, o)))
    graph = helper.make_graph(nodes, "cases", inputs, outputs, inits)
    opsets = [helper.make_opsetid("", default_opset), helper.make_opsetid(MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def _feed(dtype: int, shape: list[int], rng: np.random.Generator) -> np.ndarray:
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    if np.issubdtype(np_type, np.floating):
        return rng.standard_normal(shape).astype(np_type)
    return np.zeros(shape, np_type)


def feeds(cases: list[Case], binding: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for c in cases:
        for name, dtype, dims in c.graph_inputs:
            if name in c.feeds:
                out[_p(c, name)] = c.feeds[name](binding, rng)
            else:
                out[_p(c, name)] = _feed(dtype, [D.evaluate(D.parse(str(d)), binding) for d in dims], rng)
    return out


def _evaluate(d: D.Dim, binding: dict[str, int]) -> int | None:
    try:
        return D.evaluate(d, binding)
    except KeyError:  # a fresh symbol: the dim is unknown
        return None


def check_against_onnxruntime(cases: list[Case], default_opset: int = 17) -> int:
    """Infer the cases' model once and run it in onnxruntime at each of :data:`BINDINGS`: every
    output's rank, dims and element type must match (dims in ``open`` may stay unknown). Returns the
    number of outputs checked."""
    model = build(cases, default_opset)
    r = shapeinfer.infer(model)
    sess = ort_oracle.session(model)
    names = [o.name for o in sess.get_outputs()]
    rng = np.random.default_rng(0)
    checked = 0
    for binding in BINDINGS:
        got = dict(zip(names, sess.run(None, feeds(cases, binding, rng))))
        for c in cases:
            for k, o in enumerate(c.outputs):
                if not o:
                    continue
                actual = got[_p(c, o)]
                f = r.facts[_p(c, o)]
                want_type = helper.np_dtype_to_tensor_dtype(actual.dtype)
                if o in c.typed:  # a type only the model's declaration fixes: unknown or that one
                    assert f.dtype in (0, want_type), (c.id, o, f.dtype, want_type)
                else:
                    assert f.dtype == want_type, (c.id, o, f.dtype, want_type)
                assert f.shape is not None, (c.id, o, "rank left unknown")
                assert len(f.shape) == actual.ndim, (c.id, o, f.shape, actual.shape)
                for axis, (d, w) in enumerate(zip(f.shape, actual.shape)):
                    v = _evaluate(d, binding)
                    if v is None:
                        assert (k, axis) in c.open, (c.id, o, axis, "left open", f.shape, actual.shape)
                    else:
                        assert v == w, (c.id, o, axis, D.format(d), v, w, binding)
                checked += 1
    return checked


def check_against_formula(cases: list[Case], default_opset: int = 17) -> int:
    """For ops onnxruntime cannot run on CPU: every output's inferred dims must equal the
    documented ones (``Case.expect``) at each of :data:`BINDINGS`, and its element type too."""
    model = build(cases, default_opset)
    r = shapeinfer.infer(model)
    checked = 0
    for c in cases:
        assert c.expect is not None and len(c.expect) == len([o for o in c.outputs if o]), c.id
        for o, (dtype, dims) in zip([o for o in c.outputs if o], c.expect):
            f = r.facts[_p(c, o)]
            assert f.dtype == dtype, (c.id, o, f.dtype, dtype)
            assert f.shape is not None and len(f.shape) == len(dims), (c.id, o, f.shape, dims)
            for binding in BINDINGS:
                for axis, (d, want) in enumerate(zip(f.shape, dims)):
                    v = _evaluate(d, binding)
                    if want == "?":  # depends on input values: must stay unknown
                        assert v is None, (c.id, o, axis, D.format(d))
                        continue
                    assert v == D.evaluate(D.parse(want), binding), (c.id, o, axis, D.format(d), want, binding)
            checked += 1
    return checked
