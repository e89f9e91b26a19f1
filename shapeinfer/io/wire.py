"""The protobuf wire format of a serialised ``ModelProto``, walked without parsing it.

Two uses, for the main graph's initializers, which hold nearly all of a model's bytes, and
its nodes, which are most of its messages:

- :func:`graph_layout` finds each initializer and node field in the bytes a model was read
  from, so a writer can copy those bytes instead of serialising the parsed messages again
  (:func:`initializer_views`, :func:`node_views`);
- :func:`without_large_raw_data` gives the same bytes with the ``raw_data`` of every initializer
  of more than a given number of elements left out, so parsing them does not copy weights that
  inference never reads.

Only the model's own fields and its graph's fields are stepped over (one step per node, per
initializer...), plus the few fields of each initializer. Anything unexpected (a group, a field
running past its message, two ``graph`` fields, which a parser would merge) makes these
functions return None, and the caller parses or serialises as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

_GRAPH_FIELD = 7  # ModelProto.graph
NODE_TAG = 1 << 3 | 2  # GraphProto.node, length-delimited
_INITIALIZER_TAG = 5 << 3 | 2  # GraphProto.initializer
_PACKED_DIMS_TAG = 1 << 3 | 2  # TensorProto.dims (repeated int64), packed
_DIM_TAG = 1 << 3 | 0  # TensorProto.dims, one value per field
_INT64_SIGN = 1 << 63  # a varint at or above it is a negative int64
_RAW_DATA_TAG = 9 << 3 | 2  # TensorProto.raw_data


def varint(n: int) -> bytes:
    """``n`` (non-negative) as a protobuf varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


#: The one-byte varints (0 to 127): the length prefix of a short field, as bytes.
SHORT_LENGTHS = [bytes((n,)) for n in range(0x80)]


def length_prefix(n: int) -> bytes:
    """The length prefix of a length-delimited field of ``n`` bytes (its varint)."""
    return SHORT_LENGTHS[n] if n < 0x80 else varint(n)


def field_tag(message, name: str) -> bytes:
    """The wire tag of the length-delimited field ``name`` of the protobuf class ``message``."""
    return varint(message.DESCRIPTOR.fields_by_name[name].number << 3 | 2)


def unknown_fields(message) -> bytes:
    """The fields of ``message`` (a protobuf message, not its sub-messages) that its schema does
    not know (a newer ONNX's), serialised: what ``SerializeToString`` of a copy made field by
    field would leave out. Empty where the protobuf runtime cannot list them (before 4.22)."""
    try:
        from google.protobuf.unknown_fields import UnknownFieldSet
    except ImportError:
        return b""
    return b"".join(_unknown_field(f) for f in UnknownFieldSet(message))


def _unknown_field(f) -> bytes:
    tag = varint(f.field_number << 3 | f.wire_type)
    wire, data = f.wire_type, f.data
    if wire == 0:
        return tag + varint(data)
    if wire == 1:
        return tag + data.to_bytes(8, "little")
    if wire == 2:
        return tag + varint(len(data)) + bytes(data)
    if wire == 5:
        return tag + data.to_bytes(4, "little")
    if wire == 3:  # a group: its fields, then the end-group tag
        return tag + b"".join(_unknown_field(g) for g in data) + varint(f.field_number << 3 | 4)
    return b""


def read_varint(data, i: int) -> tuple[int, int]:
    """The varint at ``data[i]`` and the index after it (IndexError past the end)."""
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def skip_field(data, i: int, wire: int) -> int:
    """The index after the payload of a field of wire type ``wire`` whose payload starts at ``i``."""
    if wire == 2:
        n = data[i]
        if n < 0x80:
            return i + 1 + n
        n, i = read_varint(data, i)
        return i + n
    if wire == 0:
        return read_varint(data, i)[1]
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    raise ValueError(f"wire type {wire}")  # groups: not in ONNX messages


def skip_string(data, i: int) -> int:
    """The index after the length-delimited field whose one-byte tag is at ``data[i]``."""
    size = data[i + 1]
    if size < 0x80:
        return i + 2 + size
    size, j = read_varint(data, i + 1)
    return j + size


