"""``onnx.shape_inference``'s ``infer_shapes`` and ``infer_shapes_path``, answered by shapeinfer.

::

    # from onnx.shape_inference import infer_shapes, infer_shapes_path
    from shapeinfer.compat.onnx import infer_shapes, infer_shapes_path

Same signatures, same return contract (a new ModelProto with ``value_info`` and graph output
types; ``infer_shapes_path`` writes the file, over the input when ``output_path`` is empty), same
exception type (``onnx.shape_inference.InferenceError`` in ``strict_mode`` and for
``check_type``). How the results differ from onnx's:

- a graph input with an initializer (a default the caller may override, IR >= 4) is read as
  a constant, as onnx reads it: dims that follow from its value hold only while the default
  is used. Each such input is an assumption, reported as an info ``G013`` in the log (logger
  ``shapeinfer.compat``, as every diagnostic of the run); ``shapeinfer`` itself and
  :func:`shapeinfer.infer` keep such values open;
- a dim onnx leaves unknown is an expression of the inputs' symbols where shapeinfer can say
  one (``2*seq``, ``(seq + 1)//2``, written as ``dim_param``), or a fresh symbol where nobody
  can (onnx leaves the dim empty, or names it): fresh symbols are spelled as onnx spells its
  own, ``unk__<n>``, numbered past any the model already uses (``shapeinfer`` writes
  ``unk_<n>``);
- values are propagated always (``data_prop`` is accepted and has no effect: shape tensors'
  values are tracked symbolically in any case);
- ``check_type`` raises ``InferenceError`` where onnx's does, with or without
  ``strict_mode``: a node with an input or output count its schema does not take, or an
  input type its schema does not allow (``Sqrt`` of int64, ``Add`` of float and int64);
  ``strict_mode`` raises on the first other error inference reports (an invalid node, a
  declared element type, rank or int dim inference contradicts; not a contradiction only
  between symbolic dims, which onnx does not see), except a Reshape-1 without its ``shape``
  attribute, which onnx's inference passes (its checker refuses it). The messages are
  shapeinfer's, with onnx's words where its tests match them (``loop state variables``,
  ``overflow``, ``greater than zero``);
- where onnx's dims differ from what onnxruntime computes, the dims are onnxruntime's: a
  Resize by float scales is sized in float32 as onnxruntime does (``16777217 * 1.0`` gives
  16777216, where onnx computes in double), an STFT by its ``onesided`` default has ``n//2 + 1`` bins;
  before IR 4 an initializer listed as a graph input is the constant it then is (onnx leaves
  such an input's dims open). Of onnx 1.23's own ``shape_inference_test.py`` 949 tests pass
  (onnx 983); the others expect open a dim, rank or type shapeinfer knows (21), dims
  onnxruntime's run contradicts (10: Resize, STFT, dilated SAME pools), dims onnx derives by
  assuming an unknown Slice's axes or steps are the defaults (2), or read onnx's C++ inference
  context from a custom schema (1);
- a model-local function that calls itself raises ``onnx.checker.ValidationError``, whatever
  the flags, as onnx does;
- ``infer_shapes`` also takes what :func:`shapeinfer.infer_shapes` takes (an ``onnx_ir.Model``,
  an ``onnx_graphsurgeon.Graph``) besides a ModelProto and bytes; a path is a TypeError with
  onnx's message, as in onnx;
- ``infer_shapes_path`` never loads external weights, writes atomically (a failure leaves no
  half-written file) and keeps external data references (copying the data files when the
  output is in another folder), where onnx rewrites the model through protobuf; like every
  write of shapeinfer's, it raises :class:`~shapeinfer.io.userfiles.WriteRefused` rather than
  replace a data file it did not create or write a model whose data file is missing.
"""

from __future__ import annotations

import logging
import os
import re

import onnx
from onnx.shape_inference import InferenceError

from shapeinfer.base import codes
from shapeinfer.compat._fresh import spell_fresh_as_onnx
from shapeinfer.document import Document
from shapeinfer.document import open as open_model
from shapeinfer.inference.declarations import declared_types, statically_contradicts
from shapeinfer.inference.engine import Result
from shapeinfer.inference.type_check import type_errors
from shapeinfer.io.modelsource import is_path
from shapeinfer.io.onnxio import ModelLoadError

__all__ = ["InferenceError", "infer_shapes", "infer_shapes_path"]

#: onnx's inference prints nothing: the diagnostics go to this logger, which has a NullHandler so
#: that Python's last-resort handler does not print them either (configure logging to see them)
logger = logging.getLogger("shapeinfer.compat.onnx")
logger.addHandler(logging.NullHandler())


def _infer(doc: Document) -> Result:
    """shapeinfer's inference as onnx's sees the model: initializer defaults of graph inputs
    read as constants (each assumption an info G013), every diagnostic logged."""
    result = doc.infer(reading="onnx")
    for d in result.diagnostics:
        logger.log(logging.WARNING if d.severity == "error" else logging.INFO, "%s", d)
    for d in result.diagnostics:
        if d.code == codes.RECURSIVE_FUNCTION and d.severity == "error":  # onnx's checker refuses it in any mode
            raise onnx.checker.ValidationError(str(d))
    return result


