"""Reading small tensors stored in external data files, safely.

A location is refused when it is absolute, climbs out of the model's folder, or resolves
(through symlinks) to a file outside it: model files must not be a way to read arbitrary files.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto


class ExternalDataError(Exception):
    """An external-data reference that is unsafe or cannot be read."""


class ExternalDataMissing(ExternalDataError):
    """A safe external-data reference whose file is missing or too short."""


def iter_tensors(model: onnx.ModelProto):
    """Every TensorProto a model stores: initializers and tensor attributes, subgraphs included."""

    def graph(g: onnx.GraphProto):
        yield from g.initializer
        for n in g.node:
            yield from node_tensors(n)

    def node_tensors(n: onnx.NodeProto):
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t
            elif a.type == onnx.AttributeProto.GRAPH:
                yield from graph(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    yield from graph(sg)

    yield from graph(model.graph)
    for f in model.functions:
        for n in f.node:
            yield from node_tensors(n)


def external_locations(model: onnx.ModelProto) -> list[str]:
    """The distinct external-data locations a model references, in first-use order."""
    locs: dict[str, None] = {}
    for t in iter_tensors(model):
        if t.data_location == TensorProto.EXTERNAL:
            locs.setdefault(external_info(t).get("location", ""), None)
    return list(locs)


def check_locations(model: onnx.ModelProto, base_dir: str) -> None:
    """Raise ExternalDataError for the first external-data location that is unsafe (none is opened)."""
    for loc in external_locations(model):
        safe_location(loc, base_dir)


def external_info(t: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}


def safe_location(location: str, base_dir: str | None) -> str:
    """The absolute path of ``location`` inside ``base_dir``; raises ExternalDataError if unsafe."""
    if base_dir is None:
        raise ExternalDataError(f"external data {location!r}: the model's folder is unknown")
    if not location or os.path.isabs(location) or location.startswith(("/", "\\")):
        raise ExternalDataError(f"external data {location!r}: absolute paths are refused")
    parts = location.replace("\\", "/").split("/")
    if ".." in parts:
        raise ExternalDataError(f"external data {location!r}: paths leaving the model's folder are refused")
    base = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(base, location))
    if os.path.commonpath([base, path]) != base:
        raise ExternalDataError(f"external data {location!r}: resolves outside the model's folder")
    return path


def read_external_tensor(t: TensorProto, base_dir: str | None) -> np.ndarray:
    """The array of an external tensor, reading only its own bytes."""
    info = external_info(t)
    path = safe_location(info.get("location", ""), base_dir)
    offset = int(info.get("offset", 0) or 0)
    length = info.get("length")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
    n = 1
    for d in t.dims:
        n *= d
    nbytes = int(length) if length else n * np.dtype(dtype).itemsize
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            raw = f.read(nbytes)
    except OSError as e:
        raise ExternalDataMissing(f"external data {info.get('location')!r}: {e.strerror or e}") from None
    if len(raw) < n * np.dtype(dtype).itemsize:
        raise ExternalDataMissing(f"external data {info.get('location')!r}: file too short")
    return np.frombuffer(raw, dtype=dtype, count=n).reshape(tuple(t.dims))
