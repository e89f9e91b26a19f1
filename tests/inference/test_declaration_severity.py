"""One severity per diagnostic: a declared type that contradicts inference (G006) is an error
only where onnx's checker refuses the model for it, the same in ``shapeinfer MODEL`` (text and
``--json``), ``lint`` (default target, text and ``--format json``) and the Python API; a lint
``--target`` whose runtime judges otherwise re-grades it, visibly.

The runtimes' verdicts are measured here, on each kind of contradiction, and must be the ones
:data:`shapeinfer.inference.declarations.REFUSED_BY` records.
"""

from __future__ import annotations

import json

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import shapeinfer
from shapeinfer.cli.main import main
from shapeinfer.inference.declarations import REFUSED_BY
from shapeinfer.lint import lint_model
from testkit.runtime_probe import available, probe_many

OPSET = [h.make_opsetid("", 17)]
X = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
XS = h.make_tensor_value_info("x", T.FLOAT, ["a", "b"])
XSEQ = h.make_tensor_value_info("x", T.FLOAT, ["seq"])


def _vi(name, shape, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, value_info=(), inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, value_info=list(value_info), initializer=list(inits))
    return h.make_model(g, opset_imports=OPSET, ir_version=8)


def _transpose(inputs, y, t=None):
    """x -> Transpose -> t -> Relu -> y, with ``t`` declared as given."""
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node("Relu", ["t"], ["y"])]
    return _model(nodes, inputs, [y], [t] if t is not None else [])


def _concat(y, t=None):
    """x[seq] -> Concat with [1.0] -> t[seq + 1] -> Relu -> y."""
    one = h.make_tensor("one", T.FLOAT, [1], [1.0])
    nodes = [h.make_node("Concat", ["x", "one"], ["t"], axis=0), h.make_node("Relu", ["t"], ["y"])]
    return _model(nodes, [XSEQ], [y], [t] if t is not None else [], [one])


def _initializer(declared):
    """x + w, with graph input ``w`` declared as given and a float [2, 3] initializer."""
    w = h.make_tensor("w", T.FLOAT, [2, 3], [0.0] * 6)
    return _model([h.make_node("Add", ["x", "w"], ["y"])], [X, declared], [_vi("y", [2, 3])], (), [w])


def _branches(t=None, out_type=T.FLOAT, out_shape=(3, 2)):
    """If(c) with Transpose -> t -> Relu/Neg in each branch, ``t`` and the branch outputs
    declared as given."""

    def branch(name, op):
        nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), h.make_node(op, ["t"], [f"o_{name}"])]
        return h.make_graph(
            nodes, name, [], [_vi(f"o_{name}", list(out_shape), out_type)], value_info=[t] if t is not None else []
        )

    n = h.make_node("If", ["c"], ["y"], then_branch=branch("then", "Relu"), else_branch=branch("else", "Neg"))
    return _model([n], [X, h.make_tensor_value_info("c", T.BOOL, [])], [_vi("y", [3, 2])])


#: name -> (model, kind of contradiction: a key of REFUSED_BY, or None for a symbolic one)
CASES = {
    "value-info-type": (lambda: _transpose([X], _vi("y", [3, 2]), _vi("t", [3, 2], T.INT64)), "type"),
    "value-info-rank": (lambda: _transpose([X], _vi("y", [3, 2]), _vi("t", [6])), "rank"),
    "value-info-dim": (lambda: _transpose([X], _vi("y", [3, 2]), _vi("t", [5, 5])), "dim"),
    "value-info-int-vs-symbol": (lambda: _transpose([XS], _vi("y", ["b", "a"]), _vi("t", [5, "a"])), None),
    "value-info-provably-other-symbol": (lambda: _concat(_vi("y", ["seq+1"]), _vi("t", ["seq"])), None),
    "value-info-other-symbols": (lambda: _transpose([XS], _vi("y", ["b", "a"]), _vi("t", ["a", "b"])), None),
    "output-type": (lambda: _transpose([X], _vi("y", [3, 2], T.INT64)), "type"),
    "output-rank": (lambda: _transpose([X], _vi("y", [6])), "rank"),
    "output-dim": (lambda: _transpose([X], _vi("y", [5, 5])), "dim"),
    "output-provably-other-symbol": (lambda: _concat(_vi("y", ["seq"])), None),
    "initializer-type": (lambda: _initializer(_vi("w", [2, 3], T.DOUBLE)), "initializer"),
    "initializer-rank": (lambda: _initializer(_vi("w", [6])), "initializer"),
    "initializer-dim": (lambda: _initializer(_vi("w", [2, 4])), "initializer"),
    "branch-value-info-type": (lambda: _branches(t=_vi("t", [3, 2], T.INT64)), "type"),
    "branch-value-info-dim": (lambda: _branches(t=_vi("t", [5, 5])), "dim"),
    "branch-output-type": (lambda: _branches(out_type=T.INT64), "type"),
    "branch-output-dim": (lambda: _branches(out_shape=(5, 5)), "dim"),
}


