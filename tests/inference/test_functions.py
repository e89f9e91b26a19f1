"""Model-local functions (FunctionProto), inferred at each call site: that site's inputs and
attributes (references to the caller's attributes, the function's defaults), the function's own
opset imports, nested calls, subgraphs inside a body, omitted inputs. Checked against
onnxruntime's actual output shapes, or onnx's reference evaluator where onnxruntime refuses the
model."""

from __future__ import annotations

import numpy as np
import onnx

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

HEADER = '<ir_version: 8, opset_import: ["" : 17, "local" : 1]>'

INNER_OUTER = """
<domain: "local", opset_import: ["" : 17]>
Inner <perm> (x) => (y) {
  y = Transpose <perm: ints = @perm> (x)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
Outer <p, axis: int = 0> (a, b) => (c) {
  t = local.Inner <perm: ints = @p> (a)
  c = Concat <axis: int = @axis> (t, b)
}
"""


def parse(text: str) -> onnx.ModelProto:
    m = onnx.parser.parse_model(text)
    onnx.checker.check_model(m)
    return m


def ort_shapes(model: onnx.ModelProto, feeds: dict) -> dict[str, tuple]:
    names = [o.name for o in model.graph.output]
    return {k: np.asarray(v).shape for k, v in zip(names, ort_oracle.run(model, feeds))}


def evaluated(r, name: str, binding: dict[str, int]) -> tuple:
    f = r.facts[name]
    assert f.shape is not None, name
    return tuple(D.evaluate(d, binding) for d in f.shape)


def no_errors(r) -> None:
    assert not [d for d in r.diagnostics if d.severity in ("error", "warning")], r.diagnostics


def test_attribute_references_defaults_and_nested_calls():
    m = parse(
        HEADER
        + """
g (float[n, m] X, float[5, n] Y, float[n, 2] W) => (float[?, ?] Z1, float[?, ?] Z2) {
  Z1 = local.Outer <p = [1, 0]> (X, Y)
  Z2 = local.Outer <p = [0, 1], axis = 1> (X, W)
}
"""
        + INNER_OUTER
    )
    r = shapeinfer.infer(m)
    no_errors(r)
    n, mm = D.sym("n"), D.sym("m")
    assert r.facts["Z1"].shape == (mm + 5, n)  # Transpose by the caller's p, Concat on the default axis 0
    assert r.facts["Z2"].shape == (n, mm + 2)  # identity perm, axis given at this call site
    for nv, mv in ((3, 4), (6, 1)):
        b = {"n": nv, "m": mv}
        feeds = {
            "X": np.zeros((nv, mv), np.float32),
            "Y": np.zeros((5, nv), np.float32),
            "W": np.zeros((nv, 2), np.float32),
        }
        actual = ort_shapes(m, feeds)
        assert evaluated(r, "Z1", b) == actual["Z1"]
        assert evaluated(r, "Z2", b) == actual["Z2"]


def test_each_call_site_gets_its_own_input_shapes():
    m = parse(
        HEADER
        + """
g (float[a, b, c] X, float[d, e] V) => (float[?, ?, ?] P, float[?, ?] Q) {
  P = local.Swap (X)
  Q = local.Swap (V)
}
<domain: "local", opset_import: ["" : 17]>
Swap (x) => (y) {
  s = Shape (x)
  y = Transpose (x)
}
"""
    )
    r = shapeinfer.infer(m)
    no_errors(r)
    a, b, c, d, e = (D.sym(s) for s in "abcde")
    assert r.facts["P"].shape == (c, b, a) and r.facts["Q"].shape == (e, d)
    actual = ort_shapes(m, {"X": np.zeros((2, 3, 4), np.float32), "V": np.zeros((5, 6), np.float32)})
    binding = dict(zip("abcde", (2, 3, 4, 5, 6)))
    assert evaluated(r, "P", binding) == actual["P"] and evaluated(r, "Q", binding) == actual["Q"]


def test_attribute_reference_inside_a_subgraph_of_the_body_and_omitted_input():
    m = parse(
        HEADER
        + """
g (float[a, b, c] X, bool C, float[n] P) => (float[?, ?, ?] Y, float[?] Q) {
  Y = local.F <perm = [1, 0, 2]> (X, C)
  hi = Constant <value = float {1.0}> ()
  Q = local.Clip3 (P, , hi)
}
<domain: "local", opset_import: ["" : 17]>
F <perm> (x, cond) => (y) {
  y = If (cond) <
    then_branch: graph = g1 () => (float[?, ?, ?] t) { t = Transpose <perm: ints = @perm> (x) },
    else_branch: graph = g2 () => (float[?, ?, ?] e) {
      e1 = Transpose <perm: ints = @perm> (x)
      e = Relu (e1)
    }>
}
<domain: "local", opset_import: ["" : 17]>
Clip3 (x, lo, hi) => (y) {
  y = Clip (x, lo, hi)
}
"""
    )
    r = shapeinfer.infer(m)
    no_errors(r)
    a, b, c = D.sym("a"), D.sym("b"), D.sym("c")
    assert r.facts["Y"].shape == (b, a, c)  # perm from the call site, read inside both branches
    assert r.facts["Q"].shape == (D.sym("n"),)  # `lo` omitted at the call site: omitted inside too
    for cond in (True, False):
        actual = ort_shapes(
            m, {"X": np.zeros((2, 3, 4), np.float32), "C": np.array(cond), "P": np.zeros(5, np.float32)}
        )
        assert evaluated(r, "Y", {"a": 2, "b": 3, "c": 4}) == actual["Y"]
        assert evaluated(r, "Q", {"n": 5}) == actual["Q"]


