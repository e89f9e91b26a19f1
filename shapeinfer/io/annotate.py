"""Inferred types written into a model (io's half of a save): what a written type may look like.

Types (:func:`annotate`): inferred facts go into ``value_info`` and graph outputs only as
complete types (a tensor type has an element type, a sequence or optional an element type, a
map a key and a value type), merged with what the model already declares. A declaration is a
claim: inference refines it where it knows more, and where they disagree (element type, rank, a
dim inference determined) the inferred type is written (inference reports the disagreement as
G006). Where inference knows less (an unknown element type or rank, a dim that is only fresh
symbols) the declared part stays, except over a dim that is one of several alternatives (a
join: an If whose branches differ). A dim that holds a fresh symbol (a data-dependent count, a
join, a dim past an op inference cannot see through) is written open, with no name: a name
would tell a runtime which tensors share it, and onnxruntime acts on that (its ReshapeFusion
turned RetinaNet's Reshape of a [N, 2, 2] box tensor into a [0, -1] that fails when no box is
kept, where the original runs), while the name means nothing to a reader. Where it knows
nothing and nothing is declared, nothing is written.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

import onnx
from onnx import TypeProto

from shapeinfer.io.onnxio import fact_type, graph_path, stacked_outputs_from, subgraph_attrs, write_shape
from shapeinfer.io.wire import SHORT_LENGTHS, field_tag, varint
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.names import is_placeholder


class InferredTypes(Protocol):
    """What annotation reads of an inference result (:class:`shapeinfer.inference.result.Result`):
    the model inferred, the facts of each graph inferred by path (``"main"``, subgraphs by
    :func:`~shapeinfer.io.onnxio.graph_path`), the fresh symbols inference drew and those of them
    that join alternatives, the graph inputs' symbols (sizes of at least 1), and the
    ``(graph path, tensor)`` pairs whose type is not to be written."""

    @property
    def model(self) -> onnx.ModelProto: ...

    @property
    def unwritten(self) -> Collection[tuple[str, str]]: ...

    @property
    def graph_facts(self) -> Mapping[str, Mapping[str, Fact]]: ...

    @property
    def fresh_symbols(self) -> Collection[str]: ...

    @property
    def join_symbols(self) -> Collection[str]: ...

    @property
    def input_symbols(self) -> Collection[str]: ...


def annotate(
    result: InferredTypes, declared: Mapping[str, TypeProto] | None = None, *, name_fresh: bool = False
) -> onnx.ModelProto:
    """Write ``result``'s facts into its model's ``value_info`` and graph outputs (in place).

    Every graph and subgraph inference reached is annotated. A value's written type is its fact
    merged with its declared type (:func:`written_type`); a value with neither gets no entry.
    Every ``value_info`` entry the model has stays where it is with all its fields (its
    ``doc_string``, ``metadata_props``; entries of initializers, inputs and outputs too): only
    its ``type`` is refined, or cleared where inference contradicts it without a complete type
    to write instead. New entries follow the model's own.
    ``declared`` adds declared types of main-graph values by name, taking precedence over the
    graph's own (for a model rewritten since it was loaded: the types its original declared).
    Graph inputs and initializers are never touched. A dim holding a fresh symbol is written
    open unless ``name_fresh`` (the drop-ins, which write them named as onnx and onnxruntime
    do). Returns the model.
    """
    tail = _annotate_graph(result.model.graph, result, _adoptable(result), declared or {}, "main", name_fresh)
    result.model.graph.MergeFromString(tail)
    return result.model


def annotate_serialised(
    result: InferredTypes, declared: Mapping[str, TypeProto] | None = None, *, keep_declared: bool = False
) -> bytes:
    """:func:`annotate`, returning the main graph's ``value_info`` as it then is, serialised
    (``GraphProto.value_info`` fields, for :attr:`shapeinfer.io.source.Source.value_info_fields`):
    the entries kept serialised, then the new ones as they were written (not serialised again).
    With ``keep_declared`` no graph gets an entry it did not have, and an entry keeps its type
    as declared unless inference contradicts it (:func:`declared_holds`); the graph outputs'
    types are refined as without it."""
    graph = result.model.graph
    tail = _annotate_graph(graph, result, _adoptable(result), declared or {}, "main", keep_declared=keep_declared)
    kept = [_field(_VALUE_INFO, vi.SerializeToString()) for vi in graph.value_info]
    graph.MergeFromString(tail)
    return b"".join([*kept, tail])


def annotate_for_writing(result: InferredTypes) -> tuple[onnx.ModelProto, bytes]:
    """:func:`annotate`, except that the main graph's new ``value_info`` entries are returned as
    serialised ``GraphProto`` fields instead of merged into the model (for
    :attr:`shapeinfer.io.source.Source.graph_tail`: the writer writes them without parsing them
    back). The written file is the same model :func:`annotate` then :func:`save_model` would write."""
    tail = _annotate_graph(result.model.graph, result, _adoptable(result), {}, "main")
    return result.model, tail


def subgraphs_annotated(result: InferredTypes) -> bool:
    """True when :func:`annotate` changes nodes of the main graph: it writes into the subgraphs
    inference reached, which live in node attributes; nothing else it does touches a node."""
    return any(path != "main" for path in result.graph_facts)


def is_complete(tp: TypeProto) -> bool:
    """True when ``tp`` is a type a model may declare: every nested element type is present."""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        return getattr(tp, which).elem_type != 0
    if which == "sequence_type":
        return tp.sequence_type.HasField("elem_type") and is_complete(tp.sequence_type.elem_type)
    if which == "optional_type":
        return tp.optional_type.HasField("elem_type") and is_complete(tp.optional_type.elem_type)
    if which == "map_type":
        mt = tp.map_type
        return mt.key_type != 0 and mt.HasField("value_type") and is_complete(mt.value_type)
    return which is not None  # opaque types: as declared


def fact_is_complete(f: Fact | None) -> bool:
    """True when ``fact_type(f)`` is complete (:func:`is_complete`)."""
    if f is None:
        return False
    if f.kind in ("tensor", "sparse_tensor"):
        return f.dtype != 0
    if f.kind in ("sequence", "optional"):
        return fact_is_complete(f.elem)
    if f.kind == "map":
        return f.dtype != 0 and fact_is_complete(f.elem)
    return False


_KIND_OF = {
    "tensor_type": "tensor",
    "sparse_tensor_type": "sparse_tensor",
    "sequence_type": "sequence",
    "optional_type": "optional",
    "map_type": "map",
}


class _Conflict(Exception):
    """Inference and the declaration disagree: the declaration is written as it is."""


def _unknown(f: Fact | None) -> bool:
    return f is None or (f.kind == "tensor" and not f.dtype and f.shape is None)


def _adoptable(result: InferredTypes) -> set[str]:
    """The fresh symbols a declared dim may stand for in what is written: all but the joins."""
    return set(result.fresh_symbols) - set(result.join_symbols)


def written_type(
    f: Fact | None, declared: TypeProto | None, fresh: set[str], unnamed: frozenset[str] = frozenset()
) -> TypeProto | None:
    """The type to write for a value with fact ``f`` and declared type ``declared``, or None.

    Inference refines the declaration where it knows more (an element type, a rank, a dim): a
    dim it determined (an integer, an expression of the inputs' symbols) is written, a declared
    dim stays over one made only of the symbols in ``fresh`` (fresh ones a declaration may stand
    for). Where they disagree (kind, element type, rank, two different integer dims) inference
    wins: the declared parts it contradicts are not written. A dim holding a symbol of
    ``unnamed`` that no declaration stands for is written open (no name: see :func:`annotate`).
    The result is always complete (:func:`is_complete`); None when neither side gives one.
    """
    if declared is not None and declared.WhichOneof("value") is None:
        declared = None
    if declared is None:
        return fact_type(f, unnamed) if fact_is_complete(f) else None
    if _unknown(f):
        return declared if is_complete(declared) else None
    try:
        tp = _merge(f, declared, fresh, unnamed)
    except _Conflict:  # a different kind of value: the declaration says nothing of this one
        return fact_type(f, unnamed) if fact_is_complete(f) else None
    if is_complete(tp):
        return tp
    return declared if is_complete(declared) else None


def declared_holds(f: Fact | None, decl: TypeProto, fresh: set[str]) -> bool:
    """Whether inference contradicts nothing the declared tensor type ``decl`` says of a value
    of fact ``f``: its element type, its rank, and each integer dim (another integer, or a dim
    inference determined as an expression of the inputs' symbols, contradicts it; a dim made
    only of the ``fresh`` symbols a declaration may stand for does not). A declared name or an
    unknown dim says no size, and an entry with no type says nothing. False for a declaration
    of another kind of value than a tensor (those are merged as :func:`written_type` does)."""
    if _unknown(f) or decl.WhichOneof("value") is None:
        return True
    if decl.WhichOneof("value") != "tensor_type" or f.kind != "tensor":
        return False
    tt = decl.tensor_type
    if tt.elem_type and f.dtype and tt.elem_type != f.dtype:
        return False
    if f.shape is None or not tt.HasField("shape"):
        return True
    if len(tt.shape.dim) != len(f.shape):
        return False
    for d, x in zip(f.shape, tt.shape.dim):
        if not x.HasField("dim_value"):
            continue
        if type(d) is int:
            if d != x.dim_value:
                return False
        elif not D.symbols(d) <= fresh:
            return False
    return True


def _merge(f: Fact | None, decl: TypeProto, fresh: set[str], unnamed: frozenset[str]) -> TypeProto:
    """``decl`` refined by ``f``; raises _Conflict where they disagree."""
    which = decl.WhichOneof("value")
    if _unknown(f):
        return decl
    if _KIND_OF.get(which) != f.kind:
        raise _Conflict
    tp = TypeProto()
    if decl.denotation:
        tp.denotation = decl.denotation
    if which in ("tensor_type", "sparse_tensor_type"):
        dt = getattr(decl, which)
        out = getattr(tp, which)
        if f.dtype or dt.elem_type:
            out.elem_type = f.dtype or dt.elem_type
        if f.shape is None:
            if dt.HasField("shape"):
                out.shape.CopyFrom(dt.shape)
        elif not dt.HasField("shape"):
            write_shape(out, f.shape, unnamed)
        elif len(dt.shape.dim) != len(f.shape):
            write_shape(out, f.shape, unnamed)  # the declared rank is wrong: none of its dims apply
        else:
            out.shape.SetInParent()
            for d, x in zip(f.shape, dt.shape.dim):
                _merge_dim(out.shape.dim.add(), d, x, fresh, unnamed)
    elif which == "sequence_type":
        tp.sequence_type.elem_type.CopyFrom(_merge_elem(f.elem, decl.sequence_type, fresh, unnamed))
    elif which == "optional_type":
        tp.optional_type.elem_type.CopyFrom(_merge_elem(f.elem, decl.optional_type, fresh, unnamed))
    else:  # map_type
        mt = decl.map_type
        tp.map_type.key_type = f.dtype or mt.key_type
        if mt.HasField("value_type"):
            tp.map_type.value_type.CopyFrom(_merge(f.elem, mt.value_type, fresh, unnamed))
        elif f.elem is not None:
            tp.map_type.value_type.CopyFrom(fact_type(f.elem, unnamed))
    return tp


def _merge_elem(elem: Fact | None, container, fresh: set[str], unnamed: frozenset[str]) -> TypeProto:
    if container.HasField("elem_type"):
        return _merge(elem, container.elem_type, fresh, unnamed)
    return TypeProto() if elem is None else fact_type(elem, unnamed)


def _merge_dim(out, d: D.Dim, x, fresh: set[str], unnamed: frozenset[str] = frozenset()) -> None:
    """One dim: inference wins where it determined the dim (an integer, or an expression of
    the inputs' symbols); a declared dim stays over one made only of ``fresh`` symbols, unless
    it is a placeholder name (``?``: :func:`~shapeinfer.symbolic.names.is_placeholder`), which would
    make every dim it is written on one size to a runtime."""
    if type(d) is int:
        if 0 <= d <= D.INT64_MAX:  # (else a size no tensor has: open)
            out.dim_value = d
    elif D.symbols(d) <= fresh and x.HasField("dim_value"):
        out.dim_value = x.dim_value
    elif D.symbols(d) <= fresh and x.HasField("dim_param") and x.dim_param and not is_placeholder(x.dim_param):
        out.CopyFrom(x)  # (as read: a name that is not UTF-8 stays bytes)
    elif not unnamed or unnamed.isdisjoint(D.symbols(d)):
        out.dim_param = D.format(d)
    if x.denotation:
        out.denotation = x.denotation


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    n = len(payload)
    return tag + (SHORT_LENGTHS[n] if n < 0x80 else varint(n)) + payload


_VALUE_INFO = field_tag(onnx.GraphProto, "value_info")


_VI_NAME = field_tag(onnx.ValueInfoProto, "name")


_VI_TYPE = field_tag(onnx.ValueInfoProto, "type")


def _type_bytes(
    f: Fact, cache: dict[int, tuple[bytes | None, bytes | None]], unnamed: frozenset[str]
) -> tuple[bytes | None, bytes | None]:
    """The serialised type written for fact ``f`` when nothing is declared, and the
    ``ValueInfoProto.type`` field of it (None, None: incomplete), cached by the fact's id."""
    key = id(f)
    got = cache.get(key)
    if got is None:
        tb = fact_type(f, unnamed).SerializeToString() if fact_is_complete(f) else None
        got = cache[key] = (tb, None if tb is None else _field(_VI_TYPE, tb))
    return got


def _zero_trip_unchanged(node: onnx.NodeProto, body: onnx.GraphProto, facts, body_facts, inputs) -> bool:
    """Whether the types written into ``body`` leave what ``node`` (a Loop or a Scan) gives when
    no iteration runs as it was. onnxruntime shapes a scan output then from the type its own
    inference gives the body output (a dim_value kept, any other dim 0): a number written in
    the body that reaches a scan output's type where its declaration has none changes it (a
    written ``[2, 8]`` made an empty ``[0, 0, 8]`` into ``[0, 2, 8]``). True when the node has no
    scan output, when every scan output stacks at least one iteration (its leading dim in
    ``facts``, the graph holding the node, an int of at least 1 or one of the graph inputs'
    symbols ``inputs``), or when no scan output's fact in ``body_facts`` has a number its
    declaration lacks."""
    first = stacked_outputs_from(node, body)
    if first is None or first >= len(body.output):
        return True
    n_scans = len(body.output) - first
    runs = True
    for o in node.output[len(node.output) - n_scans :]:
        f = None if facts is None or not o else facts.get(o)
        d = f.shape[0] if f is not None and f.shape else None
        if not ((type(d) is int and d >= 1) or (d is not None and type(d) is not int and D.format(d) in inputs)):
            runs = False
    if runs:
        return True
    for vi in body.output[first:]:
        f = None if body_facts is None else body_facts.get(vi.name)
        if f is None or f.shape is None:
            continue
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        declared = list(tt.shape.dim) if tt is not None and tt.HasField("shape") else []
        values = [x.dim_value if x.HasField("dim_value") else None for x in declared]
        for k, d in enumerate(f.shape):
            if type(d) is int and (k >= len(values) or values[k] != d):
                return False
    return True


def _annotate_graph(
    graph: onnx.GraphProto,
    result: InferredTypes,
    fresh: set[str],
    declared: Mapping[str, TypeProto],
    path: str,
    name_fresh: bool = False,
    *,
    keep_declared: bool = False,
) -> bytes:
    """Annotate ``graph`` and its inferred subgraphs; the new value_info entries of ``graph``
    itself are returned as serialised fields (after the kept ones in ``graph.value_info``);
    ``keep_declared``: none, and the entries a declaration holds for are left as declared
    (here and in the subgraphs).

    A Loop's or a Scan's body is left as read where its types could change what the node gives
    when no iteration runs (:func:`_zero_trip_unchanged`)."""
    unnamed = frozenset() if name_fresh else frozenset(result.fresh_symbols)
    inputs = result.input_symbols
    tail = b""
    facts = result.graph_facts.get(path)
    if facts is not None:
        unwritten = {name for at, name in result.unwritten if at == path}
        for vi in graph.output:
            if vi.name in unwritten:
                continue
            tp = written_type(facts.get(vi.name), declared.get(vi.name, vi.type), fresh, unnamed)
            if tp is not None and tp is not vi.type:
                vi.type.CopyFrom(tp)
        # every entry the graph declares stays where it is, with all its fields (a doc_string,
        # torch.export's metadata_props on a parameter's entry): only its type may be refined
        seen: set[str] = set()
        # by id (the facts stay alive in ``facts``): the written type and its value_info field
        type_fields: dict[int, tuple[bytes | None, bytes | None]] = {}
        for vi in graph.value_info:
            name = vi.name
            seen.add(name)
            f = facts.get(name)
            if f is None or name in unwritten:
                continue
            decl = declared.get(name, vi.type)
            if keep_declared and declared_holds(f, decl, fresh):
                if decl is not vi.type:
                    vi.type.CopyFrom(decl)
                continue
            tb = _type_bytes(f, type_fields, unnamed)[0]
            if tb is not None and decl.SerializeToString() == tb:
                if decl is not vi.type:
                    vi.type.CopyFrom(decl)
                continue  # the fact's own type: nothing to merge
            tp = written_type(f, decl, fresh, unnamed)
            if tp is None and is_complete(decl):
                vi.ClearField("type")  # inference contradicts it and knows no complete type to write
            elif tp is not None and tp is not vi.type:
                vi.type.CopyFrom(tp)
        skip = {vi.name for vi in graph.input} | {vi.name for vi in graph.output}
        skip.update(t.name for t in graph.initializer)
        skip.update(t.values.name for t in graph.sparse_initializer)
        skip |= seen
        skip |= unwritten
        chunks = []
        for name, f in facts.items() if not keep_declared else ():
            if name in skip:
                continue
            key = id(f)
            if key not in type_fields:
                tb = fact_type(f, unnamed).SerializeToString() if fact_is_complete(f) else None
                type_fields[key] = (tb, None if tb is None else _field(_VI_TYPE, tb))
            tb, tf = type_fields[key]
            decl = declared.get(name)
            if decl is not None and (tb is None or decl.SerializeToString() != tb):
                tp = written_type(f, decl, fresh, unnamed)  # the declaration says something else
                tf = None if tp is None else _field(_VI_TYPE, tp.SerializeToString())
            if tf is not None:  # _field(_VALUE_INFO, _field(_VI_NAME, name) + tf), in pieces
                nb = name if type(name) is bytes else name.encode()
                n = len(nb)
                name_head = _VI_NAME + (SHORT_LENGTHS[n] if n < 0x80 else varint(n))
                n += len(name_head) + len(tf)
                chunks += (_VALUE_INFO, SHORT_LENGTHS[n] if n < 0x80 else varint(n), name_head, nb, tf)
        tail = b"".join(chunks)
    if not any(p.startswith(path + "/") for p in result.graph_facts):
        return tail  # no subgraph below this one was inferred
    for k, n in enumerate(graph.node):
        for attr, g in subgraph_attrs(n):
            at = graph_path(path, k, attr)
            if not _zero_trip_unchanged(n, g, facts, result.graph_facts.get(at), inputs):
                continue  # left as read
            g.MergeFromString(_annotate_graph(g, result, fresh, {}, at, name_fresh, keep_declared=keep_declared))
    return tail
