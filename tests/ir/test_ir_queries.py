"""Queries over the IR agree with the protobuf's: a node's subgraphs are named as graph paths
name them, so facts keyed by path reach the right graph whichever form is walked."""

from __future__ import annotations

from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.io.onnxio import graphs_with_paths, subgraph_attrs
from shapeinfer.ir.graph import GraphModel
from shapeinfer.ir.queries import all_graphs, named_subgraphs


def _body(name: str, op: str) -> object:
    return h.make_graph(
        [h.make_node(op, ["x"], [f"{name}_y"])], name, [], [h.make_tensor_value_info(f"{name}_y", T.FLOAT, [2])]
    )


def _model():
    # an If (two GRAPH attributes) and a custom op holding a GRAPHS list, the If nested in a branch
    inner = h.make_node("If", ["c"], ["z"], then_branch=_body("it", "Relu"), else_branch=_body("ie", "Neg"))
    outer_then = h.make_graph([inner], "ot", [], [h.make_tensor_value_info("z", T.FLOAT, [2])])
    nodes = [
        h.make_node("If", ["c"], ["y"], then_branch=outer_then, else_branch=_body("oe", "Abs")),
        h.make_node("Holder", ["x"], ["w"], domain="custom", bodies=[_body("b0", "Exp"), _body("b1", "Log")]),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2]), h.make_tensor_value_info("w", T.FLOAT, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("custom", 1)])


def test_named_subgraphs_label_each_graph_as_subgraph_attrs_does():
    m = _model()
    gm = GraphModel(m)
    for node, proto in zip(gm.graph.nodes, m.graph.node):
        assert [a for a, _ in named_subgraphs(node)] == [a for a, _ in subgraph_attrs(proto)]
        assert [g.name for _, g in named_subgraphs(node)] == [g.name for _, g in subgraph_attrs(proto)]
    assert [a for a, _ in named_subgraphs(gm.graph.nodes[1])] == ["bodies[0]", "bodies[1]"]


def test_every_graph_is_reached_in_the_order_paths_list_them():
    m = _model()
    names = [g.name for _, g in graphs_with_paths(m.graph)]
    assert [g.name for g in all_graphs(GraphModel(m).graph)] == names
    assert len(names) == 7
