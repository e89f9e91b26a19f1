"""External data: the one reader every subcommand and pass goes through.

An external tensor's entry (``TensorProto.external_data``) is checked before any byte is read:

- keys: ``location`` (required), ``offset``, ``length``, ``checksum`` and ``basepath`` (onnx's
  allowed set; the last two are not used for reading). An unknown key or a key given twice is
  refused (onnx warns and takes the last one; onnxruntime refuses unknown keys), so every
  subcommand reads an entry the same way;
- ``offset`` and ``length`` are ASCII decimal integers within int64 (``" 8"``, ``"+8"``,
  ``"8.0"``, ``-1`` are refused);
- the location is relative, stays inside the model's folder (also through symlinks), and names
  a regular file: a FIFO, device, socket or folder is refused before it is opened, and the
  open descriptor (``O_NOFOLLOW | O_NONBLOCK``) is checked again with ``fstat``;
- ``offset + length`` (or ``offset`` when ``length`` is absent, meaning "to the end of the
  file") lies within the file.

Three outcomes for a bad entry, by exception class:

- :class:`ExternalDataError` (not a subclass below): the location is unsafe (absolute, ``..``,
  a symlink out of the folder). The model is refused as a whole: nothing outside the model's
  folder is ever opened.
- :class:`ExternalDataMissing`: the file is absent (weights stripped from a model are common),
  or the model has no folder (read from stdin or from memory). An absent file is one error per
  file (:func:`missing_data_files`: the model cannot run); without a folder, only a value that
  is needed makes this a diagnostic (a warning: the file may well be where the model is).
- :class:`ExternalDataInvalid`: anything else above. A diagnostic naming the tensor, the key
  and the problem; the tensor's value stays unknown.

Values are read only for small tensors, with a byte cap checked against the entry before any
allocation; big weights are never read into memory (:mod:`shapeinfer.io.datacopy` copies whole
files with the kernel, keeping holes sparse).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass

import onnx
from onnx import TensorProto

from shapeinfer.base.text import text
from shapeinfer.io.userfiles import file_kind, show
from shapeinfer.symbolic.dims import INT64_MAX

#: The keys onnx's external_data_helper accepts (checksum and basepath are not used for reading).
KNOWN_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})

#: Largest value read into memory by :func:`read_external_bytes` unless the caller says otherwise.
SMALL_BYTES = 1 << 16

_DIGITS = re.compile(r"[0-9]{1,19}")


class ExternalDataError(Exception):
    """An external-data reference that is unsafe (or, for subclasses, missing or invalid)."""


class ExternalDataMissing(ExternalDataError):
    """A safe reference whose file does not exist, or a model without a folder."""


class ExternalDataInvalid(ExternalDataError):
    """An entry or file that cannot be read as the entry says (bad key, number, kind, bounds)."""


#: The default-domain ops whose schemas have tensor or graph attributes (a test compares this
#: with onnx's schemas). The attributes of every other default-domain node are not looked at:
#: walking them all is most of the time this scan takes on a large model.
TENSOR_ATTRIBUTE_OPS = frozenset({"Constant", "ConstantOfShape", "If", "Loop", "Scan", "SequenceMap"})


#: An initializer of at most this many elements stored as external data is a "small constant"
#: (:func:`has_small_external_initializer`); onnx's save keeps tensors under 1 KiB inline.
SMALL_CONSTANT_ELEMENTS = 1024


def has_small_external_initializer(graph: onnx.GraphProto) -> bool:
    """Whether ``graph`` stores a small initializer (a shape, axes, scales) as external data:
    onnxruntime's loader cannot read such a value where its inference needs it (``Cannot parse
    data from external tensors``), which the types an annotation writes can make it need."""
    return any(
        t.data_location == TensorProto.EXTERNAL and math.prod(t.dims) <= SMALL_CONSTANT_ELEMENTS
        for t in graph.initializer
    )


def iter_tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    """Every TensorProto a model stores: initializers and tensor attributes of its graph, its
    functions and its ``training_info`` graphs, subgraphs included (tensor attributes of the
    default domain only where the op's schema has them; an attribute without its ``type`` by
    the fields it has set, as onnx reads it)."""
    return iter(_collect(model, external_only=False))


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """The tensors of ``model`` whose data lives in external files (as :func:`iter_tensors`
    finds them), in the order it visits them."""
    return _collect(model, external_only=True)


def _collect(model: onnx.ModelProto, external_only: bool) -> list[TensorProto]:
    """The walk behind :func:`iter_tensors` and :func:`external_tensors`, as plain loops over
    lists: on a model of many nodes it is dominated by visiting each node once."""
    out: list[TensorProto] = []
    ops = TENSOR_ATTRIBUTE_OPS
    external = TensorProto.EXTERNAL
    default = ("", "ai.onnx")

    def add(ts) -> None:
        if external_only:
            out.extend([t for t in ts if t.data_location == external])
        else:
            out.extend(ts)

    def graph(g: onnx.GraphProto) -> None:
        add(g.initializer)
        for st in g.sparse_initializer:
            add((st.values, st.indices))
        for n in g.node:
            if n.op_type in ops or n.domain not in default:
                node(n)

    def node(n: onnx.NodeProto) -> None:
        for a in n.attribute:
            kind = a.type
            if kind == onnx.AttributeProto.UNDEFINED:  # read by the fields set, as onnx does
                untyped(a)
            elif kind == onnx.AttributeProto.TENSOR:
                add((a.t,))
            elif kind == onnx.AttributeProto.SPARSE_TENSOR:
                add((a.sparse_tensor.values, a.sparse_tensor.indices))
            elif kind == onnx.AttributeProto.GRAPH:
                graph(a.g)
            elif kind == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    graph(sg)
            elif kind == onnx.AttributeProto.TENSORS:
                add(a.tensors)

    def untyped(a: onnx.AttributeProto) -> None:
        if a.HasField("t"):
            add((a.t,))
        if a.HasField("sparse_tensor"):
            add((a.sparse_tensor.values, a.sparse_tensor.indices))
        add(a.tensors)
        if a.HasField("g"):
            graph(a.g)
        for sg in a.graphs:
            graph(sg)

    graph(model.graph)
    for f in model.functions:
        for n in f.node:
            node(n)
    for ti in model.training_info:
        graph(ti.initialization)
        graph(ti.algorithm)
    return out


def external_info(t: TensorProto) -> dict[str, str]:
    """The entry as a dict (the last value of a repeated key; see :func:`parse_entry`)."""
    return {e.key: e.value for e in t.external_data}


def external_locations(model: onnx.ModelProto) -> list[str]:
    """The distinct external-data locations a model references, in first-use order."""
    locs: dict[str, None] = {}
    for t in external_tensors(model):
        locs.setdefault(external_info(t).get("location", ""), None)
    return list(locs)


def data_files(tensors: list[TensorProto], base_dir: str | None) -> list[str]:
    """The distinct files the external data of ``tensors`` names, as absolute paths inside
    ``base_dir`` (the model's folder), symlinks resolved, in first-use order.

    Every ``location`` value counts, a repeated key's too (onnx and onnxruntime each take a
    different one). These files are inputs of any run that reads the model: an output must
    never replace one (:func:`shapeinfer.io.userfiles.output_target`). Entries whose location is
    unsafe (refused when the model is loaded) or not a file name are skipped; empty without a
    folder.
    """
    if base_dir is None:
        return []
    seen: dict[str, None] = {}
    paths: dict[str, None] = {}
    for t in tensors:
        for e in t.external_data:
            if e.key != "location" or e.value in seen:
                continue
            seen[e.value] = None
            with contextlib.suppress(ExternalDataError):
                paths.setdefault(safe_location(e.value, base_dir), None)
    return list(paths)


def check_locations(model: onnx.ModelProto, base_dir: str, tensors: list[TensorProto] | None = None) -> None:
    """Raise ExternalDataError for the first external-data location that is unsafe (none is opened).

    Every ``location`` value counts, a repeated key's too; entries that are merely invalid or
    missing are left to :func:`resolve` (a diagnostic for the tensor, not a refusal).
    ``tensors``: the model's :func:`external_tensors`, when the caller has them already.
    """
    seen: set[str] = set()
    for t in external_tensors(model) if tensors is None else tensors:
        for e in t.external_data:
            if e.key == "location" and e.value not in seen:
                seen.add(e.value)
                with contextlib.suppress(ExternalDataMissing, ExternalDataInvalid):
                    safe_location(e.value, base_dir)


def safe_location(location: str, base_dir: str | None) -> str:
    """The absolute path of ``location`` inside ``base_dir``; raises ExternalDataError if unsafe.

    ``base_dir`` None (a model read from stdin or given in memory) raises ExternalDataMissing.
    """
    if base_dir is None:
        raise ExternalDataMissing(
            f"external data {show(repr(location))}: the model's folder is unknown (read from stdin or memory)"
        )
    if type(location) is bytes:  # (protobuf hands over a string that is not UTF-8 as its bytes)
        raise ExternalDataInvalid(f"external data location {show(repr(text(location)))} is not valid UTF-8")
    if not location or "\0" in location:
        raise ExternalDataInvalid(f"external data location {show(repr(location))} is not a file name")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", location):
        raise ExternalDataError(f"external data {show(repr(location))}: absolute paths are refused")
    parts = location.replace("\\", "/").split("/")
    if ".." in parts:
        raise ExternalDataError(f"external data {show(repr(location))}: paths leaving the model's folder are refused")
    base = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(base, location))
    if os.path.commonpath([base, path]) != base:
        raise ExternalDataError(f"external data {show(repr(location))}: resolves outside the model's folder")
    return path


@dataclass(frozen=True)
class ExternalRef:
    """A checked external-data entry: the file exists, is regular, and holds the range."""

    tensor: str
    location: str
    path: str  # absolute, inside the model's folder, symlinks resolved
    offset: int
    length: int | None  # as the entry gives it (None: to the end of the file)
    file_size: int

    @property
    def nbytes(self) -> int:
        """Bytes the entry covers."""
        return self.length if self.length is not None else self.file_size - self.offset


def _tname(t: TensorProto) -> str:
    return show(repr(t.name))


def parse_entry(t: TensorProto) -> tuple[str, int, int | None]:
    """``(location, offset, length)`` of an external tensor's entry; ExternalDataInvalid otherwise."""
    seen: dict[str, str] = {}
    for e in t.external_data:
        if type(e.value) is bytes:
            raise ExternalDataInvalid(
                f"tensor {_tname(t)}: external-data {show(repr(text(e.key)))} {show(repr(text(e.value)))} "
                "is not valid UTF-8"
            )
        if e.key not in KNOWN_KEYS:
            raise ExternalDataInvalid(
                f"tensor {_tname(t)}: unknown external-data key {show(repr(e.key))} "
                f"(known: {', '.join(sorted(KNOWN_KEYS))})"
            )
        if e.key in seen:
            raise ExternalDataInvalid(f"tensor {_tname(t)}: external-data key {e.key!r} is given twice")
        seen[e.key] = e.value
    if "location" not in seen:
        raise ExternalDataInvalid(f"tensor {_tname(t)}: external data without a 'location' key")
    nums: dict[str, int | None] = {"offset": None, "length": None}
    for key in nums:
        if key in seen:
            v = seen[key]
            if not _DIGITS.fullmatch(v) or int(v) > INT64_MAX:
                raise ExternalDataInvalid(
                    f"tensor {_tname(t)}: external-data {key} {show(repr(v[:40]))} is not an integer in 0..2**63-1"
                )
            nums[key] = int(v)
    return seen["location"], nums["offset"] or 0, nums["length"]


