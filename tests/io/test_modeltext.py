"""modeltext: the fast UTF-8 check agrees with the field walk it lets decode_model_text skip."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.io.modeltext import all_text_is_utf8, decode_model_text


def _model() -> onnx.ModelProto:
    def body(name: str) -> onnx.GraphProto:
        node = h.make_node("Identity", ["a"], ["b"], name=name)
        return h.make_graph([node], "body", [], [h.make_tensor_value_info("b", T.FLOAT, None)])

    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu_n", doc_string="relu_doc"),
        h.make_node("Constant", [], ["a"], value=h.make_tensor("a_val", T.FLOAT, [], [1.0])),
        h.make_node("If", ["c"], ["y"], then_branch=body("inner_n"), else_branch=body("other")),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["sym_d", 3]), h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("r", T.FLOAT, None), h.make_tensor_value_info("y", T.FLOAT, None)],
        [h.make_tensor("init_w", T.FLOAT, [1], [2.0])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


# Each marker names a different kind of text field: node name, doc string, input, a dim_param,
# an initializer, a tensor attribute's name, a subgraph's node name.
@pytest.mark.parametrize("marker", [b"relu_n", b"relu_doc", b"sym_d", b"init_w", b"a_val", b"inner_n"])
def test_check_finds_bad_bytes_in_any_text_field_and_decode_fixes_them(marker):
    data = _model().SerializeToString()
    assert data.count(marker) == 1
    raw = data.replace(marker, marker[:-1] + b"\xff")
    bad = onnx.ModelProto.FromString(raw)
    assert not all_text_is_utf8(bad)
    assert not all_text_is_utf8(bad, raw)  # the bytes it was read from, checked instead
    assert all_text_is_utf8(bad, data)  # (only the bytes are looked at when given)
    decode_model_text(bad, raw)
    assert all_text_is_utf8(bad)  # the walk escaped it
    assert marker[:-1] + b"\\xff" in bad.SerializeToString()


def test_valid_model_is_left_byte_for_byte():
    m = _model()
    assert all_text_is_utf8(m)
    before = m.SerializeToString()
    assert decode_model_text(m) is m and m.SerializeToString() == before


def test_bytes_attribute_is_not_text():
    """An attribute's ``s`` is a bytes field: any bytes are valid there, and the walk leaves them."""
    m = _model()
    m.graph.node[0].attribute.append(h.make_attribute("blob", b"\xff\xfe"))
    assert all_text_is_utf8(m)
