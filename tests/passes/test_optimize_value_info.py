"""What optimize writes into ``value_info``: the graph outputs get the inferred types, the
entries the model has keep theirs unless inference contradicts them, no tensor gets a new one;
``all_shapes`` annotates as ``shapeinfer -o``. More shapes onnxruntime can tell equal change
how it runs the model (buffer reuse, kernels: docs/decisions.md), so optimize adds none."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.passes import optimize_with_report
from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")

VISION = Path(__file__).resolve().parents[1] / "models" / "vision"


def _ort_graph_nodes(model: onnx.ModelProto, tmp_path: Path, name: str) -> collections.Counter:
    """The op types of onnxruntime's optimized graph of ``model`` (CPU, its default level)."""
    src, out = tmp_path / f"{name}.onnx", tmp_path / f"{name}.ort.onnx"
    onnx.save(model, src)
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(out)
    so.log_severity_level = 4
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    return collections.Counter(n.op_type for n in onnx.load(str(out)).graph.node)


def test_paddle_entries_kept_as_declared_and_onnxruntime_runs_the_same_graph(tmp_path):
    """paddle2onnx declares every tensor with names of its own (``DynamicDimension.0``,
    ``floor(floor(DynamicDimension.1/2 - 1/2)/2) + 1``). Refined to ``(height + 3)//4`` and
    alike, they let onnxruntime tell the two inputs of each FPN Add equal, and it then keeps
    each Add apart, reshaped around, instead of fusing it into the Conv (42 -> 54 nodes, 5 %
    slower). Kept as declared, onnxruntime makes the input's graph; the outputs are the
    same at both bindings and at an odd size."""
    src = onnx.load(str(VISION / "paddle_db_det.onnx"))
    out, _ = optimize_with_report(src)
    declared = {vi.name: vi.SerializeToString() for vi in src.graph.value_info}
    assert out.graph.value_info and all(vi.SerializeToString() == declared[vi.name] for vi in out.graph.value_info)
    assert out.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"  # refined
    before, after = _ort_graph_nodes(src, tmp_path, "in"), _ort_graph_nodes(out, tmp_path, "out")
    assert sum(after.values()) <= sum(before.values()), (before, after)
    bindings = json.loads((VISION / "paddle_db_det.json").read_text())["bindings"]
    for b in [*bindings, {"batch": 1, "height": 32, "width": 32}]:
        ort_oracle.assert_same_outputs(src, out, ort_oracle.feeds(src, b, seed=3), rtol=1e-4, atol=1e-4)


def test_all_shapes_refines_and_adds_entries():
    src = onnx.load(str(VISION / "paddle_db_det.onnx"))
    out, _ = optimize_with_report(src, all_shapes=True)
    written = {vi.name: vi for vi in out.graph.value_info}
    typed = {o for n in out.graph.node for o in n.output}
    assert typed <= written.keys() | {o.name for o in out.graph.output}
    refined = [vi for vi in src.graph.value_info if vi.name in written and written[vi.name].type != vi.type]
    assert refined  # DynamicDimension.* -> batch, (height + 3)//4, ...


def _declared(decl: list) -> onnx.ModelProto:
    """x[b, 4] -> Relu -> r -> Neg -> s -> Sigmoid -> y, with ``r``, ``s`` declared ``decl``."""
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Neg", ["r"], ["s"]), h.make_node("Sigmoid", ["s"], ["y"])]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["b", 4])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        value_info=decl,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize(
    "r_declared, r_written",
    [
        ((T.FLOAT, ["n", 4]), (T.FLOAT, ["n", 4])),  # a name of its own: kept
        ((T.FLOAT, [None, None]), (T.FLOAT, [None, None])),  # unknown dims: kept, not refined
        ((T.FLOAT, ["b", 5]), (T.FLOAT, ["b", 4])),  # a wrong number: the inferred dim
        ((T.FLOAT, [1, 4]), (T.FLOAT, ["b", 4])),  # a static claim of a dynamic dim: inferred
        ((T.FLOAT, ["b", 4, 1]), (T.FLOAT, ["b", 4])),  # a wrong rank: the inferred type
        ((T.DOUBLE, ["b", 4]), (T.FLOAT, ["b", 4])),  # a wrong element type: the inferred type
    ],
)
def test_a_declared_entry_is_kept_unless_inference_contradicts_it(r_declared, r_written):
    decl = [h.make_tensor_value_info("r", *r_declared), h.make_tensor_value_info("s", T.FLOAT, ["m", 4])]
    src = _declared(decl)
    out, _ = optimize_with_report(src)
    written = {vi.name: vi for vi in out.graph.value_info}
    assert list(written) == ["r", "s"]  # no entry for a tensor the input did not declare
    dims = [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
        for d in written["r"].type.tensor_type.shape.dim
    ]
    assert (written["r"].type.tensor_type.elem_type, dims) == (r_written[0], r_written[1])
    assert written["s"].SerializeToString() == decl[1].SerializeToString()
    assert [d.dim_param or d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim] == ["b", 4]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    if r_declared[0] == T.FLOAT and len(r_declared[1]) == 2:  # (the others do not load as given)
        ort_oracle.assert_same_outputs(src, out, {"x": x})
    sess = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": x})[0].shape == (3, 4)
