"""Issue 21 case 7: every file a model's external data names is an input of the run. ``-o`` of
``shapeinfer``, ``optimize -o`` and a ``lint -o`` report onto one of them (directly, through a
hard link or a symlink in the folder) are refused like ``-o`` onto the model itself (exit 2,
one line), ``--in-place`` or not, and nothing is written: the weights stay intact and the model
still runs in onnxruntime with them."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_external_hostile import check_clean, run_batch

W = np.arange(12, dtype=np.float32).reshape(3, 4)
DEAD = np.full((5,), 7.0, dtype=np.float32)


def save_external(folder: str, one_file: bool = True) -> str:
    """``folder/m.onnx``: ``y = x @ w`` with x ``[N, 3]``, plus an initializer ``dead`` that no
    node reads (dce removes it); every tensor saved as external data (``data.bin``, or one file
    per tensor, named after it, when not ``one_file``)."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(DEAD, "dead")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(folder, "m.onnx")
    onnx.save_model(
        m,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=one_file,
        location="data.bin" if one_file else None,
        size_threshold=0,
    )
    return path


def snapshot(folder) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.isfile(p) and not name.startswith("."):
            with open(p, "rb") as f:
                out[name] = f.read()
    return out


def runs_with_its_weights(path: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x @ W)


def test_outputs_onto_external_data_are_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    m = save_external(str(folder))
    data = str(folder / "data.bin")
    os.link(data, folder / "hard.bin")
    os.symlink("data.bin", folder / "link.bin")
    before = snapshot(folder)
    assert set(before) == {"m.onnx", "data.bin", "hard.bin", "link.bin"}
    jobs = [
        [m, "-o", data],
        [m, "-o", data, "--in-place"],
        [m, "-o", str(folder / "hard.bin")],
        [m, "-o", str(folder / "link.bin")],
        [m, "--bind", "N=2", "-o", data],
        ["optimize", m, "-o", data],
        ["optimize", m, "-o", data, "--in-place"],
        ["optimize", m, "-o", str(folder / "hard.bin")],
        ["optimize", m, "-o", str(folder / "link.bin")],
        ["lint", m, "-o", data],
        ["lint", m, "-o", str(folder / "hard.bin")],
        ["lint", m, "--format", "json", "-o", str(folder / "link.bin")],
    ]
    res = run_batch([{"args": a, "cwd": str(tmp_path)} for a in jobs], [str(tmp_path)])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2, r
        assert "would overwrite an input of this run" in r["stderr"], r
        assert "external data of an input model" in r["stderr"], r
        assert "wrote" not in r["stdout"], r
    assert snapshot(folder) == before
    runs_with_its_weights(m)


def test_optimize_protects_data_of_tensors_it_removes(tmp_path):
    """dce drops ``dead``: the written model no longer names its file, which is still an input."""
    folder = tmp_path / "model"
    folder.mkdir()
    m = save_external(str(folder), one_file=False)
    before = snapshot(folder)
    assert set(before) == {"m.onnx", "w", "dead"}
    res = run_batch(
        [{"args": ["optimize", m, "-o", str(folder / name)], "cwd": str(tmp_path)} for name in ("dead", "w")],
        [str(tmp_path)],
    )
    for r in res:
        check_clean(r)
        assert r["rc"] == 2 and "external data of an input model" in r["stderr"], r
    assert snapshot(folder) == before
    runs_with_its_weights(m)


def test_other_outputs_beside_the_data_are_still_written(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    m = save_external(str(folder))
    data_before = snapshot(folder)["data.bin"]
    jobs = [
        [m, "-o", str(folder / "inferred.onnx")],
        ["optimize", m, "-o", str(folder / "optimized.onnx")],
        ["lint", m, "-o", str(folder / "report.txt")],
    ]
    res = run_batch([{"args": a, "cwd": str(tmp_path)} for a in jobs], [str(tmp_path)])
    for r in res:
        check_clean(r)
        assert r["rc"] == 0, r
    after = snapshot(folder)
    assert after["data.bin"] == data_before
    assert {"inferred.onnx", "optimized.onnx", "report.txt"} <= set(after)
    for name in ("m.onnx", "inferred.onnx", "optimized.onnx"):
        runs_with_its_weights(str(folder / name))


def test_save_model_refuses_the_sources_data_files(tmp_path):
    from shapeinfer.io.onnxio import load_model_file
    from shapeinfer.io.source import Source
    from shapeinfer.io.userfiles import UserFileError
    from shapeinfer.io.writer import save_model

    folder = tmp_path / "model"
    folder.mkdir()
    m = save_external(str(folder))
    before = snapshot(folder)
    loaded = load_model_file(m)
    for source, in_place in ((Source(m, loaded), False), (m, False), (m, True)):
        with pytest.raises(UserFileError, match="external data of an input model"):
            save_model(loaded.model, str(folder / "data.bin"), source, in_place=in_place)
    assert snapshot(folder) == before
