"""onnxruntime as the judge where shapeinfer and an onnx test disagree on dims.

:func:`check` runs a test's model in onnxruntime (every node output observable) and compares
the shapes it computes with the dims shapeinfer inferred, evaluated at the input dims it fed.
The tests hide shapes from onnx with a seed construction (``x = Reshape(SEED_x,
UNKNOWN_SHAPE_x)`` with ``x``'s type declared in value_info): for running, ``x`` becomes a
graph input of its declared type instead.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from shapeinfer.symbolic import dims as D


def runnable(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with every seed Reshape replaced by a graph input of the seeded value's declared type."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    declared = {vi.name: vi for vi in g.value_info}
    seeds = [
        n
        for n in g.node
        if n.op_type == "Reshape"
        and len(n.input) == 2
        and n.input[0].startswith("SEED_")
        and n.input[1].startswith("UNKNOWN_SHAPE_")
        and n.output[0] in declared
    ]
    if not seeds:
        return m
    drop = set()
    for n in seeds:
        g.node.remove(n)
        drop |= {n.input[0], n.input[1]}
        vi = declared[n.output[0]]
        g.input.append(vi)
        g.value_info.remove(vi)
    keep = [vi for vi in g.input if vi.name not in drop]
    del g.input[:]
    g.input.extend(keep)
    return m


def _feeds(model: onnx.ModelProto, distinct: bool) -> tuple[dict, dict[str, int]] | None:
    rng = np.random.default_rng(0)
    inits = {t.name for t in model.graph.initializer}
    binding: dict[str, int] = {}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            return None
        tt = vi.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                key = d.dim_param or f"?{len(binding)}"
                if key not in binding:
                    binding[key] = 2 + len(binding) if distinct else 3
                shape.append(binding[key])
        try:
            dt = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        except Exception:
            return None
        if dt.kind == "f":
            arr = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu":
            arr = rng.integers(0, 2, shape).astype(dt)
        elif dt.kind == "b":
            arr = rng.integers(0, 2, shape).astype(bool)
        else:
            return None
        feeds[vi.name] = arr
    return feeds, binding


def _run(model: onnx.ModelProto, feeds: dict) -> dict[str, np.ndarray]:
    """Every node output of ``model`` on ``feeds`` that is a tensor, by name (testkit/ort_oracle.py)."""
    from testkit.ort_oracle import run_all

    return {k: v for k, v in run_all(model, feeds).items() if isinstance(v, np.ndarray)}


def check(model: onnx.ModelProto, ours: dict[str, onnx.TypeProto]) -> str:
    """``verified``, ``refuted: ...`` or ``not runnable: ...``: shapeinfer's dims for ``model``
    (``ours``: name -> inferred type) against the shapes onnxruntime computes."""
    m = runnable(model)
    last = "no input values"
    for distinct in (True, False):
        fb = _feeds(m, distinct)
        if fb is None:
            return "not runnable: inputs onnxruntime cannot be fed here"
        feeds, binding = fb
        try:
            actual = _run(m, feeds)
            break
        except Exception as e:
            last = str(e).strip().splitlines()[0][:120] if str(e).strip() else type(e).__name__
    else:
        return f"not runnable: {last}"
    compared = 0
    for name, arr in actual.items():
        tp = ours.get(name)
        if tp is None or tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
            continue
        dims = tp.tensor_type.shape.dim
        if len(dims) != arr.ndim:
            return f"refuted: {name} rank {len(dims)}, onnxruntime {arr.shape}"
        for i, d in enumerate(dims):
            if d.HasField("dim_value"):
                want = d.dim_value
            elif d.dim_param:
                e = D.parse(d.dim_param)
                if not D.symbols(e) <= binding.keys():
                    continue
                want = D.evaluate(e, binding)
            else:
                continue
            compared += 1
            if want != arr.shape[i]:
                return f"refuted: {name}[{i}] is {want} here, onnxruntime {arr.shape[i]}"
    return f"verified ({compared} dims)" if compared else "not runnable: nothing to compare"
