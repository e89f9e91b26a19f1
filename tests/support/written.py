"""Does a written model run in onnxruntime wherever its input runs, with the same outputs?

The contract of ``shapeinfer MODEL -o`` and ``optimize -o`` (issue 32): the dims written into a
model hold at every size the model runs at, since onnxruntime trusts them (its allocation planner
reuses a buffer for two tensors whose written dims are equal, its fusions rewrite Reshapes from
them). Checked with onnxruntime's default session options, as users load a model, on a grid of
sizes: every size 1, 2 and 3, two draws of distinct sizes that are multiples of nothing, and the
sizes a test adds.

A size is given per *axis key*: a graph input's dim_param where it names a size (``batch``), and
``input[axis]`` for an axis whose dim has no usable name (open, or a placeholder such as ``?``,
which names no size: two ``?`` axes are two sizes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import onnx

from shapeinfer.symbolic.names import is_placeholder
from testkit import ort_oracle


def axis_keys(model: onnx.ModelProto) -> dict[tuple[str, int], str]:
    """``(input, axis) -> key`` for every non-static axis of ``model``'s tensor inputs."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for i, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value >= 0:
                continue
            named = d.dim_param and not is_placeholder(d.dim_param)
            out[(vi.name, i)] = d.dim_param if named else f"{vi.name}[{i}]"
    return out


def size_grid(keys: Iterable[str], extra: Iterable[Mapping[str, int]] = (), seed: int = 0) -> list[dict[str, int]]:
    """Every key 1, then 2, then 3; two draws of distinct sizes in [4, 70) that are neither even
    nor multiples of 3 (non-square where there are several keys); ``extra``."""
    names = sorted(set(keys))
    grid = [dict.fromkeys(names, v) for v in (1, 2, 3)]
    rng = np.random.default_rng(seed)
    pool = [v for v in range(4, 70) if v % 2 and v % 3]
    for _ in range(2):
        grid.append({s: int(v) for s, v in zip(names, rng.choice(pool, size=len(names), replace=False))})
    grid.extend(dict(b) for b in extra)
    return grid


def feeds(model: onnx.ModelProto, sizes: Mapping[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs of ``model`` at ``sizes`` (by axis key), as :func:`ort_oracle.feeds` makes them."""
    keys = axis_keys(model)

    def shape_of(vi: onnx.ValueInfoProto) -> list[int]:
        dims = vi.type.tensor_type.shape.dim
        return [sizes[keys[(vi.name, i)]] if (vi.name, i) in keys else d.dim_value for i, d in enumerate(dims)]

    return ort_oracle.feeds(model, {}, seed, shape_of=shape_of)


def _session(model: onnx.ModelProto):
    try:
        return ort_oracle.session(model, optimize=True), None
    except Exception as e:
        return None, ort_oracle.error_line(e)


def _run(sess, inputs):
    try:
        return sess.run(None, inputs), None
    except Exception as e:
        return None, ort_oracle.error_line(e)


def written_problems(
    original: onnx.ModelProto, written: onnx.ModelProto, grid: Iterable[Mapping[str, int]]
) -> tuple[int, list[str]]:
    """``(sizes at which the original runs, problems)``: one line per size at which the original
    runs and ``written`` fails or gives other outputs (floats within 1e-4)."""
    orig, err = _session(original)
    assert orig is not None, f"the original does not load: {err}"
    sess, err = _session(written)
    problems: list[str] = []
    runs = 0
    for sizes in grid:
        inputs = feeds(original, sizes)
        want, _ = _run(orig, inputs)
        if want is None:
            continue
        runs += 1
        if sess is None:
            return runs, [f"the written model does not load: {err}"]
        got, err = _run(sess, inputs)
        if got is None:
            problems.append(f"at {sizes}: the original runs, the written model fails: {err}")
            continue
        diff = ort_oracle.outputs_differ(want, got, rtol=1e-4, atol=1e-4)
        if diff:
            problems.append(f"at {sizes}: outputs {diff}")
    return runs, problems
