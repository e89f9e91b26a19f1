"""Small models built with onnx.helper for the lint rule tests: per rule, models that must
trigger it and models, as close as possible to those, that must not.

``CASES`` lists :class:`Case` (code, builder, whether it must trigger, the ``--target``, the
node the finding must name). Builders return fresh ModelProtos.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def vi(name: str, dtype: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, dtype, shape)


def ints(name: str, values, dtype=np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def make(
    nodes,
    inputs,
    outputs,
    inits=(),
    opset: int = 17,
    value_info=(),
    extra_opsets=(),
    ir_version: int | None = None,
) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits), value_info=list(value_info))
    ops = [h.make_opsetid("", opset), *[h.make_opsetid(d, v) for d, v in extra_opsets]]
    m = h.make_model(g, opset_imports=ops)
    m.ir_version = ir_version or (7 if opset <= 13 else 8)
    return m


def out(name: str = "y", dtype: int = T.FLOAT, rank: int | None = None) -> onnx.ValueInfoProto:
    """A graph output of known rank and open dims (a valid model declares its outputs' shapes)."""
    return vi(name, dtype, None if rank is None else [None] * rank)


# ------------------------------------------------------------------------------ Reshape


def reshape_const(x_shape, target, opset: int = 17, dtype: int = T.FLOAT, allowzero=None, tdtype=np.int64):
    """``y = Reshape(x, t)`` with ``t`` an initializer."""
    attrs = {} if allowzero is None else {"allowzero": allowzero}
    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad", **attrs)
    return make([node], [vi("x", dtype, x_shape)], [out("y", dtype, len(target))], [ints("t", target, tdtype)], opset)


def reshape_v1(x_shape, target, dtype: int = T.FLOAT, opset: int = 4):
    """Reshape-1: the target in the ``shape`` attribute."""
    node = h.make_node("Reshape", ["x"], ["y"], name="bad", shape=list(target))
    return make([node], [vi("x", dtype, x_shape)], [out("y", dtype, len(target))], opset=opset)


def reshape_symbolic_mismatch():
    """x[batch, 8] reshaped to [batch, 3] with the target computed from Shape(x): counts differ."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"], name="shape"),
        h.make_node("Gather", ["s", "i0"], ["b"], name="gather", axis=0),
        h.make_node("Concat", ["b", "three"], ["t"], name="concat", axis=0),
        h.make_node("Reshape", ["x", "t"], ["y"], name="bad"),
    ]
    inits = [ints("i0", [0]), ints("three", [3])]
    return make(nodes, [vi("x", T.FLOAT, ["batch", 8])], [out(rank=2)], inits, opset=17)


def reshape_runtime_canonical(opset: int = 17):
    """x[batch, seq, 8] to Concat(Shape(x)[0:2], [2, 4]): a runtime target always [0, 0, 2, 4]."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"], name="shape"),
        h.make_node("Slice", ["s", "st", "en"], ["s01"], name="slice"),
        h.make_node("Concat", ["s01", "tail"], ["t"], name="concat", axis=0),
        h.make_node("Reshape", ["x", "t"], ["y"], name="bad"),
    ]
    inits = [ints("st", [0]), ints("en", [2]), ints("tail", [2, 4])]
    return make(nodes, [vi("x", T.FLOAT, ["batch", "seq", 8])], [out(rank=4)], inits, opset)


def reshape_to_own_shape(x_shape):
    """``Reshape(x, Shape(x))``: a runtime target whose values inference knows (``x_shape``)."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["y"], name="bad")]
    return make(nodes, [vi("x", T.FLOAT, x_shape)], [out(rank=len(x_shape))])


def reshape_runtime_dynamic():
    """x[a, b, c] reshaped to the shape of another input y[n, m]: genuinely dynamic."""
    nodes = [
        h.make_node("Shape", ["z"], ["t"], name="shape"),
        h.make_node("Reshape", ["x", "t"], ["y"], name="bad"),
    ]
    return make(nodes, [vi("x", T.FLOAT, ["a", "b", "c"]), vi("z", T.FLOAT, ["n", "m"])], [out(rank=2)])


def reshape_target_rank2():
    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad")
    t = numpy_helper.from_array(np.array([[6, 4]], dtype=np.int64), "t")
    return make([node], [vi("x", T.FLOAT, [2, 3, 4])], [out(rank=2)], [t])


def reshape5_with_attribute_only():
    """Opset 13 Reshape written in the Reshape-1 form (no target input, a shape attribute)."""
    node = h.make_node("Reshape", ["x"], ["y"], name="bad", shape=[6, 4])
    return make([node], [vi("x", T.FLOAT, [2, 3, 4])], [out(rank=2)], opset=13)


def reshape1_with_input():
    """Opset 4 Reshape written in the Reshape-5 form (a target input, no attribute)."""
    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad")
    return make([node], [vi("x", T.FLOAT, [2, 3, 4])], [out(rank=2)], [ints("t", [6, 4])], opset=4)


def reshape_both_forms(opset: int):
    """A Reshape with both a ``shape`` attribute and a target input."""
    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad", shape=[6, 4])
    return make([node], [vi("x", T.FLOAT, [2, 3, 4])], [out(rank=2)], [ints("t", [6, 4])], opset=opset)


# ------------------------------------------------------------------------------ Shape


def shape_node(x_shape, opset: int, **attrs):
    node = h.make_node("Shape", ["x"], ["y"], name="bad", **attrs)
    return make([node], [vi("x", T.FLOAT, x_shape)], [out("y", T.INT64, 1)], opset=opset)


# ------------------------------------------------------------------------------ graph


def nonzero_chain():
    """NonZero (data-dependent count) then Relu: resolution is lost at NonZero, not at Relu."""
    nodes = [
        h.make_node("NonZero", ["x"], ["nz"], name="bad"),
        h.make_node("Cast", ["nz"], ["f"], name="cast", to=T.FLOAT),
        h.make_node("Relu", ["f"], ["y"], name="relu"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [4])], [out(rank=2)])


def concat_of(dim: int) -> onnx.ModelProto:
    """Concat of a tensor with itself along a dim of ``dim``: past 2**62 the sum overflows int64."""
    node = h.make_node("Concat", ["x", "x"], ["y"], axis=0, name="bad")
    return make([node], [vi("x", T.FLOAT, [dim, 3])], [out(rank=2)])


def constant_of_shape_of_length(n: int) -> onnx.ModelProto:
    """ConstantOfShape whose shape input has ``n`` elements (values unknown): the output's rank."""
    node = h.make_node("ConstantOfShape", ["s"], ["y"], name="bad")
    return make([node], [vi("s", T.INT64, [n])], [out()])


def relu_model(x_shape=(2, 3), dtype=T.FLOAT):
    node = h.make_node("Relu", ["x"], ["y"], name="bad")
    return make([node], [vi("x", dtype, list(x_shape))], [out("y", dtype, len(x_shape))])


def binary(op: str, a_shape, b_shape, a_type=T.FLOAT, b_type=T.FLOAT):
    node = h.make_node(op, ["a", "b"], ["y"], name="bad")
    rank = max(len(a_shape), len(b_shape))
    return make([node], [vi("a", a_type, a_shape), vi("b", b_type, b_shape)], [out("y", a_type, rank)])


def dim_to_float(dim):
    nodes = [
        h.make_node("Shape", ["x"], ["s"], name="shape"),
        h.make_node("Cast", ["s"], ["y"], name="bad", to=T.FLOAT),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2, dim])], [out(rank=1)])


def cycle():
    nodes = [
        h.make_node("Add", ["x", "c"], ["a"], name="bad"),
        h.make_node("Relu", ["a"], ["c"], name="relu"),
        h.make_node("Identity", ["a"], ["y"], name="id"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2])], [out(rank=1)])


def out_of_order():
    nodes = [
        h.make_node("Relu", ["a"], ["y"], name="relu"),
        h.make_node("Abs", ["x"], ["a"], name="abs"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2])], [out(rank=1)])


def in_order():
    nodes = [
        h.make_node("Abs", ["x"], ["a"], name="abs"),
        h.make_node("Relu", ["a"], ["y"], name="relu"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2])], [out(rank=1)])


def undefined_input():
    return make([h.make_node("Add", ["x", "missing"], ["y"], name="bad")], [vi("x", T.FLOAT, [2])], [out(rank=1)])


