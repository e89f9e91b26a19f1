"""``make-dynamic`` (issue 36 part 1): static exports made dynamic, checked in onnxruntime
against the static model at its own size and against the dynamic twin (same weights) at other
sizes; refusals exit 1, name the node and write nothing.

The twins are made by tools/generators/make_static_twins.py (torch.onnx.export with and without
dynamic axes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.cli.main import main
from shapeinfer.passes.make_dynamic import MakeDynamicError
from shapeinfer.symbolic import dims as D

ort = pytest.importorskip("onnxruntime")

TWINS = Path(__file__).resolve().parent.parent / "models" / "static"
TABLE = json.loads((TWINS / "twins.json").read_text())


def _session(model: onnx.ModelProto | str):
    data = model if isinstance(model, str) else model.SerializeToString()
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _feeds(inputs: dict, sizes: dict[str, int], dims: dict, types: dict[str, int]) -> dict:
    """Inputs at ``sizes``: floats for images; for the language models token ids and an
    attention mask whose rows differ (a model that mixes positions or rows shows it)."""
    rng = np.random.default_rng(sum(sizes.values()))
    feeds = {}
    for name, shape in inputs.items():
        shape = list(shape)
        for axis, sym in dims.get(name, {}).items():
            shape[int(axis)] = sizes.get(sym, shape[int(axis)])
        if types[name] != TensorProto.INT64:
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in name:
            feeds[name] = np.ones(shape, np.int64)
            for row in range(shape[0]):  # row r masks its last r positions: rows differ
                if row % shape[-1]:
                    feeds[name][row, -(row % shape[-1]) :] = 0
        else:
            feeds[name] = rng.integers(0, 50, shape).astype(np.int64)
    return feeds


#: sizes each twin is compared at besides its static one: 1, odd, and batch != sequence
SIZES = {
    "cnn": [{"batch": 1}, {"batch": 2}, {"batch": 5}],
    "yolo": [{"batch": 1}, {"batch": 2}, {"batch": 5}],
    "bert": [{"batch": 1, "seq": 1}, {"batch": 3, "seq": 5}, {"batch": 2, "seq": 13}],
    "gpt2": [{"batch": 1, "seq": 1}, {"batch": 3, "seq": 5}, {"batch": 2, "seq": 13}],
    "llama": [{"batch": 1, "seq": 1}, {"batch": 3, "seq": 5}, {"batch": 2, "seq": 13}],
}


@pytest.mark.parametrize("name", list(SIZES))
def test_static_export_made_dynamic_equals_its_twins(name):
    entry = TABLE[name]
    dims = {k: {int(a): s for a, s in v.items()} for k, v in entry["dims"].items()}
    static = str(TWINS / f"{name}.static.onnx")
    made = shapeinfer.make_dynamic(static, dims=dims)
    onnx.checker.check_model(made)  # (nodes in order among others)
    symbols = sorted({s for axes in dims.values() for s in axes.values()})
    out = made.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in out[: len(symbols)]] == sorted(symbols, key=["batch", "seq"].index)
    result = shapeinfer.infer(made)
    assert not [d for d in result.diagnostics if d.severity == "error"]
    # no guard ties a symbol to a size; a bound is the model's own range, as its twin has it
    twin_bounds = {
        (g.kind, str(g.lhs), str(g.rhs)) for g in shapeinfer.infer(str(TWINS / f"{name}.dynamic.onnx")).guards()
    }
    assert {(g.kind, str(g.lhs), str(g.rhs)) for g in result.guards()} <= twin_bounds
    types = {i.name: i.type.tensor_type.elem_type for i in made.graph.input}
    got = _session(made)
    ref_static = _session(static)
    twin = _session(str(TWINS / f"{name}.dynamic.onnx"))
    feeds = _feeds(entry["inputs"], {}, dims, types)
    np.testing.assert_allclose(got.run(None, feeds)[0], ref_static.run(None, feeds)[0], rtol=1e-5, atol=1e-5)
    for sizes in SIZES[name]:
        feeds = _feeds(entry["inputs"], sizes, dims, types)
        a = got.run(None, feeds)[0]
        assert list(a.shape[: len(sizes)]) == [sizes[s] for s in ("batch", "seq") if s in sizes]
        np.testing.assert_allclose(a, twin.run(None, feeds)[0], rtol=1e-4, atol=1e-5)


def _rotary(table: np.ndarray) -> onnx.ModelProto:
    """x[1, n, 4] times Cos of a folded table of n rows (LLaMA's rotary angles, or not)."""
    n = table.shape[0]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n, 4])
    nodes = [
        helper.make_node("Cos", ["angles"], ["c"], name="rotary_cos"),
        helper.make_node("Mul", ["x", "c"], ["y"], name="rotate"),
    ]
    return _model(nodes, [x], [y], [numpy_helper.from_array(table, "angles")])


