"""Reshape and Shape exactly to their specs: ONNX's documented cases, OpenVINO's examples,
symbolic targets, every error, and version selection from the model's opset import."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.op_oracle import Runtime, one_node

import shapeinfer
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.ops.reshape import onednn_dynamic_reshape, openvino_reshape, reshape_dims
from shapeinfer.inference.ops.shape import shape_slice
from shapeinfer.symbolic import dims as D

b, s = D.sym("batch"), D.sym("seq")

# --------------------------------------------------------------------------- the pure rule

# The examples of the ONNX Reshape operator documentation (input [2, 3, 4] unless noted).
ONNX_RESHAPE_DOC = [
    ("reordered_all_dims", (2, 3, 4), [4, 2, 3], False, (4, 2, 3)),
    ("reordered_last_dims", (2, 3, 4), [2, 4, 3], False, (2, 4, 3)),
    ("reduced_dims", (2, 3, 4), [2, 12], False, (2, 12)),
    ("extended_dims", (2, 3, 4), [2, 3, 2, 2], False, (2, 3, 2, 2)),
    ("one_dim", (2, 3, 4), [24], False, (24,)),
    ("negative_dim", (2, 3, 4), [2, -1, 2], False, (2, 6, 2)),
    ("negative_extended_dims", (2, 3, 4), [-1, 2, 3, 4], False, (1, 2, 3, 4)),
    ("zero_dim", (2, 3, 4), [2, 0, 4, 1], False, (2, 3, 4, 1)),
    ("zero_and_negative_dim", (2, 3, 4), [2, 0, 1, -1], False, (2, 3, 1, 4)),
    ("allowzero_reordered", (0, 3, 4), [3, 4, 0], True, (3, 4, 0)),
]


@pytest.mark.parametrize("name,data,target,allowzero,expected", ONNX_RESHAPE_DOC, ids=[c[0] for c in ONNX_RESHAPE_DOC])
def test_onnx_reshape_doc_examples(name, data, target, allowzero, expected):
    assert reshape_dims(data, target, zero_copies=not allowzero) == expected


# OpenVINO opset1 Reshape's five documented examples (checked against openvino's own shape
# inference when the table was written).
OPENVINO_EXAMPLES = [
    ((2, 5, 5, 0), [0, 4], False, (0, 4)),  # empty tensor, 0 taken literally
    ((2, 5, 5, 24), [0, -1, 4], True, (2, 150, 4)),
    ((2, 2, 3), [0, 0, 1, -1], True, (2, 2, 1, 3)),
    ((2, 5, 5, 24), [-1, 0, 4], True, (60, 5, 4)),
    ((3, 1, 1), [0, -1], True, (3, 1)),
]


@pytest.mark.parametrize("data,pattern,special_zero,expected", OPENVINO_EXAMPLES)
def test_openvino_reshape_examples(data, pattern, special_zero, expected):
    assert openvino_reshape(data, pattern, special_zero) == expected
    assert onednn_dynamic_reshape(data, pattern, special_zero) == expected


def test_empty_target_is_scalar():
    assert reshape_dims((1, 1, 1), [], True) == ()
    with pytest.raises(InferenceError) as e:
        reshape_dims((2, 1), [], True)
    assert e.value.code == "R004"


def test_symbolic_targets():
    assert reshape_dims((b, s, 768), [0, 0, 12, 64], True) == (b, s, 12, 64)
    assert reshape_dims((b, s, 12, 64), [0, 0, -1], True) == (b, s, 768)
    assert reshape_dims((b * s, 768), [b, -1, 768], True) == (b, s, 768)
    assert reshape_dims((b, s, 768), [-1, 768], True) == (b * s, 768)
    assert reshape_dims((b, s, 768), [0, -1, 64], True) == (b, 12 * s, 64)


def test_symbolic_minus_one_not_provably_exact_is_the_floor_quotient():
    # seq*7 / 2 is exact wherever the model runs (seq even), so the dim is (7*seq)//2.
    assert reshape_dims((s, 7), [2, -1], True) == (2, (7 * s) // 2)
    assert D.evaluate(reshape_dims((s, 7), [2, -1], True)[1], {"seq": 4}) == 14


@pytest.mark.parametrize(
    "data,target,zero_copies,code",
    [
        ((2, 3, 4), [-1, -1, 4], True, "R001"),
        ((0, 3, 4), [0, -1], False, "R002"),
        ((2, 3), [2, 3, 0], True, "R003"),
        ((2, 3, 4), [5, 5], True, "R004"),
        ((2, 3, 4), [5, -1], True, "R004"),
        ((b, s, 768), [0, 0, 13, 64], True, "R004"),
        ((2, 3, 4), [2, -2, 12], True, "R005"),
        ((2**40, 2**40), [2**40, 2**40, 0], False, "R004"),
        ((3,), [2**62, 2**62, -1], True, "R004"),
    ],
)
def test_reshape_errors(data, target, zero_copies, code):
    with pytest.raises(InferenceError) as e:
        reshape_dims(data, target, zero_copies)
    assert e.value.code == code
    assert e.value.message


def test_literal_zero_with_allowzero():
    assert reshape_dims((0, 3, 4), [3, 4, 0], False) == (3, 4, 0)
    assert reshape_dims((2, 3, 4), [2, 0, 4], True) == (2, 3, 4)


@pytest.mark.parametrize(
    "rank,start,end,expected",
    [
        (3, 0, None, (0, 3, False)),
        (3, 1, None, (1, 3, False)),
        (3, 0, 1, (0, 1, False)),
        (3, -1, None, (2, 3, False)),
        (3, 0, -1, (0, 2, False)),
        (3, 1, -1, (1, 2, False)),
        (3, 1, 2, (1, 2, False)),
        (3, -10, None, (0, 3, True)),  # clip_start
        (3, 0, 10, (0, 3, True)),  # clip_end: end=10 on rank 3 gives all three
        (3, 2, 1, (2, 1, False)),  # start_greater_than_end: empty
    ],
)
def test_shape_slice(rank, start, end, expected):
    assert shape_slice(rank, start, end) == expected


# --------------------------------------------------------------------------- onnx's own cases


def _onnx_cases(prefix: str):
    from onnx.backend.test.case.node import collect_testcases

    return [c for c in collect_testcases() if c.name.startswith(prefix)]


def _constify(case) -> onnx.ModelProto:
    """The case's model with its integer inputs turned into initializers holding the test data."""
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    ins, _ = case.data_sets[0]
    keep = []
    for vi, arr in zip(list(m.graph.input), ins):
        if np.asarray(arr).dtype.kind in "iu":
            m.graph.initializer.append(numpy_helper.from_array(np.asarray(arr), vi.name))
        else:
            keep.append(vi)
    del m.graph.input[:]
    m.graph.input.extend(keep)
    del m.graph.value_info[:]
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    return m


