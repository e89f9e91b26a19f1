"""The Python API takes a model in every form users hold one: a ModelProto, a path, the bytes of
a serialised model, an ``onnx_ir.Model`` and an ``onnx_graphsurgeon.Graph``
(:mod:`shapeinfer.io.modelsource`); anything else is a TypeError that says what is accepted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from support.common import model_path

import shapeinfer
from shapeinfer.io.onnxio import ModelLoadError

ir = pytest.importorskip("onnx_ir", reason="onnx-ir is in the test extra: pip install -e '.[test]'")
gs = pytest.importorskip("onnx_graphsurgeon", reason="onnx-graphsurgeon is in the test extra: pip install -e '.[test]'")


def _typed(result) -> dict[str, tuple]:
    """Every main-graph tensor inference typed: name -> (dtype, dims as text)."""
    return {name: (f.dtype, None if f.shape is None else tuple(map(str, f.shape))) for name, f in result.facts.items()}


def _outputs(m: onnx.ModelProto) -> list:
    return [(o.name, o.type) for o in m.graph.output]  # (graphsurgeon drops their metadata_props)


def _forms(path: Path) -> dict[str, object]:
    data = path.read_bytes()
    return {
        "bytes": data,
        "bytearray": bytearray(data),
        "memoryview": memoryview(data),
        "onnx_ir": ir.load(str(path)),
        "graphsurgeon": gs.import_onnx(onnx.load(str(path))),
    }


@pytest.mark.parametrize("name", ["bert_ts", "llama_dynamo"])
def test_infer_takes_every_form_and_agrees_with_the_path(name):
    path = model_path(name)
    expected = shapeinfer.infer(path)
    outputs = [o.name for o in expected.model.graph.output]
    for form, model in _forms(path).items():
        got = shapeinfer.infer(model)
        assert [got.dims(o) for o in outputs] == [expected.dims(o) for o in outputs], form
        assert _typed(got) == _typed(expected), form
        assert [str(g) for g in got.guards()] == [str(g) for g in expected.guards()], form


def test_infer_shapes_and_optimize_take_bytes_ir_and_graphsurgeon():
    path = model_path("vit_dynamo")
    annotated = shapeinfer.infer_shapes(path)
    optimized = shapeinfer.optimize(path)
    for form, model in _forms(path).items():
        if form in ("bytearray", "memoryview"):
            continue
        got = shapeinfer.infer_shapes(model)
        assert isinstance(got, onnx.ModelProto)
        # torch.export declares a value_info entry per parameter, which every write keeps;
        # graphsurgeon's import does not carry them over, so the forms agree on the others
        params = {t.name for t in annotated.graph.initializer}
        assert {vi.name: vi.type for vi in got.graph.value_info if vi.name not in params} == {
            vi.name: vi.type for vi in annotated.graph.value_info if vi.name not in params
        }, form
        assert _outputs(got) == _outputs(annotated), form
        opt = shapeinfer.optimize(model)
        assert [n.op_type for n in opt.graph.node] == [n.op_type for n in optimized.graph.node], form
        assert _outputs(opt) == _outputs(optimized), form


def test_in_memory_forms_take_the_api_keywords():
    data = model_path("bert_ts").read_bytes()
    r = shapeinfer.infer(data, bind={"batch": 2}, dim_ranges={"seq": (1, 64)})
    assert r.dims("out")[0] == 2
    m = shapeinfer.infer_shapes(gs.import_onnx(onnx.load_from_string(data)), input_shapes={"input_ids": [3, "seq"]})
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3


def test_the_callers_objects_are_not_modified():
    path = model_path("bert_ts")
    graph = gs.import_onnx(onnx.load(str(path)))
    shapes_before = {t.name: (t.dtype, t.shape) for t in graph.tensors().values()}
    shapeinfer.infer_shapes(graph, input_shapes={"input_ids": [3, "seq"]})
    shapeinfer.optimize(graph)
    assert {t.name: (t.dtype, t.shape) for t in graph.tensors().values()} == shapes_before
    model = ir.load(str(path))
    before = ir.serde.serialize_model(model).SerializeToString()
    shapeinfer.infer_shapes(model, input_shapes={"input_ids": [3, "seq"]})
    assert ir.serde.serialize_model(model).SerializeToString() == before


def _tiny() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_graphsurgeon_graph_without_types_is_inferred():
    """A graph built with graphsurgeon whose output has no dtype: export's type check would
    refuse it, inference fills it in."""
    x = gs.Variable("x", dtype=onnx.helper.tensor_dtype_to_np_dtype(TensorProto.FLOAT), shape=["n", 4])
    y = gs.Variable("y")
    graph = gs.Graph(nodes=[gs.Node("Relu", inputs=[x], outputs=[y])], inputs=[x], outputs=[y], opset=17)
    r = shapeinfer.infer(graph)
    assert r.facts["y"].dtype == TensorProto.FLOAT
    assert [str(d) for d in r.dims("y")] == ["n", "4"]


def test_verify_takes_bytes():
    pytest.importorskip("onnxruntime")
    from shapeinfer.analysis.verify import verify

    report = verify(_tiny().SerializeToString(), [{"n": 3}])
    assert report.ok


@pytest.mark.parametrize("bad", [42, None, {"graph": 1}, [b"x"], 1.5])
def test_anything_else_is_a_type_error_naming_what_is_accepted(bad):
    for fn in (shapeinfer.infer, shapeinfer.infer_shapes, shapeinfer.optimize):
        with pytest.raises(TypeError, match=r"onnx\.ModelProto, a path .*onnx_graphsurgeon\.Graph"):
            fn(bad)


def test_bytes_are_a_model_never_a_path(tmp_path):
    with pytest.raises(ModelLoadError, match="not an ONNX model"):
        shapeinfer.infer(b"\x08\x07garbage")
    with pytest.raises(ModelLoadError, match="empty"):
        shapeinfer.infer(b"")
    path = tmp_path / "m.onnx"
    onnx.save(_tiny(), str(path))
    with pytest.raises(ModelLoadError, match="pass a path as a str"):
        shapeinfer.infer(str(path).encode())


def test_the_api_does_not_import_the_interop_packages():
    code = (
        "import sys, shapeinfer, shapeinfer.api, shapeinfer.passes, shapeinfer.analysis.verify\n"
        "shapeinfer.infer(sys.argv[1])\n"
        "print(sorted(m for m in ('onnx_ir', 'onnx_graphsurgeon', 'networkx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(model_path("bert_ts"))], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