def declared(shape, dtype=T.FLOAT, where: str = "value_info"):
    """x[2, 3] -> Relu -> a -> Identity -> y, with a's or y's declared type/shape given."""
    nodes = [h.make_node("Relu", ["x"], ["a"], name="bad"), h.make_node("Identity", ["a"], ["y"], name="id")]
    if where == "value_info":
        return make(nodes, [vi("x", T.FLOAT, [2, 3])], [out(rank=2)], value_info=[vi("a", dtype, shape)])
    return make(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", dtype, shape)])


def declared_symbolic(decl):
    """x[batch, seq] -> Relu -> y, with y declared as ``decl``."""
    nodes = [h.make_node("Relu", ["x"], ["y"], name="bad")]
    return make(nodes, [vi("x", T.FLOAT, ["batch", "seq"])], [vi("y", T.FLOAT, decl)])


def declared_after_nonzero(decl):
    """x[2, 3] -> NonZero -> a (int64 [2, data-dependent]) -> Identity -> y, a declared ``decl``."""
    nodes = [h.make_node("NonZero", ["x"], ["a"], name="bad"), h.make_node("Identity", ["a"], ["y"], name="id")]
    return make(nodes, [vi("x", T.FLOAT, [2, 3])], [out("y", T.INT64, 2)], value_info=[vi("a", T.INT64, decl)])


def squared_shape(rounds: int):
    """v = Shape(x) of a rank-1 ``x[n]``, then ``v = v*v + 1`` ``rounds`` times, then
    ConstantOfShape(v): the dim's expression doubles in size at every round."""
    nodes = [h.make_node("Shape", ["x"], ["v0"])]
    for i in range(rounds):
        nodes.append(h.make_node("Mul", [f"v{i}", f"v{i}"], [f"m{i}"], name=f"square{i}"))
        nodes.append(h.make_node("Add", [f"m{i}", "one"], [f"v{i + 1}"], name=f"plus{i}"))
    nodes.append(h.make_node("ConstantOfShape", [f"v{rounds}"], ["y"]))
    one = numpy_helper.from_array(np.array([1], np.int64), "one")
    return make(nodes, [vi("x", T.FLOAT, ["n"])], [out("y", T.FLOAT, 1)], inits=[one])


def declared_join(decl):
    """An If on input ``c`` whose branches give int64 vectors of 3 and 2 elements: ``y``
    (declared ``decl``) is one or the other."""
    import numpy as np
    from onnx import numpy_helper

    def branch(name, values):
        t = numpy_helper.from_array(np.array(values, np.int64), name + "_v")
        node = h.make_node("Constant", [], [name], value=t)
        return h.make_graph([node], name + "_g", [], [vi(name, T.INT64, None)])

    node = h.make_node(
        "If", ["c"], ["y"], name="bad", then_branch=branch("t", [1, 2, 3]), else_branch=branch("e", [1, 2])
    )
    return make([node], [vi("c", T.BOOL, [])], [vi("y", T.INT64, decl)])


def relu_model_at(opset: int):
    m = relu_model()
    m.opset_import[0].version = opset
    return m


def custom_op():
    node = h.make_node("Foo", ["x"], ["y"], name="bad", domain="com.example")
    return make([node], [vi("x", T.FLOAT, [2])], [out(rank=1)], extra_opsets=[("com.example", 1)])


def contrib_op(op: str, domain: str = "", n_inputs: int = 1, opset: int = 17):
    """``y = domain.op(x, ...)`` on float inputs (an onnxruntime op, or an op no runtime knows)."""
    names = [f"x{i}" for i in range(n_inputs)]
    node = h.make_node(op, names, ["y"], name="bad", domain=domain)
    extra = [(domain, 1)] if domain else []
    return make([node], [vi(n, T.FLOAT, [2, 4]) for n in names], [out(rank=2)], opset=opset, extra_opsets=extra)


def sequence_output():
    """A model returning a sequence of tensors (SequenceConstruct): not a tensor graph output."""
    node = h.make_node("SequenceConstruct", ["x", "x"], ["y"], name="bad")
    seq = h.make_tensor_sequence_value_info("y", T.FLOAT, [2])
    return make([node], [vi("x", T.FLOAT, [2])], [seq])


def loop_state(pass_through: bool):
    """Loop(M=3, cond, a, b): the body adds 1 to ``a``; ``b`` is carried, and with
    ``pass_through`` the body lists its input ``b_in`` as its output (tf2onnx's while loops)."""
    nodes = [h.make_node("Add", ["a_in", "one"], ["a_out"]), h.make_node("Identity", ["c_in"], ["c_out"])]
    if not pass_through:
        nodes.append(h.make_node("Identity", ["b_in"], ["b_out"]))
    body = h.make_graph(
        nodes,
        "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("a_in", T.FLOAT, [2]), vi("b_in", T.FLOAT, [2])],
        [vi("c_out", T.BOOL, []), vi("a_out", T.FLOAT, [2]), vi("b_in" if pass_through else "b_out", T.FLOAT, [2])],
        [h.make_tensor("one", T.FLOAT, [1], [1.0])],
    )
    loop = h.make_node("Loop", ["M", "cond", "x", "x"], ["ya", "yb"], name="bad", body=body)
    m = make([loop], [vi("x", T.FLOAT, [2])], [vi("ya", T.FLOAT, [2]), vi("yb", T.FLOAT, [2])])
    m.graph.initializer.extend([h.make_tensor("M", T.INT64, [], [3]), h.make_tensor("cond", T.BOOL, [], [1])])
    return m


def local_function_call():
    """A call of a model-local function ``local.Block`` (Relu then Neg)."""
    f = h.make_function(
        "local",
        "Block",
        ["X"],
        ["Y"],
        [h.make_node("Relu", ["X"], ["T"]), h.make_node("Neg", ["T"], ["Y"])],
        [h.make_opsetid("", 17)],
    )
    m = make(
        [h.make_node("Block", ["x"], ["y"], domain="local", name="bad")],
        [vi("x", T.FLOAT, [2])],
        [vi("y", T.FLOAT, [2])],
        extra_opsets=[("local", 1)],
    )
    m.functions.append(f)
    return m


def qdq_matmul_scale(variant: str = "alone", zero_point=np.uint8):
    """``Mul(DQ(Q(MatMul(a, b))), DQ(Q(Constant 0.25)))``, the attention scale of onnxruntime's
    ``quantize_static`` on a TorchScript BERT (the Mul is named ``bad``). ``variant``:
    ``alone`` as written; ``shared`` the quantized constant also scales a second MatMul (as in the
    dynamo exports); ``float_scale`` the constant is not quantized."""
    zp = np.dtype(zero_point).type
    inits = [
        numpy_helper.from_array(np.array(0.01, np.float32), "s1"),
        numpy_helper.from_array(np.array(0, zp), "z1"),
        numpy_helper.from_array(np.array(0.001, np.float32), "sc"),
        numpy_helper.from_array(np.array(0, zp), "zc"),
    ]
    c = numpy_helper.from_array(np.array(0.25, np.float32), "cv")
    nodes = [
        h.make_node("Constant", [], ["c"], value=c),
        h.make_node("QuantizeLinear", ["c", "sc", "zc"], ["cq"]),
        h.make_node("DequantizeLinear", ["cq", "sc", "zc"], ["cd"]),
    ]
    inputs, outputs = [vi("a", T.FLOAT, ["batch", 2, "seq", 16])], []
    for k in range(2 if variant == "shared" else 1):
        nodes += [
            h.make_node("MatMul", ["a", f"b{k}"], [f"mm{k}"]),
            h.make_node("QuantizeLinear", [f"mm{k}", "s1", "z1"], [f"mq{k}"]),
            h.make_node("DequantizeLinear", [f"mq{k}", "s1", "z1"], [f"md{k}"]),
            h.make_node(
                "Mul",
                [f"md{k}", "c" if variant == "float_scale" else "cd"],
                [f"y{k}"],
                name="bad" if k == 0 else "mul1",
            ),
        ]
        inputs.append(vi(f"b{k}", T.FLOAT, ["batch", 2, 16, "seq"]))
        outputs.append(vi(f"y{k}", T.FLOAT, ["batch", 2, "seq", "seq"]))
    if variant == "float_scale":
        nodes = [n for n in nodes if n.output[0] not in ("cq", "cd")]
    return make(nodes, inputs, outputs, inits, opset=21 if zp(0).itemsize > 1 else 17)


def unary(op: str, dtype):
    return make([h.make_node(op, ["x"], ["y"], name="bad")], [vi("x", dtype, [3])], [out("y", dtype, 1)])


def invalid_transpose(perm):
    node = h.make_node("Transpose", ["x"], ["y"], name="bad", perm=perm)
    return make([node], [vi("x", T.FLOAT, [2, 3])], [out(rank=2)])


#: TfIdfVectorizer's attributes for one 1-gram pool of two int64 values.
_TFIDF = dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1])


