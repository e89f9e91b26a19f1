"""Small models with one structural defect each (or a close model without it), built with
onnx.helper for the model-structure rules M001-M031 (``shapeinfer/lint/rules/structure.py``).

``MODELS`` maps a label to a builder returning a fresh ModelProto; :func:`cases` (appended to
``lint_models.CASES``) says which rule each must or must not trigger. Every defective model is
built from :func:`base`, a valid model that every runtime loads, changed in one place.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def vi(name: str, dtype: int = T.FLOAT, shape=(2, 3)) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, dtype, None if shape is None else list(shape))


def floats(name: str, shape=(2, 3)) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def model(
    nodes,
    inputs=None,
    outputs=None,
    inits=(),
    *,
    opsets=(("", 17),),
    ir_version: int = 8,
    name: str = "g",
    functions=(),
) -> onnx.ModelProto:
    g = h.make_graph(
        nodes,
        name,
        [vi("x")] if inputs is None else list(inputs),
        [vi("y")] if outputs is None else list(outputs),
        initializer=list(inits),
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], functions=list(functions))
    m.ir_version = ir_version
    return m


def base() -> onnx.ModelProto:
    """``y = Relu(x) + w``: valid, every runtime loads it."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Add", ["r", "w"], ["y"], name="add")]
    return model(nodes, inits=[floats("w")])


def with_ir(v: int) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        m = base()
        m.ir_version = v
        return m

    return build


def with_opset(domain: str, v: int) -> Callable[[], onnx.ModelProto]:
    """:func:`base` importing ``domain`` at version ``v`` (the default domain's import changed)."""

    def build() -> onnx.ModelProto:
        m = base()
        if domain:
            m.opset_import.append(h.make_opsetid(domain, v))
        else:
            m.opset_import[0].version = v
        return m

    return build


def no_default_opset() -> onnx.ModelProto:
    m = base()
    del m.opset_import[:]
    m.opset_import.append(h.make_opsetid("ai.onnx.ml", 3))
    return m


def opsets_below_ir3() -> onnx.ModelProto:
    m = base()
    m.ir_version = 2
    return m


def duplicate_metadata() -> onnx.ModelProto:
    m = base()
    h.set_model_props(m, {"a": "1"})
    m.metadata_props.add(key="a", value="2")
    return m


def metadata_once() -> onnx.ModelProto:
    m = base()
    h.set_model_props(m, {"a": "1", "b": "2"})
    return m


def domain_not_imported() -> onnx.ModelProto:
    """A com.microsoft node without a com.microsoft opset import."""
    nodes = [h.make_node("Gelu", ["x"], ["y"], name="bad", domain="com.microsoft")]
    return model(nodes)


def domain_imported() -> onnx.ModelProto:
    nodes = [h.make_node("Gelu", ["x"], ["y"], name="gelu", domain="com.microsoft")]
    return model(nodes, opsets=(("", 17), ("com.microsoft", 1)))


def unused_opset() -> onnx.ModelProto:
    m = base()
    m.opset_import.append(h.make_opsetid("ai.onnx.ml", 3))
    return m


def duplicate_opset() -> onnx.ModelProto:
    m = base()
    m.opset_import.append(h.make_opsetid("", 16))
    return m


def graph_named(name: str) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        m = base()
        m.graph.name = name
        return m

    return build


def if_model(then_name: str = "then", then_out: str = "t_out", outer: str = "r") -> onnx.ModelProto:
    """``y = If(c, then: Identity(r) -> then_out, else: Neg(r) -> e_out)``; ``then_out`` or the
    subgraph's name can be set to make a defect."""
    then_g = h.make_graph([h.make_node("Identity", [outer], [then_out], name="t")], then_name, [], [vi(then_out)])
    else_g = h.make_graph([h.make_node("Neg", [outer], ["e_out"], name="e")], "else", [], [vi("e_out")])
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
    ]
    return model(nodes, inputs=[vi("x"), vi("c", T.BOOL, [])])


