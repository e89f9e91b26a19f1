"""The Python API: infer a model's shapes from a ModelProto or a path."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import onnx

from shapeinfer import dims as D
from shapeinfer.engine import Result, model_dir
from shapeinfer.engine import infer as _infer
from shapeinfer.onnxio import load_model
from shapeinfer.writer import annotate

ModelLike = onnx.ModelProto | str | os.PathLike


def _load(model: ModelLike, copy: bool) -> tuple[onnx.ModelProto, str | None]:
    if isinstance(model, onnx.ModelProto):
        if copy:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            return m, None
        return model, None
    path = os.fspath(model)
    return load_model(path), model_dir(path)


def infer(
    model: ModelLike,
    *,
    input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
    bind: Mapping[str, int] | None = None,
    base_dir: str | None = None,
) -> Result:
    """Infer every tensor's dims, the symbol table and diagnostics.

    ``model`` is a ModelProto (not modified unless ``input_shapes`` is given, which rewrites its
    graph inputs) or a path (external weights are not loaded). ``input_shapes`` overrides graph
    inputs' dims (ints, symbol names or expressions); ``bind`` specialises symbols to ints.
    ``result.facts[name].shape`` gives a tensor's dims as ints and :class:`shapeinfer.dims.Expr`.
    """
    m, where = _load(model, copy=bool(input_shapes))
    shapes = None
    if input_shapes:
        shapes = {k: [D.parse(x) if isinstance(x, str) else x for x in v] for k, v in input_shapes.items()}
    return _infer(m, base_dir=base_dir or where, input_shapes=shapes, bind=bind)


def infer_shapes(
    model: ModelLike,
    *,
    input_shapes: Mapping[str, Sequence[D.Dim | str | int]] | None = None,
    bind: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    """A copy of ``model`` with every tensor's type and dims written into ``value_info``.

    Graph outputs get their types too; dims are ``dim_value`` or ``dim_param`` expression text.
    Weights are left as they are (external data stays external).
    """
    if isinstance(model, onnx.ModelProto):
        m, where = _load(model, copy=True)
    else:
        m, where = _load(model, copy=False)
    shapes = None
    if input_shapes:
        shapes = {k: [D.parse(x) if isinstance(x, str) else x for x in v] for k, v in input_shapes.items()}
    return annotate(_infer(m, base_dir=where, input_shapes=shapes, bind=bind))