FREQS = np.array([1.0, 0.1, 0.01, 0.001], np.float32)


def test_rotary_angles_are_regenerated():
    """A table that is, bit for bit, positions times a frequency vector is a Range of the size
    times that vector: at other lengths it equals the formula, where the twin would compute it."""
    angles = np.arange(12, dtype=np.float32)[:, None] * FREQS[None, :]
    made = shapeinfer.make_dynamic(_rotary(angles), dims={"x": {1: "seq"}})
    s = _session(made)
    for n in (12, 1, 5, 40):
        x = np.random.default_rng(n).standard_normal((1, n, 4)).astype(np.float32)
        want = x * np.cos(np.arange(n, dtype=np.float32)[:, None] * FREQS[None, :])
        np.testing.assert_allclose(s.run(None, {"x": x})[0], want, rtol=1e-6, atol=1e-6)


def test_a_table_of_values_is_refused():
    """The cos values themselves (not the angles), or angles one ulp off: refused and named."""
    angles = np.arange(12, dtype=np.float32)[:, None] * FREQS[None, :]
    off = angles.copy()
    off[7, 2] = np.nextafter(off[7, 2], np.float32(1))
    for table in (np.cos(angles), off):
        with pytest.raises(MakeDynamicError) as e:
            shapeinfer.make_dynamic(_rotary(table), dims={"x": {1: "seq"}})
        assert [r.node for r in e.value.refusals] == ["rotary_cos"]


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _attention_heads() -> onnx.ModelProto:
    """x[1, 16, 64] -> Reshape [1, 16, -1, 16] -> Transpose -> Reshape [1, 16, 64]: at sequence
    16 with head size 16, one 16 is the sequence and the other the head size."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 64])
    inits = [
        numpy_helper.from_array(np.array([1, 16, -1, 16], np.int64), "heads"),
        numpy_helper.from_array(np.array([1, 16, 64], np.int64), "merged"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "heads"], ["h"], name="split_heads"),
        helper.make_node("Transpose", ["h"], ["t"], perm=[0, 2, 1, 3], name="to_heads"),
        helper.make_node("Transpose", ["t"], ["u"], perm=[0, 2, 1, 3], name="from_heads"),
        helper.make_node("Reshape", ["u", "merged"], ["y"], name="merge_heads"),
    ]
    return _model(nodes, [x], [y], inits)


def test_head_size_equal_to_the_sequence_is_kept_by_provenance():
    made = shapeinfer.make_dynamic(_attention_heads(), dims={"x": {0: "batch", 1: "seq"}})
    result = shapeinfer.infer(made)
    assert [str(d) for d in result.dims("h")] == ["batch", "seq", "4", "16"]
    assert [str(d) for d in result.dims("y")] == ["batch", "seq", "64"]
    assert not result.guards()
    s = _session(made)
    for b, n in ((1, 16), (2, 5), (3, 7)):
        x = np.random.default_rng(n).standard_normal((b, n, 64)).astype(np.float32)
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], x)


def _position_table() -> onnx.ModelProto:
    """x[1, 16, 8] plus a learned table of exactly 16 rows: it cannot follow the sequence."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8])
    table = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32), "pos_table")
    return _model([helper.make_node("Add", ["x", "pos_table"], ["y"], name="add_positions")], [x], [y], [table])