def loop_model(body_input: str = "i", init_name: str = "w") -> onnx.ModelProto:
    """``y = Loop(n, cond, x)`` whose body adds ``w`` (an outer initializer); the body's iteration
    input (an int64 scalar) is ``body_input`` (``n`` shadows the outer trip count)."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            h.make_node("Add", ["v_in", init_name], ["v_out"], name="acc"),
        ],
        "body",
        [vi(body_input, T.INT64, []), vi("cond_in", T.BOOL, []), vi("v_in")],
        [vi("cond_out", T.BOOL, []), vi("v_out")],
    )
    nodes = [h.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)]
    inits = [floats(init_name), numpy_helper.from_array(np.array(3, np.int64), "n")]
    return model(nodes, inits=inits)


def duplicate_graph_input() -> onnx.ModelProto:
    m = base()
    m.graph.input.append(vi("x"))
    return m


def duplicate_graph_output() -> onnx.ModelProto:
    m = base()
    m.graph.output.append(vi("y"))
    return m


def output_assigned_twice() -> onnx.ModelProto:
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("Neg", ["x"], ["r"], name="bad"),
        h.make_node("Add", ["r", "w"], ["y"], name="add"),
    ]
    return model(nodes, inits=[floats("w")])


def output_named_as_input() -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["x"], ["x"], name="bad"), h.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, inits=[floats("w")])


def output_named_as_initializer() -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["x"], ["w"], name="bad"), h.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, inits=[floats("w")])


def initializer_named(name: str) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        m = base()
        m.graph.initializer.append(floats(name))
        return m

    return build


def duplicate_initializer() -> onnx.ModelProto:
    m = base()
    m.graph.initializer.append(floats("w"))
    return m


def input_without_type() -> onnx.ModelProto:
    m = base()
    m.graph.input[0].ClearField("type")
    return m


def input_without_shape() -> onnx.ModelProto:
    m = base()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    return m


def output_without_type() -> onnx.ModelProto:
    m = base()
    m.graph.output[0].ClearField("type")
    return m


def output_without_shape() -> onnx.ModelProto:
    m = base()
    m.graph.output[0].type.tensor_type.ClearField("shape")
    return m


def input_undefined_dtype() -> onnx.ModelProto:
    m = base()
    m.graph.input[0].type.tensor_type.elem_type = T.UNDEFINED
    return m


def value_info_undefined_dtype() -> onnx.ModelProto:
    m = base()
    m.graph.value_info.append(vi("r", T.UNDEFINED))
    return m


def initializer_undefined_dtype() -> onnx.ModelProto:
    m = base()
    m.graph.initializer[0].data_type = T.UNDEFINED
    return m


def ref_attr_in_graph() -> onnx.ModelProto:
    m = base()
    a = onnx.AttributeProto(name="alpha", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT)
    node = h.make_node("LeakyRelu", ["x"], ["r"], name="bad")
    node.attribute.append(a)
    m.graph.node[0].CopyFrom(node)
    return m


def deprecated_op() -> onnx.ModelProto:
    """Upsample at opset 10 (deprecated there; Resize replaces it)."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [h.make_node("Upsample", ["x", "scales"], ["y"], name="bad", mode="nearest")]
    return model(
        nodes,
        [vi("x", T.FLOAT, [1, 1, 2, 2])],
        [vi("y", T.FLOAT, [1, 1, 4, 4])],
        [scales],
        opsets=(("", 10),),
        ir_version=5,
    )


def resize_op() -> onnx.ModelProto:
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [h.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="nearest")]
    return model(
        nodes,
        [vi("x", T.FLOAT, [1, 1, 2, 2])],
        [vi("y", T.FLOAT, [1, 1, 4, 4])],
        [scales],
        opsets=(("", 13),),
        ir_version=7,
    )


def deprecated_group_norm() -> onnx.ModelProto:
    """GroupNormalization-18: deprecated (GroupNormalization-21 fixed scale/bias per channel)."""
    sb = [numpy_helper.from_array(np.ones([2], np.float32), n) for n in ("s", "b")]
    nodes = [h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="bad", num_groups=2)]
    shape = [1, 4, 3]
    return model(nodes, [vi("x", T.FLOAT, shape)], [vi("y", T.FLOAT, shape)], sb, opsets=(("", 18),))


