"""``shapeinfer.open`` and the Document (issue 33): one model from load to write, whatever it
was opened from, and the one write path every front end shares.

Checked against the front ends themselves: a Document's write is the bytes the command writes,
and its refusals are the command's, the API's and the drop-ins' (same text, nothing written).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import run_cli
from support.files import folder_hashes, save_external

import shapeinfer
from shapeinfer.document import Document
from shapeinfer.inference.bindings import BindError
from shapeinfer.io.onnxio import ModelLoadError
from shapeinfer.io.userfiles import WriteRefused

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BERT = os.path.join(ROOT, "examples", "models", "bert_ts.onnx")


def _model() -> onnx.ModelProto:
    """x[b, 8] -> Reshape to [b*8] via Shape arithmetic -> Relu: symbolic dims, a guard-free
    fold for optimize, and value_info with doc_string and metadata to keep."""
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
        helper.make_node("Shape", ["h"], ["s"], name="shape"),
        helper.make_node("ReduceProd", ["s"], ["n"], name="prod", keepdims=1),
        helper.make_node("Reshape", ["h", "n"], ["flat"], name="reshape"),
        helper.make_node("Relu", ["flat"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes,
        "doc_test",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w],
    )
    vi = helper.make_tensor_value_info("h", TensorProto.FLOAT, None)
    vi.doc_string = "kept"
    g.value_info.append(vi)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _dims(result, name: str) -> list:
    return [str(d) for d in result.dims(name)]


# ---------------------------------------------------------------- every kind of source


def _sources(tmp_path):
    """The model of ``_model()`` as every kind of source open takes (a name -> the source)."""
    import pathlib

    m = _model()
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    out = {"str": path, "pathlike": pathlib.Path(path), "bytes": m.SerializeToString(), "proto": m}
    out["bytearray"] = bytearray(out["bytes"])
    ir = pytest.importorskip("onnx_ir")
    out["onnx_ir"] = ir.serde.deserialize_model(m)
    gs = pytest.importorskip("onnx_graphsurgeon")
    out["graphsurgeon"] = gs.import_onnx(m)
    return out


def test_every_kind_of_source_infers_and_annotates_alike(tmp_path):
    sources = _sources(tmp_path)
    want = shapeinfer.open(sources["str"])
    r0 = want.infer()
    assert _dims(r0, "flat") == ["8*b"] and _dims(r0, "y") == ["8*b"]
    expected = {vi.name: vi.type for vi in want.annotated().graph.value_info}
    for kind, src in sources.items():
        doc = shapeinfer.open(src)
        assert isinstance(doc, Document)
        result = doc.infer(bind={"b": 3}) if kind == "bytes" else doc.infer()
        if kind == "bytes":  # a binding: the graph input carries it, the dims are ints
            assert _dims(result, "y") == ["24"]
            assert doc.annotated().graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3
            continue
        assert _dims(result, "y") == ["8*b"], kind
        got = {vi.name: vi.type for vi in doc.annotated().graph.value_info}
        assert {k: got.get(k) for k in expected} == expected, kind  # onnx_ir adds an initializer's entry
        assert doc.path == (os.fspath(src) if kind in ("str", "pathlike") else None), kind


def test_standard_input_is_a_source(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_model(), str(src))
    out = tmp_path / "out.onnx"
    code = "import sys, shapeinfer; d = shapeinfer.open('-'); d.write(sys.argv[1]); print(d.name)"
    with open(src, "rb") as fh:
        r = subprocess.run([sys.executable, "-c", code, str(out)], stdin=fh, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "<stdin>" or r.stdout.strip() == "-"
    cli = tmp_path / "cli.onnx"
    assert run_cli(str(src), "-o", str(cli)).returncode == 0
    assert out.read_bytes() == cli.read_bytes()  # the same model whatever it was read from


def test_what_is_no_model_is_a_type_error_and_a_bad_file_a_load_error(tmp_path):
    with pytest.raises(TypeError, match="as the model, not int"):
        shapeinfer.open(42)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff\xff not a model")
    with pytest.raises(ModelLoadError):
        shapeinfer.open(str(bad))


# ---------------------------------------------------------------- read once, never modified


@pytest.mark.parametrize("lean", [False, True])
def test_open_reads_the_file_once(tmp_path, monkeypatch, lean):
    import shapeinfer.io.onnxio as onnxio

    path = str(tmp_path / "m.onnx")
    onnx.save(_model(), path)
    reads = []
    real = onnxio.read_input  # (every read of a model file goes through it)

    def counting(p, *a, **k):
        reads.append(p)
        return real(p, *a, **k)

    monkeypatch.setattr(onnxio, "read_input", counting)
    doc = shapeinfer.open(path, lean=lean)
    doc.infer()
    doc.annotated()
    doc.infer(input_shapes={"x": [2, 8]})  # afresh: parsed again from the bytes read
    doc.write(str(tmp_path / "a.onnx"))
    doc.optimize().write(str(tmp_path / "b.onnx"))
    assert doc.model.graph.name == "doc_test"
    assert reads == [path]


def test_the_callers_model_proto_is_never_modified(tmp_path):
    m = _model()
    before = m.SerializeToString()
    doc = shapeinfer.open(m)
    doc.infer()
    doc.annotated()
    doc.infer(input_shapes={"x": [2, 8]})
    doc.annotated()
    doc.infer(bind={"b": 5})
    doc.write(str(tmp_path / "a.onnx"))
    doc.optimize(bind={"b": 2}).write(str(tmp_path / "b.onnx"))
    shapeinfer.infer_shapes(m, bind={"b": 4})
    shapeinfer.optimize(m)
    shapeinfer.infer(m, input_shapes={"x": [3, 8]})
    from shapeinfer.compat.onnx import infer_shapes as onnx_infer_shapes
    from shapeinfer.compat.onnxruntime import SymbolicShapeInference

    onnx_infer_shapes(m)
    SymbolicShapeInference.infer_shapes(m)
    assert m.SerializeToString() == before
    assert doc.model is m  # the caller's own, as given


def test_a_contradicted_binding_is_refused_before_writing(tmp_path):
    doc = shapeinfer.open(BERT)
    doc.infer(bind={"seq": 100000})
    assert doc.result.contradicted()
    with pytest.raises(BindError, match="seq"):
        doc.write(str(tmp_path / "out.onnx"))
    assert not (tmp_path / "out.onnx").exists()


# ---------------------------------------------------------------- the one write


def test_write_is_the_bytes_infer_dash_o_writes(tmp_path):
    for lean in (False, True):
        out = tmp_path / f"doc{lean}.onnx"
        doc = shapeinfer.open(BERT, lean=lean)
        doc.infer(bind={"seq": 7})
        doc.write(str(out))
        cli = tmp_path / "cli.onnx"
        r = run_cli(BERT, "--bind", "seq=7", "-o", str(cli))
        assert r.returncode == 0, r.stderr
        assert out.read_bytes() == cli.read_bytes(), lean


def test_optimize_write_is_the_bytes_optimize_dash_o_writes(tmp_path):
    doc_out, cli_out = tmp_path / "doc.onnx", tmp_path / "cli.onnx"
    optimized = shapeinfer.open(BERT).optimize()
    assert optimized.report.nodes_after < optimized.report.nodes_before
    optimized.write(str(doc_out))
    r = run_cli("optimize", BERT, "-o", str(cli_out))
    assert r.returncode == 0, r.stderr
    assert doc_out.read_bytes() == cli_out.read_bytes()
    # and the model in memory is the one written
    assert onnx.load(str(doc_out)).SerializeToString() == optimized.model.SerializeToString()


@pytest.fixture
def beside_other(tmp_path):
    """``src/a.onnx`` with its ``model.data``, and ``dst/`` holding another model's ``model.data``."""
    a = save_external(tmp_path / "src" / "a.onnx", 1.0)
    save_external(tmp_path / "dst" / "other.onnx", 2.0)
    return tmp_path, a, str(tmp_path / "dst" / "out.onnx")


