"""The index writes unchanged main-graph nodes as the bytes they were read from; annotate gives
the value_info it writes as bytes too.

``GraphModel(model, source=node_fields(data))`` exports each node no pass changed as its field in
``data`` and serialises only the others; ``optimize`` hands those node fields to the writer
(``OptimizeReport.source.node_fields``). Every file and model must be byte for byte the one the
plain path (copying the NodeProtos, serialising every node again) gives."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from support.common import model_path

from shapeinfer.inference.engine import infer
from shapeinfer.io.annotate import annotate, annotate_serialised
from shapeinfer.io.wire import node_fields, varint
from shapeinfer.io.writer import save_model
from shapeinfer.ir.graph import GraphModel, rename, set_input, unlink_nodes
from shapeinfer.passes import optimize_with_report

F = TensorProto.FLOAT


def _node_bytes(model: onnx.ModelProto) -> bytes:
    """The main graph's node fields, serialised anew."""
    g = onnx.GraphProto()
    g.node.extend(model.graph.node)
    return g.SerializeToString()


def _value_info_bytes(model: onnx.ModelProto) -> bytes:
    g = onnx.GraphProto()
    g.value_info.extend(model.graph.value_info)
    return g.SerializeToString()


def test_node_fields_cut_each_node_out_of_the_file():
    data = model_path("gpt2_ts").read_bytes()
    m = onnx.ModelProto.FromString(data)
    nf = node_fields(data)
    assert nf is not None and len(nf.starts) == len(m.graph.node) + 1
    assert nf.data == _node_bytes(m)
    for k in (0, 1, len(m.graph.node) // 2, len(m.graph.node) - 1):
        one = onnx.GraphProto.FromString(nf.data[nf.starts[k] : nf.starts[k + 1]])
        assert list(one.node) == [m.graph.node[k]]


def test_node_fields_refuse_nodes_split_by_other_fields():
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    assert node_fields(m.SerializeToString()) is not None
    # the graph's fields written node, name, node: a parser takes it, the walk leaves it alone
    node = [b"\x0a" + varint(len(b)) + b for b in (n.SerializeToString() for n in g.node)]
    rest = g.SerializeToString()[sum(map(len, node)) :]
    graph = node[0] + b"\x12\x01g" + node[1] + rest
    head = onnx.ModelProto()
    head.CopyFrom(m)
    head.ClearField("graph")
    data = head.SerializeToString() + b"\x3a" + varint(len(graph)) + graph
    assert list(onnx.ModelProto.FromString(data).graph.node) == list(g.node)
    assert node_fields(data) is None
    assert node_fields(b"\x3a\x05abc") is None  # runs past the end


def _edit(gm: GraphModel) -> None:
    """Relink, rename, remove, add, retype and reorder a few nodes (the same on every index)."""
    nodes = gm.graph.nodes
    shapes = [n for n in nodes if n.op == "Shape"]
    adds = [n for n in nodes if n.op == "Add"]
    set_input(adds[0], 1, adds[0].inputs[0])  # dirty: rewritten
    rename(adds[1].outputs[0], gm.fresh("renamed"))  # its producer and readers rewritten
    adds[2].attrs = dict(adds[2].attrs)  # decoded, same values: kept as read
    casts = [n for n in nodes if n.op == "Cast"]
    casts[0].attrs = {**casts[0].attrs, "to": int(TensorProto.INT32)}  # changed attribute
    c = gm.constant(gm.graph, "k", np.array([1], np.int64))
    new = gm.node("Identity", "extra", [c], [gm.variable("extra_out")])
    gone = [shapes[0], shapes[-1]]
    unlink_nodes(gone)
    keep = [n for n in nodes if n is not shapes[0] and n is not shapes[-1]]
    gm.graph.nodes = [keep[1], keep[0], *keep[2:-3], new, *keep[-3:]]  # order changed too


def test_export_from_source_is_byte_identical_to_copying_the_nodes():
    data = model_path("gpt2_ts").read_bytes()
    exports = []
    for src in (node_fields(data), None):
        gm = GraphModel(onnx.ModelProto.FromString(data), source=src)
        from shapeinfer.ir.export import export_model

        first = export_model(gm)  # unchanged: the file's own node fields
        _edit(gm)
        from shapeinfer.ir.export import export_model

        second = export_model(gm)
        exports.append((first, second, gm.written_nodes))
    (a1, a2, written), (b1, b2, none) = exports
    assert none is None and written is not None and written[0] is a2
    assert a1.SerializeToString() == b1.SerializeToString()
    assert a2.SerializeToString() == b2.SerializeToString()
    assert written[1] == _node_bytes(a2)
    assert len(a2.graph.node) == len(onnx.ModelProto.FromString(data).graph.node) - 1


def test_relinked_node_is_its_original_with_the_new_links():
    data = model_path("gpt2_ts").read_bytes()
    gm = GraphModel(onnx.ModelProto.FromString(data), source=node_fields(data))
    n = next(n for n in gm.graph.nodes if n.op == "Concat")
    set_input(n, 0, n.inputs[-1])
    from shapeinfer.ir.export import export_model

    out = export_model(gm)
    k = gm.graph.nodes.index(n)
    want = onnx.NodeProto()
    want.CopyFrom(n.proto)
    want.input[0] = want.input[-1]
    assert out.graph.node[k] == want


def _if_model() -> onnx.ModelProto:
    def branch(name: str, op: str) -> onnx.GraphProto:
        out = helper.make_tensor_value_info(f"{name}_y", F, None)
        return helper.make_graph([helper.make_node(op, ["h"], [f"{name}_y"])], name, [], [out])

    g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Reshape", ["x", "s"], ["h"]),  # a no-op reshape: removed
            helper.make_node("ReduceSum", ["h"], ["r"], keepdims=0),
            helper.make_node("Greater", ["r", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=branch("then", "Relu"), else_branch=branch("else", "Neg")),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 4])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_optimize_writes_the_same_file_with_the_node_fields(tmp_path):
    if_path = tmp_path / "if.onnx"
    onnx.save(_if_model(), str(if_path))
    sess_inputs = {"bert_ts": None, "if": {"x": np.arange(12, dtype=np.float32).reshape(3, 4) - 5}}
    for name, path in (("bert_ts", model_path("bert_ts")), ("if", if_path)):
        model, report = optimize_with_report(str(path))
        # the If's branches are annotated: its node changes after export, so no node fields
        assert (report.source.node_fields is None) == (name == "if")
        assert report.nodes_after < report.nodes_before
        fast, plain = tmp_path / f"{name}_fast.onnx", tmp_path / f"{name}_plain.onnx"
        assert report.source.value_info_fields == _value_info_bytes(model)
        assert report.source.external == []  # none in the input: the writer need not look
        assert report.source.path == str(path)
        save_model(model, str(fast), report.source)
        save_model(model, str(plain), str(path))
        assert fast.read_bytes() == plain.read_bytes()
        if report.source.node_fields is not None:
            assert report.source.node_fields == _node_bytes(model)
        sess = ort.InferenceSession(fast.read_bytes(), providers=["CPUExecutionProvider"])
        if sess_inputs[name] is not None:
            (y,) = sess.run(None, sess_inputs[name])
            x = sess_inputs[name]["x"]
            np.testing.assert_allclose(y, np.maximum(x, 0) if x.sum() > 0 else -x)


