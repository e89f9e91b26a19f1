"""A written model loads wherever its input loads, and runs there with the same outputs.

The annotation can break that without any wrong fact: types written into a Loop body that
never runs at the input's sizes tell onnxruntime's loader what makes a node in it invalid, and
a binding written into an opset-8 If's branch makes onnx's strict merge of the branches refuse
it. Both came from the control-flow fuzzer (``tools/fuzz_cli.py``, seed 141: cases 1388 and
1325). What is written falls back one step at a time (``passes/load_check.loadable_annotation``)
and says so; onnxruntime is the oracle.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.common import run_cli

import shapeinfer
from shapeinfer.io.annotate import annotate
from shapeinfer.passes.load_check import LoadBaseline

ort.set_default_logger_severity(3)


def _squeezing_loop(x_dims: list, start: int, scan_dims: list | None) -> onnx.ModelProto:
    """x[x_dims]: a Loop that runs while ``start < x.shape[1]`` (at most once) carries x and
    stacks ``x[:, 0]`` (a Slice along dim 1, squeezed), its body output declared ``scan_dims``.
    ``start`` is an initializer the caller may override (a graph input too), so inference cannot
    tell whether the body runs, as in the TensorFlow while loops the fuzzer took."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    body = helper.make_graph(
        [
            helper.make_node("Slice", ["xs", "b0", "b1", "bax"], ["sl"], name="slice"),
            helper.make_node("Squeeze", ["sl", "bax"], ["sq"], name="squeeze"),
            helper.make_node("Identity", ["no"], ["cout"], name="once"),
            helper.make_node("Identity", ["xs"], ["xout"], name="carry"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
            helper.make_tensor_value_info("xs", TensorProto.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("cout", TensorProto.BOOL, []),
            helper.make_tensor_value_info("xout", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("sq", TensorProto.FLOAT, scan_dims),
        ],
        [i64("b0", [0]), i64("b1", [1]), i64("bax", [1]), numpy_helper.from_array(np.array(False), "no")],
    )
    g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"], name="shape", start=1, end=2),
            helper.make_node("Squeeze", ["s", "ax0"], ["trips"], name="trips"),
            helper.make_node("Less", ["start", "trips"], ["go"], name="go"),
            helper.make_node("Loop", ["", "go", "x"], ["xl", "ys"], name="loop", body=body),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims),
            helper.make_tensor_value_info("start", TensorProto.INT64, []),
        ],
        [
            helper.make_tensor_value_info("xl", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("ys", TensorProto.FLOAT, None),
        ],
        [i64("ax0", [0]), i64("start", start)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


def _loop_never_runs() -> onnx.ModelProto:
    """x[b, 0, 8]: the body squeezes a size-0 axis (E015), and never runs (0 < 0 is false)."""
    return _squeezing_loop(["b", 0, 8], 0, None)


def _if1_branches(int64_constant: bool) -> onnx.ModelProto:
    """An opset-8 If (If-1: onnx merges its branches' shapes strictly) whose else branch gives
    ``past[a, a]`` and whose then branch a constant ``[0, 4]``: loadable while ``a`` is open,
    refused once ``[2, 2]`` is written into the branch. ``int64_constant``: the condition
    compares with an int64 Constant, which onnx's type check refuses at opset 8 and onnxruntime
    loads (the check then runs without ``check_type``)."""
    if int64_constant:
        one = [helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64), "one"))]
        cond = helper.make_node("Equal", ["c", "one"], ["cond"])
        c_type = TensorProto.INT64
    else:
        one, c_type = [], TensorProto.BOOL
        cond = helper.make_node("Identity", ["c"], ["cond"])
    empty = numpy_helper.from_array(np.zeros((0, 4), np.float32), "e_then")
    then_g = helper.make_graph(
        [
            helper.make_node("Add", ["x", "x"], ["o_then"]),
            helper.make_node("Constant", [], ["e_then"], value=empty),
        ],
        "then",
        [],
        [
            helper.make_tensor_value_info("o_then", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("e_then", TensorProto.FLOAT, [0, 4]),
        ],
    )
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["t_else"]), helper.make_node("Cast", ["past"], ["p_else"], to=1)],
        "else",
        [],
        [
            helper.make_tensor_value_info("t_else", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("p_else", TensorProto.FLOAT, ["a", "a"]),
        ],
    )
    g = helper.make_graph(
        [*one, cond, helper.make_node("If", ["cond"], ["y", "p"], name="if", then_branch=then_g, else_branch=else_g)],
        "g",
        [
            helper.make_tensor_value_info("c", c_type, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("past", TensorProto.FLOAT, ["a", "a"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]), helper.make_tensor_value_info("p", 1, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
    m.ir_version = 3
    return m


def _runs(path, feeds: dict) -> list[np.ndarray]:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def _written(tmp_path, model: onnx.ModelProto, *args: str) -> tuple:
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    r = run_cli(str(src), "-o", str(out), "--json", *args)
    assert r.returncode == 0, r.stderr
    return src, out, json.loads(r.stdout)


def test_the_full_annotation_of_each_case_is_what_onnxruntime_refuses():
    """The cases fail as written before the fallback: the tests below test something."""
    m = _loop_never_runs()
    res = shapeinfer.infer(m)
    assert any(d.code == "E015" for d in res.diagnostics)
    base = LoadBaseline.of(m)
    assert base.check_type is True
    copy = onnx.ModelProto.FromString(m.SerializeToString())
    annotate(shapeinfer.infer(copy))
    assert "Dimension of input 1 must be 1 instead of 0" in (base.regression(copy) or "")
    with pytest.raises(Exception, match="must be 1 instead of 0"):
        ort.InferenceSession(copy.SerializeToString())

    m = _if1_branches(int64_constant=True)
    assert LoadBaseline.of(m).check_type is False  # onnx's type check refuses it; onnxruntime loads it
    ort.InferenceSession(m.SerializeToString())


def test_minus_o_of_a_loop_that_never_runs_loads_and_runs_alike(tmp_path):
    src, out, doc = _written(tmp_path, _loop_never_runs())
    assert [d["code"] for d in doc["diagnostics"]] == ["E015"]
    assert len(doc["write_notes"]) == 1 and "subgraphs" in doc["write_notes"][0]
    written = onnx.load(out)
    assert written.graph.value_info, "the main graph keeps its inferred types"
    assert written.graph.node[3].attribute[0].g == _loop_never_runs().graph.node[3].attribute[0].g
    for b in (1, 2, 3):
        feeds = {"x": np.random.default_rng(b).random((b, 0, 8), dtype=np.float32)}
        assert _same(_runs(src, feeds), _runs(out, feeds))


@pytest.mark.parametrize("int64_constant", [False, True])
@pytest.mark.parametrize(
    "args",
    [
        ["--bind", "a=2"],
        ["optimize", "--bind", "a=2"],
        ["--dim-range", "a=2:2"],  # a range of one value binds too (fuzz_cli, seed 144, case 373)
    ],
)
def test_a_binding_an_if1_merge_refuses_keeps_the_declared_dims(tmp_path, int64_constant, args):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(_if1_branches(int64_constant), src)
    command, options = args[: args[0] == "optimize"], args[args[0] == "optimize" :]
    r = run_cli(*command, str(src), *options, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "note:" in r.stderr and "Can't merge shape info" in r.stderr  # the reason, named
    ort.InferenceSession(str(out))
    for c in (0, 1):
        for n in (1, 3):
            feeds = {
                "c": np.array(c, np.int64) if int64_constant else np.array(bool(c)),
                "x": np.full((n, 3), 1.5, np.float32),
                "past": np.ones((2, 2), np.float32),
            }
            assert _same(_runs(src, feeds), _runs(out, feeds))


def test_a_write_that_loads_as_annotated_has_no_notes(tmp_path):
    """The check runs only where the annotation may not load, and changes nothing that passes."""
    m = _if1_branches(int64_constant=False)
    src, out, doc = _written(tmp_path, m, "--bind", "n=2")
    assert "write_notes" not in doc
    assert [d.dim_value for d in onnx.load(out).graph.input[1].type.tensor_type.shape.dim] == [2, 3]
    d = shapeinfer.open(str(src))
    d.infer(bind={"n": 2})
    d.write(str(tmp_path / "api.onnx"))
    assert d.notes == [] and (tmp_path / "api.onnx").read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    "given", [["--bind", "batch=1,seq=1"], ["--input-shape", "x=1,1,8"], ["--input-shape", "x=b,1,8"]]
)
def test_a_tensorflow_while_loop_bound_to_one_keeps_the_binding_and_loads(tmp_path, given):
    """tf2onnx's while loop over ``seq`` (tests/models/exporters): bound to batch=1, seq=1, or
    its input overridden to ``[1, 1, 8]`` or ``[b, 1, 8]``, the types written into its body show
    onnxruntime a Squeeze of a size-0 slice in iterations that never run; the inputs stay as
    bound or overridden, the body is written as read."""
    import os

    src = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models", "exporters", "tf_range_step3.onnx")
    out = tmp_path / "out.onnx"
    r = run_cli(src, *given, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "note: wrote no inferred types into the subgraphs" in r.stderr
    written = onnx.load(out)
    dims = written.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value or d.dim_param for d in dims] == (["b", 1, 8] if "x=b,1,8" in given else [1, 1, 8])
    feeds = {"x": np.random.default_rng(0).random((1, 1, 8), dtype=np.float32)}
    assert _same(_runs(src, feeds), _runs(out, feeds))


@pytest.mark.parametrize("command", [[], ["optimize", "--all-shapes"], ["optimize"]])
def test_a_tensorflow_while_loop_declared_to_run_no_iteration_loads(tmp_path, command):
    """The same while loop with ``x`` declared ``[batch, 1, 8]`` (fuzz_cli seed 156, case 508;
    seed 164, case 1411 for optimize): the loop runs no iteration at any size, the engine drops
    the body's errors (a Squeeze of a size-0 axis) as it never runs, and plain ``-o`` and
    ``optimize -o`` wrote the body's types, which onnxruntime's loader refuses. A body that never
    runs and would fail now has both check what they write (``optimize`` writes no body types
    but with ``--all-shapes``)."""
    import os

    src = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models", "exporters", "tf_range_step3.onnx")
    m = onnx.load(src)
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1
    static, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(m, static)
    assert shapeinfer.infer(str(static)).dead_with_errors == 1
    r = run_cli(*command, str(static), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert ("note: wrote no inferred types into the subgraphs" in r.stderr) == (command != ["optimize"])
    for batch in (1, 3):
        feeds = {"x": np.random.default_rng(batch).random((batch, 1, 8), dtype=np.float32)}
        assert _same(_runs(static, feeds), _runs(out, feeds))


def _loop_of_no_trip() -> onnx.ModelProto:
    """x[2, 1, 8], the body output declared ``[u, 8]``, no trip (5 < 1 is false): onnxruntime
    gives ``[0, 0, 8]`` (a dim_value of the body output's type is kept, any other dim is 0)."""
    return _squeezing_loop([2, 1, 8], 5, ["u", 8])


@pytest.mark.parametrize("command", [[], ["optimize"]])
def test_a_loop_of_no_trip_gives_the_same_empty_output(tmp_path, command):
    """The body's types are left as read where a number written there would reach a scan
    output's type (fuzz_cli, seed 146, case 2837: `-o` made ``[0, 0, 8]`` into ``[0, 2, 8]``)."""
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(_loop_of_no_trip(), src)
    r = run_cli(*command, str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    feeds = {"x": np.random.default_rng(0).random((2, 1, 8), dtype=np.float32)}
    ref = _runs(src, feeds)
    assert ref[1].shape == (0, 0, 8)
    assert _same(ref, _runs(out, feeds))


def test_a_branch_onnx_refuses_as_read_gets_no_types_onnxruntime_refuses(tmp_path):
    """optimum's merged Marian decoder with the past key of layer 0 declared ``[..., 1]`` where
    the new key has 8 (fuzz_cli seed 154, case 156): the branch with cache concatenates them,
    which onnx's strict inference refuses as read and onnxruntime loads, as it sees no last dim
    for the new key. ``-o`` wrote that dim into the branch, and onnxruntime refused the model
    ("Can't merge shape info", Concat_3). A model that fails onnx's inference is now checked
    error for error: the branch is written as read, and the model loads and runs as its input."""
    import os

    src = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models", "optimum", "marian_tiny_merged.onnx")
    m = onnx.load(src)
    past = next(vi for vi in m.graph.input if vi.name == "past_key_values.0.decoder.key")
    past.type.tensor_type.shape.dim[3].dim_value = 1
    bad, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(m, bad)
    r = run_cli(str(bad), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "note: wrote no inferred types into the subgraphs" in r.stderr
    sess = ort.InferenceSession(str(bad))
    rng = np.random.default_rng(0)
    sizes = {"batch_size": 2, "encoder_sequence_length": 3, "decoder_sequence_length": 2}
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else sizes.get(d, 1) for d in i.shape]
        if i.type == "tensor(bool)":
            feeds[i.name] = np.zeros(shape, bool)  # the branch without cache
        elif i.type == "tensor(int64)":
            feeds[i.name] = rng.integers(0, 2 if "mask" in i.name else 128, shape).astype(np.int64)
        else:
            feeds[i.name] = rng.random(shape, dtype=np.float32)
    assert _same(_runs(bad, feeds), _runs(out, feeds))


def _concat_of_an_empty_input(through_loop: bool) -> onnx.ModelProto:
    """x[1, 8, n, 4]; t of shape [1, 1, 0] (a length n - n, which onnx's inference cannot tell;
    ``through_loop``: a Loop of one iteration stacks it, a Squeeze takes it out) concatenated on
    axis 2 with u of shape [1, 2, 3] (through ScatterElements of Shape(t), which shapeinfer does
    not follow): onnxruntime's kernel reads none of t's dims and runs it at every n, giving u;
    onnx's Concat inference requires t's other dims equal to u's."""
    one = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    two = helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i2"], ["n"], axis=0),
        helper.make_node("Sub", ["n", "n"], ["z"]),
        helper.make_node("Concat", ["one", "one", "z"], ["ts"], axis=0),
    ]
    if through_loop:
        body = helper.make_graph(
            [
                helper.make_node("Identity", ["c_in"], ["c_out"]),
                helper.make_node("ConstantOfShape", ["ts"], ["tb"], value=one),
            ],
            "body",
            [
                helper.make_tensor_value_info("i", TensorProto.INT64, []),
                helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            ],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), onnx.ValueInfoProto(name="tb")],
        )
        nodes += [
            helper.make_node("Loop", ["trip", "true"], ["stacked"], body=body),
            helper.make_node("Squeeze", ["stacked", "zero"], ["t"]),
        ]
    else:
        nodes.append(helper.make_node("ConstantOfShape", ["ts"], ["t"], value=one))
    nodes += [
        helper.make_node("Shape", ["t"], ["st"]),
        helper.make_node("ScatterElements", ["st", "one", "two"], ["s1"], axis=0),
        helper.make_node("ScatterElements", ["s1", "two", "three"], ["us"], axis=0),
        helper.make_node("ConstantOfShape", ["us"], ["u"], value=two),
        helper.make_node("Concat", ["t", "u"], ["y"], axis=2),
    ]
    inits = {"i2": [2], "one": [1], "two": [2], "three": [3], "zero": [0], "trip": 1}
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, "n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in inits.items()]
        + [numpy_helper.from_array(np.array(True), "true")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("through_loop", [False, True], ids=["direct", "loop"])
def test_an_empty_concat_input_whose_other_dims_differ_is_not_typed(tmp_path, through_loop):
    """Written with its type [1, 1, 0], t let onnxruntime's optimizer learn u's shape and its
    loader refuse the model (at its default level), which the input runs at every n; optimize
    folded both into initializers the loader refuses at every level. Now -o leaves t's type out
    and optimize's output is load-checked: either it loads and computes the same, or nothing is
    written. Through a Loop, the types t's shape follows from (the Loop body's output) are left
    out too: written, they told onnxruntime t's shape again."""
    m = _concat_of_an_empty_input(through_loop)
    res = shapeinfer.infer(m)
    assert ("main", "t") in res.unwritten
    src, out, _ = _written(tmp_path, m)
    assert "t" not in {vi.name for vi in onnx.load(out).graph.value_info}
    opt = tmp_path / "opt.onnx"
    r = run_cli("optimize", str(src), "-o", str(opt))
    for n in (1, 3):
        feeds = {"x": np.ones((1, 8, n, 4), np.float32)}
        expected = _runs(src, feeds)
        assert expected[0].shape == (1, 2, 3)
        assert _same(_runs(out, feeds), expected)
        if r.returncode == 0:
            assert _same(_runs(opt, feeds), expected)
        else:
            assert "nothing written" in r.stderr and not opt.exists()