def resolve(t: TensorProto, base_dir: str | None) -> ExternalRef:
    """Check an external tensor's entry against its file (one ``stat``; nothing is opened).

    Raises ExternalDataError (unsafe location), ExternalDataMissing (no file, or no folder) or
    ExternalDataInvalid (anything else that is wrong), each message naming tensor and key.
    """
    location, offset, length = parse_entry(t)
    try:
        path = safe_location(location, base_dir)
    except ExternalDataError as e:
        raise type(e)(f"tensor {_tname(t)}: {e}") from None
    loc = show(repr(location))
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise ExternalDataMissing(f"tensor {_tname(t)}: external data {loc}: no such file") from None
    except OSError as e:
        raise ExternalDataInvalid(f"tensor {_tname(t)}: external data {loc}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ExternalDataInvalid(
            f"tensor {_tname(t)}: external-data location {loc} is {file_kind(st.st_mode)}, not a regular file"
        )
    size = st.st_size
    if offset > size:
        raise ExternalDataInvalid(
            f"tensor {_tname(t)}: external-data offset {offset} is past the end of {loc} ({size} bytes)"
        )
    if length is not None and offset + length > size:
        raise ExternalDataInvalid(
            f"tensor {_tname(t)}: external-data offset {offset} + length {length} is past the end of {loc} "
            f"({size} bytes)"
        )
    return ExternalRef(t.name, location, path, offset, length, size)