def _folded_mask() -> onnx.ModelProto:
    """x[1, 16] plus a float mask folded at sequence 16 (no arange): it cannot be regenerated."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    mask = numpy_helper.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16), "mask")
    nodes = [
        helper.make_node("Neg", ["mask"], ["m"], name="negate_mask"),
        helper.make_node("Add", ["x", "m"], ["y"], name="apply_mask"),
    ]
    return _model(nodes, [x], [y], [mask])


@pytest.mark.parametrize(
    ("make", "spec", "node", "why"),
    [
        (_position_table, "x:1=seq", "add_positions", "a weight 'pos_table' of shape [16, 8]"),
        (_folded_mask, "x:1=seq", "negate_mask", "cannot be regenerated"),
    ],
)
def test_refusal_exits_1_names_the_node_and_writes_nothing(tmp_path, make, spec, node, why):
    src = tmp_path / "m.onnx"
    onnx.save(make(), src)
    out = tmp_path / "out.onnx"
    r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(out), "--dim", spec])
    assert r.exit_code == 1, r.output
    assert node in r.output and why in r.output
    assert not out.exists()
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(make(), dims={"x": {1: "seq"}})
    assert [x.node for x in e.value.refusals] == [node]


def test_arange_positions_are_regenerated():
    """Position ids folded as arange(16) are a Range of the sequence (the table has 32 rows)."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 4])
    table = np.random.default_rng(1).standard_normal((32, 4)).astype(np.float32)
    words = np.random.default_rng(2).standard_normal((10, 4)).astype(np.float32)
    inits = [
        numpy_helper.from_array(table, "pos"),
        numpy_helper.from_array(words, "words"),
        numpy_helper.from_array(np.arange(16, dtype=np.int64).reshape(1, 16), "positions"),
    ]
    nodes = [
        helper.make_node("Gather", ["words", "ids"], ["w"], name="embed"),
        helper.make_node("Gather", ["pos", "positions"], ["p"], name="embed_positions"),
        helper.make_node("Add", ["w", "p"], ["y"], name="add"),
    ]
    made = shapeinfer.make_dynamic(_model(nodes, [ids], [y], inits), dims={"ids": {1: "seq"}})
    s = _session(made)
    for n in (16, 3, 9):
        x = np.random.default_rng(n).integers(0, 10, (1, n))
        np.testing.assert_allclose(s.run(None, {"ids": x})[0], words[x] + table[np.arange(n)][None], rtol=1e-6)


def test_bad_dim_is_a_usage_error(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_folded_mask(), src)
    for spec in ("x:5=seq", "nope:1=seq", "x1seq", "x:one=seq"):
        r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(tmp_path / "o.onnx"), "--dim", spec])
        assert r.exit_code == 2, (spec, r.output)
        assert "Traceback" not in r.output


def _merge_split(batch: int, seq: int) -> onnx.ModelProto:
    """x[batch, seq, 4] merged to [batch*seq, 4] and split back, as GPT-2's Conv1D does."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, 4])
    inits = [
        numpy_helper.from_array(np.array([batch * seq, 4], np.int64), "flat"),
        numpy_helper.from_array(np.array([batch, seq, 4], np.int64), "back"),
        numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "flat"], ["f"], name="merge"),
        helper.make_node("MatMul", ["f", "w"], ["g"], name="project"),
        helper.make_node("Reshape", ["g", "back"], ["y"], name="split"),
    ]
    return _model(nodes, [x], [y], inits)


def test_merged_dims_are_split_back_by_their_old_sizes():
    made = shapeinfer.make_dynamic(_merge_split(2, 8), dims={"x": {0: "batch", 1: "seq"}})
    s = _session(made)
    w = np.arange(16, dtype=np.float32).reshape(4, 4)
    for b, n in ((1, 1), (3, 5), (8, 2)):
        x = np.random.default_rng(b + n).standard_normal((b, n, 4)).astype(np.float32)
        np.testing.assert_allclose(s.run(None, {"x": x})[0], x @ w, rtol=1e-5)


def test_merged_dims_of_one_old_size_are_ambiguous():
    """At batch 4 and sequence 4 the split [4, 4] could be either way round: refused."""
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(_merge_split(4, 4), dims={"x": {0: "batch", 1: "seq"}})
    assert [r.node for r in e.value.refusals] == ["split"]
    assert "cannot tell which" in e.value.refusals[0].why


def test_rows_gathered_at_constant_indices_are_refused():
    """Gather of batch rows at indices fixed at export ([1, 0] at batch 2): refused, where the
    same gather at indices computed from the shapes is made dynamic (BERT's and GPT-2's mask)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])
    rows = numpy_helper.from_array(np.array([1, 0], np.int64), "rows")
    m = _model([helper.make_node("Gather", ["x", "rows"], ["y"], name="swap_rows", axis=0)], [x], [y], [rows])
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(m, dims={"x": {0: "batch"}})
    assert {r.node for r in e.value.refusals} == {"swap_rows"}
    whys = [r.why for r in e.value.refusals]  # (and index 1 needs 2 <= batch, the old size)
    assert "reads an axis that follows the size at indices made from constants (fixed at export)" in whys


