"""Deployment shape profiles: the valid range of every graph input's dims under the guards, as
TensorRT ``trtexec --minShapes/--optShapes/--maxShapes`` strings, and sound upper bounds of
every tensor's size at the range maxima with the peak of live activations.

Contract of :func:`profile`:

- Each input symbol's range is the caller's (default ``[1, inf)``) tightened by the guards'
  bounds; a symbol with no upper bound has no max (``None``), never an invented one. The
  min and max bindings are moved inwards to the nearest values that satisfy the guards on one
  symbol (``N % 32 == 0``); a guard between symbols the profile bindings still violate is
  listed in ``notes``.
- When no input inside the ranges satisfies the guards (``G015`` errors: a range that rules
  out a guard, or a guard that never holds), there is no profile: ``errors`` gives the
  messages, and no input has dims, min, opt or max shapes, no tensor a bound. An ``opt``
  value outside its symbol's ``[min, max]`` (the range after the guards) or violating a
  guard is the same, with ``bad_opt`` set (the CLI's usage error, naming ``--opt``).
- The same min/opt/max bindings are given in three runtimes' forms: TensorRT's
  ``trtexec --minShapes/--optShapes/--maxShapes`` (:meth:`Profile.trtexec`, names quoted by
  trtexec's own rules), onnxruntime's free dimension overrides
  (:meth:`Profile.onnxruntime`: ``SessionOptions.add_free_dimension_override_by_name`` and
  ``onnxruntime_perf_test -f``, one fixed size per named dim) and OpenVINO's
  ``ovc --input`` (:meth:`Profile.openvino`, each dim its ``min..max`` interval).
- A tensor's bound is the interval maximum of its element count over the ranges (exact for
  monotone dims, an over-estimate otherwise), times its element size.
- The peak is the largest sum, over the steps of the main graph in graph order, of the bounds
  of the activations live at that step: a tensor is live from the step that produces it (graph
  inputs from the start) to its last reader (graph outputs to the end). It assumes graph-order
  execution, every activation freed after its last reader and no buffer shared between
  tensors; weights (initializers) and subgraph tensors are not counted. Being a sum of upper
  bounds it is an upper bound of that schedule's peak.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx

from shapeinfer.base.text import text
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import CONTRADICTION, check
from shapeinfer.symbolic.intervals import interval, range_list, step_of

ASSUMES = (
    "graph-order execution; each activation freed after its last reader; no buffer shared between "
    "tensors; weights (initializers) and subgraph tensors not counted"
)


@dataclass
class Profile:
    """What :func:`profile` found (see the module docstring)."""

    model: str
    ranges: dict[str, tuple[int, int | None]]
    guards: list
    inputs: list[dict]  # name, dtype, dims (text), min/opt/max (lists of ints, None for no max)
    tensors: list[dict]  # name, op, elements, bytes (None: no bound)
    peak_bytes: int | None
    peak_at: str | None
    notes: list[str] = field(default_factory=list)
    #: why there is no profile (the G015 messages): the ranges leave no valid input
    errors: list[str] = field(default_factory=list)
    #: the errors are about the caller's ``opt`` values (outside [min, max] or violating a guard)
    bad_opt: bool = False
    #: each graph input's declared dims: an int, a dim_param name, or None (no name, no value)
    declared: dict[str, list[int | str | None] | None] = field(default_factory=dict)
    #: the bindings (min / opt / max) at which the model cannot run, with the guard each
    #: violates: they give no trtexec shapes and no onnxruntime overrides
    violated: dict[str, str] = field(default_factory=dict)

    def _shapes(self, key: str) -> list[tuple[str, list[int]]] | None:
        """Each input's shape at binding ``key`` (min/opt/max); None when some dim has none."""
        out = []
        for i in self.inputs:
            shape = i[key]
            if shape is None or any(d is None for d in shape):
                return None
            out.append((i["name"], shape))
        return out

    def trtexec(self) -> dict[str, str | None]:
        """``{"minShapes": "a:1x1,b:1x1", "optShapes": ..., "maxShapes": ...}``: the values as
        trtexec must receive them (before any shell quoting, see :func:`shell_word`); None when
        some input dim has no bound or some input's name cannot be written (:func:`trtexec_name`)."""
        out: dict[str, str | None] = {}
        names = {i["name"]: trtexec_name(i["name"]) for i in self.inputs}
        for key in ("min", "opt", "max"):
            shapes = self._shapes(key)
            if key in self.violated or shapes is None or any(names[n] is None for n, _ in shapes):
                out[f"{key}Shapes"] = None
                continue
            out[f"{key}Shapes"] = ",".join(f"{names[n]}:{'x'.join(str(d) for d in shape)}" for n, shape in shapes)
        return out

    def onnxruntime(self) -> dict[str, dict[str, int] | None]:
        """onnxruntime's free dimension overrides at each binding: ``{"min": {"seq": 1, ...},
        "opt": ..., "max": ...}``, one entry per dim_param of the graph inputs with the value
        to give ``SessionOptions.add_free_dimension_override_by_name`` (onnxruntime fixes each
        named dim to one size; it has no ranges). None for a binding where some dim_param has no
        value or two different ones (e.g. no max)."""
        out: dict[str, dict[str, int] | None] = {}
        for key in ("min", "opt", "max"):
            got: dict[str, int] | None = None if self.errors or key in self.violated else {}
            if got is None:  # no profile
                out[key] = None
                continue
            for i in self.inputs:
                decl = self.declared.get(i["name"])
                if decl is None:
                    continue
                if i[key] is None or len(decl) != len(i[key]):  # no profile: no value for a named dim
                    if any(isinstance(d, str) for d in decl):
                        got = None
                        break
                    continue
                for d, v in zip(decl, i[key]):
                    if not isinstance(d, str):
                        continue
                    if v is None or got.get(d, v) != v:
                        got = None
                        break
                    got[d] = v
                if got is None:
                    break
            out[key] = got
        return out

    def openvino(self) -> str | None:
        """The value of OpenVINO's ``ovc --input`` (and ``convert_model(input=...)``): each
        input's name and dims, a dim its ``min..max`` interval (``min..`` with no max), as
        ``input_ids[1..4,1..512],attention_mask[1..4,1..512]``; positional (``[1..4,...]``, in
        graph order) when some name has a character ovc's syntax reserves. None when some
        input's rank is unknown."""
        parts = []
        named = all(not set(i["name"]) & _OVC_RESERVED and i["name"] for i in self.inputs)
        for i in self.inputs:
            if i["dims"] is None:
                return None
            dims = []
            for lo, hi in zip(i["min"], i["max"]):
                if lo is None:
                    dims.append("?")
                elif hi is None:
                    dims.append(f"{lo}..")
                else:
                    lo, hi = min(lo, hi), max(lo, hi)
                    dims.append(str(lo) if lo == hi else f"{lo}..{hi}")
            parts.append(f"{i['name'] if named else ''}[{','.join(dims)}]")
        return ",".join(parts)

    def to_dict(self) -> dict:
        """The ``profile --json`` document, described by ``shapeinfer/schemas/profile.schema.json``
        (``schema`` is its version)."""
        return {
            "schema": 1,
            "model": self.model,
            "ranges": {k: range_list(v) for k, v in self.ranges.items()},
            "guards": [g.to_dict() for g in self.guards],
            "inputs": self.inputs,
            "trtexec": self.trtexec(),
            "onnxruntime_free_dimension_overrides": self.onnxruntime(),
            "openvino_input": self.openvino(),
            "tensors": self.tensors,
            "peak_live_bytes": self.peak_bytes,
            "peak_at": self.peak_at,
            "assumes": ASSUMES,
            "notes": self.notes,
            "errors": self.errors,
            "violated": self.violated,
        }


