"""`shapeinfer profile`: input ranges under the guards, trtexec shapes, memory bounds.

The bounds are checked against onnxruntime: at the max binding of a bounded profile every
tensor's actual size is at most its reported bound, and the peak bound is at least the largest
sum of live actual sizes under the same schedule.
"""

from __future__ import annotations

import json

import onnx
import pytest
from click.testing import CliRunner
from support.builders import small_guarded_model
from support.common import model_path

from shapeinfer.analysis.deployment import _peak, profile
from shapeinfer.analysis.verify import make_feeds
from shapeinfer.api import infer
from shapeinfer.cli.main import main
from testkit import ort_oracle


def test_bert_profile_shapes_and_no_invented_max():
    p = profile(infer(model_path("bert_ts")))
    assert p.ranges == {"batch": (1, None), "seq": (1, 512)}
    t = p.trtexec()
    assert t["minShapes"] == "input_ids:1x1,attention_mask:1x1"
    assert t["maxShapes"] is None
    assert any("batch has no upper bound" in n for n in p.notes)
    assert p.peak_bytes is None


def test_divisibility_moves_min_and_max_inwards():
    p = profile(infer(small_guarded_model(), dim_ranges={"N": (1, 30), "P": (1, 4), "Q": (1, 4)}))
    x = next(i for i in p.inputs if i["name"] == "x")
    assert x["min"] == [4] and x["max"] == [28]  # N % 4 == 0


def test_bounds_hold_in_onnxruntime():
    m = onnx.load(model_path("bert_ts"))
    r = infer(m, dim_ranges={"batch": (1, 2), "seq": (1, 24)})
    p = profile(r)
    assert p.trtexec()["maxShapes"] == "input_ids:2x24,attention_mask:2x24"
    bounds = {t["name"]: t["bytes"] for t in p.tensors}
    outs = ort_oracle.run_all(m, make_feeds(m.graph, {"batch": 2, "seq": 24}))
    actual = {n: a.nbytes for n, a in outs.items()}
    for name, nbytes in actual.items():
        assert bounds[name] is not None and nbytes <= bounds[name], (name, nbytes, bounds[name])
    init = {t.name for t in m.graph.initializer}
    actual.update({vi.name: 2 * 24 * 8 for vi in m.graph.input})
    real_peak, _ = _peak(m.graph, actual, init)
    assert real_peak <= p.peak_bytes


def test_profile_cli_text_and_json():
    res = CliRunner().invoke(
        main, ["profile", str(model_path("gpt2_ts")), "--dim-range", "batch=1:4", "--opt", "seq=64"]
    )
    assert res.exit_code == 0, res.output
    assert "--maxShapes=input_ids:4x1024,attention_mask:4x1024" in res.output
    assert "--optShapes=input_ids:4x64,attention_mask:4x64" in res.output
    assert "holds when: seq <= 1024" in res.output and "assumes:" in res.output
    res = CliRunner().invoke(main, ["profile", str(model_path("gpt2_ts")), "--json"])
    doc = json.loads(res.output)
    assert doc["ranges"] == {"batch": [1, None], "seq": [1, 1024]}
    assert doc["trtexec"]["maxShapes"] is None and doc["peak_live_bytes"] is None
    res = CliRunner().invoke(main, ["profile", str(model_path("gpt2_ts")), "--opt", "sq=3"])
    assert res.exit_code == 2 and "--opt sq" in res.output


# --- issue 24: --opt inside [min, max], names trtexec can read, onnxruntime and OpenVINO forms ---


def _cli(*args: str):
    return CliRunner().invoke(main, ["profile", *args])


def test_opt_above_max_is_a_usage_error_naming_the_flag():
    """bert_ts needs seq <= 512: --opt seq=1000 prints no profile, exit 2, and says so."""
    res = _cli(str(model_path("bert_ts")), "--opt", "seq=1000")
    assert res.exit_code == 2, res.output
    assert "--opt seq=1000" in res.output and "512" in res.output and "--bind" not in res.output
    assert "--optShapes" not in res.output and "--maxShapes" not in res.output


