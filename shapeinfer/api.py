"""The Python API: infer a model's shapes from a ModelProto, a path, the bytes of a model, an
``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph`` (:mod:`shapeinfer.io.modelsource`).

``bind``, ``input_shapes`` and ``dim_ranges`` are checked by :mod:`shapeinfer.inference.bindings` (the
same rules and wording as the command line's ``--bind``, ``--input-shape``, ``--dim-range``)
before anything is inferred.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import onnx

from shapeinfer.inference.annotate import annotate
from shapeinfer.inference.bindings import (
    BindError,
    check_bind_symbols,
    check_bind_values,
    check_input_shapes,
    check_model,
    check_ranges,
    specialise_inputs,
)
from shapeinfer.inference.engine import Result, binding_contradictions, model_dir
from shapeinfer.inference.engine import infer as _infer
from shapeinfer.io.modelsource import ModelLike, in_memory
from shapeinfer.io.onnxio import load_model
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import CONTRADICTION

__all__ = [
    "BindError",
    "ModelLike",
    "check_bind_symbols",
    "check_bind_values",
    "check_ranges",
    "infer",
    "infer_shapes",
]


def _load(model: ModelLike, copy: bool) -> tuple[onnx.ModelProto, str | None]:
    """``model`` as a ModelProto and the folder of its file (None in memory); a copy of the
    caller's own ModelProto when ``copy`` (it is about to be changed)."""
    given = in_memory(model)
    if given is not None:
        m, callers = given
        if copy and callers:
            m = onnx.ModelProto()
            m.CopyFrom(given[0])
        return m, None
    path = os.fspath(model)
    return load_model(path), model_dir(path)


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

    ``model`` is a ModelProto (not modified), a path (external weights are not loaded), the
    bytes of a serialised model, an ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph``
    (:mod:`shapeinfer.io.modelsource`; TypeError for anything else). ``result.model`` is the
    ModelProto inferred (for a ModelProto without ``input_shapes``, the one given). ``input_shapes`` overrides graph
    inputs' dims: a sequence of dims (non-negative ints, symbol names or expressions) or the
    text the command line takes (``"1,seq"``), as many as the input's declared rank
    (:class:`~shapeinfer.inference.bindings.UnknownInput`, a KeyError, for a name that is not a graph
    input); ``bind`` specialises input symbols to ints of at least 1. Anything that cannot be
    right (a symbol no graph input has, a value out of range, a wrong rank, junk text) raises
    :class:`BindError`, a ValueError, before anything is inferred. ``timeout`` (seconds)
    raises :class:`shapeinfer.inference.engine.InferenceTimeout` when inference runs longer.
    ``dim_ranges`` gives input symbols integer ranges, ``{"seq": (1, 512)}`` (hi None: no upper
    bound; default ``[1, inf)``; BindError for a symbol no graph input has or an empty range).
    ``result.dims(name)`` gives a tensor's dims as ints and :class:`shapeinfer.symbolic.dims.Expr`;
    ``result.guards()`` the conditions on the input symbols under which they hold and
    ``result.ranges()`` each symbol's range under them.
    """
    bind = check_bind_values(bind) if bind else None
    ranges = check_ranges(dim_ranges) if dim_ranges else None
    shapes = check_input_shapes(input_shapes) if input_shapes else None
    m, where = _load(model, copy=bool(shapes))
    return _run(m, base_dir or where, shapes, bind, timeout, ranges)


def _run(m: onnx.ModelProto, base_dir: str | None, shapes, bind, timeout: float | None, ranges=None) -> Result:
    """Infer ``m`` with entries already checked by :mod:`shapeinfer.inference.bindings`, after checking
    them against ``m`` (input names and ranks, bound and ranged symbols)."""
    check_model(m, shapes, bind, ranges)
    result = _infer(m, base_dir=base_dir, input_shapes=shapes, bind=bind, timeout=timeout, dim_ranges=ranges)
    if bind and any(d.severity == "error" for d in result.diagnostics):
        # a clash at a node may be a bound value no input can have: say so (G015), as the CLI does
        result.diagnostics.extend(
            binding_contradictions(m, bind, base_dir=base_dir, dim_ranges=ranges, timeout=timeout)
        )
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
    With ``bind``, the graph inputs carry the bound values too (as ``optimize(bind=...)`` writes
    them): the dims written are valid only at those values, and the model says so where a
    runtime checks what it is fed. When no input those values or shapes allow satisfies the
    model's guards (G015: ``bind={"seq": 1000}`` where the model needs ``seq <= 512``), nothing is
    annotated: :class:`BindError` names the value, the guard and its nodes.
    """
    bind = check_bind_values(bind) if bind else None
    shapes = check_input_shapes(input_shapes) if input_shapes else None
    m, where = _load(model, copy=True)
    result = _run(m, where, shapes, bind, None)
    clashes = [d.message for d in result.diagnostics if d.code == CONTRADICTION]
    if clashes:  # its shapes hold for no input it was asked about: nothing to annotate
        raise BindError("", "; ".join(clashes), "bind" if bind else "input_shapes")
    annotated = annotate(result)
    if bind:
        specialise_inputs(annotated, bind)  # the graph inputs say what the value_info was inferred at
    return annotated
