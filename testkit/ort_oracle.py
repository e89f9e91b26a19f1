"""The onnxruntime oracle the tests compare against: one session set-up, every tensor observable,
the inputs fed at a binding of the input symbols, and how two runs' results are compared.

Kept apart from ``shapeinfer.analysis.verify`` on purpose, so the tests do not check the tool with its
own code. The benchmarks and fuzzers import it too (the checkout on their ``sys.path``), so that a benchmark
and the test of the same property feed and compare alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import onnx
from onnx import helper

from shapeinfer.analysis.verify import observable as verify_observable


def session(model: onnx.ModelProto | str, optimize: bool = False, threads: int | None = None) -> Any:
    """An onnxruntime CPU session over ``model`` (a model, or the path of a model file, whose
    external data onnxruntime then finds beside it) with every graph optimisation off
    (``optimize``: onnxruntime's default, every optimisation on, as a deployment loads it),
    onnxruntime's own log quiet, and ``threads`` intra- and inter-op threads (its default when
    None). Raises what onnxruntime raises when it refuses the model."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    if threads is not None:
        so.intra_op_num_threads = so.inter_op_num_threads = threads
    source = model if isinstance(model, str) else model.SerializeToString()
    return ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])


def error_line(e: BaseException, limit: int = 300) -> str:
    """How an error onnxruntime (or onnx) raised is quoted: the first line of its message that is
    not blank, stripped, at most ``limit`` characters; its type's name when it says nothing."""
    line = next((x.strip() for x in str(e).splitlines() if x.strip()), type(e).__name__)
    return line[:limit]


