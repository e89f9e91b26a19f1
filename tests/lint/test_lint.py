"""The lint rule catalog: every rule fires on a model built to break it and stays quiet on a
close model that does not; the shipped models lint clean of errors; profiles and settings."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.common import MODEL_NAMES, ROOT, model_path

from shapeinfer.lint import RULES, lint_model
from shapeinfer.lint.config import ConfigError, LintConfig, profile_names, resolve
from shapeinfer.lint.registry import expand
from shapeinfer.lint.rules.reshape import canonical_target
from shapeinfer.lint.runner import lint_path
from shapeinfer.symbolic import dims as D
from testkit.lint_models import CASES, ints, make, out, reshape_const, vi


def findings_for(case):
    return lint_model(case.build(), "m.onnx", target=case.target)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_case(case):
    found = [f for f in findings_for(case) if f.code == case.code]
    if not case.triggers:
        assert found == [], [f.message for f in found]
        return
    assert found, f"{case.code} did not fire on {case.label}"
    for f in found:
        assert f.path == "m.onnx"
        assert f.name == RULES[case.code].name
        assert f.severity in ("error", "warning", "info")
        assert f.message
    if case.node is not None:
        assert any(f.node == case.node and f.op_type and f.index is not None and f.graph == "main" for f in found), [
            (f.node, f.op_type, f.index, f.graph) for f in found
        ]


def test_every_rule_has_a_triggering_and_a_clean_model():
    hit = {c.code for c in CASES if c.triggers}
    clean = {c.code for c in CASES if not c.triggers}
    # E900, E003 need a file (test_lint_cli, test_lint_runtime); E001 is a rule's crash or the
    # --timeout (test_hardening), E032 a loop past the fixpoint bound (test_lint_ci)
    expected = set(RULES) - {"E900", "E003", "E001", "E032"}
    assert expected - hit == set()
    assert expected - clean == set()
    # and the catalog is the one the issue lists
    issue = (
        {f"R{i:03d}" for i in range(1, 12)} | {f"S{i:03d}" for i in range(1, 5)} | {f"G{i:03d}" for i in range(1, 9)}
    )
    issue |= {"P001", "P002", "P101", "P102", "P103"}
    assert issue <= set(RULES)


def test_unresolved_dims_are_reported_where_resolution_was_lost():
    from testkit.lint_models import nonzero_chain

    g001 = [f for f in lint_model(nonzero_chain(), "m") if f.code == "G001"]
    assert [(f.node, f.op_type, f.tensor) for f in g001] == [("bad", "NonZero", "nz")]


def test_target_rules_run_only_under_their_target():
    m = reshape_const([2, 3], [3, 2], dtype=T.INT64)
    assert "P101" in {f.code for f in lint_model(m, "m", target="onednn")}
    assert "P101" not in {f.code for f in lint_model(m, "m", target="openvino")}
    assert "P101" not in {f.code for f in lint_model(m, "m")}


def test_finding_in_a_subgraph_names_the_graph_path():
    then_g = h.make_graph(
        [h.make_node("Reshape", ["x", "t"], ["r"], name="inner")],
        "then",
        [],
        [out("r")],
        initializer=[ints("t", [5, 5])],
    )
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"], name="id")], "else", [], [out("e")])
    node = h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)
    m = make([node], [vi("x", T.FLOAT, [2, 3, 4]), vi("c", T.BOOL, [])], [out()])
    r004 = [f for f in lint_model(m, "m") if f.code == "R004"]
    assert [(f.node, f.op_type, f.index, f.graph) for f in r004] == [("inner", "Reshape", 0, "main/0.then_branch")]


@pytest.mark.parametrize(
    "in_shape,out_shape,allowzero,expected",
    [
        (("b", "s", 64), ("b", "s", 4, 16), False, [0, 0, 4, 16]),
        (("b", "s", 64), ("b*s", 64), False, [-1, 64]),
        (("b", "s", 64), ("s", "b", 64), False, None),  # two dims neither constant nor copied
        (("b", "s", 64), ("b", "s", 4, 16), True, None),  # allowzero=1: 0 cannot copy b or s
        (("b", "s", 64), ("b*s", 4, 16), True, [-1, 4, 16]),
        ((0, 5), (0, 5), True, [0, 5]),  # a literal zero under allowzero=1
        ((0, "s"), (0, "s"), True, None),  # s cannot be copied and a -1 next to a zero cannot be inferred
        ((2, "s"), (0, "s"), False, None),  # an output zero that is not a copy of the input dim
    ],
)
def test_canonical_target(in_shape, out_shape, allowzero, expected):
    ins = tuple(D.parse(x) if isinstance(x, str) else x for x in in_shape)
    outs = tuple(D.parse(x) if isinstance(x, str) else x for x in out_shape)
    assert canonical_target(ins, outs, allowzero) == expected


def test_shipped_models_lint_clean_of_errors_under_default():
    cfg = resolve(isolated=True)
    for name in MODEL_NAMES:
        res = lint_path(str(model_path(name)), cfg)
        assert not res.unreadable
        errors = [f"{f.code} {f.location} {f.message}" for f in res.findings if f.severity == "error"]
        assert errors == [], name


def test_strict_profile_promotes_warnings():
    cfg = resolve(rules="strict", isolated=True)
    res = lint_path(str(model_path("bert_ts")), cfg)
    g003 = [f for f in res.findings if f.code == "G003"]
    assert g003 and all(f.severity == "error" for f in g003)
    assert cfg.grade("G001", "warning") == "error" and cfg.grade("S002", "info") == "info"


def test_profiles_ship_and_resolve():
    assert {"default", "strict", "openvino", "onednn"} <= set(profile_names())
    assert resolve(rules="openvino", isolated=True).target == "openvino"
    assert resolve(rules="onednn", isolated=True).target == "onednn"
    with pytest.raises(ConfigError, match="unknown rule profile"):
        resolve(rules="nope", isolated=True)


def test_profile_by_path_and_extends(tmp_path):
    p = tmp_path / "ci.toml"
    p.write_text('extends = "strict"\nignore = ["G003"]\n[severity]\nR010 = "error"\n')
    cfg = resolve(rules=str(p), isolated=True)
    assert "G003" not in cfg.enabled and cfg.warnings_as_errors
    assert cfg.grade("R010", "info") == "error"
    loop = tmp_path / "loop.toml"
    loop.write_text(f'extends = "{loop}"\n')
    with pytest.raises(ConfigError, match="cycle"):
        resolve(rules=str(loop), isolated=True)


def test_selectors_and_bad_codes():
    assert expand(["R00"]) == {f"R00{i}" for i in range(1, 10)}
    assert expand(["ALL"]) == set(RULES)
    with pytest.raises(ValueError, match="Q123"):
        expand(["Q123"])
    with pytest.raises(ConfigError, match="Q1"):
        resolve(select=["Q1"], isolated=True)


def test_cli_layer_wins_over_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shapeinfer]\nignore = ["R009"]\ntarget = "openvino"\n'
        '[tool.shapeinfer.per-path-ignores]\n"legacy/*.onnx" = ["R006"]\n'
    )
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    cfg = resolve(cwd=str(sub))  # found by searching upwards
    assert "R009" not in cfg.enabled and cfg.target == "openvino"
    assert cfg.ignored_for(str(tmp_path / "legacy" / "m.onnx")) == {"R006"}
    assert cfg.ignored_for(str(tmp_path / "m.onnx")) == set()
    cfg = resolve(cwd=str(sub), select=["R009"], target="onednn")
    assert cfg.enabled == {"R009"} and cfg.target == "onednn"
    assert "R009" in resolve(cwd=str(sub), isolated=True).enabled


def test_bad_project_settings_name_the_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapeinfer]\ntarget = "tpu"\n')
    with pytest.raises(ConfigError, match="target"):
        resolve(cwd=str(tmp_path))
    (tmp_path / "pyproject.toml").write_text('[tool.shapeinfer]\nselct = ["R"]\n')
    with pytest.raises(ConfigError, match="selct"):
        resolve(cwd=str(tmp_path))
    (tmp_path / "pyproject.toml").write_text('[tool.shapeinfer.severity]\nR001 = "fatal"\n')
    with pytest.raises(ConfigError, match="R001"):
        resolve(cwd=str(tmp_path))


def test_config_is_picklable_for_workers():
    import pickle

    cfg = resolve(rules="strict", isolated=True)
    assert isinstance(pickle.loads(pickle.dumps(cfg)), LintConfig)


def test_registry_entries_are_complete():
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))
    from shapeinfer.passes import PASSES

    for code, r in RULES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), code
        assert r.severity in ("error", "warning", "info")
        assert len(r.doc) > 80, code
        assert r.fix is None or r.fix in PASSES, (code, r.fix)


def test_profiles_live_once_linked_from_the_manual():
    text = (ROOT / "rules" / "README.md").read_text()
    assert "(../docs/rules.md)" in text
    # one copy of the profiles: in the package, linked from the manual
    assert not list((ROOT / "rules").glob("*.toml"))
    for name in ("default", "strict", "openvino", "onednn"):
        assert (ROOT / "shapeinfer" / "lint" / "profiles" / f"{name}.toml").is_file()
        assert f"(../shapeinfer/lint/profiles/{name}.toml)" in text


def test_profiles_are_package_data():
    # the wheel ships shapeinfer/lint/profiles/*.toml through this package-data entry
    tomllib = pytest.importorskip("tomllib")
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pkg = doc["tool"]["setuptools"]["package-data"]["shapeinfer"]
    assert any(Path(p).match("lint/profiles/*.toml") or p == "lint/profiles/*.toml" for p in pkg)
    assert os.path.isdir(ROOT / "shapeinfer" / "lint" / "profiles")


@pytest.mark.slow
def test_wheel_contents(tmp_path):
    """`pip wheel .`: the license, py.typed and each profile exactly once, no build warning."""
    import subprocess
    import sys
    import zipfile

    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path), "-q"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0 and "No matching distribution found for setuptools" in r.stderr:
        pytest.skip("no setuptools>=77 reachable to build with")
    assert r.returncode == 0, r.stderr
    assert "Deprecat" not in r.stderr + r.stdout
    (wheel,) = tmp_path.glob("shapeinfer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "shapeinfer/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    profiles = sorted(n for n in names if n.endswith(".toml"))
    assert profiles == [
        f"shapeinfer/lint/profiles/{p}.toml" for p in ("default", "onednn", "onnxruntime", "openvino", "strict")
    ]
    assert "shapeinfer/base/runtime_ops.json" in names  # what the runtime targets load
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "Classifier: Typing :: Typed" in meta


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_annotated_by_shapeinfer_agree_with_g006(name):
    # what `shapeinfer MODEL -o OUT` writes (value_info for every tensor, symbolic dims as text)
    # must not contradict what inference derives when the written model is linted
    import shapeinfer

    annotated = shapeinfer.infer_shapes(str(model_path(name)))
    assert len(annotated.graph.value_info) > 100
    g006 = [f"{f.tensor}: {f.message}" for f in lint_model(annotated, name) if f.code == "G006"]
    assert g006 == []
    # and a corrupted annotation is caught: one dim of one value_info changed
    vi_ = next(
        v for v in annotated.graph.value_info if any(d.HasField("dim_value") for d in v.type.tensor_type.shape.dim)
    )
    dim = next(d for d in vi_.type.tensor_type.shape.dim if d.HasField("dim_value"))
    dim.dim_value += 1
    g006 = [f for f in lint_model(annotated, name) if f.code == "G006"]
    assert [f.tensor for f in g006] == [vi_.name]


def test_declared_minus_one_is_an_open_dim_not_a_mismatch():
    """Paddle declares dynamic dims as -1: on a graph output that is an open dim (no G006), the
    same as on a graph input; a declared dim that does differ is still G006."""
    from shapeinfer.lint import lint_model

    def model(declared):
        node = h.make_node("Relu", ["x"], ["y"], name="r")
        return make([node], [vi("x", T.FLOAT, ["batch", 3])], [vi("y", T.FLOAT, declared)])

    assert not [f for f in lint_model(model([-1, 3])) if f.code == "G006"]
    assert [f.code for f in lint_model(model([-1, 4])) if f.code == "G006"] == ["G006"]


def test_value_info_completes_what_inference_cannot_know():
    """A value_info declaration is taken where inference knows less (an op with no schema), and
    downstream shapes follow it; where inference knows, a contradicting declaration is G006."""
    import shapeinfer
    from shapeinfer.lint import lint_model
    from shapeinfer.symbolic import dims as D

    nodes = [h.make_node("Custom", ["x"], ["t"], domain="custom"), h.make_node("Relu", ["t"], ["y"], name="r")]
    m = make(
        nodes,
        [vi("x", T.FLOAT, ["batch", 3])],
        [vi("y", T.FLOAT, None)],
        value_info=[vi("t", T.FLOAT, ["batch", 6])],
        extra_opsets=[("custom", 1)],
    )
    r = shapeinfer.infer(m)
    assert r.dims("y") == (D.sym("batch"), 6)
    assert not [f for f in lint_model(m) if f.code == "G006"]
