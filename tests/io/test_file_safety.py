"""A write never touches a file it did not create (issue 33, the README's write contract).

Each case hashes every file under the test's folder (hidden ones too: a temporary file left
behind is a change) before and after the run: nothing but the outputs named may appear or
change, and a refused write leaves no file at all. The folders hold the situations a user
meets: another model's ``model.data`` where ``-o`` would copy this one's, a model whose data
file is missing, a ``--fix`` copy from an earlier run.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import run_cli
from support.files import folder_hashes, save_external

from shapeinfer.io.userfiles import UserFileError, WriteRefused

ort = pytest.importorskip("onnxruntime")


def _changes(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """The files that appeared, changed or went."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def _run(path: str, b: int = 2) -> np.ndarray:
    x = np.arange(b * 8, dtype=np.float32).reshape(b, 8)
    name = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {name: x})[0]


@pytest.fixture
def two_models(tmp_path):
    """``src/a.onnx`` (weights 1) and, in ``dst/``, another model with its own ``model.data``
    (weights 2): the data file name onnx's save gives every model by default."""
    a = save_external(tmp_path / "src" / "a.onnx", 1.0)
    other = save_external(tmp_path / "dst" / "other.onnx", 2.0)
    return tmp_path, a, other


@pytest.mark.parametrize("command", [[], ["optimize"]], ids=["infer", "optimize"])
def test_output_beside_another_models_data_file_is_refused(two_models, command):
    root, a, other = two_models
    expected = _run(other)
    before = folder_hashes(root)
    out = str(root / "dst" / "out.onnx")
    r = run_cli(*command, a, "-o", out)
    assert r.returncode == 1, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("shapeinfer: ") and "not written" in line and "dst/model.data" in line
    assert "--external-data" in line and "Traceback" not in r.stderr
    assert _changes(before, folder_hashes(root)) == set()  # no file written, none replaced, no temporary left
    np.testing.assert_array_equal(_run(other), expected)


@pytest.mark.parametrize("command", [[], ["optimize"]], ids=["infer", "optimize"])
def test_external_data_flag_writes_the_data_under_a_name_of_its_own(two_models, command):
    root, a, other = two_models
    expected = _run(other)
    before = folder_hashes(root)
    out = str(root / "dst" / "out.onnx")
    r = run_cli(*command, a, "-o", out, "--external-data", "out.data")
    assert r.returncode == 0, r.stderr
    assert _changes(before, folder_hashes(root)) == {"dst/out.onnx", "dst/out.data"}
    np.testing.assert_array_equal(_run(out), _run(a))  # a's weights, from out.data
    np.testing.assert_array_equal(_run(other), expected)
    w = onnx.load(out, load_external_data=False).graph.initializer
    assert {e.key: e.value for e in w[0].external_data}["location"] == "out.data"
    # running it again replaces the file it names, and nothing else
    mid = folder_hashes(root)
    assert run_cli(*command, a, "-o", out, "--external-data", "out.data").returncode == 0
    assert _changes(mid, folder_hashes(root)) <= {"dst/out.onnx", "dst/out.data"}


def test_external_data_flag_never_names_an_input(tmp_path):
    a = save_external(tmp_path / "a.onnx", 1.0)
    before = folder_hashes(tmp_path)
    for name in ("model.data", "a.onnx"):  # its own weights, the model itself
        r = run_cli(a, "-o", str(tmp_path / "out.onnx"), "--external-data", name)
        assert r.returncode == 2 and "would overwrite an input" in r.stderr, r.stderr
    r = run_cli(a, "-o", str(tmp_path / "out.onnx"), "--external-data", "out.onnx")
    assert r.returncode == 2 and "onto the output model" in r.stderr, r.stderr
    r = run_cli(a, "-o", str(tmp_path / "out.onnx"), "--external-data", "sub/out.data")
    assert r.returncode == 2 and "without a folder" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == set()


