"""shapeinfer against every node conformance case shipped with onnx.

Each case's expected outputs are real tensors computed by onnx's reference implementation, so
their shapes are ground truth. Every case runs in three variants:

- ``plain``: the case's model with its output shapes erased;
- ``const``: small integer inputs become initializers, so shapes that depend on input values
  (Reshape targets, Slice bounds, TopK's K...) can be inferred;
- ``sym``: every input dim above 1 becomes a symbol named after its value (``n3`` for 3), and
  our symbolic dims are evaluated with that binding.

An answer is *wrong* when a rank or an integer dim disagrees with the expected shape (never
allowed), *exact* when every output dim is right, *partial* otherwise (a dim left open).
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import shapeinfer
from shapeinfer.symbolic import dims as D

#: Exact answers we reach per variant (onnx 1.23: 1884 plain, 644 const, 1615 sym cases), minus
#: a small margin. onnx's own inference reaches 1445 / 589 / 1142.
EXACT_FLOOR = {"plain": 1550, "const": 622, "sym": 1505}


def _erase_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for vi in m.graph.output:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    return m


def _with_constant_inputs(model: onnx.ModelProto, inputs: list) -> onnx.ModelProto | None:
    m = _erase_outputs(model)
    kept = []
    moved = False
    for vi, value in zip(list(m.graph.input), inputs):
        arr = None if isinstance(value, list) else np.asarray(value)  # lists are sequences
        if arr is not None and arr.dtype.kind in "iu" and arr.size <= 64:
            m.graph.initializer.append(numpy_helper.from_array(arr, vi.name))
            moved = True
        else:
            kept.append(vi)
    if not moved:
        return None
    del m.graph.input[:]
    m.graph.input.extend(kept)
    return m


def _with_symbolic_dims(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]] | None:
    m = _erase_outputs(model)
    binding: dict[str, int] = {}
    for vi in m.graph.input:
        if not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 1:
                name = f"n{d.dim_value}"
                binding[name] = d.dim_value
                d.dim_param = name
    return (m, binding) if binding else None


def _verdict(model: onnx.ModelProto, expected: list, binding: dict[str, int]) -> tuple[str, str]:
    """('exact' | 'partial' | 'wrong' | 'crash', detail) for shapeinfer on ``model``."""
    try:
        result = shapeinfer.infer(model)
    except Exception as e:  # a crash is a finding, reported with the others
        return "crash", f"{type(e).__name__}: {e}"
    verdict = "exact"
    for vi, want in zip(model.graph.output, expected):
        if not isinstance(want, np.ndarray):
            continue  # sequences and optionals: no tensor shape to compare
        fact = result.facts.get(vi.name)
        if fact is None or fact.shape is None:
            verdict = "partial"
            continue
        if len(fact.shape) != want.ndim:
            return "wrong", f"{vi.name}: rank {len(fact.shape)}, expected shape {want.shape}"
        for axis, (d, n) in enumerate(zip(fact.shape, want.shape)):
            try:
                v = D.evaluate(d, binding)
            except KeyError:  # a fresh symbol: the dim is left open
                verdict = "partial"
                continue
            if v != n:
                return "wrong", f"{vi.name}: dim {axis} is {D.format(d)} = {v}, expected shape {want.shape}"
    return verdict, ""


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[tuple[str, str, str]]]:
    """Per variant: (case name, verdict, detail) for every conformance case."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases() if c.model is not None and c.data_sets]
    out: dict[str, list[tuple[str, str, str]]] = {"plain": [], "const": [], "sym": []}
    for case in cases:
        inputs, expected = case.data_sets[0]
        plain = _erase_outputs(case.model)
        out["plain"].append((case.name, *_verdict(plain, expected, {})))
        const = _with_constant_inputs(case.model, inputs)
        if const is not None:
            out["const"].append((case.name, *_verdict(const, expected, {})))
        sym = _with_symbolic_dims(const if const is not None else case.model)
        if sym is not None:
            out["sym"].append((case.name, *_verdict(sym[0], expected, sym[1])))
    return out


@pytest.mark.parametrize("variant", ["plain", "const", "sym"])
def test_no_wrong_dim_and_no_crash(outcomes, variant: str) -> None:
    rows = outcomes[variant]
    bad = [f"{name}: {verdict}: {detail}" for name, verdict, detail in rows if verdict in ("wrong", "crash")]
    assert not bad, f"{len(bad)} {variant} cases wrong or crashing:\n" + "\n".join(bad)


@pytest.mark.parametrize("variant", ["plain", "const", "sym"])
def test_exact_answers_floor(outcomes, variant: str) -> None:
    counts = Counter(verdict for _, verdict, _ in outcomes[variant])
    assert counts["exact"] >= EXACT_FLOOR[variant], f"{variant}: {dict(counts)}"


def test_variants_cover_the_suite(outcomes) -> None:
    # the suite is not silently empty or truncated (onnx >= 1.16 ships well over 1000 node cases)
    assert len(outcomes["plain"]) > 1000
    assert len(outcomes["const"]) > 300
    assert len(outcomes["sym"]) > 1000