def test_cli_writes_the_model_and_its_contract_is_the_twins(tmp_path):
    """``make-dynamic -o`` on GPT-2's static export exits 0, and ``diff`` finds the written
    model's contract the same as the dynamic twin's (input and output dims, guards, ranges)."""
    out = tmp_path / "gpt2.dynamic.onnx"
    specs = [f"{i}:{a}={s}" for i, axes in TABLE["gpt2"]["dims"].items() for a, s in axes.items()]
    args = ["make-dynamic", str(TWINS / "gpt2.static.onnx"), "-o", str(out)]
    r = CliRunner().invoke(main, args + [x for spec in specs for x in ("--dim", spec)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["diff", str(TWINS / "gpt2.dynamic.onnx"), str(out)])
    assert r.exit_code == 0, r.output


def test_an_axis_a_weight_fixes_is_refused(tmp_path):
    """The CNN's channels made a symbol: the first Conv's weight takes 3 (inference guards the
    input's channels to it), so nothing is written."""
    out = tmp_path / "out.onnx"
    args = ["make-dynamic", str(TWINS / "cnn.static.onnx"), "-o", str(out), "--dim", "images:1=ch"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert "/conv1/Conv" in r.output and not out.exists()


def test_a_batch_of_one_folds_the_mask_offsets():
    """BERT exported at batch 1: the mask is read as ``mask.flatten()[b * seq + s]`` with ``b``
    folded to a constant 0, which nothing tells from the batch; made dynamic it would read the
    first row's mask for every row. Refused, naming the Gather."""
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(
            str(TWINS / "bert_b1.static.onnx"),
            dims={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask")},
        )
    assert [(r.node, "part of an axis" in r.why) for r in e.value.refusals] == [("/model/Gather_1", True)]


def test_indices_past_the_axis_at_other_sizes_are_refused():
    """GPT-2 with only the ids' sequence made a symbol: the mask (still 8 long) is read at
    ``b * 8 + s`` for ``s < seq``, past its 16 elements once seq > 8. Refused."""
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(str(TWINS / "gpt2.static.onnx"), dims={"input_ids": {1: "seq"}})
    assert [(r.node, "not proved within" in r.why) for r in e.value.refusals] == [("/model/transformer/Gather_1", True)]


def _buffer_gather(batch: int) -> onnx.ModelProto:
    """ids[batch, 8] read through a constant [batch, 64] table with GatherElements, the table
    expanded at export to the batch (RoBERTa's token-type buffer)."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 8])
    table = numpy_helper.from_array(np.arange(batch * 64, dtype=np.float32).reshape(batch, 64), "table")
    nodes = [helper.make_node("GatherElements", ["table", "ids"], ["y"], name="read_buffer", axis=1)]
    return _model(nodes, [ids], [y], [table])


def _fixed_reshape(batch: int) -> onnx.ModelProto:
    """x[batch, 16] reshaped to a constant [batch, 4, 4] computed by a Concat (not a constant
    target make-dynamic rewrites): it runs at the old batch only (Swin's window reshapes)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4, 4])
    inits = [
        numpy_helper.from_array(np.array([batch], np.int64), "lead"),
        numpy_helper.from_array(np.array([4, 4], np.int64), "rest"),
    ]
    nodes = [
        helper.make_node("Concat", ["lead", "rest"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="windows"),
    ]
    return _model(nodes, [x], [y], inits)


@pytest.mark.parametrize(
    ("make", "node", "why"),
    [
        (_buffer_gather, "read_buffer", "batch <= 2, the old size"),
        (_fixed_reshape, "windows", "== 32"),
    ],
)
def test_a_size_the_model_runs_at_alone_is_refused(make, node, why):
    """Made dynamic, these would fail in onnxruntime at any other batch: refused."""
    m = make(2)
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(m, dims={m.graph.input[0].name: {0: "batch"}})
    assert [r.node for r in e.value.refusals] == [node]
    assert why in e.value.refusals[0].why


def test_a_weight_broadcast_over_a_batch_of_one_follows_the_batch():
    """ViT exported at batch 1: ``cls_token.expand(batch, -1, -1)`` wrote the Expand shape
    [1, 1, 8]; the weight's own 1 broadcasts, so the entry alone makes the batch."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 8])
    cls = np.random.default_rng(0).standard_normal((1, 1, 8)).astype(np.float32)
    inits = [numpy_helper.from_array(cls, "cls_token"), numpy_helper.from_array(np.array([1, 1, 8], np.int64), "e")]
    nodes = [
        helper.make_node("Expand", ["cls_token", "e"], ["c"], name="expand_cls"),
        helper.make_node("Concat", ["c", "x"], ["y"], name="prepend", axis=1),
    ]
    made = shapeinfer.make_dynamic(_model(nodes, [x], [y], inits), dims={"x": {0: "batch"}})
    s = _session(made)
    for b in (1, 3):
        xs = np.random.default_rng(b).standard_normal((b, 4, 8)).astype(np.float32)
        want = np.concatenate([np.broadcast_to(cls, (b, 1, 8)), xs], axis=1)
        np.testing.assert_array_equal(s.run(None, {"x": xs})[0], want)


def test_a_reshape_to_a_dim_with_no_static_value_is_refused_not_a_crash(tmp_path):
    """llama.static with a weight also listed as a graph input of shape ``[32, ?]`` (a caller may
    feed it; fuzz_cli seed 160, case 2388): a Reshape's output then has a dim with no value at
    the static sizes, which the Reshape trace compared with ints (TypeError). The trace now
    stops there and the command names the node that cannot follow the size."""
    m = onnx.load(str(TWINS / "llama.static.onnx"))
    vi = helper.make_tensor_value_info("onnx::MatMul_551", TensorProto.FLOAT, [32, None])
    m.graph.input.append(vi)
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(tmp_path / "out.onnx"), "--dim", "input_ids:0=b"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 1 and "nothing written" in r.output and "cannot trace" in r.output
    assert not (tmp_path / "out.onnx").exists()


def test_declared_types_follow_the_new_symbol_in_every_graph():
    """A static export whose tensors are declared (value_info, as onnx's shape inference or
    onnxsim leave them; a branch's outputs) kept the old size there: the written model claimed
    [1, 4] at every batch (G006 when read again; onnxruntime warned of the output shape). Each
    such dim now follows the symbol, in the main graph and in the branches."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])

    def branch(op: str) -> onnx.GraphProto:
        g = helper.make_graph(
            [helper.make_node(op, ["r"], [f"{op}_y"]), helper.make_node("Identity", [f"{op}_y"], [f"{op}_out"])],
            op,
            [],
            [helper.make_tensor_value_info(f"{op}_out", TensorProto.FLOAT, [1, 4])],
        )
        g.value_info.append(helper.make_tensor_value_info(f"{op}_y", TensorProto.FLOAT, [1, 4]))
        return g

    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("If", ["flag"], ["y"], then_branch=branch("Neg"), else_branch=branch("Abs")),
    ]
    m = _model(nodes, [x, flag], [y])
    m.graph.value_info.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 4]))
    made = shapeinfer.make_dynamic(m, dims={"x": {0: "batch"}})

    def dims(vi) -> list:
        return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]

    branches = [a.g for a in made.graph.node[1].attribute]
    declared = [made.graph.value_info[0], *(v for g in branches for v in [*g.value_info, *g.output])]
    assert [dims(v) for v in declared] == [["batch", 4]] * 5
    assert not [d for d in shapeinfer.infer(made).diagnostics if d.code == "G006"]
    s = _session(made)
    for cond in (True, False):
        out = s.run(None, {"x": -np.ones((3, 4), np.float32), "flag": np.array(cond)})[0]
        assert out.shape == (3, 4)


def test_cli_writes_as_infer_o_writes(tmp_path):
    """make-dynamic's write is infer's -o: a data file of another model in the output's folder
    is refused with exit 1 (it was exit 2, with hints at --external-data and --in-place, flags
    it lacked), --external-data gathers the data under a name of its own, a data file holding
    the same bytes is read with a note, -o naming the input needs --in-place, and `-o -` on a
    terminal is refused (the review)."""
    from support.common import ROOT, run_cli

    src_dir = tmp_path / "src"
    src_dir.mkdir()
    m = onnx.load(ROOT / "tests" / "models" / "static" / "cnn.static.onnx")
    onnx.save(m, src_dir / "cnn.onnx", save_as_external_data=True, location="cnn.data", size_threshold=0)
    src = str(src_dir / "cnn.onnx")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "cnn.data").write_bytes(b"another model's weights")
    dim = ["--dim", "images:0=batch"]

    r = run_cli("make-dynamic", src, "-o", str(out_dir / "m.onnx"), *dim)
    assert r.returncode == 1 and not (out_dir / "m.onnx").exists()
    assert "would replace" in r.stderr and "--external-data NAME" in r.stderr
    assert (out_dir / "cnn.data").read_bytes() == b"another model's weights"

    r = run_cli("make-dynamic", src, "-o", str(out_dir / "m.onnx"), "--external-data", "m.data", *dim)
    assert r.returncode == 0, r.stderr
    assert (out_dir / "cnn.data").read_bytes() == b"another model's weights"
    s = _session(str(out_dir / "m.onnx"))
    assert s.run(None, {"images": np.zeros((3, 3, 64, 64), np.float32)})[0].shape[0] == 3

    again = tmp_path / "again"
    again.mkdir()
    for name in ("a.onnx", "b.onnx"):
        r = run_cli("make-dynamic", src, "-o", str(again / name), *dim)
        assert r.returncode == 0, r.stderr
    assert "already holds this external data, byte for byte" in r.stderr

    r = run_cli("make-dynamic", src, "-o", src, *dim)
    assert r.returncode == 2 and "--in-place" in r.stderr
    r = run_cli("make-dynamic", src, "-o", src, "--in-place", *dim)
    assert r.returncode == 0 and shapeinfer.infer(src).dims("images")[0] == D.sym("batch")