def test_external_data_flag_gathers_several_files_in_one(tmp_path):
    """Two data files (as a model edited by hand may have) become one, each at a 64 KiB boundary."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 8])
    ws = [numpy_helper.from_array(np.full((8, 8), v, np.float32), f"w{k}") for k, v in enumerate((1.5, -2.0))]
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w0"], ["h"]), helper.make_node("MatMul", ["h", "w1"], ["y"])],
        "g",
        [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        ws,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    for k, t in enumerate(m.graph.initializer):
        raw = t.raw_data
        (tmp_path / f"part{k}.bin").write_bytes(b"\0" * 100 + raw)  # not at offset 0, no length
        onnx.external_data_helper.set_external_data(t, f"part{k}.bin", offset=100)
        t.ClearField("raw_data")
    src = str(tmp_path / "m.onnx")
    onnx.save(m, src)
    (tmp_path / "out").mkdir()
    out = str(tmp_path / "out" / "m.onnx")
    r = run_cli(src, "-o", out, "--external-data", "all.bin")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["all.bin", "m.onnx"]
    np.testing.assert_array_equal(_run(out), _run(src))
    inits = onnx.load(out, load_external_data=False).graph.initializer
    got = {t.name: {e.key: e.value for e in t.external_data} for t in inits}
    assert got["w0"] == {"location": "all.bin", "offset": "100", "length": "256"}
    assert got["w1"] == {"location": "all.bin", "offset": str((1 << 16) + 100), "length": "256"}


def test_a_missing_data_file_is_one_line_and_nothing_written(tmp_path):
    a = save_external(tmp_path / "m" / "a.onnx", 1.0)
    os.remove(tmp_path / "m" / "model.data")
    (tmp_path / "away").mkdir()
    before = folder_hashes(tmp_path)
    for command in ([], ["optimize"]):
        for out in (tmp_path / "m" / "out.onnx", tmp_path / "away" / "out.onnx"):
            r = run_cli(*command, a, "-o", str(out))
            assert r.returncode == 1, r.stderr
            line = r.stderr.strip().splitlines()[-1]
            assert "not written" in line and "'model.data' is missing" in line and "--force" in line, line
            assert r.stdout.count("E003") == 1 and "error E003" in r.stdout  # the report says it once
    r = run_cli(a, "-o", "-")  # nor to standard output
    assert r.returncode == 1 and r.stdout == "" and "the model is not written" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == set()
    # asked for: the model is written with its references, and nothing else is
    r = run_cli(a, "-o", str(tmp_path / "away" / "out.onnx"), "--force")
    assert r.returncode == 0, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == {"away/out.onnx"}
    r = run_cli("optimize", a, "-o", str(tmp_path / "away" / "opt.onnx"), "--force")
    assert r.returncode == 0, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == {"away/out.onnx", "away/opt.onnx"}


def test_lint_fix_writes_only_the_fixed_copy(tmp_path):
    src = save_external(tmp_path / "m.onnx", 1.0, location="m.data", noop_reshape=True)
    save_external(tmp_path / "other.onnx", 3.0, location="m.fixed.onnx.data")  # a name a fixed copy's data might take
    before = folder_hashes(tmp_path)
    r = run_cli("lint", src, "--fix")
    assert "wrote" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == {"m.fixed.onnx"}
    fixed = str(tmp_path / "m.fixed.onnx")
    nodes = onnx.load(fixed, load_external_data=False).graph.node
    assert [n.op_type for n in nodes] == ["MatMul"]  # the no-op Reshape went
    np.testing.assert_array_equal(_run(fixed), _run(src))  # computed with m.data, shared and unchanged


def test_lint_fix_beside_an_earlier_fixed_copy_changes_nothing(tmp_path):
    src = save_external(tmp_path / "m.onnx", 1.0, location="m.data", noop_reshape=True)
    save_external(tmp_path / "m.fixed.onnx", 5.0, location="m.fixed.data")  # an earlier run's, with its data
    before = folder_hashes(tmp_path)
    r = run_cli("lint", src, "--fix")
    assert "already exists and is not overwritten" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == set()


def test_lint_fix_of_a_model_whose_data_is_missing_writes_nothing(tmp_path):
    src = save_external(tmp_path / "m.onnx", 1.0, location="m.data", noop_reshape=True)
    os.remove(tmp_path / "m.data")
    before = folder_hashes(tmp_path)
    r = run_cli("lint", src, "--fix")
    assert r.returncode == 1 and "nothing written" in r.stderr and "'m.data' is missing" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == set()


def test_the_api_raises_naming_the_file_and_writes_nothing(two_models):
    from shapeinfer.compat.onnx import infer_shapes_path
    from shapeinfer.io.writer import save_model

    root, a, _ = two_models
    before = folder_hashes(root)
    out = str(root / "dst" / "out.onnx")
    with pytest.raises(WriteRefused, match=r"dst/model\.data"):
        infer_shapes_path(a, out)
    with pytest.raises(WriteRefused, match=r"dst/model\.data"):
        save_model(onnx.load(a, load_external_data=False), out, a)
    assert _changes(before, folder_hashes(root)) == set()
    save_model(onnx.load(a, load_external_data=False), out, a, data_name="out.data")
    assert _changes(before, folder_hashes(root)) == {"dst/out.onnx", "dst/out.data"}


def test_a_data_file_that_appears_while_writing_is_never_replaced(two_models, monkeypatch):
    """The check before the copy and the commit after it race with other writers: the data file
    is linked into place only while its name is free."""
    from shapeinfer.io import writer

    root, a, _ = two_models
    (root / "free").mkdir()
    stage = writer.stage_copies

    def stage_then_collide(plan):
        staged = stage(plan)
        (root / "free" / "model.data").write_bytes(b"someone else's")
        return staged

    monkeypatch.setattr(writer, "stage_copies", stage_then_collide)
    with pytest.raises(WriteRefused, match="appeared"):
        writer.save_model(onnx.load(a, load_external_data=False), str(root / "free" / "out.onnx"), a)
    assert os.listdir(root / "free") == ["model.data"]
    assert (root / "free" / "model.data").read_bytes() == b"someone else's"


def test_a_failed_model_write_takes_its_data_files_back(two_models, monkeypatch):
    from shapeinfer.io import writer

    root, a, _ = two_models
    (root / "new").mkdir()

    def fail(fd, chunks):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer, "write_chunks", fail)
    with pytest.raises(UserFileError, match="No space left"):
        writer.save_model(onnx.load(a, load_external_data=False), str(root / "new" / "out.onnx"), a)
    assert os.listdir(root / "new") == []


@pytest.mark.parametrize("gather", [False, True], ids=["copied", "gathered"])
def test_a_private_data_file_copied_to_another_folder_stays_private(two_models, gather):
    """A 0600 data file (weights kept from other users) copied beside a model written elsewhere
    was 0644 (the umask's default); as cp copies it, it is 0600. A file that is replaced keeps
    its own mode (test_writer)."""
    tmp, a, _ = two_models
    data = [p for p in os.listdir(tmp / "src") if not p.endswith(".onnx")]
    for name in data:
        os.chmod(tmp / "src" / name, 0o600)
    (tmp / "out").mkdir()
    out = tmp / "out" / "a.onnx"
    extra = ["--external-data", "w.bin"] if gather else []
    r = run_cli(str(a), "-o", str(out), *extra)
    assert r.returncode == 0, r.stderr
    copies = [p for p in os.listdir(tmp / "out") if not p.endswith(".onnx")]
    assert copies and all(stat.S_IMODE(os.stat(tmp / "out" / p).st_mode) == 0o600 for p in copies)
    np.testing.assert_array_equal(_run(str(out)), _run(str(a)))


@pytest.mark.parametrize("second", [[], ["optimize"]], ids=["infer", "optimize"])
def test_a_second_model_from_the_same_data_reads_the_data_file_already_there(two_models, second):
    """`-o out/a.onnx`, then `optimize -o out/b.onnx` of the same model: the second write was
    refused (out/model.data is a file it did not create), so written_check's `-o` then
    `optimize -o` into one folder wrote nothing for every onnxruntime-genai model. The file
    there holds the very bytes the copy would write: the second model reads it, nothing is
    replaced, and a file with other bytes is still refused."""
    root, a, _ = two_models
    (root / "out").mkdir()
    r = run_cli(a, "-o", str(root / "out" / "a.onnx"))
    assert r.returncode == 0, r.stderr
    data = root / "out" / "model.data"
    before = os.stat(data)
    r = run_cli(*second, a, "-o", str(root / "out" / "b.onnx"))
    assert r.returncode == 0, r.stderr
    assert "model.data already holds this external data, byte for byte" in r.stderr
    after = os.stat(data)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    np.testing.assert_array_equal(_run(str(root / "out" / "b.onnx")), _run(a))
    with open(data, "r+b") as f:  # one byte other: someone else's data now
        f.seek(10)
        f.write(b"\x01" if f.read(1) != b"\x01" else b"\x02")
    r = run_cli(*second, a, "-o", str(root / "out" / "c.onnx"))
    assert r.returncode == 1 and "would replace" in r.stderr and not (root / "out" / "c.onnx").exists()


def test_a_reused_data_file_that_changes_during_the_write_refuses_it(two_models, monkeypatch):
    """The reuse is decided when the write is planned; a file changed before the model is put in
    place would leave the model reading other weights: the write is refused, nothing written."""
    import shapeinfer
    import shapeinfer.io.writer as writer

    root, a, _ = two_models
    (root / "out").mkdir()
    shapeinfer.open(a).write(str(root / "out" / "a.onnx"))
    data = root / "out" / "model.data"
    real = writer.write_chunks

    def changing(fd, chunks):
        with open(data, "r+b") as f:  # someone else rewrites the shared file meanwhile
            f.seek(10)
            f.write(b"\x01" if f.read(1) != b"\x01" else b"\x02")
        return real(fd, chunks)

    monkeypatch.setattr(writer, "write_chunks", changing)
    with pytest.raises(WriteRefused, match="changed while the model was written"):
        shapeinfer.open(a).write(str(root / "out" / "b.onnx"))
    assert sorted(os.listdir(root / "out")) == ["a.onnx", "model.data"]


def _cannot_write(cmd, **kw):
    """Run the command line; its one stderr line (exit 2, no traceback, no "internal error")."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "shapeinfer.cli", *cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 2, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    return r.stderr.strip().splitlines()[-1]


def test_a_data_copy_the_file_system_refuses_is_one_line_and_nothing_written(tmp_path, monkeypatch):
    """Copying the data beside the output fails as a user-file error (exit 2, one line naming the
    data file) where it was an internal error: a file where the data's subfolder goes, the
    file-size limit (EFBIG), a folder that cannot be written; nothing is left behind."""
    import resource

    (tmp_path / "in" / "sub").mkdir(parents=True)
    src = save_external(tmp_path / "in" / "m.onnx", 1.0, location="sub/w.data")
    big = save_external(tmp_path / "in" / "big.onnx", 1.0, location="big.data")
    with open(tmp_path / "in" / "big.data", "r+b") as f:  # past the size limit below, the model still runs
        f.seek(0, os.SEEK_END)
        f.write(b"\0" * (64 << 10))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "sub").write_bytes(b"not a folder")
    before = folder_hashes(tmp_path)

    line = _cannot_write([src, "-o", str(tmp_path / "out" / "a.onnx")])
    assert line.endswith(f"out/sub/w.data: cannot write the external data file: {tmp_path}/out/sub is not a folder")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 10, resource.RLIM_INFINITY))

    line = _cannot_write([big, "-o", str(tmp_path / "out" / "b.onnx")], preexec_fn=small_files)
    assert line.endswith("out/big.data: cannot write the external data file: File too large"), line
    assert _changes(before, folder_hashes(tmp_path)) == set()

    from shapeinfer.io import datacopy
    from shapeinfer.io.writer import save_model

    def refused(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(datacopy.tempfile, "mkstemp", refused)
    with pytest.raises(UserFileError, match=r"out/big\.data: cannot write the external data file: Permission denied"):
        save_model(onnx.load(big, load_external_data=False), str(tmp_path / "out" / "b.onnx"), big)
    assert _changes(before, folder_hashes(tmp_path)) == set()


@pytest.mark.parametrize(
    "failure",
    ["model-rename-fails", "interrupt-at-model-rename", "interrupt-after-data-rename", "no-hard-links"],
)
def test_a_failed_write_over_an_earlier_one_keeps_the_old_model_and_its_data(tmp_path, monkeypatch, failure):
    """``-o out/a.onnx --external-data a.data`` over an earlier write: the new ``a.data`` was
    renamed over the old one before the model's rename; when that failed (or Ctrl-C came in
    between) the old ``a.onnx`` read the new weights. The old data file is kept under a hidden
    name until the model is in place, and put back otherwise: both files as they were, nothing
    left behind, the model computing what it did."""
    import errno

    import shapeinfer

    v1 = save_external(tmp_path / "v1" / "m.onnx", 1.0)
    v2 = save_external(tmp_path / "v2" / "m.onnx", 2.0)
    (tmp_path / "out").mkdir()
    out = str(tmp_path / "out" / "a.onnx")
    shapeinfer.open(v1).write(out, external_data="a.data")
    expected = _run(out)
    np.testing.assert_array_equal(expected, _run(v1))
    before = folder_hashes(tmp_path)
    real_replace = os.replace
    data = str(tmp_path / "out" / "a.data")

    def replace(src, dst, **kw):
        if failure == "interrupt-after-data-rename" and dst == data:
            real_replace(src, dst, **kw)
            raise KeyboardInterrupt
        if dst == out and failure != "interrupt-after-data-rename":
            if failure == "interrupt-at-model-rename":
                raise KeyboardInterrupt
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst, **kw)

    def no_link(*a, **k):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "replace", replace)
    if failure == "no-hard-links":
        monkeypatch.setattr(os, "link", no_link)
    raised = KeyboardInterrupt if failure.startswith("interrupt") else UserFileError
    with pytest.raises(raised):
        shapeinfer.open(v2).write(out, external_data="a.data")
    monkeypatch.undo()
    assert _changes(before, folder_hashes(tmp_path)) == set()
    np.testing.assert_array_equal(_run(out), expected)


