"""``shapeinfer verify``: check inferred shapes against what onnxruntime actually computes.

The model is inferred once, symbolically. Then, for each binding of the input symbols
(``{"batch": 2, "seq": 7}``), it is run in onnxruntime (graph optimisations off, every node
output made a graph output) on generated inputs, and each main-graph tensor's inferred dims are
evaluated at the binding and compared with the actual array:

- a dim over the input symbols (or an int) that evaluates to something else, a wrong rank, a
  wrong element type, or a tracked integer value that differs is a **mismatch**;
- a dim holding a fresh symbol (``unk_<n>``), or an unknown rank, is **unresolved**: inference
  honestly did not know, which is not wrong (``strict=True`` counts it as a mismatch).

Generated inputs: floats standard normal, bools False, integers in ``[0, min(10, smallest bound
value))`` so that they are safe as indices; integer inputs whose name contains ``mask`` are ones,
``type_ids`` zeros, and ``position`` counts ``0, 1, ...`` along the last axis.

onnxruntime is an optional dependency (the ``verify`` extra: ``pip install -e '.[verify]'`` in
a checkout, or ``pip install onnxruntime``); it is imported only here, when a verification runs.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import onnx

from shapeinfer.base.progress import Progress
from shapeinfer.base.suggest import did_you_mean
from shapeinfer.inference.declarations import dtype_text
from shapeinfer.io.external import ExternalDataError, load_all
from shapeinfer.io.modelsource import ModelLike
from shapeinfer.io.onnxio import dim_from_proto
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.guards import CONTRADICTION, check
from shapeinfer.symbolic.intervals import step_of
from shapeinfer.symbolic.names import ident

#: Above this size a model is handed to onnxruntime as a file, not as bytes.
MAX_PROTO_BYTES = 2**31 - 2**24

#: Memory a verification may use unless ``max_memory`` (``--max-memory``) says otherwise.
DEFAULT_MAX_MEMORY = 4 << 30

INSTALL_HINT = (
    "onnxruntime is not installed: pip install 'onnxruntime>=1.17' "
    "(or, in a shapeinfer checkout, pip install -e '.[verify]')"
)


class VerifyError(Exception):
    """A verification that cannot run (missing onnxruntime, incomplete binding, ORT failure)."""


class GuardViolation(VerifyError):
    """A binding that violates a guard (a condition the inferred shapes need) or lies outside a
    given range: the model is not run. ``binding`` and ``guard`` (its text) say which."""

    def __init__(self, message: str, binding: Mapping[str, int], guard: str) -> None:
        super().__init__(message)
        self.binding = dict(binding)
        self.guard = guard


def check_guards(result, bindings: Sequence[Mapping[str, int]]) -> None:
    """Raise :class:`GuardViolation` for the first binding outside the caller's ranges or
    violating a guard of ``result`` (guards with a symbol the binding leaves free are skipped),
    and before any binding when no input in the ranges satisfies the guards (a G015 error:
    a range that contradicts a guard, or a guard that never holds)."""
    for d in result.diagnostics:
        if d.code == CONTRADICTION:
            raise GuardViolation(f"{d.message}; not run", {}, d.message)
    guards = result.guards()
    for b in bindings:
        for name, r in sorted(result.dim_ranges.items()):
            lo, hi = r
            step = step_of(r)
            v = b.get(name)
            if v is not None and (v < lo or (hi is not None and v > hi) or (v - lo) % step):
                text = f"{lo} <= {name}" + ("" if hi is None else f" <= {hi}")
                if step != 1:
                    text += f", {name} % {step} == {lo % step}"
                raise GuardViolation(f"{format_binding(b)} is outside the range {text} (--dim-range)", b, text)
        for g in guards:
            if check(g, b) is False:
                more = ", ..." if len(g.nodes) > 3 else ""
                where = f" (imposed by {', '.join(g.nodes[:3])}{more})" if g.nodes else ""
                raise GuardViolation(f"{format_binding(b)} violates the guard {g.text}{where}; not run", b, g.text)


@dataclass
class Finding:
    """One tensor at one binding whose inferred shape is wrong (a mismatch) or not known."""

    tensor: str
    op: str
    binding: dict[str, int]
    inferred: str  # the symbolic fact, e.g. "float [batch, seq*2]"
    expected: str  # the inferred fact evaluated at the binding, e.g. "[2, 14]"
    actual: str  # what onnxruntime produced
    reason: str  # "dim" | "rank" | "dtype" | "value" | "kind" | "unresolved"


@dataclass
class Report:
    """The outcome of :func:`verify`."""

    model: str
    bindings: list[dict[str, int]]
    checked: int = 0  # (tensor, binding) pairs compared
    mismatches: list[Finding] = field(default_factory=list)
    unresolved: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    per_binding: list[dict[str, Any]] = field(default_factory=list)
    #: bindings the guards allow at which onnxruntime failed: ``{"binding", "error"}`` (a
    #: condition of the model no guard states, or input values it cannot take)
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no tensor mismatches and onnxruntime ran at every binding."""
        return not self.mismatches and not self.failures

    def to_dict(self) -> dict[str, Any]:
        """The ``verify --json`` document, described by ``shapeinfer/schemas/verify.schema.json``
        (``schema`` is its version)."""
        return {
            "schema": 1,
            "model": self.model,
            "bindings": self.bindings,
            "per_binding": self.per_binding,
            "mismatches": [asdict(m) for m in self.mismatches],
            "unresolved": [asdict(u) for u in self.unresolved],
            "failures": self.failures,
            "notes": self.notes,
            "summary": {
                "checked": self.checked,
                "mismatches": len(self.mismatches),
                "unresolved": len(self.unresolved),
                "failed": len(self.failures),
            },
        }