#: characters ovc's --input syntax reserves (its split_inputs pattern): a name holding one is
#: not accepted, so the shapes are given by position
_OVC_RESERVED = set("[]()<,")


def trtexec_name(name: str) -> str | None:
    """``name`` as trtexec's shape flags must receive it: wrapped in single quotes when it holds
    a ``:`` (TensorRT's sampleOptions splitNameAndValue takes the text between two ``'`` as the
    name, and older releases split an entry at its first ``:``), as is otherwise; None when no
    form can carry it (the flag is split at every ``,`` before anything else, and a ``'``
    inside the name would unbalance the quotes)."""
    if "," in name or "'" in name or not name:
        return None
    return f"'{name}'" if ":" in name else name


_SHELL_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%")


def shell_word(text: str) -> str:
    """``text`` as one word for a POSIX shell: each character outside ``[A-Za-z0-9_-+=.,/:@%]``
    escaped with a backslash (``--minShapes=\\'a:0\\':1x3``, trtexec's documented form), so that
    the shell hands ``text`` to the program unchanged."""
    if "\n" in text:  # a backslash before a newline continues the line: quote instead
        return "'" + text.replace("'", "'\\''") + "'"
    return "".join(c if c in _SHELL_SAFE else "\\" + c for c in text)


def _itemsize(dtype: int) -> int | None:
    try:
        np_dtype = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    except (KeyError, ValueError, TypeError):
        return None
    if np_dtype.kind in "OUS":
        return None
    if dtype in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4):
        return 1  # packed two per byte: one byte each is an upper bound
    return int(np_dtype.itemsize)


