"""canonicalize-reshape on onnx.helper models: computed shape inputs become constants or Shape slices."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.pass_helpers import i64, model_of, vo

from shapeinfer.passes import PassContext, run_pass
from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")

BINDINGS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 11}]
INT64_MAX = 2**63 - 1


def canon(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict]:
    out, changes = run_pass("canonicalize-reshape", model, PassContext())
    out, _ = run_pass("dce", out, PassContext())
    return out, changes


def assert_same_outputs(a: onnx.ModelProto, b: onnx.ModelProto) -> None:
    for binding in BINDINGS:
        ort_oracle.assert_same_outputs(a, b, ort_oracle.feeds(a, binding))


def input_value(model: onnx.ModelProto, op: str, index: int) -> np.ndarray | None:
    """The constant value feeding input ``index`` of the (only) ``op`` node, or None."""
    node = next(n for n in model.graph.node if n.op_type == op)
    name = node.input[index]
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    return None


def shape_chain(x: str, axes: list[int], tag: str) -> tuple[list, list[str]]:
    """Shape(x) -> Gather(axis) -> Unsqueeze for each axis: the classic exporter chain."""
    nodes = [h.make_node("Shape", [x], [f"{tag}_s"])]
    outs = []
    for a in axes:
        nodes.append(h.make_node("Gather", [f"{tag}_s", f"idx{a}"], [f"{tag}_g{a}"], axis=0))
        nodes.append(h.make_node("Unsqueeze", [f"{tag}_g{a}", "ax0"], [f"{tag}_u{a}"]))
        outs.append(f"{tag}_u{a}")
    return nodes, outs


SCALARS = [numpy_helper.from_array(np.array(a, np.int64), f"idx{a}") for a in range(4)] + [i64("ax0", [0])]


def test_reshape_target_from_shape_chain_becomes_0_copies_and_ints():
    nodes, (ub, us) = shape_chain("x", [0, 1], "c")
    nodes += [
        h.make_node("Concat", [ub, us, "c4", "c16"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 64])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 4)], [*SCALARS, i64("c4", [4]), i64("c16", [16])])
    out, changes = canon(m)
    assert changes["made constant"] == 1
    # batch and seq are the input's dims at the same index: 0 copies them; 4 and 16 are ints.
    np.testing.assert_array_equal(input_value(out, "Reshape", 1), [0, 0, 4, 16])
    assert [n.op_type for n in out.graph.node] == ["Reshape"]
    assert_same_outputs(m, out)


def test_reshape_target_computed_by_arithmetic_gets_one_minus_one():
    nodes, (ub, us) = shape_chain("x", [0, 1], "c")
    nodes += [
        h.make_node("Mul", [ub, us], ["bs"]),
        h.make_node("Concat", ["bs", "c64"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 64])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 2)], [*SCALARS, i64("c64", [64])])
    out, _ = canon(m)
    np.testing.assert_array_equal(input_value(out, "Reshape", 1), [-1, 64])
    assert len(out.graph.node) == 1
    assert_same_outputs(m, out)


def unflatten_model() -> onnx.ModelProto:
    """x ``[bs, 64]`` reshaped to ``[batch, seq, 4, 16]``, batch and seq gathered from ids' Shape."""
    nodes, (ub, us) = shape_chain("ids", [0, 1], "c")
    nodes += [
        h.make_node("Concat", [ub, us, "c4", "c16"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    ids = h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"])
    x = h.make_tensor_value_info("x", T.FLOAT, ["bs", 64])
    return model_of(nodes, [ids, x], [vo("y", T.FLOAT, 4)], [*SCALARS, i64("c4", [4]), i64("c16", [16])])


def test_reshape_needing_two_runtime_dims_is_rebuilt_from_a_shape_slice():
    # [batch*seq, 64] back to [batch, seq, 4, 16]: batch and seq are not dims of the input;
    # one can be -1, the other must be read at runtime, from a tensor that has it.
    m = unflatten_model()
    out, changes = canon(m)
    assert changes["rebuilt from Shape slices"] == 1
    ops = [n.op_type for n in out.graph.node]
    assert "Gather" not in ops and "Unsqueeze" not in ops
    shapes = [n for n in out.graph.node if n.op_type == "Shape"]
    assert len(shapes) == 1 and shapes[0].input[0] == "ids"
    assert ops.count("Concat") == 1 and ops.count("Reshape") == 1

    for b in BINDINGS:
        f = ort_oracle.feeds(m, {**b, "bs": b["batch"] * b["seq"]})
        (a,), (c,) = ort_oracle.run(m, f), ort_oracle.run(out, f)
        assert a.shape == c.shape == (b["batch"], b["seq"], 4, 16)
        np.testing.assert_array_equal(a, c)


def test_expand_target_gets_ones_where_the_input_has_the_dim():
    nodes, (ub,) = shape_chain("x", [0], "c")
    nodes += [
        h.make_node("Concat", [ub, "c4", "c64"], ["target"], axis=0),
        h.make_node("Expand", ["x", "target"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 1, 64])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 3)], [*SCALARS, i64("c4", [4]), i64("c64", [64])])
    out, _ = canon(m)
    np.testing.assert_array_equal(input_value(out, "Expand", 1), [1, 4, 1])
    assert [n.op_type for n in out.graph.node] == ["Expand"]
    assert_same_outputs(m, out)


def test_slice_end_equal_to_the_dim_becomes_int64_max_and_range_limit_a_shape_slice():
    nodes, (us,) = shape_chain("x", [1], "c")
    nodes += [
        h.make_node("Slice", ["x", "zero", us, "one"], ["y"]),
        h.make_node("Squeeze", [us, "ax0"], ["n"]),
        h.make_node("Range", ["zs", "n", "os"], ["r"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])
    outs = [vo("y", T.FLOAT, 2), vo("r", T.INT64, 1)]
    inits = [*SCALARS, i64("zero", [0]), i64("one", [1])]
    inits += [
        numpy_helper.from_array(np.array(0, np.int64), "zs"),
        numpy_helper.from_array(np.array(1, np.int64), "os"),
    ]
    m = model_of(nodes, [x], outs, inits)
    out, changes = canon(m)
    assert changes["Slice inputs rewritten"] == 1 and changes["Range inputs rewritten"] == 1
    np.testing.assert_array_equal(input_value(out, "Slice", 2), [INT64_MAX])
    # The Range limit is seq, a scalar: Shape(x, 1, 2) squeezed, nothing else.
    ops = sorted(n.op_type for n in out.graph.node)
    assert ops == ["Range", "Shape", "Slice", "Squeeze"]
    shape = next(n for n in out.graph.node if n.op_type == "Shape")
    attrs = {a.name: a.i for a in shape.attribute}
    assert attrs == {"start": 1, "end": 2}
    assert_same_outputs(m, out)


def test_constant_targets_and_unknown_values_are_left_alone():
    # Target already an initializer; Expand target computed from data (values unknown).
    nodes = [
        h.make_node("Reshape", ["x", "t"], ["y"]),
        h.make_node("Ceil", ["f"], ["fc"]),
        h.make_node("Cast", ["fc"], ["shape"], to=T.INT64),
        h.make_node("Expand", ["x", "shape"], ["z"]),
    ]
    ins = [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4]), h.make_tensor_value_info("f", T.FLOAT, [2])]
    outs = [vo("y", T.FLOAT, 3), vo("z", T.FLOAT, 2)]
    m = model_of(nodes, ins, outs, [i64("t", [0, 2, 2])])
    out, changes = run_pass("canonicalize-reshape", m, PassContext())
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_already_canonical_rebuilt_target_is_a_fixpoint():
    once, _ = canon(unflatten_model())
    twice, changes = run_pass("canonicalize-reshape", once, PassContext())
    assert not any(changes.values())
    assert twice.SerializeToString() == once.SerializeToString()