def format_binding(b: Mapping[str, int]) -> str:
    """``{"batch": 2, "seq": 7}`` as ``batch=2,seq=7``."""
    return ",".join(f"{k}={v}" for k, v in b.items()) or "(no symbols)"


# ---------------------------------------------------------------------------------- formatting


def _fmt_dims(dims: Sequence[Any] | None) -> str:
    if dims is None:
        return "?"
    return (
        "["
        + ", ".join(d if isinstance(d, str) else D.format(d) if isinstance(d, D.Expr) else str(d) for d in dims)
        + "]"
    )


def _fmt_fact(f: Fact | None) -> str:
    if f is None:
        return "?"
    if f.kind in ("sequence", "optional"):
        return f"{f.kind}({_fmt_fact(f.elem)})"
    if f.kind == "map":  # dtype is the key type, elem the value's fact
        return f"map({dtype_text(f.dtype)}, {_fmt_fact(f.elem)})"
    return f"{dtype_text(f.dtype)} {_fmt_dims(f.shape)}"


def _fmt_actual(a: Any) -> str:
    if a is None:
        return "none"
    if isinstance(a, list):
        return "sequence[" + ", ".join(_fmt_actual(x) for x in a[:4]) + (", ..." if len(a) > 4 else "") + "]"
    if isinstance(a, dict):
        key = next(iter(a), None)
        return f"map({_key_type_name(key)}, {_fmt_actual(a[key]) if a else '?'})"
    arr = np.asarray(a)
    return f"{_np_dtype_name(arr.dtype)} {list(arr.shape)}"


def _scalar_reason(f: Fact, v: float | int | str) -> str | None:
    """Why the fact ``f`` of a map value does not describe the Python scalar ``v`` (None: it does)."""
    if f.kind != "tensor":
        return "kind"
    if f.shape is not None and len(f.shape) != 0:
        return "rank"
    if not f.dtype:
        return None
    np_type = onnx.helper.tensor_dtype_to_np_dtype(f.dtype)
    family = "str" if isinstance(v, str) else "float" if isinstance(v, float) else "int"
    want = "str" if np_type.kind in "OSU" else "float" if np_type.kind in "fc" else "int"
    return None if family == want else "dtype"


def _key_type(key: Any) -> int | None:
    """The ONNX type of a map key as onnxruntime returns it (a Python int or str)."""
    if isinstance(key, str):
        return onnx.TensorProto.STRING
    if isinstance(key, int):
        return onnx.TensorProto.INT64
    return None


