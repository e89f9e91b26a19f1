"""io/edit.py: optimize's load (read_for_editing) and save (Editing.annotate, Editing.written)."""

from __future__ import annotations

import os

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.common import model_path
from test_output_data_inputs import save_external

from shapeinfer.inference.engine import infer
from shapeinfer.io.edit import read_for_editing
from shapeinfer.io.onnxio import load_model_file
from shapeinfer.io.source import Source


def test_a_file_read_for_editing_keeps_its_folder_data_and_node_bytes(tmp_path):
    path = save_external(str(tmp_path), one_file=False)
    m, editing = read_for_editing(path)
    assert editing.path == path and editing.folder == str(tmp_path)
    assert sorted(os.path.basename(f) for f in editing.data_inputs) == ["dead", "w"]
    assert not editing.inline
    assert editing.source is not None and editing.source.nodes_read(m) is not None
    assert [n.op_type for n in m.graph.node] == ["MatMul"]


def test_a_model_in_memory_is_copied_and_has_no_file():
    given = onnx.load(str(model_path("bert_ts")))
    before = given.SerializeToString()
    m, editing = read_for_editing(given)
    assert m is not given
    m.graph.node.pop()
    assert given.SerializeToString() == before
    assert (editing.path, editing.folder, editing.source, editing.inline, editing.data_inputs) == (
        None,
        None,
        None,
        False,
        [],
    )


def test_a_source_read_in_full_is_handed_over_not_read_again():
    path = str(model_path("bert_ts"))
    loaded = load_model_file(path)
    m, editing = read_for_editing(Source(path, loaded))
    assert m is loaded.model
    assert editing.inline and editing.data_inputs == []


def _relu_named_not_utf8() -> bytes:
    """A one-Relu model whose node is named ``b"nodename\\xff"`` (not UTF-8), serialised."""
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"], name="nodename1")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    return data.replace(b"nodename1", b"nodename\xff")


def test_names_that_are_not_utf8_are_decoded_and_the_bytes_not_used(tmp_path):
    data = _relu_named_not_utf8()
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    m, editing = read_for_editing(str(path))
    assert m.graph.node[0].name == "nodename\\xff"
    assert editing.source is None  # the node bytes read are not the model's any more


@pytest.mark.parametrize("changed", [False, True])
def test_the_save_side_keeps_entries_and_says_what_is_serialised(changed):
    given = onnx.load(str(model_path("bert_ts")))
    kept = given.graph.node[-1].input[0]  # a tensor the node reads
    given.graph.value_info.append(h.make_empty_tensor_value_info(kept))
    given.graph.value_info[-1].doc_string = "kept"
    m, editing = read_for_editing(given)
    del m.graph.value_info[:]  # as the passes do
    editing.annotate(m, infer(m))
    assert any(vi.name == kept and vi.doc_string == "kept" for vi in m.graph.value_info)
    source = editing.written(changed=changed, node_fields=lambda: b"nodes")
    assert source.node_fields == (None if changed else b"nodes")
    assert (source.value_info_fields is None) == changed
    if not changed:
        parsed = onnx.GraphProto.FromString(source.value_info_fields)
        assert [vi.name for vi in parsed.value_info] == [vi.name for vi in m.graph.value_info]


def _external_with_bytes_location(folder) -> str:
    """A model whose one weight is external data at a location that is not UTF-8."""
    import numpy as np
    from onnx import numpy_helper

    folder.mkdir(exist_ok=True)
    (folder / "data.bin").write_bytes(np.ones(4, np.float32).tobytes())
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = onnx.TensorProto.EXTERNAL
    w.external_data.add(key="location", value="data.bin")
    g = h.make_graph(
        [h.make_node("Add", ["x", "w"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, [4])],
        [w],
    )
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    path = folder / "m.onnx"
    path.write_bytes(data.replace(b"data.bin", b"data.b\xffn"))
    return str(path)


@pytest.mark.parametrize("given", ["path", "memory"])
def test_a_location_that_is_not_utf8_is_refused_however_the_model_comes(tmp_path, given):
    """Escaped, the location would name another file (a decoy there would be the weights): the
    model read from memory slipped past the check the file got (the diff review)."""
    from shapeinfer.io.external import ExternalDataInvalid

    path = _external_with_bytes_location(tmp_path / "m")
    model = path if given == "path" else onnx.load(path, load_external_data=False)
    with pytest.raises(ExternalDataInvalid, match="not valid UTF-8"):
        read_for_editing(model)


def test_optimize_from_standard_input_with_a_name_that_is_not_utf8(tmp_path):
    """`optimize -` of such a model raised TypeError (no external data list for standard input)."""
    import subprocess
    import sys

    out = tmp_path / "o.onnx"
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer", "optimize", "-", "-o", str(out)],
        input=_relu_named_not_utf8(),
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    assert onnx.load(str(out)).graph.node[0].name == "nodename\\xff"
