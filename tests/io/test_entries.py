"""io/entries.py: value_info entries go back into their own scope, never into a sibling's.

The two branches of an If may each define a tensor of the same name (optimum's merged decoders
do, and onnx's shape inference then writes an entry for it in each branch): two values, whose
types may differ. Fuzzer seed 171, case 1357: optimize folded one branch's tensor away and
restored its entry (a scalar) into the other branch, where the tensor of that name is
``[batch, seq, 32]``; onnxruntime refused the written model.
"""

from __future__ import annotations

import collections
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.io.entries import restore_entries, saved_entries
from shapeinfer.passes import optimize_with_report

MERGED = Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx"


def _branch(name: str, node: onnx.NodeProto, entry: onnx.ValueInfoProto) -> onnx.GraphProto:
    g = h.make_graph([node], name, [], [h.make_tensor_value_info(node.output[0], T.FLOAT, None)])
    g.value_info.append(entry)
    return g


def _if_model() -> onnx.ModelProto:
    """An If whose branches both define ``t``: a float ``[2]`` in one, an int64 scalar in the other."""
    then = _branch("then", h.make_node("Relu", ["x"], ["t"]), h.make_tensor_value_info("t", T.FLOAT, [2]))
    other = _branch("else", h.make_node("Neg", ["x"], ["t"]), h.make_tensor_value_info("t", T.INT64, []))
    other.value_info[0].doc_string = "else's"
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _entries(g: onnx.GraphProto) -> list[tuple[str, str]]:
    return [(vi.name, vi.doc_string) for vi in g.value_info]


def _branches(m: onnx.ModelProto) -> dict[str, onnx.GraphProto]:
    return {a.name: a.g for a in m.graph.node[0].attribute}


def test_each_branch_gets_its_own_entry_back():
    m = _if_model()
    saved = saved_entries(m)
    for g in _branches(m).values():
        del g.value_info[:]  # as the passes do
    restore_entries(m, saved)
    branches = _branches(m)
    assert [vi.type.tensor_type.elem_type for vi in branches["then_branch"].value_info] == [T.FLOAT]
    assert _entries(branches["else_branch"]) == [("t", "else's")]


def test_an_entry_whose_tensor_is_gone_from_its_branch_goes():
    m = _if_model()
    saved = saved_entries(m)
    branches = _branches(m)
    for g in branches.values():
        del g.value_info[:]
    branches["then_branch"].node[0].output[0] = "t2"  # a pass replaced then's t
    branches["then_branch"].output[0].name = "t2"
    restore_entries(m, saved)
    assert _entries(branches["then_branch"]) == []
    assert _entries(branches["else_branch"]) == [("t", "else's")]


def _fold_to_then(m: onnx.ModelProto) -> None:
    """What fold-if does at a true condition: the then branch's nodes replace the If."""
    relu = onnx.NodeProto()
    relu.CopyFrom(_branches(m)["then_branch"].node[0])
    del m.graph.node[:]
    m.graph.node.extend([relu, h.make_node("Identity", ["t"], ["y"])])


def test_an_entry_follows_its_tensor_when_the_if_is_folded_into_the_graph_holding_it():
    m = _if_model()
    del _branches(m)["else_branch"].value_info[:]
    saved = saved_entries(m)
    _fold_to_then(m)
    restore_entries(m, saved)
    assert [(vi.name, vi.type.tensor_type.elem_type) for vi in m.graph.value_info] == [("t", T.FLOAT)]


def test_entries_of_both_branches_that_differ_do_not_follow_a_folded_if():
    """Which branch's ``t`` is left is not known from the entries: none is put back."""
    m = _if_model()
    saved = saved_entries(m)
    _fold_to_then(m)
    restore_entries(m, saved)
    assert _entries(m.graph) == []


def test_entries_of_both_branches_that_are_the_same_follow_a_folded_if_once():
    m = _if_model()
    branches = _branches(m)
    branches["else_branch"].value_info[0].CopyFrom(branches["then_branch"].value_info[0])
    saved = saved_entries(m)
    _fold_to_then(m)
    restore_entries(m, saved)
    assert [(vi.name, vi.type.tensor_type.elem_type) for vi in m.graph.value_info] == [("t", T.FLOAT)]


@pytest.mark.parametrize("bind", [None, {"batch_size": 2}])
def test_optimize_of_a_merged_decoder_typed_by_onnx_keeps_entries_in_their_branches(bind):
    """gpt2's merged decoder after onnx's shape inference (entries of the same names in both
    branches): each graph of the written model holds at most one entry per name, of a tensor
    it defines, and onnxruntime loads it."""
    ort = pytest.importorskip("onnxruntime")
    m = onnx.shape_inference.infer_shapes(onnx.load(str(MERGED)))
    out, _ = optimize_with_report(m, bind=bind)

    def check(g: onnx.GraphProto) -> None:
        names = collections.Counter(vi.name for vi in g.value_info)
        assert [n for n, k in names.items() if k > 1] == []
        defined = {vi.name for vi in g.input} | {t.name for t in g.initializer}
        defined |= {o for n in g.node for o in n.output}
        assert set(names) <= defined
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    check(a.g)

    check(out.graph)
    ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])


def test_an_entry_stays_in_its_branch_when_a_pass_renames_the_if():
    """The scope of a branch is named by the If's first output, which a pass may rename (the
    Identity after it removed: the If makes `z` now): an entry of a name the model defines once
    went with the old scope (the diff review); it follows its tensor."""
    then = h.make_graph(
        [h.make_node("Relu", ["x"], ["t"]), h.make_node("Neg", ["t"], ["o1"])],
        "then",
        [],
        [h.make_tensor_value_info("o1", T.FLOAT, [2])],
    )
    then.value_info.append(h.make_tensor_value_info("t", T.FLOAT, [2]))
    then.value_info[0].doc_string = "keep me"
    other = h.make_graph(
        [h.make_node("Sigmoid", ["x"], ["u"]), h.make_node("Neg", ["u"], ["o2"])],
        "else",
        [],
        [h.make_tensor_value_info("o2", T.FLOAT, [2])],
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other), h.make_node("Identity", ["y"], ["z"])],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("z", T.FLOAT, [2])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    out, _ = optimize_with_report(m)
    assert [(n.op_type, list(n.output)) for n in out.graph.node] == [("If", ["z"])]
    kept = _branches(out)["then_branch"].value_info
    assert [(vi.name, vi.doc_string) for vi in kept if vi.name == "t"] == [("t", "keep me")]