def _key_type_name(key: Any) -> str:
    t = _key_type(key)
    return "?" if t is None else dtype_text(t)


def _np_dtype_name(dt: Any) -> str:
    try:
        return dtype_text(onnx.helper.np_dtype_to_tensor_dtype(dt))
    except Exception:
        return str(dt)


# ---------------------------------------------------------------------------------- comparison


def _evaluate(d: D.Dim, binding: Mapping[str, int]) -> int | str | None:
    """``d`` at ``binding``: an int, None when it holds an unbound (fresh) symbol, or an error text."""
    if type(d) is int:
        return d
    if not D.symbols(d) <= binding.keys():
        return None
    try:
        return D.evaluate(d, binding)
    except (ZeroDivisionError, ValueError, OverflowError) as e:
        return f"error: {e}"


def compare(f: Fact | None, actual: Any, binding: Mapping[str, int]) -> tuple[str | None, bool, str]:
    """Compare one inferred fact with an actual value at ``binding``.

    Returns ``(reason, unresolved, expected)``: ``reason`` names the first disagreement (None
    when there is none), ``unresolved`` tells whether some dim or the rank was not known, and
    ``expected`` is the fact evaluated at the binding (for display).
    """

    if f is None or (f.kind == "tensor" and not f.dtype and f.shape is None):
        return None, True, "?"
    if isinstance(actual, list) or actual is None:
        if actual is None:
            ok = f.kind == "optional"
            return (None if ok else "kind"), False, f.kind
        if f.kind == "optional":
            f = f.elem if f.elem is not None else Fact()
        if f.kind != "sequence":
            return "kind", False, f.kind
        unresolved = False
        for x in actual:
            reason, unres, exp = compare(f.elem, x, binding)
            unresolved |= unres
            if reason:
                return reason, unresolved, f"sequence({exp})"
        return None, unresolved, f"sequence({compare(f.elem, actual[0], binding)[2]})" if actual else "sequence"
    if f.kind == "optional":
        f = f.elem if f.elem is not None else Fact()
    if isinstance(actual, dict):  # a map (ZipMap's, DictVectorizer's input): key type, then each value
        if f.kind != "map":
            return "kind", False, _fmt_fact(f)
        keys = {_key_type(k) for k in actual}
        if f.dtype and keys and keys != {f.dtype}:
            return "dtype", False, _fmt_fact(f)
        unresolved = f.elem is None
        for v in actual.values():
            if isinstance(v, (float, int, str)) and f.elem is not None:
                # onnxruntime hands map values over as Python scalars (a float map's as a Python
                # float, whatever its width): a scalar of the same family is all there is to check
                reason = _scalar_reason(f.elem, v)
                if reason:
                    return reason, unresolved, _fmt_fact(f)
                continue
            reason, unres, _ = compare(f.elem, v, binding)
            unresolved |= unres
            if reason:
                return reason, unresolved, _fmt_fact(f)
        return None, unresolved, _fmt_fact(f)
    arr = np.asarray(actual)
    if f.kind not in ("tensor", "sparse_tensor"):
        return "kind", False, f.kind
    if f.shape is None:
        return _dtype_reason(f, arr), True, f"{dtype_text(f.dtype)} ?"
    vals = [_evaluate(d, binding) for d in f.shape]
    expected = f"{dtype_text(f.dtype)} {_fmt_dims(['?' if v is None else v for v in vals])}"
    if len(f.shape) != arr.ndim:
        return "rank", False, expected
    unresolved = False
    for v, a in zip(vals, arr.shape):
        if v is None:
            unresolved = True
        elif v != a:
            return "dim", unresolved, expected
    reason = _dtype_reason(f, arr)
    if reason is None and not unresolved:
        reason = _value_reason(f, arr, binding)
    return reason, unresolved, expected


def _dtype_reason(f: Fact, arr: Any) -> str | None:
    if not f.dtype or arr.dtype.kind in "OUS":
        return None
    try:
        actual = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
    except Exception:
        return None
    return None if actual == f.dtype else "dtype"


