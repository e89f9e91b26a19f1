"""Writing models: atomic, permissions kept, external data kept external and copied sparsely."""

from __future__ import annotations

import os
import stat

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.io.source import Source
from shapeinfer.io.writer import save_model


def _external_model(folder, size: int = 1 << 30):
    """A MatMul whose weight lies at an offset inside a mostly sparse data file of ``size`` bytes."""
    w = (np.arange(12, dtype=np.float32) / 7).reshape(4, 3)
    offset = size // 2
    with open(folder / "w.bin", "wb") as f:
        f.truncate(size)
        f.seek(offset)
        f.write(w.tobytes())
    t = numpy_helper.from_array(w, "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", str(offset)), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [t],
    )
    path = folder / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path, w


def test_external_data_copied_sparsely_to_another_folder(tmp_path):
    src_dir, out_dir = tmp_path / "src", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    path, w = _external_model(src_dir)
    m = shapeinfer.infer_shapes(str(path))
    save_model(m, str(out_dir / "m.onnx"), str(path))
    copied = out_dir / "w.bin"
    assert copied.stat().st_size == (src_dir / "w.bin").stat().st_size
    assert copied.stat().st_blocks * 512 < 16 * 1024 * 1024  # holes stayed holes
    back = onnx.load(str(out_dir / "m.onnx"))  # loads the external data from the copy
    np.testing.assert_array_equal(numpy_helper.to_array(back.graph.initializer[0]), w)
    assert [d.dim_param or d.dim_value for d in back.graph.output[0].type.tensor_type.shape.dim] == ["n", 3]


def test_same_folder_keeps_references(tmp_path):
    path, _ = _external_model(tmp_path)
    m = shapeinfer.infer_shapes(str(path))
    save_model(m, str(tmp_path / "o.onnx"), str(path))
    back = onnx.load(str(tmp_path / "o.onnx"), load_external_data=False)
    assert back.graph.initializer[0].data_location == TensorProto.EXTERNAL
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "o.onnx", "w.bin"]


def test_written_file_has_normal_permissions_and_no_temp_left(tmp_path):
    path, _ = _external_model(tmp_path)
    out = tmp_path / "o.onnx"
    save_model(onnx.load(str(path), load_external_data=False), str(out), str(path))
    mode = stat.S_IMODE(out.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask
    os.chmod(out, 0o640)
    save_model(onnx.load(str(path), load_external_data=False), str(out), str(path))
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".shapeinfer-")]


def test_model_chunks_parse_back_to_the_same_model(tmp_path):
    """The pieces save_model writes (nodes, initializers and value_info one by one) are the model."""
    from support.common import model_path

    from shapeinfer.io.writer import model_chunks, write_chunks

    m = onnx.load(str(model_path("llama_dynamo")))
    helper.set_model_props(m, {"k": "v"})
    m.functions.add().CopyFrom(
        onnx.helper.make_function("d", "f", ["x"], ["y"], [], [onnx.helper.make_opsetid("", 17)])
    )
    m.graph.sparse_initializer.add().values.CopyFrom(numpy_helper.from_array(np.array([1.0], np.float32), "s"))
    chunks = model_chunks(m)
    assert len(chunks) > len(m.graph.node)
    again = onnx.ModelProto()
    again.ParseFromString(b"".join(chunks))
    assert again.SerializeToString(deterministic=True) == m.SerializeToString(deterministic=True)
    fd = os.open(tmp_path / "m.onnx", os.O_WRONLY | os.O_CREAT)
    write_chunks(fd, chunks)
    os.close(fd)
    assert (tmp_path / "m.onnx").read_bytes() == b"".join(chunks)