def tfidf_vectorizer(dtype):
    """TfIdfVectorizer (no native rule: onnx's own inference runs, and fails on an input type
    its schema does not take, float)."""
    node = h.make_node("TfIdfVectorizer", ["x"], ["y"], name="bad", pool_int64s=[1, 2], **_TFIDF)
    return make([node], [vi("x", dtype, [2, 3])], [out(rank=2)])


def unknown_type_into_onnx_rule():
    """TfIdfVectorizer (no native rule) fed by a custom op: onnx's per-node inference has no
    type for its input and fails without a verdict on the node (E002, not E011)."""
    nodes = [
        h.make_node("Custom", ["x"], ["t"], domain="custom"),
        h.make_node("TfIdfVectorizer", ["t"], ["y"], name="bad", pool_int64s=[1, 2], **_TFIDF),
    ]
    return make(nodes, [vi("x", T.INT64, [2, 3])], [out(rank=2)], extra_opsets=[("custom", 1)])


def conv(pads):
    node = h.make_node("Conv", ["x", "w"], ["y"], name="bad", pads=pads)
    ins = [vi("x", T.FLOAT, [1, 2, 8, 8]), vi("w", T.FLOAT, [4, 2, 3, 3])]
    return make([node], ins, [out(rank=4)])


def constant_of_shape(length: int):
    node = h.make_node("ConstantOfShape", ["s"], ["y"], name="bad")
    return make([node], [vi("s", T.INT64, [length])], [out()])


def concat_dims(first: int):
    node = h.make_node("Concat", ["a", "b"], ["y"], name="bad", axis=0)
    return make([node], [vi("a", T.FLOAT, [first, 2]), vi("b", T.FLOAT, [1, 2])], [out(rank=2)])


def initializer_bytes(n_bytes: int):
    t = onnx.TensorProto(name="t", data_type=T.INT64, dims=[2], raw_data=b"\1" + b"\0" * (n_bytes - 1))
    node = h.make_node("Reshape", ["x", "t"], ["y"], name="bad")
    return make([node], [vi("x", T.FLOAT, [2, 3])], [out(rank=2)], [t])


def function_call(recursive: bool = False, call_outputs: int = 1):
    """``y = local.F(x)``; F is ``Identity`` or (recursive) calls itself; the call binds
    ``call_outputs`` of F's one output."""
    body = [h.make_node("F" if recursive else "Identity", ["a"], ["b"], domain="local" if recursive else "")]
    fn = h.make_function("local", "F", ["a"], ["b"], body, [h.make_opsetid("", 17), h.make_opsetid("local", 1)])
    outs = ["y", "z"][:call_outputs]
    node = h.make_node("F", ["x"], outs, name="bad", domain="local")
    m = make([node], [vi("x", T.FLOAT, [2])], [out(o, rank=1) for o in outs], extra_opsets=[("local", 1)])
    m.functions.append(fn)
    return m


# ------------------------------------------------------------------------------ the cases


def concat_padded(rows: int):
    """``Concat(a[n, 2], Pad(a, rows more)[n + rows, 2], axis=1)``: needs ``n + rows == n``,
    which no n satisfies unless rows is 0."""
    nodes = [
        h.make_node("Pad", ["a", "pads"], ["p"], name="pad"),
        h.make_node("Concat", ["a", "p"], ["y"], name="bad", axis=1),
    ]
    return make(nodes, [vi("a", T.FLOAT, ["n", 2])], [out(rank=2)], [ints("pads", [0, 0, rows, 0])])


def if_condition(dims: list) -> onnx.ModelProto:
    """y = If(c) then Relu(x) else Neg(x) (node ``bad``), the bool condition of the given dims."""
    then = h.make_graph([h.make_node("Relu", ["x"], ["a"])], "then", [], [h.make_tensor_value_info("a", T.FLOAT, [2])])
    other = h.make_graph([h.make_node("Neg", ["x"], ["b"])], "else", [], [h.make_tensor_value_info("b", T.FLOAT, [2])])
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], name="bad", then_branch=then, else_branch=other)],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, dims), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def group_query_attention(softcap: float) -> onnx.ModelProto:
    """``com.microsoft.GroupQueryAttention`` (node ``bad``) on a packed query [1, s, 64] (4 heads,
    2 kv heads, head size 8) with a past of length ``p``, at ``softcap`` (Gemma-2's exports: 50)."""
    heads, kv, d = 4, 2, 8
    node = h.make_node(
        "GroupQueryAttention",
        ["q", "", "", "pk", "pv", "seqlens_k", "total"],
        ["y", "present_k", "present_v"],
        name="bad",
        domain="com.microsoft",
        num_heads=heads,
        kv_num_heads=kv,
        softcap=float(softcap),
    )
    g = h.make_graph(
        [node],
        "g",
        [
            vi("q", T.FLOAT, [1, "s", (heads + 2 * kv) * d]),
            vi("pk", T.FLOAT, [1, kv, "p", d]),
            vi("pv", T.FLOAT, [1, kv, "p", d]),
            vi("seqlens_k", T.INT32, [1]),
            vi("total", T.INT32, []),
        ],
        [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("y", "present_k", "present_v")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])


def attention(bias: bool, n_inputs: int = 7) -> onnx.ModelProto:
    """``com.microsoft.Attention`` (node ``bad``, 4 heads, hidden 64) on x[b, s, 64], with a zero
    bias or without one (an empty name, as onnxruntime-genai's Whisper encoder; ``n_inputs``
    counts the names written, 2 leaves the bias off the list)."""
    rng = np.random.default_rng(0)
    names = ["x", "w", "bias" if bias else ""] + [""] * (n_inputs - 3)
    node = h.make_node(
        "Attention",
        names[:n_inputs],
        ["y"],
        name="bad",
        domain="com.microsoft",
        num_heads=4,
        scale=0.25,
        qkv_hidden_sizes=[64, 64, 64],
    )
    inits = [numpy_helper.from_array(rng.standard_normal((64, 192)).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(np.zeros(192, np.float32), "bias"))
    g = h.make_graph(
        [node], "g", [vi("x", T.FLOAT, ["b", "s", 64])], [h.make_tensor_value_info("y", T.FLOAT, None)], inits
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])