def _value_reason(f: Fact, arr: Any, binding: Mapping[str, int]) -> str | None:
    """A tracked integer value that disagrees with the actual one."""
    if f.value is None or arr.dtype.kind not in "iub" or arr.size != len(f.value):
        return None
    for v, a in zip(f.value, arr.reshape(-1).tolist()):
        if v is None or isinstance(v, float):
            continue
        ev = _evaluate(v, binding)
        if isinstance(ev, int) and ev != int(a):
            return "value"
    return None


# ---------------------------------------------------------------------------------- running


def input_dims(vi: onnx.ValueInfoProto, binding: Mapping[str, int]) -> tuple[list[int], set[str]]:
    """The concrete dims of graph input ``vi`` at ``binding`` and the symbols it lacks.

    An open dim (neither value nor name) is the symbol ``<input>_d<axis>``, as in inference.
    """
    tt = vi.type.tensor_type
    dims: list[int] = []
    missing: set[str] = set()
    for axis, d in enumerate(tt.shape.dim):
        v = dim_from_proto(d)
        if v is None:
            v = D.sym(f"{ident(vi.name)}_d{axis}")
        if type(v) is int:
            dims.append(v)
            continue
        lack = D.symbols(v) - binding.keys()
        if lack:
            missing |= lack
            dims.append(0)
            continue
        n = D.evaluate(v, binding)
        if n < 0:
            raise VerifyError(f"input {vi.name!r}: dim {D.format(v)} is {n} at {format_binding(binding)}")
        dims.append(n)
    return dims, missing


def _missing_symbols(graph: onnx.GraphProto, binding: Mapping[str, int]) -> set[str]:
    """The symbols of the graph inputs ``binding`` leaves unbound (nothing allocated)."""
    inits = {t.name for t in graph.initializer}
    missing: set[str] = set()
    for vi in graph.input:
        if vi.name not in inits and vi.type.WhichOneof("value") == "tensor_type":
            missing |= input_dims(vi, binding)[1]
    return missing


def make_feeds(
    graph: onnx.GraphProto,
    binding: Mapping[str, int],
    seed: int = 0,
    values: Mapping[str, Sequence[object]] | None = None,
) -> dict[str, Any]:
    """Generated inputs for every graph input (initializer-backed inputs keep their defaults);
    ``values`` gives an input's values instead (``--input-value``: one value fills the input,
    or exactly as many as its shape holds at ``binding``)."""

    rng = np.random.default_rng(seed)
    values = values or {}
    inits = {t.name for t in graph.initializer}
    high = max(1, min([10, *(v for v in binding.values() if v > 0)]))
    feeds: dict[str, Any] = {}
    missing: set[str] = set()
    for vi in graph.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type":
            raise VerifyError(f"input {vi.name!r} is not a tensor: verify generates tensor inputs only")
        shape, lack = input_dims(vi, binding)
        missing |= lack
        if lack:
            continue
        try:
            dt = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        except Exception:
            raise VerifyError(f"input {vi.name!r}: no numpy type for its element type") from None
        name = vi.name.lower()
        kind = np.dtype(dt).kind
        if vi.name in values:
            feeds[vi.name] = _given_values(vi.name, values[vi.name], shape, dt)
        elif kind == "b":
            feeds[vi.name] = np.zeros(shape, dtype=dt)
        elif kind in "iu":
            if "mask" in name:
                feeds[vi.name] = np.ones(shape, dtype=dt)
            elif "type_ids" in name:
                feeds[vi.name] = np.zeros(shape, dtype=dt)
            elif "position" in name and shape:
                feeds[vi.name] = np.broadcast_to(np.arange(shape[-1], dtype=dt), shape).copy()
            else:
                feeds[vi.name] = rng.integers(0, high, size=shape).astype(dt)
        elif kind in "OUS":
            feeds[vi.name] = np.full(shape, "a", dtype=object)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dt)
    if missing:
        raise VerifyError(_missing_message(missing, binding))  # (verify checked it first)
    return feeds


