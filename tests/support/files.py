"""Model files with external data, and hashes of folders: the material of the write-contract
tests (tests/io/test_file_safety.py, tests/api/test_document.py)."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save_external(path, value: float = 1.0, location: str = "model.data", noop_reshape: bool = False) -> str:
    """A MatMul by an 8x8 weight of ``value``, the weight in the external file ``location``
    (created by onnx's save, as exporters do); ``noop_reshape``: x goes through a Reshape to
    its own shape first (a finding ``lint --fix`` removes). The model's path."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    w = numpy_helper.from_array(np.full((8, 8), value, np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    inits = [w]
    if noop_reshape:
        inits.append(numpy_helper.from_array(np.array([2, 8], np.int64), "t"))
        nodes.insert(0, helper.make_node("Reshape", ["x0", "t"], ["x"], name="noop"))
    x = "x0" if noop_reshape else "x"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, 8] if noop_reshape else ["b", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, str(path), save_as_external_data=True, location=location, size_threshold=256)
    return str(path)


def folder_hashes(root) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256 of its bytes; a symlink by its target)."""
    out = {}
    for folder, _, files in os.walk(root):
        for f in files:
            p = os.path.join(folder, f)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "link:" + os.readlink(p)
            else:
                with open(p, "rb") as fh:
                    out[rel] = hashlib.sha256(fh.read()).hexdigest()
    return out