def observable(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose graph outputs include every main-graph node output (verify's)."""
    return verify_observable(model)[0]


def run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """The graph outputs of ``model`` on ``feeds``."""
    return session(model).run(None, feeds)


def run_all(model: onnx.ModelProto, feeds: dict) -> dict[str, np.ndarray]:
    """Every main-graph node output (and graph output) of ``model`` on ``feeds``, by name."""
    m = observable(model)
    sess = session(m)
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


# ---------------------------------------------------------------------------- inputs at a binding

#: Integer inputs are drawn from [0, 50): token ids every vocabulary of the example models
#: takes, and small enough to be a valid index into most axes.
INT_RANGE = (0, 50)

#: What a string input holds (a Tokenizer then has words to split).
SENTENCE = "the cat sat on a mat"


def input_shape(vi: onnx.ValueInfoProto, binding: Mapping[str, int], unbound: int | None = None) -> list[int]:
    """The dims of graph input ``vi`` at ``binding``: a static dim as it is, a named dim its
    symbol's value; a symbol ``binding`` lacks, or an unnamed dim, is ``unbound`` (KeyError when
    that is None)."""
    dims = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif unbound is None:
            dims.append(binding[d.dim_param])
        else:
            dims.append(binding.get(d.dim_param, unbound) if d.dim_param else unbound)
    return dims


def random_input(
    rng: np.random.Generator, name: str, dtype: Any, shape: list[int], ints: tuple[int, int] = INT_RANGE
) -> np.ndarray:
    """One generated input: all ones when ``name`` holds "mask" (any case), else bools drawn
    uniformly, integers in ``ints`` (``[low, high)``), strings :data:`SENTENCE`, floats from a
    standard normal. Draws from ``rng`` unless it is a mask or a string, so the values of later
    inputs depend on the inputs before them."""
    dt = np.dtype(dtype)
    if dt.kind in "OUS":
        return np.full(shape, SENTENCE, dtype=object)
    if "mask" in name.lower():
        return np.ones(shape, dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(*ints, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def feeds(
    model: onnx.ModelProto,
    binding: Mapping[str, int],
    seed: int = 0,
    *,
    unbound: int | None = None,
    ints: tuple[int, int] = INT_RANGE,
    shape_of: Callable[[onnx.ValueInfoProto], list[int]] | None = None,
) -> dict[str, np.ndarray]:
    """Inputs for every graph input of ``model`` that no initializer backs, at ``binding``: dims
    from :func:`input_shape` (``unbound`` for symbols ``binding`` lacks; ``shape_of`` gives them
    instead when given), values from :func:`random_input` with one
    ``numpy.random.default_rng(seed)`` in input order. The same model, binding and seed give the
    same arrays (calibration data and stored fixtures rely on it). Tensor inputs only (ValueError
    otherwise)."""
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type":
            raise ValueError(f"input {vi.name!r} is not a tensor: give its value yourself")
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        shape = shape_of(vi) if shape_of is not None else input_shape(vi, binding, unbound)
        out[vi.name] = random_input(rng, vi.name, dtype, shape, ints)
    return out


# ---------------------------------------------------------------------------- comparing two runs


def tolerance(dtype: Any) -> float:
    """rtol and atol for comparing two runs' floats of ``dtype`` when onnxruntime may compute them
    differently (other fusions, kernels or Cast placements): 1e-2 for 16-bit floats, 1e-4 wider."""
    return 1e-2 if np.dtype(dtype).itemsize <= 2 else 1e-4


def outputs_differ(a: Any, b: Any, *, rtol: float | None = None, atol: float | None = None) -> str | None:
    """None when two runs' results agree, else what differs first (with where, for nested values).

    Results as onnxruntime returns them: arrays, sequences (lists), maps (dicts, e.g. a ZipMap's
    label -> probability), and the Python scalars inside maps. Arrays agree when dtype, shape and
    values do: floats (and complex) within ``rtol`` / ``atol`` (each :func:`tolerance` of their
    dtype when None; 0 and 0 for exact), NaN equal to NaN; everything else exactly. Sequences
    agree element by element, maps key by key.
    """
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)):
            return f"{type(a).__name__} vs {type(b).__name__}"
        if len(a) != len(b):
            return f"sequence of {len(a)} vs {len(b)}"
        return next(
            (f"[{i}]: {r}" for i, (x, y) in enumerate(zip(a, b)) if (r := outputs_differ(x, y, rtol=rtol, atol=atol))),
            None,
        )
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return f"{type(a).__name__} vs {type(b).__name__}"
        if a.keys() != b.keys():
            return f"map keys {sorted(a, key=str)[:8]} vs {sorted(b, key=str)[:8]}"
        return next((f"[{k!r}]: {r}" for k in a if (r := outputs_differ(a[k], b[k], rtol=rtol, atol=atol))), None)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return f"shape {list(a.shape)} vs {list(b.shape)}"
    if a.dtype.kind in "fc":
        tol = tolerance(a.dtype)
        rt, at = tol if rtol is None else rtol, tol if atol is None else atol
        if np.allclose(a, b, rtol=rt, atol=at, equal_nan=True):
            return None
        nan = np.isnan(a) != np.isnan(b)
        with np.errstate(all="ignore"):
            d = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
        d = d[~np.isnan(d)]
        return f"values differ by up to {d.max() if d.size else 0:.3g}" + (" and in NaNs" if nan.any() else "")
    return None if np.array_equal(a, b) else "values differ"


def assert_same_outputs(
    model: onnx.ModelProto, rewritten: onnx.ModelProto, feeds: dict, *, rtol: float = 0.0, atol: float = 0.0
) -> None:
    """``rewritten`` loads in onnxruntime and gives ``model``'s graph outputs on ``feeds``
    (:func:`outputs_differ`; exactly unless ``rtol`` / ``atol`` say otherwise)."""
    want = run(model, feeds)
    diff = outputs_differ(want, run(rewritten, feeds), rtol=rtol, atol=atol)
    assert diff is None, f"outputs {diff}"


def assert_inferred_dims_hold(model: onnx.ModelProto, grid) -> Any:
    """``shapeinfer.infer(model)``, every tensor's inferred dims checked against onnxruntime's
    actual shapes (all intermediates exposed, optimizations off) at each binding of ``grid`` where
    it runs: at least one must run. Returns the inference result."""
    import numpy as np

    import shapeinfer
    from shapeinfer.analysis.verify import compare

    r = shapeinfer.infer(onnx.ModelProto.FromString(model.SerializeToString()))
    ran = 0
    for binding in grid:
        try:
            actual = run_all(model, feeds(model, binding))
        except Exception:
            continue
        ran += 1
        for name, a in actual.items():
            reason, _, expected = compare(r.facts.get(name), a, binding)
            assert reason is None, (binding, name, reason, expected, np.asarray(a).shape)
    assert ran, "onnxruntime ran the model at no size of the grid"
    return r
