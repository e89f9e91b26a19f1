"""The ``--json`` documents of ``infer``, ``optimize``, ``verify`` and ``profile`` against the JSON
Schemas shipped in the package (shapeinfer/schemas/), and what issue 26 asked of them: a version, the values of shape
tensors, producers, each equality once, machine keys."""

from __future__ import annotations

import json
from importlib import resources

import onnx
import pytest
from support.common import MODEL_NAMES, model_path, run_cli

import shapeinfer

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra: pip install -e '.[test]'")


def _schema(name: str) -> dict:
    return json.loads(resources.files("shapeinfer").joinpath("schemas", f"{name}.schema.json").read_text())


def _validate(doc: dict, name: str) -> None:
    schema = _schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_infer_json_follows_its_schema(name):
    r = run_cli(str(model_path(name)), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    _validate(doc, "infer")
    assert doc["schema"] == 1
    model = onnx.load(str(model_path(name)), load_external_data=False)
    made = {o: (n.op_type, n.name) for n in model.graph.node for o in n.output}
    for t in doc["tensors"].values():
        if t["name"] in made:
            assert (t["producer"]["op"], t["producer"]["node"]) == made[t["name"]]
    inits = {t.name for t in model.graph.initializer}
    assert all(doc["tensors"][n]["producer"] == {"op": "initializer"} for n in inits if n in doc["tensors"])
    assert all(i["producer"] == {"op": "input"} for i in doc["inputs"])


def test_infer_json_variants_follow_the_schema(tmp_path):
    path = str(model_path("bert_ts"))
    for args in (
        ["--all", "--json"],
        ["--filter", "Shape*", "--json"],
        ["--bind", "batch=2", "--json"],
        ["--summary", "--json"],
    ):
        r = run_cli(path, *args, "-o", str(tmp_path / "o.onnx"))
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        _validate(doc, "infer")
        assert doc["written"] == str(tmp_path / "o.onnx")


def test_values_of_shape_tensors_are_in_the_json():
    """A Shape output's value is the input's dims, as expression text: what the API's
    Fact.value says."""
    path = model_path("bert_ts")
    doc = json.loads(run_cli(str(path), "--json").stdout)
    result = shapeinfer.infer(path)
    shapes = [n.output[0] for n in result.model.graph.node if n.op_type == "Shape"]
    assert shapes
    for name in shapes:
        f = result.facts[name]
        assert doc["tensors"][name]["value"] == [v if type(v) is int else str(v) for v in f.value]
    assert not any("value" in t for t in doc["tensors"].values() if t["dtype"] == "float")


def test_equalities_are_listed_once():
    """bert_ts: inference records seq == min(seq, 512) at two nodes; the document lists it once."""
    path = model_path("bert_ts")
    recorded = [tuple(e) for e in shapeinfer.infer(path).equalities]
    assert len(recorded) > len(set(recorded))  # the case: the engine records one per node
    doc = json.loads(run_cli(str(path), "--json").stdout)
    assert [tuple(e) for e in doc["equalities"]] == list(dict.fromkeys(recorded))


@pytest.mark.parametrize("name", ["bert_ts", "llama_dynamo"])
def test_optimize_json_follows_its_schema_with_machine_keys(name, tmp_path):
    r = run_cli("optimize", str(model_path(name)), "-o", str(tmp_path / "o.onnx"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    _validate(doc, "optimize")
    keys = {k for p in doc["passes"] for k in p["changes"]}
    assert "tensors_folded_to_initializers" in keys or name != "bert_ts"
    assert all(" " not in k for k in keys)


def test_schemas_are_shipped_as_package_data():
    text = (model_path("bert_ts").parents[2] / "pyproject.toml").read_text()
    assert '"schemas/*.json"' in text
    for name in ("infer", "optimize", "verify", "profile"):
        assert _schema(name)["properties"]["schema"] == {"const": 1}


# --- verify --json and profile --json (issue 26: a schema field everywhere) ---


def _cli_json(*args: str, code: int = 0) -> dict:
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == code, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("name", ["bert_ts", "gpt2_ts", "llama_dynamo", "vit_dynamo"])
def test_verify_json_follows_its_schema(name):
    pytest.importorskip("onnxruntime")
    symbols = sorted(shapeinfer.infer(model_path(name)).input_symbols)
    binds = [",".join(f"{s}={v}" for s in symbols) or "x=1" for v in (1, 3)] if symbols else []
    args = [a for b in binds for a in ("--bind", b)]
    doc = _cli_json("verify", str(model_path(name)), *args, "--json")
    _validate(doc, "verify")
    assert doc["schema"] == 1 and doc["summary"]["checked"] > 0


def test_verify_json_with_mismatches_and_unresolved_follows_its_schema(tmp_path, monkeypatch):
    """The findings' shape: a broken Transpose rule gives dim and value mismatches; a NonZero
    output is unresolved (a mismatch with --strict)."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from shapeinfer.inference import op_registry as registry

    registry.load_all()
    path = str(tmp_path / "small.onnx")
    small = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), helper.make_node("Shape", ["t"], ["s"])],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, None)],
    )
    onnx.save(helper.make_model(small, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    with monkeypatch.context() as m:
        # a deliberately wrong Transpose rule: the input's shape, unpermuted
        m.setitem(registry._RULES, ("", "Transpose"), [(1, lambda ctx, ins: [ins[0]])])
        doc = _cli_json("verify", path, "--bind", "a=2,b=5", "--json", code=1)
    _validate(doc, "verify")
    assert {f["reason"] for f in doc["mismatches"]} >= {"dim", "value"}
    g = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["nz"])],
        "nz",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("nz", TensorProto.INT64, None)],
    )
    path = str(tmp_path / "nz.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    doc = _cli_json("verify", path, "--bind", "n=6", "--json")
    _validate(doc, "verify")
    assert [u["reason"] for u in doc["unresolved"]] == ["unresolved"]
    doc = _cli_json("verify", path, "--bind", "n=6", "--strict", "--json", code=1)
    _validate(doc, "verify")
    assert len(doc["mismatches"]) == 1


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_profile_json_follows_its_schema(name):
    doc = _cli_json("profile", str(model_path(name)), "--json")
    _validate(doc, "profile")
    assert doc["schema"] == 1 and not doc["errors"]
    assert [i["name"] for i in doc["inputs"]] == [
        i.name
        for i in onnx.load(str(model_path(name)), load_external_data=False).graph.input
        if i.name not in {t.name for t in onnx.load(str(model_path(name)), load_external_data=False).graph.initializer}
    ]


def test_profile_json_variants_follow_the_schema():
    path = str(model_path("bert_ts"))
    doc = _cli_json("profile", path, "--dim-range", "batch=1:4", "--opt", "seq=64", "--json")
    _validate(doc, "profile")
    assert doc["trtexec"]["maxShapes"] == "input_ids:4x512,attention_mask:4x512"
    assert doc["onnxruntime_free_dimension_overrides"]["opt"] == {"batch": 4, "seq": 64}
    assert doc["openvino_input"] == "input_ids[1..4,1..512],attention_mask[1..4,1..512]"
    doc = _cli_json("profile", path, "--dim-range", "seq=513:", "--json", code=1)  # no profile
    _validate(doc, "profile")
    assert doc["errors"] and doc["openvino_input"] is None
    assert all(v is None for v in doc["onnxruntime_free_dimension_overrides"].values())


def test_lint_json_follows_its_schema(tmp_path):
    """The example models and every model under tests/models (deploy, exporters, ...), and a
    folder with a broken file (E900) written with -o."""
    examples = model_path("bert_ts").parent
    tests_models = examples.parents[1] / "tests" / "models"
    r = run_cli("lint", str(examples), str(tests_models), "--format", "json")
    doc = json.loads(r.stdout)
    _validate(doc, "lint")
    assert len(doc) > 20 and all(f["schema"] == 1 for f in doc)
    assert {f["severity"] for f in doc} >= {"warning", "info"}
    (tmp_path / "broken.onnx").write_bytes(b"not a model")
    out = tmp_path / "report.json"
    r = run_cli("lint", str(tmp_path), "--format", "json", "-o", str(out))
    doc = json.loads(out.read_text())
    _validate(doc, "lint")
    assert [f["code"] for f in doc] == ["E900"]