def shape_like_nodes(model: onnx.ModelProto) -> list[str]:
    """Ops of the nodes computing shape values (everything but the data ops these tests use)."""
    return sorted(n.op_type for n in model.graph.node if n.op_type not in ("Reshape", "Expand", "Relu", "Add"))


def test_a_target_equal_to_an_earlier_one_reads_it_instead_of_a_shape_of_its_own():
    # torch.export's BERT: the first head split builds [batch, seq, 4, 16] from the ids' Shape,
    # the next ones read Shape(view) (the same values) again (allowzero: 0 cannot copy dims).
    nodes = [
        h.make_node("Shape", ["ids"], ["bs"], end=2),
        h.make_node("Concat", ["bs", "heads"], ["t1"], axis=0),
        h.make_node("Reshape", ["x", "t1"], ["v"], allowzero=1),
        h.make_node("Shape", ["v"], ["t2"], end=4),
        h.make_node("Relu", ["xf"], ["r"]),
        h.make_node("Reshape", ["r", "t2"], ["w"], allowzero=1),
    ]
    ins = [
        h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"]),
        h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 64]),
        h.make_tensor_value_info("xf", T.FLOAT, ["bs", 64]),
    ]
    m = model_of(nodes, ins, [vo("v", T.FLOAT, 4), vo("w", T.FLOAT, 4)], [i64("heads", [4, 16])])
    out, changes = canon(m)
    assert changes["rebuilt from Shape slices"] == 1 and changes["nodes created"] == 0
    assert shape_like_nodes(out) == ["Concat", "Shape"]
    reshapes = [n for n in out.graph.node if n.op_type == "Reshape"]
    assert reshapes[0].input[1] == reshapes[1].input[1]
    for b in BINDINGS:
        f = ort_oracle.feeds(m, {**b, "bs": b["batch"] * b["seq"]})
        for a, c in zip(ort_oracle.run(m, f), ort_oracle.run(out, f)):
            assert a.shape == c.shape
            np.testing.assert_array_equal(a, c)
    _, changes = run_pass("canonicalize-reshape", out, PassContext())
    assert not any(changes.values())


