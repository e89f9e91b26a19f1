"""Conversions between ONNX protobuf messages and facts, and model file I/O.

Only small tensors are ever decoded: a weight's dims and type come from its header fields,
its data is read only when it is small enough to matter for shapes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import onnx
from onnx import TensorProto, TypeProto

from shapeinfer.io.external import (
    ExternalDataError,
    check_locations,
    data_files,
    external_tensors,
    read_external_tensor,
    resolve,
)
from shapeinfer.io.userfiles import STDIO, UserFileError, check_stdout, file_folder, read_input, show, stdout_file
from shapeinfer.io.wire import GraphLayout, graph_layout, without_large_raw_data
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, values_from_array
from shapeinfer.symbolic.names import is_placeholder


def graph_path(parent: str, node_index: int, attr: str) -> str:
    """The key of a subgraph in ``Result.graph_facts``: parent path, node index, attribute name."""
    return f"{parent}/{node_index}.{attr}"


def subgraph_attrs(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """``(attr, graph)`` for each subgraph of ``node``, in attribute order: ``attr`` is the
    attribute name, with ``[j]`` after it for the j-th graph of a GRAPHS attribute (the form
    :func:`shapeinfer.inference.engine.graph_path` takes)."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for j, g in enumerate(a.graphs):
                yield f"{a.name}[{j}]", g


def stacked_outputs_from(node: onnx.NodeProto, body: onnx.GraphProto) -> int | None:
    """The position of the first output of ``body``, a Loop's or a Scan's body, that the node
    stacks along a new axis (its scan outputs), or None for any other subgraph. When no
    iteration runs, onnxruntime shapes such an output from the body output's declared type (a
    dim_value kept, any other dim 0), so what is written there changes what the model computes."""
    if node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "Loop":
        return max(0, len(body.input) - 1)  # after the condition and the carried values
    if node.op_type == "Scan":
        k = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), None)
        return None if k is None else max(0, len(body.input) - k)  # after the states
    return None