@pytest.mark.parametrize("case", _onnx_cases("test_reshape_"), ids=lambda c: c.name)
def test_onnx_reshape_conformance_cases(case):
    _, outs = case.data_sets[0]
    r = shapeinfer.infer(_constify(case))
    out = case.model.graph.output[0].name
    assert r.facts[out].shape == tuple(outs[0].shape)
    assert not [d for d in r.diagnostics if d.severity == "error"]


@pytest.mark.parametrize("case", _onnx_cases("test_shape"), ids=lambda c: c.name)
def test_onnx_shape_conformance_cases(case):
    _, outs = case.data_sets[0]
    m = _constify(case)
    r = shapeinfer.infer(m)
    f = r.facts[case.model.graph.output[0].name]
    assert f.shape == tuple(outs[0].shape)
    assert f.value == tuple(int(v) for v in outs[0].reshape(-1))
    assert f.dtype == TensorProto.INT64


# --------------------------------------------------------------------------- in a graph


def _model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def test_reshape_target_from_shape_arithmetic():
    """[batch*seq, 768] reshaped by [batch, -1, 768] where batch comes from Shape(x)."""
    nodes = [
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Gather", ["sx", "zero"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"]),
        helper.make_node("Concat", ["b1", "minus1_768"], ["target"], axis=0),
        helper.make_node("Reshape", ["flat", "target"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([-1, 768], np.int64), "flat_shape"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
        numpy_helper.from_array(np.array([-1, 768], np.int64), "minus1_768"),
    ]
    m = _model(nodes, [_vi("x", ["batch", "seq", 768])], [_vi("y", None)], 17, inits)
    r = shapeinfer.infer(m)
    assert r.dims("flat") == (b * s, 768)
    assert r.facts["target"].value == (b, -1, 768)
    assert r.dims("y") == (b, s, 768)
    assert not r.fresh_symbols


def test_reshape_v1_attribute_form_ignores_consumed_inputs():
    node = helper.make_node("Reshape", ["x"], ["y"], shape=[0, -1], consumed_inputs=[0])
    m = _model([node], [_vi("x", ["batch", 3, 4])], [_vi("y", None)], 4)
    r = shapeinfer.infer(m)
    assert r.dims("y") == (b, 12)


def test_reshape_version_from_opset_import():
    """At opset 4 a Reshape with a second input still reads the attribute (Reshape-1)."""
    init = numpy_helper.from_array(np.array([6, 4], np.int64), "t")
    node = helper.make_node("Reshape", ["x"], ["y"], shape=[4, 6])
    m = _model([node], [_vi("x", [2, 3, 4])], [_vi("y", None)], 4, [init])
    assert shapeinfer.infer(m).dims("y") == (4, 6)
    node5 = helper.make_node("Reshape", ["x", "t"], ["y"])
    m5 = _model([node5], [_vi("x", [2, 3, 4])], [_vi("y", None)], 5, [init])
    assert shapeinfer.infer(m5).dims("y") == (6, 4)


@pytest.mark.parametrize("opset,expected", [(13, (0, 3)), (14, None)])
def test_allowzero_only_from_14(opset, expected):
    init = numpy_helper.from_array(np.array([0, 3], np.int64), "t")
    node = helper.make_node("Reshape", ["x", "t"], ["y"], allowzero=1)
    m = _model([node], [_vi("x", [0, 3])], [_vi("y", None)], opset, [init])
    r = shapeinfer.infer(m)
    if expected is None:  # allowzero=1: 0 is literal -> [0, 3] from [0, 3]
        assert r.dims("y") == (0, 3)
    else:  # before 14 the attribute does not exist: 0 copies
        assert r.dims("y") == expected


def test_reshape_error_becomes_diagnostic_not_exception():
    init = numpy_helper.from_array(np.array([-1, -1], np.int64), "t")
    node = helper.make_node("Reshape", ["x", "t"], ["y"], name="bad")
    m = _model([node], [_vi("x", [2, 3])], [_vi("y", None)], 17, [init])
    r = shapeinfer.infer(m)
    errs = [d for d in r.diagnostics if d.severity == "error"]
    assert [(d.code, d.node, d.op_type) for d in errs] == [("R001", "bad", "Reshape")]


def test_shape_start_end_version_selection():
    node = helper.make_node("Shape", ["x"], ["y"], start=1, end=-1)
    for opset, dims, codes in [(13, (b, s, 4), ["S001"]), (15, (s,), [])]:
        m = _model([node], [_vi("x", ["batch", "seq", 4])], [_vi("y", None, TensorProto.INT64)], opset)
        r = shapeinfer.infer(m)
        assert r.facts["y"].value == dims
        assert [d.code for d in r.diagnostics] == codes


def test_shape_clamping_diagnostics():
    node = helper.make_node("Shape", ["x"], ["y"], start=-10, end=10)
    m = _model([node], [_vi("x", ["batch", "seq", 4])], [_vi("y", None, TensorProto.INT64)], 21)
    r = shapeinfer.infer(m)
    assert r.facts["y"].value == (b, s, 4)
    assert [d.code for d in r.diagnostics] == ["S002"]
    node = helper.make_node("Shape", ["x"], ["y"], start=2, end=1)
    m = _model([node], [_vi("x", ["batch", "seq", 4])], [_vi("y", None, TensorProto.INT64)], 21)
    r = shapeinfer.infer(m)
    assert r.dims("y") == (0,) and r.facts["y"].value == ()
    assert [d.code for d in r.diagnostics] == ["S003"]


def test_element_counts_equal_only_at_one_size_are_a_guard() -> None:
    """x[b, 16] reshaped to the constant [2, 8, 2] runs only where 16*b == 32 (onnxruntime
    refuses any other b): the output dims are the target's, and the guard says where."""
    model = one_node("Reshape", [("x", TensorProto.FLOAT, ["b", 16])], consts={"t": np.array([2, 8, 2], np.int64)})
    rt = Runtime(model)
    runs = {b for b in (1, 2, 3, 4) if rt.run({"x": np.zeros((b, 16), np.float32)}) is not None}
    assert runs == {2}
    r = shapeinfer.infer(model)
    assert r.dims("y0") == (2, 8, 2)
    assert [(g.kind, str(g.lhs), g.rhs) for g in r.guards()] == [("equality", "16*b", 32)]


def _target_from_size(entry_nodes: list, allowzero: int | None = None, width: int = 3) -> onnx.ModelProto:
    """x[n, width] reshaped to [e, -1], e computed from n by ``entry_nodes`` (output "e")."""
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([-1], np.int64), "m1"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([2], np.int64), "two"),
    ]
    extra = {} if allowzero is None else {"allowzero": allowzero}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"]),
        *entry_nodes,
        helper.make_node("Concat", ["e", "m1"], ["t"], axis=0),
        helper.make_node("Reshape", ["x", "t"], ["y"], **extra),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    "name,entry,allowzero",
    [
        ("half", [helper.make_node("Div", ["n", "two"], ["e"])], None),
        ("minus_one", [helper.make_node("Sub", ["n", "one"], ["e"])], None),
        ("minus_two_allowzero", [helper.make_node("Sub", ["n", "two"], ["e"])], 1),
    ],
)
def test_a_target_entry_that_may_be_zero_or_minus_one_is_read_as_the_runtime_reads_it(name, entry, allowzero):
    """A target entry computed from the size, ``n//2``, is 0 at n = 1, where Reshape copies the
    input dim instead (allowzero 0), and ``n - 2`` is -1 at n = 1, where it is inferred: the
    dims were the literal entries, wrong at n = 1 (the guard "(3*n) % (n//2) == 0" failing
    there too; the op sweep). The literal reading is a soft guard now, and the dims where it
    fails are the exact forms: onnxruntime's shapes at n = 1 to 12, and no guard fails where
    it runs."""
    from shapeinfer.symbolic.guards import check

    ort = pytest.importorskip("onnxruntime")
    m = _target_from_size(entry, allowzero)
    result = shapeinfer.infer(m)
    dims = result.dims("y")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(1, 13):
        try:
            (y,) = sess.run(None, {"x": np.zeros((n, 3), np.float32)})
        except Exception:
            continue  # (n - 2 < -1 never happens here; a failing size has nothing to compare)
        assert all(check(g, {"n": n}) for g in result.guards()), (n, [g.text for g in result.guards()])
        for d, actual in zip(dims, y.shape, strict=True):  # a fresh symbol is unknown: never wrong
            if D.symbols(d) <= {"n"}:
                assert D.evaluate(d, {"n": n}) == actual, (n, [D.format(d) for d in dims])
    # where 0 copies the input dim the exact form is known; an entry beside the target's -1 is
    # at least 0 where onnxruntime runs (it refuses a second -1), so with allowzero it is too
    assert all(D.symbols(d) <= {"n"} for d in dims)
