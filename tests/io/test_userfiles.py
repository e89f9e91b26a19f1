"""The files and numbers a user names (issue 16, issue 13 items 1 and 4): special files, huge
files, outputs that would overwrite inputs or leave their folder, missing output folders,
``-`` for stdin/stdout, huge numbers, names the terminal cannot print. Each: one line and
exit 2 (lint: an E900 finding and the run goes on), no hang, bounded memory, nothing written."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_external_hostile import build, check_clean, run_batch


def small_model(path: str) -> str:
    """Reshape(x, [-1, 6]) with a symbolic batch dim: infer, optimize, lint and verify all run."""
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "t"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([-1, 6], np.int64), "t")],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _special(folder) -> dict[str, str]:
    """name -> path of a FIFO, a link to /dev/zero, a socket, a folder and an 8 GiB sparse file,
    all named *.onnx."""
    paths = {}
    paths["fifo"] = os.path.join(folder, "fifo.onnx")
    os.mkfifo(paths["fifo"])
    paths["zero-link"] = os.path.join(folder, "zero.onnx")
    os.symlink("/dev/zero", paths["zero-link"])
    paths["folder"] = os.path.join(folder, "dir.onnx")
    os.mkdir(paths["folder"])
    paths["sparse-8g"] = os.path.join(folder, "big.onnx")
    with open(paths["sparse-8g"], "wb") as f:
        f.truncate(8 << 30)
    return paths


NEEDLES = {
    "fifo": "is a FIFO (named pipe), not a model file",
    "zero-link": "is a character device, not a model file",
    "folder": "is a folder, not a model file",
    "sparse-8g": "8.0 GiB, above the 2.0 GiB a model can be",
    "socket": "is a socket, not a model file",
    "dev-zero": "is a character device, not a model file",
}


def test_special_files_as_model_for_every_subcommand(tmp_path):
    folder = str(tmp_path / "m")
    os.mkdir(folder)
    paths = _special(folder)
    sock = socket.socket(socket.AF_UNIX)
    paths["socket"] = os.path.join(folder, "s.onnx")
    sock.bind(paths["socket"])
    paths["dev-zero"] = "/dev/zero"
    out = str(tmp_path / "out")
    os.mkdir(out)
    jobs = []
    for kind, p in paths.items():
        for args in ([p], [p, "-o", f"{out}/a.onnx"], ["optimize", p, "-o", f"{out}/b.onnx"], ["verify", p]):
            jobs.append({"args": args, "cwd": str(tmp_path), "timeout": 10, "kind": kind})
    res = run_batch(jobs, [folder, out])
    sock.close()
    for job, r in zip(jobs, res):
        check_clean(r)
        assert r["rc"] == 2 and NEEDLES[job["kind"]] in r["stderr"], r
    assert os.listdir(out) == []


@pytest.mark.parametrize("jobs_flag", ["1", "2"])
def test_lint_folder_reports_special_files_and_goes_on(tmp_path, jobs_flag):
    folder = str(tmp_path / "m")
    os.mkdir(folder)
    _special(folder)
    os.rmdir(os.path.join(folder, "dir.onnx"))  # a folder is searched, not linted
    small_model(os.path.join(folder, "good.onnx"))
    (r,) = run_batch([{"args": ["lint", "-j", jobs_flag, folder], "cwd": str(tmp_path)}], [folder])
    check_clean(r)
    assert r["rc"] == 2
    out = r["stdout"]
    for name in ("fifo.onnx", "zero.onnx", "big.onnx"):
        assert f"{name}:[model]: E900 [error] cannot read the model: " in out, out
    assert "of 4 files" in out and "could not be read as ONNX models (E900)" in r["stderr"]


def test_lint_config_and_rules_special_files(tmp_path):
    m = small_model(str(tmp_path / "m.onnx"))
    fifo = str(tmp_path / "c.toml")
    os.mkfifo(fifo)
    jobs = [
        {"args": ["lint", m, "--config", "/dev/zero"], "cwd": str(tmp_path)},
        {"args": ["lint", m, "--config", fifo], "cwd": str(tmp_path)},
        {"args": ["lint", m, "--rules", fifo], "cwd": str(tmp_path)},
    ]
    res = run_batch(jobs, [str(tmp_path)])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2 and "not a TOML configuration file" in r["stderr"], r


def test_outputs_never_overwrite_inputs_nor_leave_their_folder(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    m = small_model(str(folder / "m.onnx"))
    os.link(m, folder / "hard.onnx")
    outside = tmp_path / "outside.txt"
    os.symlink(outside, folder / "link.txt")
    os.symlink(outside, folder / "link.onnx")
    with open(m, "rb") as f:
        before = f.read()
    cwd = str(tmp_path)
    jobs = [
        ["lint", m, "-o", m],  # the report onto the model
        ["lint", m, "-o", str(folder / "hard.onnx")],  # ... through a hard link
        ["lint", m, "-o", str(folder / "link.txt")],  # a symlink leaving the folder
        ["lint", m, "--format", "sarif", "-o", str(folder / "link.txt")],
        [m, "-o", str(folder / "hard.onnx")],  # the model onto itself, without --in-place
        [m, "-o", str(folder / "link.onnx")],
        ["optimize", m, "-o", m],
        ["optimize", m, "-o", str(folder / "link.onnx")],
    ]
    res = run_batch([{"args": a, "cwd": cwd} for a in jobs], [str(folder)])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2, r
    msgs = [r["stderr"] for r in res]
    assert "the report would overwrite an input of this run" in msgs[0] and msgs[0] == msgs[0].strip() + "\n"
    assert "the report would overwrite an input" in msgs[1]
    assert "a symlink to" in msgs[2] and "outside its folder" in msgs[2] and "outside its folder" in msgs[3]
    assert "would overwrite an input of this run; pass --in-place" in msgs[4]
    assert "outside its folder" in msgs[5] and "pass --in-place" in msgs[6] and "outside its folder" in msgs[7]
    with open(m, "rb") as f:
        assert f.read() == before and not outside.exists()
    assert sorted(os.listdir(folder)) == ["hard.onnx", "link.onnx", "link.txt", "m.onnx"]


def test_output_folder_missing_or_a_folder(tmp_path):
    m = small_model(str(tmp_path / "m.onnx"))
    cwd = str(tmp_path)
    jobs = [
        [m, "-o", "/nonexistent/dir/out.onnx"],
        [m, "-o", cwd],
        ["optimize", m, "-o", "/nonexistent/dir/out.onnx"],
        ["optimize", m, "-o", cwd],
        ["lint", m, "-o", "/nonexistent/dir/report.txt"],
        ["lint", m, "-o", cwd],
        [m, "-o", f"{m}/x.onnx"],  # a file where a folder should be
    ]
    res = run_batch([{"args": a, "cwd": cwd} for a in jobs], [cwd])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2, r
    for r in (res[0], res[2], res[4]):
        assert "folder /nonexistent/dir does not exist" in r["stderr"], r
    for r in (res[1], res[3], res[5]):
        assert "it is a folder" in r["stderr"], r
    assert "is not a folder" in res[6]["stderr"]
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_output_path_ending_in_a_separator_names_a_folder(tmp_path):
    """``-o PATH/`` never writes the file PATH: neither over a file of that name nor as a new
    file named like the folder meant."""
    m = small_model(str(tmp_path / "m.onnx"))
    (tmp_path / "notes").write_text("my notes")
    (tmp_path / "sub").mkdir()
    cwd = str(tmp_path)
    jobs = [
        [m, "-o", f"{cwd}/notes/"],  # a regular file
        [m, "-o", f"{cwd}/results/"],  # nothing there
        ["optimize", m, "-o", f"{cwd}/results/"],
        ["lint", m, "-o", f"{cwd}/notes/"],
        ["lint", m, "-o", f"{cwd}/results/"],
        [m, "-o", f"{cwd}/notes/."],
        [m, "-o", f"{cwd}/sub/"],  # a folder
    ]
    res = run_batch([{"args": a, "cwd": cwd} for a in jobs], [cwd])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2, r
    for r in (res[0], res[3], res[5]):
        assert f"folder {cwd}/notes is not a folder" in r["stderr"], r
    for r in (res[1], res[2], res[4]):
        assert f"folder {cwd}/results does not exist" in r["stderr"], r
    assert "it is a folder" in res[6]["stderr"]
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "notes", "sub"]
    assert (tmp_path / "notes").read_text() == "my notes" and os.listdir(tmp_path / "sub") == []


def test_stdin_and_stdout(tmp_path):
    m = small_model(str(tmp_path / "m.onnx"))
    ext = build(str(tmp_path / "ext"))
    cwd = str(tmp_path)
    jobs = [
        {"args": ["-"], "stdin": m, "cwd": cwd},
        {"args": ["--json", "-", "--bind", "n=3"], "stdin": m, "cwd": cwd},
        {"args": ["optimize", "-", "-o", "-"], "stdin": m, "cwd": cwd},
        {"args": ["lint", "-"], "stdin": m, "cwd": cwd},
        {"args": ["-"], "stdin": ext, "cwd": cwd},  # external data of a model without a folder
        {"args": ["-", "-o", f"{cwd}/copy.onnx"], "stdin": ext, "cwd": cwd},
    ]
    res = run_batch(jobs, [cwd, str(tmp_path / "ext")])
    for r in res:
        check_clean(r)
    plain, js, opt, lint, ext_infer, ext_out = res
    assert plain["rc"] == 0 and "[n, 6]" in plain["stdout"], plain
    assert js["rc"] == 0 and '"model": "-"' in js["stdout"]
    assert opt["rc"] == 0 and "wrote the model to standard output" in opt["stderr"], opt
    assert lint["rc"] in (0, 1), lint
    assert ext_infer["rc"] == 0 and "E003" in ext_infer["stdout"] and "folder is unknown" in ext_infer["stdout"]
    assert ext_out["rc"] == 2 and "no folder (read from stdin" in ext_out["stderr"], ext_out
    assert not os.path.exists(f"{cwd}/copy.onnx")


def test_stdout_model_is_the_binary_model(tmp_path):
    m = small_model(str(tmp_path / "m.onnx"))
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.cli", m, "-o", "-"], capture_output=True, timeout=60, cwd=tmp_path
    )
    assert r.returncode == 0 and b"wrote the model to standard output" in r.stderr
    out = onnx.ModelProto.FromString(r.stdout)
    assert out.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 6
    with open(m, "rb") as f:
        r2 = subprocess.run([sys.executable, "-m", "shapeinfer.cli", "-", "-o", "-"], stdin=f, capture_output=True)
    assert r2.returncode == 0 and r2.stdout == r.stdout


def test_stdout_that_is_an_input_is_refused(tmp_path):
    """``-o - >> MODEL`` (or ``>> DATA``, its external data file) would append the model to a
    file the run reads: refused with one line and exit 2, the file unchanged; standard output
    appended to any other file is written."""
    from support.files import save_external

    m = small_model(str(tmp_path / "m.onnx"))
    ext = save_external(tmp_path / "e" / "e.onnx")
    data = str(tmp_path / "e" / "model.data")
    cases = [
        ([m, "-o", "-"], None, m),
        (["optimize", m, "-o", "-"], None, m),
        (["lint", m, "-o", "-"], None, m),
        (["-", "-o", "-"], m, m),  # standard input and output both the model
        ([ext, "-o", "-"], None, data),
        (["optimize", ext, "-o", "-"], None, data),
    ]
    for args, stdin, appended in cases:
        before = {p: Path(p).read_bytes() for p in (m, ext, data)}
        with open(appended, "ab") as out, open(stdin or os.devnull, "rb") as inp:
            r = subprocess.run(
                [sys.executable, "-m", "shapeinfer.cli", *args],
                stdin=inp,
                stdout=out,
                stderr=subprocess.PIPE,
                timeout=60,
            )
        err = r.stderr.decode()
        assert r.returncode == 2 and len(err.strip().splitlines()) == 1, (args, err)
        assert "would be written into an input of this run: standard output is" in err, (args, err)
        assert {p: Path(p).read_bytes() for p in before} == before, args
    with open(tmp_path / "log.onnx", "ab") as out:
        r = subprocess.run([sys.executable, "-m", "shapeinfer.cli", m, "-o", "-"], stdout=out, timeout=60)
    assert r.returncode == 0
    out = onnx.load(str(tmp_path / "log.onnx"))
    assert out.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 6


def test_a_report_on_stdout_never_lands_in_a_file_the_run_reads(tmp_path):
    """``shapeinfer m.onnx >> m.onnx`` (any command printing to standard output, ``lint`` of a
    folder too) appended the report to the model: refused with one line and exit 2, the model
    unchanged, as GNU cat refuses "input file is output file"."""
    m = small_model(str(tmp_path / "m.onnx"))
    before = Path(m).read_bytes()
    commands = [[m], ["lint", m], ["lint", str(tmp_path)], ["profile", m], ["verify", m], ["diff", m, m]]
    commands += [["explain", m, "y"], ["--json", m]]
    for args in commands:
        with open(m, "ab") as out:
            r = subprocess.run(
                [sys.executable, "-m", "shapeinfer.cli", *args], stdout=out, stderr=subprocess.PIPE, timeout=60
            )
        err = r.stderr.decode()
        assert r.returncode == 2 and "standard output is" in err, (args, err)
        assert Path(m).read_bytes() == before, args
    from support.files import save_external

    ext = save_external(tmp_path / "e" / "e.onnx")
    data = tmp_path / "e" / "model.data"
    before = data.read_bytes()
    for args in ([ext], ["profile", ext], ["verify", ext], ["lint", ext], ["lint", "--jobs", "2", ext, m]):
        with open(data, "ab") as out:
            r = subprocess.run(
                [sys.executable, "-m", "shapeinfer.cli", *args], stdout=out, stderr=subprocess.PIPE, timeout=60
            )
        assert r.returncode == 2 and "the external data of an input model" in r.stderr.decode(), args
        assert data.read_bytes() == before, args


def test_huge_numbers_on_the_command_line(tmp_path):
    m = small_model(str(tmp_path / "m.onnx"))
    cwd = str(tmp_path)
    bomb = "*".join(["(" + "+".join(f"s{i}_{k}" for k in range(10)) + ")" for i in range(10)])
    jobs = [
        ["--json", m, "--bind", "n=" + "9" * 55],
        [m, "--bind", "n=" + "9" * 5000],
        [m, "--bind", "n=9223372036854775808"],
        ["--json", m, "--input-shape", f"x={bomb},2,3"],
        [m, "--input-shape", "x=" + "9" * 30 + ",2,3"],
        ["optimize", m, "--bind", "n=" + "9" * 40],
        ["verify", m, "--bind", "n=" + "9" * 40],
        ["verify", m, "--bind", "n=2", "--max-memory", "lots"],
    ]
    res = run_batch([{"args": a, "cwd": cwd, "timeout": 10} for a in jobs], [cwd])
    for r in res:
        check_clean(r)
        assert r["rc"] == 2, r
    for r in res[:3] + res[4:7]:
        assert "out of range (at most 2**63-1)" in r["stderr"], r
    assert "more complex than the expression cap" in res[3]["stderr"]
    assert "--max-memory 'lots'" in res[7]["stderr"]
    ok = run_batch([{"args": [m, "--bind", "n=9223372036854775807"], "cwd": cwd}], [cwd])[0]
    check_clean(ok)
    assert ok["rc"] == 0, ok


def test_non_utf8_model_path_with_utf8_terminal(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/mod\xff\xfe.onnx"
    small_model(os.fsdecode(name))
    folder_out = os.fsencode(str(tmp_path)) + b"/out\xff.onnx"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    for args in ([name], [name, b"-o", folder_out], [b"optimize", name, b"-o", folder_out], [b"lint", name]):
        r = subprocess.run([sys.executable, "-m", "shapeinfer.cli", *args], capture_output=True, env=env, timeout=60)
        assert b"Traceback" not in r.stderr and b"UnicodeEncodeError" not in r.stderr, r.stderr
        assert r.returncode in (0, 1), r.stderr
        assert b"mod\\xff\\xfe.onnx" in r.stdout or args[0] == b"lint", r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer.cli", os.fsencode(str(tmp_path)) + b"/gone\xff.onnx"],
        capture_output=True,
        env=dict(env, PYTHONIOENCODING="ascii"),
        timeout=60,
    )
    assert r.returncode == 2 and r.stderr.strip().endswith(b"gone\\xff.onnx: no such file"), r.stderr


def test_socket_is_not_opened(tmp_path):
    """A socket named as the model is refused from its stat alone."""
    p = str(tmp_path / "s.onnx")
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    try:
        assert stat.S_ISSOCK(os.stat(p).st_mode)
        from shapeinfer.io.userfiles import UserFileError, read_input

        with pytest.raises(UserFileError, match="is a socket"):
            read_input(p)
    finally:
        s.close()


def test_external_data_never_copied_onto_the_output_model(tmp_path):
    """A data file named like the output model: copying it would be overwritten by the model."""
    from shapeinfer.io.external import ExternalDataError
    from shapeinfer.io.onnxio import load_model
    from shapeinfer.io.writer import save_model

    folder = str(tmp_path / "m")
    entry = [("location", "out.onnx"), ("offset", "0"), ("length", "16")]
    wentry = [("location", "out.onnx"), ("offset", "16"), ("length", "2400")]
    model = build(folder, entry, wentry, data=False)
    with open(os.path.join(folder, "out.onnx"), "wb") as f:
        f.write(np.array([-1, 6], np.int64).tobytes() + np.ones((6, 100), np.float32).tobytes())
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ExternalDataError, match="onto the output model"):
        save_model(load_model(model), str(other / "out.onnx"), model)
    assert os.listdir(other) == []


def test_sarif_report_of_a_non_utf8_model_path(tmp_path):
    """Found by tools/fuzz/fuzz_io.py: lint --format sarif on a model whose name is not UTF-8
    (with findings) was an internal UnicodeEncodeError; the URI percent-encodes the bytes."""
    import json as _json

    folder = str(tmp_path / "m")
    model = build(folder, [("location", "data.bin"), ("offset", " 8")])
    odd = os.fsdecode(os.fsencode(folder) + b"/m\xff.onnx")
    os.rename(model, odd)
    report = str(tmp_path / "r.sarif")
    (r,) = run_batch(
        [{"args": ["lint", "--format", "sarif", odd, "-o", report], "cwd": str(tmp_path)}], [str(tmp_path)]
    )
    check_clean(r)
    assert r["rc"] == 1, r
    with open(report) as f:
        results = _json.load(f)["runs"][0]["results"]
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in results}
    assert uris == {"file://" + os.fsencode(odd).replace(b"\xff", b"%FF").decode()}
