"""The pass protocol (issue 25): every pass is a declared object, and what it declares holds.

- ``keeps_values``: after one run of the pass, every tensor a node of the main graph still
  computes under the same name has the same value under onnxruntime as before the run.
- ``idempotent``: a second run on its output changes nothing and writes the same bytes.
- ``settled_under``: after a run that found nothing and said ``settled``, runs of the passes
  named there leave it nothing to do.
- The manager runs fold-if, then reshape-v1-to-v5 once, before the rounds (when the first fold
  leaves no control flow: else fold-if joins the rounds).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator
from support.common import model_path

from shapeinfer.passes import (
    DEFAULT_PASSES,
    PASSES,
    Pass,
    PassContext,
    get_pass,
    optimize_with_report,
    pass_module,
    run_pass,
)
from testkit import ort_oracle

MODELS = ["bert_ts", "gpt2_ts", "llama_dynamo"]
INDEX_PASSES = list(PASSES)  # every pass edits the index


def test_every_registered_pass_declares_itself_and_nothing_else_is_read():
    for name in PASSES:
        p = get_pass(name)
        assert isinstance(p, Pass) and p.name == name
        assert p.run.__module__ == PASSES[name]
        mod = pass_module(name)
        for flag in ("ON_INDEX", "KEEPS_VALUES", "INFERS_FIRST", "IDEMPOTENT", "SETTLED_UNDER"):
            assert not hasattr(mod, flag), f"{name} still has the module flag {flag}"
        assert p.settled_under <= set(PASSES)
    # the passes run before the rounds (fold-if, the Reshape-1 rewrite) come first in the
    # pipeline order
    assert list(DEFAULT_PASSES[:2]) == ["fold-if", "reshape-v1-to-v5"]


def _with_outputs(m: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(m)
    have = {o.name for o in out.graph.output}
    out.graph.output.extend(h.make_empty_tensor_value_info(n) for n in names if n not in have)
    return out


def _node_outputs(m: onnx.ModelProto) -> set[str]:
    return {o for n in m.graph.node for o in n.output if o}


def _values(m: onnx.ModelProto, names: list[str], feeds: dict) -> dict[str, np.ndarray]:
    got = ort_oracle.run_all(_with_outputs(m, names), feeds)
    return {n: got[n] for n in names}


def _first_change(name: str, m: onnx.ModelProto) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """(the model a run of ``name`` changed, its output): ``name`` on ``m``, or after a run of
    the passes before it in the pipeline when it finds nothing on ``m`` itself."""
    ctx = PassContext()
    for before in [None, *INDEX_PASSES]:
        if before is not None and before != name:
            m, _ = run_pass(before, m, ctx)
        out, changes = run_pass(name, m, ctx)
        if any(changes.values()):
            return m, out
    pytest.skip(f"{name} changes nothing on this model")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", [n for n in INDEX_PASSES if get_pass(n).keeps_values])
def test_keeps_values_every_surviving_tensor_keeps_its_value(name, model):
    m, out = _first_change(name, onnx.load(str(model_path(model))))
    kept = sorted(_node_outputs(m) & _node_outputs(out))
    outputs = [o.name for o in m.graph.output]
    assert [o.name for o in out.graph.output] == outputs
    feeds = ort_oracle.feeds(m, {}, unbound=3)
    want = _values(m, kept + outputs, feeds)
    got = _values(out, kept + outputs, feeds)
    for n in kept + outputs:
        assert want[n].dtype == got[n].dtype and want[n].shape == got[n].shape, n
        np.testing.assert_allclose(got[n], want[n], rtol=1e-5, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", [n for n in PASSES if get_pass(n).idempotent])
def test_idempotent_twice_is_once(name, model):
    _, once = _first_change(name, onnx.load(str(model_path(model))))
    twice, changes = run_pass(name, once)
    assert not any(changes.values())
    assert twice.SerializeToString() == once.SerializeToString()


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", [n for n in PASSES if get_pass(n).settled_under])
def test_settled_under_the_named_passes_leave_it_nothing(name, model):
    p = get_pass(name)
    m = onnx.load(str(model_path(model)))
    ctx = PassContext()
    for other in INDEX_PASSES:  # one round, so the named passes below find work
        if other not in p.settled_under:
            m, _ = run_pass(other, m, ctx)
    res = None
    for _ in range(8):  # to the pass's own fixpoint
        out, res = ctx.apply(p, m)
        m = ctx.materialize(out)
        if not res.changed:
            break
    if not res.settled:
        pytest.skip(f"{name} does not say settled on this model")
    moved = False
    for other in sorted(p.settled_under):
        m, changes = run_pass(other, m, ctx)
        moved |= any(changes.values())
    _, changes = run_pass(name, m, ctx)
    assert not any(changes.values())
    assert moved or model != "bert_ts"  # dce has dead nodes to remove on bert_ts: a real check


def test_fold_if_then_the_reshape_rewrite_then_the_rounds(monkeypatch):
    # an If on a constant condition (fold-if has work) in an opset-4 model with a Reshape-1
    # (reshape-v1-to-v5 has work), followed by shape arithmetic the index passes fold
    then = h.make_graph([h.make_node("Identity", ["r"], ["t"])], "then", [], [h.make_empty_tensor_value_info("t")])
    other = h.make_graph([h.make_node("Neg", ["r"], ["e"])], "else", [], [h.make_empty_tensor_value_info("e")])
    nodes = [
        h.make_node("Reshape", ["x"], ["r"], shape=[2, 3]),
        h.make_node("Constant", [], ["c"], value=h.make_tensor("c", T.BOOL, [], [True])),
        h.make_node("If", ["c"], ["y0"], then_branch=then, else_branch=other),
        h.make_node("Shape", ["y0"], ["s"]),
        h.make_node("Reshape", ["y0"], ["y"], shape=[3, 2]),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [6])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, 2]), h.make_tensor_value_info("s", T.INT64, [2])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 4)], ir_version=3)
    order: list[str] = []
    apply = PassContext.apply

    def recording(self, p, model):
        order.append(p.name)
        return apply(self, p, model)

    monkeypatch.setattr(PassContext, "apply", recording)
    out, report = optimize_with_report(m)
    names = order
    # fold-if until it folds nothing, then the Reshape-1 rewrite once, then the rounds
    rewrite = names.index("reshape-v1-to-v5")
    assert set(names[:rewrite]) == {"fold-if"} and "reshape-v1-to-v5" not in names[rewrite + 1 :]
    assert len(names) > rewrite + 1
    done = {p.name: p for p in report.passes}
    assert done["fold-if"].changed and done["reshape-v1-to-v5"].changed
    assert not any(n.op_type == "If" for n in out.graph.node)
    x = np.arange(6, dtype=np.float32)
    y, s = ReferenceEvaluator(out).run(None, {"x": x})
    assert np.array_equal(y, x.reshape(3, 2)) and list(s) == [2, 3]
