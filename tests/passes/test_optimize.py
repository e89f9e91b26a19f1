"""shapeinfer.optimize on the six shipped models: same outputs, less shape arithmetic, valid, idempotent."""

from __future__ import annotations

import collections

import onnx
import pytest
from support.common import MODEL_NAMES, model_path

import shapeinfer
from shapeinfer.passes import optimize_with_report
from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")

BINDINGS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 11}]

#: Shape-computation nodes the best of onnxsim, onnxslim and onnxruntime's basic optimiser
#: leave on each model (issue 4); shapeinfer must leave fewer.
BEST_OTHER = {"bert_ts": 40, "gpt2_ts": 197, "llama_ts": 103, "bert_dynamo": 14, "llama_dynamo": 15, "vit_dynamo": 5}

#: The same count after onnxscript's optimizer (``onnxscript.optimizer.optimize(model)``, onnxscript
#: 0.7.2 with onnx-ir 1.1.0, in a venv of its own), which builds targets from a few Shape roots on
#: the graph inputs (issue 23); shapeinfer must leave no more.
ONNXSCRIPT = {"bert_ts": 56, "gpt2_ts": 260, "llama_ts": 205, "bert_dynamo": 9, "llama_dynamo": 10, "vit_dynamo": 3}

#: Inputs that take shape values, per op (the issue's definition of shape computation).
SHAPE_LIKE = {
    "Reshape": {1},
    "Expand": {1},
    "ConstantOfShape": {0},
    "Slice": {1, 2, 3, 4},
    "Tile": {1},
    "Range": {0, 1, 2},
    "Unsqueeze": {1},
    "Squeeze": {1},
    "Resize": {1, 2, 3},
    "Pad": {1, 2, 3},
    "ReduceSum": {1},
    "ReduceMean": {1},
    "ReduceMax": {1},
    "Split": {1},
    "TopK": {1},
    "OneHot": {1},
}


def shape_computation_nodes(model: onnx.ModelProto) -> int:
    """Shape/Size nodes, and nodes (not Constant) whose outputs only end up in shape-like inputs."""
    g = model.graph
    readers = collections.defaultdict(list)
    for n in g.node:
        for k, name in enumerate(n.input):
            readers[name].append((n, k))
    outputs = {o.name for o in g.output}
    memo: dict[str, bool] = {}

    def only_shape(t: str) -> bool:
        if t not in memo:
            memo[t] = False
            ok = t not in outputs and bool(readers[t])
            for n, k in readers[t]:
                if k in SHAPE_LIKE.get(n.op_type, ()) or n.op_type in ("Shape", "Size"):
                    continue
                if not all(only_shape(o) for o in n.output if o):
                    ok = False
                    break
            memo[t] = ok
        return memo[t]

    return sum(
        1
        for n in g.node
        if n.op_type in ("Shape", "Size")
        or (n.op_type != "Constant" and n.output and all(only_shape(o) for o in n.output if o))
    )