def gather_block_quantized(computed: str | None = None, via: str = "input") -> onnx.ModelProto:
    """``com.microsoft.GatherBlockQuantized`` (node ``bad``; 4-bit, blocks of 16) of a uint8
    table [16, 16] at ids[b, s], with scales and zero points; every operand an initializer, or
    the one named ``computed`` ("data", "scales", "zp") a graph input (``via="input"``), the
    output of a Cast of an initializer (``"cast"``) or an Identity of one (``"identity"``)."""
    rng = np.random.default_rng(0)
    arrays = {
        "data": rng.integers(0, 255, (16, 16), dtype=np.uint8),
        "scales": np.ones((16, 2), np.float32),
        "zp": np.full((16, 1), 0x88, np.uint8),
    }
    inits, nodes = [], []
    inputs = [vi("ids", T.INT64, ["b", "s"])]
    for name, a in arrays.items():
        if name != computed:
            inits.append(numpy_helper.from_array(a, name))
        elif via == "input":
            inputs.append(vi(name, h.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
        elif via == "cast":
            inits.append(numpy_helper.from_array(a.astype(np.int32), f"{name}_int32"))
            nodes.append(h.make_node("Cast", [f"{name}_int32"], [name], to=h.np_dtype_to_tensor_dtype(a.dtype)))
        else:
            inits.append(numpy_helper.from_array(a, f"{name}_stored"))
            nodes.append(h.make_node("Identity", [f"{name}_stored"], [name]))
    nodes.append(
        h.make_node(
            "GatherBlockQuantized",
            ["data", "ids", "scales", "zp"],
            ["y"],
            name="bad",
            domain="com.microsoft",
            gather_axis=0,
            quantize_axis=1,
            block_size=16,
            bits=4,
        )
    )
    g = h.make_graph(nodes, "g", inputs, [vi("y", T.FLOAT, ["b", "s", 32])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])


def if_with_constant_branch(dims: list) -> onnx.ModelProto:
    """y = If(c) (node ``bad``): then a Constant of ``dims`` (optimum's merged decoders give the
    encoder's past as an empty [0, 4, 1, 8] there), else Identity(x), x of the same rank
    (``[n, 4, s, 8]`` for rank 4, ``[n]`` for rank 1)."""
    value = h.make_tensor("v", T.FLOAT, dims, np.zeros(int(np.prod(dims)), np.float32).tolist())
    then = h.make_graph(
        [h.make_node("Constant", [], ["a"], value=value)], "then", [], [h.make_tensor_value_info("a", T.FLOAT, dims)]
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["b"])], "else", [], [h.make_tensor_value_info("b", T.FLOAT, None)]
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], name="bad", then_branch=then, else_branch=other)],
        "g",
        [
            h.make_tensor_value_info("c", T.BOOL, []),
            h.make_tensor_value_info("x", T.FLOAT, ["n", 4, "s", 8] if len(dims) == 4 else ["n"][: len(dims)]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def reshape_to_runtime_rank(length: int | str, declared: bool = False) -> onnx.ModelProto:
    """Relu(Reshape(x, s)) (Reshape node ``bad``) with the shape input ``s`` of ``length``
    elements: a symbol leaves the Reshape's rank to run time. ``declared``: the model declares
    the Reshape's result ``[p, q]`` in its ``value_info``."""
    g = h.make_graph(
        [h.make_node("Reshape", ["x", "s"], ["xr"], name="bad"), h.make_node("Relu", ["xr"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 8, 8]), h.make_tensor_value_info("s", T.INT64, [length])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        value_info=[h.make_tensor_value_info("xr", T.FLOAT, ["p", "q"])] if declared else None,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def if_branch_declared_rank(length: int | str, declared: bool = True) -> onnx.ModelProto:
    """Relu(If(c)) (If node ``bad``): the then branch gives Reshape(x, s), the shape input ``s``
    of ``length`` elements (a symbol leaves its rank to run time), declared ``[p, q]`` as the
    branch's output when ``declared``; the else branch gives Identity(x), x ``[n, 128]``.
    silero-vad's nested Ifs have the same pattern."""
    then = h.make_graph(
        [h.make_node("Reshape", ["x", "s"], ["a"])],
        "then",
        [],
        [h.make_tensor_value_info("a", T.FLOAT, ["p", "q"] if declared else None)],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["b"])], "else", [], [h.make_tensor_value_info("b", T.FLOAT, None)]
    )
    g = h.make_graph(
        [
            h.make_node("If", ["c"], ["yi"], name="bad", then_branch=then, else_branch=other),
            h.make_node("Relu", ["yi"], ["y"]),
        ],
        "g",
        [
            h.make_tensor_value_info("c", T.BOOL, []),
            h.make_tensor_value_info("x", T.FLOAT, ["n", 128]),
            h.make_tensor_value_info("s", T.INT64, [length]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def dilated_conv(auto_pad: str, dilations: Sequence[int], op: str = "Conv") -> onnx.ModelProto:
    """y = ``op``(x, w) (node ``bad``) of x [1, 1, h, w] and a 3x3 kernel, with ``dilations`` and
    ``auto_pad`` (NOTSET: pads of 2 on each side). ``ConvInteger`` reads uint8."""
    integer = op == "ConvInteger"
    dtype, np_dtype = (T.UINT8, np.uint8) if integer else (T.FLOAT, np.float32)
    attrs = {"kernel_shape": [3, 3], "dilations": list(dilations)}
    if auto_pad == "NOTSET":
        attrs["pads"] = [2, 2, 2, 2]
    else:
        attrs["auto_pad"] = auto_pad
    return make(
        [h.make_node(op, ["x", "w"], ["y"], name="bad", **attrs)],
        [vi("x", dtype, [1, 1, "h", "w"])],
        [out("y", T.INT32 if integer else T.FLOAT)],
        [numpy_helper.from_array(np.ones((1, 1, 3, 3), np_dtype), "w")],
    )


def conv_transpose(strides: Sequence[int], dilations: Sequence[int], output_padding: Sequence[int]) -> onnx.ModelProto:
    """y = ConvTranspose(x, w) (node ``bad``) of x [1, 1, h, w] and a 2x2 kernel."""
    node = h.make_node(
        "ConvTranspose",
        ["x", "w"],
        ["y"],
        name="bad",
        kernel_shape=[2, 2],
        strides=list(strides),
        dilations=list(dilations),
        output_padding=list(output_padding),
    )
    return make(
        [node],
        [vi("x", T.FLOAT, [1, 1, "h", "w"])],
        [out("y")],
        [numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w")],
    )


def fp16_transpose_matmul(
    perm: Sequence[int] = (1, 0, 2),
    weight: Sequence[int] = (8, 4),
    side: int = 0,
    dtype: int = T.FLOAT16,
    weight_as: str = "initializer",
    before: str | None = None,
    after: str | None = None,
    static: bool = False,
) -> onnx.ModelProto:
    """y = MatMul(Transpose(x, perm), w) (MatMul node ``bad``; the Transpose is its input
    ``side``, w the other one), x of the rank of ``perm`` whose transposed last two dims fit w
    (``[.., m, 8]`` against w ``[8, 4]`` on side 0; w ``[5, 8]`` against ``[.., 8, m]`` on side 1),
    w random of shape ``weight``, an ``initializer``, a ``constant`` node or a graph ``input``.
    ``before``: the Transpose reads ``Reshape(x, [0, 0, ..])`` (an identity) or ``Relu(x)``
    instead of x; ``after``: y is ``Add(MatMul, bias)`` or ``Mul(MatMul, 0.5)`` instead;
    ``static``: x's symbols are ints (``m`` 3, ``d0`` 5, ...). A paddle2onnx CRNN converted to
    float16 has perm [1, 0, 2] on side 0, after a Reshape, before an Add (onnxruntime crashes)."""
    r = len(perm)
    k = weight[-2] if side == 0 and len(weight) > 1 else weight[-1]  # the contracted dim
    moved = [5 + i if static else f"d{i}" for i in range(r - 2)]
    moved += [3 if static else "m", k] if side == 0 else [k, 3 if static else "m"]
    shape = [None] * r
    for i, p in enumerate(perm):
        shape[p] = moved[i]
    np_dtype = np.float16 if dtype == T.FLOAT16 else np.float32
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.random(weight).astype(np_dtype), "w")
    inputs = [h.make_tensor_value_info("x", dtype, shape)]
    inits = []
    nodes = []
    src = "x"
    if before == "Reshape":
        inits.append(numpy_helper.from_array(np.zeros(r, np.int64), "same"))
        nodes.append(h.make_node("Reshape", ["x", "same"], ["xb"]))
        src = "xb"
    elif before is not None:
        nodes.append(h.make_node(before, ["x"], ["xb"]))
        src = "xb"
    nodes.append(h.make_node("Transpose", [src], ["t"], perm=list(perm)))
    if weight_as == "initializer":
        inits.append(w)
    elif weight_as == "constant":
        nodes.append(h.make_node("Constant", [], ["w"], value=w))
    else:
        inputs.append(h.make_tensor_value_info("w", dtype, list(weight)))
    mm = "y" if after is None else "mm"
    nodes.append(h.make_node("MatMul", ["t", "w"] if side == 0 else ["w", "t"], [mm], name="bad"))
    if after == "Add":
        inits.append(numpy_helper.from_array(rng.random(weight[-1]).astype(np_dtype), "bias"))
        nodes.append(h.make_node("Add", [mm, "bias"], ["y"]))
    elif after == "Mul":
        inits.append(numpy_helper.from_array(np.array(0.5, np_dtype), "scale"))
        nodes.append(h.make_node("Mul", [mm, "scale"], ["y"]))
    rank = max(r, len(weight)) if len(weight) > 1 else r - 1
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", dtype, [None] * rank)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@dataclass(frozen=True)
class Case:
    """A model and whether rule ``code`` must (``triggers``) or must not report on it."""

    code: str
    label: str
    build: Callable[[], onnx.ModelProto]
    triggers: bool
    target: str = "onnx"
    node: str | None = "bad"  # the node name the finding must carry (None: not checked)

    @property
    def id(self) -> str:
        return f"{self.code}-{'hit' if self.triggers else 'clean'}-{self.label}"


CASES: list[Case] = [
    # Reshape
    Case("R001", "two-minus-ones", lambda: reshape_const([2, 3, 4], [-1, -1]), True),
    Case("R001", "one-minus-one", lambda: reshape_const([2, 3, 4], [-1, 4]), False),
    Case("R002", "allowzero-0-and-minus-1", lambda: reshape_const([2, 3, 4], [0, -1], opset=14, allowzero=1), True),
    Case("R002", "allowzero-0-copy", lambda: reshape_const([2, 3, 4], [0, -1], opset=14, allowzero=0), False),
    Case("R003", "copy-past-rank", lambda: reshape_const([2, 12], [0, 3, 0]), True),
    Case("R003", "copy-within-rank", lambda: reshape_const([2, 12], [0, 3, 4]), False),
    Case("R004", "static", lambda: reshape_const([2, 3, 4], [5, 5]), True),
    Case("R004", "not-divisible", lambda: reshape_const([2, 3, 4], [5, -1]), True),
    Case("R004", "symbolic", reshape_symbolic_mismatch, True),
    Case("R004", "int64-overflow", lambda: reshape_const(["n"], [2**62, 4, -1]), True),
    Case("R004", "equal-counts", lambda: reshape_const([2, 3, 4], [4, 6]), False),
    Case("R005", "minus-two", lambda: reshape_const([2, 3, 4], [-2, 12]), True),
    Case("R005", "valid-values", lambda: reshape_const([2, 3, 4], [2, 12]), False),
    Case("R006", "reshape-1", lambda: reshape_v1([2, 3, 4], [6, 4]), True),
    Case("R006", "reshape-13", lambda: reshape_const([2, 3, 4], [6, 4], opset=13), False),
    Case("R007", "attribute-under-opset-13", reshape5_with_attribute_only, True),
    Case("R007", "input-under-opset-4", reshape1_with_input, True),
    Case("R007", "both-forms-under-opset-13", lambda: reshape_both_forms(13), True),
    Case("R007", "both-forms-under-opset-4", lambda: reshape_both_forms(4), True),
    Case("R007", "input-under-opset-13", lambda: reshape_const([2, 3, 4], [6, 4], opset=13), False),
    Case("R008", "int32-in-reshape-1", lambda: reshape_v1([2, 3, 4], [6, 4], dtype=T.INT32), True),
    Case("R008", "bfloat16-in-reshape-5", lambda: reshape_const([2, 3, 4], [6, 4], opset=12, dtype=T.BFLOAT16), True),
    Case("R008", "int32-in-reshape-13", lambda: reshape_const([2, 3, 4], [6, 4], opset=13, dtype=T.INT32), False),
    Case("R008", "float-in-reshape-1", lambda: reshape_v1([2, 3, 4], [6, 4]), False),
    Case("R009", "same-shape", lambda: reshape_const([2, 3], [2, 3]), True),
    Case("R009", "transposed-shape", lambda: reshape_const([2, 3], [3, 2]), False),
    Case("R010", "runtime-canonical", reshape_runtime_canonical, True),
    Case("R010", "runtime-dynamic", reshape_runtime_dynamic, False),
    Case("R010", "constant-target", lambda: reshape_const([2, 3, 4], [0, -1]), False),
    Case("R011", "int32-target", lambda: reshape_const([2, 3, 4], [6, 4], tdtype=np.int32), True),
    Case("R011", "rank-2-target", reshape_target_rank2, True),
    Case("R011", "int64-target", lambda: reshape_const([2, 3, 4], [6, 4]), False),
    # Shape
    Case("S001", "start-in-shape-13", lambda: shape_node([2, 3, 4], 13, start=1), True),
    Case("S001", "start-in-shape-15", lambda: shape_node([2, 3, 4], 15, start=1), False),
    Case("S002", "end-past-rank", lambda: shape_node(["a", "b", "c"], 15, end=10), True),
    Case("S002", "end-within-rank", lambda: shape_node(["a", "b", "c"], 15, end=2), False),
    Case("S003", "start-after-end", lambda: shape_node(["a", "b", "c"], 15, start=2, end=1), True),
    Case("S003", "start-before-end", lambda: shape_node(["a", "b", "c"], 15, start=1, end=2), False),
    Case("S004", "static-input", lambda: shape_node([2, 3], 17), True),
    Case("S004", "symbolic-input", lambda: shape_node(["batch", 3], 17), False),
    # Graph
    Case("G001", "nonzero", nonzero_chain, True),
    Case("G001", "static-relu", relu_model, False),
    Case("G002", "2x3-plus-4x3", lambda: binary("Add", [2, 3], [4, 3]), True),
    Case("G002", "2x3-plus-1x3", lambda: binary("Add", [2, 3], [1, 3]), False),
    Case("G003", "batch-vs-seq", lambda: binary("Add", ["batch", 3], ["seq", 3]), True),
    Case("G003", "batch-vs-batch", lambda: binary("Add", ["batch", 3], ["batch", 3]), False),
    Case("G009", "symbolic-dim-to-float", lambda: dim_to_float("h"), True),
    Case("G009", "static-dim-to-float", lambda: dim_to_float(5), False),
    Case("G012", "reshape-minus-one-of-n", lambda: reshape_const(["n"], [-1, 4]), True),
    Case("G012", "reshape-minus-one-of-4n", lambda: reshape_const([4, "n"], [-1, 4]), False),
    Case("G016", "squared-eight-times", lambda: squared_shape(8), True, node=None),
    Case("G016", "squared-twice", lambda: squared_shape(2), False),
    Case("G015", "concat-one-row-apart", lambda: concat_padded(1), True, node=None),
    Case("G015", "concat-same-rows", lambda: concat_padded(0), False),
    Case("G004", "cycle", cycle, True),
    Case("G004", "out-of-order", out_of_order, True, node=None),
    Case("G004", "in-order", in_order, False),
    Case("G005", "undefined-input", undefined_input, True),
    Case("G005", "defined-inputs", lambda: binary("Add", [2], [2]), False),
    Case("G006", "value-info-dim", lambda: declared([2, 4]), True),
    Case("G006", "value-info-rank", lambda: declared([6]), True),
    Case("G006", "output-type", lambda: declared([2, 3], T.INT64, "output"), True, node="id"),
    Case("G006", "symbolic-output", lambda: declared_symbolic(["seq", "batch"]), True),
    Case("G006", "value-info-agrees", lambda: declared([2, 3]), False),
    Case("G006", "join-declared-as-one-branch", lambda: declared_join([3]), False),
    Case("G013", "nonzero-count-declared", lambda: declared_after_nonzero([2, "nz"]), True),
    Case("G013", "nonzero-count-open", lambda: declared_after_nonzero([2, None]), False),
    Case("G013", "join-declared-as-one-branch", lambda: declared_join([3]), False),
    Case("G006", "value-info-open-dims", lambda: declared([None, "anything"]), False),
    Case("G006", "symbolic-output-agrees", lambda: declared_symbolic(["batch", "seq"]), False),
    Case("G007", "custom-domain", custom_op, True),
    Case("G014", "ort-op-in-default-domain", lambda: contrib_op("SimplifiedLayerNormalization", "", 2), True),
    Case("G014", "op-before-its-opset", lambda: contrib_op("Gelu", "", 1, opset=17), True),
    Case("G014", "custom-domain", custom_op, False),
    Case("G014", "ort-target", lambda: contrib_op("SimplifiedLayerNormalization", "", 2), False, "onnxruntime"),
    Case("G014", "op-at-its-opset", lambda: contrib_op("Gelu", "", 1, opset=20), False),
    Case("G007", "standard-op", relu_model, False),
    Case("G008", "sqrt-of-int64", lambda: unary("Sqrt", T.INT64), True),
    Case("G008", "add-float-int64", lambda: binary("Add", [2], [2], T.FLOAT, T.INT64), True),
    Case("G008", "sqrt-of-float", lambda: unary("Sqrt", T.FLOAT), False),
    Case("G008", "add-int64-int64", lambda: binary("Add", [2], [2], T.INT64, T.INT64), False),
    # Targets
    Case("P001", "bool-data", lambda: reshape_const([2, 3], [3, 2], dtype=T.BOOL), True, "openvino"),
    Case("P001", "float-data", lambda: reshape_const([2, 3], [3, 2]), False, "openvino"),
    Case("P001", "bool-data-onnx-target", lambda: reshape_const([2, 3], [3, 2], dtype=T.BOOL), False, "onnx"),
    Case("P002", "zero-in-target", lambda: reshape_const([2, 3, 4], [0, -1]), True, "openvino"),
    Case("P002", "no-zero-in-target", lambda: reshape_const([2, 3, 4], [6, 4]), False, "openvino"),
    Case("P003", "qattention", lambda: contrib_op("QAttention", "com.microsoft", 5), True, "openvino"),
    Case("P003", "custom-domain", custom_op, True, "openvino"),
    Case("P003", "attention", lambda: contrib_op("Attention", "com.microsoft", 2), False, "openvino"),
    Case("P003", "standard-op", relu_model, False, "openvino"),
    Case("P004", "sequence-output", sequence_output, True, "openvino", node=None),
    Case("P004", "tensor-output", relu_model, False, "openvino", node=None),
    Case("P005", "loop-pass-through", lambda: loop_state(True), True, "openvino"),
    Case("P003", "local-function", local_function_call, True, "openvino"),
    Case("P201", "local-function", local_function_call, False, "onnxruntime"),
    Case("P005", "loop-own-output", lambda: loop_state(False), False, "openvino"),
    Case("P006", "qdq-scale-alone", qdq_matmul_scale, True, "openvino"),
    Case("P007", "if-condition-rank-2", lambda: if_condition([1, 1]), True, "openvino"),
    Case("P008", "shape-of-unknown-length", lambda: reshape_to_runtime_rank("k"), True, "openvino"),
    Case("P008", "shape-of-length-4", lambda: reshape_to_runtime_rank(4), False, "openvino"),
    Case("P008", "unknown-length-onnxruntime", lambda: reshape_to_runtime_rank("k"), False, "onnxruntime"),
    Case("P008", "if-empty-constant-branch", lambda: if_with_constant_branch([0, 4, 1, 8]), True, "openvino"),
    Case("P008", "if-constant-branch", lambda: if_with_constant_branch([1, 4, 1, 8]), False, "openvino"),
    Case("P008", "if-empty-vector-branch", lambda: if_with_constant_branch([0]), False, "openvino"),
    Case("P008", "declared-rank-of-unknown-length", lambda: reshape_to_runtime_rank("k", True), True, "openvino"),
    Case("P008", "declared-rank-of-length-2", lambda: reshape_to_runtime_rank(2, True), False, "openvino"),
    Case("P008", "if-branch-declared-rank", lambda: if_branch_declared_rank("k"), True, "openvino"),
    Case("P008", "if-branch-declared-rank-of-length-2", lambda: if_branch_declared_rank(2), False, "openvino"),
    Case("P202", "fp16-batch-transpose-matmul", fp16_transpose_matmul, True, "onnxruntime"),
    Case("P202", "fp16-last-two-transpose", lambda: fp16_transpose_matmul((0, 2, 1)), False, "onnxruntime"),
    Case("P202", "fp16-rank-3-weight", lambda: fp16_transpose_matmul(weight=(1, 8, 4)), False, "onnxruntime"),
    Case("P202", "fp32-batch-transpose", lambda: fp16_transpose_matmul(dtype=T.FLOAT), False, "onnxruntime"),
    Case("P202", "fp16-onnx-target", fp16_transpose_matmul, False, "onnx"),
    Case("P203", "conv-dilated-same-upper", lambda: dilated_conv("SAME_UPPER", [2, 2]), True, "onnxruntime"),
    Case("P203", "conv-one-dilated-axis-same-lower", lambda: dilated_conv("SAME_LOWER", [1, 3]), True, "onnxruntime"),
    Case(
        "P203",
        "conv-integer-dilated-same",
        lambda: dilated_conv("SAME_UPPER", [2, 2], "ConvInteger"),
        True,
        "onnxruntime",
    ),
    Case("P203", "conv-undilated-same", lambda: dilated_conv("SAME_UPPER", [1, 1]), False, "onnxruntime"),
    Case("P203", "conv-dilated-explicit-pads", lambda: dilated_conv("NOTSET", [2, 2]), False, "onnxruntime"),
    Case("P203", "conv-dilated-valid", lambda: dilated_conv("VALID", [2, 2]), False, "onnxruntime"),
    Case(
        "P203",
        "conv-transpose-dilated-same",
        lambda: dilated_conv("SAME_UPPER", [2, 2], "ConvTranspose"),
        False,
        "onnxruntime",
    ),
    Case("P203", "conv-dilated-same-onnx-target", lambda: dilated_conv("SAME_UPPER", [2, 2]), False, "onnx"),
    Case(
        "P204",
        "output-padding-1-stride-1-dilation-2",
        lambda: conv_transpose([1, 1], [2, 2], [1, 0]),
        True,
        "onnxruntime",
    ),
    Case("P204", "output-padding-2-stride-2", lambda: conv_transpose([2, 2], [1, 1], [0, 2]), True, "onnxruntime"),
    Case("P204", "output-padding-1-stride-2", lambda: conv_transpose([2, 2], [1, 1], [1, 1]), False, "onnxruntime"),
    Case(
        "P204", "output-padding-1-stride-1-onnx-target", lambda: conv_transpose([1, 1], [2, 2], [1, 0]), False, "onnx"
    ),
    Case("P009", "softcap-50", lambda: group_query_attention(50.0), True, "openvino"),
    Case("P009", "softcap-0", lambda: group_query_attention(0.0), False, "openvino"),
    Case("P009", "softcap-50-onnxruntime", lambda: group_query_attention(50.0), False, "onnxruntime"),
    Case("P010", "no-bias", lambda: attention(False), True, "openvino"),
    Case("P010", "zero-bias", lambda: attention(True), False, "openvino"),
    Case("P010", "no-bias-onnxruntime", lambda: attention(False), False, "onnxruntime"),
    Case("P011", "data-input", lambda: gather_block_quantized("data"), True, "openvino"),
    Case("P011", "scales-cast", lambda: gather_block_quantized("scales", "cast"), True, "openvino"),
    Case("P011", "zp-input", lambda: gather_block_quantized("zp"), True, "openvino"),
    Case("P011", "initializers", lambda: gather_block_quantized(), False, "openvino"),
    Case("P011", "data-identity", lambda: gather_block_quantized("data", "identity"), False, "openvino"),
    Case("P011", "data-input-onnxruntime", lambda: gather_block_quantized("data"), False, "onnxruntime"),
    Case("P007", "if-condition-rank-1", lambda: if_condition([1]), False, "openvino"),
    Case("P007", "if-condition-rank-2-onnxruntime", lambda: if_condition([1, 1]), False, "onnxruntime"),
    Case("P006", "qdq-scale-int8", lambda: qdq_matmul_scale(zero_point=np.int8), True, "openvino"),
    Case("P006", "qdq-scale-shared", lambda: qdq_matmul_scale("shared"), False, "openvino"),
    Case("P006", "float-scale", lambda: qdq_matmul_scale("float_scale"), False, "openvino"),
    Case("P006", "qdq-scale-int16", lambda: qdq_matmul_scale(zero_point=np.int16), False, "openvino"),
    Case("P006", "qdq-scale-onnxruntime", qdq_matmul_scale, False, "onnxruntime"),
    Case("P101", "int64-data", lambda: reshape_const([2, 3], [3, 2], dtype=T.INT64), True, "onednn"),
    Case("P101", "float16-data", lambda: reshape_const([2, 3], [3, 2], dtype=T.FLOAT16), False, "onednn"),
    Case("P102", "3e9-runtime-target", lambda: reshape_to_own_shape([1, 3_000_000_000]), True, "onednn"),
    Case("P102", "3e9-constant-target", lambda: reshape_const([1, 3_000_000_000], [3_000_000_000, 1]), False, "onednn"),
    Case("P102", "small-target", lambda: reshape_const([2, 3], [3, 2]), False, "onednn"),
    Case("P103", "runtime-target", reshape_runtime_canonical, True, "onednn"),
    Case("P103", "dynamic-runtime-target", reshape_runtime_dynamic, True, "onednn"),
    Case("P103", "constant-target", lambda: reshape_const([2, 3], [3, 2]), False, "onednn"),
    Case("P201", "cuda-only-contrib-op", lambda: contrib_op("GemmFastGelu", "com.microsoft", 2), True, "onnxruntime"),
    Case("P201", "custom-domain", custom_op, True, "onnxruntime"),
    Case("P201", "opset-6-default-op", lambda: relu_model_at(5), True, "onnxruntime"),
    Case(
        "P201",
        "ort-op-in-default-domain",
        lambda: contrib_op("SimplifiedLayerNormalization", "", 2),
        False,
        "onnxruntime",
    ),
    Case("P201", "cpu-contrib-op", lambda: contrib_op("FusedMatMul", "com.microsoft", 2), False, "onnxruntime"),
    # Model / inference
    Case("G010", "recursive-function", lambda: function_call(recursive=True), True, node=None),
    Case("G010", "plain-function", function_call, False),
    Case("G011", "two-outputs-of-one", lambda: function_call(call_outputs=2), True),
    Case("G011", "one-output-of-one", function_call, False),
    Case("E002", "onnx-inference-fails", lambda: tfidf_vectorizer(T.FLOAT), True),
    Case("E011", "conv-negative-pads", lambda: conv([0, -1, 0, 0]), True),
    Case("E011", "conv-valid-pads", lambda: conv([0, 1, 0, 1]), False),
    Case("E012", "shape-of-length-2000", lambda: constant_of_shape(2000), True),
    Case("E012", "shape-of-length-3", lambda: constant_of_shape(3), False),
    Case("E013", "concat-past-int64", lambda: concat_dims(2**63 - 1), True),
    Case("E013", "concat-in-int64", lambda: concat_dims(2**62), False),
    Case("E014", "raw-data-too-short", lambda: initializer_bytes(8), True, node=None),
    Case("E014", "raw-data-right", lambda: initializer_bytes(16), False),
    # node errors, each under its own code (docs/rules.md: codes that changed)
    Case(
        "E018", "relu-of-two-inputs", lambda: node_model("Relu", [vi("x", T.FLOAT, [2]), vi("z", T.FLOAT, [2])]), True
    ),
    Case("E018", "relu-of-one-input", lambda: node_model("Relu", [vi("x", T.FLOAT, [2])]), False),
    Case("E019", "gather-index-5-of-3", lambda: gather_known(5), True),
    Case("E019", "gather-index-2-of-3", lambda: gather_known(2), False),
    Case("E024", "slice-step-0", lambda: slice_steps(0), True),
    Case("E024", "slice-step-1", lambda: slice_steps(1), False),
    Case("E025", "concat-rank-2-and-1", lambda: concat_ranks([2, 3], [2]), True),
    Case("E025", "concat-rank-2-and-2", lambda: concat_ranks([2, 3], [2, 3]), False),
    Case("E026", "split-5-in-2", lambda: split_even(5), True),
    Case("E026", "split-6-in-2", lambda: split_even(6), False),
    Case("E010", "flatten-axis-past-rank", lambda: node_model("Flatten", [vi("x", T.FLOAT, [2, 3])], axis=3), True),
    Case("E010", "flatten-axis-in-rank", lambda: node_model("Flatten", [vi("x", T.FLOAT, [2, 3])], axis=1), False),
    Case("E012", "rank-2000-shape", lambda: constant_of_shape_of_length(2000), True),
    Case("E012", "rank-3-shape", lambda: constant_of_shape_of_length(3), False),
    Case("E013", "concat-overflow", lambda: concat_of(2**62 + 5), True),
    Case("E013", "concat-in-range", lambda: concat_of(2**61), False),
]

from testkit.structure_models import cases as _structure_cases  # noqa: E402  (M001-M031)

CASES += _structure_cases()


def cases_for(code: str) -> list[Case]:
    return [c for c in CASES if c.code == code]


# ------------------------------------------------------------------------------ the engine's own codes


def node_model(op, inputs, n_out=1, inits=(), opset=17, domain="", extra_opsets=(), **attrs):
    """One node ``bad`` of ``op`` over ``inputs`` (ValueInfos), its outputs graph outputs of open shape."""
    outs = [f"y{i}" for i in range(n_out)]
    node = h.make_node(op, [i.name for i in inputs] + [t.name for t in inits], outs, name="bad", domain=domain, **attrs)
    graph_inputs = list(inputs)
    return make([node], graph_inputs, [vi(o, T.FLOAT, None) for o in outs], inits, opset, extra_opsets=extra_opsets)


def gather_known(index: int):
    """Gather of the constant [1, 2, 3] at the constant index ``index`` (out of range from 3)."""
    return node_model("Gather", [], inits=[ints("d", [1, 2, 3]), ints("i", [index])], axis=0)


def slice_steps(step: int):
    """Slice-13 of x[6] from 0 to 6 with step ``step`` (0 is invalid)."""
    inits = [ints("s", [0]), ints("e", [6]), ints("a", [0]), ints("k", [step])]
    return node_model("Slice", [vi("x", T.FLOAT, [6])], inits=inits, opset=13)


def concat_ranks(a_shape, b_shape):
    """Concat on axis 0 of inputs of shapes ``a_shape`` and ``b_shape``."""
    return node_model("Concat", [vi("a", T.FLOAT, a_shape), vi("b", T.FLOAT, b_shape)], axis=0)


def split_even(n: int):
    """Split-13 of x[n] into 2 equal outputs (no ``split`` input): invalid for an odd ``n``."""
    return node_model("Split", [vi("x", T.FLOAT, [n])], n_out=2, opset=13, axis=0)


def defined_twice(twice: bool):
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="first"),
        h.make_node("Neg", ["x"], ["r" if twice else "s"], name="bad"),
        h.make_node("Add", ["r", "r" if twice else "s"], ["y"], name="add"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2])], [out(rank=1)])


def without_default_opset(missing: bool):
    m = relu_model()
    if missing:
        del m.opset_import[:]
        m.opset_import.append(h.make_opsetid("custom", 1))
    return m


def negative_input_dim(dim: int):
    return make([h.make_node("Relu", ["x"], ["y"], name="bad")], [vi("x", T.FLOAT, [dim, 3])], [out(rank=2)])


def placeholder_input_dim(name: str):
    return make([h.make_node("Relu", ["x"], ["y"], name="bad")], [vi("x", T.FLOAT, [name, 3])], [out(rank=2)])


def attribute_of_type(value):
    return node_model("Flatten", [vi("x", T.FLOAT, [2, 3, 4])], axis=value)


def cast_of(value: float):
    const = h.make_node("Constant", [], ["c"], name="c", value=h.make_tensor("v", T.FLOAT, [1], [value]))
    cast = h.make_node("Cast", ["c"], ["y"], name="bad", to=T.INT64)
    return make([const, cast], [], [out(dtype=T.INT64, rank=1)])


def squeeze(axis_size: int):
    return node_model("Squeeze", [vi("x", T.FLOAT, [2, axis_size])], inits=[ints("axes", [1])])


def unsqueeze(axes):
    return node_model("Unsqueeze", [vi("x", T.FLOAT, [2, 3])], inits=[ints("axes", axes)])


def slice_neg_step(end: int):
    inits = [ints("starts", [-1]), ints("ends", [end]), ints("axes", [0]), ints("steps", [-1])]
    return node_model("Slice", [vi("x", T.FLOAT, [5])], inits=inits)


def constant(with_value: bool):
    attrs = {"value": h.make_tensor("v", T.FLOAT, [1], [1.0])} if with_value else {}
    return make([h.make_node("Constant", [], ["y"], name="bad", **attrs)], [], [out(rank=1)])


def constant_of_shape_values(values):
    return node_model("ConstantOfShape", [], inits=[ints("shape", values)])


def range_delta(delta: int):
    return node_model("Range", [], inits=[ints("start", 0), ints("limit", 5), ints("delta", delta)])


def tile(repeats):
    return node_model("Tile", [vi("x", T.FLOAT, [2, 3])], inits=[ints("repeats", repeats)])


def matmul(a_shape):
    return node_model("MatMul", [vi("a", T.FLOAT, a_shape), vi("b", T.FLOAT, [3, 4])])


def gemm(a_shape):
    return node_model("Gemm", [vi("a", T.FLOAT, a_shape), vi("b", T.FLOAT, [3, 4])])


def conv_input(rank: int):
    return node_model("Conv", [vi("x", T.FLOAT, [1, 3, 8, 8][:rank]), vi("w", T.FLOAT, [4, 3, 3, 3][:rank])])


def maxpool_input(rank: int):
    return node_model("MaxPool", [vi("x", T.FLOAT, [1, 3, 8, 8][:rank])], kernel_shape=[2, 2][: max(rank - 2, 1)])


def split_to_sequence(split: int):
    return make(
        [h.make_node("SplitToSequence", ["x", "s"], ["y"], name="bad")],
        [vi("x", T.FLOAT, [4, 3])],
        [h.make_tensor_sequence_value_info("y", T.FLOAT, None)],
        [ints("s", split)],
    )


def optional_node(typed: bool):
    attrs = {"type": h.make_tensor_type_proto(T.FLOAT, [2])} if typed else {}
    node = h.make_node("Optional", [], ["y"], name="bad", **attrs)
    return make(
        [node],
        [],
        [h.make_value_info("y", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [2])))],
        opset=18,
    )