@dataclass(frozen=True)
class GraphLayout:
    """Where the main graph and its initializer fields lie in a serialised model."""

    graph: tuple[int, int]  # the graph field's payload
    graph_field_start: int  # its tag
    initializers: list[tuple[int, int]]  # each initializer field (tag to end of payload), in order
    node_count: int  # node fields
    node_runs: list[tuple[int, int]]  # the node fields, adjacent ones joined, in order


def _graph_field(data) -> tuple[int, int, int] | None:
    """(payload start, payload end, tag position) of ``data``'s one ``graph`` field; None when
    the model's fields do not end where the bytes do, or there is no graph or more than one.
    Raises IndexError or ValueError for bytes that cannot be walked."""
    end = len(data)
    graph = None
    i = 0
    while i < end:  # the model's own fields: a handful
        at = i
        tag, i = read_varint(data, i)
        start = i
        i = skip_field(data, i, tag & 7)
        if tag >> 3 == _GRAPH_FIELD:
            if graph is not None or tag & 7 != 2:
                return None
            n, p = read_varint(data, start)
            graph = (p, p + n, at)
    if i != end:
        return None
    return graph


def graph_layout(data) -> GraphLayout | None:
    """The layout of ``data``'s main graph, or None when the bytes cannot be walked, have no
    graph or more than one ``graph`` field."""
    try:
        graph = _graph_field(data)
        if graph is None:
            return None
        spans: list[tuple[int, int]] = []
        runs: list[list[int]] = []
        nodes = 0
        i, g_end, g_at = graph
        while i < g_end:  # one step per node, initializer, value_info...
            at = i
            tag = data[i]
            if tag < 0x80:
                i += 1
            else:
                tag, i = read_varint(data, i)
            i = skip_field(data, i, tag & 7)
            if tag == NODE_TAG:
                nodes += 1
                if runs and runs[-1][1] == at:
                    runs[-1][1] = i
                else:
                    runs.append([at, i])
            elif tag == _INITIALIZER_TAG:
                spans.append((at, i))
        if i != g_end:
            return None
    except (IndexError, ValueError):
        return None
    return GraphLayout((graph[0], g_end), g_at, spans, nodes, [(a, b) for a, b in runs])


def initializer_views(data, layout: GraphLayout | None, count: int) -> list[memoryview] | None:
    """The initializer fields of ``layout`` as views of ``data`` in file order (adjacent fields
    joined), or None unless there are exactly ``count`` of them. Writing them reproduces the
    parsed ``graph.initializer`` exactly: it holds those fields' messages in that order."""
    if layout is None or len(layout.initializers) != count:
        return None
    merged: list[list[int]] = []
    for a, b in layout.initializers:
        if merged and merged[-1][1] == a:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    view = memoryview(data)
    return [view[a:b] for a, b in merged]


def node_views(data, layout: GraphLayout | None, count: int) -> list[memoryview] | None:
    """The node fields of ``layout`` as views of ``data`` (adjacent ones joined), or None unless
    there are exactly ``count`` of them: as :func:`initializer_views`, for ``graph.node``."""
    if layout is None or layout.node_count != count:
        return None
    view = memoryview(data)
    return [view[a:b] for a, b in layout.node_runs]


def _large_raw_data(data, start: int, end: int, max_elements: int) -> tuple[int, int] | None:
    """The ``raw_data`` field (tag to end) of the TensorProto payload ``data[start:end]`` when
    its dims hold more than ``max_elements`` elements and it has exactly one such field.

    Written for speed (one call per initializer): one-byte varints are read inline."""
    numel = 1  # the product of the dims, or some number above max_elements once it is above
    negative = False
    raw = None
    i = start
    while i < end:
        at = i
        tag = data[i]
        i += 1
        if tag >= 0x80:
            tag, i = read_varint(data, at)
        wire = tag & 7
        if wire == 2:
            n = data[i]
            i += 1
            if n >= 0x80:
                n, i = read_varint(data, i - 1)
            stop = i + n
            if tag == _RAW_DATA_TAG:
                if raw is not None:
                    return None  # repeated: the last one counts; leave such a tensor alone
                raw = (at, stop)
            if tag != _PACKED_DIMS_TAG:
                i = stop
                continue
            while i < stop:
                d = data[i]
                i += 1
                if d >= 0x80:
                    d, i = read_varint(data, i - 1)
                negative |= d >= _INT64_SIGN
                numel = numel * d if numel <= max_elements or d == 0 else numel  # no huge products
            if i != stop:
                return None
        elif wire == 0:
            d = data[i]
            i += 1
            if d >= 0x80:
                d, i = read_varint(data, i - 1)
            if tag == _DIM_TAG:
                negative |= d >= _INT64_SIGN
                numel = numel * d if numel <= max_elements or d == 0 else numel  # no huge products
        else:
            i = skip_field(data, i, wire)
    if i != end or raw is None or negative:
        return None
    return raw if numel > max_elements else None


