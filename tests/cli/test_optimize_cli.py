"""The ``shapeinfer optimize`` command: output, report, options and one-line errors."""

from __future__ import annotations

import json
import shutil

import onnx
import pytest
from click.testing import CliRunner
from support.common import model_path

from shapeinfer.cli.main import main
from shapeinfer.passes import DEFAULT_PASSES


def invoke(*args: str):
    return CliRunner().invoke(main, ["optimize", *args])


def one_line_error(result, needle: str) -> None:
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shapeinfer: error:") and needle in lines[0]
    assert "Traceback" not in result.output


def test_writes_the_model_and_reports_each_pass(tmp_path):
    out = tmp_path / "o.onnx"
    r = invoke(str(model_path("gpt2_ts")), "-o", str(out))
    assert r.exit_code == 0, r.output
    m = onnx.load(str(out))
    onnx.checker.check_model(m)
    for name in DEFAULT_PASSES:
        assert name in r.stdout
    before = len(onnx.load(str(model_path("gpt2_ts"))).graph.node)
    assert f"nodes {before} -> {len(m.graph.node)}" in r.stdout
    assert f"wrote {out}" in r.stdout


def test_json_report(tmp_path):
    r = invoke(str(model_path("vit_dynamo")), "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["output"] is None
    assert [p["name"] for p in doc["passes"]] == list(DEFAULT_PASSES)
    assert doc["nodes_after"] < doc["nodes_before"]
    assert sum(p["node_delta"] for p in doc["passes"]) == doc["nodes_after"] - doc["nodes_before"]


def test_list_passes():
    r = invoke("--list-passes")
    assert r.exit_code == 0
    assert [line.split()[0] for line in r.stdout.splitlines()[: len(DEFAULT_PASSES)]] == list(DEFAULT_PASSES)


def test_passes_and_bind(tmp_path):
    out = tmp_path / "o.onnx"
    r = invoke(
        str(model_path("bert_ts")), "--passes", "fold-shapes,canonicalize-reshape", "--bind", "batch=1", "-o", str(out)
    )
    assert r.exit_code == 0, r.output
    assert "remove-noop-reshape" not in r.stdout and "dedupe-shapes" not in r.stdout
    m = onnx.load(str(out))
    dims = [[d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim] for vi in m.graph.input]
    assert dims == [[1, "seq"], [1, "seq"]]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--passes", "fold-shapes,nope"], "unknown pass 'nope'"),
        (["--passes", ","], "--passes needs"),
        (["--bind", "nosuch=3"], "no graph input has a dim named 'nosuch'"),
        (["--bind", "batch=x"], "must be an integer"),
        (["--target-opset", "9"], "below the model's opset 17"),
        (["--target-opset", "999"], "--target-opset 999"),
    ],
)
def test_bad_options_give_one_line_and_exit_2(args, needle):
    one_line_error(invoke(str(model_path("bert_ts")), *args), needle)


def test_bad_inputs_give_one_line_and_exit_2(tmp_path):
    one_line_error(invoke(str(tmp_path / "missing.onnx")), "no such file")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model at all")
    one_line_error(invoke(str(junk)), "not an ONNX model")
    one_line_error(invoke(), "needs a MODEL")


def test_output_over_the_input_needs_in_place(tmp_path):
    src = tmp_path / "m.onnx"
    shutil.copy(model_path("vit_dynamo"), src)
    before = src.read_bytes()
    one_line_error(invoke(str(src), "-o", str(src)), "--in-place")
    assert src.read_bytes() == before
    r = invoke(str(src), "-o", str(src), "--in-place")
    assert r.exit_code == 0
    assert len(onnx.load(str(src)).graph.node) < len(onnx.load(str(model_path("vit_dynamo"))).graph.node)


def test_bind_fallback_is_a_note_on_stderr(tmp_path):
    from support.builders import runtime_guard_model

    src, out = tmp_path / "in.onnx", tmp_path / "o.onnx"
    onnx.save(runtime_guard_model(), str(src))
    r = invoke(str(src), "--bind", "batch=2", "-o", str(out))
    assert r.exit_code == 0, r.output
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: --bind: kept the declared dims")]
    assert len(notes) == 1 and "graph input x" in notes[0]
    assert onnx.load(str(out)).graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_force_never_writes_a_model_that_loads_worse(tmp_path):
    """optimize --force writes despite the input's errors, not despite its output's loading:
    an If on n > 15 whose then-branch adds a [1, 4, 1] to x[1, 64, n] (an error where it runs;
    onnxruntime runs the model at n <= 15, the branch not taken) lost the Reshape(x, Shape(x))
    that hid x's dims from onnx's inference, and onnxruntime refused the output at every size.
    Now the output is load-checked: it loads and computes the same, or nothing is written."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    f = TensorProto.FLOAT
    then = helper.make_graph(
        [helper.make_node("Add", ["t", "c4"], ["y_t"])], "then", [], [helper.make_tensor_value_info("y_t", f, None)]
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["t"], ["y_e"])], "else", [], [helper.make_tensor_value_info("y_e", f, None)]
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Reshape", ["x", "s"], ["t"]),
        helper.make_node("ReduceSum", ["s", "ax0"], ["sum"], keepdims=0),
        helper.make_node("Greater", ["sum", "k80"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
    ]
    inits = {"c4": np.ones((1, 4, 1), np.float32), "ax0": np.array([0], np.int64), "k80": np.array(80, np.int64)}
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", f, [1, 64, "n"])],
        [helper.make_tensor_value_info("y", f, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(src))
    r = CliRunner().invoke(main, ["optimize", "--force", str(src), "-o", str(out)])
    if r.exit_code != 0:
        assert "nothing written" in r.output and not out.exists(), r.output
        return
    for n in (1, 15):
        x = {"x": np.ones((1, 64, n), np.float32)}
        (a,) = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, x)
        (b,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, x)
        assert np.array_equal(a, b)
