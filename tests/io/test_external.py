"""External data: unsafe locations are refused before anything is opened; a missing file is one
error naming it; weights are never read."""

from __future__ import annotations

import errno
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import run_cli

import shapeinfer
from testkit.external_models import TARGET, WEIGHT, entries, mark_external, save_reshape_matmul


def _external(t: TensorProto, location: str, offset: int = 0) -> TensorProto:
    raw = t.raw_data or numpy_helper.to_array(t).tobytes()
    return mark_external(t, entries(location, offset, len(raw)))


def _model(folder, location: str, write: bool = True):
    """The external_models model, target and weight one after the other in ``location``."""
    if write:
        data = folder / location
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_bytes(TARGET.tobytes() + WEIGHT.tobytes())
    path = folder / "m.onnx"
    save_reshape_matmul(str(path), entries(location, 0, TARGET.nbytes), entries(location, TARGET.nbytes, WEIGHT.nbytes))
    return path


def cli(*args):
    return run_cli(*args, timeout=120)


def test_small_external_values_are_read(tmp_path):
    r = shapeinfer.infer(str(_model(tmp_path, "data/weights.bin")))
    assert r.facts["target"].value == (-1, 6)
    assert str(r.dims("y")) == "(Expr('n'), 100)"


@pytest.mark.parametrize(
    "location,needle",
    [("/etc/passwd", "absolute paths are refused"), ("../outside.bin", "leaving the model's folder")],
)
def test_unsafe_locations_are_refused(tmp_path, location, needle):
    folder = tmp_path / "model"
    folder.mkdir()
    path = _model(folder, location, write=False)
    r = cli(str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert needle in r.stderr and str(path) in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_symlink_leaving_the_folder_is_refused(tmp_path):
    outside = tmp_path / "secret.bin"
    outside.write_bytes(np.array([-1, 6], np.int64).tobytes() + np.ones((6, 100), np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(outside, folder / "link.bin")
    path = _model(folder, "link.bin", write=False)
    r = cli(str(path))
    assert r.returncode == 2 and "resolves outside the model's folder" in r.stderr


def test_missing_file_is_one_error_naming_it(tmp_path):
    path = _model(tmp_path, "gone.bin", write=False)
    r = shapeinfer.infer(str(path))
    # one line for the file (the model cannot run), not one per tensor stored in it
    assert [(d.code, d.severity) for d in r.diagnostics] == [("E003", "error")]
    assert "'gone.bin' is missing" in r.diagnostics[0].message and "2 tensors" in r.diagnostics[0].message
    assert r.facts["target"].value is None
    assert r.dims("w") == (6, 100)
    out = cli(str(path))
    assert out.returncode == 0 and out.stdout.count("E003") == 1 and "gone.bin" in out.stdout
    assert cli(str(path), "--fail-on", "error").returncode == 1
    lint = cli("lint", str(path), "--select", "E003")
    assert lint.returncode == 1 and lint.stdout.count("E003") == 1 and "[error]" in lint.stdout


def test_the_scan_skips_only_ops_whose_schemas_hold_no_tensors():
    from onnx import AttributeProto as A

    from shapeinfer.io.external import TENSOR_ATTRIBUTE_OPS, external_locations

    kinds = {A.TENSOR, A.SPARSE_TENSOR, A.TENSORS, A.SPARSE_TENSORS, A.GRAPH, A.GRAPHS}
    with_tensors = {
        s.name
        for s in onnx.defs.get_all_schemas_with_history()
        if s.domain in ("", "ai.onnx") and any(a.type in kinds for a in s.attributes.values())
    }
    assert with_tensors == TENSOR_ATTRIBUTE_OPS

    # external tensors in a Constant inside an If branch, a ConstantOfShape value and a custom
    # op's attribute are all found
    def ext_const(name, loc):
        return helper.make_node(
            "Constant", [], [name], value=_external(numpy_helper.from_array(np.array([2], np.int64)), loc)
        )

    branch = helper.make_graph(
        [ext_const("c", "in_if.bin")], "b", [], [helper.make_tensor_value_info("c", TensorProto.INT64, [1])]
    )
    fill = _external(numpy_helper.from_array(np.array([0], np.int64)), "fill.bin")
    custom = _external(numpy_helper.from_array(np.array([1.0], np.float32)), "custom.bin")
    g = helper.make_graph(
        [
            helper.make_node("If", ["cond"], ["o"], then_branch=branch, else_branch=branch),
            helper.make_node("ConstantOfShape", ["o"], ["z"], value=fill),
            helper.make_node("Op", ["z"], ["y"], domain="custom.domain", t=custom),
            helper.make_node("Add", ["y", "y"], ["w"]),
        ],
        "g",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("w", TensorProto.INT64, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.domain", 1)])
    assert sorted(external_locations(m)) == ["custom.bin", "fill.bin", "in_if.bin"]


def _failing_after_one_chunk(copy, err: int):
    """``copy`` for its first call, then OSError(err): a kernel copy giving up part way."""
    calls = []

    def first_then_fail(src: int, dst: int, pos: int, count: int) -> int:
        calls.append(pos)
        if len(calls) > 1:
            raise OSError(err, os.strerror(err))
        return copy(src, dst, pos, min(count, 4096))

    return first_then_fail


@pytest.mark.parametrize("kernel", ["none", "copy_file_range", "sendfile", "copy_file_range fails part way"])
def test_sparse_copy_gives_the_same_bytes_by_every_copy_path(tmp_path, monkeypatch, kernel):
    from shapeinfer.io import datacopy as external

    paths = {f.__name__.strip("_"): (f, errs) for f, errs in external._KERNEL_COPIES}
    if kernel == "none":
        chosen = []
    elif kernel == "copy_file_range fails part way":
        if "copy_file_range" not in paths:
            pytest.skip("no copy_file_range here")
        f, errs = paths["copy_file_range"]
        chosen = [(_failing_after_one_chunk(f, errno.EXDEV), errs)]  # the rest by pread/pwrite
    elif kernel not in paths:
        pytest.skip(f"no {kernel} here")
    else:
        chosen = [paths[kernel]]
    monkeypatch.setattr(external, "_KERNEL_COPIES", chosen)
    data = np.random.default_rng(0).integers(0, 256, 3 << 16, dtype=np.uint8).tobytes()
    src = tmp_path / "src.bin"
    with open(src, "wb") as f:
        f.write(data[: 1 << 16])
        f.seek(1 << 20)  # a hole
        f.write(data[1 << 16 :])
    dst = tmp_path / "dst.bin"
    with open(src, "rb") as s, open(dst, "wb") as d:
        external.sparse_copy(s.fileno(), d.fileno())
    assert dst.read_bytes() == src.read_bytes()


def test_the_scan_finds_training_graphs_and_untyped_tensor_attributes():
    """External tensors in ``training_info`` graphs (initialization and algorithm, subgraphs
    included) and in a tensor attribute whose ``type`` is not set (onnx reads ``t`` all the
    same) are found."""
    from shapeinfer.io.external import external_locations

    def ext_const(name, loc):
        return helper.make_node(
            "Constant", [], [name], value=_external(numpy_helper.from_array(np.array([2], np.int64)), loc)
        )

    untyped = ext_const("u", "untyped.bin")
    untyped.attribute[0].ClearField("type")
    g = helper.make_graph(
        [untyped, helper.make_node("Add", ["x", "u"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [1])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    ti = m.training_info.add()
    ti.initialization.initializer.append(_external(numpy_helper.from_array(np.array([1.0], np.float32)), "init.bin"))
    branch = helper.make_graph(
        [ext_const("c", "in_algo_if.bin")], "b", [], [helper.make_tensor_value_info("c", TensorProto.INT64, [1])]
    )
    ti.algorithm.node.append(helper.make_node("If", ["cond"], ["o"], then_branch=branch, else_branch=branch))
    assert sorted(external_locations(m)) == ["in_algo_if.bin", "init.bin", "untyped.bin"]
