"""The `shapeinfer MODEL` command, run as users run it: a subprocess of the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx
import pytest
from conftest import load_stripped, model_path


def run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shapeinfer.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_help_and_version():
    r = run("--help")
    assert r.returncode == 0
    assert "shapeinfer MODEL" in r.stdout and "Exit codes" in r.stdout
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("shapeinfer ")
    r = run("infer", "--help")
    assert r.returncode == 0 and "--input-shape" in r.stdout and "--bind" in r.stdout


def test_infer_prints_inputs_outputs_and_summary():
    r = run(str(model_path("bert_ts")))
    assert r.returncode == 0, r.stderr
    assert "input_ids" in r.stdout and "[batch, seq]" in r.stdout
    assert "[batch, seq, 64]" in r.stdout
    assert "100.0% fully resolved" in r.stdout and "0 fresh symbols" in r.stdout


def test_output_model_has_value_info(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(load_stripped("llama_dynamo"), str(src))
    out = tmp_path / "o.onnx"
    r = run(str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    names = {vi.name for vi in m.graph.value_info}
    produced = {o for n in m.graph.node for o in n.output if o} - {o.name for o in m.graph.output}
    assert names == produced
    dims = [d.dim_param or d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 1000]
    # weights untouched
    orig = onnx.load(str(src))
    assert [t.SerializeToString() for t in m.graph.initializer] == [
        t.SerializeToString() for t in orig.graph.initializer
    ]


def test_json_output():
    r = run(str(model_path("vit_dynamo")), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["inputs"][0]["shape"] == ["batch", 3, 64, 64]
    assert doc["outputs"][0]["shape"] == ["batch", 17, 64]
    assert doc["summary"]["resolved_pct"] == 100.0
    assert doc["symbols"]["inputs"] == ["batch"]
    assert len(doc["tensors"]) > 300


def test_input_shape_and_bind():
    r = run(str(model_path("gpt2_ts")), "--input-shape", "input_ids=1,seq", "--input-shape", "attention_mask=1,seq")
    assert r.returncode == 0, r.stderr
    assert "[1, seq, 1000]" in r.stdout
    r = run(str(model_path("gpt2_ts")), "--bind", "batch=2,seq=7", "--json")
    doc = json.loads(r.stdout)
    assert doc["outputs"][0]["shape"] == [2, 7, 1000]


@pytest.mark.parametrize(
    "content,needle",
    [
        (None, "no such file"),
        (b"", "empty file"),
        (b"\x00\x01\x02garbage" * 50, "not an ONNX model"),
        (b"hello, this is text\n", "not an ONNX model"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, content, needle):
    p = tmp_path / "bad.onnx"
    if content is not None:
        p.write_bytes(content)
    r = run(str(p))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and str(p) in lines[0]


def test_directory_and_bad_flags(tmp_path):
    r = run(str(tmp_path))
    assert r.returncode == 2 and "directory" in r.stderr and "Traceback" not in r.stderr
    r = run(str(model_path("bert_ts")), "--bind", "batch=two")
    assert r.returncode == 2 and "integer" in r.stderr
    r = run(str(model_path("bert_ts")), "--input-shape", "nosuch=1,2")
    assert r.returncode == 2 and "nosuch" in r.stderr and "Traceback" not in r.stderr


def test_output_equal_to_input_is_refused(tmp_path):
    src = tmp_path / "m.onnx"
    src.write_bytes(model_path("bert_ts").read_bytes())
    before = src.read_bytes()
    r = run(str(src), "-o", str(src))
    assert r.returncode == 2 and "--in-place" in r.stderr
    assert src.read_bytes() == before
    r = run(str(src), "-o", str(src), "--in-place")
    assert r.returncode == 0
    assert len(onnx.load(str(src)).graph.value_info) > 300
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".shapeinfer-")]


def test_timeout_is_a_clear_error(tmp_path):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Add", [f"x{i}", "one"], [f"x{i + 1}"]) for i in range(20000)]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("x20000", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1.0], np.float32), "one")],
    )
    p = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
    r = run(str(p), "--timeout", "0.001")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"shapeinfer: error: {p}: inference took longer than 0.001s"
    r = run(str(p), "--timeout", "300")
    assert r.returncode == 0 and "[n]" in r.stdout


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    """A file the user may not read (simulated: the tests run as root, who reads anything)."""
    from click.testing import CliRunner

    from shapeinfer.cli import main

    p = tmp_path / "secret.onnx"
    p.write_bytes(model_path("bert_ts").read_bytes())
    real_open = os.open

    def deny(file, *a, **k):
        if str(file) == str(p):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    r = CliRunner().invoke(main, [str(p)])
    assert r.exit_code == 2
    assert r.output.strip() == f"shapeinfer: error: {p}: cannot read: Permission denied"