def test_function_uses_its_own_opset_imports():
    """The body is written against opset 11 (Squeeze's axes an attribute) in an opset-17 model.

    onnxruntime reads the body at the model's opset and refuses it; onnx's reference evaluator
    honours the function's imports, and so does inference.
    """
    from onnx.reference import ReferenceEvaluator

    m = onnx.parser.parse_model(
        HEADER
        + """
g (float[n, 1, k] X) => (float[?, ?] Z) {
  Z = local.Sq (X)
}
<domain: "local", opset_import: ["" : 11]>
Sq (x) => (y) {
  y = Squeeze <axes = [1]> (x)
}
"""
    )
    r = shapeinfer.infer(m)
    no_errors(r)
    assert r.facts["Z"].shape == (D.sym("n"), D.sym("k"))
    (out,) = ReferenceEvaluator(m).run(None, {"X": np.zeros((3, 1, 4), np.float32)})
    assert evaluated(r, "Z", {"n": 3, "k": 4}) == out.shape


def test_function_without_default_domain_import_uses_the_models():
    """No import of the default domain in the function: ops are read at the model's opset (17)."""
    m = onnx.parser.parse_model(
        HEADER
        + """
g (float[n, 1, k] X) => (float[?, ?] Z) {
  axes = Constant <value = int64[1] {1}> ()
  Z = local.Sq (X, axes)
}
<domain: "local", opset_import: []>
Sq (x, ax) => (y) {
  y = Squeeze (x, ax)
}
"""
    )
    r = shapeinfer.infer(m)
    no_errors(r)
    assert r.facts["Z"].shape == (D.sym("n"), D.sym("k"))


def test_recursive_function_is_a_diagnostic_not_a_crash():
    m = onnx.parser.parse_model(
        HEADER
        + """
g (float[n] X) => (float[?] Z) {
  Z = local.Rec (X)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
Rec (x) => (y) {
  y = local.Rec (x)
}
"""
    )
    r = shapeinfer.infer(m)
    assert any(d.code == "G010" and d.severity == "error" for d in r.diagnostics)
    # nothing inferred: Z is what the graph declares, rank 1 with an open dim
    z = r.facts["Z"]
    assert z.dtype == onnx.TensorProto.FLOAT and len(z.shape) == 1 and r.fresh_symbols == [D.format(z.shape[0])]


def test_function_outputs_are_annotated_in_the_main_graph():
    m = parse(
        HEADER
        + """
g (float[n, m] X, float[5, n] Y) => (float[?, ?] Z) {
  Z1 = local.Outer <p = [1, 0]> (X, Y)
  Z = Relu (Z1)
}
"""
        + INNER_OUTER
    )
    out = shapeinfer.infer_shapes(m)
    vis = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in out.graph.value_info}
    assert vis == {"Z1": ["m + 5", "n"]}
    assert [d.dim_param or d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim] == ["m + 5", "n"]
    onnx.checker.check_model(out, full_check=True)


def test_overloads_are_distinct_functions_as_in_onnxruntime():
    """IR 10 overloads: two bodies of local.F, one casting to int32, one to int64; each call
    names its overload and gets that body's type (onnx's test_mi_overloaded_function)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    opsets = [h.make_opsetid("", 18), h.make_opsetid("local", 1)]
    fns = []
    for overload, to in (("i32", T.INT32), ("i64", T.INT64)):
        f = h.make_function("local", "F", ["a"], ["b"], [h.make_node("Cast", ["a"], ["b"], to=to)], opsets[:1])
        f.overload = overload
        fns.append(f)
    calls = [h.make_node("F", ["x"], ["y32"], domain="local"), h.make_node("F", ["x"], ["y64"], domain="local")]
    calls[0].overload, calls[1].overload = "i32", "i64"
    g = h.make_graph(
        calls,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        [h.make_empty_tensor_value_info("y32"), h.make_empty_tensor_value_info("y64")],
    )
    m = h.make_model(g, opset_imports=opsets, ir_version=10, functions=fns)
    r = shapeinfer.infer(m)
    no_errors(r)
    assert (r.facts["y32"].dtype, r.facts["y64"].dtype) == (T.INT32, T.INT64)
    got = ort_oracle.run(m, {"x": np.ones(3, np.float32)})
    assert [a.dtype for a in got] == [np.int32, np.int64]