def deprecated_ml_op() -> onnx.ModelProto:
    """ai.onnx.ml TreeEnsembleRegressor at ai.onnx.ml 5 (deprecated for TreeEnsemble): onnxruntime runs it."""
    node = h.make_node(
        "TreeEnsembleRegressor",
        ["x"],
        ["y"],
        name="bad",
        domain="ai.onnx.ml",
        n_targets=1,
        nodes_treeids=[0],
        nodes_nodeids=[0],
        nodes_featureids=[0],
        nodes_values=[0.0],
        nodes_modes=["LEAF"],
        nodes_truenodeids=[0],
        nodes_falsenodeids=[0],
        target_treeids=[0],
        target_nodeids=[0],
        target_ids=[0],
        target_weights=[1.0],
    )
    return model(
        [node],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 1])],
        opsets=(("", 17), ("ai.onnx.ml", 5)),
        ir_version=8,
    )


def deprecated_scatter() -> onnx.ModelProto:
    """Scatter-11 (deprecated: ScatterElements)."""
    idx = numpy_helper.from_array(np.zeros([1, 3], np.int64), "idx")
    upd = numpy_helper.from_array(np.ones([1, 3], np.float32), "upd")
    nodes = [h.make_node("Scatter", ["x", "idx", "upd"], ["y"], name="bad", axis=0)]
    return model(nodes, inits=[idx, upd], opsets=(("", 11),), ir_version=6)


def experimental_upsample() -> onnx.ModelProto:
    """Upsample-1 (experimental) at opset 6."""
    nodes = [h.make_node("Upsample", ["x"], ["y"], name="bad", mode="nearest", height_scale=2.0, width_scale=2.0)]
    return model(
        nodes, [vi("x", T.FLOAT, [1, 1, 2, 2])], [vi("y", T.FLOAT, [1, 1, 4, 4])], opsets=(("", 6),), ir_version=3
    )


def unused_node() -> onnx.ModelProto:
    m = base()
    m.graph.node.append(h.make_node("Neg", ["x"], ["dead"], name="bad"))
    return m


def unused_initializer() -> onnx.ModelProto:
    return initializer_named("unused")()


def initializer_as_input_default() -> onnx.ModelProto:
    """``w`` is a graph input with an initializer as its default (legal from IR 4)."""
    m = base()
    m.graph.input.append(vi("w"))
    return m


def unknown_default_op() -> onnx.ModelProto:
    nodes = [h.make_node("SimplifiedLayerNormalization", ["x", "w"], ["y"], name="bad", axis=-1)]
    return model(nodes, inits=[floats("w", [3])])


def _function(name: str = "F", domain: str = "local", inputs=("a",), outputs=("b",), nodes=None, opset=17, attrs=()):
    nodes = nodes if nodes is not None else [h.make_node("Relu", ["a"], ["b"])]
    return h.make_function(domain, name, list(inputs), list(outputs), nodes, [h.make_opsetid("", opset)], list(attrs))


def with_function(fn: onnx.FunctionProto | None = None, call: bool = True) -> onnx.ModelProto:
    fn = fn or _function()
    nodes = [
        h.make_node(fn.name, ["x"], ["r"], name="call", domain=fn.domain)
        if call
        else h.make_node("Relu", ["x"], ["r"], name="relu")
    ]
    nodes.append(h.make_node("Add", ["r", "w"], ["y"], name="add"))
    return model(
        nodes,
        inits=[floats("w")],
        opsets=(("", 17), (fn.domain or "", 1)) if fn.domain else (("", 17),),
        functions=[fn],
    )


def function_ssa() -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["a"], ["t"]), h.make_node("Neg", ["a"], ["t"]), h.make_node("Identity", ["t"], ["b"])]
    return with_function(_function(nodes=nodes))


def function_unsorted() -> onnx.ModelProto:
    nodes = [h.make_node("Identity", ["t"], ["b"]), h.make_node("Relu", ["a"], ["t"])]
    return with_function(_function(nodes=nodes))


def function_opset_mismatch() -> onnx.ModelProto:
    """The function imports opset 16, the model 17: Relu is Relu-14 at both (allowed)."""
    return with_function(_function(opset=16))


