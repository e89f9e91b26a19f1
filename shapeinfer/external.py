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
        raise ExternalDataError(f"external data {info.get('location')!r}: {e.strerror or e}") from None
    if len(raw) < n * np.dtype(dtype).itemsize:
        raise ExternalDataError(f"external data {info.get('location')!r}: file too short")
    return np.frombuffer(raw, dtype=dtype, count=n).reshape(tuple(t.dims))