def test_an_interrupt_after_the_models_rename_keeps_the_new_model_and_its_data(tmp_path, monkeypatch):
    """Ctrl-C once the model is in place: the new data file stays with it (the model reads it),
    and the old one's hidden name goes."""
    import shapeinfer

    v1 = save_external(tmp_path / "v1" / "m.onnx", 1.0)
    v2 = save_external(tmp_path / "v2" / "m.onnx", 2.0)
    (tmp_path / "out").mkdir()
    out = str(tmp_path / "out" / "a.onnx")
    shapeinfer.open(v1).write(out, external_data="a.data")
    real_replace = os.replace

    def replace(src, dst, **kw):
        real_replace(src, dst, **kw)
        if dst == out:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        shapeinfer.open(v2).write(out, external_data="a.data")
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path / "out")) == ["a.data", "a.onnx"]
    np.testing.assert_array_equal(_run(out), _run(v2))


def test_a_path_through_a_symlink_and_dotdot_is_where_the_os_goes(tmp_path):
    """``b/link/..`` is ``a/`` when ``b/link`` points into ``a/`` (the OS, onnx and onnxruntime
    resolve it so, ``..`` after the link): the model read through it is written with its own
    weights, never those of ``b/``'s model, and an output named through it goes into ``a/``."""
    a = save_external(tmp_path / "a" / "m.onnx", 1.0)
    save_external(tmp_path / "b" / "m.onnx", 2.0)  # another model, with its own model.data
    (tmp_path / "a" / "deep").mkdir()
    os.symlink("../a/deep", tmp_path / "b" / "link")
    (tmp_path / "b" / "x.onnx").write_bytes(b"a file the user did not name")
    (tmp_path / "out").mkdir()
    via = os.path.join(tmp_path, "b", "link", "..")
    expected = _run(a)
    np.testing.assert_array_equal(_run(os.path.join(via, "m.onnx")), expected)  # onnxruntime reads a/
    before = folder_hashes(tmp_path)
    out = str(tmp_path / "out" / "m.onnx")
    r = run_cli(os.path.join(via, "m.onnx"), "-o", out)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_run(out), expected)
    r = run_cli(a, "-o", os.path.join(via, "x.onnx"))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_run(str(tmp_path / "a" / "x.onnx")), expected)
    r = run_cli("lint", a, "-o", os.path.join(via, "report.txt"))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == {"out/m.onnx", "out/model.data", "a/x.onnx", "a/report.txt"}
    # the onnxruntime drop-in, which loads the weights itself to save them again
    out = str(tmp_path / "out" / "c.onnx")
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.compat.onnxruntime", "--input", os.path.join(via, "m.onnx")]
        + ["--output", out, "--save_as_external_data", "--all_tensors_to_one_file"]
        + ["--external_data_location", "c.data"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_run(out), expected)