def _refusal(run) -> str:
    with pytest.raises(WriteRefused) as e:
        run()
    return str(e.value)


def test_every_front_end_refuses_an_existing_data_file_name_alike(beside_other):
    from shapeinfer.compat.onnx import infer_shapes_path

    root, a, out = beside_other
    before = folder_hashes(root)
    doc = shapeinfer.open(a)
    with pytest.raises(WriteRefused):
        doc.check_write(out)
    line = _refusal(lambda: doc.write(out))
    assert "dst/model.data" in line and line.startswith(out) and "not written" in line
    assert _refusal(lambda: shapeinfer.open(a, lean=True).write(out)) == line
    assert _refusal(lambda: shapeinfer.open(a).optimize().write(out)) == line
    assert _refusal(lambda: infer_shapes_path(a, out)) == line
    for command in ([], ["optimize"]):
        r = run_cli(*command, a, "-o", out)
        assert r.returncode == 1, r.stderr
        assert r.stderr.strip().splitlines()[-1].startswith(f"shapeinfer: {line}; --external-data NAME")
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.compat.onnxruntime", "--input", a, "--output", out],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and r.stderr.strip() == f"error: {line}", r.stderr
    assert folder_hashes(root) == before
    # named otherwise, it is written, and nothing else changes
    doc.write(out, external_data="out.data")
    assert set(folder_hashes(root)) - set(before) == {"dst/out.onnx", "dst/out.data"}


