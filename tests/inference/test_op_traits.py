"""Op traits (issue 25): what the engine and the passes know of an op besides its shape rule is
declared in the op family beside the rule and read from the registry (no op lists of their own)."""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from shapeinfer import optimize
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.ops.rule_index import RULE_MODULES

RANDOM = ["RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"]


def test_declared_traits():
    for op in RANDOM:
        assert registry.op_traits(op).nondeterministic, op
    assert not registry.op_traits("Add").nondeterministic
    assert dict(registry.op_traits("Reshape").shape_inputs) == {1: "reshape"}
    assert dict(registry.op_traits("Expand").shape_inputs) == {1: "expand"}
    assert dict(registry.op_traits("Slice").shape_inputs) == {1: "start", 2: "end", 3: "exact", 4: "exact"}
    assert dict(registry.op_traits("ReduceSum").shape_inputs) == {1: "exact"}
    bounds = {"Range", "Gather", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity", "Expand", "Cast", "Slice"}
    for op in bounds:
        assert registry.op_traits(op).value_bounds, op
    assert not registry.op_traits("Concat").value_bounds
    for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
        assert registry.op_traits(op).movement == "reshape", op
    for op in ("Identity", "Expand", "Tile", "Cast", "Transpose", "Slice"):
        assert registry.op_traits(op).movement == "copy", op
    for op in ("Concat", "Gather", "Add", "Pad", "Split"):
        assert registry.op_traits(op).movement is None, op
    assert registry.op_traits("NoSuchOp") is registry.NO_TRAITS
    assert registry.op_traits("Reshape", "com.microsoft") is registry.NO_TRAITS  # traits are per domain
    assert registry.op_traits("Reshape", "ai.onnx") is registry.op_traits("Reshape")


def test_traits_are_declared_in_the_module_of_the_rule():
    """A trait declaration is found through the rule index: its module registers the op's rule."""
    registry.load_all()
    for key in registry._TRAITS:
        assert key in RULE_MODULES, key
        assert registry.lookup(key[0], key[1], 99) is not None, key


_LAZY = """
import sys
from shapeinfer.inference import op_registry as registry
assert registry.op_traits("Reshape").value_bounds
print(sorted(m for m in sys.modules if m.startswith("shapeinfer.inference.ops.")))
"""


def test_reading_a_trait_imports_only_that_family():
    r = subprocess.run([sys.executable, "-c", _LAZY], capture_output=True, text=True, check=True)
    families = set(ast.literal_eval(r.stdout)) & set(registry.family_modules())
    assert families == {"shapeinfer.inference.ops.reshape", "shapeinfer.inference.ops.common"}


def _twin_random_model() -> onnx.ModelProto:
    """Two RandomUniformLike nodes on the same input, each through a Shape: identical nodes that
    must not be merged (their outputs differ) or folded."""
    nodes = [
        helper.make_node("RandomUniformLike", ["x"], ["r1"], seed=1.0),
        helper.make_node("RandomUniformLike", ["x"], ["r2"], seed=1.0),
        helper.make_node("Sub", ["r1", "r2"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "twins",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_the_passes_keep_random_nodes():
    """dedupe-shapes reads the nondeterministic trait: the twins stay two nodes (without the
    declaration they are merged into one, and y is 0)."""
    out = optimize(_twin_random_model())
    assert [n.op_type for n in out.graph.node].count("RandomUniformLike") == 2
    ort = __import__("pytest").importorskip("onnxruntime")
    sess = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": np.zeros((2, 3), np.float32)})
    assert y.shape == (2, 3)