def _fit(name: str, start: int, step: int, limit: int | None, guards: list) -> int:
    """The first value from ``start`` in direction ``step`` (not past ``limit``) that satisfies
    every guard over ``name`` alone; ``start`` when none does within 4096 steps."""
    own = [g for g in guards if g.symbols == {name}]
    if not own:
        return start
    v = start
    for _ in range(4096):
        if limit is not None and (v - limit) * step > 0:
            break
        if v >= 1 and all(check(g, {name: v}) is not False for g in own):
            return v
        v += step
    return start


def _no_profile(result, name: str, ranges, guards, errors: list[str]) -> Profile:
    """The profile of a model that cannot run where asked: ``errors`` say why; no input has
    dims or shapes, no tensor a bound."""
    init = {t.name for t in result.model.graph.initializer}
    none = {"dims": None, "min": None, "opt": None, "max": None}
    inputs = [{"name": text(vi.name), **none} for vi in result.model.graph.input if vi.name not in init]
    return Profile(name, ranges, guards, inputs, [], None, None, [], errors)


def profile(result, opt: Mapping[str, int] | None = None, name: str = "") -> Profile:
    """The profile of an inference ``result`` (run with the caller's ``dim_ranges``); ``opt``
    gives the opt binding's values (default: each symbol's max, its min when it has none); a
    given value outside the symbol's ``[min, max]`` (its range after the guards), or violating
    a guard, is an error (no profile: ``errors`` says which, ``bad_opt`` is set)."""
    guards = result.guards()
    ranges = result.ranges()
    errors = [d.message for d in result.diagnostics if d.code == CONTRADICTION]
    if errors:  # no valid input: no shape is given, no binding, no bound
        return _no_profile(result, name, ranges, guards, errors)
    notes: list[str] = []
    lo_b: dict[str, int] = {}
    hi_b: dict[str, int | None] = {}
    for s, r in ranges.items():
        lo, hi = r
        step = step_of(r)
        lo_b[s] = _fit(s, lo, step, hi, guards)
        hi_b[s] = None if hi is None else _fit(s, hi, -step, lo, guards)
    opt_b = {s: (opt or {}).get(s, hi_b[s] if hi_b[s] is not None else lo_b[s]) for s in ranges}
    # opt values the caller gave that the model cannot run at: no profile rather than a wrong one
    for s, v in (opt or {}).items():
        lo, hi = lo_b.get(s, 1), hi_b.get(s)
        step = step_of(ranges.get(s, (1, None)))
        if v < lo or (hi is not None and v > hi):
            side = f"below {s}'s min {lo}" if v < lo else f"above {s}'s max {hi}"
            why = [g for g in guards if g.symbols == {s}]
            since = "".join(f"; the model needs {g.text} (from {', '.join(g.nodes) or 'no node'})" for g in why)
            errors.append(f"--opt {s}={v} is {side}: opt must lie in [{lo}, {'no max' if hi is None else hi}]{since}")
        elif (v - lo) % step:
            errors.append(f"--opt {s}={v} is not on {s}'s step: {s} takes {lo}, {lo + step}, ... (--dim-range)")
    if opt and not errors and all(v is not None for v in opt_b.values()):
        for g in guards:
            if g.symbols & opt.keys() and check(g, opt_b) is False:
                given = ",".join(f"{k}={v}" for k, v in opt.items())
                errors.append(f"--opt {given} violates the guard {g.text} (from {', '.join(g.nodes) or 'no node'})")
    if errors:
        prof = _no_profile(result, name, ranges, guards, errors)
        prof.bad_opt = True
        return prof
    violated: dict[str, str] = {}
    for label, b in (("min", lo_b), ("opt", opt_b), ("max", hi_b)):
        if any(v is None for v in b.values()):
            continue
        for g in guards:
            if check(g, b) is False:
                violated.setdefault(label, g.text)
                notes.append(
                    f"the {label} binding violates {g.text}: the model cannot run there, so no {label} shapes"
                    " are given (pick them by hand, or narrow --dim-range)"
                )
    for s, v in hi_b.items():
        if v is None:
            notes.append(f"{s} has no upper bound: no max shapes (give --dim-range {s}=LO:HI)")
    init = {t.name for t in result.model.graph.initializer}
    inputs = []
    declared: dict[str, list[int | str | None] | None] = {}
    for vi in result.model.graph.input:
        if vi.name not in init:
            declared[text(vi.name)] = _declared(vi)
    for vi in result.model.graph.input:
        if vi.name in init:
            continue
        f = result.facts.get(vi.name)
        if f is None or f.shape is None:
            inputs.append({"name": text(vi.name), "dims": None, "min": None, "opt": None, "max": None})
            continue

        def at(b: Mapping[str, int | None], shape=f.shape) -> list[int | None]:
            out: list[int | None] = []
            for d in shape:
                try:
                    out.append(D.evaluate(d, b) if all(b.get(x) is not None for x in D.symbols(d)) else None)
                except (KeyError, ZeroDivisionError):
                    out.append(None)
            return out

        inputs.append(
            {
                "name": text(vi.name),
                "dims": [D.format(d) for d in f.shape],
                "min": at(lo_b),
                "opt": at(opt_b),
                "max": at(hi_b),
            }
        )
    # per-tensor bounds at the range maxima
    graph = result.model.graph
    bound_ranges = {s: (lo_b[s], hi_b[s]) for s in ranges}
    sizes: dict[str, int | None] = {}
    tensors = []
    producer_op = {o: n.op_type for n in graph.node for o in n.output if o}
    for tname, f in result.facts.items():
        if tname in init or f.kind != "tensor":
            continue
        if f.shape is None:
            elems = None
        else:
            elems = interval(D.product(f.shape), bound_ranges)[1]
        item = _itemsize(f.dtype)
        nbytes = None if elems is None or item is None else elems * item
        sizes[tname] = nbytes
        tensors.append(
            {"name": text(tname), "op": text(producer_op.get(tname, "input")), "elements": elems, "bytes": nbytes}
        )
    peak, peak_at = _peak(graph, sizes, init)
    return Profile(name, ranges, guards, inputs, tensors, peak, peak_at, notes, declared=declared, violated=violated)


