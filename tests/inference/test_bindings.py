"""One binding path (shapeinfer.inference.bindings): bindings, input shapes and dim ranges are checked
once, with one wording, for the command line, the Python API and the passes; and a model
written at a binding (``-o --bind``, ``infer_shapes(bind=)``) says so in its graph inputs, so
onnxruntime runs it at the binding and refuses other shapes at its inputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from support.common import model_path, run_cli

import shapeinfer
from shapeinfer.inference.bindings import BindError, UnknownInput, check_input_shapes
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

BERT = str(model_path("bert_ts"))


def error_line(r) -> str:
    """The one stderr line of a refused run (exit 2, nothing on stdout, no traceback)."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("shapeinfer: error: ")
    return lines[0].removeprefix("shapeinfer: error: ")


# ------------------------------------------------------------------ inputs that cannot be right


# (command-line flag and value, the same entry for the Python API, what the message says)
SAME_ENTRY = [
    ("--bind", "batch=0", {"bind": {"batch": 0}}, "at least 1"),
    ("--bind", "batch=-3", {"bind": {"batch": -3}}, "at least 1"),
    ("--bind", "bacth=2", {"bind": {"bacth": 2}}, "did you mean 'batch'?"),
    ("--bind", "batch=" + "9" * 30, {"bind": {"batch": int("9" * 30)}}, "out of range (at most 2**63-1)"),
    ("--input-shape", "input_ids=1,2,3", {"input_shapes": {"input_ids": "1,2,3"}}, "3 dims for an input of rank 2"),
    ("--input-shape", "input_ids=7", {"input_shapes": {"input_ids": "7"}}, "1 dim for an input of rank 2"),
    ("--input-shape", "input_idz=1,2", {"input_shapes": {"input_idz": "1,2"}}, "no graph input named 'input_idz'"),
    ("--input-shape", "input_ids=1,-3", {"input_shapes": {"input_ids": "1,-3"}}, "cannot be negative"),
    ("--input-shape", "input_ids=1x128", {"input_shapes": {"input_ids": "1x128"}}, "is not an int or a dims"),
    ("--input-shape", "input_ids=[1,seq]", {"input_shapes": {"input_ids": "[1,seq]"}}, "without brackets"),
    ("--dim-range", "seq=4:1", {"dim_ranges": {"seq": (4, 1)}}, "the range is empty"),
    ("--dim-range", "seq=0:4", {"dim_ranges": {"seq": (0, 4)}}, "at least 1"),
    ("--dim-range", "sq=1:4", {"dim_ranges": {"sq": (1, 4)}}, "did you mean 'seq'?"),
]


@pytest.mark.parametrize("flag,value,kwargs,needle", SAME_ENTRY, ids=[f"{f} {v[:20]}" for f, v, _, _ in SAME_ENTRY])
def test_cli_and_api_refuse_with_one_wording(flag, value, kwargs, needle):
    """The command line refuses it (exit 2, one line) and the API raises BindError before
    inferring anything, with the same message: the flag's name against the argument's."""
    line = error_line(run_cli(BERT, flag, value))
    with pytest.raises(BindError) as info:
        shapeinfer.infer(BERT, **kwargs)
    (argument,) = kwargs
    api = str(info.value)
    assert api.startswith(argument + " ")
    assert line == f"{flag} {api.removeprefix(argument + ' ')}"
    assert needle in line


def test_input_shape_of_another_rank_is_refused_not_broadcast():
    """Case 5 of issue 21: `--input-shape input_ids=1,2,3` on a rank-2 input used to run
    (broadcast errors, 60 fresh symbols, exit 0)."""
    line = error_line(run_cli(BERT, "--input-shape", "input_ids=1,2,3"))
    assert line == "--input-shape input_ids=1,2,3: 3 dims for an input of rank 2 ([batch, seq])"
    with pytest.raises(ValueError, match="rank 2"):
        shapeinfer.infer_shapes(BERT, input_shapes={"input_ids": [1, 2, 3]})
    # the right rank still runs, at either spelling
    r = run_cli(BERT, "--input-shape", "input_ids=2,seq", "--input-shape", "attention_mask=2,seq")
    assert r.returncode == 0, r.stderr


def test_api_input_shape_text_is_parsed_like_the_command_line():
    """``input_shapes={"input_ids": "1,seq"}`` used to iterate the string's characters into
    dims ``(1, Expr(','), Expr('s'), ...)``; it is the command line's text."""
    import json

    r = run_cli(BERT, "--input-shape", "input_ids=1,seq", "--json")
    assert r.returncode == 0, r.stderr
    cli_inputs = json.loads(r.stdout)["inputs"]
    text = shapeinfer.infer(BERT, input_shapes={"input_ids": "1,seq"})
    listed = shapeinfer.infer(BERT, input_shapes={"input_ids": [1, "seq"]})
    assert text.dims("input_ids") == listed.dims("input_ids") == (1, D.sym("seq"))
    assert [D.format(d) if type(d) is not int else d for d in text.dims("input_ids")] == cli_inputs[0]["shape"]
    assert text.dims("out") == listed.dims("out")
    assert text.dims("out")[:2] == (1, D.sym("seq"))


