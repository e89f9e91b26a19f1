"""A written model is never less loadable than its input (issue 10 §1).

For every model here: if onnxruntime loads the input, it loads what ``shapeinfer -o``
(:func:`shapeinfer.infer_shapes`) and ``shapeinfer optimize`` write, and they compute the same
outputs on the same inputs; if ``onnx.checker.check_model(full_check=True)`` accepts the input,
it accepts both outputs. The models: the shipped examples, their deployment variants in
``tests/models/deploy/*.onnx`` (onnxruntime's transformers and offline optimizers,
quantization, fp16), scikit-learn models converted by skl2onnx
(``tests/models/sklearn/*.onnx``: ZipMap, Tokenizer), and small graphs with what broke the writer:
ops without a rule (custom domains, contrib ops), ai.onnx.ml ZipMap, a Tokenizer, sequences,
maps and optionals, declared types inference cannot match, subgraphs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.common import MODEL_NAMES, ROOT, model_path, run_cli

import shapeinfer
from shapeinfer import optimize
from shapeinfer.io.annotate import is_complete
from shapeinfer.io.onnxio import graphs_within
from testkit import ort_oracle

F = T.FLOAT
DEPLOY_DIR = ROOT / "tests" / "models" / "deploy"
SKLEARN_DIR = ROOT / "tests" / "models" / "sklearn"  # tools/generators/make_sklearn_models.py


# ---------------------------------------------------------------------------- inputs and checks


def _feeds(model: onnx.ModelProto) -> dict:
    """Inputs for a tensor-input model: open dims 2 (``seq`` 5), the rest as :func:`ort_oracle.feeds`
    makes them (benchmarks/loadability.py feeds the same)."""
    return ort_oracle.feeds(model, {"seq": 5}, unbound=2)


def _checker_accepts(model: onnx.ModelProto) -> str | None:
    """None when the full checker accepts ``model``, else its message."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # the checker raises several exception types
        return ort_oracle.error_line(e)
    return None


def _ort_run(model: onnx.ModelProto, feeds: dict | None):
    """onnxruntime's outputs for ``feeds`` (the model is only loaded when ``feeds`` is None),
    or the load error's message as a string."""
    try:
        sess = ort_oracle.session(model, optimize=True)
    except Exception as e:
        return ort_oracle.error_line(e)
    return [] if feeds is None else sess.run(None, feeds)


def assert_loadable(model: onnx.ModelProto, feeds: dict | None) -> None:
    """The property, for one model: see the module docstring."""
    written = {"-o": shapeinfer.infer_shapes(model), "optimize": optimize(model)}
    for how, out in written.items():
        for g in graphs_within(out.graph):
            bad = [
                vi.name for vi in list(g.value_info) + list(g.output) if vi.type.ByteSize() and not is_complete(vi.type)
            ]
            assert not bad, f"{how} wrote incomplete types for {bad[:5]}"
    if _checker_accepts(model) is None:
        for how, out in written.items():
            assert _checker_accepts(out) is None, f"{how}: {_checker_accepts(out)}"
    want = _ort_run(model, feeds)
    if isinstance(want, str):
        return  # onnxruntime refuses the input too
    for how, out in written.items():
        got = _ort_run(out, feeds)
        assert not isinstance(got, str), f"onnxruntime loads the input but not the {how} output: {got}"
        diff = ort_oracle.outputs_differ(want, got)
        assert diff is None, f"{how} output computes something else: {diff}"


# ---------------------------------------------------------------------------- small graphs


def _model(nodes, inputs, outputs, opsets: dict[str, int], **kw) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, **kw)
    return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets.items()])


