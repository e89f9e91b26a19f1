"""``explain``: each dim's expression, the chain it came through, the guards it rests on, and
for an unknown dim the reason."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.analysis.explain import UnknownTensor, explain
from shapeinfer.inference.engine import infer

VISION = Path(__file__).resolve().parents[1] / "models" / "vision"


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_a_yolo_anchor_axis_comes_from_the_image_and_rests_on_the_fpn_guards():
    m = onnx.load(str(VISION / "yolo11_det.onnx"))
    r = infer(m)
    out = m.graph.output[0].name
    ex = explain(r, out)
    anchors = ex[2]
    assert anchors.known and anchors.reason is None
    assert "height" in anchors.text and "width" in anchors.text
    assert anchors.chain[0].startswith("graph input 'images'")
    assert out in anchors.chain[-1]
    # the FPN concat's divisibility guards are the ones this dim rests on
    assert anchors.guards and all("%" in c for c, _ in anchors.guards), anchors.guards
    assert {g.text for g in r.guards()} >= {c for c, _ in anchors.guards}
    # batch passes through: its chain is shortened, not 80 steps long
    assert len(ex[0].chain) < 20, ex[0].chain


def test_nonzero_is_data_dependent():
    m = _model(
        [h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Transpose", ["nz"], ["t"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info("t", T.INT64, None)],
    )
    ex = explain(infer(m), "t")
    assert [e.known for e in ex] == [False, True]
    assert ex[0].reason.startswith("data-dependent: the size NonZero")
    assert ex[1].text == "2"


def test_a_reshape_whose_target_comes_from_data_says_so():
    """y = Reshape(x, Cast(v)) with v a float input: the target's values are data."""
    m = _model(
        [h.make_node("Cast", ["v"], ["s"], to=T.INT64), h.make_node("Reshape", ["x", "s"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 6]), h.make_tensor_value_info("v", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    ex = explain(infer(m), "y")
    assert len(ex) == 2 and not any(e.known for e in ex)
    assert all("takes the size from the values of 's'" in e.reason for e in ex), [e.reason for e in ex]


def test_if_branches_that_disagree():
    then = h.make_graph(
        [h.make_node("Identity", ["x"], ["a"])], "then", [], [h.make_tensor_value_info("a", T.FLOAT, None)]
    )
    other = h.make_graph(
        [h.make_node("Concat", ["x", "x"], ["b"], axis=0)], "else", [], [h.make_tensor_value_info("b", T.FLOAT, None)]
    )
    m = _model(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    (e,) = explain(infer(m), "y")
    assert not e.known and "branches of If" in e.reason


def test_unknown_rank_and_unknown_names():
    m = _model(
        [h.make_node("Reshape", ["x", "s"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["n"]), h.make_tensor_value_info("s", T.INT64, ["k"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    r = infer(m)
    (e,) = explain(r, "y")
    assert e.axis == -1 and e.text == "rank unknown" and "Reshape" in e.reason
    with pytest.raises(UnknownTensor) as info:
        explain(r, "yy")
    assert info.value.close == ["y"] and "closest: y" in str(info.value)


def test_the_command_text_json_and_unknown_names():
    import json

    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    path = str(VISION / "yolo11_det.onnx")
    r = CliRunner().invoke(main, ["explain", path, "output0"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "output0 dim 0: batch"
    assert any(line.startswith("    graph input 'images'") for line in lines)
    assert any(line.startswith("    holds where ((height + 7)//8) % 4 == 0") for line in lines)
    r = CliRunner().invoke(main, ["explain", path, "output0", "--json"])
    dims = json.loads(r.stdout)["dims"]
    assert [d["axis"] for d in dims] == [0, 1, 2] and all(d["known"] for d in dims)
    r = CliRunner().invoke(main, ["explain", path, "output"])
    assert r.exit_code == 2 and "closest: output0" in r.stderr


def test_an_op_without_a_rule_says_so():
    m = _model(
        [h.make_node("Frob", ["x"], ["y"], domain="my.domain")],
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    m.opset_import.append(h.make_opsetid("my.domain", 1))
    (e,) = explain(infer(m), "y")
    assert not e.known and "no rule for my.domain::Frob" in e.reason, e.reason


def test_a_tensor_inside_an_if_branch_is_explained_there():
    """A merged decoder's branch tensor: found in the first body that has it, its chain starts
    at the outer value the branch reads; the report names the body."""
    from click.testing import CliRunner

    from shapeinfer.analysis.explain import find
    from shapeinfer.cli.main import main

    path = Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx"
    r = infer(onnx.load(str(path)))
    name = "/transformer/h.0/attn/MatMul_output_0"
    assert name not in r.facts and find(r, name) == "main/0.else_branch"
    ex = explain(r, name)
    assert ex[0].graph == "main/0.else_branch" and ex[0].text == "batch_size" and ex[0].known
    assert ex[0].chain[0] == "outer value 'input_ids' ([batch_size, sequence_length])"
    out = CliRunner().invoke(main, ["explain", str(path), name]).stdout
    assert out.splitlines()[0] == f"{name} (in main/0.else_branch) dim 0: batch_size"
    with pytest.raises(UnknownTensor) as info:
        explain(r, "/transformer/h.0/attn/MatMul_output_9")
    assert name in info.value.close
