"""Shape contracts and their diff (``shapeinfer diff``): renames are no change, every synthetic
change is caught, and ``optimize`` keeps a model's contract."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.common import model_path

import shapeinfer
from shapeinfer.analysis.contract import compare, contract_of
from shapeinfer.inference.engine import infer
from testkit import ort_oracle


def _contract(model: onnx.ModelProto):
    return contract_of(infer(model))


def _diff(old: onnx.ModelProto, new: onnx.ModelProto) -> list[str]:
    return [str(c) for c in compare(_contract(old), _contract(new))]


def _mlp(batch: str = "batch", seq: str = "seq", out_dim: int = 8, elem: int = T.FLOAT) -> onnx.ModelProto:
    """x[batch, seq, 4] @ W[4, out] -> y; mask[batch, seq] passes through."""
    w = h.make_tensor("w", elem, [4, out_dim], np.ones(4 * out_dim).tolist())
    g = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["y"]), h.make_node("Identity", ["mask"], ["m"])],
        "mlp",
        [h.make_tensor_value_info("x", elem, [batch, seq, 4]), h.make_tensor_value_info("mask", T.INT64, [batch, seq])],
        [h.make_tensor_value_info("y", elem, None), h.make_tensor_value_info("m", T.INT64, None)],
        [w],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_renamed_input_symbols_are_the_same_contract():
    assert _diff(_mlp(), _mlp(batch="N", seq="L")) == []


def test_each_synthetic_change_is_caught():
    base = _mlp()
    assert _diff(base, _mlp(out_dim=16)) == ["output y: dim 2 8 -> 16"]
    assert _diff(base, _mlp(elem=T.FLOAT16)) == [
        "input x: type tensor(float) -> tensor(float16)",
        "output y: type tensor(float) -> tensor(float16)",
    ]
    static = _mlp()
    static.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    assert _diff(base, static) == ["input x: dim 0 batch -> 1", "output y: dim 0 batch -> 1"]
    # the mask's batch no longer the input's: the two sizes came apart
    split = _mlp()
    split.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "b2"
    assert any(c.startswith("inputs: shared sizes") for c in _diff(base, split))
    dropped = _mlp()
    del dropped.graph.output[1]
    assert _diff(base, dropped) == ["output m: removed tensor(int64) [batch, seq] -> -"]
    swapped = _mlp()
    outs = [onnx.ValueInfoProto.FromString(v.SerializeToString()) for v in swapped.graph.output]
    del swapped.graph.output[:]
    swapped.graph.output.extend(reversed(outs))
    assert _diff(base, swapped) == ["outputs: order y, m -> m, y"]


def test_sizes_that_came_apart_print_as_two():
    """x[a, b] + z[a, b] against x[a, b] + z[c, d]: new's c and d were read as old's a and b, so
    its broadcast guard printed as the tautology "a == a or a == 1 or a == 1" (the review; and
    qwen2 against gemma2 from onnxruntime-genai said "4096 <= past_sequence_length" of a
    sliding-window length). A symbol is read as old's only where the two are one to one; a
    name that would then print as another size is primed."""

    def add(zdims: list) -> onnx.ModelProto:
        g = h.make_graph(
            [h.make_node("Add", ["x", "z"], ["y"])],
            "add",
            [h.make_tensor_value_info("x", T.FLOAT, ["a", "b"]), h.make_tensor_value_info("z", T.FLOAT, zdims)],
            [h.make_tensor_value_info("y", T.FLOAT, None)],
        )
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])

    diff = _diff(add(["a", "b"]), add(["c", "d"]))
    assert "guards: added - -> a == c or a == 1 or c == 1" in diff
    assert "output y: dim 0 a -> max(a, c)" in diff
    assert not [c for c in diff if "a == a" in c]
    # new's b is old's a (one to one); new's a, which old's b and c now are, prints as a'
    swapped = add(["b", "c"])
    for k, name in enumerate(("b", "a")):
        swapped.graph.input[0].type.tensor_type.shape.dim[k].dim_param = name
    diff = _diff(add(["a", "b"]), swapped)
    assert "input x: dim 1 b -> a'" in diff and "input z: dim 1 b -> c" in diff


def test_a_new_guard_is_a_change():
    """Reshape(y, [-1, 4]) needs 4 | batch*seq*6 when y is [batch, seq, 6] (a guard), nothing
    when y is [batch, seq, 8]."""
    base = _mlp()
    g = base.graph
    g.initializer.append(h.make_tensor("s", T.INT64, [2], [-1, 4]))
    g.node.append(h.make_node("Reshape", ["y", "s"], ["r"]))
    g.output.append(h.make_tensor_value_info("r", T.FLOAT, None))
    wide = _mlp(out_dim=6)
    wide.graph.initializer.append(h.make_tensor("s", T.INT64, [2], [-1, 4]))
    wide.graph.node.append(h.make_node("Reshape", ["y", "s"], ["r"]))
    wide.graph.output.append(h.make_tensor_value_info("r", T.FLOAT, None))
    changes = _diff(base, wide)
    assert any(c.startswith("guards: added") for c in changes), changes


def _baked_length_model() -> onnx.ModelProto:
    """x[n, batch, 32] reshaped to [24, 2*batch, 16], the 24 baked in by a trace at n = 24
    (DETR's attention as TorchScript exports it): the model runs only where n == 24."""
    c = h.make_tensor
    nodes = [
        h.make_node("Shape", ["x"], ["sh"]),
        h.make_node("Gather", ["sh", "one"], ["b"], axis=0),
        h.make_node("Mul", ["b", "two"], ["b2"]),
        h.make_node("Unsqueeze", ["b2", "zero"], ["b2v"]),
        h.make_node("Concat", ["c24", "b2v", "c16"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    g = h.make_graph(
        nodes,
        "baked",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", "batch", 32])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [
            c("one", T.INT64, [], [1]),
            c("two", T.INT64, [], [2]),
            c("zero", T.INT64, [1], [0]),
            c("c24", T.INT64, [1], [24]),
            c("c16", T.INT64, [1], [16]),
        ],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_optimize_keeps_a_dim_a_minus_one_would_lose():
    """canonicalize-reshape spells an entry -1 only where inference reads the same dim back from
    the element count: here it would read (n*batch)//12, not 2*batch."""
    m = _baked_length_model()
    opt = shapeinfer.optimize(m)
    assert _diff(m, opt) == []
    assert [str(d) for d in infer(opt).dims("y")] == ["24", "2*batch", "16"]
    x = np.random.default_rng(0).standard_normal((24, 3, 32)).astype(np.float32)
    (want,) = ort_oracle.run(m, {"x": x})
    (got,) = ort_oracle.run(opt, {"x": x})
    np.testing.assert_array_equal(want, got)


@pytest.mark.parametrize("name", ["bert_ts", "gpt2_ts", "llama_dynamo", "vit_dynamo"])
def test_optimize_keeps_the_contract_of_the_example_models(name):
    m = onnx.load(str(model_path(name)))
    assert _diff(m, shapeinfer.optimize(m)) == []


def test_the_command_exit_codes_and_json(tmp_path):
    import json

    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    old, new, same = tmp_path / "old.onnx", tmp_path / "new.onnx", tmp_path / "same.onnx"
    onnx.save(_mlp(), str(old))
    onnx.save(_mlp(out_dim=16), str(new))
    onnx.save(_mlp(batch="N", seq="L"), str(same))
    r = CliRunner().invoke(main, ["diff", str(old), str(same)])
    assert r.exit_code == 0 and r.stdout.strip() == "the same contract", r.output
    r = CliRunner().invoke(main, ["diff", str(old), str(new)])
    assert r.exit_code == 1 and r.stdout.splitlines() == ["output y: dim 2 8 -> 16", "1 change"], r.output
    r = CliRunner().invoke(main, ["diff", str(old), str(new), "--json"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["same"] is False
    assert doc["changes"] == [{"where": "output y", "what": "dim 2", "old": "8", "new": "16"}]
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    r = CliRunner().invoke(main, ["diff", str(old), str(tmp_path / "junk.onnx")])
    assert r.exit_code == 2 and "junk.onnx" in r.stderr and "Traceback" not in r.output


def test_float_exactness_assumptions_are_kept_apart_not_compared():
    """tf2onnx's while loop casts the sequence length to float: inference assumes seq <= 2**24
    there; optimize folds that comparison away and the loop's own assumption (seq <= 2**24 + 1)
    is what remains. Neither is a condition the model puts on its inputs."""
    from pathlib import Path

    p = Path(__file__).resolve().parents[1] / "models" / "exporters" / "tf_while_countdown.onnx"
    m = onnx.load(str(p))
    before = _contract(m)
    assert before.precision and not any(g.text.startswith("seq <=") for g in before.guards)
    assert before.ranges["seq"][1] is None
    assert _diff(m, shapeinfer.optimize(m)) == []
    # a bound the model does ask for stays in the contract: BERT's 512 positions
    bert = _contract(onnx.load(str(model_path("bert_ts"))))
    assert [g.text for g in bert.guards] == ["seq <= 512"] and not bert.precision


def test_diff_of_standard_input_twice_is_a_usage_error():
    """`diff - -` said "-: empty file, not an ONNX model" (standard input read once)."""
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    r = CliRunner().invoke(main, ["diff", "-", "-"], input=model_path("bert_ts").read_bytes())
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "shapeinfer: error: OLD and NEW are both '-': standard input can be read once; give one of them as a file"
    )
