"""Writing a model read from a file reuses the file's initializer bytes (``Source(path, loaded)``):
the file written is byte for byte the one serialising the initializers again gives, on old IR
versions, sparse initializers, subgraphs, external data and fields out of the usual order; and
it falls back to serialising whenever the bytes cannot be vouched for."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import model_path

from shapeinfer.inference.engine import infer
from shapeinfer.io.annotate import annotate_for_writing, subgraphs_annotated
from shapeinfer.io.modelsource import model_dir
from shapeinfer.io.onnxio import LoadedModel, load_model_file
from shapeinfer.io.source import Source
from shapeinfer.io.wire import graph_layout, initializer_views, node_views, varint, without_large_raw_data
from shapeinfer.io.writer import save_model
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS

F = TensorProto.FLOAT


def _arr(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _ir3_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(_arr(4, 3), "w")
    b = helper.make_tensor("b", F, [3], [0.5, -1.0, 2.0])  # float_data, not raw_data
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 4])],
        [helper.make_tensor_value_info("y", F, None)],
        [w, b],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
    m.ir_version = 3
    return m


def _sparse_model() -> onnx.ModelProto:
    values = numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "s")
    indices = numpy_helper.from_array(np.array([1, 6], np.int64), "s_idx")
    sparse = helper.make_sparse_tensor(values, indices, [2, 4])
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "s"], ["h"]), helper.make_node("Mul", ["h", "c"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(_arr(2, 4, seed=1), "c")],
        sparse_initializer=[sparse],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _subgraph_model() -> onnx.ModelProto:
    def branch(name: str, seed: int) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("Add", ["x", f"{name}_w"], [f"{name}_y"])],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_y", F, None)],
            [numpy_helper.from_array(_arr(4, seed=seed), f"{name}_w")],
        )

    g = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["x"], ["r"], keepdims=0),
            helper.make_node("Greater", ["r", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["z"], then_branch=branch("then", 2), else_branch=branch("else", 3)),
            helper.make_node("Mul", ["z", "k"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero"), numpy_helper.from_array(_arr(4, seed=4), "k")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def initializer_spans(data: bytes, count: int):
    return initializer_views(data, graph_layout(data), count)


def _write_both(path, out_dir) -> tuple[bytes, bytes, LoadedModel]:
    """The CLI's path (a lean load, infer, annotate, write with the read bytes reused) and the
    plain one (the whole model parsed, inferred, annotated and serialised). Both runs must
    infer the same facts and diagnostics."""
    path = str(path)
    loaded = load_model_file(path, lean=True)
    full = onnx.load(path, load_external_data=False)
    outs = []
    results = []
    for name, model, reuse in (("a", loaded.model, loaded), ("b", full, None)):
        result = infer(model, base_dir=model_dir(path))
        written, tail = annotate_for_writing(result)
        (out_dir / name).mkdir()
        as_read = reuse is not None and not subgraphs_annotated(result)
        save_model(written, str(out_dir / name / "o.onnx"), Source(path, reuse, nodes_as_read=as_read, graph_tail=tail))
        outs.append((out_dir / name / "o.onnx").read_bytes())
        results.append(result)
    assert results[0].facts == results[1].facts
    assert results[0].diagnostics == results[1].diagnostics
    return outs[0], outs[1], loaded


@pytest.mark.parametrize("make", [_ir3_model, _sparse_model, _subgraph_model], ids=["ir3", "sparse", "subgraph"])
def test_reused_initializer_bytes_write_the_same_file(tmp_path, make):
    src = tmp_path / "m.onnx"
    onnx.save(make(), str(src))
    reused, serialised, loaded = _write_both(src, tmp_path)
    assert initializer_spans(loaded.data, len(loaded.model.graph.initializer)) is not None  # the splice ran
    assert node_views(loaded.data, graph_layout(loaded.data), len(loaded.model.graph.node)) is not None
    # the subgraph model's If node gets its branches annotated: its nodes are serialised again
    assert subgraphs_annotated(infer(loaded.model)) == (make is _subgraph_model)
    assert reused == serialised
    feeds = {"x": _arr(*[d.dim_value or 2 for d in loaded.model.graph.input[0].type.tensor_type.shape.dim])}
    sess = ort.InferenceSession(reused, providers=["CPUExecutionProvider"])
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_array_equal(sess.run(None, feeds)[0], want[0])


def test_reused_bytes_with_external_data_copied_elsewhere(tmp_path):
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    m = _ir3_model()
    m.ir_version = 8
    m.opset_import[0].version = 17
    m.graph.initializer.append(numpy_helper.from_array(_arr(64, seed=5), "big"))  # external
    m.graph.node.append(helper.make_node("ReduceSum", ["big"], ["t"], keepdims=0))
    m.graph.output.append(helper.make_tensor_value_info("t", F, None))
    onnx.save(m, str(src_dir / "m.onnx"), save_as_external_data=True, location="w.bin", size_threshold=64)
    reused, serialised, loaded = _write_both(src_dir / "m.onnx", tmp_path)
    assert loaded.external and initializer_spans(loaded.data, len(loaded.model.graph.initializer)) is not None
    assert reused == serialised
    assert (tmp_path / "a" / "w.bin").read_bytes() == (src_dir / "w.bin").read_bytes()
    feeds = {"x": _arr(2, 4)}
    got = ort.InferenceSession(str(tmp_path / "a" / "o.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)
    want = ort.InferenceSession(str(src_dir / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def _field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_initializers_between_nodes_are_written_in_their_order(tmp_path):
    """A file whose graph fields are not in field-number order (initializers first, between
    nodes): the spans are found in file order, and the file written parses to the same model
    as serialising gives, byte for byte."""
    m = _ir3_model()
    g = m.graph
    pieces = [
        _field(5, g.initializer[1].SerializeToString()),
        _field(1, g.node[0].SerializeToString()),
        _field(5, g.initializer[0].SerializeToString()),
        _field(1, g.node[1].SerializeToString()),
    ]
    rest = onnx.GraphProto()
    rest.CopyFrom(g)
    del rest.node[:], rest.initializer[:]
    graph_bytes = b"".join(pieces) + rest.SerializeToString()
    head = onnx.ModelProto()
    head.CopyFrom(m)
    head.ClearField("graph")
    src = tmp_path / "m.onnx"
    src.write_bytes(head.SerializeToString() + _field(7, graph_bytes))
    reused, serialised, loaded = _write_both(src, tmp_path)
    assert [t.name for t in loaded.model.graph.initializer] == ["b", "w"]
    spans = initializer_spans(loaded.data, 2)
    assert spans is not None and len(spans) == 2  # not adjacent: two views
    assert reused == serialised
    assert onnx.load_from_string(reused).graph.initializer == loaded.model.graph.initializer


def test_bytes_that_cannot_be_vouched_for_are_serialised(tmp_path):
    m = _ir3_model()
    data = m.SerializeToString()
    assert initializer_spans(data, 2) is not None
    assert initializer_spans(data, 3) is None  # a count that does not match
    assert initializer_spans(data[:-3], 2) is None  # truncated: a field ends past its message
    # two graph fields: a parser merges them (initializers of both); never spliced
    extra = onnx.GraphProto()
    extra.initializer.append(numpy_helper.from_array(_arr(2, seed=9), "extra"))
    doubled = data + _field(7, extra.SerializeToString())
    parsed = onnx.load_from_string(doubled)
    assert len(parsed.graph.initializer) == 3
    assert initializer_spans(doubled, 3) is None
    src = tmp_path / "m.onnx"
    src.write_bytes(doubled)
    reused, serialised, _ = _write_both(src, tmp_path)
    assert reused == serialised
    assert [t.name for t in onnx.load_from_string(reused).graph.initializer] == ["w", "b", "extra"]


def test_a_real_model_round_trips(tmp_path):
    reused, serialised, loaded = _write_both(model_path("bert_ts"), tmp_path)
    assert initializer_spans(loaded.data, len(loaded.model.graph.initializer)) is not None
    assert reused == serialised


def _tensor_field_bytes(t: TensorProto, raw_first: bool) -> bytes:
    """``t`` serialised with its fields in a chosen order (raw_data before or after the rest) and
    dims unpacked, as some writers do."""
    rest = TensorProto()
    rest.CopyFrom(t)
    rest.ClearField("raw_data")
    rest.ClearField("dims")
    dims = b"".join(varint(1 << 3 | 0) + varint(d) for d in t.dims)
    raw = varint(9 << 3 | 2) + varint(len(t.raw_data)) + t.raw_data
    return raw + dims + rest.SerializeToString() if raw_first else rest.SerializeToString() + dims + raw


def test_lean_load_leaves_out_only_large_weights(tmp_path):
    """Initializers of more than MAX_VALUE_ELEMENTS elements are parsed without raw_data, in any
    field order; small ones, float_data ones and everything else parse as in the file."""
    big = numpy_helper.from_array(_arr(8, 16, seed=6), "big")  # 128 elements
    edge = numpy_helper.from_array(_arr(MAX_VALUE_ELEMENTS, seed=7), "edge")  # small: kept
    floats = helper.make_tensor("floats", F, [100], list(range(100)))  # float_data: nothing to leave out
    m = _ir3_model()
    m.ir_version = 8
    m.opset_import[0].version = 17
    m.graph.initializer.extend([big, edge, floats])
    data = m.SerializeToString()
    # "big" re-encoded with raw_data first and unpacked dims
    canonical = varint(5 << 3 | 2) + varint(big.ByteSize()) + big.SerializeToString()
    reordered = _tensor_field_bytes(big, raw_first=True)
    assert canonical in data
    data = data.replace(canonical, varint(5 << 3 | 2) + varint(len(reordered)) + reordered)
    layout = graph_layout(data)
    lean = without_large_raw_data(data, layout, MAX_VALUE_ELEMENTS)
    parsed = onnx.load_from_string(lean)
    want = onnx.load_from_string(data)
    by_name = {t.name: t for t in parsed.graph.initializer}
    assert by_name["big"].raw_data == b"" and list(by_name["big"].dims) == [8, 16]
    for t in want.graph.initializer:
        if t.name != "big":
            assert by_name[t.name] == t
    want.graph.initializer[[t.name for t in want.graph.initializer].index("big")].ClearField("raw_data")
    assert parsed == want
    # nothing large: no lean copy; bytes that cannot be walked: none either
    small_only = _ir3_model().SerializeToString()
    assert without_large_raw_data(small_only, graph_layout(small_only), MAX_VALUE_ELEMENTS) is None
    assert graph_layout(data[:-5]) is None
    src = tmp_path / "m.onnx"
    src.write_bytes(data)
    loaded = load_model_file(str(src), lean=True)
    assert loaded.lean and loaded.model == parsed
    reused, serialised, _ = _write_both(src, tmp_path)
    # "big" is written as the file had it (raw_data first), serialising reorders it: the same model
    assert reused != serialised
    assert onnx.load_from_string(reused) == onnx.load_from_string(serialised)
    assert onnx.load_from_string(reused).graph.initializer == onnx.load_from_string(data).graph.initializer


def test_malformed_large_tensors_get_the_same_diagnostics(tmp_path):
    """A large tensor whose raw_data does not match its dims, and a small one: lean or not, the
    same facts and diagnostics (the lean load never drops what inference would look at)."""
    m = _ir3_model()
    m.ir_version = 8
    m.opset_import[0].version = 17
    bad_big, bad_small = TensorProto(), TensorProto()
    for t, name, n in ((bad_big, "bad_big", 100), (bad_small, "bad_small", 4)):
        t.name, t.data_type, t.raw_data = name, F, b"\0" * 12  # 3 floats, whatever the dims say
        t.dims.append(n)
    m.graph.initializer.extend([bad_big, bad_small])
    m.graph.node.append(helper.make_node("Add", ["bad_big", "bad_big"], ["t"]))
    m.graph.node.append(helper.make_node("Add", ["bad_small", "bad_small"], ["u"]))
    m.graph.output.extend([helper.make_tensor_value_info(n, F, None) for n in ("t", "u")])
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    reused, serialised, loaded = _write_both(src, tmp_path)  # asserts equal facts and diagnostics
    assert loaded.lean
    assert reused == serialised
    result = infer(loaded.model)
    assert [d.code for d in result.diagnostics if d.tensor == "bad_small"] == ["E014"]


def test_dims_products_stay_small_and_zero_sized_tensors_keep_their_data():
    """The element count is only compared with the limit: a tensor of thousands of huge dims is
    decided without multiplying them all out, and a 0 dim anywhere makes the tensor small."""
    t = TensorProto()
    t.name, t.data_type, t.raw_data = "w", F, b"\0" * 100
    t.dims.extend([1 << 40] * 20000)
    y = helper.make_tensor_value_info("y", F, None)
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], [y], [t])
    data = helper.make_model(g).SerializeToString()
    lean = without_large_raw_data(data, graph_layout(data), MAX_VALUE_ELEMENTS)
    assert lean is not None and onnx.load_from_string(lean).graph.initializer[0].raw_data == b""
    g.initializer[0].dims.append(0)
    data = helper.make_model(g).SerializeToString()
    assert without_large_raw_data(data, graph_layout(data), MAX_VALUE_ELEMENTS) is None