#: the engine's E018 for a node with more or fewer inputs or outputs than its schema takes
_ARITY = re.compile(r"^\d+ (input|output)\(s\) where ")


def _arity(d) -> bool:
    return d.code == codes.WRONG_INPUT_OUTPUT_COUNT and bool(_ARITY.match(d.message))


def _onnx_sees(d, result: Result) -> bool:
    """Whether onnx's strict inference fails on what the error ``d`` reports: a declared type
    that contradicts the inferred one only between symbolic dims (G006: ``unk__0`` declared
    where ``unk__0 + unk__1 + 3`` is inferred) it does not see; it keeps its own dims."""
    if d.code == codes.RESHAPE_TARGET_FORM_MISMATCH and d.message.startswith("Reshape-1 without a shape attribute"):
        return False  # a missing attribute: onnx's checker refuses the node, its inference passes it
    if d.code == codes.EXTERNAL_DATA_UNREADABLE:
        return False  # onnx's inference never reads external data (infer_shapes_path writes no such model)
    if d.code != codes.DECLARED_SHAPE_MISMATCH or not d.tensor:
        return True
    graph = d.graph or "main"
    declared = declared_types(result.model).get(graph, {}).get(d.tensor)
    if declared is None:  # not a value_info or output declaration (a graph input's default)
        return True
    return statically_contradicts(result.graph_facts.get(graph, {}).get(d.tensor), declared)


def _strict(result: Result) -> None:
    """Raise for the first error inference reported that onnx's strict inference sees too,
    except the schema's input/output counts, which onnx checks only with ``check_type``."""
    errors = [d for d in result.diagnostics if d.severity == "error" and not _arity(d) and _onnx_sees(d, result)]
    if errors:
        raise InferenceError(f"[ShapeInferenceError] {errors[0]}")


def _check_types(result: Result) -> None:
    """Raise what onnx's ``check_type`` raises on whatever ``strict_mode`` says: a node whose
    input or output count its schema does not take, or an input type its schema does not allow
    (G008, ``Sqrt`` of int64, ``Add`` of float and int64). Before :func:`annotate`."""
    found = [
        str(d)
        for d in result.diagnostics
        if d.code == codes.WRONG_INPUT_OUTPUT_COUNT and d.severity == "error" and _ARITY.match(d.message)
    ]
    if not found:
        found = [str(d) for d in type_errors(result.model, result.graph_facts)]
    if found:
        raise InferenceError(f"[TypeInferenceError] {found[0]}")


def _inferred(doc: Document, check_type: bool, strict_mode: bool) -> onnx.ModelProto:
    """The Document's model inferred and with its types written as onnx writes them (fresh
    symbols spelled ``unk__<n>``), after raising what ``check_type`` and ``strict_mode`` ask
    for: the one path of :func:`infer_shapes` and :func:`infer_shapes_path`."""
    result = _infer(doc)
    if check_type:
        _check_types(result)
    if strict_mode:
        _strict(result)
    out = doc.annotated(result, name_fresh=True, refuse_contradictions=False)
    spell_fresh_as_onnx(out, result.fresh_symbols)
    return out


def infer_shapes(
    model: onnx.ModelProto | bytes,
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
) -> onnx.ModelProto:
    """A copy of ``model`` with every tensor's type in ``value_info`` (onnx's contract).

    ``strict_mode``: raise :class:`onnx.shape_inference.InferenceError` when inference reports
    an error; otherwise the model is returned with what could be inferred. ``check_type``:
    raise it for a node its schema's input/output counts or type constraints refuse, in either
    mode (as onnx does). ``data_prop`` is accepted for compatibility (see the module docstring).
    """
    if is_path(model):
        raise TypeError(  # onnx 1.23's words
            "infer_shapes only accepts ModelProto or bytes, "
            "For Model paths (str or os.PathLike), use infer_shapes_path()."
        )
    return _inferred(open_model(model), check_type, strict_mode)  # the caller's model is never changed


def infer_shapes_path(
    model_path: str | os.PathLike,
    output_path: str | os.PathLike = "",
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
) -> None:
    """Infer the model at ``model_path`` and write it to ``output_path`` (``model_path`` itself
    when empty), as onnx's ``infer_shapes_path`` does. External weights are not loaded; their
    references are kept. ``strict_mode`` raises :class:`onnx.shape_inference.InferenceError`
    before anything is written."""
    if not is_path(model_path):
        raise TypeError(f"infer_shapes_path only accepts model path (String), not {type(model_path).__name__}")
    src = os.fspath(model_path)
    out = os.fspath(output_path) if output_path else src
    try:
        doc = open_model(src)
    except ModelLoadError as e:  # onnx: "Unable to open proto file: ..." as a ValidationError
        raise onnx.checker.ValidationError(str(e)) from None
    doc.write(out, in_place=True, model=_inferred(doc, check_type, strict_mode))