def test_opt_below_min_of_a_divisibility_guard(tmp_path):
    """x[N] reshaped by 4 needs N % 4 == 0: in --dim-range N=1:30 the min is 4, so --opt N=2 is
    outside [4, 28] and refused; N=8 gives that opt shape."""
    path = tmp_path / "g.onnx"
    onnx.save(small_guarded_model(), str(path))
    ranges = ["--dim-range", "N=1:30", "--dim-range", "P=1:4", "--dim-range", "Q=1:4"]
    res = _cli(str(path), *ranges, "--opt", "N=2")
    assert res.exit_code == 2 and "--opt N=2" in res.output and "[4, 28]" in res.output, res.output
    res = _cli(str(path), *ranges, "--opt", "N=8")
    assert res.exit_code == 0 and "--optShapes=x:8," in res.output, res.output
    p = profile(infer(small_guarded_model(), dim_ranges={"N": (1, 30)}), {"N": 29})
    assert p.bad_opt and p.errors and all(i["opt"] is None for i in p.inputs)


def test_opt_zero_blames_opt_not_bind():
    res = _cli(str(model_path("bert_ts")), "--opt", "seq=0")
    assert res.exit_code == 2 and "--opt seq=0" in res.output and "--bind" not in res.output, res.output


def _named_model(names: list[str]) -> onnx.ModelProto:
    """One Identity per input, each input [batch, 3] float."""
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Identity", [n], [f"out{k}"]) for k, n in enumerate(names)]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 3]) for n in names]
    outs = [helper.make_tensor_value_info(f"out{k}", TensorProto.FLOAT, None) for k in range(len(names))]
    g = helper.make_graph(nodes, "named", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _trtexec_entries(value: str, last_colon: bool) -> dict[str, list[int]]:
    """What trtexec reads from a --minShapes value: TensorRT's sampleOptions.cpp splits at every
    ',', takes the text around a pair of single quotes as the name (three pieces or an error) and
    the rest after one ':' as the dims; without quotes it splits at the last ':' (TensorRT 8.6+)
    or the first (older releases); the dims are split at 'x'."""
    out = {}
    for entry in value.split(","):
        pieces = entry.split("'")
        if len(pieces) != 1:
            assert len(pieces) == 3, entry
            name, dims = pieces[0] + pieces[1], pieces[2][1:]
        elif last_colon:
            name, _, dims = entry.rpartition(":")
        else:
            name, _, dims = entry.partition(":")
        out[name] = [int(d) for d in dims.split("x")]
    return out


def test_trtexec_names_quoted_by_its_rules():
    """``serving_default_input:0`` is wrapped in single quotes, which every trtexec release reads
    as one name; the printed flag survives the shell (shlex) unchanged; a name with a ',' has no
    form (trtexec splits the flag at every ',') and the profile says why."""
    import shlex

    names = ["serving_default_input:0", "plain", "with space"]
    res = _cli(str(_save(_named_model(names))), "--dim-range", "batch=1:8", "--opt", "batch=2")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("--minShapes"))
    (word,) = shlex.split(line)
    value = word.removeprefix("--minShapes=")
    assert value == "'serving_default_input:0':1x3,plain:1x3,with space:1x3"
    for last_colon in (True, False):
        assert _trtexec_entries(value, last_colon) == {n: [1, 3] for n in names}
    opt = next(x for x in res.output.splitlines() if x.startswith("--optShapes"))
    assert _trtexec_entries(shlex.split(opt)[0].removeprefix("--optShapes="), False)["serving_default_input:0"] == [
        2,
        3,
    ]
    res = _cli(str(_save(_named_model(["a,b", "c"]))), "--dim-range", "batch=1:8")
    assert res.exit_code == 0 and "cannot name the input 'a,b'" in res.output, res.output
    assert "--minShapes=" not in res.output


def _save(model: onnx.ModelProto) -> str:
    import tempfile

    d = tempfile.mkdtemp()
    path = f"{d}/m.onnx"
    onnx.save(model, path)
    return path


def test_onnxruntime_free_dimension_overrides_fix_the_profile_shapes():
    """Each binding's overrides, given to onnxruntime, make its inputs exactly that binding's
    shapes, and the model runs there."""
    import onnxruntime

    path = str(model_path("bert_ts"))
    p = profile(infer(path, dim_ranges={"batch": (1, 4)}), {"seq": 64})
    ort = p.onnxruntime()
    assert ort["opt"] == {"batch": 4, "seq": 64} and ort["min"] == {"batch": 1, "seq": 1}
    for key in ("min", "opt"):
        so = onnxruntime.SessionOptions()
        for d, n in ort[key].items():
            so.add_free_dimension_override_by_name(d, n)
        sess = onnxruntime.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        want = {i["name"]: i[key] for i in p.inputs}
        assert {i.name: i.shape for i in sess.get_inputs()} == want
        m = onnx.load(path)
        sess.run(None, make_feeds(m.graph, dict(zip(("batch", "seq"), want["input_ids"]))))
    res = _cli(path, "--dim-range", "batch=1:4", "--opt", "seq=64")
    assert "  opt: -f batch:4 -f seq:64" in res.output, res.output
    assert "add_free_dimension_override_by_name('seq', 64)" in res.output
    assert profile(infer(path)).onnxruntime()["max"] is None  # batch has no max