def graphs_within(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` and every subgraph nested in its nodes, depth first, parents before children."""
    yield graph
    for n in graph.node:
        for _, g in subgraph_attrs(n):
            yield from graphs_within(g)


def initializer_names(graph: onnx.GraphProto) -> list[str]:
    """The names of ``graph``'s initializers, dense ones first, then sparse ones."""
    return [t.name for t in graph.initializer] + [t.values.name for t in graph.sparse_initializer]


def graphs_with_paths(graph: onnx.GraphProto, path: str = "main") -> Iterator[tuple[str, onnx.GraphProto]]:
    """``(path, graph)`` for ``graph`` and every subgraph nested in it, in the order of
    :func:`graphs_within`, each keyed by :func:`graph_path` (as ``Result.graph_facts`` is)."""
    yield path, graph
    for k, n in enumerate(graph.node):
        for attr, g in subgraph_attrs(n):
            yield from graphs_with_paths(g, graph_path(path, k, attr))


def type_dims(tp: onnx.TypeProto) -> Iterator[onnx.TensorShapeProto.Dimension]:
    """The shape dims a type declares: a tensor's (dense or sparse), a sequence's or optional's
    element's, a map's value's; none for a type without a shape."""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        yield from getattr(tp, which).shape.dim
    elif which in ("sequence_type", "optional_type"):
        yield from type_dims(getattr(tp, which).elem_type)
    elif which == "map_type":
        yield from type_dims(tp.map_type.value_type)


class ModelLoadError(Exception):
    """A file that cannot be read as an ONNX model; the message names the file and problem."""


class StdoutIsModelData(ModelLoadError):
    """Standard output writes into one of the model's external data files (``>> m.data``):
    nothing may be printed. ``data_files`` are the model's data files."""

    def __init__(self, message: str, data_files: list[str]) -> None:
        super().__init__(message)
        self.data_files = data_files


def load_model(path: str) -> onnx.ModelProto:
    """Parse the model at ``path`` (``-``: standard input) without loading external weights.

    The file is opened through :func:`shapeinfer.io.userfiles.read_input` (a regular file of at
    most 2 GiB, never blocking). Raises :class:`ModelLoadError` with a one-line reason for
    anything that is not a model, and :class:`~shapeinfer.io.external.ExternalDataError` for an
    external-data location that is absolute or leaves the model's folder (nothing outside the
    folder is ever opened).
    """
    return load_model_file(path).model


@dataclass(frozen=True)
class LoadedModel:
    """A model as :func:`load_model_file` read it, with what writing it back can reuse.

    ``external``: the tensors stored as external data, as the location check found them
    (:func:`shapeinfer.io.external.external_tensors`; None for standard input). ``data``: the bytes
    of the file. ``layout``: where its graph's initializers lie in ``data``
    (:func:`shapeinfer.io.wire.graph_layout`; None when not looked for or not found). ``lean``: the
    main graph's initializers of more than :data:`~shapeinfer.symbolic.facts.MAX_VALUE_ELEMENTS`
    elements were parsed without their ``raw_data`` (inference never reads it); such a model is
    only ever written with the bytes of ``data``. All of it stays true as long as no tensor of
    the model changes: inference and :func:`shapeinfer.io.writer.annotate` change none (they write
    types and ``value_info`` only), so the writer, given ``Source(path, loaded)``
    (:class:`shapeinfer.io.source.Source`), need not walk or re-serialise them.
    """

    model: onnx.ModelProto
    external: list[TensorProto] | None
    data: bytes
    layout: GraphLayout | None = None
    lean: bool = False


def load_model_file(path: str, *, lean: bool = False) -> LoadedModel:
    """:func:`load_model`, keeping the file's bytes and its external tensors (:class:`LoadedModel`).

    ``lean``: parse the main graph's large initializers without their data (see
    :class:`LoadedModel`): for inference and writing the model back with
    a :class:`~shapeinfer.io.source.Source` only, never for reading weights or rewriting the model.
    """
    try:
        data = read_input(path, what="model")
    except UserFileError as e:
        raise ModelLoadError(str(e)) from None
    return loaded_from_bytes(data, path, lean=lean)


def loaded_from_bytes(data: bytes, path: str, *, lean: bool = False) -> LoadedModel:
    """The :class:`LoadedModel` of ``data``, the bytes of the file at ``path`` (``-``: standard
    input): what :func:`load_model_file` makes of them once read, so that a model read once can
    be parsed again (in full after a ``lean`` parse, or afresh after a change) without reading
    the file again. Raises as :func:`load_model_file` does."""
    layout = None
    parsed = data
    if lean:
        layout = graph_layout(data)
        smaller = without_large_raw_data(data, layout, MAX_VALUE_ELEMENTS)
        if smaller is not None:
            parsed = smaller
    model = parse_model(parsed, show(path))
    lean = parsed is not data
    del parsed
    if path == STDIO:
        return LoadedModel(model, None, data, layout, lean)
    tensors = external_tensors(model)
    folder = file_folder(path)
    try:
        check_locations(model, folder, tensors)
    except ExternalDataError as e:
        raise ExternalDataError(f"{show(path)}: {e}") from None
    if tensors and stdout_file() is not None:
        files = data_files(tensors, folder)
        try:
            check_stdout(data_inputs=files, what="report")  # (>> m.data)
        except UserFileError as e:
            raise StdoutIsModelData(str(e), files) from None
    return LoadedModel(model, tensors, data, layout, lean)


def parse_model(data: bytes, name: str = "<bytes>") -> onnx.ModelProto:
    """Parse serialized model bytes; raises :class:`ModelLoadError` for anything else."""
    if not data:
        raise ModelLoadError(f"{name}: empty file, not an ONNX model")
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        raise ModelLoadError(f"{name}: not an ONNX model (protobuf parse failed)") from None
    if not m.HasField("graph") or (not m.graph.node and not m.graph.input and not m.graph.output):
        raise ModelLoadError(f"{name}: not an ONNX model (no graph)")
    return m


def _is_external(t: TensorProto) -> bool:
    return t.data_location == TensorProto.EXTERNAL


_FIELD_OF = {
    TensorProto.FLOAT: ("float_data", 4),
    TensorProto.DOUBLE: ("double_data", 8),
    TensorProto.INT64: ("int64_data", 8),
    TensorProto.UINT64: ("uint64_data", 8),
    TensorProto.UINT32: ("uint64_data", 4),
    TensorProto.INT32: ("int32_data", 4),
    TensorProto.INT16: ("int32_data", 2),
    TensorProto.UINT16: ("int32_data", 2),
    TensorProto.INT8: ("int32_data", 1),
    TensorProto.UINT8: ("int32_data", 1),
    TensorProto.BOOL: ("int32_data", 1),
    TensorProto.FLOAT16: ("int32_data", 2),
    TensorProto.BFLOAT16: ("int32_data", 2),
}


#: Every element type ONNX defines (``TensorProto.DataType``), built once: a set lookup per
#: tensor instead of the enum wrapper's list of values.
_DATA_TYPES = frozenset(TensorProto.DataType.values())


def tensor_problem(t: TensorProto) -> str | None:
    """What makes constant tensor ``t`` unreadable, or None: an undefined or unknown element type,
    or (for small in-model tensors of the common types) data that does not match its dims."""
    dtype = t.data_type
    if dtype == TensorProto.UNDEFINED:
        return "its element type is undefined"
    if dtype not in _DATA_TYPES:
        return f"its element type {dtype} is not an ONNX type"
    dims = t.dims
    if dims and min(dims) < 0:
        return f"negative dims {list(dims)}"
    if _is_external(t):
        return None
    n = math.prod(dims)
    spec = _FIELD_OF.get(dtype)
    if spec is None or n > MAX_VALUE_ELEMENTS:
        return None  # large tensors are never read here: their bytes are not copied to be counted
    field, size = spec
    if t.HasField("raw_data"):
        if len(t.raw_data) != n * size:
            return f"{len(t.raw_data)} bytes of raw_data for {n} element(s) of {size} byte(s)"
        return None
    have = len(getattr(t, field))
    if have != n:
        return f"{have} value(s) in {field} for {n} element(s)"
    return None


def tensor_numel(t: TensorProto) -> int:
    """The number of elements ``t``'s dims give (1 for a scalar)."""
    return math.prod(t.dims)


def tensor_fact(t: TensorProto, base_dir: str | None = None, with_value: bool = True) -> Fact:
    """The fact of a constant tensor: its dims and type, plus values when small and numeric.

    An external tensor's entry is checked against ``base_dir`` (the model's folder) when
    ``with_value``: the ExternalData* errors of :mod:`shapeinfer.io.external` are raised for a
    bad entry or a missing file, for a weight too (its value is not read); without a folder,
    only when its value is read."""
    shape = tuple(t.dims)
    value = None
    small = math.prod(shape) <= MAX_VALUE_ELEMENTS
    if _is_external(t):
        # ExternalDataError (unsafe location), ExternalDataMissing (no file), ExternalDataInvalid
        # (a bad entry or a file that is not what the entry says): the caller reports them
        if with_value and small and t.data_type not in (TensorProto.STRING, TensorProto.UNDEFINED):
            value = values_from_array(read_external_tensor(t, base_dir))
        elif with_value and base_dir is not None:  # a weight: its value is not needed, its file is
            resolve(t, base_dir)
    elif with_value and small and t.data_type not in (TensorProto.STRING, TensorProto.UNDEFINED):
        try:
            value = values_from_array(onnx.numpy_helper.to_array(t))
        except Exception:  # malformed tensor data: the values stay unknown
            value = None
    return Fact(t.data_type, shape, value)


def dim_from_proto(d: onnx.TensorShapeProto.Dimension) -> D.Dim | None:
    """The dim a shape-proto dimension spells, or None when it has neither value nor param, a
    negative value (``-1`` is how some exporters, Paddle's among them, spell a dynamic dim), or
    a placeholder param (:func:`is_placeholder`: ``?``, ``None``, ``-1``...)."""
    if d.HasField("dim_value"):
        return int(d.dim_value) if d.dim_value >= 0 else None
    if d.HasField("dim_param") and d.dim_param and not is_placeholder(d.dim_param):
        return D.parse(d.dim_param)
    return None


def type_fact(tp: TypeProto, fresh) -> Fact:
    """The fact a TypeProto declares; dims it leaves open are drawn from ``fresh(axis)``."""
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        tt = getattr(tp, which)
        shape = None
        if tt.HasField("shape"):
            shape = []
            for axis, d in enumerate(tt.shape.dim):
                v = dim_from_proto(d)
                shape.append(fresh(axis) if v is None else v)
            shape = tuple(shape)
        kind = "tensor" if which == "tensor_type" else "sparse_tensor"
        return Fact(tt.elem_type, shape, None, kind)
    if which == "sequence_type":
        return Fact(0, None, None, "sequence", type_fact(tp.sequence_type.elem_type, fresh))
    if which == "optional_type":
        return Fact(0, None, None, "optional", type_fact(tp.optional_type.elem_type, fresh))
    if which == "map_type":
        mt = tp.map_type
        value = type_fact(mt.value_type, fresh) if mt.HasField("value_type") else None
        return Fact(mt.key_type, None, None, "map", value)
    return Fact()


def write_shape(
    tt: TypeProto.Tensor | TypeProto.SparseTensor, shape: tuple[D.Dim, ...], unnamed: frozenset[str] = frozenset()
) -> None:
    """Append ``shape`` to tensor type ``tt``'s shape (set, even when empty): an int as dim_value,
    a symbolic dim as its dim_param text, and a dim holding a symbol of ``unnamed`` as an open
    dim (neither), as is an int no dim_value holds (negative, or past int64: a size no tensor has)."""
    tt.shape.SetInParent()
    for d in shape:
        dim = tt.shape.dim.add()
        if type(d) is int:
            if 0 <= d <= D.INT64_MAX:
                dim.dim_value = d
        elif not unnamed or unnamed.isdisjoint(D.symbols(d)):
            dim.dim_param = D.format(d)


def fact_type(f: Fact, unnamed: frozenset[str] = frozenset()) -> TypeProto:
    """The TypeProto that spells ``f`` (dims as dim_value or dim_param text, a dim holding a
    symbol of ``unnamed`` open), as far as it is known.

    The result may be incomplete (a tensor type without an element type, a map without a value
    type): fine for onnx's per-node inference, never written into a model as such (see
    :func:`shapeinfer.io.writer.annotate`).
    """
    tp = TypeProto()
    if f.kind in ("tensor", "sparse_tensor"):
        tt = tp.tensor_type if f.kind == "tensor" else tp.sparse_tensor_type
        if f.dtype:
            tt.elem_type = f.dtype
        if f.shape is not None:
            write_shape(tt, f.shape, unnamed)
    elif f.kind == "sequence":
        tp.sequence_type.elem_type.CopyFrom(fact_type(f.elem, unnamed) if f.elem else TypeProto())
    elif f.kind == "optional":
        tp.optional_type.elem_type.CopyFrom(fact_type(f.elem, unnamed) if f.elem else TypeProto())
    elif f.kind == "map":
        tp.map_type.key_type = f.dtype
        if f.elem is not None:
            tp.map_type.value_type.CopyFrom(fact_type(f.elem, unnamed))
    return tp


def attribute_value(a: onnx.AttributeProto) -> Any:
    """``a``'s value as :func:`onnx.helper.get_attribute_value` reads it, with strings (bytes in
    the proto) decoded as UTF-8, invalid bytes replaced."""
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8", "replace") for x in v]
    return v
