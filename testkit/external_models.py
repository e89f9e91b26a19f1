"""The model the external-data tests build: Reshape(x, target) then MatMul(r, w), x ``[n, 2, 3]``,
the target ``[-1, 6]`` and the weight ``[6, 100]`` in external data (so y is ``[n, 100]``)."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TARGET = np.array([-1, 6], np.int64)
WEIGHT = np.ones((6, 100), np.float32)


def entries(location: str, offset: int, length: int) -> list[tuple[str, str]]:
    """The external-data entries of a tensor stored at ``offset`` of ``location``."""
    return [("location", location), ("offset", str(offset)), ("length", str(length))]


def mark_external(t: TensorProto, pairs) -> TensorProto:
    """``t`` without its data, pointing at external data with the ``(key, value)`` ``pairs``
    (which may lie: the hostile tests give impossible ones)."""
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in pairs:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def save_reshape_matmul(path: str, target_entry, weight_entry) -> str:
    """Save the model at ``path``, the target's and the weight's external data at the given
    entries (the data files are the caller's); ``path``."""
    t = mark_external(numpy_helper.from_array(TARGET, "target"), target_entry)
    w = mark_external(numpy_helper.from_array(WEIGHT, "w"), weight_entry)
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [t, w],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def build(folder, target_entry=None, weight_entry=None, data: bytes | None = None) -> str:
    """``folder/m.onnx``: the model of :func:`save_reshape_matmul`, target and weight in ``data.bin``.

    ``target_entry`` / ``weight_entry`` replace the default (valid) entries.
    """
    os.makedirs(folder, exist_ok=True)
    if data is None:
        data = TARGET.tobytes() + WEIGHT.tobytes()
    if data is not False:
        with open(os.path.join(folder, "data.bin"), "wb") as f:
            f.write(data)
    tpairs = target_entry or entries("data.bin", 0, TARGET.nbytes)
    wpairs = weight_entry or entries("data.bin", TARGET.nbytes, WEIGHT.nbytes)
    return save_reshape_matmul(os.path.join(folder, "m.onnx"), tpairs, wpairs)