def contrib_op_without_rule() -> tuple[onnx.ModelProto, dict]:
    """A contrib op shapeinfer has no rule for, then ops whose rules know the shape but not the
    type: once written as ``elem_type`` 0, "Invalid tensor data type 0"."""
    nodes = [
        h.make_node("Inverse", ["x"], ["inv"], domain="com.microsoft"),
        h.make_node("Reshape", ["inv", "s"], ["r"]),
        h.make_node("Unsqueeze", ["r", "ax"], ["u"]),
        h.make_node("Relu", ["u"], ["y"]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", F, ["n", 3, 3])],
        [h.make_tensor_value_info("y", F, [1, "a", 9])],
        {"": 17, "com.microsoft": 1},
        initializer=[h.make_tensor("s", T.INT64, [2], [-1, 9]), h.make_tensor("ax", T.INT64, [1], [0])],
    )
    x = np.random.default_rng(1).random((2, 3, 3), dtype=np.float32) + 3 * np.eye(3, dtype=np.float32)
    return m, {"x": x}


def custom_domain_op() -> tuple[onnx.ModelProto, dict | None]:
    """An op of a domain nobody knows: no schema, its outputs and what follows stay unknown."""
    nodes = [
        h.make_node("Mystery", ["x"], ["m"], domain="com.example"),
        h.make_node("Reshape", ["m", "s"], ["r"]),
        h.make_node("Unsqueeze", ["r", "ax"], ["u"]),
        h.make_node("Relu", ["u"], ["y"]),
        h.make_node("Relu", ["x"], ["z"]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", F, ["n", 4])],
        [h.make_tensor_value_info("y", F, ["a", "b", "c"]), h.make_tensor_value_info("z", F, ["n", 4])],
        {"": 17, "com.example": 1},
        initializer=[h.make_tensor("s", T.INT64, [2], [-1, 4]), h.make_tensor("ax", T.INT64, [1], [0])],
    )
    return m, None


def _zipmap_model(labels: dict, out_key: int) -> onnx.ModelProto:
    value = h.make_tensor_type_proto(F, [])
    probs = h.make_value_info("probs", h.make_sequence_type_proto(h.make_map_type_proto(out_key, value)))
    label_type = T.INT64 if out_key == T.INT64 else T.STRING
    classes = {"classlabels_ints": [0, 1, 2]} if out_key == T.INT64 else {"classlabels_strings": ["a", "b", "c"]}
    nodes = [
        h.make_node(
            "LinearClassifier",
            ["x"],
            ["label", "p"],
            domain="ai.onnx.ml",
            coefficients=[0.1, -0.2, 0.3, 0.4, -0.5, 0.6],
            intercepts=[0.0, 0.1, 0.2],
            post_transform="SOFTMAX",
            **classes,
        ),
        h.make_node("ZipMap", ["p"], ["probs"], domain="ai.onnx.ml", **labels),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", F, ["n", 2])],
        [h.make_tensor_value_info("label", label_type, ["n"]), probs],
        {"": 17, "ai.onnx.ml": 1},
    )


def zipmap_int64() -> tuple[onnx.ModelProto, dict]:
    """A classifier ending in ZipMap (what skl2onnx writes): its declared
    ``seq(map(int64, tensor(float)))`` output once lost its value type: "Unsupported type proto
    value case:0"."""
    m = _zipmap_model({"classlabels_int64s": [0, 1, 2]}, T.INT64)
    return m, {"x": np.random.default_rng(2).random((4, 2), dtype=np.float32)}


def zipmap_string() -> tuple[onnx.ModelProto, dict]:
    """ZipMap with string class labels: ``seq(map(string, tensor(float)))``."""
    m = _zipmap_model({"classlabels_strings": ["a", "b", "c"]}, T.STRING)
    return m, {"x": np.random.default_rng(3).random((3, 2), dtype=np.float32)}


def tokenizer() -> tuple[onnx.ModelProto, dict]:
    """com.microsoft Tokenizer (string tensors), its shape as a second output."""
    nodes = [
        h.make_node(
            "Tokenizer",
            ["text"],
            ["tok"],
            domain="com.microsoft",
            mark=0,
            pad_value="#",
            separators=[" "],
            mincharnum=1,
        ),
        h.make_node("Shape", ["tok"], ["shp"]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("text", T.STRING, ["n"])],
        [h.make_tensor_value_info("tok", T.STRING, ["n", "t"]), h.make_tensor_value_info("shp", T.INT64, [2])],
        {"": 17, "com.microsoft": 1},
    )
    return m, {"text": np.array(["a b c", "de f"], dtype=object)}


def sequences_and_optionals() -> tuple[onnx.ModelProto, dict]:
    """Sequence and optional values, one sequence a graph output, one declared in value_info."""
    nodes = [
        h.make_node("SequenceConstruct", ["x", "x"], ["s"]),
        h.make_node("SplitToSequence", ["x"], ["s2"], axis=1),
        h.make_node("SequenceInsert", ["s", "x"], ["s3"]),
        h.make_node("ConcatFromSequence", ["s3"], ["c"], axis=0),
        h.make_node("SequenceAt", ["s2", "i"], ["a"]),
        h.make_node("Optional", ["x"], ["o"]),
        h.make_node("OptionalGetElement", ["o"], ["og"]),
        h.make_node("OptionalHasElement", ["o"], ["oh"]),
    ]
    seq = h.make_sequence_type_proto
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", F, ["n", 3])],
        [
            h.make_tensor_value_info("c", F, ["a", 3]),
            h.make_tensor_value_info("a", F, ["n", 1]),
            h.make_tensor_value_info("og", F, ["n", 3]),
            h.make_tensor_value_info("oh", T.BOOL, []),
            h.make_value_info("s3", seq(h.make_tensor_type_proto(F, ["n", 3]))),
        ],
        {"": 18},
        initializer=[h.make_tensor("i", T.INT64, [], [1])],
        value_info=[h.make_value_info("s2", seq(h.make_tensor_type_proto(F, ["n", 1])))],
    )
    return m, {"x": np.random.default_rng(4).random((2, 3), dtype=np.float32)}


def map_input() -> tuple[onnx.ModelProto, dict]:
    """A ``map(int64, tensor(float))`` graph input through DictVectorizer and a ZipMap back."""
    mp = h.make_value_info("mp", h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(F, [])))
    nodes = [
        h.make_node("DictVectorizer", ["mp"], ["v"], domain="ai.onnx.ml", int64_vocabulary=[1, 2, 3]),
        h.make_node("ZipMap", ["v"], ["z"], domain="ai.onnx.ml", classlabels_int64s=[7, 8, 9]),
    ]
    z = h.make_value_info(
        "z", h.make_sequence_type_proto(h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(F, [])))
    )
    m = _model(nodes, [mp], [h.make_tensor_value_info("v", F, [1, 3]), z], {"": 17, "ai.onnx.ml": 1})
    return m, {"mp": {1: 0.5, 3: 2.0}}