def _given_values(name: str, given: Sequence[object], shape: list[int], dt) -> Any:
    """The array of ``--input-value name=...`` at ``shape``: one value fills it, else exactly
    one value per element (VerifyError otherwise, or for a value of the wrong kind)."""

    n = math.prod(shape)
    if len(given) not in (1, n):
        raise VerifyError(
            f"--input-value {name}: {len(given)} values for an input of shape {shape} ({n} elements):"
            " give one value, or one per element"
        )
    kind = np.dtype(dt).kind
    convert = {"b": _truth, "i": int, "u": int, "f": float, "c": complex}.get(kind, str)
    try:
        vals = [convert(v) for v in given]
        dtype = object if kind in "OUS" else dt
        if len(vals) == 1:
            return np.full(shape, vals[0], dtype=dtype)
        return np.array(vals, dtype=dtype).reshape(shape)
    except (TypeError, ValueError, OverflowError):
        raise VerifyError(
            f"--input-value {name}: {', '.join(map(str, given))} are not {np.dtype(dt).name} values"
        ) from None


def _truth(v: object) -> bool:
    text = str(v).strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    raise ValueError(text)


def _example(
    missing: set[str], binding: Mapping[str, int], guards: Sequence = (), ranges: Mapping | None = None
) -> dict:
    """``binding`` with a size for each ``missing`` symbol: distinct ones, where the ``guards``
    and ``ranges`` allow. The symbols are taken in name order, each trying its distinct size,
    then 2 to 64, then 1, then each number over 64 a guard names and the one after it (``4096
    <= past``), keeping a size when it breaks no guard whose symbols all have one, and going
    back to an earlier symbol's next size when a later one has none (at most
    ``_EXAMPLE_TRIES`` sizes tried in all); the plain distinct sizes when that fails."""
    sizes = (7, 3, 5, 11, 13, 17) if binding else (2, 7, 3, 5, 11, 13)
    plain = dict(binding) | {m: sizes[k] if k < len(sizes) else 19 + 2 * k for k, m in enumerate(sorted(missing))}
    ranges = ranges or {}
    if not guards and not ranges:
        return plain
    named = sorted({c + k for g in guards for c in (g.lhs, g.rhs) if type(c) is int and c > 64 for k in (0, 1)})
    names = sorted(missing)
    options = []
    for name in names:
        lo, hi = ranges.get(name, (1, None))[:2]
        step = step_of(ranges[name]) if name in ranges else 1
        seen: set[int] = set()
        mine = []
        for v in (plain[name], *range(2, 65), 1, *named):
            if v in seen or v < lo or (hi is not None and v > hi) or (v - lo) % step:
                continue
            seen.add(v)
            mine.append(v)
        options.append(mine)
    chosen = dict(binding)
    tries = 0

    def fill(k: int) -> bool:
        nonlocal tries
        if k == len(names):
            return True
        for v in options[k]:
            tries += 1
            if tries > _EXAMPLE_TRIES:
                return False
            chosen[names[k]] = v
            if all(check(g, chosen) is not False for g in guards) and fill(k + 1):
                return True
        del chosen[names[k]]
        return False

    return chosen if fill(0) else plain


#: Sizes :func:`_example` tries at most before it gives the plain example.
_EXAMPLE_TRIES = 20_000


def _missing_message(
    missing: set[str], binding: Mapping[str, int], guards: Sequence = (), ranges: Mapping | None = None
) -> str:
    names = ", ".join(sorted(missing))
    example = format_binding(_example(missing, binding, guards, ranges))
    if not binding:
        return (
            f"verify runs the model, so it needs a size for each of {names}: give them with --bind,"
            f" e.g. --bind {example} (repeat --bind to check several sizes)"
        )
    return (
        f"--bind {format_binding(binding)} does not give {names}: each --bind gives every input symbol,"
        f" e.g. --bind {example}"
    )