@pytest.fixture(scope="module")
def optimized() -> dict:
    cache = {}

    def get(name: str):
        if name not in cache:
            original = onnx.load(str(model_path(name)))
            cache[name] = (original, *optimize_with_report(original))
        return cache[name]

    return get


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_outputs_equal_the_originals_in_onnxruntime_at_two_bindings(name, optimized):
    original, out, _ = optimized(name)
    for binding in BINDINGS:
        inputs = ort_oracle.feeds(original, binding, seed=1)
        ort_oracle.assert_same_outputs(original, out, inputs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fewer_shape_computation_nodes_than_the_best_other_optimizer(name, optimized):
    original, out, report = optimized(name)
    before, after = shape_computation_nodes(original), shape_computation_nodes(out)
    assert after < BEST_OTHER[name] < before
    assert after <= ONNXSCRIPT[name]
    assert report.nodes_before == len(original.graph.node) > report.nodes_after == len(out.graph.node)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_valid_annotated_and_interface_unchanged(name, optimized):
    original, out, _ = optimized(name)
    onnx.checker.check_model(out, full_check=True)
    assert [vi.SerializeToString() for vi in out.graph.input] == [vi.SerializeToString() for vi in original.graph.input]
    assert [o.name for o in out.graph.output] == [o.name for o in original.graph.output]
    # value_info: the entries the input has, of the tensors still computed, as declared (none
    # contradicts inference); no others (tests/passes/test_optimize_value_info.py says why)
    defined = {o for n in out.graph.node for o in n.output} | {t.name for t in out.graph.initializer}
    had = [vi.SerializeToString() for vi in original.graph.value_info if vi.name in defined]
    assert [vi.SerializeToString() for vi in out.graph.value_info] == had
    for vi in out.graph.output:
        assert vi.type.tensor_type.HasField("shape")


@pytest.mark.parametrize("name", ["bert_ts", "llama_dynamo"])
def test_all_shapes_annotates_every_tensor_like_dash_o(name, optimized):
    """``all_shapes``: every tensor a node produces has a type and shape, as ``shapeinfer -o``
    writes them, and the values are the same."""
    original, plain, _ = optimized(name)
    out, _ = optimize_with_report(original, all_shapes=True)
    onnx.checker.check_model(out, full_check=True)
    annotated = {vi.name for vi in out.graph.value_info} | {o.name for o in out.graph.output}
    assert all(o in annotated for n in out.graph.node for o in n.output)
    assert all(vi.type.tensor_type.HasField("shape") for vi in out.graph.value_info)
    assert [n.SerializeToString() for n in out.graph.node] == [n.SerializeToString() for n in plain.graph.node]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_running_twice_changes_nothing(name, optimized):
    _, out, _ = optimized(name)
    again, report = optimize_with_report(out)
    assert not any(p.changed for p in report.passes)
    assert again.SerializeToString() == out.SerializeToString()


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_inferred_shapes_of_optimized_models_match_onnxruntime(name, optimized):
    verify = pytest.importorskip("shapeinfer.analysis.verify")
    _, out, _ = optimized(name)
    bindings = [{k: v for k, v in b.items() if name != "vit_dynamo" or k == "batch"} for b in BINDINGS]
    report = verify.verify(out, bindings)
    assert report.checked > 0
    assert report.mismatches == []


def test_bind_specialises_inputs_and_folds_every_shape_computation():
    original = onnx.load(str(model_path("bert_ts")))
    out = shapeinfer.optimize(original, bind={"batch": 1, "seq": 5})
    onnx.checker.check_model(out, full_check=True)
    for vi in out.graph.input:
        assert [d.dim_value for d in vi.type.tensor_type.shape.dim] == [1, 5]
    assert shape_computation_nodes(out) == 0
    inputs = ort_oracle.feeds(original, {"batch": 1, "seq": 5}, seed=1)
    ort_oracle.assert_same_outputs(original, out, inputs, rtol=1e-4, atol=1e-4)


def test_selected_passes_only():
    original = onnx.load(str(model_path("bert_ts")))
    out, report = optimize_with_report(original, passes=["fold-shapes"])
    assert [p.name for p in report.passes] == ["fold-shapes", "dce"]
    # Without canonicalize-reshape the Shape -> Gather chains with symbolic values stay.
    assert sum(1 for n in out.graph.node if n.op_type == "Shape") > 0
    assert sum(1 for n in out.graph.node if n.op_type == "Constant") == 0
    inputs = ort_oracle.feeds(original, BINDINGS[0], seed=1)
    ort_oracle.assert_same_outputs(original, out, inputs, rtol=1e-4, atol=1e-4)


def test_the_input_model_is_not_modified():
    original = onnx.load(str(model_path("vit_dynamo")))
    before = original.SerializeToString()
    shapeinfer.optimize(original)
    assert original.SerializeToString() == before


def test_declared_output_types_are_kept_where_inference_knows_less():
    from onnx import TensorProto as T
    from onnx import helper as h

    # axes is a graph input: inference cannot know the rank of y, the model declares it.
    g = h.make_graph(
        [h.make_node("Squeeze", ["x", "axes"], ["s"]), h.make_node("Relu", ["s"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4]), h.make_tensor_value_info("axes", T.INT64, [1])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, 4])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    out = shapeinfer.optimize(m)
    onnx.checker.check_model(out, full_check=True)
    assert out.graph.output[0].SerializeToString() == m.graph.output[0].SerializeToString()


def test_model_without_default_domain_import_is_left_as_is():
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph(
        [h.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.5)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("ai.onnx.ml", 1)], ir_version=8)
    out, report = optimize_with_report(m)
    assert report.opset_before is None and not any(p.changed for p in report.passes)
    assert [n.op_type for n in out.graph.node] == ["Binarizer"]
    onnx.checker.check_model(out, full_check=True)
