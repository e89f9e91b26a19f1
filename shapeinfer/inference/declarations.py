"""Declared types are claims: what a model declares (``value_info``, graph outputs) checked
against what inference derives.

Contract:

- :func:`declared_types` copies every graph's declared tensor types, by graph path.
- :func:`contradictions` lists how one declared type contradicts one inferred fact: a different
  element type, a different rank, or a dim that provably differs from the inferred one (or
  differs from it where both are over the graph inputs' symbols, unless inference itself assumed
  the two equal, which G003 reports), and whether the contradiction holds at every binding
  (``provable``) or only where those symbols differ. A declared ``-1`` or open dim is unknown
  and contradicts nothing; an inferred dim with a fresh symbol is unknown too.
- The engine reports each contradicted declaration as G006, at the one severity ``infer``, its
  ``--json``, the Python API and ``lint`` (default target) all show: an error only where onnx's
  checker (``check_model(full_check=True)``, the judge of lint's default ``onnx`` target) refuses
  the model for it (:func:`declaration_severity`), else a warning; a lint ``--target`` whose
  runtime judges otherwise (:data:`REFUSED_BY`) re-grades it visibly. The engine keeps the
  inferred fact, and the writer writes the inferred type.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import onnx
from onnx.onnx_cpp2py_export import shape_inference as onnx_c

from shapeinfer.base import isolated
from shapeinfer.io.onnxio import dim_from_proto, graph_path, subgraph_attrs
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic import intervals
from shapeinfer.symbolic.facts import Fact

__all__ = [
    "REFUSED_BY",
    "checker_refuses_declarations",
    "contradictions",
    "declaration_severity",
    "declared_types",
    "dims_text",
    "dtype_name",
    "static_kind",
    "statically_contradicts",
]

#: The runtimes that refuse to load a model for each kind of declared-type contradiction, as
#: measured with onnx 1.23 (``check_model(path, full_check=True)``), onnxruntime 1.32
#: (``InferenceSession``, CPU) and OpenVINO 2026.4 (``read_model`` + ``compile_model("CPU")``) on
#: the cases of ``tests/inference/test_declaration_severity.py``, in the main graph and in ``If``
#: branches alike: ``type`` a declared element type that differs from the inferred one
#: (``value_info``, graph or branch output), ``rank`` a different rank, ``dim`` two ints that
#: differ on an axis, ``initializer`` a graph input whose declared type, rank or int dims differ
#: from its initializer's. OpenVINO loads them all; none refuses a contradiction that involves a
#: symbolic dim (``seq`` declared where ``seq + 1`` is inferred, ``5`` where ``seq`` is).
REFUSED_BY: dict[str, frozenset[str]] = {
    "type": frozenset({"onnx", "onnxruntime"}),
    "rank": frozenset({"onnx"}),
    "dim": frozenset({"onnx"}),
    "initializer": frozenset({"onnx", "onnxruntime"}),
}


def dims_text(shape) -> str:
    """``[batch, 3, seq*2]`` (``?`` for an unknown rank or dim)."""
    if shape is None:
        return "?"
    return "[" + ", ".join("?" if d is None else D.format(d) for d in shape) + "]"


def dtype_name(t: int) -> str:
    """``float``, ``int64``... for an onnx TensorProto data type (the schema spelling)."""
    try:
        return onnx.TensorProto.DataType.Name(t).lower()
    except ValueError:
        return str(t)


def dtype_text(t: int) -> str:
    """:func:`dtype_name`, or ``?`` for 0 (a type inference does not know): how reports print it."""
    return dtype_name(t) if t else "?"


def declared_types(model: onnx.ModelProto, main: str = "main") -> dict[str, dict[str, onnx.TypeProto]]:
    """The types the model declares (value_info and graph outputs) of every graph, by graph path
    (:func:`~shapeinfer.io.onnxio.graph_path`). Copies, so that they survive anything that later
    rewrites the model's annotations."""
    out: dict[str, dict[str, onnx.TypeProto]] = {}

    def visit(g: onnx.GraphProto, path: str) -> None:
        d = {}
        for vi in list(g.value_info) + list(g.output):
            if vi.HasField("type"):
                tp = onnx.TypeProto()
                tp.CopyFrom(vi.type)
                d[vi.name] = tp
        out[path] = d
        for k, n in enumerate(g.node):
            for attr, sg in subgraph_attrs(n):
                visit(sg, graph_path(path, k, attr))

    visit(model.graph, main)
    return out