def open_regular(path: str, display: str | None = None) -> int:
    """A read-only descriptor of the regular file ``path`` (never blocks, never follows a final
    symlink); ExternalDataInvalid when what was opened is not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    name = show(repr(display if display is not None else path))
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ExternalDataInvalid(f"{name} became a symbolic link while reading") from None
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ExternalDataMissing(f"{name}: no such file") from None
        raise ExternalDataInvalid(f"{name}: {e.strerror or e}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ExternalDataInvalid(f"{name} is {file_kind(st.st_mode)}, not a regular file")
    return fd


def tensor_nbytes(t: TensorProto) -> int | None:
    """Bytes a tensor's values take in raw form, or None for a type without a fixed size."""
    if t.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        return None
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    except Exception:
        return None
    n = 1
    for d in t.dims:
        if d < 0:
            return None
        n *= d
    if t.data_type in (TensorProto.INT4, TensorProto.UINT4) or t.data_type == getattr(TensorProto, "FLOAT4E2M1", -1):
        return (n + 1) // 2
    return n * itemsize


def read_external_bytes(t: TensorProto, base_dir: str | None, cap: int = SMALL_BYTES) -> bytes:
    """The raw bytes of a small external tensor (exactly the tensor's size), read safely.

    The entry is checked (:func:`resolve`), the size the tensor needs is compared with ``cap``
    and with the entry's range before anything is allocated, and the descriptor is checked
    again after opening. Raises the ExternalData* errors described in the module docstring.
    """
    ref = resolve(t, base_dir)
    need = tensor_nbytes(t)
    if need is None:
        raise ExternalDataInvalid(f"tensor {_tname(t)}: external data of this element type is not read")
    if need > cap:
        raise ExternalDataInvalid(f"tensor {_tname(t)}: {need} bytes is above the {cap}-byte cap for reading values")
    if need > ref.nbytes:
        key = "length" if ref.length is not None else "offset"
        raise ExternalDataInvalid(
            f"tensor {_tname(t)}: external-data {key} leaves {ref.nbytes} bytes for a tensor of {need} bytes"
        )
    fd = open_regular(ref.path, ref.location)
    try:
        if os.fstat(fd).st_size < ref.offset + need:
            raise ExternalDataInvalid(f"tensor {_tname(t)}: {show(repr(ref.location))} shrank while reading")
        raw = os.pread(fd, need, ref.offset) if need else b""
    finally:
        os.close(fd)
    if len(raw) != need:
        raise ExternalDataInvalid(f"tensor {_tname(t)}: short read from {show(repr(ref.location))}")
    return raw