def observable(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``model`` whose outputs are every main-graph node output, and their names."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
                have.add(o)
    return m, [o.name for o in m.graph.output]


def _load_external(model: onnx.ModelProto, base_dir: str | None, cap: int) -> None:
    """Read external weights into ``model`` through :mod:`shapeinfer.io.external` (every entry
    checked first: the model's own folder, a regular file, offsets and lengths in range)."""
    try:
        load_all(model, base_dir, cap)
    except ExternalDataError as e:
        raise VerifyError(f"cannot read external data: {e}") from None
    except OSError as e:
        raise VerifyError(f"cannot read external data: {e.strerror or e}") from None


def _fact_bytes(f: Fact | None, binding: Mapping[str, int]) -> int:
    """Bytes of a tensor fact at ``binding``; 0 when a dim or the element size is unknown."""
    if f is None or f.kind != "tensor" or f.shape is None or not f.dtype:
        return 0
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(f.dtype).itemsize
    except Exception:
        return 0
    n = itemsize
    for d in f.shape:
        v = _evaluate(d, binding)
        if not isinstance(v, int) or v < 0:
            return 0
        n *= v
    return n


def estimate_memory(result, binding: Mapping[str, int]) -> int:
    """Bytes a run at ``binding`` needs, from the inferred shapes: every main-graph tensor
    (weights, inputs, and each node output twice: onnxruntime's buffer and the returned array,
    since verify observes them all). Dims inference left unknown count as 0."""
    total = 0
    produced = {o for n in result.model.graph.node for o in n.output if o}
    for name, f in result.facts.items():
        b = _fact_bytes(f, binding)
        total += 2 * b if name in produced else b
    return total


def format_bytes(n: int) -> str:
    """``3221225472`` as ``3.0 GiB``; a count past 2**60 TiB as a power of two."""
    if n.bit_length() > 100:  # beyond float range, and beyond any memory anyway
        return f"2**{n.bit_length() - 1} bytes"
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def _session(model: onnx.ModelProto):
    try:
        import onnxruntime as ort
    except ImportError:
        raise VerifyError(INSTALL_HINT) from None
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4  # failures are reported as one line of ours, not ORT's log
    try:
        if model.ByteSize() < MAX_PROTO_BYTES:
            return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        with tempfile.TemporaryDirectory() as td:
            path = os.path.join(td, "model.onnx")
            onnx.save_model(model, path, save_as_external_data=True, location="model.onnx.data")
            return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise VerifyError(f"onnxruntime cannot load the model: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:400]
    return type(e).__name__


def _assumption_notes(result, binding: Mapping[str, int]) -> list[str]:
    """Equalities inference assumed that this binding contradicts."""
    notes = []
    for rep, other in result.equalities:
        try:
            a, b = D.parse(rep), D.parse(other)
        except Exception:
            continue
        va, vb = _evaluate(a, binding), _evaluate(b, binding)
        if isinstance(va, int) and isinstance(vb, int) and va != vb:
            notes.append(
                f"at {format_binding(binding)}: inference assumed {other} == {rep}, but they are {vb} and {va}"
            )
    return notes


def verify(
    model: ModelLike,
    bindings: Sequence[Mapping[str, int]],
    *,
    base_dir: str | None = None,
    strict: bool = False,
    seed: int = 0,
    result=None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
    name: str | None = None,
    input_values: Mapping[str, Sequence[object]] | None = None,
) -> Report:
    """Run ``model`` in onnxruntime at each binding and compare every main-graph tensor's shape.

    ``model`` is a :class:`~shapeinfer.document.Document`, a path (external weights resolved
    against its folder), or a ModelProto (not modified), the bytes of a serialised model, an ``onnx_ir.Model`` or an
    ``onnx_graphsurgeon.Graph`` (:mod:`shapeinfer.io.modelsource`), whose external data
    ``base_dir`` locates. Every binding must give every input
    symbol. ``result`` may pass an existing inference :class:`~shapeinfer.inference.engine.Result` of
    the same model instead of inferring it here. A binding whose estimated memory
    (:func:`estimate_memory`) is above ``max_memory`` bytes is refused before anything is
    allocated. Every binding is checked against the guards inference recorded (and
    ``dim_ranges``) first: :class:`GuardViolation` names the first guard one violates, before
    anything runs. onnxruntime failing at a binding the guards allow is a finding of the
    report (:attr:`Report.failures`), and the other bindings still run. Raises
    :class:`VerifyError` when the check cannot run (onnxruntime missing, a symbol unbound), and
    :class:`~shapeinfer.inference.bindings.BindError` (the rules of ``infer``) for a value that is not an
    int of at least 1, a symbol no graph input has, or a range that cannot be right.
    ``name`` names the model in the report (default: its path, or its graph's name in memory).
    ``input_values`` gives inputs' values instead of generated ones (a sample rate that must be
    16000, a ``use_cache_branch`` flag): one value fills the input, or one per element; a name
    no graph input has is a VerifyError.
    """
    from shapeinfer.document import Document
    from shapeinfer.document import open as open_model
    from shapeinfer.inference.bindings import check_bind_values, check_model, check_ranges

    doc = model if isinstance(model, Document) else open_model(model, base_dir=base_dir)  # TypeError: no model
    name = name or doc.name
    base_dir = doc.folder
    given = doc.model  # read here, never changed: onnxruntime runs a copy
    try:
        import onnxruntime
    except ImportError:
        raise VerifyError(INSTALL_HINT) from None
    bindings = [check_bind_values(b) for b in bindings] or [{}]  # ints of at least 1, as everywhere
    ranges = check_ranges(dim_ranges) if dim_ranges else None
    if input_values:
        inputs = [vi.name for vi in given.graph.input if vi.name not in {t.name for t in given.graph.initializer}]
        for k in input_values:
            if k not in inputs:
                raise VerifyError(f"--input-value {k}: no graph input of that name{did_you_mean(k, inputs)}")
    for b in bindings:  # every binding complete, of the model's symbols, before anything runs or is allocated
        check_model(given, bind=b, dim_ranges=ranges)
        missing = _missing_symbols(given.graph, b)
        if missing:  # the example given fits the guards (inferred for it)
            result = result or doc.infer(dim_ranges=ranges)
            raise VerifyError(_missing_message(missing, b, result.guards(), result.dim_ranges))
    if result is None:
        result = doc.infer(dim_ranges=ranges)
    src = onnx.ModelProto()
    src.CopyFrom(given)  # external data loaded into it, every tensor made an output
    check_guards(result, bindings)
    for b in bindings:
        need = estimate_memory(result, b)
        if need > max_memory:
            raise VerifyError(
                f"at {format_binding(b)} the model needs about {format_bytes(need)} (estimated from the inferred "
                f"shapes), above the limit of {format_bytes(max_memory)}; raise it with --max-memory"
            )
    report = Report(name, bindings)

    _load_external(src, base_dir, max_memory)
    observed, names = observable(src)
    sess = _session(observed)
    producer = {o: n.op_type for n in src.graph.node for o in n.output if o}
    progress = Progress("verify", total=len(bindings))
    for b in bindings:
        progress.step(format_binding(b))
        feeds = make_feeds(src.graph, b, seed, input_values)
        try:
            ro = onnxruntime.RunOptions()
            ro.log_severity_level = 4
            outs = sess.run(None, feeds, ro)
        except Exception as e:  # the guards hold here: a finding, and the other bindings still run
            error = _first_line(e)
            report.failures.append({"binding": dict(b), "error": error})
            report.per_binding.append({"binding": b, "checked": 0, "mismatches": 0, "unresolved": 0, "failed": error})
            continue
        checked = mism = unres = 0
        for tname, actual in zip(names, outs):
            if tname not in producer:
                continue
            f = result.facts.get(tname)
            reason, unresolved, expected = compare(f, actual, b)
            checked += 1
            finding = Finding(tname, producer[tname], dict(b), _fmt_fact(f), expected, _fmt_actual(actual), "")
            if reason is not None:
                finding.reason = reason
                report.mismatches.append(finding)
                mism += 1
            elif unresolved:
                finding.reason = "unresolved"
                unres += 1
                (report.mismatches if strict else report.unresolved).append(finding)
                mism += int(strict)
        report.checked += checked
        report.per_binding.append({"binding": b, "checked": checked, "mismatches": mism, "unresolved": unres})
        report.notes.extend(_assumption_notes(result, b))
    progress.close()
    return report
