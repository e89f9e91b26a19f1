"""The Python API: infer a model's shapes from a ModelProto, a path, the bytes of a model, an
``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph`` (:mod:`shapeinfer.io.modelsource`).

``bind``, ``input_shapes`` and ``dim_ranges`` are checked by :mod:`shapeinfer.inference.bindings` (the
same rules and wording as the command line's ``--bind``, ``--input-shape``, ``--dim-range``)
before anything is inferred.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from shapeinfer.document import check_passes
from shapeinfer.document import open as open_model
from shapeinfer.inference.bindings import (
    BindError,
    check_bind_symbols,
    check_bind_values,
    check_input_shapes,
    check_ranges,
)
from shapeinfer.inference.engine import Result
from shapeinfer.io.modelsource import ModelLike, check_kind
from shapeinfer.symbolic import dims as D

__all__ = [
    "BindError",
    "ModelLike",
    "check_bind_symbols",
    "check_bind_values",
    "check_ranges",
    "infer",
    "infer_shapes",
    "make_dynamic",
    "optimize",
]


def _checked_first(input_shapes, bind, dim_ranges) -> None:
    """The entries' own checks (values, text, ranges), before the model is read: a bad entry is
    reported as such whatever the model is. The Document checks them again against the model."""
    if bind:
        check_bind_values(bind)
    if dim_ranges:
        check_ranges(dim_ranges)
    if input_shapes:
        check_input_shapes(input_shapes)


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
    check_kind(model)
    _checked_first(input_shapes, bind, dim_ranges)
    doc = open_model(model, base_dir=base_dir)
    return doc.infer(input_shapes=input_shapes, bind=bind, timeout=timeout, dim_ranges=dim_ranges)


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
    check_kind(model)
    _checked_first(input_shapes, bind, None)
    doc = open_model(model)
    doc.infer(input_shapes=input_shapes, bind=bind)
    return doc.annotated()


def optimize(
    model: ModelLike,
    *,
    passes: Sequence[str] | None = None,
    bind: Mapping[str, int] | None = None,
    target_opset: int | None = None,
    all_shapes: bool = False,
) -> onnx.ModelProto:
    """An optimized, annotated copy of ``model`` computing exactly what it computes:
    ``shapeinfer.open(model).optimize(...).model`` (see
    :func:`shapeinfer.passes.optimize_with_report` for the arguments). ``model`` is never
    modified."""
    check_kind(model)
    check_passes(passes)  # an unknown pass, a bad binding: named before the model is read
    if bind:
        check_bind_values(bind)
    return open_model(model).optimize(passes=passes, bind=bind, target_opset=target_opset, all_shapes=all_shapes).model


def make_dynamic(model: ModelLike, *, dims: Mapping[str, Mapping[int, str]]) -> onnx.ModelProto:
    """A copy of ``model`` with each input axis ``dims[input][axis]`` made the symbol named and
    every constant that baked its old size in rewritten (:mod:`shapeinfer.passes.make_dynamic`):
    ``shapeinfer.make_dynamic(m, dims={"input_ids": {0: "batch", 1: "seq"}})``. ValueError for a
    request that cannot be right; :class:`~shapeinfer.passes.make_dynamic.MakeDynamicError`
    (its ``refusals`` name each node and why) when the rewrite cannot be proved. ``model`` is
    never modified."""
    from shapeinfer.passes.make_dynamic import make_dynamic as _make_dynamic

    check_kind(model)
    doc = open_model(model)
    return _make_dynamic(doc.model, dims, base_dir=doc.folder)
