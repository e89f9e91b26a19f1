"""optimize's rounds: passes hand each other the index (exports deferred), dce is not rerun on its
own output, and neither changes what is written or the fixpoint."""

from __future__ import annotations

import onnx
import pytest
from support.common import model_path

from shapeinfer.ir import export as ir_export
from shapeinfer.ir.graph import GraphModel
from shapeinfer.passes import PassContext, optimize_with_report
from shapeinfer.passes import context as pass_context


def _counting_exports(monkeypatch) -> list[int]:
    calls = [0]
    real = ir_export.export_model

    def export(gm):
        calls[0] += 1
        return real(gm)

    # every caller: the module's name (read at call time) and the context's own binding
    monkeypatch.setattr(ir_export, "export_model", export)
    monkeypatch.setattr(pass_context, "export_model", export)
    return calls


@pytest.mark.parametrize("name", ["gpt2_ts", "llama_dynamo"])
def test_deferred_exports_write_the_same_model_with_fewer_exports(name, monkeypatch):
    m = onnx.load(str(model_path(name)))
    calls = _counting_exports(monkeypatch)
    deferred, report = optimize_with_report(m)
    deferred_exports = calls[0]
    changing_runs = sum(p.runs for p in report.passes if p.changed)

    def eager(self, gm):  # the export every pass did before the rounds deferred it (Edited)
        from shapeinfer.ir.export import export_model

        out = export_model(gm)
        self._graph = (out, gm)
        return out

    monkeypatch.setattr(PassContext, "export", eager)
    calls[0] = 0
    eager_out, eager_report = optimize_with_report(m)
    assert eager_out.SerializeToString() == deferred.SerializeToString()
    assert eager_report.rounds == report.rounds
    assert changing_runs > report.rounds  # several passes changed the model in a round
    assert deferred_exports <= report.rounds < calls[0]  # at most one export a round


@pytest.mark.parametrize("name", ["bert_ts", "llama_ts"])
def test_dce_is_not_rerun_on_its_own_output_and_the_result_is_a_fixpoint(name):
    out, report = optimize_with_report(str(model_path(name)))
    dce = next(p for p in report.passes if p.name == "dce")
    assert report.rounds >= 2 and dce.changed
    assert dce.runs == report.rounds - 1  # the last round changed nothing before it
    again, report2 = optimize_with_report(out)
    assert not any(p.changed for p in report2.passes)
    assert again.SerializeToString() == out.SerializeToString()


def test_dedupe_reruns_after_dce_removes_a_first_node_that_blocked_a_merge():
    """A dead first Dropout whose mask output has no name blocks merging the two live, equal
    Dropouts into it; once dce removes it, they merge. dedupe found nothing but did not vouch
    for dce's removals (a blocked merge), so it runs again, and a second optimize changes nothing."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [
        h.make_node("Dropout", ["x"], ["a_y", ""], name="dead_first"),
        h.make_node("Dropout", ["x"], ["b_y", "b_mask"], name="b"),
        h.make_node("Dropout", ["x"], ["c_y", "c_mask"], name="c"),
        h.make_node("Add", ["b_y", "c_y"], ["out"]),
    ]
    g = h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 3])], [h.make_tensor_value_info("out", T.FLOAT, None)]
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    out, report = optimize_with_report(m)
    assert [n.op_type for n in out.graph.node] == ["Dropout", "Add"]
    assert report.rounds == 3
    _, report2 = optimize_with_report(out)
    assert not any(p.changed for p in report2.passes)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (want,) = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    (got,) = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(want, got)


def _tracking(monkeypatch) -> list:
    """Weak references to every index built and every inference result made from now on."""
    import weakref

    import shapeinfer.inference.engine as engine
    import shapeinfer.passes.context as pass_context

    refs: list = []
    real_init, real_infer = GraphModel.__init__, engine.infer

    def init(self, *a, **k):
        real_init(self, *a, **k)
        refs.append(weakref.ref(self))

    def infer(*a, **k):
        res = real_infer(*a, **k)
        refs.append(weakref.ref(res))
        return res

    monkeypatch.setattr(GraphModel, "__init__", init)
    monkeypatch.setattr(engine, "infer", infer)
    monkeypatch.setattr(pass_context, "infer", infer)  # (the passes infer through PassContext)
    return refs


def test_keep_alive_holds_every_index_and_inference_and_changes_nothing(monkeypatch):
    """The console script passes keep_alive (its process exits without freeing): the indexes and
    facts of the run stay referenced from it, and the model written is the same."""
    import gc

    m = onnx.load(str(model_path("llama_dynamo")))
    refs = _tracking(monkeypatch)
    plain, _ = optimize_with_report(m)
    gc.collect()
    assert len(refs) >= 3 and all(r() is None for r in refs)  # freed when nothing keeps them
    del refs[:]
    keep: list = []
    try:
        kept, report = optimize_with_report(m, keep_alive=keep)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    gc.collect()
    assert report.rounds >= 2 and len(refs) >= 3
    assert all(r() is not None for r in refs)  # round 1's facts too, though round 2 replaced them
    assert kept.SerializeToString() == plain.SerializeToString()
    del keep[:]
    gc.collect()
    assert all(r() is None for r in refs)
