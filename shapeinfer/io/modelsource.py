"""What the Python API takes as a model, and how each form becomes a ``ModelProto``.

:func:`shapeinfer.infer`, :func:`shapeinfer.infer_shapes`, :func:`shapeinfer.optimize` and
:func:`shapeinfer.analysis.verify.verify` take any of:

- an ``onnx.ModelProto`` (never modified: the API works on a copy where it writes);
- a path (``str`` or ``os.PathLike``; external weights are located from its folder);
- the bytes of a serialised model (``bytes``, ``bytearray``, ``memoryview``): always parsed as a
  model, never taken as a file name;
- an ``onnx_ir.Model``, converted with onnx_ir's own serialiser (``onnx_ir.serde``);
- an ``onnx_graphsurgeon.Graph``, converted with ``onnx_graphsurgeon.export_onnx`` (without its
  type check: inferring the missing types is the point).

Neither onnx_ir nor onnx_graphsurgeon is ever imported here: an object of theirs can exist
only once its package is imported, so it is recognised through ``sys.modules``. Anything else
raises TypeError naming what is accepted.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Union

import onnx

from shapeinfer.io.onnxio import LoadedModel, ModelLoadError, load_model_file, parse_model
from shapeinfer.io.userfiles import file_folder

if TYPE_CHECKING:
    import onnx_graphsurgeon
    import onnx_ir

#: Everything :func:`in_memory` and the API accept as a model (a Union: the last two are names
#: of packages that are not imported).
ModelLike = Union[
    onnx.ModelProto, str, os.PathLike, bytes, bytearray, memoryview, "onnx_ir.Model", "onnx_graphsurgeon.Graph"
]

ACCEPTED = (
    "an onnx.ModelProto, a path (str or os.PathLike), the bytes of a serialised model, "
    "an onnx_ir.Model or an onnx_graphsurgeon.Graph"
)

__all__ = ["ACCEPTED", "ModelLike", "check_kind", "in_memory", "is_path", "model_dir", "own_copy", "read_if_path"]


def is_path(model: object) -> bool:
    """True when ``model`` is a path: a ``str`` or an ``os.PathLike`` (not bytes: bytes are a model)."""
    return isinstance(model, (str, os.PathLike))


def read_if_path(model: object, *, lean: bool = False) -> LoadedModel | None:
    """The file of a path (:func:`is_path`) read (:func:`~shapeinfer.io.onnxio.load_model_file`,
    which raises for a file that is no model); None for a model in memory, which is checked to
    be one (:func:`check_kind`: TypeError for anything that is no :data:`ModelLike`)."""
    if is_path(model):
        return load_model_file(os.fspath(model), lean=lean)
    check_kind(model)
    return None


def model_dir(path: str | os.PathLike | None) -> str | None:
    """The folder external data of the model at ``path`` is read from, as onnx and onnxruntime
    read it (:func:`~shapeinfer.io.userfiles.file_folder`: the folder of the path as given, its
    symlinks followed; None for a model in memory and for ``-``, standard input)."""
    if path is None or os.fspath(path) == "-":
        return None
    return file_folder(os.fspath(path))


def in_memory(model: object) -> tuple[onnx.ModelProto, bool] | None:
    """The ``ModelProto`` of a model given in memory, and whether it is the caller's own object.

    Returns None for a path (:func:`is_path`: the caller reads the file). ``(proto, True)`` for
    a ``ModelProto``, which is the caller's and must not be modified; ``(proto, False)`` for a
    proto made here from bytes, an ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph``, which
    the caller may change. Raises :class:`~shapeinfer.io.onnxio.ModelLoadError` for bytes that are
    not a model and TypeError for anything that is none of :data:`ModelLike`.
    """
    if isinstance(model, onnx.ModelProto):
        return model, True
    if is_path(model):
        return None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _parse(bytes(model)), False
    ir = sys.modules.get("onnx_ir")
    if ir is not None and isinstance(model, ir.Model):
        from onnx_ir import serde

        return serde.serialize_model(model), False
    gs = sys.modules.get("onnx_graphsurgeon")
    if gs is not None and isinstance(model, gs.Graph):
        return export_graphsurgeon(model), False
    raise _not_a_model(model)


def check_kind(model: object) -> None:
    """Raise the TypeError of :func:`in_memory` for anything that is none of :data:`ModelLike`,
    without reading or converting anything."""
    if isinstance(model, (onnx.ModelProto, bytes, bytearray, memoryview)) or is_path(model):
        return
    ir, gs = sys.modules.get("onnx_ir"), sys.modules.get("onnx_graphsurgeon")
    if (ir is not None and isinstance(model, ir.Model)) or (gs is not None and isinstance(model, gs.Graph)):
        return
    raise _not_a_model(model)


def _not_a_model(model: object) -> TypeError:
    kind = type(model)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return TypeError(f"expected {ACCEPTED} as the model, not {name}")


def own_copy(model: object) -> onnx.ModelProto | None:
    """The ``ModelProto`` of a model given in memory (:func:`in_memory`) that this package may
    modify: a copy when it is the caller's own object. None for a path."""
    given = in_memory(model)
    if given is None:
        return None
    proto, callers = given
    if callers:
        proto = onnx.ModelProto()
        proto.CopyFrom(given[0])
    return proto