def _if_model_with_declared_value_info() -> onnx.ModelProto:
    """An If with inferred subgraphs, and a main-graph value_info entry that inference overrides
    (``h``) next to one it does not know (``stale``): both paths must keep and order them alike."""
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["h", "one"], ["u"]), helper.make_node("Relu", ["u"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", 1, None)],
        [one],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["h"], ["e"])], "else", [], [helper.make_tensor_value_info("e", 1, None)]
    )
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["h"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        value_info=[
            helper.make_tensor_value_info("h", TensorProto.FLOAT, ["n", None]),
            helper.make_tensor_value_info("stale", TensorProto.FLOAT, [2]),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _fixture_models():
    from support.common import MODELS_DIR

    roots = [MODELS_DIR, os.path.join(os.path.dirname(__file__), *[os.pardir] * 1, "models")]
    for root in roots:
        for folder, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(".onnx"):
                    yield os.path.join(folder, f)


def test_written_value_info_bytes_give_the_model_annotate_gives(tmp_path):
    """The command writes annotate's value_info bytes straight into the file
    (annotate_for_writing + graph_tail); the file is the model annotate + save_model writes."""
    from shapeinfer.inference.engine import infer
    from shapeinfer.io.annotate import annotate, annotate_for_writing

    ext_dir = tmp_path / "ext"
    ext_dir.mkdir()
    ext_path, _ = _external_model(ext_dir, size=1 << 16)
    custom = tmp_path / "if.onnx"
    onnx.save(_if_model_with_declared_value_info(), str(custom))
    paths = [*_fixture_models(), str(ext_path), str(custom)]
    assert len(paths) >= 15
    for d in ("a", "b"):  # each its own folder: the external model's data is copied into each
        (tmp_path / d).mkdir()
    written = 0
    for path in paths:
        base = os.path.dirname(path)
        a = annotate(infer(onnx.load(path, load_external_data=False), base_dir=base))
        save_model(a, str(tmp_path / "a" / "m.onnx"), path)
        b, tail = annotate_for_writing(infer(onnx.load(path, load_external_data=False), base_dir=base))
        save_model(b, str(tmp_path / "b" / "m.onnx"), Source(path, graph_tail=tail))
        ma = onnx.load(str(tmp_path / "a" / "m.onnx"), load_external_data=False)
        mb = onnx.load(str(tmp_path / "b" / "m.onnx"), load_external_data=False)
        written += len(ma.graph.value_info)
        assert ma == mb, path
    assert written > 1000
    names = [vi.name for vi in mb.graph.value_info]
    assert names[:2] == ["h", "stale"]  # the input's entries where they were, then the new ones
    h = mb.graph.value_info[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in h] == ["n", 3]  # its type refined in place
    then_g = next(a.g for a in mb.graph.node[1].attribute if a.name == "then_branch")
    assert [vi.name for vi in then_g.value_info] == ["u"]


def test_one_data_file_named_two_ways_is_copied_once(tmp_path):
    """Tensors naming one data file as ``b.data`` and ``./b.data`` (onnx and onnxruntime load
    the model) planned two copies onto ``out/b.data``: the second was refused as a file that
    "appeared while the model was written". The file is copied once, each reference stays as
    the model spells it, and the written model computes what the input does."""
    from support.common import run_cli

    ort = pytest.importorskip("onnxruntime")
    ws = [numpy_helper.from_array((np.arange(64, dtype=np.float32) / k).reshape(8, 8), f"w{k}") for k in (3, 5)]
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w3"], ["h"]), helper.make_node("MatMul", ["h", "w5"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        ws,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    data = b""
    for t, location in zip(m.graph.initializer, ("b.data", "./b.data")):
        onnx.external_data_helper.set_external_data(t, location, offset=len(data), length=len(t.raw_data))
        data += t.raw_data
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
    (tmp_path / "in" / "b.data").write_bytes(data)
    src = str(tmp_path / "in" / "m.onnx")
    onnx.save(m, src)
    out = str(tmp_path / "out" / "a.onnx")
    r = run_cli(src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["a.onnx", "b.data"]
    inits = onnx.load(out, load_external_data=False).graph.initializer
    assert [{e.key: e.value for e in t.external_data}["location"] for t in inits] == ["b.data", "./b.data"]
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    run = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0] for p in (src, out)]
    np.testing.assert_array_equal(run[1], run[0])
