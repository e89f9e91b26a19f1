"""The passes rewrite from what the model computes, never from what its file claims.

Inference takes a declared dim where it knows none (G013: an assumption, said so); a pass that
folded such a dim into a constant would make the written model fail, or compute something else,
wherever the claim is wrong, though its input, which computes the value, runs there. The
control-flow fuzzer (seed 142, case 2635) found it: a TensorFlow GRU whose graph output was
declared ``[unk, 1000, 32]`` had its ReverseSequence lengths folded to 1000, and the optimized
model failed at every size. onnxruntime is the oracle.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.passes import optimize_with_report

ort.set_default_logger_severity(3)


def _claimed_count() -> onnx.ModelProto:
    """x[n] -> NonZero (a count known only at run time) -> its count as a shape for
    ConstantOfShape; a second output, the NonZero result transposed, declared ``[1000, 1]``."""
    idx = numpy_helper.from_array(np.array([1], np.int64), "one")
    g = helper.make_graph(
        [
            helper.make_node("NonZero", ["x"], ["nz"]),
            helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
            helper.make_node("Shape", ["nz"], ["s"]),
            helper.make_node("Gather", ["s", "one"], ["count"]),
            helper.make_node("ConstantOfShape", ["count"], ["w"], value=helper.make_tensor("v", 1, [1], [2.0])),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [
            helper.make_tensor_value_info("t", TensorProto.INT64, [1000, 1]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, None),
        ],
        [idx],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_inference_assumes_a_claimed_number_for_its_value_alone_and_says_so():
    """The claim holds for ``t`` (and what is computed from it) as onnxruntime reads it; the
    values computed before it keep the count unknown: written as ``[1, 1000]``, ``nz`` would
    have onnxruntime fold ``Shape(nz)`` to 1000 in ``shapeinfer MODEL -o``'s output."""
    res = shapeinfer.infer(_claimed_count())
    assert any(d.code == "G013" and d.tensor == "t" for d in res.diagnostics)
    assert res.facts["t"].shape == (1000, 1)
    count = res.facts["nz"].shape[1]
    assert type(count) is not int and res.facts["w"].shape == (count,)


def test_minus_o_writes_no_claim_on_the_values_before_it(tmp_path):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(_claimed_count(), src)
    shapeinfer.open(str(src)).write(str(out))
    a, b = ort.InferenceSession(str(src)), ort.InferenceSession(str(out))
    for x in ([0.0, 1.0, 2.0], [3.0]):
        feeds = {"x": np.array(x, np.float32)}
        for p, q in zip(a.run(None, feeds), b.run(None, feeds)):
            assert p.shape == q.shape and np.array_equal(p, q)


def test_optimize_does_not_fold_a_claimed_dim():
    m = _claimed_count()
    opt, _ = optimize_with_report(m)
    assert any(n.op_type == "NonZero" for n in opt.graph.node)
    a = ort.InferenceSession(m.SerializeToString())
    b = ort.InferenceSession(opt.SerializeToString())
    for x in ([0.0, 1.0, 2.0], [3.0], [0.0, 0.0, 5.0, 0.0, 1.0]):
        feeds = {"x": np.array(x, np.float32)}
        for p, q in zip(a.run(None, feeds), b.run(None, feeds)):
            assert p.shape == q.shape and np.array_equal(p, q)