def declared_where_inference_knows_less() -> tuple[onnx.ModelProto, dict]:
    """value_info the model declares for outputs of an op without a rule: kept, not dropped."""
    m, feeds = contrib_op_without_rule()
    m.graph.value_info.extend(
        [h.make_tensor_value_info("inv", F, ["n", 3, 3]), h.make_tensor_value_info("r", F, ["m", 9])]
    )
    return m, feeds


def subgraph_with_contrib_op() -> tuple[onnx.ModelProto, dict]:
    """The contrib op without a rule inside both branches of an If."""

    def branch(name: str, op: str) -> onnx.GraphProto:
        return h.make_graph(
            [
                h.make_node("Inverse", ["x"], [f"{name}_i"], domain="com.microsoft"),
                h.make_node("Reshape", [f"{name}_i", "s"], [f"{name}_r"]),
                h.make_node(op, [f"{name}_r"], [name]),
            ],
            name,
            [],
            [h.make_tensor_value_info(name, F, ["n", 9])],
        )

    nodes = [h.make_node("If", ["c"], ["y"], then_branch=branch("t", "Relu"), else_branch=branch("e", "Neg"))]
    m = _model(
        nodes,
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", F, ["n", 3, 3])],
        [h.make_tensor_value_info("y", F, ["n", 9])],
        {"": 17, "com.microsoft": 1},
        initializer=[h.make_tensor("s", T.INT64, [2], [-1, 9])],
    )
    x = np.random.default_rng(5).random((2, 3, 3), dtype=np.float32) + 3 * np.eye(3, dtype=np.float32)
    return m, {"c": np.array(True), "x": x}