def test_every_front_end_refuses_a_missing_data_file_alike(tmp_path):
    from shapeinfer.compat.onnx import infer_shapes_path

    a = save_external(tmp_path / "m" / "a.onnx", 1.0)
    os.remove(tmp_path / "m" / "model.data")
    (tmp_path / "away").mkdir()
    out = str(tmp_path / "away" / "out.onnx")
    before = folder_hashes(tmp_path)
    doc = shapeinfer.open(a)
    line = _refusal(lambda: doc.write(out))
    assert "'model.data' is missing" in line and "not written" in line
    assert _refusal(lambda: doc.check_write(out)) == line
    assert _refusal(lambda: shapeinfer.open(a).optimize().write(out)) == line
    assert _refusal(lambda: infer_shapes_path(a, out)) == line
    for command in ([], ["optimize"]):
        r = run_cli(*command, a, "-o", out)
        assert r.returncode == 1
        assert r.stderr.strip().splitlines()[-1] == f"shapeinfer: {line}; --force writes it anyway"
    assert folder_hashes(tmp_path) == before
    doc.write(out, force=True)  # asked for: written with its references as they are
    assert set(folder_hashes(tmp_path)) - set(before) == {"away/out.onnx"}


def test_lint_fix_refuses_through_the_same_write(tmp_path):
    """``lint --fix`` writes through the Document: a fixed copy whose data file would replace
    another's is refused with the same words, and nothing is written."""
    m = _model()
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones((8, 8), np.float32), "w"))
    noop = helper.make_node("Reshape", ["x0", "t"], ["x"], name="noop")
    m.graph.node.insert(0, noop)
    m.graph.initializer.append(numpy_helper.from_array(np.array([2, 8], np.int64), "t"))
    m.graph.input[0].CopyFrom(helper.make_tensor_value_info("x0", TensorProto.FLOAT, [2, 8]))
    os.makedirs(tmp_path / "m")
    src = str(tmp_path / "m" / "a.onnx")
    onnx.save(m, src, save_as_external_data=True, location="a.data", size_threshold=128)
    os.remove(tmp_path / "m" / "a.data")
    line = _refusal(lambda: shapeinfer.open(src).optimize(passes=["fold-shapes"]).write(src[:-5] + ".fixed.onnx"))
    before = folder_hashes(tmp_path)
    r = run_cli("lint", src, "--fix")
    assert f"--fix: {line}; nothing written" in r.stderr, r.stderr
    assert folder_hashes(tmp_path) == before


def test_onnxruntime_drop_in_save_as_external_data_never_replaces_a_file(tmp_path):
    """``--save_as_external_data`` saves as onnxruntime's tool does (onnx.save_model with its
    flags), but a data file whose name is taken in the output's folder is refused, nothing
    written; in place, the input's own data file may be rewritten."""
    a = save_external(tmp_path / "src" / "a.onnx", 1.0, location="w")
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "w").write_bytes(b"another model's weights")
    out = str(tmp_path / "dst" / "out.onnx")
    before = folder_hashes(tmp_path)
    cmd = [sys.executable, "-m", "shapeinfer.compat.onnxruntime", "--input", a, "--output", out]
    flags = ["--save_as_external_data", "--external_data_size_threshold", "16"]
    r = subprocess.run([*cmd, *flags], capture_output=True, text=True)
    assert r.returncode == 1 and "'w' would replace" in r.stderr and "not written" in r.stderr, r.stderr
    assert folder_hashes(tmp_path) == before and not [p for p in os.listdir(tmp_path / "dst") if p.startswith(".")]
    os.remove(tmp_path / "dst" / "w")
    r = subprocess.run([*cmd, *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "dst")) == ["out.onnx", "w"]
    x = np.ones((2, 8), np.float32)
    import onnxruntime as ort

    got = ort.InferenceSession(out).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, np.full((2, 8), 8.0, np.float32))
    # in place: the input's own data file is rewritten, nothing else appears
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.compat.onnxruntime", "--input", a, "--output", a, *flags],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "src")) == ["a.onnx", "w"]
    np.testing.assert_array_equal(ort.InferenceSession(a).run(None, {"x": x})[0], np.full((2, 8), 8.0, np.float32))