#: Stands, during :func:`export_graphsurgeon`, for an empty list attribute (no attribute has it).
_EMPTY = "\0shapeinfer: empty list"


def export_graphsurgeon(graph: onnx_graphsurgeon.Graph) -> onnx.ModelProto:
    """``graph`` as ``onnx_graphsurgeon.export_onnx(graph, do_type_check=False)`` makes it, also
    where its node attributes hold empty lists.

    graphsurgeon cannot export an empty list attribute on its own with onnx 1.15 and later
    (onnx's ``make_attribute`` refuses to guess the type of ``[]``), and torch.export writes
    them (``Constant(value_ints=[])``): every dynamo model imported into graphsurgeon fails to
    export. Here each one is given its type (from the op's schema, else ints) for the duration
    of the export, as an attribute reference graphsurgeon writes typed and empty, and the
    reference is removed from the model made. The graph is restored before this returns (it
    is changed while this runs: not for a graph another thread is using).
    """
    import onnx_graphsurgeon as gs

    changed: list[tuple[dict, str, object]] = []
    try:
        for node in _gs_nodes(graph, gs):
            for key, value in node.attrs.items():
                if isinstance(value, (list, tuple)) and not value:
                    changed.append((node.attrs, key, value))
                    node.attrs[key] = gs.Node.AttributeRef(_EMPTY, _list_type(node.op, node.domain, key, gs))
        model = gs.export_onnx(graph, do_type_check=False)
    finally:
        for attrs, key, value in changed:
            attrs[key] = value
    if changed:
        for node in _proto_nodes(model):
            for a in node.attribute:
                if a.ref_attr_name == _EMPTY:
                    a.ClearField("ref_attr_name")
    return model


def _gs_nodes(graph, gs):
    """Every node of a graphsurgeon graph, its subgraphs' and its functions'."""
    todo = [graph, *getattr(graph, "functions", ())]
    while todo:
        g = todo.pop()
        for node in g.nodes:
            yield node
            for value in node.attrs.values():
                if isinstance(value, gs.Graph):
                    todo.append(value)
                elif isinstance(value, (list, tuple)):
                    todo.extend(v for v in value if isinstance(v, gs.Graph))


def _proto_nodes(model: onnx.ModelProto):
    """Every node of ``model``: its graph's, their subgraphs' and its functions'."""
    todo = [model.graph, *model.functions]
    while todo:
        g = todo.pop()
        for node in g.node:
            yield node
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    todo.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    todo.extend(a.graphs)


def _list_type(op: str, domain: str | None, key: str, gs) -> object:
    """The graphsurgeon type of list attribute ``key`` of ``op`` (its schema's; ints unknown)."""
    from typing import List  # graphsurgeon's own spelling of list types  # noqa: UP035

    try:
        kind = onnx.defs.get_schema(op, domain or "").attributes[key].type
    except Exception:  # no schema, or no such attribute in it
        kind = onnx.AttributeProto.INTS
    return {
        onnx.AttributeProto.FLOATS: List[float],  # noqa: UP006
        onnx.AttributeProto.STRINGS: List[str],  # noqa: UP006
        onnx.AttributeProto.TENSORS: List[gs.Tensor],  # noqa: UP006
        onnx.AttributeProto.GRAPHS: List[gs.Graph],  # noqa: UP006
    }.get(kind, List[int])  # noqa: UP006


def _parse(data: bytes) -> onnx.ModelProto:
    try:
        return parse_model(data, "model bytes")
    except ModelLoadError as e:
        if len(data) < 4096 and b"\0" not in data and os.path.exists(os.fsdecode(data)):
            raise ModelLoadError(f"{e}; bytes are parsed as a serialised model: pass a path as a str") from None
        raise