def optional_get(empty: bool):
    nodes = [
        h.make_node(
            "Optional",
            [] if empty else ["x"],
            ["o"],
            name="opt",
            **({"type": h.make_tensor_type_proto(T.FLOAT, [2])} if empty else {}),
        ),
        h.make_node("OptionalGetElement", ["o"], ["y"], name="bad"),
    ]
    return make(nodes, [vi("x", T.FLOAT, [2])], [out(rank=1)], opset=18)


def bias_split_gelu(hidden: int):
    return node_model(
        "BiasSplitGelu",
        [vi("x", T.FLOAT, [1, 4, hidden]), vi("b", T.FLOAT, [hidden])],
        domain="com.microsoft",
        extra_opsets=[("com.microsoft", 1)],
    )


def pad_with(pads):
    return node_model("Pad", [vi("x", T.FLOAT, [2, 3])], inits=[ints("pads", pads)])


def topk(k: int):
    return node_model("TopK", [vi("x", T.FLOAT, [2, 3])], n_out=2, inits=[ints("k", [k])])


def onehot(depth: int):
    return node_model(
        "OneHot",
        [vi("i", T.INT64, [3])],
        inits=[ints("depth", depth), onnx.numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "values")],
    )


def einsum(eq: str):
    return node_model("Einsum", [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [3, 4])], equation=eq)


