"""shapeinfer.networkx with the real networkx: the graph mirrors the model and the facts, and
the recipes answer what they say on models where the answer can be read off independently."""

from __future__ import annotations

import itertools

import onnx
import pytest
from onnx import TensorProto, helper
from support.common import MODEL_NAMES, model_path

import shapeinfer

nx = pytest.importorskip("networkx", reason="networkx is in the test extra: pip install -e '.[test]'")

from shapeinfer.networkx import dim_inputs, longest_dynamic_chain, shape_subgraph, to_graph  # noqa: E402


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_graph_mirrors_the_model_and_its_facts(name):
    r = shapeinfer.infer(model_path(name))
    g = to_graph(r)
    graph = r.model.graph
    assert nx.is_directed_acyclic_graph(g)
    ops = [k for k, d in g.nodes(data=True) if d["kind"] == "op"]
    assert sorted(ops) == list(range(len(graph.node)))
    for i, node in enumerate(graph.node):
        d = g.nodes[i]
        assert (d["op"], d["domain"], d["name"]) == (node.op_type, node.domain, node.name)
        reads = sorted((data["dst_port"], data["tensor"]) for _, _, data in g.in_edges(i, data=True))
        assert reads == [(p, t) for p, t in enumerate(node.input) if t]  # no subgraphs in these models
        for _, _, data in g.out_edges(i, data=True):
            assert node.output[data["src_port"]] == data["tensor"]
            f = r.facts[data["tensor"]]
            assert (data["dtype"], data["dims"], data["value"]) == (f.dtype, f.shape, f.value)
    assert {d["tensor"] for _, d in g.nodes(data=True) if d["kind"] == "input"} == {vi.name for vi in graph.input} - {
        t.name for t in graph.initializer
    }
    assert {d["tensor"] for _, d in g.nodes(data=True) if d["kind"] == "output"} == {vi.name for vi in graph.output}
    for vi in graph.output:
        (_, _, data), *rest = g.in_edges(("output", vi.name), data=True)
        assert rest == [] and data["dims"] == r.dims(vi.name)
    consumed = {t for n in graph.node for t in n.input}
    inits = {d["tensor"] for _, d in g.nodes(data=True) if d["kind"] == "initializer"}
    assert inits == {t.name for t in graph.initializer}
    assert all(g.out_degree(("initializer", t)) > 0 for t in inits & consumed)


