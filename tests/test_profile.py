"""`shapeinfer profile`: input ranges under the guards, trtexec shapes, memory bounds.

The bounds are checked against onnxruntime: at the max binding of a bounded profile every
tensor's actual size is at most its reported bound, and the peak bound is at least the largest
sum of live actual sizes under the same schedule.
"""

from __future__ import annotations

import json

import onnx
import ort_oracle
from click.testing import CliRunner
from conftest import model_path
from test_guards import small_guarded_model

from shapeinfer.api import infer
from shapeinfer.cli import main
from shapeinfer.profile import _peak, profile
from shapeinfer.verify import make_feeds


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