def without_large_raw_data(data, layout: GraphLayout | None, max_elements: int) -> bytes | None:
    """``data`` with the ``raw_data`` field left out of every main-graph initializer of more than
    ``max_elements`` elements (by its dims), or None when there is none to leave out or the
    bytes cannot be walked. Every other byte is kept, so parsing the result gives the same
    model except for those tensors' data."""
    if layout is None:
        return None
    view = memoryview(data)  # slices of it are joined below without copying them first
    pieces: list = []
    pos = layout.graph[0]  # graph payload copied from here
    try:
        for a, b in layout.initializers:
            payload = a + 1 if data[a] == _INITIALIZER_TAG else read_varint(data, a)[1]
            payload = payload + 1 if data[payload] < 0x80 else read_varint(data, payload)[1]
            raw = _large_raw_data(data, payload, b, max_elements)
            if raw is None:
                continue
            pieces.append(view[pos:a])
            size = (b - payload) - (raw[1] - raw[0])
            pieces.append(bytes((_INITIALIZER_TAG,)) + varint(size))
            pieces.append(view[payload : raw[0]])
            pieces.append(view[raw[1] : b])
            pos = b
    except (IndexError, ValueError):
        return None
    if not pieces:
        return None
    g_end = layout.graph[1]
    pieces.append(view[pos:g_end])
    size = sum(map(len, pieces))
    head = bytes(view[: layout.graph_field_start]) + bytes((_GRAPH_FIELD << 3 | 2,)) + varint(size)
    return b"".join([head, *pieces, view[g_end:]])


@dataclass(frozen=True)
class NodeFields:
    """The main graph's node fields of a serialised model, cut out of it: ``data`` holds them all,
    one after another, and node ``k``'s field (tag to end of payload) is
    ``data[starts[k]:starts[k + 1]]`` (``starts`` has one more entry, ``len(data)``)."""

    data: bytes
    starts: list[int]


def node_fields(data) -> NodeFields | None:
    """The main graph's node fields of ``data`` (:class:`NodeFields`), or None when the bytes
    cannot be walked, have no graph or more than one ``graph`` field, or the node fields are not
    one adjacent run (a serialiser writes them so; anything else is left to the parser)."""
    try:
        graph = _graph_field(data)
        if graph is None:
            return None
        i, g_end, _ = graph
        starts: list[int] = []
        add = starts.append
        first = last = -1
        while i < g_end:  # one step per field; node fields read inline (one-byte tag, short lengths)
            at = i
            tag = data[i]
            if tag == NODE_TAG:
                if last != -1 and last != at:
                    return None  # a second run of nodes
                if first == -1:
                    first = at
                add(at)
                n = data[i + 1]
                if n < 0x80:
                    i += 2 + n
                else:
                    n, i = read_varint(data, i + 1)
                    i += n
                last = i
                continue
            if tag < 0x80:
                i += 1
            else:
                tag, i = read_varint(data, i)
            i = skip_field(data, i, tag & 7)
        if i != g_end:
            return None
    except (IndexError, ValueError):
        return None
    if first == -1:
        return NodeFields(b"", [0])
    starts = [s - first for s in starts]
    starts.append(last - first)
    return NodeFields(bytes(memoryview(data)[first:last]), starts)