def test_requests_that_cannot_be_right_say_what_to_give():
    """dims={"images": {}} returned the model unchanged (dims={} said "no --dim given", the CLI's
    words, in the API); one symbol for two sizes said "stands for 16 and 2: one size a symbol"."""
    cnn = str(Path(__file__).parents[1] / "models" / "static" / "cnn.static.onnx")
    for dims in ({"images": {}}, {}):
        with pytest.raises(ValueError, match=r"^no axis to make dynamic: name at least one"):
            shapeinfer.make_dynamic(cnn, dims=dims)
    bert = str(Path(__file__).parents[1] / "models" / "static" / "bert.static.onnx")
    with pytest.raises(ValueError, match=r"'seq' names axes of sizes 16 and 2: one symbol is one size"):
        shapeinfer.make_dynamic(bert, dims={"input_ids": {1: "seq"}, "attention_mask": {0: "seq"}})


def test_a_loop_bodys_outputs_keep_their_types():
    """onnxruntime shapes the scan outputs of a Loop that runs no iteration from the body's
    declared output types: a body output [2, 3] made [2, w] gave [0, 2, 0] where the input gave
    [0, 2, 3] (fuzz seed 181, case 1858: a TF while loop). The body's outputs keep their types;
    the written model gives the input's outputs at 0 and 2 iterations."""
    i64 = TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Relu", ["x"], ["row"])],
        "body",
        [
            helper.make_tensor_value_info("i", i64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("row", TensorProto.FLOAT, [2, 3]),
        ],
    )
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    n = helper.make_tensor_value_info("n", i64, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = _model([helper.make_node("Loop", ["n", ""], ["y"], body=body)], [x, n], [y])
    made = shapeinfer.make_dynamic(m, dims={"x": {1: "w"}})
    assert [d.dim_value for d in made.graph.node[0].attribute[0].g.output[1].type.tensor_type.shape.dim] == [2, 3]
    before, after = _session(m), _session(made)
    for trips in (0, 2):
        feeds = {"x": np.ones((2, 3), np.float32), "n": np.array(trips, np.int64)}
        np.testing.assert_array_equal(before.run(None, feeds)[0], after.run(None, feeds)[0])
        assert after.run(None, feeds)[0].shape == (trips, 2, 3)


def _static(nodes, x_dims, y_dims, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)],
        list(inits),
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_an_output_dim_inference_cannot_prove_is_written_open_not_as_the_old_size():
    """``y = x[:, :, 1:2] + x``: y is n high at every n but 1 (0 there, the slice is empty);
    inference leaves it open (the slice may be empty), and the export's ``13`` must not stay
    declared: onnxruntime gives 5 at n = 5."""
    starts = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("s", [1]), ("e", [2]), ("a", [2]))]
    m = _static(
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["t"]), helper.make_node("Add", ["t", "x"], ["y"])],
        [1, 8, 13, 4],
        [1, 8, 13, 4],
        starts,
    )
    out = shapeinfer.make_dynamic(m, dims={"x": {2: "n"}})
    declared = [d.dim_value or d.dim_param or None for d in out.graph.output[0].type.tensor_type.shape.dim]
    assert declared == [1, 8, None, 4]
    sess = _session(out)
    for n in (1, 2, 5, 13):
        assert sess.run(None, {"x": np.ones((1, 8, n, 4), np.float32)})[0].shape == (1, 8, 0 if n == 1 else n, 4)


