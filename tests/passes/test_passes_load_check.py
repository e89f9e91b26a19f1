"""load_check.strict_error: onnx's strict inference as optimize --bind's safety net, with data
propagation unless a long Range of constants would be materialised by it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from shapeinfer.base import isolated
from shapeinfer.passes import load_check, optimize_with_report


def _range_model(limit: int, as_constant_node: bool = False) -> onnx.ModelProto:
    """The shape of the fuzzer's case (a mutated llama export with a 2**31 mask dim): a Range
    whose limit is a constant (folded from the mask's dim) read by an Add, as positions are."""
    scalars = {"start": 0, "limit": limit, "delta": 1}
    nodes, inits = [], []
    for name, v in scalars.items():
        t = numpy_helper.from_array(np.array(v, np.int64), name)
        if as_constant_node:
            nodes.append(helper.make_node("Constant", [], [name], value=t))
        else:
            inits.append(t)
    nodes += [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Add", ["r", "start"], ["pos"]),
        helper.make_node("Shape", ["x"], ["s"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [
            helper.make_tensor_value_info("pos", TensorProto.INT64, None),
            helper.make_tensor_value_info("s", TensorProto.INT64, None),
        ],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _spy_data_prop(monkeypatch) -> list:
    """The ``data_prop`` of every call to onnx's inference from now on (run in this process)."""
    monkeypatch.setattr(isolated, "ENABLED", False)
    seen: list = []
    real = onnx.shape_inference.infer_shapes

    def spy(m, *a, **k):
        seen.append(k.get("data_prop"))
        return real(m, *a, **k)

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", spy)
    return seen


def _data_prop_used(monkeypatch, model) -> list:
    seen = _spy_data_prop(monkeypatch)
    assert load_check.strict_error(model) is None
    return seen


@pytest.mark.parametrize("constant_node", [False, True])
def test_a_long_constant_range_is_checked_without_data_propagation(monkeypatch, constant_node):
    long = load_check.MAX_PROPAGATED_RANGE + 1
    assert _data_prop_used(monkeypatch, _range_model(long, constant_node)) == [False]


def test_a_short_range_keeps_data_propagation(monkeypatch):
    assert _data_prop_used(monkeypatch, _range_model(8)) == [True]


def _computed_range_model(dim: int) -> onnx.ModelProto:
    """The limit read from a graph input's static dim at run time (fold-shapes makes it a
    constant: only the optimized model has the constant Range)."""
    nodes = [
        helper.make_node("Shape", ["mask"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["limit"], axis=0),
        helper.make_node("Range", ["zero", "limit", "one"], ["r"]),
        helper.make_node("Add", ["r", "zero"], ["pos"]),
        helper.make_node("Shape", ["x"], ["xs"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", dim]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
        ],
        [
            helper.make_tensor_value_info("pos", TensorProto.INT64, None),
            helper.make_tensor_value_info("xs", TensorProto.INT64, None),
        ],
        [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("zero", 0), ("one", 1))],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_optimize_bind_writes_a_model_whose_folded_range_is_long(monkeypatch):
    """Found by tools/fuzz/fuzz_cli.py on a mutated llama export with a 2**31 mask dim: the
    Range limit folded into a constant, onnx's data propagation of the optimized model took
    5 GB and 40 s, then failed, and optimize --bind refused to write ("fails inference
    (std::bad_alloc)"). onnxruntime loads such a model (its constant folding skips the Range).
    Here the Range is just over the cap, so the old check would only have been slow."""
    dim = load_check.MAX_PROPAGATED_RANGE + 1
    seen = _spy_data_prop(monkeypatch)
    out, report = optimize_with_report(_computed_range_model(dim), bind={"batch": 2})
    assert not report.notes
    assert [d.dim_value for d in out.graph.input[1].type.tensor_type.shape.dim] == [2, 3]
    ranges = [n for n in out.graph.node if n.op_type == "Range"]
    assert ranges and not any(n.op_type == "Shape" and n.input[0] == "mask" for n in out.graph.node)
    # the engine's facts know the Range's length in the input too (the limit read from mask's
    # dim): both are checked without data propagation, which would write 65537 dims for the Add
    assert seen and not any(seen)


def _vector_model() -> onnx.ModelProto:
    """issue 23's 3-node model: x[N] -> Shape -> ConstantOfShape -> Add."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["z"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
        helper.make_node("Add", ["x", "z"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_long_vector_by_the_engines_facts_is_checked_without_data_propagation(monkeypatch):
    from shapeinfer.inference.bindings import specialise_inputs

    m = _vector_model()
    specialise_inputs(m, {"N": load_check.MAX_PROPAGATED + 1})
    seen = _spy_data_prop(monkeypatch)
    passes_all = load_check.LoadBaseline(True, frozenset())  # a baseline that passes everything
    assert passes_all.regression(m) is None
    assert seen == [False]
    short = _vector_model()
    specialise_inputs(short, {"N": 8})
    seen.clear()
    assert passes_all.regression(short) is None and seen == [True]


def test_optimize_bind_of_a_huge_vector_is_quick_and_small(tmp_path):
    """issue 23: --bind N=100000000 ran 32 s and peaked at 5.4 GB in onnx's data propagation of
    the load check, then refused the model."""
    import os
    import resource
    import subprocess
    import sys
    import time

    src = tmp_path / "three.onnx"
    onnx.save(_vector_model(), str(src))
    out = tmp_path / "out.onnx"

    def limit():  # a runaway check fails instead of taking the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    cmd = [sys.executable, "-m", "shapeinfer", "optimize", str(src), "--bind", "N=100000000", "-o", str(out)]
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - t
    err = p.stderr.read().decode()
    assert os.waitstatus_to_exitcode(status) == 0, err
    assert usage.ru_maxrss < 400_000, usage.ru_maxrss  # KiB; the check alone took 5.4 GB
    assert elapsed < 10
    m = onnx.load(str(out))
    assert [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == [100_000_000]


def _negative_dim_slice() -> onnx.ModelProto:
    """x[batch, -5, 8] sliced along the negative dim: onnx's Slice inference asserts on it
    (``std::clamp`` with hi < lo) and aborts the whole process (found by fuzz_cli, seed 141)."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", -5, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [i64("s", [0]), i64("e", [1]), i64("a", [1])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_aborting_on_a_model_is_a_check_that_did_not_finish(tmp_path):
    import subprocess
    import sys

    src = tmp_path / "neg.onnx"
    onnx.save(_negative_dim_slice(), src)
    code = "import onnx, sys; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]), strict_mode=True)"
    assert subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True).returncode < 0  # it aborts
    assert load_check.LoadBaseline.of(_negative_dim_slice()).check_type is None
    finished, why = load_check._strict(_negative_dim_slice(), True, True)
    assert not finished and "crashed" in why
    for args in ([str(src)], ["optimize", str(src)]):
        out = tmp_path / "out.onnx"
        r = subprocess.run(
            [sys.executable, "-m", "shapeinfer.cli", *args, "--bind", "batch=2", "-o", str(out)],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert onnx.load(out).graph.input[0].type.tensor_type.shape.dim[0].dim_value == 2
        out.unlink()


MERGED = Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx"


def _merged() -> onnx.ModelProto:
    return onnx.load(str(MERGED))


def test_a_model_onnx_fails_only_with_data_propagation_is_checked_without_it():
    """optimum's merged decoders fail onnx's data propagation ("Data for input 0 already
    exists", in a branch), which onnxruntime does not run: the baseline is the mode without it,
    not "nothing checked" (fuzzer seed 171, case 1781: optimize --bind wrote a whisper decoder
    whose branch types onnxruntime refused)."""
    m = _merged()
    assert load_check.strict_error(m, data_prop=True) is not None
    baseline = load_check.LoadBaseline.of(m)
    assert (baseline.check_type, baseline.data_prop) == (True, False)
    assert baseline.regression(m) is None
    # a branch's value_info of a rank its readers cannot take (LayerNormalization of a scalar)
    bad = _merged()
    branch = next(a.g for n in bad.graph.node for a in n.attribute if a.name == "then_branch")
    ln = next(n for n in branch.node if n.op_type == "LayerNormalization")
    branch.value_info.append(helper.make_tensor_value_info(ln.input[0], TensorProto.FLOAT, []))
    reason = baseline.regression(bad)
    assert reason is not None and "rank" in reason.lower(), reason