def test_targets_of_different_tensors_share_one_shape_root_on_a_graph_input():
    # Each Expand reads the Shape of its own tensor; both are [batch, seq], like the ids'.
    nodes = [
        h.make_node("Shape", ["ids"], ["s0"]),
        h.make_node("Expand", ["one", "s0"], ["e0"]),
        h.make_node("Add", ["e0", "e0"], ["a"]),
        h.make_node("Shape", ["a"], ["s1"]),
        h.make_node("Expand", ["two", "s1"], ["e1"]),
        h.make_node("Add", ["a", "e1"], ["y"]),
    ]
    ins = [h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"])]
    consts = [
        numpy_helper.from_array(np.ones((1, 1), np.float32), "one"),
        numpy_helper.from_array(np.full((1, 1), 2, np.float32), "two"),
    ]
    m = model_of(nodes, ins, [vo("y", T.FLOAT, 2)], consts)
    out, changes = canon(m)
    assert changes["Expand inputs rewritten"] == 1
    assert shape_like_nodes(out) == ["Shape"]
    shape = next(n for n in out.graph.node if n.op_type == "Shape")
    assert shape.input[0] == "ids"
    assert_same_outputs(m, out)


def test_a_rebuild_that_frees_nothing_is_not_taken():
    # The Expand target is also a graph output: rebuilding it from Shape(x) would add a node and
    # free none, so the graph is left as it is.
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Add", ["s", "zeros"], ["t"]),
        h.make_node("Expand", ["one", "t"], ["y"]),
    ]
    ins = [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])]
    consts = [i64("zeros", [0, 0]), numpy_helper.from_array(np.ones((1, 1), np.float32), "one")]
    m = model_of(nodes, ins, [vo("y", T.FLOAT, 2), vo("t", T.INT64, 1)], consts)
    out, changes = run_pass("canonicalize-reshape", m, PassContext())
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_a_rebuilt_shape_reads_no_activation_that_no_shape_read_before():
    """``Expand(bias[1, 4], Concat(Shape(x)[0:1], [4]))`` beside ``Relu(Conv(x))``: the Conv's
    output ``c`` carries ``[batch, 4]`` at its front, one Shape slice where ``x`` needs a slice
    and a Concat. Read there, ``c`` gets a second reader, which keeps onnxruntime from fusing
    the Conv with its Relu (and in its NCHWc layout costs a full conversion of ``c`` to read a
    shape: PaddleOCR's recogniser ran 7 % slower). The rebuild reads the graph input instead."""
    rng = np.random.default_rng(0)
    nodes = [
        h.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c"], ["y"]),
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "idx0"], ["b"], axis=0),
        h.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
        h.make_node("Concat", ["bu", "four"], ["t"], axis=0),
        h.make_node("Expand", ["bias", "t"], ["z"]),
    ]
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((1, 4)).astype(np.float32), "bias"),
        i64("idx0", 0),
        i64("ax0", [0]),
        i64("four", [4]),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 8, "seq"])],
        [vo("y", T.FLOAT, 4), vo("z", T.FLOAT, 2)],
        inits,
    )
    out, changes = canon(m)
    assert changes["rebuilt from Shape slices"] == 1
    assert [n.input[0] for n in out.graph.node if n.op_type == "Shape"] == ["x"]
    assert_same_outputs(m, out)
