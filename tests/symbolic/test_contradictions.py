"""Issue 21 case 4: ranges and input shapes that contradict a guard are errors.

A guard no input size inside the ranges satisfies is a G015 error naming the range, the guard
and the nodes that imposed it. ``shapeinfer`` shows no shape then (``--fail-on error`` exits
1; ``-o`` writes nothing and exits 1), ``profile`` prints no profile (exit 1), ``verify`` runs
nothing (exit 1), ``lint`` reports G015. onnxruntime is the oracle that the contradicted sizes
really fail and that the model runs where the guards hold; a property test checks that
:func:`shapeinfer.symbolic.guards.contradictions` only claims what brute force confirms.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from support.common import model_path

from shapeinfer.api import infer
from shapeinfer.cli.main import main
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import Ledger, check

BERT = str(model_path("bert_ts"))


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def bert_runs_at(seq: int) -> bool:
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.ones((1, seq), np.int64) for i in sess.get_inputs()}
    try:
        sess.run(None, feeds)
    except Exception:
        return False
    return True


def test_the_guard_is_real_in_onnxruntime():
    """The oracle behind the cases below: bert_ts runs at seq 512, fails at 513."""
    assert bert_runs_at(512)
    assert not bert_runs_at(513)


def test_range_contradicting_a_guard_is_an_error_and_no_shape_is_shown():
    res = run(BERT, "--dim-range", "seq=513:", "--fail-on", "error")
    assert res.exit_code == 1, res.output
    assert "[batch, 512]" not in res.output and "512, 64]" not in res.output
    assert "no shapes" in res.output
    line = next(x for x in res.output.splitlines() if "error G015" in x)
    assert "error" in line and "seq=513:" in line and "seq == 512" in line and "/m/embeddings/Expand_1" in line
    # without --fail-on: an error diagnostic like any other, exit 0, still no shape shown
    res = run(BERT, "--dim-range", "seq=513:")
    assert res.exit_code == 0 and "[batch, 512]" not in res.output and "G015" in res.output


def test_range_contradiction_in_json(tmp_path):
    import json

    res = run(BERT, "--dim-range", "seq=513:", "--json")
    doc = json.loads(res.output)
    assert doc["contradicted"] is True
    assert all(i["shape"] is None for i in doc["inputs"] + doc["outputs"]) and doc["tensors"] == {}
    g015 = [d for d in doc["diagnostics"] if d["code"] == "G015"]
    assert len(g015) == 1 and g015[0]["severity"] == "error" and "seq=513:" in g015[0]["message"]


def test_output_is_not_written_under_a_contradiction(tmp_path):
    out = tmp_path / "out.onnx"
    res = CliRunner().invoke(main, [BERT, "--dim-range", "seq=513:", "-o", str(out)])
    assert res.exit_code == 1 and not out.exists()
    assert "not written" in res.stderr and "wrote" not in res.stdout


def test_a_range_the_guards_narrow_is_no_contradiction():
    res = run(BERT, "--dim-range", "seq=1:600", "--fail-on", "error")
    assert res.exit_code == 0 and "G015" not in res.output
    assert "[batch, seq]" in res.output and "holds when: seq <= 512" in res.output
    res = run(BERT, "--dim-range", "seq=512:", "--fail-on", "error")
    assert res.exit_code == 0 and "G015" not in res.output


def test_input_shape_that_can_never_hold_is_an_error():
    # ids of seq + 1 tokens and a mask of seq + 2: neither is ever 1, so broadcasting them needs
    # seq + 1 == seq + 2
    shapes = ["--input-shape", "input_ids=1,seq+1", "--input-shape", "attention_mask=1,seq+2"]
    res = run(BERT, *shapes, "--fail-on", "error")
    assert res.exit_code == 1, res.output
    line = next(x for x in res.output.splitlines() if "error G015" in x)
    assert "seq + 2 == seq + 1" in line and "never holds" in line and "input_ids" in line
    assert "/m/encoder/layer.0/attention/self/Add" in line
    assert "[1, seq + 1]" not in res.output
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    for seq in (1, 2, 5):
        feeds = {"input_ids": np.ones((1, seq + 1), np.int64), "attention_mask": np.ones((1, seq + 2), np.int64)}
        with pytest.raises(Exception, match="broadcast"):
            sess.run(None, feeds)


def test_input_shape_that_holds_only_where_the_mask_broadcasts_is_guarded():
    """ids of seq + 1 tokens against a mask of seq: onnxruntime runs it where the mask is one
    token long (it broadcasts), so the model needs seq == 1, not an impossible seq + 1 == seq."""
    ort = pytest.importorskip("onnxruntime")
    res = run(BERT, "--input-shape", "input_ids=1,seq+1", "--fail-on", "error")
    assert res.exit_code == 0 and "G015" not in res.output, res.output
    assert res.output.rstrip().splitlines()[-1].startswith("holds when:") and "seq == 1" in res.output
    sess = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": np.ones((1, 2), np.int64), "attention_mask": np.ones((1, 1), np.int64)}
    assert sess.run(None, feeds)[0].shape == (1, 2, 64)


def test_binding_contradicting_a_guard_names_the_binding():
    assert not bert_runs_at(600)
    res = run(BERT, "--bind", "seq=600", "--fail-on", "error")
    assert res.exit_code == 1 and "[batch, 600]" not in res.output and "no shapes" in res.output
    line = next(x for x in res.output.splitlines() if "error G015" in x)
    assert "seq=600" in line and "seq <= 512" in line and "/m/embeddings/Expand_1" in line
    res = run(BERT, "--bind", "seq=500", "--fail-on", "error")
    assert res.exit_code == 0 and "[batch, 500]" in res.output and "G015" not in res.output


def test_profile_never_prints_shapes_outside_the_range():
    res = CliRunner().invoke(main, ["profile", BERT, "--dim-range", "seq=513:"])
    assert res.exit_code == 1
    assert "Shapes" not in res.stdout and "x512" not in res.stdout and "min " not in res.stdout
    assert "seq=513:" in res.stderr and "seq == 512" in res.stderr and "/m/embeddings/Expand_1" in res.stderr
    res = run("profile", BERT, "--dim-range", "seq=513:", "--json")
    import json

    doc = json.loads(res.output)
    assert res.exit_code == 1 and doc["errors"] and doc["tensors"] == []
    assert all(v is None for v in doc["trtexec"].values())
    assert all(i["min"] is None and i["max"] is None for i in doc["inputs"])


def test_profile_opt_the_model_cannot_run_at():
    res = CliRunner().invoke(main, ["profile", BERT, "--dim-range", "seq=1:600", "--opt", "seq=600"])
    assert (
        res.exit_code == 2
        and "--opt seq=600" in res.stderr
        and "optShapes" not in res.stdout
        and "x600" not in res.stdout
    )
    assert "seq <= 512" in res.stderr and "/m/embeddings/Expand_1" in res.stderr
    res = run("profile", BERT, "--dim-range", "seq=1:100", "--opt", "seq=600")
    assert res.exit_code == 2 and "outside --dim-range seq=1:100" in res.output
    res = run("profile", BERT, "--dim-range", "seq=1:600", "--opt", "seq=300")
    assert (
        res.exit_code == 0
        and "--optShapes=input_ids:1x300" in res.output
        and "--maxShapes=input_ids:?" not in res.output
    )


def test_verify_names_the_contradicted_range_and_runs_nothing():
    res = CliRunner().invoke(main, ["verify", BERT, "--dim-range", "seq=513:", "--bind", "batch=1,seq=513"])
    assert res.exit_code == 1
    assert "seq=513:" in res.stderr and "seq == 512" in res.stderr and "not run" in res.stderr


def concat_off_by_one(path) -> str:
    """``Concat(a[n, 2], Pad(a)[n + 1, 2], axis=1)``: needs n + 1 == n, at no size."""
    g = helper.make_graph(
        [helper.make_node("Pad", ["a", "pads"], ["p"]), helper.make_node("Concat", ["a", "p"], ["y"], axis=1)],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([0, 0, 1, 0], np.int64), "pads")],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_a_model_that_can_never_run_is_g015_in_infer_and_lint(tmp_path):
    m = concat_off_by_one(tmp_path / "m.onnx")
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    for n in (1, 2, 5):
        with pytest.raises(Exception, match=r"(?i)concat|dimension|shape"):
            sess.run(None, {"a": np.ones((n, 2), np.float32)})
    r = infer(m)
    g015 = [d for d in r.diagnostics if d.code == "G015"]
    assert len(g015) == 1 and g015[0].severity == "error" and "n + 1 == n" in g015[0].message
    assert "Concat #1" in g015[0].message
    res = run("lint", m)
    assert res.exit_code == 1 and "G015 [error]" in res.output


@pytest.mark.parametrize("name", ["bert_ts", "gpt2_ts", "llama_ts", "bert_dynamo", "llama_dynamo", "vit_dynamo"])
def test_no_contradiction_on_the_shipped_models(name):
    """Models that run report no G015 without ranges (a false contradiction would hide every shape)."""
    r = infer(str(model_path(name)))
    assert not [d for d in r.diagnostics if d.code == "G015"]


# ------------------------------------------------------------------------------ the ledger

seq, n, m = D.sym("seq"), D.sym("n"), D.sym("m")


def contradictions(*args):
    from shapeinfer.symbolic.guards import contradictions as found  # new with issue 21

    return found(*args)


def test_contradictions_name_the_range_or_none():
    led = Ledger()
    led.add("equality", D.dmin(seq, 512), seq, "a")  # seq <= 512
    led.add("divisibility", n, 4, "r")
    assert contradictions(led, None, ["seq", "n"]) == []
    assert contradictions(led, {"seq": (1, 600)}, ["seq", "n"]) == []
    (c,) = contradictions(led, {"seq": (513, None)}, ["seq", "n"])
    assert c.ranges == {"seq": (513, None)} and [g.text for g in c.guards] == ["seq <= 512"]
    assert "seq=513:" in c.message and "from node a" in c.message
    (c,) = contradictions(led, {"n": (5, 7)}, ["seq", "n"])  # no multiple of 4 in [5, 7]
    assert c.ranges == {"n": (5, 7)} and "n % 4 == 0" in c.message
    assert contradictions(led, {"n": (5, 8)}, ["seq", "n"]) == []


def test_bounds_that_exclude_each_other():
    led = Ledger()
    led.add("bound", seq, 100, "low")
    led.add("bound", 200, seq, "high")
    led.add("bound", seq, 300, "loose")
    (c,) = contradictions(led, None, ["seq"])
    assert c.ranges == {} and sorted(g.text for g in c.guards) == ["200 <= seq", "seq <= 100"]
    assert "cannot all hold" in c.message and "low" in c.message and "high" in c.message


def test_a_guard_the_bounds_rule_out():
    led = Ledger()
    led.add("equality", D.dmin(seq, 512), seq, "table")  # seq <= 512
    led.add("equality", seq, 600, "fixed")  # seq == 600
    (c,) = contradictions(led, None, ["seq"])
    assert [g.text for g in c.guards] == ["seq <= 512", "seq == 600"] and c.ranges == {}
    assert "table" in c.message and "fixed" in c.message and "cannot all hold" in c.message
    (c,) = contradictions(led, {"seq": (1, 550)}, ["seq"])  # the range alone rules 600 out: it is named
    assert [g.text for g in c.guards] == ["seq == 600"] and c.ranges == {"seq": (1, 550)}
    led = Ledger()
    led.add("bound", 8, seq, "low")
    led.add("divisibility", seq, 16, "reshape")
    assert contradictions(led, None, ["seq"]) == []  # 16 is >= 8


def test_equality_that_never_holds():
    led = Ledger()
    led.add("equality", D.add(seq, 1), seq, "x")
    led.add("equality", n, m, "y")  # two symbols: satisfiable
    (c,) = contradictions(led, None, ["seq", "n", "m"])
    assert c.ranges == {} and "seq + 1 == seq" in c.message and "never holds" in c.message


_atoms = st.sampled_from([n, m, D.add(n, 1), D.mul(2, n), D.add(n, m), D.dmin(n, 4), D.floordiv(m, 2), 3, 1])
_kinds = st.sampled_from(["equality", "bound", "divisibility", "broadcast"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_kinds, _atoms, st.one_of(_atoms, st.integers(1, 6))), min_size=1, max_size=4),
    st.tuples(st.integers(1, 6), st.integers(0, 4)),
    st.tuples(st.integers(1, 6), st.integers(0, 4)),
)
def test_a_contradiction_is_never_claimed_where_brute_force_finds_a_binding(guards, rn, rm):
    led = Ledger()
    for k, a, b in guards:
        if k == "divisibility" and type(b) is not int:
            continue
        led.add(k, a, b, "node")
    user = {"n": (rn[0], rn[0] + rn[1]), "m": (rm[0], rm[0] + rm[1])}
    found = contradictions(led, user, ["n", "m"])
    for c in found:
        for vn, vm in itertools.product(range(user["n"][0], user["n"][1] + 1), range(user["m"][0], user["m"][1] + 1)):
            binding = {"n": vn, "m": vm}
            assert not all(check(g, binding) for g in c.guards), (c.message, binding)


def test_the_api_names_a_bound_value_no_input_can_have_as_the_cli_does():
    """``infer(bind=)`` reports the G015 the command line reports (not only the G002 clash at a
    node), and ``infer_shapes(bind=)`` refuses to annotate shapes that hold for no input; a
    value inside the guard's range still annotates."""
    from shapeinfer.api import BindError, infer_shapes

    path = BERT
    assert not bert_runs_at(1000)  # the oracle: onnxruntime refuses seq=1000
    r = infer(path, bind={"seq": 1000})
    g015 = [d.message for d in r.diagnostics if d.code == "G015"]
    assert g015 and "seq=1000" in g015[0] and "seq <= 512" in g015[0]
    cli = run(path, "--bind", "seq=1000")
    assert any(line.strip().endswith(g015[0]) for line in cli.output.splitlines()), cli.output
    with pytest.raises(BindError, match="seq <= 512"):
        infer_shapes(path, bind={"seq": 1000})
    assert not [d for d in infer(path, bind={"seq": 100}).diagnostics if d.severity == "error"]
    assert len(infer_shapes(path, bind={"seq": 100}).graph.value_info) > 100