def _declared(vi: onnx.ValueInfoProto) -> list[int | str | None] | None:
    """A graph input's dims as its type declares them: an int, the dim_param, or None."""
    t = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    out: list[int | str | None] = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.dim_param:
            out.append(text(d.dim_param))
        else:
            out.append(None)
    return out


def _peak(graph: onnx.GraphProto, sizes: Mapping[str, int | None], init: set[str]) -> tuple[int | None, str | None]:
    nodes = list(graph.node)
    last: dict[str, int] = {}
    for k, n in enumerate(nodes):
        for i in n.input:
            if i:
                last[i] = k
    end = len(nodes)
    for vi in graph.output:
        last[vi.name] = end
    live: dict[str, int | None] = {}
    for vi in graph.input:
        if vi.name not in init:
            live[vi.name] = sizes.get(vi.name)
    best: int | None = 0
    best_at: str | None = None
    for k, n in enumerate(nodes):
        for o in n.output:
            if o and o in sizes:
                live[o] = sizes[o]
        total = None if any(v is None for v in live.values()) else sum(live.values())
        if total is None:
            return None, text(n.name) or f"{text(n.op_type)} #{k}"
        if total > best:
            best, best_at = total, text(n.name) or f"{text(n.op_type)} #{k}"
        for t in list(live):
            if last.get(t, -1) <= k:
                del live[t]
    return best, best_at