def det(shape):
    return node_model("Det", [vi("x", T.FLOAT, shape)])


def depth_to_space(blocksize: int):
    return node_model("DepthToSpace", [vi("x", T.FLOAT, [1, 8, 2, 2])], blocksize=blocksize)


def resize_scales(scales):
    empty = numpy_helper.from_array(np.array([], np.float32), "roi")
    sc = numpy_helper.from_array(np.array(scales, np.float32), "scales")
    return node_model("Resize", [vi("x", T.FLOAT, [1, 3, 4, 4])], inits=[empty, sc])


def dft(shape):
    return node_model("DFT", [vi("x", T.FLOAT, shape)], opset=17)


def lstm(direction: str):
    ins = [vi("x", T.FLOAT, [5, 2, 3]), vi("w", T.FLOAT, [1, 16, 3]), vi("r", T.FLOAT, [1, 16, 4])]
    return node_model("LSTM", ins, n_out=3, hidden_size=4, direction=direction)


CASES += [
    Case("E002", "onnx-has-no-input-type", unknown_type_into_onnx_rule, True),
    Case("E002", "onnx-inference-succeeds", lambda: tfidf_vectorizer(T.INT64), False),
    Case("E004", "output-defined-twice", lambda: defined_twice(True), True),
    Case("E004", "outputs-defined-once", lambda: defined_twice(False), False),
    Case("E005", "no-default-opset", lambda: without_default_opset(True), True, node=None),
    Case("E005", "default-opset", lambda: without_default_opset(False), False),
    Case("E006", "input-dim-minus-one", lambda: negative_input_dim(-1), True, node=None),
    Case("E006", "input-dim-two", lambda: negative_input_dim(2), False),
    Case("E009", "input-dim-question-mark", lambda: placeholder_input_dim("?"), True, node=None),
    Case("E009", "input-dim-named", lambda: placeholder_input_dim("batch"), False),
    Case("E007", "axis-as-float", lambda: attribute_of_type(1.0), True),
    Case("E007", "axis-as-int", lambda: attribute_of_type(1), False),
    Case("E008", "cast-nan-to-int64", lambda: cast_of(float("nan")), True),
    Case("E008", "cast-two-to-int64", lambda: cast_of(2.0), False),
    Case("E015", "squeeze-dim-3", lambda: squeeze(3), True),
    Case("E015", "unsqueeze-axes-repeat", lambda: unsqueeze([1, 1]), True),
    Case("E015", "squeeze-dim-1", lambda: squeeze(1), False),
    Case("E015", "unsqueeze-axes-distinct", lambda: unsqueeze([0, 1]), False),
    Case("E016", "transpose-perm-repeats", lambda: invalid_transpose([0, 0]), True),
    Case("E016", "transpose-perm-valid", lambda: invalid_transpose([1, 0]), False),
    Case("E017", "negative-step-end-int64-max", lambda: slice_neg_step(2**63 - 1), True),
    Case("E017", "negative-step-end-int64-min", lambda: slice_neg_step(-(2**63)), False),
    Case("E020", "constant-without-value", lambda: constant(False), True),
    Case("E020", "constant-with-value", lambda: constant(True), False),
    Case("E021", "shape-minus-one", lambda: constant_of_shape_values([-1, 2]), True),
    Case("E021", "shape-two", lambda: constant_of_shape_values([2, 2]), False),
    Case("E022", "delta-zero", lambda: range_delta(0), True),
    Case("E022", "delta-one", lambda: range_delta(1), False),
    Case("E023", "repeats-of-length-3", lambda: tile([1, 2, 3]), True),
    Case("E023", "repeats-of-length-2", lambda: tile([1, 2]), False),
    Case("E030", "matmul-of-a-scalar", lambda: matmul([]), True),
    Case("E030", "matmul-2d", lambda: matmul([2, 3]), False),
    Case("E031", "gemm-3d", lambda: gemm([2, 2, 3]), True),
    Case("E031", "gemm-2d", lambda: gemm([2, 3]), False),
    Case("E040", "conv-rank-2", lambda: conv_input(2), True),
    Case("E040", "conv-rank-4", lambda: conv_input(4), False),
    Case("E041", "maxpool-rank-2", lambda: maxpool_input(2), True),
    Case("E041", "maxpool-rank-4", lambda: maxpool_input(4), False),
    Case("E042", "split-sums-to-3-of-4", lambda: split_to_sequence([1, 2]), True),
    Case("E042", "split-sums-to-4", lambda: split_to_sequence([1, 3]), False),
    Case("E043", "optional-without-type", lambda: optional_node(False), True),
    Case("E043", "optional-with-type", lambda: optional_node(True), False),
    Case("E044", "get-element-of-empty", lambda: optional_get(True), True),
    Case("E044", "get-element-of-input", lambda: optional_get(False), False),
    Case("E050", "bias-split-gelu-odd", lambda: bias_split_gelu(7), True),
    Case("E050", "bias-split-gelu-even", lambda: bias_split_gelu(8), False),
    Case("E060", "pads-of-length-3", lambda: pad_with([0, 1, 0]), True),
    Case("E060", "pads-of-length-4", lambda: pad_with([0, 1, 0, 1]), False),
    Case("E061", "k-past-the-dim", lambda: topk(4), True),
    Case("E061", "k-within-the-dim", lambda: topk(2), False),
    Case("E062", "depth-zero", lambda: onehot(0), True),
    Case("E062", "depth-three", lambda: onehot(3), False),
    Case("E063", "three-terms-two-inputs", lambda: einsum("ij,jk,kl->il"), True),
    Case("E063", "matmul-equation", lambda: einsum("ij,jk->ik"), False),
    Case("E064", "det-of-1d", lambda: det([3]), True),
    Case("E064", "det-of-2d", lambda: det([3, 3]), False),
    Case("E070", "blocksize-3-of-8-channels", lambda: depth_to_space(3), True),
    Case("E070", "blocksize-2-of-8-channels", lambda: depth_to_space(2), False),
    Case("E071", "scales-of-length-3", lambda: resize_scales([1.0, 1.0, 2.0]), True),
    Case("E071", "scales-of-length-4", lambda: resize_scales([1.0, 1.0, 2.0, 2.0]), False),
    Case("E080", "dft-of-1d", lambda: dft([8]), True),
    Case("E080", "dft-of-3d", lambda: dft([1, 8, 1]), False),
    Case("E090", "direction-sideways", lambda: lstm("sideways"), True),
    Case("E090", "direction-forward", lambda: lstm("forward"), False),
]

CASES += [
    Case(
        "G017",
        "reducemean-18-axes-attribute",
        lambda: node_model("ReduceMean", [vi("x", T.FLOAT, [2, 3])], opset=18, axes=[1]),
        True,
    ),
    Case(
        "G017",
        "reducemean-17-axes-attribute",
        lambda: node_model("ReduceMean", [vi("x", T.FLOAT, [2, 3])], opset=17, axes=[1]),
        False,
    ),
]
