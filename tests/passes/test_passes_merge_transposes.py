"""merge-transposes: Transpose pairs compose into one Transpose, or none, with the same bits."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.common import model_path
from support.pass_helpers import model_of, run_pass, vo

from shapeinfer.passes import optimize_with_report
from shapeinfer.passes.merge_transposes import compose
from testkit import ort_oracle

pytest.importorskip("onnxruntime")

DIMS = [2, 3, 4, 5]


def _pair(p, q, extra_reader: bool = False, out_name: str = "y") -> onnx.ModelProto:
    def attrs(perm):
        return {} if perm is None else {"perm": list(perm)}

    nodes = [h.make_node("Transpose", ["x"], ["a"], **attrs(p)), h.make_node("Transpose", ["a"], ["b"], **attrs(q))]
    nodes.append(h.make_node("Neg", ["b"], [out_name]) if out_name != "b" else h.make_node("Identity", ["b"], ["z"]))
    outs = [vo(out_name, T.FLOAT, 4)]
    if out_name == "b":
        outs.append(vo("z", T.FLOAT, 4))
    if extra_reader:
        nodes.append(h.make_node("Relu", ["a"], ["r"]))
        outs.append(vo("r", T.FLOAT, 4))
    return model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, DIMS)], outs)


def _same_bits(a: onnx.ModelProto, b: onnx.ModelProto) -> None:
    x = np.random.default_rng(0).standard_normal(DIMS).astype(np.float32)
    for u, v in zip(ort_oracle.run(a, {"x": x}), ort_oracle.run(b, {"x": x})):
        assert u.shape == v.shape and u.tobytes() == v.tobytes()


def test_compose_is_the_permutation_of_the_pair():
    x = np.arange(120).reshape(DIMS)
    for p in itertools.permutations(range(4)):
        for q in [(0, 2, 1, 3), (3, 2, 1, 0), (1, 2, 3, 0)]:
            assert np.array_equal(x.transpose(p).transpose(q), x.transpose(compose(list(p), list(q))))
    assert compose([0, 1], [0, 1, 2]) is None


@pytest.mark.parametrize("p,q", [((0, 2, 1, 3), (0, 1, 3, 2)), ((1, 2, 3, 0), (2, 0, 1, 3)), (None, (1, 0, 3, 2))])
def test_a_pair_becomes_one_transpose(p, q):
    m = _pair(p, q)
    out, changes = run_pass("merge-transposes", m)
    assert changes["transpose pairs merged"] == 1
    assert [n.op_type for n in out.graph.node] == ["Transpose", "Neg"]
    assert list(out.graph.node[0].input) == ["x"]
    _same_bits(m, out)


@pytest.mark.parametrize("p,q", [((0, 2, 1, 3), (0, 2, 1, 3)), ((1, 2, 3, 0), (3, 0, 1, 2)), (None, None)])
def test_a_pair_that_undoes_itself_goes(p, q):
    m = _pair(p, q)
    out, changes = run_pass("merge-transposes", m)
    assert changes["transpose pairs removed"] == 1
    assert [(n.op_type, list(n.input)) for n in out.graph.node] == [("Neg", ["x"])]
    _same_bits(m, out)


def test_a_first_transpose_read_elsewhere_stays():
    m = _pair((0, 2, 1, 3), (0, 1, 3, 2), extra_reader=True)
    out, changes = run_pass("merge-transposes", m)
    assert not changes  # merging would remove no node
    m = _pair((0, 2, 1, 3), (0, 2, 1, 3), extra_reader=True)
    out, changes = run_pass("merge-transposes", m)
    assert changes["transpose pairs removed"] == 1
    assert [n.op_type for n in out.graph.node] == ["Transpose", "Neg", "Relu"]
    _same_bits(m, out)


def test_a_graph_output_keeps_its_name():
    m = _pair((0, 2, 1, 3), (0, 2, 1, 3), out_name="b")
    out, changes = run_pass("merge-transposes", m)
    assert not changes  # b would be the graph input x: both Transposes stay
    relu = h.make_node("Relu", ["x"], ["x1"])
    m.graph.node[0].input[0] = "x1"
    m.graph.node.insert(0, relu)
    out, changes = run_pass("merge-transposes", m)
    assert changes["transpose pairs removed"] == 1
    assert [(n.op_type, list(n.output)) for n in out.graph.node] == [("Relu", ["b"]), ("Identity", ["z"])]
    assert [o.name for o in out.graph.output] == ["b", "z"]
    _same_bits(m, out)


@pytest.mark.parametrize("name", ["vit_dynamo", "bert_dynamo"])
def test_attention_transposes_merge_with_the_same_bits(name):
    original = onnx.load(str(model_path(name)))
    from shapeinfer.passes import DEFAULT_PASSES

    before, _ = optimize_with_report(original, passes=[p for p in DEFAULT_PASSES if p != "merge-transposes"])
    out, rep = optimize_with_report(original)
    assert next(p for p in rep.passes if p.name == "merge-transposes").changes["transpose pairs merged"] == 4
    count = lambda m: sum(n.op_type == "Transpose" for n in m.graph.node)  # noqa: E731
    assert count(out) == count(before) - 4 and len(out.graph.node) == len(before.graph.node) - 4
    feeds = ort_oracle.feeds(original, {"batch": 2, "seq": 7}, seed=1)
    for a, b in zip(ort_oracle.run(original, feeds), ort_oracle.run(out, feeds)):
        assert a.tobytes() == b.tobytes()