def fp16_graph() -> tuple[onnx.ModelProto, dict]:
    """A float16 graph: Cast in, MatMul, LayerNormalization, Cast out."""
    w = h.make_tensor("w", T.FLOAT16, [4, 4], np.eye(4, dtype=np.float16).tobytes(), raw=True)
    sc = h.make_tensor("sc", T.FLOAT16, [4], np.ones(4, dtype=np.float16).tobytes(), raw=True)
    nodes = [
        h.make_node("Cast", ["x"], ["xh"], to=T.FLOAT16),
        h.make_node("MatMul", ["xh", "w"], ["mm"]),
        h.make_node("LayerNormalization", ["mm", "sc"], ["ln"], axis=-1),
        h.make_node("Cast", ["ln"], ["y"], to=F),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", F, ["n", 4])],
        [h.make_tensor_value_info("y", F, ["n", 4])],
        {"": 17},
        initializer=[w, sc],
    )
    return m, {"x": np.random.default_rng(6).random((3, 4), dtype=np.float32)}


def expand_to_a_declared_zero_dim() -> tuple[onnx.ModelProto, dict]:
    """An Expand whose target holds a 0 that inference knows (x is declared ``[0, n]``) but the
    input computes at runtime: folded to an initializer, onnxruntime's ExpandElimination took the
    constant 0 for a 1 and removed the Expand (``[1, 3]`` where the input gives ``[0, 3]``; in
    bert_dynamo with input_ids declared ``[0, seq]``, a Concat it fed then failed to load).
    Found by tools/fuzz/fuzz_cli.py."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"], start=0, end=1),
        h.make_node("Concat", ["s", "one"], ["target"], axis=0),
        h.make_node("Relu", ["y"], ["r"]),
        h.make_node("Expand", ["r", "target"], ["e"]),
        h.make_node("Relu", ["e"], ["z"]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", F, [0, "n"]), h.make_tensor_value_info("y", F, [1, "m"])],
        [h.make_tensor_value_info("z", F, None)],
        {"": 17},
        initializer=[h.make_tensor("one", T.INT64, [1], [1])],
    )
    return m, {"x": np.zeros((0, 2), np.float32), "y": np.ones((1, 3), np.float32)}


SMALL: dict[str, Callable[[], tuple[onnx.ModelProto, dict | None]]] = {
    f.__name__: f
    for f in [
        contrib_op_without_rule,
        custom_domain_op,
        zipmap_int64,
        zipmap_string,
        tokenizer,
        sequences_and_optionals,
        map_input,
        declared_where_inference_knows_less,
        subgraph_with_contrib_op,
        fp16_graph,
        expand_to_a_declared_zero_dim,
    ]
}


@pytest.mark.parametrize("case", list(SMALL))
def test_small_graph_outputs_load(case):
    model, feeds = SMALL[case]()
    assert_loadable(model, feeds)


# ---------------------------------------------------------------------------- real models


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_example_outputs_load(name):
    model = onnx.load(str(model_path(name)))
    assert_loadable(model, _feeds(model))


@pytest.mark.parametrize("path", sorted(DEPLOY_DIR.glob("*.onnx")), ids=lambda p: p.stem)
def test_deploy_fixture_outputs_load(path):
    model = onnx.load(str(path))
    assert_loadable(model, _feeds(model))


@pytest.mark.parametrize("path", sorted(SKLEARN_DIR.glob("*.onnx")), ids=lambda p: p.stem)
def test_sklearn_outputs_load(path):
    model = onnx.load(str(path))
    assert_loadable(model, _feeds(model))


def test_example_with_a_declared_zero_dim_outputs_load():
    """bert_dynamo with input_ids and attention_mask declared ``[0, seq]``: optimize made the
    target of an Expand a constant holding that 0, which onnxruntime's ExpandElimination takes
    for a 1 (see :func:`expand_to_a_declared_zero_dim`); onnxruntime then refused the output."""
    model = onnx.load(str(model_path("bert_dynamo")))
    for vi in model.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param == "batch":
                d.dim_value = 0
    assert_loadable(model, _feeds(model))


# ------------------------------------------------- what onnxruntime's loader reads that onnx's does not


def _ort_both_levels(path: str, feeds: dict) -> list[list[np.ndarray]]:
    """The outputs with onnxruntime's optimizations off and all on (raises if it fails)."""
    return [ort_oracle.session(path, optimize=o).run(None, feeds) for o in (False, True)]


