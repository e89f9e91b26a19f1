"""Hostile values in models (issue 11): int64 overflow is an error and never reaches a writer,
work is bounded by the model's size (rank caps, output counts, expression bombs), and names
that are not valid UTF-8 are shown escaped in every output."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import shapeinfer
from shapeinfer.cli.main import main
from shapeinfer.io.annotate import annotate

vi = h.make_tensor_value_info


def _model(nodes, inputs, outputs=("y",), inits=(), opset=17):
    outs = [vi(o, T.UNDEFINED, None) for o in outputs]
    g = h.make_graph(nodes, "g", inputs, outs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _errors(r, code):
    return [d for d in r.diagnostics if d.code == code and d.severity in ("error", "warning")]


def _writes(r):
    """The annotated model serialises (onnx raises 'Value out of range' on a dim past int64)."""
    annotate(r).SerializeToString()


@pytest.mark.parametrize("opset", [11, 18])
def test_concat_axis_overflow(opset):
    m = _model([h.make_node("Concat", ["x", "x"], ["y"], axis=0)], [vi("x", T.FLOAT, [2**62 + 5, 3])], opset=opset)
    r = shapeinfer.infer(m)
    assert _errors(r, "E013") and r.dims("y")[1] == 3 and type(r.dims("y")[0]) is not int
    _writes(r)


@pytest.mark.parametrize("opset", [11, 18])
def test_tile_dimension_overflow(opset):
    rep = nh.from_array(np.array([2**62, 2**62], np.int64), "r")
    m = _model([h.make_node("Tile", ["x", "r"], ["y"])], [vi("x", T.FLOAT, [4, 3])], inits=[rep], opset=opset)
    r = shapeinfer.infer(m)
    assert _errors(r, "E013") and all(type(d) is not int for d in r.dims("y"))
    _writes(r)


@pytest.mark.parametrize("opset", [11, 18])
def test_conv_transpose_output_channels_overflow(opset):
    w = vi("w", T.FLOAT, [2, 2**62, 1, 1])
    m = _model(
        [h.make_node("ConvTranspose", ["x", "w"], ["y"], group=4)], [vi("x", T.FLOAT, [1, 2, 5, 5]), w], opset=opset
    )
    r = shapeinfer.infer(m)
    assert _errors(r, "E013")
    assert r.dims("y")[0] == 1 and type(r.dims("y")[1]) is not int
    _writes(r)


def test_sub_int64_min_minus_one_is_an_error_not_a_wrapped_value():
    a = nh.from_array(np.array([-(2**63)], np.int64), "a")
    one = nh.from_array(np.array([1], np.int64), "one")
    m = _model([h.make_node("Sub", ["a", "one"], ["y"])], [], inits=[a, one])
    r = shapeinfer.infer(m)
    assert _errors(r, "E013")
    assert r.facts["y"].value is None  # not 2**63 - 1


def test_flatten_of_huge_dims_is_an_overflow_not_a_4300_digit_string():
    m = _model([h.make_node("Flatten", ["x"], ["y"], axis=3)], [vi("x", T.FLOAT, [2**62] * 3 + [2])])
    r = shapeinfer.infer(m)
    (d,) = _errors(r, "E013")
    assert "187-bit number" in d.message
    _writes(r)


def test_expression_bomb_is_bounded():
    """Shape values multiplied by themselves along a chain: a**(2**40) without the cap."""
    nodes = [h.make_node("Shape", ["x"], ["s0"])]
    for i in range(40):
        nodes.append(h.make_node("Add", [f"s{i}", f"s{i}"], [f"t{i}"]))
        nodes.append(h.make_node("Mul", [f"t{i}", f"s{i}"], [f"s{i + 1}"]))
    nodes.append(h.make_node("ConstantOfShape", ["s40"], ["y"]))
    m = _model(nodes, [vi("x", T.FLOAT, ["a + 1", "b"])])
    r = shapeinfer.infer(m, timeout=20)
    assert r.facts["y"].shape is not None and len(r.facts["y"].shape) == 2
    _writes(r)


def test_split_num_outputs_is_checked_before_anything_is_allocated():
    m = _model([h.make_node("Split", ["x"], ["y"], axis=0, num_outputs=2**31)], [vi("x", T.FLOAT, [4, 3])], opset=18)
    r = shapeinfer.infer(m)
    assert [d.code for d in r.diagnostics] == ["E026"]  # split-invalid (E014 until 2026-11)


@pytest.mark.parametrize(
    ("op", "inputs", "opset"),
    [
        ("ConstantOfShape", [vi("s", T.INT64, [2**31])], 17),
        ("Col2Im", [vi("x", T.FLOAT, [1, 4, 4]), vi("s", T.INT64, [2**63 - 1]), vi("b", T.INT64, [2])], 18),
    ],
)
def test_rank_from_model_is_capped(op, inputs, opset):
    names = [i.name for i in inputs]
    m = _model([h.make_node(op, names, ["y"])], inputs, opset=opset)
    r = shapeinfer.infer(m, timeout=20)
    assert _errors(r, "E012") and r.facts["y"].shape is None


def _non_utf8_model(tmp_path):
    m = _model([h.make_node("Relu", ["x"], ["yy"], name="nn")], [vi("x", T.FLOAT, ["ss", 3])], outputs=["yy"])
    data = m.SerializeToString().replace(b"nn", b"\xff\xfe").replace(b"yy", b"y\xff").replace(b"ss", b"s\xfe")
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--json"],
        ["--all"],
        ["-o", "OUT"],
        ["lint"],
        ["lint", "--format", "json"],
        ["lint", "--format", "sarif"],
        ["profile"],
        ["profile", "--json"],
        ["explain", "y\\xff"],
        ["optimize", "--json"],
    ],
    ids=lambda a: " ".join(a) or "infer",
)
def test_names_that_are_not_utf8_are_shown_escaped(tmp_path, args):
    """(profile and explain raised TypeError on such names until fuzz_cli covered them.)"""
    p = _non_utf8_model(tmp_path)
    out = tmp_path / "out.onnx"
    args = [str(out) if a == "OUT" else a for a in args]
    if args[:1] == ["lint"]:
        argv = [args[0], *args[1:], str(p)]
    elif args[:1] in (["profile"], ["explain"], ["optimize"]):
        argv = [args[0], str(p), *args[1:]]
    else:
        argv = [str(p), *args]
    r = CliRunner().invoke(main, argv)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code in (0, 1), r.output
    text = r.output
    if args == ["profile", "--json"]:
        assert "y\\xff" in [t["name"] for t in json.loads(text)["tensors"]]
    elif "--json" in args:
        doc = json.loads(text)
        assert args[0] == "optimize" or "y\\xff" in doc["tensors"]
    elif "-o" in args:
        written = onnx.load(str(out))
        assert written.graph.output[0].name == b"y\xff"  # the name is kept byte for byte
        assert written.graph.output[0].type.tensor_type.elem_type == T.FLOAT
    elif args[:1] in (["profile"], ["explain"]):
        assert "y\\xff" in text and "s\\xfe" in text and "b'" not in text
    elif args[:1] != ["lint"] and args[:1] != ["optimize"]:
        assert "y\\xff" in text and "s\\xfe" in text


@pytest.mark.parametrize(
    "args",
    [["--input-shape", "nope=1,3"], ["make-dynamic", "-o", "OUT", "--dim", "nope:1=k"]],
    ids=["input-shape", "make-dynamic"],
)
def test_an_unknown_input_is_named_beside_inputs_that_are_not_utf8(tmp_path, args):
    """A graph input named in bytes that are not UTF-8: an unknown name given to
    ``--input-shape`` or ``make-dynamic --dim`` is a usage error listing the inputs escaped (the
    list raised TypeError joining bytes: fuzz_cli seed 165, case 2188)."""
    m = _model([h.make_node("Relu", ["xx"], ["y"])], [vi("xx", T.FLOAT, [2, 3])])
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString().replace(b"xx", b"x\xff"))
    args = [str(tmp_path / "out.onnx") if a == "OUT" else a for a in args]
    argv = [args[0], str(p), *args[1:]] if args[0] == "make-dynamic" else [str(p), *args]
    r = CliRunner().invoke(main, argv)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 2 and "no graph input named 'nope'" in r.output and "x\\xff" in r.output, r.output


def _concat_of_shape_values(n: int) -> onnx.ModelProto:
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Concat", ["s"] * n, ["c"], axis=0),
        h.make_node("Reshape", ["x", "c"], ["y"]),
    ]
    return _model(nodes, [vi("x", T.FLOAT, ["a", "b"])])


def test_lint_of_a_huge_concat_is_linear_and_the_reshape_rank_capped():
    from shapeinfer.lint import lint_model

    findings = lint_model(_concat_of_shape_values(20_000), timeout=60)
    # Reshape to a 40,000-long target: not expanded (E012); the output is declared UNDEFINED
    # without a shape, which onnx.checker (M020) and onnxruntime (M021) refuse
    assert [f.code for f in findings] == ["M020", "M021", "E012"]


def test_lint_and_optimize_obey_timeout(tmp_path, monkeypatch):
    """--timeout bounds the checks and the passes, not only inference (one line, exit 1 for
    optimize; an E001 error finding for lint)."""
    import shapeinfer.inference.engine as engine

    p = tmp_path / "m.onnx"
    onnx.save(_concat_of_shape_values(50), str(p))
    clock = iter(range(0, 10**6, 100))  # every reading of the clock is 100 s after the last
    monkeypatch.setattr(engine.time, "monotonic", lambda: next(clock))
    r = CliRunner().invoke(main, ["lint", "--timeout", "30", str(p)])
    assert r.exit_code == 1 and "E001" in r.output and "--timeout" in r.output, r.output
    r = CliRunner().invoke(main, ["optimize", "--timeout", "30", str(p)])
    assert r.exit_code == 1 and "gave up after 30s (--timeout)" in r.output, r.output


def test_verify_memory_estimate_of_huge_declared_dims_is_one_line(tmp_path):
    """Found by tools/fuzz/fuzz_cli.py: a graph input of 2**62-sized dims made verify's memory
    estimate overflow a float (internal error) instead of refusing the binding."""
    pytest.importorskip("onnxruntime")
    m = _model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2**62] * 8 + ["a"])])
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    r = CliRunner().invoke(main, ["verify", str(p), "--bind", "a=2"])
    assert r.exit_code == 2 and "internal error" not in r.output and "2**" in r.output, r.output


@pytest.mark.parametrize("cmd", [["optimize", "-o", "OUT"], ["lint", "--fix"]])
def test_optimize_of_names_that_are_not_utf8_keeps_the_graph_connected(tmp_path, cmd):
    """Found by tools/fuzz/fuzz_cli.py: the passes rebuilt nodes whose names were not valid
    UTF-8 (protobuf refused them: an internal UnicodeDecodeError). The names are now escaped
    alike everywhere before any pass runs, and the written model runs in onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    p = _non_utf8_model(tmp_path)
    out = tmp_path / "out.onnx"
    argv = [cmd[0], str(p), *(str(out) if a == "OUT" else a for a in cmd[1:])]
    r = CliRunner().invoke(main, argv)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "internal error" not in r.output and r.exit_code in (0, 1), r.output
    written = out if cmd[0] == "optimize" else tmp_path / "m.fixed.onnx"
    if written.exists():
        m = onnx.load(str(written))
        assert m.graph.output[0].name == "y\\xff"
        x = np.ones((2, 3), np.float32)
        (y,) = ort.InferenceSession(str(written), providers=["CPUExecutionProvider"]).run(
            None, {m.graph.input[0].name: x}
        )
        assert y.shape == (2, 3)


def test_element_type_from_an_attribute_that_is_no_onnx_type():
    """Found by tools/fuzz/fuzz_cli.py: Cast to=2**63-1 made the writer fail ('Value out of
    range' in elem_type, an int32): the element type is an error and left unknown."""
    m = _model([h.make_node("Cast", ["x"], ["y"], to=2**63 - 1)], [vi("x", T.FLOAT, [2, 3])])
    r = shapeinfer.infer(m)
    assert "E010" in [d.code for d in r.diagnostics if d.severity == "error"]
    assert r.facts["y"].dtype == 0
    _writes(r)
