"""shapeinfer.graphsurgeon.annotate with the real onnx-graphsurgeon: every Variable gets the type
``shapeinfer M -o`` writes, in the main graph and in subgraphs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from support.common import MODEL_NAMES, model_path, run_cli

gs = pytest.importorskip("onnx_graphsurgeon", reason="onnx-graphsurgeon is in the test extra: pip install -e '.[test]'")

from shapeinfer.graphsurgeon import annotate  # noqa: E402
from shapeinfer.inference.bindings import BindError  # noqa: E402


def _expected(vi: onnx.ValueInfoProto) -> tuple[object, list | None]:
    """(dtype, shape) as written in ``vi``, read independently of graphsurgeon: ints for
    dim_value, text for dim_param, None for neither."""
    tt = vi.type.tensor_type
    dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type) if tt.elem_type else None
    if not tt.HasField("shape"):
        return dtype, None
    return dtype, [
        d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
        for d in tt.shape.dim
    ]


def _written(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    """The typed values of ``model``'s main graph but its parameters, whose value_info entries
    (torch.export's) -o keeps and graphsurgeon imports as Constants, not Variables."""
    g = model.graph
    params = {t.name for t in g.initializer}
    return {vi.name: vi for vi in (*g.input, *g.output, *g.value_info) if vi.name not in params}


def _variables(graph) -> dict[str, object]:
    return {name: t for name, t in graph.tensors().items() if isinstance(t, gs.Variable) and name}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_variable_is_what_dash_o_writes(name, tmp_path):
    path = model_path(name)
    out = tmp_path / "out.onnx"
    r = run_cli(str(path), "-o", str(out))
    assert r.returncode == 0, r.stderr
    written = _written(onnx.load(str(out), load_external_data=False))

    graph = gs.import_onnx(onnx.load(str(path)))
    before = {n: (t.dtype, t.shape) for n, t in _variables(graph).items()}
    result = annotate(graph)
    variables = _variables(graph)
    assert set(written) <= set(variables)  # -o annotates no tensor graphsurgeon lacks
    changed = 0
    for n, t in variables.items():
        if n in written:
            assert (t.dtype, t.shape) == _expected(written[n]), n
            changed += (t.dtype, t.shape) != before[n]
        else:  # -o writes nothing for it: the Variable stays as it was
            assert (t.dtype, t.shape) == before[n], n
    assert changed > 0  # the shipped models declare their inputs and outputs only
    assert all(t.shape is not None for t in variables.values() if t.outputs or t.inputs)
    assert result.dims(graph.outputs[0].name) is not None


def _concat_model(out_shape=None) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    nodes = [helper.make_node("Concat", ["x", "x"], ["c"], axis=0), helper.make_node("Relu", ["c"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])


def test_symbolic_dims_are_expression_text_and_known_ones_ints():
    graph = gs.import_onnx(_concat_model())
    annotate(graph)
    c = graph.tensors()["c"]
    assert c.shape == ["2*n", 4] and c.dtype == np.float32 and c.type == "tensor_type"
    assert graph.outputs[0].shape == ["2*n", 4]


def test_graph_built_with_graphsurgeon_gets_its_types():
    x = gs.Variable("x", dtype=np.float16, shape=["b", 3])
    mid, y = gs.Variable("mid"), gs.Variable("y")
    nodes = [gs.Node("Transpose", inputs=[x], outputs=[mid], attrs={"perm": [1, 0]}),
             gs.Node("Cast", inputs=[mid], outputs=[y], attrs={"to": TensorProto.INT64})]  # fmt: skip
    graph = gs.Graph(nodes=nodes, inputs=[x], outputs=[y], opset=17)
    result = annotate(graph)
    assert (mid.dtype, mid.shape) == (np.float16, [3, "b"])
    assert (y.dtype, y.shape) == (np.int64, [3, "b"])
    assert result.diagnostics == [] or all(d.severity != "error" for d in result.diagnostics)


def test_bind_and_input_shapes_reach_the_inputs_and_a_bad_bind_changes_nothing():
    graph = gs.import_onnx(_concat_model())
    with pytest.raises(BindError):
        annotate(graph, bind={"nn": 2})
    assert graph.tensors()["c"].shape is None and graph.inputs[0].shape == ["n", 4]
    annotate(graph, bind={"n": 5})
    assert graph.inputs[0].shape == [5, 4] and graph.tensors()["c"].shape == [10, 4]
    graph = gs.import_onnx(_concat_model())
    annotate(graph, input_shapes={"x": ["m", 4]})
    assert graph.tensors()["c"].shape == ["2*m", 4]


def _if_model() -> onnx.ModelProto:
    """An If whose branches compute intermediate tensors; the else branch reads outer ``x``."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    def branch(name, op):
        out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, None)
        nodes = [
            helper.make_node(op, ["x"], [f"{name}_t"]),
            helper.make_node("Concat", ["x", f"{name}_t"], [f"{name}_out"], axis=1),
        ]
        return helper.make_graph(nodes, name, [], [out])  # fmt: skip

    node = helper.make_node(
        "If", ["cond"], ["y"], then_branch=branch("then", "Relu"), else_branch=branch("else", "Neg")
    )
    g = helper.make_graph([node], "g", [x, cond], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_subgraph_variables_are_annotated_as_dash_o_writes_them(tmp_path):
    src = tmp_path / "if.onnx"
    onnx.save(_if_model(), str(src))
    out = tmp_path / "out.onnx"
    assert run_cli(str(src), "-o", str(out)).returncode == 0
    written = onnx.load(str(out))

    graph = gs.import_onnx(onnx.load(str(src)))
    annotate(graph)
    if_node = graph.nodes[0]
    branches = {"then_branch": "then", "else_branch": "else"}
    proto_branches = {a.name: a.g for a in written.graph.node[0].attribute}
    for attr, prefix in branches.items():
        sub = if_node.attrs[attr]
        sub_written = _written(onnx.ModelProto(graph=proto_branches[attr]))
        for name in (f"{prefix}_t", f"{prefix}_out"):
            t = sub.tensors()[name]
            assert (t.dtype, t.shape) == _expected(sub_written[name]), name
        assert sub.tensors()[f"{prefix}_out"].shape == ["n", 8]
    assert (graph.outputs[0].dtype, graph.outputs[0].shape) == (np.float32, ["n", 8])
    assert graph.inputs[0].shape == ["n", 4]  # the outer x, read by both branches, as declared


def test_annotate_takes_only_a_graph():
    with pytest.raises(TypeError, match=r"onnx_graphsurgeon\.Graph"):
        annotate(_concat_model())