def read_external_tensor(t: TensorProto, base_dir: str | None, cap: int = SMALL_BYTES):
    """The numpy array of a small external tensor (see :func:`read_external_bytes`)."""
    inline = inline_copy(t, read_external_bytes(t, base_dir, cap))
    return onnx.numpy_helper.to_array(inline)


def tensor_array(t: TensorProto, base_dir: str | None):
    """The numpy array of ``t`` wherever its data is: in the tensor, or (small) external data
    read from ``base_dir`` (:func:`read_external_tensor`, raising as it does)."""
    if t.data_location == TensorProto.EXTERNAL:
        return read_external_tensor(t, base_dir)
    return onnx.numpy_helper.to_array(t)


def inline_copy(t: TensorProto, raw: bytes) -> TensorProto:
    """A copy of ``t`` holding ``raw`` as raw_data instead of the external reference."""
    c = TensorProto()
    c.CopyFrom(t)
    del c.external_data[:]
    c.data_location = TensorProto.DEFAULT
    c.raw_data = raw
    return c


def load_all(model: onnx.ModelProto, base_dir: str | None, cap: int) -> int:
    """Read every external tensor of ``model`` into it (in place), ``cap`` bytes in all at most.

    For running the model (``verify``). Every entry is checked first; the total is compared
    with ``cap`` before anything is read. Returns the bytes read.
    """
    tensors = external_tensors(model)
    refs = [resolve(t, base_dir) for t in tensors]
    total = 0
    for t, ref in zip(tensors, refs):
        need = tensor_nbytes(t)
        if need is None or need > ref.nbytes:
            raise ExternalDataInvalid(f"tensor {_tname(t)}: external data does not hold the tensor's bytes")
        total += need
    if total > cap:
        raise ExternalDataInvalid(f"external weights of {total} bytes are above the limit of {cap} bytes")
    for t in tensors:
        raw = read_external_bytes(t, base_dir, cap=total)
        t.CopyFrom(inline_copy(t, raw))
    return total


