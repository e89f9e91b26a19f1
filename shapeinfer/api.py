"""The Python API: infer a model's shapes from a ModelProto or a path."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import onnx

from shapeinfer import dims as D
from shapeinfer.dims import INT64_MAX
from shapeinfer.engine import Result, model_dir
from shapeinfer.engine import infer as _infer
from shapeinfer.onnxio import load_model
from shapeinfer.suggest import did_you_mean
from shapeinfer.writer import annotate

ModelLike = onnx.ModelProto | str | os.PathLike


class BindError(ValueError):
    """A ``bind`` entry that does not fit the model: an unknown symbol or a value that is not
    a positive int64. ``symbol`` is the entry's name; the message says what is wrong."""

    def __init__(self, symbol: str, message: str) -> None:
        super().__init__(message)
        self.symbol = symbol


def check_bind_values(bind: Mapping[str, int]) -> None:
    """Raise BindError unless every value is an int in 1..2**63-1.

    Symbols stand for sizes that are at least 1 (the dims algebra relies on it: ``s // s == 1``),
    so a binding cannot make one 0; a zero-size dim is written as the int 0 in ``input_shapes``.
    """
    for k, v in bind.items():
        if type(v) is not int:
            raise BindError(k, f"the value of {k!r} must be an int, got {v!r}")
        if v < 1:
            raise BindError(k, f"{k}={v}: symbols stand for sizes of at least 1 (write a 0 dim with input_shapes)")
        if v > INT64_MAX:
            raise BindError(k, f"{k}={v}: larger than int64 allows (2**63-1)")


def check_bind_symbols(bind: Mapping[str, int], symbols: set[str]) -> None:
    """Raise BindError for the first name in ``bind`` that is not one of the graph inputs' ``symbols``."""
    for k in bind:
        if k not in symbols:
            known = ", ".join(sorted(symbols)) or "none"
            raise BindError(k, f"no graph input has a dim named {k!r}{did_you_mean(k, symbols)} (symbols: {known})")


def _load(model: ModelLike, copy: bool) -> tuple[onnx.ModelProto, str | None]:
    if isinstance(model, onnx.ModelProto):
        if copy:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            return m, None
        return model, None
    path = os.fspath(model)
    return load_model(path), model_dir(path)


def _parse_shapes(input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None) -> dict | None:
    if not input_shapes:
        return None
    return {k: [D.parse(x) if isinstance(x, str) else x for x in v] for k, v in input_shapes.items()}


def infer(
    model: ModelLike,
    *,
    input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
    bind: Mapping[str, int] | None = None,
    base_dir: str | None = None,
    timeout: float | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
) -> Result:
    """Infer every tensor's dims, the symbol table and diagnostics.

    ``model`` is a ModelProto (not modified unless ``input_shapes`` is given, which rewrites its
    graph inputs) or a path (external weights are not loaded). ``input_shapes`` overrides graph
    inputs' dims (ints, symbol names or expressions; KeyError for a name that is not a graph
    input); ``bind`` specialises input symbols to ints of at least 1 (:class:`BindError`, a
    ValueError, for a symbol no graph input has or a value out of range). ``timeout`` (seconds)
    raises :class:`shapeinfer.engine.InferenceTimeout` when inference runs longer.
    ``dim_ranges`` gives input symbols integer ranges, ``{"seq": (1, 512)}`` (hi None: no upper
    bound; default ``[1, inf)``; BindError for a symbol no graph input has or an empty range).
    ``result.dims(name)`` gives a tensor's dims as ints and :class:`shapeinfer.dims.Expr`;
    ``result.guards()`` the conditions on the input symbols under which they hold and
    ``result.ranges()`` each symbol's range under them.
    """
    if bind:
        check_bind_values(bind)
    if dim_ranges:
        check_ranges(dim_ranges)
    m, where = _load(model, copy=bool(input_shapes))
    return _run(m, base_dir or where, input_shapes, bind, timeout, dim_ranges)


def check_ranges(dim_ranges: Mapping[str, tuple[int, int | None]]) -> None:
    """Raise BindError unless every range is ``(lo, hi)`` with ints ``1 <= lo <= hi`` (hi None:
    unbounded)."""
    for k, r in dim_ranges.items():
        ok = isinstance(r, (tuple, list)) and len(r) == 2 and type(r[0]) is int and (r[1] is None or type(r[1]) is int)
        if not ok:
            raise BindError(k, f"the range of {k!r} must be (lo, hi) ints (hi None: unbounded), got {r!r}")
        lo, hi = r
        if lo < 1 or (hi is not None and (hi < lo or hi > INT64_MAX)):
            raise BindError(k, f"{k}={lo}:{'' if hi is None else hi}: not a range of sizes (1 <= lo <= hi <= 2**63-1)")


def _run(
    m: onnx.ModelProto, base_dir: str | None, input_shapes, bind, timeout: float | None, dim_ranges=None
) -> Result:
    ranges = {k: tuple(v) for k, v in dim_ranges.items()} if dim_ranges else None
    result = _infer(
        m, base_dir=base_dir, input_shapes=_parse_shapes(input_shapes), bind=bind, timeout=timeout, dim_ranges=ranges
    )
    if bind:
        check_bind_symbols(bind, result.input_symbols)
    if ranges:
        check_bind_symbols(ranges, result.input_symbols)
    return result


def infer_shapes(
    model: ModelLike,
    *,
    input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
    bind: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    """A copy of ``model`` with every tensor's type and dims written into ``value_info``.

    Graph outputs get their types too; dims are ``dim_value`` or ``dim_param`` expression text.
    Weights are left as they are (external data stays external). Arguments as for :func:`infer`.
    """
    if bind:
        check_bind_values(bind)
    m, where = _load(model, copy=isinstance(model, onnx.ModelProto))
    return annotate(_run(m, where, input_shapes, bind, None))
