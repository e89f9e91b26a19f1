"""``repr(result)`` in a REPL or notebook is one line of counts, not the model and every fact."""

from __future__ import annotations

from support.common import model_path

import shapeinfer


def test_repr_of_a_result_is_one_short_line():
    r = shapeinfer.infer(model_path("bert_ts"))
    text = repr(r)
    assert "\n" not in text and len(text) < 300, text
    n = len(r.facts)
    assert f"{n} tensors" in text
    assert f"{len(r.guards())} guards" in text
    warnings = sum(d.severity == "warning" for d in r.diagnostics)
    assert f"{warnings} warning" in text


def test_repr_counts_tensors_with_fresh_dims():
    """A NonZero's count is a fresh symbol: that tensor is not counted as known."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph(
        [h.make_node("NonZero", ["x"], ["nz"])],
        "nz",
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("nz", T.INT64, None)],
    )
    r = shapeinfer.infer(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert isinstance(r.model, onnx.ModelProto)
    assert "2 tensors, 1 with every dim known, 1 fresh symbols" in repr(r), repr(r)