def _reshape_model() -> onnx.ModelProto:
    """y = Reshape(Relu(x), Concat(Unsqueeze(Gather(Shape(x), 0)), [-1, 4])); the Relu is data,
    not shape computation."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [
        helper.make_tensor("zero", TensorProto.INT64, [], [0]),
        helper.make_tensor("axes", TensorProto.INT64, [1], [0]),
        helper.make_tensor("tail", TensorProto.INT64, [2], [-1, 4]),
    ]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Shape", ["x"], ["sh"], name="shape"),
        helper.make_node("Gather", ["sh", "zero"], ["b0"], name="gather"),
        helper.make_node("Unsqueeze", ["b0", "axes"], ["b1"], name="unsqueeze"),
        helper.make_node("Concat", ["b1", "tail"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["r", "target"], ["y"], name="reshape"),
    ]
    return _model(nodes, [x], [y], inits)


def test_shape_subgraph_is_the_computation_of_the_reshape_target():
    g = to_graph(shapeinfer.infer(_reshape_model()))
    sub = shape_subgraph(g, "y")
    assert {sub.nodes[k].get("name") or k for k in sub} == {
        "shape",
        "gather",
        "unsqueeze",
        "concat",
        ("initializer", "zero"),
        ("initializer", "axes"),
        ("initializer", "tail"),
    }
    assert shape_subgraph(g, "r").number_of_nodes() == 0  # a Relu's shape is its input's
    (target,) = g.get_edge_data(4, 5).values()
    assert target["tensor"] == "target" and [str(v) for v in target["value"]] == ["b", "-1", "4"]
    with pytest.raises(KeyError):
        shape_subgraph(g, "nope")


def test_shape_subgraphs_of_a_real_model_are_shape_computations():
    r = shapeinfer.infer(model_path("bert_ts"))
    g = to_graph(r)
    graph = r.model.graph
    reshapes = [i for i, n in enumerate(graph.node) if n.op_type == "Reshape"]
    assert reshapes
    found_shape_op = False
    for i in reshapes:
        sub = shape_subgraph(g, graph.node[i].output[0])
        assert i not in sub
        for k in sub:
            if g.nodes[k]["kind"] == "op":  # every op in it makes values inference tracks
                assert all(r.facts[o].value is not None for o in graph.node[k].output)
                found_shape_op |= g.nodes[k]["op"] == "Shape"
    assert found_shape_op


def test_dim_inputs_names_the_declaring_inputs():
    r = shapeinfer.infer(model_path("bert_ts"))
    g = to_graph(r)
    out = r.model.graph.output[0].name
    declared = {
        (vi.name, k): d.dim_param for vi in r.model.graph.input for k, d in enumerate(vi.type.tensor_type.shape.dim)
    }
    for axis, dim in enumerate(r.dims(out)):
        got = dim_inputs(g, out, axis)
        if type(dim) is int:
            assert got == []
        else:
            assert got and got == sorted(p for p, sym in declared.items() if sym and sym in str(dim))
    with pytest.raises(IndexError):
        dim_inputs(g, out, 7)


def test_dim_inputs_of_a_data_dependent_dim_are_the_upstream_inputs():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    other = helper.make_tensor_value_info("other", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Relu", ["x"], ["rx"]),
        helper.make_node("NonZero", ["rx"], ["y"]),
        helper.make_node("Neg", ["other"], ["z"]),
    ]
    g = to_graph(shapeinfer.infer(_model(nodes, [x, other], [y, z])))
    assert dim_inputs(g, "y", 0) == []  # NonZero's first dim is the input's rank
    assert dim_inputs(g, "y", 1) == [("x", None)]  # the count depends on x's values
    assert dim_inputs(g, "rx", 0) == [("x", 0)]


def test_longest_dynamic_chain():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Relu", ["c"], ["c1"], name="s1"),
        helper.make_node("Neg", ["c1"], ["c2"], name="s2"),
        helper.make_node("Abs", ["c2"], ["c3"], name="s3"),
        helper.make_node("Neg", ["c3"], ["c4"], name="s4"),
        helper.make_node("Relu", ["x"], ["x1"], name="d1"),
        helper.make_node("Concat", ["x1", "c4"], ["x2"], name="d2", axis=0),
        helper.make_node("Neg", ["x2"], ["y"], name="d3"),
    ]
    g = to_graph(shapeinfer.infer(_model(nodes, [x, c], [y])))
    assert [g.nodes[k]["name"] for k in longest_dynamic_chain(g)] == ["d1", "d2", "d3"]
    static = _model([helper.make_node("Relu", ["c"], ["y"])], [c], [y])
    assert longest_dynamic_chain(to_graph(shapeinfer.infer(static))) == []


def test_longest_dynamic_chain_on_a_real_model_is_a_connected_symbolic_path():
    r = shapeinfer.infer(model_path("llama_dynamo"))
    g = to_graph(r)
    chain = longest_dynamic_chain(g)
    assert len(chain) > 10
    for a, b in itertools.pairwise(chain):
        assert g.has_edge(a, b)
    for k in chain:
        assert any(type(d) is not int for o in r.model.graph.node[k].output if o for d in (r.facts[o].shape or ()))


def test_subgraph_reads_are_implicit_edges():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    def branch(op):
        out = helper.make_tensor_value_info(f"{op}_out", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node(op, ["x"], [f"{op}_out"])], op, [], [out])

    node = helper.make_node("If", ["cond"], ["y"], then_branch=branch("Relu"), else_branch=branch("Neg"))
    g = to_graph(shapeinfer.infer(_model([node], [x, cond], [y])))
    edges = {data["tensor"]: (src, data) for src, _, data in g.in_edges(0, data=True)}
    assert edges.keys() == {"cond", "x"}
    assert edges["cond"][0] == ("input", "cond") and edges["cond"][1]["implicit"] is False
    assert edges["x"][0] == ("input", "x") and edges["x"][1]["implicit"] is True and edges["x"][1]["dst_port"] == -1
    assert dim_inputs(g, "y", 0) == [("x", 0)]