def contradictions(
    f: Fact | None,
    declared: onnx.TypeProto,
    input_symbols: Collection[str],
    subst: Mapping[str, D.Dim] | None = None,
    assumed: Collection[frozenset] = (),
    ranges: Mapping[str, tuple[int, int | None]] | None = None,
) -> tuple[list[str], bool]:
    """How ``declared`` contradicts inferred fact ``f`` (empty when it does not): each item says
    one disagreement (``type float, inferred int64``; ``rank 0 [], inferred rank 1 [1]``;
    ``shape [N, 5], inferred [N, 4] (axis 1)``). Declared dims go through ``subst`` (the
    substitution inference used, bindings included) first; ``assumed`` holds the pairs of dims
    inference assumed equal; ``ranges`` (the caller's ``dim_ranges``) decide the ``min``/``max``
    of a declared dim (``min(seq, 512)`` is ``seq`` for seq in 1..512). Returns (problems,
    provable): ``provable`` when some problem holds at every binding (a type, a rank, two dims
    that provably differ)."""
    if f is None or f.kind != "tensor" or declared.WhichOneof("value") != "tensor_type":
        return [], False
    tt = declared.tensor_type
    problems = []
    provable = False
    if tt.elem_type and f.dtype and tt.elem_type != f.dtype:
        provable = True
        problems.append(f"type {dtype_name(tt.elem_type)}, inferred {dtype_name(f.dtype)}")
    if tt.HasField("shape") and f.shape is not None:
        decl = [dim_from_proto(d) for d in tt.shape.dim]
        if len(decl) != len(f.shape):
            provable = True
            problems.append(f"rank {len(decl)} {dims_text(decl)}, inferred rank {len(f.shape)} {dims_text(f.shape)}")
        else:
            inputs = input_symbols if isinstance(input_symbols, (set, frozenset)) else set(input_symbols)
            read = [None if a is None else intervals.simplify(D.resolve(a, subst or {}), ranges) for a in decl]
            bad = [
                i
                for i, (a, b) in enumerate(zip(read, f.shape))
                if a is not None and _contradicts(a, b, assumed, inputs)
            ]
            provable = provable or any(_differ(read[i], f.shape[i], ranges) for i in bad)
            if bad:
                problems.append(
                    f"shape {dims_text(decl)}, inferred {dims_text(f.shape)} (axis {', '.join(map(str, bad))})"
                )
    return problems, provable


def static_kind(f: Fact | None, declared: onnx.TypeProto) -> str | None:
    """The kind of contradiction (a key of :data:`REFUSED_BY`) between ``declared`` and ``f`` that
    a runtime can see without symbols: ``type`` (element types differ), ``rank``, or ``dim`` (an
    axis where both dims are ints and differ); the first that holds, None when none does (no
    contradiction, or one only between expressions: ``past + seq`` declared, ``seq`` inferred)."""
    if f is None or f.kind != "tensor" or declared.WhichOneof("value") != "tensor_type":
        return None
    tt = declared.tensor_type
    if tt.elem_type and f.dtype and tt.elem_type != f.dtype:
        return "type"
    if not tt.HasField("shape") or f.shape is None:
        return None
    decl = [dim_from_proto(d) for d in tt.shape.dim]
    if len(decl) != len(f.shape):
        return "rank"
    if any(type(a) is int and type(b) is int and a != b for a, b in zip(decl, f.shape)):
        return "dim"
    return None


def statically_contradicts(f: Fact | None, declared: onnx.TypeProto) -> bool:
    """Whether ``declared`` contradicts ``f`` in a way onnx's strict shape inference (the checker's
    ``full_check``) can see without symbols (:func:`static_kind` is not None)."""
    return static_kind(f, declared) is not None


def checker_refuses_declarations(model: onnx.ModelProto) -> bool:
    """Whether onnx's checker (``check_model(full_check=True)``) refuses ``model`` because a
    declared type contradicts what onnx's own strict inference derives: that inference (type
    checks on, strict, no data propagation, as ``full_check`` runs it) fails with a message about
    an *existing* (declared) element type or shape. Our inference can know an int dim onnx's does
    not (a Reshape target computed from shapes): the checker loads such a model, and its G006 is a
    warning. Any other failure of onnx's inference (or a model too large to serialise) answers
    True: the static contradiction stands (onnx's checker cannot load it either)."""
    # onnx's C++ entry point itself: ``onnx.shape_inference.infer_shapes`` may be replaced by a
    # drop-in that runs this inference (shapeinfer.compat.onnx), which would recurse
    try:
        data = model.SerializeToString()
    except Exception:
        return True

    def check() -> tuple[bool, str | None]:
        try:
            onnx_c.infer_shapes(data, True, True, False)
        except onnx_c.InferenceError as e:
            return True, "refused" if "existing" in str(e) else None
        except Exception:
            return True, "refused"
        return True, None

    finished, text = isolated.run(check, "onnx's inference", len(data))  # onnx aborts on some models
    return not finished or text == "refused"


def declaration_severity(kind: str | None, checker_refuses: bool) -> str:
    """The severity of a G006 of :func:`static_kind` ``kind``: an error where onnx's
    checker refuses the model for it (a static kind, and :func:`checker_refuses_declarations`),
    else a warning."""
    return "error" if kind is not None and "onnx" in REFUSED_BY[kind] and checker_refuses else "warning"


def _differ(a: D.Dim, b: D.Dim, ranges: Mapping[str, tuple[int, int | None]] | None) -> bool:
    """``a != b`` at every binding (inside ``ranges`` when given)."""
    if D.compare(a, b) in (-1, 1):
        return True
    if not ranges:
        return False
    lo, hi = intervals.interval(D.sub(a, b), ranges)
    return (lo is not None and lo > 0) or (hi is not None and hi < 0)


def _contradicts(declared: D.Dim, inferred: D.Dim, assumed: Collection[frozenset], inputs: Collection[str]) -> bool:
    """A declared dim contradicts the inferred one when they provably differ, or when both are
    over the graph inputs' symbols, differ, and inference did not assume them equal (G003). A
    declared dim naming a symbol no graph input has (optimum's ``past_sequence_length +
    sequence_length`` in a decoder without past inputs) says nothing checkable: that symbol may
    stand for anything, 0 included."""
    if declared == inferred:
        return False
    if type(declared) is not int and not D.symbols(declared) <= inputs:
        return False
    if D.compare(declared, inferred) in (-1, 1):
        return True
    if frozenset((declared, inferred)) in assumed:
        return False

    def resolved(d: D.Dim) -> bool:
        return type(d) is int or D.symbols(d) <= inputs

    return resolved(declared) and resolved(inferred)
