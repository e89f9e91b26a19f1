"""``shapeinfer optimize`` on broken input (issue 23): the input's errors are reported as
``infer`` reports them, a model with errors is not written without ``--force`` (exit 1, the
message ``infer`` gives when it does not write), and nodes are written in topological order."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper

from shapeinfer.cli.main import main

MERGED = Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx"


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _undefined_input() -> onnx.ModelProto:
    return _model(
        [h.make_node("Add", ["x", "ghost"], ["y"])],
        [h.make_tensor_value_info("x", TP.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", TP.FLOAT, ["n"])],
    )


def _reshape_error() -> onnx.ModelProto:
    return _model(
        [h.make_node("Reshape", ["x", "s"], ["y"])],
        [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", TP.FLOAT, [4])],
        [numpy_helper.from_array(np.array([4], np.int64), "s")],
    )


def _unsorted() -> onnx.ModelProto:
    """x -> Relu -> Neg, listed backwards (nothing for the passes to change)."""
    return _model(
        [h.make_node("Neg", ["a"], ["y"]), h.make_node("Relu", ["x"], ["a"])],
        [h.make_tensor_value_info("x", TP.FLOAT, ["n", 3])],
        [h.make_tensor_value_info("y", TP.FLOAT, ["n", 3])],
    )


def _invoke(*args: str):
    return CliRunner().invoke(main, ["optimize", *args])


@pytest.mark.parametrize(
    ("make", "code", "text"),
    [
        (_undefined_input, "G005", "input 'ghost' is not defined"),
        (_reshape_error, "R004", "cannot reshape 6 elements into [4]"),
    ],
)
def test_a_model_with_errors_is_reported_and_not_written_without_force(tmp_path, make, code, text):
    src = tmp_path / "in.onnx"
    onnx.save(make(), str(src))
    infer = CliRunner().invoke(main, [str(src)])
    line = next(x for x in infer.stdout.splitlines() if f"error {code}" in x)  # as infer reports it
    assert text in line
    out = tmp_path / "out.onnx"
    r = _invoke(str(src), "-o", str(out))
    assert r.exit_code == 1, r.output
    assert line in r.stdout.splitlines()
    assert r.stderr.strip() == f"shapeinfer: {out} not written: the model has 1 error (--force writes it anyway)"
    assert f"wrote {out}" not in r.stdout
    assert not out.exists()
    # --json: the same errors, the output null, validated by the shipped schema
    r = _invoke(str(src), "-o", str(out), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["output"] is None and [d["code"] for d in doc["diagnostics"]] == [code]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("shapeinfer").joinpath("schemas", "optimize.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert not out.exists()
    # --force writes it; without -o there is nothing to refuse
    r = _invoke(str(src), "-o", str(out), "--force")
    assert r.exit_code == 0, r.output
    assert out.exists() and line in r.stdout.splitlines()
    assert _invoke(str(src)).exit_code == 0


def _wrong_value_info() -> onnx.ModelProto:
    """Transpose of x[2, 3] declared (value_info) as [5, 5]: onnx's checker refuses it (G006 error)."""
    g = h.make_graph(
        [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node("Relu", ["t"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", TP.FLOAT, [3, 2])],
        value_info=[h.make_tensor_value_info("t", TP.FLOAT, [5, 5])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_a_contradicted_declaration_does_not_stop_the_write(tmp_path):
    """A value_info that contradicts inference (a G006 error: onnx's checker refuses the input):
    the written model declares what is inferred, so it is written, and the checker takes it."""
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(_wrong_value_info(), src)
    r = _invoke(str(src), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "error G006" in r.stdout
    onnx.checker.check_model(str(out), full_check=True)
    written = CliRunner().invoke(main, [str(out)])
    assert "0 error" in written.stdout.splitlines()[-1]


def test_a_symbolic_declaration_contradiction_is_written_too(tmp_path):
    """optimum's merged decoder declares its present outputs as the cache branch makes them: in
    the other branch a G006 between symbolic dims, a warning (no runtime refuses it), and the
    written model declares what is inferred."""
    out = tmp_path / "out.onnx"
    r = _invoke(str(MERGED), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "G006" not in r.stdout  # the input's errors are listed; this is none
    written = CliRunner().invoke(main, [str(out), "--json"])
    assert not [d for d in json.loads(written.stdout)["diagnostics"] if d["code"] == "G006"]


def test_an_unsorted_graph_is_written_sorted(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    m = _unsorted()
    onnx.save(m, str(src))
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m, full_check=True)
    r = _invoke(str(src), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "not in topological order" in r.stderr
    onnx.checker.check_model(str(out), full_check=True)
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
    sorted_in = onnx.load(str(src))
    sorted_in.graph.node.reverse()  # the same model in order, for onnxruntime
    want = ort.InferenceSession(sorted_in.SerializeToString()).run(None, {"x": x})
    got = ort.InferenceSession(str(out)).run(None, {"x": x})
    np.testing.assert_array_equal(want[0], got[0])


def test_a_binding_no_input_can_have_is_named_as_infer_names_it(tmp_path):
    """optimize --bind seq=600 of bert (which needs seq <= 512) raised onnx's "Incompatible
    dimensions" from the load check, exit 2 (the API review): the guard is named as `-o` names
    it, nothing is written, exit 1; the API raises Unsatisfiable, a BindError."""
    from support.common import model_path

    import shapeinfer
    from shapeinfer.inference.bindings import BindError, Unsatisfiable

    bert = str(model_path("bert_ts"))
    with pytest.raises(Unsatisfiable, match="seq=600 contradicts the guard seq <= 512") as e:
        shapeinfer.optimize(bert, bind={"seq": 600})
    assert isinstance(e.value, BindError)
    out = tmp_path / "o.onnx"
    res = CliRunner().invoke(main, ["optimize", bert, "--bind", "seq=600", "-o", str(out)])
    assert res.exit_code == 1 and not out.exists()
    assert "--bind the value seq=600 contradicts the guard seq <= 512" in res.stderr
    assert "not written: no input size satisfies the guards (G015)" in res.stderr
    assert shapeinfer.optimize(bert, bind={"seq": 512}) is not None  # the guard's edge runs


def test_a_binding_no_input_can_have_still_prints_the_json_report(tmp_path):
    """optimize --json under a G015 printed nothing on stdout (exit 1): a CI step parsing the
    report had no document. It prints the report of a run in which no pass ran, the G015
    among its diagnostics, valid against the schema; nothing is written."""
    from support.common import ROOT, model_path

    jsonschema = pytest.importorskip("jsonschema")

    bert = str(model_path("bert_ts"))
    out = tmp_path / "o.onnx"
    res = CliRunner().invoke(main, ["optimize", bert, "--bind", "seq=600", "--json", "-o", str(out)])
    assert res.exit_code == 1 and not out.exists()
    doc = json.loads(res.stdout)
    schema = json.loads((ROOT / "shapeinfer" / "schemas" / "optimize.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["output"] is None and doc["passes"] == [] and doc["rounds"] == 0
    assert doc["nodes_before"] == doc["nodes_after"] == len(onnx.load(bert).graph.node)
    assert [d["code"] for d in doc["diagnostics"]] == ["G015"]
    assert "seq=600 contradicts the guard seq <= 512" in doc["diagnostics"][0]["message"]
    assert "not written: no input size satisfies the guards (G015)" in res.stderr


def test_a_model_that_cannot_run_at_any_size_is_refused_not_a_traceback(tmp_path):
    """A model whose own guards cannot all hold (its G015, no --bind) crashed optimize -o with
    an AttributeError since 0a76967 read its first error as a --bind no input can have (fuzz
    seed 182, case 437). It is refused as any model with errors is: exit 1, nothing written."""
    g = h.make_graph(  # row 7 needs 8 <= n, the Reshape to [5] needs n == 5
        [h.make_node("Gather", ["x", "seven"], ["r"]), h.make_node("Reshape", ["x", "five"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", TP.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", TP.FLOAT, None), h.make_tensor_value_info("r", TP.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(7, np.int64), "seven"),
            numpy_helper.from_array(np.array([5], np.int64), "five"),
        ],
    )
    path = tmp_path / "never.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    out = tmp_path / "o.onnx"
    for extra in ([], ["--json"]):
        res = CliRunner().invoke(main, ["optimize", str(path), "-o", str(out), *extra])
        assert res.exit_code == 1 and not isinstance(res.exception, AttributeError), res.output
        assert "not written: the model has 1 error" in res.stderr and not out.exists()