def test_unknown_input_is_still_a_key_error():
    with pytest.raises(KeyError) as info:
        shapeinfer.infer(BERT, input_shapes={"nosuch": [1, 2]})
    assert isinstance(info.value, UnknownInput) and isinstance(info.value, BindError)
    assert str(info.value).startswith("input_shapes nosuch: no graph input named 'nosuch'")


@pytest.mark.parametrize(
    "shape,needle",
    [
        ([True, 4], "True is not an int"),
        ([1.0, 4], "1.0 is not an int"),
        ([1, -4], "cannot be negative"),
        ([1, 2**63], "out of range"),
        ([1, "seq]"], "is not an int or a dims expression"),
        ([1, "*".join(["(a+b+c+d+e+f+g+h+i+j)"] * 12)], "more complex than the expression cap"),
        (7, "a shape is a sequence of dims"),
    ],
)
def test_api_input_shape_dims_are_checked(shape, needle):
    with pytest.raises(BindError, match=None) as info:
        shapeinfer.infer(BERT, input_shapes={"input_ids": shape})
    assert needle in str(info.value) and info.value.kind == "input_shapes"


def test_integer_types_are_ints_and_bools_are_not():
    assert check_input_shapes({"x": [np.int64(2), "seq", D.sym("b") * 2]}) == {"x": [2, D.sym("seq"), D.sym("b") * 2]}
    r = shapeinfer.infer(BERT, bind={"batch": np.int64(2)})
    assert r.dims("out")[0] == 2
    for bad in (True, 2.0, "2", None):
        with pytest.raises(BindError, match="must be an integer"):
            shapeinfer.infer(BERT, bind={"batch": bad})
        with pytest.raises(BindError, match="must be an integer"):
            shapeinfer.optimize(BERT, bind={"batch": bad})


def test_optimize_refuses_a_zero_binding_up_front_like_infer(monkeypatch):
    """``optimize(m, bind={"batch": 0})`` used to pass the passes' own check (v < 0) and fail
    late with an R004; it is refused before the model is inferred, as infer refuses it."""
    import shapeinfer.inference.engine

    m = onnx.load(BERT)
    with pytest.raises(BindError) as want:
        shapeinfer.infer(m, bind={"batch": 0})

    def no_inference(*a, **k):
        raise AssertionError("inferred before the binding was checked")

    monkeypatch.setattr(shapeinfer.inference.engine, "infer", no_inference)
    with pytest.raises(BindError) as got:
        shapeinfer.optimize(m, bind={"batch": 0})
    assert str(got.value) == str(want.value)
    with pytest.raises(BindError, match="did you mean 'batch'"):
        shapeinfer.optimize(m, bind={"bacth": 1})
    monkeypatch.undo()
    line = error_line(run_cli("optimize", BERT, "--bind", "batch=0"))
    assert line == want.value.flag_message()


def test_profile_opt_is_checked_under_its_own_flag():
    line = error_line(run_cli("profile", BERT, "--opt", "seq=0"))
    assert line.startswith("--opt seq=0: symbols stand for sizes of at least 1")
    line = error_line(run_cli("profile", BERT, "--opt", "sq=3"))
    assert line.startswith("--opt sq: no graph input has a dim named 'sq'")


# ------------------------------------------------------------------ a model written at a binding


def input_dims(m: onnx.ModelProto) -> dict[str, list]:
    return {
        vi.name: [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]
        for vi in m.graph.input
    }


def assert_runs_only_at(written: onnx.ModelProto, original: onnx.ModelProto, at, other) -> None:
    """onnxruntime (every optimisation on, as deployed) runs ``written`` at binding ``at`` with
    the original's outputs, and refuses binding ``other`` at the graph inputs, before any node
    (a binding is a dict of symbol values, or the feeds themselves)."""
    onnx.checker.check_model(written, full_check=True)
    feeds = at if isinstance(next(iter(at.values())), np.ndarray) else ort_oracle.feeds(original, at)
    bad = other if isinstance(next(iter(other.values())), np.ndarray) else ort_oracle.feeds(original, other)
    want = ort_oracle.session(original).run(None, feeds)
    got = ort_oracle.session(written, optimize=True).run(None, feeds)
    assert ort_oracle.outputs_differ(want, got, rtol=1e-5, atol=1e-5) is None
    with pytest.raises(Exception, match="invalid dimensions for input") as info:
        ort_oracle.session(written, optimize=True).run(None, bad)
    assert "node" not in ort_oracle.error_line(info.value).lower()


