"""Issue 37 item 11: the small things a newcomer tripped over, each as they met it."""

from __future__ import annotations

import onnx
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from support.common import model_path

from shapeinfer.cli.main import main

BERT = str(model_path("bert_ts"))


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_infer_fail_on_info_is_accepted_as_lints_is():
    gpt2 = str(model_path("gpt2_ts"))  # one info diagnostic, nothing worse
    assert run(gpt2, "--fail-on", "info").exit_code == 1
    assert run(gpt2, "--fail-on", "warning").exit_code == 0
    assert run(str(model_path("llama_ts")), "--fail-on", "info").exit_code == 0  # no diagnostic at all


def test_select_with_a_short_code_suggests_the_padded_one():
    r = run("lint", BERT, "--select", "R9")
    assert r.exit_code == 2 and "unknown rule code or prefix 'R9' (did you mean 'R009'?)" in r.stderr


def test_a_config_key_with_an_underscore_suggests_the_dashed_one(tmp_path):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.shapeinfer]\nfail_on = "warning"\n')
    r = run("lint", BERT, "--config", str(cfg))
    assert r.exit_code == 2 and "unknown key 'fail_on' (did you mean 'fail-on'?)" in r.stderr


def test_a_misspelt_option_does_not_suggest_help():
    r = run("lint", BERT, "--selct", "R001")
    assert r.exit_code == 2
    assert "no such option '--selct' (did you mean '--select'?)" in r.stderr and "'--help'" not in r.stderr


def test_dim_range_takes_the_names_bind_takes():
    """``?`` was accepted by --bind (then named as no input's dim) and refused by --dim-range
    as malformed: both now say the same thing."""
    b, d = run(BERT, "--bind", "?=3"), run(BERT, "--dim-range", "?=1:4")
    assert b.exit_code == d.exit_code == 2
    assert "no graph input has a dim named '?'" in b.stderr and "no graph input has a dim named '?'" in d.stderr


def test_timeout_reads_the_same_in_every_command(monkeypatch):
    import shapeinfer.inference.engine as engine

    def slow(*a, **k):
        raise engine.InferenceTimeout("inference took longer than 5s")

    monkeypatch.setattr(engine.Engine, "run", slow, raising=False)
    monkeypatch.setattr(engine, "_run", slow)
    lines = [run(BERT, "--timeout", "5").stderr, run("lint", BERT, "--timeout", "5").stdout]
    assert all("gave up after 5s (--timeout)" in text for text in lines), lines


def test_an_unnamed_node_is_its_op_and_position(tmp_path):
    g = h.make_graph(
        [h.make_node("Add", ["x", "y"], ["z"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("y", T.FLOAT, [3])],
        [h.make_tensor_value_info("z", T.FLOAT, None)],
    )
    p = tmp_path / "m.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(p))
    r = run(str(p))
    assert "error G002 unnamed Add #0: dims 2 and 3 cannot broadcast" in r.stdout and " ? (" not in r.stdout