def test_annotate_serialised_gives_the_value_info_annotate_writes():
    g = helper.make_graph(
        [
            helper.make_node("Foo", ["x"], ["h"], domain="custom"),  # unknown op: its declaration stays
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Add", ["h", "r"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 4])],
        [helper.make_tensor_value_info("y", F, None)],
        value_info=[
            helper.make_tensor_value_info("h", F, ["n", 4]),
            helper.make_tensor_value_info("unused", F, [1]),  # no such value: kept as it is
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)])
    plain = onnx.ModelProto()
    plain.CopyFrom(m)
    fields = annotate_serialised(infer(m))
    annotate(infer(plain))
    assert m == plain
    assert {vi.name for vi in m.graph.value_info} >= {"h", "r", "unused"}
    assert fields == _value_info_bytes(m)


def test_relinked_nodes_written_from_their_bytes_only_when_that_is_what_serialising_gives():
    """A node whose inputs changed is written as its original field with the new links when
    those bytes are what the rebuilt NodeProto serialises to; an explicitly empty name or
    domain, an unknown field or fields out of order make it rebuilt as before."""
    odd = onnx.NodeProto()
    odd.ParseFromString(helper.make_node("Neg", ["a"], ["b"]).SerializeToString() + b"\x7a\x01z")  # field 15: unknown
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="plain"),
        helper.make_node("LeakyRelu", ["x"], ["a2"], name="attr", alpha=0.5),
        helper.make_node("Neg", ["x"], ["a3"]),
        helper.make_node("Neg", ["x"], ["a4"], name="empty_domain"),
        helper.make_node("Neg", ["x"], ["a5"], doc_string="d"),
        odd,
        onnx.NodeProto(input=["x"], output=["a7"]),  # no op_type (the rebuilt node writes an empty one)
        helper.make_node("Neg", ["x"], ["a8"], name="n1", doc_string="dd"),
    ]
    nodes[2].name = ""  # present and empty
    nodes[3].domain = ""
    odd.input[0] = "x"
    odd.output[0] = "a6"
    g = helper.make_graph(
        [*nodes, helper.make_node("Sum", ["a", "a2", "a3", "a4", "a5", "a6", "a8"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, [2]), helper.make_tensor_value_info("x2", F, [2])],
        [helper.make_tensor_value_info("y", F, [2]), helper.make_tensor_value_info("a7", F, [2])],
    )
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    # the fifth node's op_type written after its doc_string: out of order (a parser takes it)
    in_order, swapped = b"\x0a\x01x\x12\x02a5\x22\x03Neg\x32\x01d", b"\x0a\x01x\x12\x02a5\x32\x01d\x22\x03Neg"
    assert data.count(in_order) == 1
    data = data.replace(in_order, swapped)
    assert onnx.ModelProto.FromString(data).graph.node[4] == nodes[4]
    # the last one's name written twice (the last one counts), its doc_string left out
    once, twice = b"\x1a\x02n1\x22\x03Neg\x32\x02dd", b"\x1a\x02n0\x1a\x02n1\x22\x03Neg"
    assert data.count(once) == 1
    data = data.replace(once, twice)
    assert onnx.ModelProto.FromString(data).graph.node[7].name == "n1"
    written = []
    for src in (node_fields(data), None):
        m = onnx.ModelProto.FromString(data)
        gm = GraphModel(m, source=src)
        x2 = gm.graph.inputs[1]
        for n in gm.graph.nodes[:-1]:
            set_input(n, 0, x2)
            _ = n.attrs if n.name == "attr" else None  # decoded, unchanged
        from shapeinfer.ir.export import export_model

        out = export_model(gm)
        # the node fields as written from the source; as serialised anew
        written.append((gm.written_nodes[1] if src is not None else _node_bytes(out), out.SerializeToString()))
    assert written[0] == written[1]
    out = onnx.ModelProto.FromString(written[0][1])
    assert [n.input[0] for n in out.graph.node[:-1]] == ["x2"] * 8
    assert not out.graph.node[2].HasField("name") and not out.graph.node[3].HasField("domain")


def test_optimize_of_a_model_with_external_data_leaves_the_writer_to_find_it(tmp_path):
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["x", "s"], ["h"])]
        + [helper.make_node("MatMul", ["h", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 8])],
        [helper.make_tensor_value_info("y", F, None)],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    src = tmp_path / "src" / "m.onnx"
    onnx.save(m, str(src), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    model, report = optimize_with_report(str(src))
    assert report.source.external is None
    out = tmp_path / "out" / "o.onnx"
    save_model(model, str(out), report.source)
    assert (tmp_path / "out" / "w.bin").read_bytes() == (tmp_path / "src" / "w.bin").read_bytes()
    x = np.ones((3, 8), np.float32)
    (y,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, x @ numpy_helper.to_array(w))