@pytest.mark.parametrize("name", ["bert_ts", "gpt2_ts", "llama_ts"])
def test_o_bind_writes_the_bound_dims_into_the_graph_inputs(tmp_path, name):
    """Case 3 of issue 21: ``-o --bind batch=1,seq=128`` kept the graph inputs [batch, seq] while
    value_info said [1, 128, ...]: onnxruntime failed inside the graph at 1x7 (Reshape) and 2x128
    (Expand). The written model's inputs are [1, 128]: it runs there, and other shapes are
    refused at its inputs."""
    src = model_path(name)
    out = tmp_path / "out.onnx"
    r = run_cli(str(src), "--bind", "batch=1,seq=128", "-o", str(out))
    assert r.returncode == 0, r.stderr
    written = onnx.load(str(out))
    assert input_dims(written) == {"input_ids": [1, 128], "attention_mask": [1, 128]}
    original = onnx.load(str(src))
    assert_runs_only_at(written, original, {"batch": 1, "seq": 128}, {"batch": 1, "seq": 7})
    with pytest.raises(Exception, match="invalid dimensions for input"):
        ort_oracle.session(written, optimize=True).run(None, ort_oracle.feeds(original, {"batch": 2, "seq": 128}))


def test_o_bind_of_one_symbol_keeps_the_others_free(tmp_path):
    out = tmp_path / "out.onnx"
    r = run_cli(BERT, "--bind", "batch=1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    written = onnx.load(str(out))
    assert input_dims(written) == {"input_ids": [1, "seq"], "attention_mask": [1, "seq"]}
    original = onnx.load(BERT)
    for seq in (7, 128):
        assert_runs_only_at(written, original, {"batch": 1, "seq": seq}, {"batch": 2, "seq": seq})


def test_infer_shapes_bind_writes_the_bound_dims_into_the_graph_inputs():
    original = onnx.load(BERT)
    before = original.SerializeToString()
    written = shapeinfer.infer_shapes(original, bind={"batch": 2, "seq": 5})
    assert original.SerializeToString() == before  # the argument is not modified
    assert input_dims(written) == {"input_ids": [2, 5], "attention_mask": [2, 5]}
    assert_runs_only_at(written, original, {"batch": 2, "seq": 5}, {"batch": 2, "seq": 6})
    from_path = shapeinfer.infer_shapes(BERT, bind={"batch": 2, "seq": 5})
    assert input_dims(from_path) == input_dims(written)


def test_o_bind_of_an_unnamed_dim(tmp_path):
    """A dim the model leaves open is the symbol ``<input>_d<axis>``; binding it writes its value
    into that dim, as optimize --bind does."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["f"], axis=0), helper.make_node("Relu", ["f"], ["y"])], "g", [x], [y]
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    out = tmp_path / "out.onnx"
    r = run_cli(str(src), "--bind", "x_d1=4", "-o", str(out))
    assert r.returncode == 0, r.stderr
    written = onnx.load(str(out))
    assert input_dims(written) == {"x": ["n", 4]}
    rng = np.random.default_rng(0)
    at, other = ({"x": rng.standard_normal((3, k)).astype(np.float32)} for k in (4, 5))
    assert_runs_only_at(written, m, at, other)
    optimized = shapeinfer.optimize(m, bind={"x_d1": 4})
    assert input_dims(optimized) == input_dims(written)


def test_bind_help_says_the_graph_inputs_are_rewritten():
    r = run_cli("infer", "--help")
    assert r.returncode == 0
    assert "graph inputs carry the value" in " ".join(r.stdout.split())


def test_verify_api_refuses_a_zero_binding():
    from shapeinfer.analysis.verify import verify

    with pytest.raises(BindError, match="batch=0: symbols stand for sizes of at least 1"):
        verify(BERT, [{"batch": 0, "seq": 3}])


@pytest.mark.parametrize("flag,value", [("--bind", "batch=1,sq=4,seq=3"), ("--dim-range", "sq=1:8")])
def test_verify_refuses_a_symbol_the_model_lacks_like_infer(flag, value):
    """verify used to run with a note ('not input symbols of this model (ignored): sq') for a
    binding, and silently for a range, where infer refuses the typo."""
    args = [flag, value] if flag == "--bind" else ["--bind", "batch=1,seq=4", flag, value]
    line = error_line(run_cli("verify", BERT, *args))
    assert line == f"{flag} sq: no graph input has a dim named 'sq' (did you mean 'seq'?) (symbols: batch, seq)"
    assert error_line(run_cli(BERT, flag, value)) == line