def test_a_reshape_that_moves_the_new_size_into_the_batch_is_refused():
    """tf2onnx writes the NHWC-to-NCHW Transpose of a 1x1 map as ``Reshape(x, [-1, C, 1, 1])``:
    made dynamic, the map's positions go into the batch axis (one 16x16 image gives 4 rows)."""
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        helper.make_node("Transpose", ["x"], ["xc"], perm=[0, 3, 1, 2]),
        helper.make_node("MaxPool", ["xc"], ["p1"], **pool),
        helper.make_node("MaxPool", ["p1"], ["p2"], **pool),
        helper.make_node("MaxPool", ["p2"], ["p3"], **pool),
        helper.make_node("Transpose", ["p3"], ["pl"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["pl", "shp"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["y"]),
    ]
    m = _static(nodes, ["batch", 8, 8, 3], ["batch", 3], [numpy_helper.from_array(np.array([-1, 3, 1, 1]), "shp")])
    with pytest.raises(MakeDynamicError) as e:
        shapeinfer.make_dynamic(m, dims={"x": {1: "height", 2: "width"}})
    assert any(r.node == "y" and "axis 0 was batch" in r.why for r in e.value.refusals), e.value.refusals


@pytest.mark.parametrize("pads, refused", [([0, 0, 1, 1], True), ([1, 1, 1, 1], False)], ids=["same", "one"])
def test_pads_that_differ_at_the_two_ends_of_a_new_axis_are_refused(pads, refused):
    """tf2onnx writes a Keras ``padding='same'`` stride-2 Conv of a static export as pads
    computed for its size ((0, 1) at an even one); kept, they pad an odd size otherwise than
    'same' (9x9 gives 4x4, 'same' 5x5). Pads that are the same at both ends (a plain padding
    of 1) pad every size alike and are kept."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=pads)
    m = _static([conv], [1, 3, 8, 8], [1, 4, 4, 4], [w])
    if refused:
        with pytest.raises(MakeDynamicError) as e:
            shapeinfer.make_dynamic(m, dims={"x": {2: "height", 3: "width"}})
        assert all("pads (0, 1)" in r.why for r in e.value.refusals) and len(e.value.refusals) == 2
        return
    out = shapeinfer.make_dynamic(m, dims={"x": {2: "height", 3: "width"}})
    assert _session(out).run(None, {"x": np.ones((1, 3, 9, 7), np.float32)})[0].shape == (1, 4, 5, 4)


def test_an_if_branch_output_of_two_sizes_is_written_open_and_runs_at_every_size():
    """``t = If(n == 1){x[:, :, 0:1]} else {x}`` inside the taken branch of an outer If whose
    output types say ``[1, 4, 2]``: made dynamic, t is 1 or n, which inference keeps open; the
    old ``2`` left on the branch's output made onnxruntime (optimizations off) refuse every n
    but 2, where the static input runs (the option sweep's MD2)."""
    f = TensorProto.FLOAT

    def vi(n, s=(1, 4, 2)):
        return helper.make_tensor_value_info(n, f, list(s))

    inner = helper.make_node(
        "If",
        ["c"],
        ["t"],
        then_branch=helper.make_graph(
            [helper.make_node("Slice", ["x", "s0", "s1", "i2"], ["a"])], "it", [], [vi("a", (1, 4, 1))]
        ),
        else_branch=helper.make_graph([helper.make_node("Identity", ["x"], ["b"])], "ie", [], [vi("b")]),
    )
    then_nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i2"], ["d"], axis=0),
        helper.make_node("Equal", ["d", "one"], ["eq"]),
        helper.make_node("Squeeze", ["eq", "z"], ["c"]),
        inner,
    ]
    outer = helper.make_node(
        "If",
        ["c1"],
        ["y"],
        then_branch=helper.make_graph(then_nodes, "ot", [], [vi("t")]),
        else_branch=helper.make_graph([helper.make_node("Identity", ["x"], ["ye"])], "oe", [], [vi("ye")]),
    )
    ints = {"i2": [2], "one": [1], "z": [0], "s0": [0], "s1": [1]}
    inits = [numpy_helper.from_array(np.array(True), "c1")]
    inits += [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    g = helper.make_graph([outer], "g", [vi("x")], [vi("y")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    out = shapeinfer.make_dynamic(m, dims={"x": {2: "n"}})
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(out.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    for n in (1, 2, 3, 5):
        x = np.random.default_rng(n).standard_normal((1, 4, n)).astype(np.float32)
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x[:, :, :1] if n == 1 else x)


def test_a_resize_to_a_size_exported_as_a_scale_is_refused_and_a_doubling_is_kept():
    """Keras's ``Resizing(20, 20)`` exported at 48x40 is a Resize by scales ``[1, 1, 20/48,
    0.5]``: made dynamic it would resize a 64-high map to 26, not 20, and inference cannot tell
    the size. A Resize by 2 follows the size (``2*height``) and is kept."""
    for scales, refused in (([1, 1, 20 / 48, 0.5], True), ([1, 1, 2, 2], False)):
        s = numpy_helper.from_array(np.array(scales, np.float32), "s")
        m = _static([helper.make_node("Resize", ["x", "", "s"], ["y"])], [1, 3, 48, 40], None, [s])
        if refused:
            with pytest.raises(MakeDynamicError) as e:
                shapeinfer.make_dynamic(m, dims={"x": {2: "height", 3: "width"}})
            assert [r.why[:22] for r in e.value.refusals] == ["resizes axis 2 (height"], e.value.refusals
        else:
            out = shapeinfer.make_dynamic(m, dims={"x": {2: "height", 3: "width"}})
            assert _session(out).run(None, {"x": np.ones((1, 3, 5, 7), np.float32)})[0].shape == (1, 3, 10, 14)


def test_a_gather_at_an_fmod_of_the_size_is_refused_in_one_line(tmp_path):
    """``i = Mod(Shape(x)[2] - 3, 3, fmod=1)`` (C's remainder: its sign follows the size)
    indexes the axis made dynamic: the indices' values are not told, so the Gather is refused.
    The proof used to raise on the unknown value (a raw traceback, exit 1)."""
    ints = {"i2": [2], "k3": [3], "z": [0]}
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i2"], ["d"], axis=0),
        helper.make_node("Sub", ["d", "k3"], ["s"]),
        helper.make_node("Mod", ["s", "k3"], ["m"], fmod=1),
        helper.make_node("Squeeze", ["m", "z"], ["i"]),
        helper.make_node("Gather", ["x", "i"], ["y"], axis=2),
    ]
    m = _static(
        nodes, [1, 64, 7], [1, 64], [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    )
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    r = CliRunner().invoke(main, ["make-dynamic", str(src), "-o", str(tmp_path / "d.onnx"), "--dim", "x:2=n"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "Gather #5: indices computed from the shapes whose values are not told" in r.output
    assert not (tmp_path / "d.onnx").exists()