def function_duplicate_inputs() -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["a"], ["b"])]
    return with_function(_function(inputs=("a", "a"), nodes=nodes))


def function_duplicate_outputs() -> onnx.ModelProto:
    nodes = [h.make_node("Relu", ["a"], ["b"])]
    return with_function(_function(outputs=("b", "b"), nodes=nodes))


def function_duplicate_attributes() -> onnx.ModelProto:
    return with_function(_function(attrs=("alpha", "alpha")))


def function_no_domain() -> onnx.ModelProto:
    return with_function(_function(domain=""))


def unused_function() -> onnx.ModelProto:
    return with_function(call=False)


def external_location(location: str) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        m = base()
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", "0"), ("length", "24")):
            t.external_data.add(key=k, value=v)
        return m

    return build


def attribute_two_fields() -> onnx.ModelProto:
    m = base()
    a = h.make_attribute("alpha", 0.1)
    a.i = 3
    node = h.make_node("LeakyRelu", ["x"], ["r"], name="bad")
    node.attribute.append(a)
    m.graph.node[0].CopyFrom(node)
    return m


def ir3(as_input: bool) -> Callable[[], onnx.ModelProto]:
    """``base`` at IR version 3 and opset 8, its initializer listed as a graph input or not."""

    def build() -> onnx.ModelProto:
        m = base()
        m.ir_version = 3
        m.opset_import[0].version = 8
        if as_input:
            m.graph.input.append(vi("w"))
        return m

    return build


def empty_input_name() -> onnx.ModelProto:
    m = base()
    m.graph.input.append(vi(""))
    return m


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "base": base,
    "ir-version-0": with_ir(0),
    "initializer-not-input-ir3": ir3(False),
    "initializer-as-input-ir3": ir3(True),
    "ir-version-99": with_ir(99),
    "no-default-opset": no_default_opset,
    "opsets-below-ir3": opsets_below_ir3,
    "duplicate-metadata": duplicate_metadata,
    "metadata-once": metadata_once,
    "domain-not-imported": domain_not_imported,
    "domain-imported": domain_imported,
    "unused-opset": unused_opset,
    "duplicate-opset": duplicate_opset,
    "empty-graph-name": graph_named(""),
    "empty-subgraph-name": lambda: if_model(then_name=""),
    "if-valid": if_model,
    "if-shadows-outer": lambda: if_model(then_out="r"),
    "if-shadows-input": lambda: if_model(then_out="x"),
    "loop-valid": loop_model,
    "loop-input-shadows-initializer": lambda: loop_model(body_input="n"),
    "duplicate-graph-input": duplicate_graph_input,
    "duplicate-graph-output": duplicate_graph_output,
    "output-assigned-twice": output_assigned_twice,
    "output-named-as-input": output_named_as_input,
    "output-named-as-initializer": output_named_as_initializer,
    "empty-initializer-name": initializer_named(""),
    "duplicate-initializer": duplicate_initializer,
    "initializer-as-input-default": initializer_as_input_default,
    "input-without-type": input_without_type,
    "input-without-shape": input_without_shape,
    "output-without-type": output_without_type,
    "output-without-shape": output_without_shape,
    "input-undefined-dtype": input_undefined_dtype,
    "value-info-undefined-dtype": value_info_undefined_dtype,
    "initializer-undefined-dtype": initializer_undefined_dtype,
    "ref-attr-in-graph": ref_attr_in_graph,
    "deprecated-upsample": deprecated_op,
    "resize": resize_op,
    "deprecated-group-norm": deprecated_group_norm,
    "deprecated-ml-tree": deprecated_ml_op,
    "deprecated-scatter": deprecated_scatter,
    "experimental-upsample": experimental_upsample,
    "ir-version-12": with_ir(12),
    "ir-version-13": with_ir(13),
    "ir-version-14": with_ir(14),
    "ir-version-15": with_ir(15),
    "unused-node": unused_node,
    "unused-initializer": unused_initializer,
    "unknown-default-op": unknown_default_op,
    "function-valid": with_function,
    "function-ssa": function_ssa,
    "function-unsorted": function_unsorted,
    "function-opset-mismatch": function_opset_mismatch,
    "function-opset-changes-op": lambda: with_function(_function(opset=12)),
    "function-duplicate-inputs": function_duplicate_inputs,
    "function-no-domain": function_no_domain,
    "function-duplicate-outputs": function_duplicate_outputs,
    "function-duplicate-attributes": function_duplicate_attributes,
    "function-empty-name": lambda: with_function(_function(name="")),
    "unused-function": unused_function,
    "external-absolute": external_location("/tmp/w.bin"),
    "external-dotdot": external_location("../w.bin"),
    "external-empty": external_location(""),
    "attribute-two-fields": attribute_two_fields,
    "empty-input-name": empty_input_name,
    "opset-28": with_opset("", 28),
    "opset-30": with_opset("", 30),
    "ml-opset-9": with_opset("ai.onnx.ml", 9),
}