def test_a_bound_write_keeps_a_branch_not_taken_loadable(tmp_path):
    """``c = ConstantOfShape(Shape(x)[1])``, ``y = If(sum(Shape(x)) > 80){Expand(c, [2])}
    else {c}``: at n = 8 the then-branch is not taken and would fail. Written under ``--bind
    n=8``, ``c: [8]`` let onnxruntime's loader infer that branch with the outer ``[2]``'s value
    (onnx's inference reads no outer-scope initializer, so the load check passed it) and refuse
    the model, which loads and runs as read."""
    nodes = [
        h.make_node("Shape", ["x"], ["sh"]),
        h.make_node("Gather", ["sh", "i1"], ["d"], axis=0),
        h.make_node("ConstantOfShape", ["d"], ["c"], value=h.make_tensor("v", F, [1], [1.0])),
        h.make_node("ReduceSum", ["sh", "zero"], ["s"], keepdims=0),
        h.make_node("Greater", ["s", "k80"], ["cond"]),
        h.make_node(
            "If",
            ["cond"],
            ["y"],
            then_branch=h.make_graph(
                [h.make_node("Expand", ["c", "two"], ["yt"])], "t", [], [h.make_tensor_value_info("yt", F, None)]
            ),
            else_branch=h.make_graph(
                [h.make_node("Identity", ["c"], ["ye"])], "e", [], [h.make_tensor_value_info("ye", F, None)]
            ),
        ),
    ]
    ints = {"i1": [1], "zero": [0], "k80": 80, "two": [2]}
    inits = [onnx.numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    g = h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", F, [1, "n"])], [h.make_tensor_value_info("y", F, None)], inits
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    src, out = str(tmp_path / "m.onnx"), str(tmp_path / "w.onnx")
    onnx.save(m, src)
    feeds = {"x": np.ones((1, 8), np.float32)}
    want = _ort_both_levels(src, feeds)
    r = run_cli(src, "--bind", "n=8", "-o", out)
    assert r.returncode == 0, r.stderr
    for a, b in zip(want, _ort_both_levels(out, feeds), strict=True):
        np.testing.assert_array_equal(a[0], b[0])


def test_small_constants_stored_as_external_data_stay_loadable(tmp_path):
    """Every initializer of this model (a Loop whose body reshapes a constant by sizes computed
    from x, then Squeeze and Pad by constant axes and pads) is in its external data file.
    onnxruntime's loader cannot read an external value where its inference needs one ("Cannot
    parse data from external tensors"): the input loads because nothing reaches the Squeeze's
    axes with a known shape, and the types ``-o`` wrote let it reach them. Now the write is
    checked as its loader would read it; ``optimize`` refuses what it cannot make loadable."""
    import shutil

    for f in ("small_external_constants.onnx", "small_external_constants.data"):
        shutil.copy(ROOT / "tests" / "models" / "io" / f, tmp_path / f)
    src = str(tmp_path / "small_external_constants.onnx")
    for n in (1, 3):
        feeds = {"x": np.random.default_rng(n).standard_normal((1, 64, n)).astype(np.float32)}
        want = _ort_both_levels(src, feeds)
        out = str(tmp_path / f"w{n}" / "w.onnx")
        (tmp_path / f"w{n}").mkdir()
        r = run_cli(src, "-o", out)
        assert r.returncode == 0, r.stderr
        for a, b in zip(want, _ort_both_levels(out, feeds), strict=True):
            np.testing.assert_array_equal(a[0], b[0])
    (tmp_path / "opt").mkdir()
    out = str(tmp_path / "opt" / "w.onnx")
    r = run_cli("optimize", src, "-o", out)
    if r.returncode == 0:
        _ort_both_levels(out, feeds)
    else:
        assert "Traceback" not in r.stderr and "nothing written" in r.stderr
        assert not (tmp_path / "opt" / "w.onnx").exists()