def _refusals(runtime: str, paths: list[str]) -> dict[str, bool] | None:
    """path -> whether ``runtime`` refuses to load it (None: the runtime is not installed)."""
    if not available(runtime):
        return None
    return {p: reason is not None for p, reason in probe_many(runtime, paths).items()}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("g006")
    out = {}
    for name, (build, _) in CASES.items():
        p = d / f"{name}.onnx"
        onnx.save(build(), p)
        out[name] = str(p)
    return out


def _g006(findings) -> list[str]:
    return [f.severity for f in findings if f.code == "G006"]


@pytest.mark.slow
def test_the_runtimes_refuse_the_kinds_refused_by_records(saved):
    """Each runtime refuses exactly the kinds REFUSED_BY gives it, and no symbolic contradiction."""
    for runtime in ("onnx", "onnxruntime", "openvino"):
        verdict = _refusals(runtime, list(saved.values()))
        if verdict is None:
            continue
        for name, (_, kind) in CASES.items():
            expected = kind is not None and runtime in REFUSED_BY[kind]
            assert verdict[saved[name]] == expected, (runtime, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_g006_is_an_error_where_the_checker_refuses_and_the_front_ends_agree(saved, name):
    _, kind = CASES[name]
    expected = "error" if kind is not None else "warning"
    api = [d.severity for d in shapeinfer.infer(saved[name]).diagnostics if d.code == "G006"]
    assert api == [expected] * len(api) and api, api
    findings = lint_model(onnx.load(saved[name]), saved[name])
    assert _g006(findings) == api
    assert all(f.regraded is None for f in findings if f.code == "G006")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("target", ["onnxruntime", "openvino", "onednn"])
def test_a_target_regrades_g006_by_its_runtime_visibly(saved, name, target):
    _, kind = CASES[name]
    runtime = {"onnxruntime": "onnxruntime", "openvino": "openvino", "onednn": "onnx"}[target]
    refused = kind is not None and runtime in REFUSED_BY[kind]
    default = "error" if kind is not None else "warning"
    found = [f for f in lint_model(onnx.load(saved[name]), saved[name], target=target) if f.code == "G006"]
    assert found
    for f in found:
        assert f.severity == ("error" if refused else "warning")
        if f.severity == default:
            assert f.regraded is None and f.to_dict()["default_severity"] == default
        else:
            assert f.default_severity == default and f"--target {target}" in f.regraded
            assert f.severity_note.startswith(f" ({default} by default; --target {target}: ")


def test_a_declared_dim_only_our_inference_knows_is_a_warning(tmp_path):
    """Reshape(x, ReduceProd(Shape(x))) is [6] for x[2, 3], declared [5]: onnx's inference does not
    compute the target, so its checker loads the model (as onnxruntime and OpenVINO do)."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
        h.make_node("Reshape", ["x", "p"], ["y"]),
    ]
    m = _model(nodes, [X], [_vi("y", [5])])
    onnx.checker.check_model(m, full_check=True)
    found = [d for d in shapeinfer.infer(m).diagnostics if d.code == "G006"]
    assert [d.severity for d in found] == ["warning"] and "inferred [6]" in found[0].message


def run_cli(*args: str):
    return CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)


def test_cli_infer_json_and_lint_json_agree(saved):
    """The same G006s at the same severities from ``shapeinfer M --json`` and ``lint --format json``."""
    for name in ("value-info-dim", "output-provably-other-symbol", "initializer-rank"):
        r = run_cli(saved[name], "--json")
        infer = sorted((d["tensor"], d["severity"]) for d in json.loads(r.output)["diagnostics"] if d["code"] == "G006")
        r = run_cli("lint", saved[name], "--format", "json", "--isolated")
        lint = sorted((f["tensor"], f["severity"]) for f in json.loads(r.output) if f["code"] == "G006")
        assert infer == lint and infer, name
        r = run_cli(saved[name], "--fail-on", "error")
        assert (r.exit_code == 1) == (CASES[name][1] is not None)
