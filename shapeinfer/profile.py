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
  messages, and no input has dims, min, opt or max shapes, no tensor a bound.
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

from shapeinfer import dims as D
from shapeinfer.guards import CONTRADICTION, check
from shapeinfer.intervals import interval

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

    def trtexec(self) -> dict[str, str | None]:
        """``{"minShapes": "a:1x1,b:1x1", "optShapes": ..., "maxShapes": ...}`` (None when some
        input dim has no bound)."""
        out: dict[str, str | None] = {}
        for key in ("min", "opt", "max"):
            parts = []
            for i in self.inputs:
                shape = i[key]
                if shape is None or any(d is None for d in shape):
                    parts = None
                    break
                parts.append(f"{i['name']}:{'x'.join(str(d) for d in shape)}")
            out[f"{key}Shapes"] = None if parts is None else ",".join(parts)
        return out

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "ranges": {k: list(v) for k, v in self.ranges.items()},
            "guards": [g.to_dict() for g in self.guards],
            "inputs": self.inputs,
            "trtexec": self.trtexec(),
            "tensors": self.tensors,
            "peak_live_bytes": self.peak_bytes,
            "peak_at": self.peak_at,
            "assumes": ASSUMES,
            "notes": self.notes,
            "errors": self.errors,
        }


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
    inputs = [{"name": vi.name, **none} for vi in result.model.graph.input if vi.name not in init]
    return Profile(name, ranges, guards, inputs, [], None, None, [], errors)


def profile(result, opt: Mapping[str, int] | None = None, name: str = "") -> Profile:
    """The profile of an inference ``result`` (run with the caller's ``dim_ranges``); ``opt``
    gives the opt binding's values (default: each symbol's max, its min when it has none); a
    given value outside the symbol's valid range, or violating a guard, is an error (no
    profile: ``errors`` says which)."""
    guards = result.guards()
    ranges = result.ranges()
    errors = [d.message for d in result.diagnostics if d.code == CONTRADICTION]
    if errors:  # no valid input: no shape is given, no binding, no bound
        return _no_profile(result, name, ranges, guards, errors)
    notes: list[str] = []
    lo_b: dict[str, int] = {}
    hi_b: dict[str, int | None] = {}
    for s, (lo, hi) in ranges.items():
        lo_b[s] = _fit(s, lo, 1, hi, guards)
        hi_b[s] = None if hi is None else _fit(s, hi, -1, lo, guards)
    opt_b = {s: (opt or {}).get(s, hi_b[s] if hi_b[s] is not None else lo_b[s]) for s in ranges}
    # opt values the caller gave that the model cannot run at: no profile rather than a wrong one
    if opt and all(v is not None for v in opt_b.values()):
        for g in guards:
            if g.symbols & opt.keys() and check(g, opt_b) is False:
                given = ",".join(f"{k}={v}" for k, v in opt.items())
                errors.append(f"--opt {given} violates the guard {g.text} (from {', '.join(g.nodes) or 'no node'})")
    for s, v in (opt or {}).items():
        lo, hi = ranges.get(s, (1, None))
        if not errors and (v < lo or (hi is not None and v > hi)):
            errors.append(f"--opt {s}={v} is outside its valid range [{lo}, {'no max' if hi is None else hi}]")
    if errors:
        return _no_profile(result, name, ranges, guards, errors)
    for label, b in (("min", lo_b), ("opt", opt_b), ("max", hi_b)):
        if any(v is None for v in b.values()):
            continue
        for g in guards:
            if check(g, b) is False:
                notes.append(f"the {label} binding violates {g.text}: pick the profile by hand")
    for s, v in hi_b.items():
        if v is None:
            notes.append(f"{s} has no upper bound: no max shapes (give --dim-range {s}=LO:HI)")
    init = {t.name for t in result.model.graph.initializer}
    inputs = []
    for vi in result.model.graph.input:
        if vi.name in init:
            continue
        f = result.facts.get(vi.name)
        if f is None or f.shape is None:
            inputs.append({"name": vi.name, "dims": None, "min": None, "opt": None, "max": None})
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
                "name": vi.name,
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
        tensors.append({"name": tname, "op": producer_op.get(tname, "input"), "elements": elems, "bytes": nbytes})
    peak, peak_at = _peak(graph, sizes, init)
    return Profile(name, ranges, guards, inputs, tensors, peak, peak_at, notes)


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
            return None, n.name or f"{n.op_type} #{k}"
        if total > best:
            best, best_at = total, n.name or f"{n.op_type} #{k}"
        for t in list(live):
            if last.get(t, -1) <= k:
                del live[t]
    return best, best_at
