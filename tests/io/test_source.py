"""One ``Source`` of bytes (issue 25): the writer asks it what was read and what is serialised
already; the varint and tag helpers live in ``io/wire.py`` only."""

from __future__ import annotations

import ast
from pathlib import Path

import onnx
from support.common import model_path

from shapeinfer.inference.engine import infer
from shapeinfer.io.annotate import annotate_for_writing
from shapeinfer.io.onnxio import load_model_file
from shapeinfer.io.source import Source
from shapeinfer.io.wire import NODE_TAG, field_tag, length_prefix, node_fields, varint
from shapeinfer.io.writer import save_model

PKG = Path(__file__).resolve().parents[2] / "shapeinfer"


def test_a_path_is_a_source_and_the_pieces_read_write_the_same_file(tmp_path):
    path = str(model_path("bert_ts"))
    loaded = load_model_file(path, lean=True)
    written, tail = annotate_for_writing(infer(loaded.model))
    save_model(written, str(tmp_path / "a.onnx"), Source(path, loaded, nodes_as_read=True, graph_tail=tail))
    plain = onnx.ModelProto()
    plain.CopyFrom(onnx.load(path))
    res = infer(plain)
    b, tail_b = annotate_for_writing(res)
    b.graph.MergeFromString(tail_b)
    save_model(b, str(tmp_path / "b.onnx"), path)
    save_model(b, str(tmp_path / "c.onnx"), Source(path))
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    assert (tmp_path / "b.onnx").read_bytes() == (tmp_path / "c.onnx").read_bytes()


def test_nodes_read_belong_to_the_model_read_only():
    path = str(model_path("bert_ts"))
    loaded = load_model_file(path)
    src = Source(path, loaded)
    nf = src.nodes_read(loaded.model)
    assert nf is not None and nf.data == node_fields(loaded.data).data
    copy = onnx.ModelProto()
    copy.CopyFrom(loaded.model)
    assert src.nodes_read(copy) is None  # another model (maybe edited): its bytes are not these
    parsed = Source.parsed(path, loaded.model, loaded.data)
    assert parsed.loaded is None  # the file's bytes are not kept, only the node fields
    assert parsed.nodes_read(loaded.model).data == nf.data
    assert parsed.nodes_read(copy) is None
    assert Source().folder() is None and Source("-").folder() is None


def test_wire_helpers_agree_with_protobuf():
    g = onnx.GraphProto()
    g.node.add().op_type = "Relu" * 40  # a node field longer than 127 bytes
    data = g.SerializeToString()
    body = g.node[0].SerializeToString()
    assert data == bytes((NODE_TAG,)) + length_prefix(len(body)) + body
    assert field_tag(onnx.GraphProto, "node") == bytes((NODE_TAG,))
    assert length_prefix(5) == varint(5) and length_prefix(300) == varint(300)


def test_varint_and_tag_helpers_are_defined_in_wire_only():
    """No other module defines a varint writer or a table of one-byte varints of its own."""
    found = []
    for p in PKG.rglob("*.py"):
        if p.name == "wire.py" and p.parent.name == "io":
            continue
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and ("varint" in node.name or node.name in ("_tag", "field_tag")):
                found.append(f"{p.relative_to(PKG)}: def {node.name}")
            if isinstance(node, ast.ListComp) and "range(128)" in ast.unparse(node).replace("0x80", "128"):
                found.append(f"{p.relative_to(PKG)}: {ast.unparse(node)}")
    assert not found, found
