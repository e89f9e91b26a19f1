"""Does a written model run in onnxruntime wherever its input runs, with the same outputs?

The contract of ``shapeinfer MODEL -o`` and ``optimize -o`` (issue 32): the dims written into a
model hold at every size the model runs at, since onnxruntime trusts them (its allocation planner
reuses a buffer for two tensors whose written dims are equal). Checked with onnxruntime's
default session options, as users load a model, on a grid of sizes: every symbol 1, 2 and 3,
two draws of distinct sizes that are multiples of nothing, and the sizes a test adds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import onnx

from support import ort_oracle


def size_grid(symbols: Iterable[str], extra: Iterable[Mapping[str, int]] = (), seed: int = 0) -> list[dict[str, int]]:
    """Every symbol 1, then 2, then 3; two draws of distinct sizes in [4, 70) with no common
    factor of 2 or 3 for most of them (non-square where there are several symbols); ``extra``."""
    names = sorted(symbols)
    grid = [dict.fromkeys(names, v) for v in (1, 2, 3)]
    rng = np.random.default_rng(seed)
    pool = [v for v in range(4, 70) if v % 2 and v % 3]
    for _ in range(2):
        grid.append({s: int(v) for s, v in zip(names, rng.choice(pool, size=len(names), replace=False))})
    grid.extend(dict(b) for b in extra)
    return grid


def _session(model: onnx.ModelProto):
    try:
        return ort_oracle.session(model, optimize=True), None
    except Exception as e:
        return None, ort_oracle.error_line(e)


def _run(sess, feeds):
    try:
        return sess.run(None, feeds), None
    except Exception as e:
        return None, ort_oracle.error_line(e)


def written_problems(
    original: onnx.ModelProto, written: onnx.ModelProto, grid: Iterable[Mapping[str, int]]
) -> tuple[int, list[str]]:
    """``(sizes at which the original runs, problems)``: one line per size at which the original
    runs and ``written`` fails or gives other outputs (float outputs within 1e-4)."""
    orig, err = _session(original)
    assert orig is not None, f"the original does not load: {err}"
    sess, err = _session(written)
    problems: list[str] = []
    runs = 0
    for binding in grid:
        feeds = ort_oracle.feeds(original, binding)
        want, _ = _run(orig, feeds)
        if want is None:
            continue
        runs += 1
        if sess is None:
            return runs, [f"the written model does not load: {err}"]
        got, err = _run(sess, feeds)
        if got is None:
            problems.append(f"at {binding}: the original runs, the written model fails: {err}")
            continue
        diff = ort_oracle.outputs_differ(want, got, rtol=1e-4, atol=1e-4)
        if diff:
            problems.append(f"at {binding}: outputs {diff}")
    return runs, problems


def input_symbols(model: onnx.ModelProto) -> set[str]:
    """The dim_param names of ``model``'s graph inputs."""
    return {d.dim_param for vi in model.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param}