def test_input_shapes_no_input_can_have_are_refused_as_a_binding_is(tmp_path):
    """``--input-shape input_ids=2,600`` gives seq the size 600, which bert's guard seq <= 512
    rules out: G015 as ``--bind seq=600`` says it, and ``-o`` writes nothing (it wrote the model
    as read, exit 0)."""
    bound = run(BERT, "--bind", "seq=600")
    shaped = run(BERT, "--input-shape", "input_ids=2,600")
    line = next(x for x in shaped.output.splitlines() if "error G015" in x)
    assert "seq=600" in line and "seq <= 512" in line
    assert line in bound.output
    out = tmp_path / "out.onnx"
    res = run(BERT, "--input-shape", "input_ids=2,600", "-o", str(out))
    assert res.exit_code == 1 and not out.exists()
    assert "not written" in res.stderr
    # a shape that is no binding of the declared symbols (a symbol for seq) is checked as before
    res = run(BERT, "--input-shape", "input_ids=2,n", "-o", str(out))
    assert res.exit_code == 0 and out.exists()


def test_a_range_of_one_value_is_written_into_the_graph_inputs_as_a_binding_is(tmp_path):
    """The value_info written at seq=8:8 is static: the graph inputs say 8 too, so onnxruntime
    refuses another length at the input instead of inside the graph."""
    ort = pytest.importorskip("onnxruntime")
    out = tmp_path / "out.onnx"
    res = run(BERT, "--dim-range", "seq=8:8", "-o", str(out))
    assert res.exit_code == 0, res.output
    written = onnx.load(str(out))
    assert [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in written.graph.input] == [
        ["batch", 8],
        ["batch", 8],
    ]
    given = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.ones((3, 8), np.int64) for i in sess.get_inputs()}
    for a, b in zip(given.run(None, feeds), sess.run(None, feeds)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(Exception, match="input_ids"):
        sess.run(None, {i.name: np.ones((3, 9), np.int64) for i in sess.get_inputs()})


def test_a_guard_that_fails_once_sizes_are_given_names_them():
    """A guard with no symbol left (``2 == 1`` once height is 1: YOLO at --bind height=1) fails
    at those sizes, not at every size."""
    from shapeinfer.symbolic.guards import contradiction_diagnostics

    led = Ledger()
    led.add("equality", 2, 1, "/model.15/Concat")
    (pinned,) = contradiction_diagnostics(led, None, [], pinned={"height": 1})
    assert "never holds at height=1: the model cannot run there" in pinned.message
    (plain,) = contradiction_diagnostics(led, None, [])
    assert "cannot run at any input size" in plain.message


def test_input_shapes_that_give_a_bound_symbol_another_size_are_no_binding_of_it():
    """``--bind seq=8 --input-shape input_ids=2,600``: the override replaces input_ids' declared
    ``seq``; it does not make seq 600 (a G015 "seq=600" contradicted the user's own --bind)."""
    res = run(BERT, "--bind", "seq=8", "--input-shape", "input_ids=2,600")
    assert "seq=600" not in res.output
    assert "G002" in res.output  # the two lengths still meet at a node


def _zero_length_after_a_loop(source: str) -> onnx.ModelProto:
    """x[1, 64, n]; a tensor whose length is a fresh symbol that is 0 at every n (``source``:
    ConstantOfShape of a Loop-carried n - n, or a Compress by [False] of n values carried
    unchanged), concatenated with 4 values and normalized with a scale of 4: onnxruntime runs
    it at every n."""
    body_op = (
        helper.make_node("Sub", ["vin", "vin"], ["vout"])
        if source == "loop"
        else helper.make_node("Identity", ["vin"], ["vout"])
    )
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]), body_op],
        "b",
        [
            helper.make_tensor_value_info("it", TensorProto.INT64, []),
            helper.make_tensor_value_info("ci", TensorProto.BOOL, []),
            helper.make_tensor_value_info("vin", TensorProto.INT64, [1]),
        ],
        [
            helper.make_tensor_value_info("co", TensorProto.BOOL, []),
            helper.make_tensor_value_info("vout", TensorProto.INT64, [1]),
        ],
    )
    ones = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i2"], ["n"], axis=0),
        helper.make_node("Loop", ["one_s", "true", "n"], ["v"], body=body),
        helper.make_node("ConstantOfShape", ["v"], ["t"], value=ones),
    ]
    nodes += (
        [helper.make_node("Compress", ["t", "false1"], ["u"], axis=0)]
        if source == "compress"
        else [helper.make_node("Identity", ["t"], ["u"])]
    )
    nodes += [
        helper.make_node("Concat", ["u", "c4"], ["w"], axis=0),
        helper.make_node("LayerNormalization", ["w", "c4"], ["y"], axis=-1),
    ]
    inits = {
        "i2": np.array([2], np.int64),
        "one_s": np.array(1, np.int64),
        "true": np.array(True),
        "false1": np.array([False]),
        "c4": np.ones(4, np.float32),
    }
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("source", ["loop", "compress"])
def test_a_guard_on_a_fresh_size_that_may_be_0_is_no_contradiction(source, tmp_path):
    """``unk_0 + 4 == 4`` holds where the fresh size is 0, which it may be (an unknown dim's
    range): it was taken for a G015 ("never holds") because the ledger's ranges gave every
    symbol [1, inf), and -o and optimize refused a model onnxruntime runs at every size. The
    written models run where the input does."""
    ort = pytest.importorskip("onnxruntime")
    m = _zero_length_after_a_loop(source)
    r = infer(m)
    assert not r.contradicted(), [str(d) for d in r.diagnostics]
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    for cmd in ([], ["optimize"]):
        out = tmp_path / f"out{len(cmd)}.onnx"
        res = CliRunner().invoke(main, [*cmd, str(src), "-o", str(out)])
        assert res.exit_code == 0, res.output
        for path in (src, out):
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            for n in (1, 2, 7):
                (y,) = sess.run(None, {"x": np.ones((1, 64, n), np.float32)})
                assert y.shape == (4,)
    led = Ledger()
    led.add("equality", D.add(D.sym("unk_0"), 4), 4)
    assert contradictions(led, None) == []
