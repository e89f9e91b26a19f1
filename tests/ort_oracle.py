"""The onnxruntime oracle the tests compare against: one session set-up, every tensor observable.

Kept apart from ``shapeinfer.verify`` on purpose, so the tests do not check the tool with its
own code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper


def session(model: onnx.ModelProto, optimize: bool = False) -> Any:
    """An onnxruntime CPU session over ``model`` with every graph optimisation off (``optimize``:
    onnxruntime's default, every optimisation on, as a deployment loads it)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def observable(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose graph outputs include every main-graph node output."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(helper.make_empty_tensor_value_info(o))
                have.add(o)
    return m


def run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """The graph outputs of ``model`` on ``feeds``."""
    return session(model).run(None, feeds)


def run_all(model: onnx.ModelProto, feeds: dict) -> dict[str, np.ndarray]:
    """Every main-graph node output (and graph output) of ``model`` on ``feeds``, by name."""
    m = observable(model)
    sess = session(m)
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