def test_openvino_input_gives_the_ranges():
    """OpenVINO's own ovc parser and converter read the printed --input: the converted model's
    inputs have exactly the profile's [min, max] per dim (no max: open above)."""
    ov = pytest.importorskip("openvino")
    from openvino.tools.ovc.cli_parser import parse_inputs

    path = str(model_path("bert_ts"))
    text = profile(infer(path, dim_ranges={"seq": (1, 128)})).openvino()
    assert text == "input_ids[1..,1..128],attention_mask[1..,1..128]"
    model = ov.convert_model(path, input=parse_inputs(text))
    got = {i.get_any_name(): str(i.get_partial_shape()) for i in model.inputs}
    assert got == {"input_ids": "[1..,1..128]", "attention_mask": "[1..,1..128]"}
    text = profile(infer(_named_model(["x:0", "y[1]"]), dim_ranges={"batch": (2, 6)})).openvino()
    assert text == "[2..6,3],[2..6,3]"  # '[' is ovc syntax: by position
    res = _cli(path, "--dim-range", "seq=1:128")
    assert "--input 'input_ids[1..,1..128],attention_mask[1..,1..128]'" in res.output


def test_long_tensor_names_keep_both_ends_around_an_ellipsis():
    """The text table's name column is 48 wide: a longer name shows its start and end with an
    ellipsis between (issue 37 item 8), never cut silently; --json has it whole."""
    from shapeinfer.cli.commands.profile import _fit

    name = "/model/layers.11/self_attn/rotary_emb/MatMul_output_0"
    fitted = _fit(name, 48)
    assert len(fitted) == 48 and "\u2026" in fitted
    head, tail = fitted.split("\u2026")
    assert name.startswith(head) and name.endswith(tail) and tail.endswith("MatMul_output_0")
    assert _fit("short", 48) == "short"
    r = CliRunner().invoke(main, ["profile", str(model_path("llama_ts")), "--all"])
    long_names = [
        t
        for t in json.loads(CliRunner().invoke(main, ["profile", str(model_path("llama_ts")), "--json"]).stdout)[
            "tensors"
        ]
        if len(t["name"]) > 48
    ]
    assert long_names and all(_fit(t["name"], 48) in r.stdout for t in long_names)


def test_a_binding_the_model_cannot_run_at_gives_no_shapes(tmp_path):
    """x[a] and y[b] concatenated and reshaped to [2, 3] run only where a + b == 6: over a, b in
    [1, 5] the min (1, 1) and the max (5, 5) break it. profile printed their trtexec flags and
    -f overrides ready to paste (onnxruntime fails there), with a note at the end (the review's
    DETR). Each such binding now gives none, saying why; --json's `violated` names the guard."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    jsonschema = pytest.importorskip("jsonschema")
    ort = pytest.importorskip("onnxruntime")
    from support.common import ROOT

    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [helper.make_node("Concat", ["x", "y"], ["c"], axis=0), helper.make_node("Reshape", ["c", "s"], ["z"])],
        "g",
        [vi("x", TensorProto.FLOAT, ["a"]), vi("y", TensorProto.FLOAT, ["b"])],
        [vi("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "s")],
    )
    path = tmp_path / "cat.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    p = profile(infer(str(path), dim_ranges={"a": (1, 5), "b": (1, 5)}))
    assert [g.text for g in p.guards] == ["a + b == 6"]
    assert p.violated == {"min": "a + b == 6", "opt": "a + b == 6", "max": "a + b == 6"}
    assert p.trtexec() == {"minShapes": None, "optShapes": None, "maxShapes": None}
    assert p.onnxruntime() == {"min": None, "opt": None, "max": None}
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):  # noqa: B017 (the oracle: the min binding cannot run)
        sess.run(None, {"x": np.zeros(1, np.float32), "y": np.zeros(1, np.float32)})
    args = ["profile", str(path), "--dim-range", "a=1:5", "--dim-range", "b=1:5"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0
    assert "--minShapes: none (the model cannot run at the min binding: a + b == 6)" in res.output
    assert "  max: none (the model cannot run at the max binding)" in res.output
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    schema = json.loads((ROOT / "shapeinfer" / "schemas" / "profile.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["violated"]["max"] == "a + b == 6" and doc["trtexec"]["maxShapes"] is None