# ------------------------------------------------------------------------------------------------
# missing data files


@dataclass(frozen=True)
class MissingDataFile:
    """An external-data file a model names that is not in its folder: ``location`` as the
    entries spell it, ``tensors`` the names of the tensors stored in it, in model order."""

    location: str
    tensors: tuple[str, ...]

    def what(self) -> str:
        """``external data file 'model.data' is missing from the model's folder (30 tensors are
        stored in it, e.g. 'w')``."""
        n = len(self.tensors)
        stored = f"{n} tensor{'s are' if n != 1 else ' is'} stored in it"
        first = show(repr(self.tensors[0])) if self.tensors else ""
        example = f", e.g. {first}" if n > 1 else f": {first}" if n else ""
        return f"external data file {show(repr(self.location))} is missing from the model's folder ({stored}{example})"

    def message(self) -> str:
        """The one line that reports it (``infer``, ``lint`` and the API say the same)."""
        return f"{self.what()}: runtimes cannot load the model"


def missing_data_files(tensors: list[TensorProto], base_dir: str | None) -> list[MissingDataFile]:
    """The files the external data of ``tensors`` names that do not exist in ``base_dir`` (the
    model's folder), one per file, in first-use order; empty without a folder (nothing can be
    said of a model read from stdin or memory). One ``stat`` per distinct location. A location
    that is unsafe or not a file name is not a missing file (the load refuses the one, the
    entry check reports the other)."""
    if base_dir is None:
        return []
    missing: dict[str, list[str]] = {}
    known: dict[str, bool] = {}  # location -> missing?
    for t in tensors:
        loc = None
        for e in t.external_data:
            if e.key == "location":
                loc = e.value  # the last one, as onnx reads it
        if loc is None:
            continue
        gone = known.get(loc)
        if gone is None:
            try:
                os.stat(safe_location(loc, base_dir))
                gone = False
            except (FileNotFoundError, NotADirectoryError):
                gone = True
            except (ExternalDataError, OSError):
                gone = False
            known[loc] = gone
        if gone:
            missing.setdefault(loc, []).append(t.name)
    return [MissingDataFile(loc, tuple(names)) for loc, names in missing.items()]
