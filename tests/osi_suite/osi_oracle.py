"""onnxruntime as the judge where a test of onnx-shape-inference fails through the drop-in.

:func:`check` runs the model the drop-in was last given in a test (every node output
observable, the graph inputs fed at a binding of their symbols) and compares the shapes
onnxruntime computes with the dims the drop-in wrote, evaluated at that binding. The answer is
``verified (n dims)``, ``refuted: ...``, ``refused: ...`` (onnxruntime does not load or run the
model: the node is invalid, or an op it has no kernel for) or ``not runnable: ...`` (an input
without a type or rank, a symbol that cannot be bound).
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import sympy
from onnx import helper

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAMES = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTIONS = {"floor", "Max", "Min", "Mod", "max", "min", "ceiling", "sqrt"}


def _value(text: str, binding: dict[str, int]) -> int | None:
    """The integer a dim's text (sympy's, as the drop-in writes it) takes at ``binding``, or None
    when it names a symbol ``binding`` lacks."""
    names = set(_NAMES.findall(text)) - _FUNCTIONS
    if not names <= binding.keys():
        return None
    local = {n: sympy.Integer(binding[n]) for n in names}
    local.update({"floor": sympy.floor, "Max": sympy.Max, "Min": sympy.Min, "Mod": sympy.Mod})
    local.update({"max": sympy.Max, "min": sympy.Min, "ceiling": sympy.ceiling, "sqrt": sympy.sqrt})
    v = sympy.sympify(text, locals=local)
    return int(v) if v.is_Integer else None


def _feeds(model: onnx.ModelProto, start: int) -> tuple[dict, dict[str, int]] | str:
    """Inputs at a binding of the inputs' symbols (distinct sizes from ``start``), or why none."""
    rng = np.random.default_rng(0)
    inits = {t.name for t in model.graph.initializer}
    binding: dict[str, int] = {}
    exprs = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            return f"input {vi.name!r} has no tensor type or rank"
        if not vi.type.tensor_type.elem_type:
            return f"input {vi.name!r} has no element type"
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                continue
            if d.dim_param and _IDENT.match(d.dim_param):
                binding.setdefault(d.dim_param, start + len(binding))
            elif d.dim_param:
                exprs.append(d.dim_param)
            else:
                return f"input {vi.name!r} has an unnamed dim"
    for e in exprs:  # an expression's symbols get sizes too
        for n in set(_NAMES.findall(e)) - _FUNCTIONS:
            binding.setdefault(n, start + len(binding))
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            v = d.dim_value if d.HasField("dim_value") else _value(d.dim_param, binding)
            if v is None or v < 0:
                return f"input {vi.name!r}: dim {d.dim_param!r} has no size"
            shape.append(v)
        try:
            dt = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        except Exception:
            return f"input {vi.name!r}: element type {tt.elem_type} has no numpy type"
        if dt.kind == "f":
            feeds[vi.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu":
            feeds[vi.name] = rng.integers(0, 2, shape).astype(dt)
        elif dt.kind == "b":
            feeds[vi.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            return f"input {vi.name!r}: element type {dt} not generated here"
    return feeds, binding


def check(model_bytes: bytes, ours: dict[str, list]) -> str:
    """Judge the dims the drop-in wrote (``ours``: value name -> its dims, ints or dim texts;
    None for an unknown rank) against onnxruntime's run of the model (serialised as the drop-in
    was given it)."""
    from testkit.ort_oracle import error_line, run_all

    model = onnx.ModelProto.FromString(model_bytes)
    last = "no input sizes tried"
    for start in (3, 5):
        fb = _feeds(model, start)
        if isinstance(fb, str):
            return f"not runnable: {fb}"
        feeds, binding = fb
        try:
            actual = run_all(model, feeds)
            break
        except Exception as e:
            last = error_line(e, 160)
    else:
        return f"refused: {last}"
    compared = 0
    for name, arr in actual.items():
        dims = ours.get(name)
        if dims is None or not isinstance(arr, np.ndarray):
            continue
        if len(dims) != arr.ndim:
            return f"refuted: {name} has rank {len(dims)} here, onnxruntime {arr.shape}"
        for i, d in enumerate(dims):
            want = d if isinstance(d, int) else _value(d, binding) if d else None
            if want is None:
                continue
            compared += 1
            if want != arr.shape[i]:
                return f"refuted: {name}[{i}] is {d} = {want} here, onnxruntime {arr.shape[i]}"
    return f"verified ({compared} dims)" if compared else "not runnable: no dim to compare"
