"""External-data entries that lie (issue 15): special files, impossible offsets and lengths,
bad keys, sparse multi-GB files. Each class runs through every subcommand and through ``-o``
into the same and into another folder, from a working directory that holds a decoy data file:
one clear line or diagnostic, no hang, bounded memory, nothing written on refusal, no file
opened outside the model's folder (audit hook), the decoy never read."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from testkit.external_models import TARGET, WEIGHT, build, mark_external

HERE = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "testkit"))


def run_batch(jobs: list[dict], allowed: list[str], timeout: float = 120) -> list[dict]:
    """Run ``jobs`` (see testkit/cli_driver.py) in one fresh process; results in order."""
    spec = os.path.join(jobs[0]["cwd"], ".jobs.json")
    out = os.path.join(jobs[0]["cwd"], ".results.json")
    with open(spec, "w") as f:
        json.dump({"jobs": jobs, "allowed": allowed}, f)
    subprocess.run(
        [sys.executable, os.path.join(HERE, "cli_driver.py"), spec, out], check=True, timeout=timeout, cwd=HERE
    )
    with open(out) as f:
        results = json.load(f)
    os.unlink(spec)
    os.unlink(out)
    return results


def check_clean(r: dict, rss_mb: float = 200) -> None:
    """No traceback, no hang, no file outside the allowed folders, bounded memory."""
    where = f"{r['args']}: {r.get('stderr', '')}"
    assert r["traceback"] is None, where + r["traceback"]
    assert not r["timeout"], where
    assert r["opened_outside"] == [], where
    assert r["maxrss_mb"] < rss_mb, (where, r["maxrss_mb"])
    if r["rc"] == 2:
        lines = r["stderr"].strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("shapeinfer: error: "), where
        assert "internal error" not in lines[0], where


def _fifo(folder, name):
    os.mkfifo(os.path.join(folder, name))


def _socket(folder, name):
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(folder, name))
    return s


def _chardev(folder, name):
    try:
        os.mknod(os.path.join(folder, name), stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here")


#: class -> (setup(folder) or None, target entry, weight entry, needle in the diagnostic)
CASES = {
    "fifo": (lambda d: _fifo(d, "p.bin"), [("location", "p.bin"), ("offset", "0"), ("length", "16")], None, "FIFO"),
    "fifo-weight": (lambda d: _fifo(d, "p.bin"), None, [("location", "p.bin")], "FIFO"),
    "chardev-no-length": (lambda d: _chardev(d, "z.bin"), [("location", "z.bin")], None, "character device"),
    "folder": (lambda d: os.mkdir(os.path.join(d, "sub")), [("location", "sub")], None, "a folder"),
    "socket": (lambda d: _socket(d, "s.bin"), [("location", "s.bin"), ("length", "16")], None, "a socket"),
    "negative-offset": (None, [("location", "data.bin"), ("offset", "-8"), ("length", "16")], None, "offset '-8'"),
    "huge-offset": (None, [("location", "data.bin"), ("offset", "9" * 30)], None, "not an integer in 0..2**63-1"),
    "past-eof-offset": (None, [("location", "data.bin"), ("offset", "9999"), ("length", "16")], None, "past the end"),
    "tib-length": (None, [("location", "data.bin"), ("length", str(1 << 40))], None, "past the end"),
    "weight-past-eof": (None, None, [("location", "data.bin"), ("offset", "16"), ("length", "99999")], "past the end"),
    "spaced-offset": (None, [("location", "data.bin"), ("offset", " 8")], None, "not an integer"),
    "float-length": (None, [("location", "data.bin"), ("length", "16.0")], None, "not an integer"),
    "duplicated-location": (None, [("location", "data.bin"), ("location", "data.bin")], None, "given twice"),
    "unknown-key": (None, [("location", "data.bin"), ("length", "16"), ("frobnicate", "1")], None, "unknown"),
}


def _jobs(tmp_path, model: str) -> tuple[list[dict], str, str]:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "data.bin").write_bytes(np.array([3, 2], np.int64).tobytes() + WEIGHT.tobytes())  # decoy
    other = tmp_path / "other"
    other.mkdir()
    folder = os.path.dirname(model)
    same_out = os.path.join(folder, "out.onnx")
    jobs = [
        ["--timeout", "10", model],
        [model, "-o", same_out],
        [model, "-o", str(other / "out.onnx")],
        ["optimize", model, "-o", str(other / "opt.onnx")],
        ["optimize", model, "-o", os.path.join(folder, "opt.onnx")],
        ["lint", model],
        ["lint", "-j", "2", folder],
        ["verify", model, "--bind", "n=2"],
    ]
    return [{"args": a, "cwd": str(cwd), "timeout": 15} for a in jobs], str(other), same_out


@pytest.mark.parametrize("case", sorted(CASES))
def test_lying_entry_every_subcommand(tmp_path, case):
    setup, tentry, wentry, needle = CASES[case]
    folder = str(tmp_path / "model")
    model = build(folder, tentry, wentry)
    keep = setup(folder) if setup else None
    before = {p: os.stat(os.path.join(folder, p)).st_mtime_ns for p in os.listdir(folder)}
    jobs, other, _ = _jobs(tmp_path, model)
    res = run_batch(jobs, [folder, other])
    del keep
    for r in res:
        check_clean(r)
    infer, same, away, opt_away, opt_same, lint, lint_dir, ver = res
    assert infer["rc"] == 0 and "E003" in infer["stdout"] and needle in infer["stdout"], infer
    tensor = "'target'" if tentry else "'w'"
    assert f"tensor {tensor}" in infer["stdout"]
    assert same["rc"] == 0 and opt_same["rc"] == 0, (same, opt_same)
    for r in (away, opt_away):  # no copy of data it cannot vouch for; nothing written
        assert r["rc"] == 2 and "cannot copy external data" in r["stderr"] and needle in r["stderr"], r
    assert os.listdir(other) == []
    assert lint["rc"] == 1 and "E003" in lint["stdout"], lint
    assert lint_dir["rc"] == 1, lint_dir
    assert ver["rc"] == 2 and "cannot read external data" in ver["stderr"] and needle in ver["stderr"], ver
    for p, mtime in before.items():  # inputs untouched
        assert os.stat(os.path.join(folder, p)).st_mtime_ns == mtime, p


def test_link_to_dev_zero_is_refused_as_leaving_the_folder(tmp_path):
    folder = str(tmp_path / "model")
    model = build(folder, [("location", "z.bin")])
    os.symlink("/dev/zero", os.path.join(folder, "z.bin"))
    jobs, other, _ = _jobs(tmp_path, model)
    res = run_batch(jobs, [folder, other])
    for r in res:
        check_clean(r)
        if r["args"][0] != "lint":
            assert r["rc"] == 2 and "resolves outside the model's folder" in r["stderr"], r
        else:
            assert r["rc"] == 2 and "E900" in r["stdout"], r
    assert os.listdir(other) == []


def test_sparse_multi_gb_data_is_never_read_and_copied_sparse(tmp_path):
    """An 8 GiB sparse data file (a weight spanning it, no length: to the end of the file)."""
    folder = str(tmp_path / "model")
    model = build(folder, None, [("location", "big.bin"), ("offset", "0")])
    big = os.path.join(folder, "big.bin")
    with open(big, "wb") as f:
        f.truncate(8 << 30)
    jobs, other, _ = _jobs(tmp_path, model)
    # -o has written other/big.bin: optimize -o beside it gathers the data under its own name
    jobs[3]["args"] += ["--external-data", "opt.bin"]
    res = run_batch(jobs[:7], [folder, other])  # verify would need the 8 GiB weight: see below
    for r in res:
        check_clean(r, rss_mb=200)
    infer, same, away, opt_away, opt_same, lint, lint_dir = res
    assert infer["rc"] == 0 and "E003" not in infer["stdout"]
    assert same["rc"] == away["rc"] == opt_away["rc"] == opt_same["rc"] == 0, (away, opt_away)
    # opt.bin: data.bin (the target's 16 bytes) at 0, big.bin from the next 64 KiB boundary
    for copied, size in (
        (os.path.join(other, "big.bin"), 8 << 30),
        (os.path.join(other, "opt.bin"), (8 << 30) + (1 << 16)),
    ):
        st = os.stat(copied)
        assert st.st_size == size and st.st_blocks * 512 < (1 << 20)  # still sparse
    inits = onnx.load(os.path.join(other, "opt.onnx"), load_external_data=False).graph.initializer
    entry = {t.name: {e.key: e.value for e in t.external_data} for t in inits}
    assert entry["w"] == {
        "location": "opt.bin",
        "offset": str(1 << 16),
        "length": str(8 << 30),
    }  # "to the end" made explicit
    with open(os.path.join(other, "opt.bin"), "rb") as f:
        assert f.read(TARGET.nbytes) == TARGET.tobytes()
    assert lint["rc"] in (0, 1) and lint_dir["rc"] in (0, 1)


def test_verify_estimates_memory_before_allocating(tmp_path):
    """A binding whose tensors cannot fit is refused with the estimate, the limit and the flag."""
    folder = str(tmp_path / "model")
    model = build(folder)
    cwd = str(tmp_path)
    jobs = [
        {"args": ["verify", model, "--bind", "n=2147483648"], "cwd": cwd},
        {"args": ["verify", model, "--bind", "n=20000", "--max-memory", "1M"], "cwd": cwd},
        {"args": ["verify", model, "--bind", "n=2", "--max-memory", "1M"], "cwd": cwd},
    ]
    huge, small_limit, fine = run_batch(jobs, [folder])
    for r in (huge, small_limit, fine):
        check_clean(r)
    assert huge["rc"] == 2 and "above the limit of 4.0 GiB; raise it with --max-memory" in huge["stderr"], huge
    assert "needs about" in huge["stderr"]
    assert small_limit["rc"] == 2 and "above the limit of 1.0 MiB" in small_limit["stderr"], small_limit
    assert fine["rc"] == 0, fine


def test_optimize_reads_the_models_folder_not_the_cwd(tmp_path):
    """Issue 11's cwd bug: dedupe-shapes compared the decoy's bytes from the working directory.

    Two small initializers [2, 3] and [3, 2] live in the model's data file; the decoy in the
    cwd makes them equal. The optimized model must compute what the original computes.
    """
    import onnxruntime as ort

    folder = tmp_path / "model"
    folder.mkdir()
    a, b = np.array([2, 3], np.int64), np.array([3, 2], np.int64)
    (folder / "data.bin").write_bytes(a.tobytes() + b.tobytes())
    ta = mark_external(numpy_helper.from_array(a, "ta"), [("location", "data.bin"), ("offset", "0"), ("length", "16")])
    tb = mark_external(numpy_helper.from_array(b, "tb"), [("location", "data.bin"), ("offset", "16"), ("length", "16")])
    g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Mul", ["s", "ta"], ["ma"]),
            helper.make_node("Mul", ["s", "tb"], ["mb"]),
            helper.make_node("Concat", ["ma", "mb"], ["y"], axis=0),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [ta, tb],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(folder / "m.onnx"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "data.bin").write_bytes(a.tobytes() + a.tobytes())  # the decoy: both targets [2, 3]
    out = tmp_path / "out"
    out.mkdir()
    (r,) = run_batch(
        [{"args": ["optimize", str(folder / "m.onnx"), "-o", str(out / "o.onnx")], "cwd": str(cwd)}],
        [str(folder), str(out)],
    )
    check_clean(r)
    assert r["rc"] == 0, r
    x = np.zeros((1, 6), np.float32)
    want = ort.InferenceSession(str(folder / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = ort.InferenceSession(str(out / "o.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert want.tolist() == got.tolist() == [2, 18, 3, 12]


def test_make_dynamic_reads_the_models_folder_not_the_cwd(tmp_path):
    """make-dynamic read an external Reshape target with onnx's reader, relative to the working
    directory: the decoy there, or a crash in onnx's checker when the cwd had no such file
    (fuzzer seed 172, case 3464). It reads the model's folder, as everything else does."""
    import onnxruntime as ort

    folder = tmp_path / "model"
    folder.mkdir()
    target = np.array([2, 3, 2], np.int64)  # its 2 is the batch of x [2, 6]
    (folder / "data.bin").write_bytes(target.tobytes())
    t = mark_external(numpy_helper.from_array(target, "t"), [("location", "data.bin"), ("length", "24")])
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "t"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 2])],
        [t],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(folder / "m.onnx"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "data.bin").write_bytes(np.array([4, 3, 1], np.int64).tobytes())  # the decoy
    out = tmp_path / "out"
    out.mkdir()
    args = ["make-dynamic", str(folder / "m.onnx"), "--dim", "x:0=b", "-o", str(out / "d.onnx")]
    (r,) = run_batch([{"args": args, "cwd": str(cwd)}], [str(folder), str(out)])
    check_clean(r)
    assert r["rc"] == 0, r
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = ort.InferenceSession(str(out / "d.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, x.reshape(5, 3, 2))
    os.remove(folder / "data.bin")  # missing: the target is unknown, a clean refusal
    args[-1] = str(out / "e.onnx")
    (r,) = run_batch([{"args": args, "cwd": str(tmp_path)}], [str(folder), str(out)])
    check_clean(r)
    assert r["rc"] in (1, 2) and not (out / "e.onnx").exists(), r


def test_a_location_that_is_not_utf8_is_one_clear_line_in_every_subcommand(tmp_path):
    """An external-data location that is not UTF-8 reached ``"\\0" in location`` as bytes: an
    internal error in every command that reads the model (fuzzer seed 172, cases 2109 and
    2114); optimize, which escapes such text, read the escaped name as an absolute path."""
    folder = tmp_path / "model"
    model = build(str(folder))
    with open(model, "rb") as f:
        data = f.read()
    assert data.count(b"data.bin") == 2
    with open(model, "wb") as f:
        f.write(data.replace(b"data.bin", b"data.b\xffn", 1))  # the target's entry
    out = tmp_path / "out"
    out.mkdir()
    jobs = [
        [model],
        [model, "-o", str(out / "a.onnx")],
        ["optimize", model, "-o", str(out / "b.onnx")],
        ["explain", model, "y"],
        ["profile", model],
        ["lint", model],
        ["verify", model, "--bind", "n=2"],
    ]
    res = run_batch([{"args": a, "cwd": str(tmp_path), "timeout": 15} for a in jobs], [str(folder), str(out)])
    for r in res:
        check_clean(r)
    infer, out_o, opt = res[:3]
    assert infer["rc"] == 0 and "E003" in infer["stdout"] and "not valid UTF-8" in infer["stdout"], infer
    assert out_o["rc"] == 2 and "not valid UTF-8" in out_o["stderr"], out_o
    assert opt["rc"] == 2 and "not valid UTF-8" in opt["stderr"] and "absolute" not in opt["stderr"], opt
    assert os.listdir(out) == []