def test_a_symlinked_model_file_reads_the_data_beside_the_link(tmp_path):
    """A model FILE that is a symlink reads its external data from the folder of the path given,
    as onnx and onnxruntime do (only the folder part of a path is resolved)."""
    save_external(tmp_path / "a" / "m.onnx", 1.0)
    b = save_external(tmp_path / "b" / "m.onnx", 2.0)
    link = str(tmp_path / "b" / "s.onnx")
    os.symlink("../a/m.onnx", link)
    (tmp_path / "out").mkdir()
    expected = _run(link)
    np.testing.assert_array_equal(expected, _run(b))  # onnxruntime reads b/model.data
    out = str(tmp_path / "out" / "s.onnx")
    r = run_cli(link, "-o", out)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_run(out), expected)


def test_training_info_data_is_copied_and_never_replaced(tmp_path):
    """A tensor of ``training_info`` (its initialization or algorithm graph) stored in a data file
    of its own: ``-o`` into another folder copies that file too, and an output onto it is
    refused (it is the model's training weights)."""
    src = save_external(tmp_path / "in" / "m.onnx", 1.0)
    m = onnx.load(src, load_external_data=False)
    train = np.arange(4096, dtype=np.float32)
    (tmp_path / "in" / "train.data").write_bytes(train.tobytes())
    t = numpy_helper.from_array(train, "train_w")
    onnx.external_data_helper.set_external_data(t, "train.data")
    t.ClearField("raw_data")
    ti = m.training_info.add()
    ti.initialization.name = "init"
    ti.initialization.initializer.append(t)
    ti.initialization.output.append(helper.make_tensor_value_info("train_w", TensorProto.FLOAT, [4096]))
    onnx.save(m, src)
    (tmp_path / "out").mkdir()
    before = folder_hashes(tmp_path)
    for command in ([], ["optimize"], ["lint"]):
        r = run_cli(*command, src, "-o", str(tmp_path / "in" / "train.data"))
        assert r.returncode == 2 and "would overwrite an input of this run" in r.stderr, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == set()
    out = str(tmp_path / "out" / "a.onnx")
    r = run_cli(src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert _changes(before, folder_hashes(tmp_path)) == {"out/a.onnx", "out/model.data", "out/train.data"}
    np.testing.assert_array_equal(_run(out), _run(src))
    written = onnx.load(out, load_external_data=False)
    onnx.external_data_helper.load_external_data_for_tensor(
        written.training_info[0].initialization.initializer[0], str(tmp_path / "out")
    )
    np.testing.assert_array_equal(numpy_helper.to_array(written.training_info[0].initialization.initializer[0]), train)


@pytest.mark.parametrize("gather", [False, True], ids=["copied", "gathered"])
def test_every_file_is_on_the_disk_before_a_rename_publishes_it(two_models, monkeypatch, gather):
    """A crash of the machine after a rename must find the renamed file's bytes: each file is
    synced before it is renamed into place, the folder after (the model's rename last)."""
    from shapeinfer.io import datacopy, userfiles, writer

    root, a, _ = two_models
    (root / "new").mkdir()
    events: list[tuple[str, str]] = []
    fsync, replace, link = os.fsync, os.replace, os.link

    def record_fsync(fd):
        events.append(("sync", os.path.realpath(f"/proc/self/fd/{fd}")))
        return fsync(fd)

    def recording(call):
        def run(src, dst, **kw):
            call(src, dst, **kw)
            if not os.path.basename(dst).endswith(".data.old"):  # (a replaced file's hidden name)
                events.extend([("rename", os.path.realpath(src)), ("named", os.path.realpath(dst))])

        return run

    record_replace, record_link = recording(replace), recording(link)

    for module in (userfiles, datacopy):
        monkeypatch.setattr(module.os, "fsync", record_fsync)
        monkeypatch.setattr(module.os, "replace", record_replace)
        monkeypatch.setattr(module.os, "link", record_link)
    out = root / "new" / "out.onnx"
    writer.save_model(onnx.load(a, load_external_data=False), str(out), a, data_name="out.data" if gather else None)
    assert np.array_equal(_run(str(out)), _run(a))
    renamed = [(i, path) for i, (kind, path) in enumerate(events) if kind == "rename"]
    assert len(renamed) == 2  # the data file, then the model
    for i, tmp in renamed:
        assert ("sync", tmp) in events[:i], (tmp, events)
    folder = os.path.realpath(root / "new")
    last_named = max(i for i, (kind, _) in enumerate(events) if kind == "named")
    assert events[last_named] == ("named", str(out))
    assert ("sync", folder) in events[last_named:]  # the model's name on the disk too
    data_named = next(i for i, (kind, _) in enumerate(events) if kind == "named")
    assert ("sync", folder) in events[data_named:last_named]  # the data file's name before the model's