def _ort_drop_in(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "shapeinfer.compat.onnxruntime", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_onnxruntime_drop_in_save_as_external_data_checks_the_output_as_every_write(tmp_path):
    """``--save_as_external_data`` skipped the checks of every other model output: ``--output``
    naming the input's data file replaced it (exit 0; the input no longer loaded), and an
    ``--output`` that is a folder left the new data file behind. Both are refused as the plain
    write refuses them, one line, nothing written, the input running as before."""
    import onnxruntime as ort

    a = save_external(tmp_path / "a.onnx", 1.0, location="a.data")
    (tmp_path / "out" / "m.onnx").mkdir(parents=True)
    x = np.ones((2, 8), np.float32)
    expected = ort.InferenceSession(a).run(None, {"x": x})[0]
    before = folder_hashes(tmp_path)
    flags = ["--save_as_external_data", "--all_tensors_to_one_file", "--external_data_size_threshold", "16"]
    r = _ort_drop_in("--input", a, "--output", str(tmp_path / "a.data"), *flags, "--external_data_location", "new.data")
    assert r.returncode == 1 and "would overwrite an input of this run" in r.stderr, r.stderr
    r = _ort_drop_in("--input", a, "--output", str(tmp_path / "out" / "m.onnx"), *flags)
    assert r.returncode == 1 and "it is a folder" in r.stderr, r.stderr
    assert folder_hashes(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["a.data", "a.onnx", "out"] and os.listdir(tmp_path / "out") == ["m.onnx"]
    np.testing.assert_array_equal(ort.InferenceSession(a).run(None, {"x": x})[0], expected)


@pytest.mark.parametrize("failure", [OSError(5, "Input/output error"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_onnxruntime_drop_in_in_place_keeps_the_input_when_the_models_write_fails(tmp_path, monkeypatch, failure):
    """In place with ``--save_as_external_data``, the input's data file was replaced before the
    model: when the model's rename failed, the old model read the new data file, laid out
    otherwise (other weights, silently). The old data file is put back: both files as they
    were, nothing left behind, the model computing what it did."""
    import onnxruntime as ort

    from shapeinfer.compat import onnxruntime as drop_in

    ws = [numpy_helper.from_array((np.arange(64, dtype=np.float32) / k).reshape(8, 8), f"w{k}") for k in (3, 5, 7)]
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w3"], ["h"]),
            helper.make_node("MatMul", ["h", "w5"], ["i"]),
            helper.make_node("MatMul", ["i", "w7"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        ws,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    data = b""
    for t in reversed(m.graph.initializer):  # a layout other than onnx's save gives
        onnx.external_data_helper.set_external_data(t, "m.data", offset=len(data), length=len(t.raw_data))
        data += t.raw_data
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
    (tmp_path / "m.data").write_bytes(data)
    src = str(tmp_path / "m.onnx")
    onnx.save(m, src)
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    expected = ort.InferenceSession(src).run(None, {"x": x})[0]
    before = folder_hashes(tmp_path)
    real_replace = os.replace

    def replace(a, b, **kw):
        if b == src:
            raise failure
        return real_replace(a, b, **kw)

    monkeypatch.setattr(os, "replace", replace)
    argv = ["--input", src, "--output", src, "--save_as_external_data", "--all_tensors_to_one_file"]
    argv += ["--external_data_location", "m.data", "--external_data_size_threshold", "16"]
    if isinstance(failure, KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            drop_in.main(argv)
    else:
        assert drop_in.main(argv) == 1
    monkeypatch.undo()
    assert folder_hashes(tmp_path) == before
    np.testing.assert_array_equal(ort.InferenceSession(src).run(None, {"x": x})[0], expected)
    assert drop_in.main(argv) == 0  # and without the failure, written in place
    assert sorted(os.listdir(tmp_path)) == ["m.data", "m.onnx"]
    np.testing.assert_array_equal(ort.InferenceSession(src).run(None, {"x": x})[0], expected)