def cases() -> list:
    from testkit.lint_models import Case

    hit = {
        "M001": ["ir-version-0"],
        "M002": ["ir-version-99", "ir-version-15"],
        "M003": ["no-default-opset", "domain-not-imported"],
        "M004": ["opsets-below-ir3"],
        "M005": ["duplicate-metadata"],
        "M006": ["unused-opset"],
        "M007": ["duplicate-opset"],
        "M008": ["function-opset-changes-op"],
        "M009": ["unused-function"],
        "M010": ["empty-graph-name", "empty-subgraph-name"],
        "M011": ["duplicate-graph-input"],
        "M012": ["duplicate-graph-output"],
        "M013": ["output-assigned-twice", "output-named-as-input", "output-named-as-initializer"],
        "M014": ["if-shadows-outer", "if-shadows-input", "loop-input-shadows-initializer"],
        "M015": ["empty-initializer-name"],
        "M016": ["duplicate-initializer"],
        "M017": ["input-without-type"],
        "M018": ["input-without-shape"],
        "M019": ["output-without-type"],
        "M020": ["output-without-shape"],
        "M021": ["input-undefined-dtype", "value-info-undefined-dtype"],
        "M022": ["ref-attr-in-graph"],
        "M023": ["deprecated-upsample", "deprecated-scatter", "deprecated-group-norm", "deprecated-ml-tree"],
        "M024": ["experimental-upsample"],
        "M025": ["unused-node"],
        "M026": ["unused-initializer"],
        "M027": ["attribute-two-fields"],
        "M028": ["empty-input-name"],
        "M029": [
            "function-ssa",
            "function-unsorted",
            "function-duplicate-inputs",
            "function-no-domain",
            "function-duplicate-outputs",
            "function-duplicate-attributes",
            "function-empty-name",
        ],
        "M030": ["initializer-not-input-ir3"],
        "M031": ["opset-30", "ml-opset-9"],
    }
    clean = {
        "M001": ["base", "ir-version-14"],
        "M002": ["ir-version-14"],
        "M003": ["domain-imported"],
        "M004": ["base"],
        "M005": ["metadata-once"],
        "M006": ["domain-imported"],
        "M007": ["base"],
        "M008": ["function-opset-mismatch"],
        "M009": ["function-valid"],
        "M010": ["if-valid"],
        "M011": ["initializer-as-input-default"],
        "M012": ["base"],
        "M013": ["initializer-as-input-default"],
        "M014": ["if-valid", "loop-valid"],
        "M015": ["base"],
        "M016": ["initializer-as-input-default"],
        "M017": ["base"],
        "M018": ["base"],
        "M019": ["base"],
        "M020": ["base"],
        "M021": ["base"],
        "M022": ["function-valid"],
        "M023": ["resize"],
        "M024": ["resize"],
        "M025": ["if-valid", "loop-valid"],
        "M026": ["loop-valid", "initializer-as-input-default"],
        "M027": ["base"],
        "M028": ["base"],
        "M029": ["function-valid", "function-opset-mismatch"],
        "M030": ["initializer-as-input-ir3", "base"],
        "M031": ["base", "opset-28"],
    }
    out = []
    for triggers, table in ((True, hit), (False, clean)):
        for code, labels in table.items():
            out += [Case(code, label, MODELS[label], triggers, node=None) for label in labels]
    return out
