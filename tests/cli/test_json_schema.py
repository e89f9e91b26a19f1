"""The ``--json`` documents of ``infer`` and ``optimize`` against the JSON Schemas shipped in the
package (shapeinfer/schemas/), and what issue 26 asked of them: a version, the values of shape
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
    for name in ("infer", "optimize"):
        assert _schema(name)["properties"]["schema"] == {"const": 1}
