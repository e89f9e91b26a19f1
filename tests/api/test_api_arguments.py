"""Arguments the Python API cannot use raise a clear exception of the documented kind, not a
traceback from deep inside nor a silent fallback (found by the API review)."""

from __future__ import annotations

import onnx
import pytest
from support.common import ROOT, model_path

import shapeinfer

BERT = str(model_path("bert_ts"))


def test_passes_given_as_a_string_is_a_type_error():
    """A str is a Sequence[str]: ``passes="fold-shapes"`` was read as the passes f, o, l, ..."""
    with pytest.raises(TypeError, match=r"passes is a list of pass names \(\['fold-shapes'\]\)"):
        shapeinfer.optimize(BERT, passes="fold-shapes")
    from shapeinfer.document import check_passes

    with pytest.raises(TypeError):
        check_passes("dce")


@pytest.mark.parametrize("timeout", [0, -1, -0.5])
def test_a_timeout_that_is_no_time_is_a_value_error(timeout):
    """It raised InferenceTimeout "inference took longer than -1s"."""
    with pytest.raises(ValueError, match="timeout"):
        shapeinfer.infer(BERT, timeout=timeout)


def test_make_dynamic_dims_must_map_axes_to_symbols():
    cnn = str(ROOT / "tests" / "models" / "static" / "cnn.static.onnx")
    with pytest.raises(ValueError, match=r"dims\['images'\] maps axes to symbol names"):
        shapeinfer.make_dynamic(cnn, dims={"images": [0]})


def test_writing_onto_the_input_names_the_keyword(tmp_path):
    with pytest.raises(Exception, match=r"in_place=True"):
        shapeinfer.open(BERT).write(BERT)


def test_networkx_arguments():
    pytest.importorskip("networkx")
    from shapeinfer.networkx import dim_inputs, to_graph

    with pytest.raises(TypeError, match="Result"):
        to_graph(onnx.load(BERT))
    g = to_graph(shapeinfer.infer(BERT))
    with pytest.raises(IndexError, match="has rank 3: no axis 7"):
        dim_inputs(g, "out", 7)
    assert dim_inputs(g, "out", -1) == []  # 64: depends on no input


def test_onnx_shape_inference_drop_in_refuses_an_unknown_policy():
    ir = pytest.importorskip("onnx_ir")
    from shapeinfer.compat.onnx_shape_inference import infer_symbolic_shapes

    with pytest.raises(ValueError, match="policy must be one of skip, override, refine, strict"):
        infer_symbolic_shapes(ir.load(BERT), policy="nope")
