"""Indexing and joining: Gather*, Scatter*, ReverseSequence, Slice, Concat, Split, Squeeze, Unsqueeze, Identity.

Values flow through all of them, which is what carries a Shape's dims on to a Reshape target.
"""

from __future__ import annotations

from collections.abc import Sequence

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import (
    carry_bounds,
    flat_index,
    guard_computed_indices,
    guard_indices,
    guard_nonzero,
    is_static_shape,
    known_ints,
    norm_axis,
    provably_nonneg,
    row_major_strides,
    unravel_index,
)
from shapeinfer.io.onnxio import graph_path, subgraph_attrs
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, tensor
from shapeinfer.symbolic.intervals import Ranges, by_residue, holds_le, simplify

#: Slice bounds at or beyond this magnitude mean "to the end" / "from the start".
BIG = 2**31 - 1


# ------------------------------------------------------------------------------ Gather


@register("Gather")
def gather(ctx, ins: list) -> list:
    """Gather: ``data.shape[:axis] + indices.shape + data.shape[axis+1:]``; values gathered."""
    data, idx = ins[0], ins[1]
    if data.shape is None or idx.shape is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape)
    axis = norm_axis(ctx.attr("axis", 0), r)
    shape = data.shape[:axis] + idx.shape + data.shape[axis + 1 :]
    value = None
    iv = known_ints(idx)
    if iv is not None:
        guard_indices(ctx, iv, data.shape[axis], "Gather")
    elif idx.value is not None:
        guard_computed_indices(ctx, idx.value, data.shape[axis])
    if data.value is not None and iv is not None and is_static_shape(data.shape) and is_static_shape(shape):
        n_axis = data.shape[axis]
        iv = [i + n_axis if i < 0 else i for i in iv]
        outer = 1
        for d in data.shape[:axis]:
            outer *= d
        inner = 1
        for d in data.shape[axis + 1 :]:
            inner *= d
        value = []
        for o in range(outer):
            for i in iv:
                base = (o * n_axis + i) * inner
                value.extend(data.value[base : base + inner])
    return [tensor(data.dtype, shape, value)]


@register("GatherElements", since=11)
def gather_elements(ctx, ins: list) -> list:
    """GatherElements: the output has the indices' shape. onnxruntime refuses indices longer
    than the data on any other axis than ``axis``, and index values outside ``axis``: bound
    guards where that is not proved."""
    data, idx = ins[0], ins[1]
    shape = idx.shape
    value = None
    if data.shape is not None and shape is not None and len(shape) == len(data.shape) and shape:
        along = norm_axis(ctx.attr("axis", 0), len(shape))
        for d, (i, n) in enumerate(zip(shape, data.shape, strict=True)):
            if d != along and not (type(i) is int and type(n) is int) and not holds_le(i, n):
                ctx.assume("bound", i, n, report=True)
    iv = known_ints(idx)
    if iv is not None and data.shape:
        guard_indices(ctx, iv, data.shape[norm_axis(ctx.attr("axis", 0), len(data.shape))], "GatherElements")
    if data.value is not None and iv is not None and is_static_shape(data.shape) and is_static_shape(shape):
        axis = norm_axis(ctx.attr("axis", 0), len(data.shape))
        value = []
        for k, i in enumerate(iv):
            pos = unravel_index(k, shape)
            n = data.shape[axis]
            pos[axis] = i + n if i < 0 else i
            value.append(data.value[flat_index(pos, data.shape)])
    return [tensor(data.dtype, shape, value)]


@register("GatherND", since=11)
def gather_nd(ctx, ins: list) -> list:
    """GatherND: ``indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]``; known
    indices fit the axes they index (guards; onnxruntime refuses anything else)."""
    data, idx = ins[0], ins[1]
    b = ctx.attr("batch_dims", 0)
    if data.shape is None or idx.shape is None or not idx.shape or type(idx.shape[-1]) is not int:
        return [Fact(data.dtype, None)]
    k = idx.shape[-1]
    if type(b) is int and b >= 0 and b + k <= len(data.shape):
        _guard_coordinates(ctx, known_ints(idx), k, data.shape[b : b + k], "GatherND")
    return [tensor(data.dtype, idx.shape[:-1] + data.shape[b + k :])]


def _guard_coordinates(ctx, values, k: int, axes: Sequence, what: str) -> None:
    """Known index tuples ``values`` (``k`` coordinates each, flattened) into ``axes``: each
    coordinate fits its axis (:func:`guard_indices`)."""
    if values is None or k < 1 or len(axes) < k:
        return
    for j in range(k):
        guard_indices(ctx, values[j::k], axes[j], what)


# ------------------------------------------------------------------------------ Slice


def onnx_slice_range(d: int, start: int, end: int, step: int) -> range:
    """The indices ``Slice`` takes along a dim of static size ``d``, per the ONNX clamping rules.

    Negative start / end get ``d`` added; then for positive steps both are clamped to ``[0, d]``,
    for negative steps start to ``[0, d-1]`` and end to ``[-1, d-1]``. This differs from Python
    slicing: ``range(5)[-10:-10:-1]`` is empty, ONNX takes element 0.
    """
    if d == 0:
        return range(0)
    if start < 0:
        start += d
    if end < 0:
        end += d
    if step > 0:
        start, end = min(max(start, 0), d), min(max(end, 0), d)
    else:
        start, end = min(max(start, 0), d - 1), min(max(end, -1), d - 1)
    return range(start, end, step)


def _clamp_bound(d: D.Dim, v: D.Dim, lo: int, hi_off: int, ranges: Ranges | None = None) -> D.Dim | None:
    """A start / end ``v`` made non-negative and clamped into ``[lo, d + hi_off]``, symbolically.

    None when the sign of a symbolic ``v`` is unknown over ``ranges`` (the symbols' ranges, by
    default positive sizes; the clamp then has no closed form).
    """
    hi = D.add(d, hi_off)
    if type(v) is int:
        if v >= BIG:
            return hi
        if v <= -BIG:
            return lo
        if v < 0:
            return D.dmax(D.add(d, v), lo)
        return D.dmin(v, hi)
    if provably_nonneg(v, ranges):
        return D.dmin(v, hi)
    if (D.lower_bound(D.neg(v), ranges) or 0) >= 1:
        return D.dmax(D.add(d, v), lo)
    return None


#: With a negative step, onnxruntime reads these ends as "through index 0" (numpy's None) where
#: the ONNX clamping rule gives "stop at d-1": the runtimes disagree, so the length stays open.
AMBIGUOUS_NEGATIVE_STEP_ENDS = (2**31 - 1, 2**63 - 1)


def slice_len(d: D.Dim, start: D.Dim, end: D.Dim, step: D.Dim, ranges: Ranges | None = None) -> D.Dim | None:
    """The number of elements ONNX Slice takes along a dim of size ``d``; None if not expressible
    (or when ONNX and onnxruntime disagree, see ``AMBIGUOUS_NEGATIVE_STEP_ENDS``). A symbolic
    ``step`` counts only when its sign is provable (``N``: positive, ``-N``: negative). ``ranges``
    (the symbols' ranges, default positive sizes) decide the signs of symbolic starts and ends."""
    n = _slice_len(d, start, end, step, ranges)
    if n is None and type(step) is int:
        # a start / end whose sign depends on a symbol's residue (tf2onnx's crop
        # ``crop == 0 ? INT32_MAX : -crop`` with ``crop = 2*((h + 1)//2) - h``): decide each case
        names = D.symbols(start) | D.symbols(end)
        if len(names) == 1:
            (name,) = names
            n = by_residue(lambda a, rg: _slice_len(a[0], a[1], a[2], step, rg), [d, start, end], name, ranges)
    return n


def _slice_len(d: D.Dim, start: D.Dim, end: D.Dim, step: D.Dim, ranges: Ranges | None) -> D.Dim | None:
    if isinstance(step, D.Expr):
        if (D.lower_bound(step, ranges) or 0) >= 1:
            forward = True
        elif (D.lower_bound(D.mul(-1, step), ranges) or 0) >= 1:
            forward = False  # provably negative: the int rule below with -step symbolic
        else:
            return None
    else:
        forward = step > 0
    if not forward and type(end) is int and end in AMBIGUOUS_NEGATIVE_STEP_ENDS:
        return None
    if type(step) is int and type(d) is int and type(start) is int and type(end) is int:
        return len(onnx_slice_range(d, start, end, step))
    if forward:
        s = _clamp_bound(d, start, 0, 0, ranges)
        e = _clamp_bound(d, end, 0, 0, ranges)
        if s is None or e is None:
            return None
        return D.dmax(0, D.ceildiv(D.sub(e, s), step))
    s = _clamp_bound(d, start, 0, -1, ranges)
    e = _clamp_bound(d, end, -1, -1, ranges)
    if s is None or e is None:
        return None
    n = D.dmax(0, D.ceildiv(D.sub(s, e), D.mul(-1, step)))
    lb = D.lower_bound(d, ranges)
    if lb is None or lb < 1:
        # start clamps into [0, d-1], an empty interval when d is 0: then nothing is taken
        # (n <= d whenever d >= 1, so the min changes nothing else)
        n = D.dmin(n, d)
    return n


#: the words of the G012 a Slice index read within its dim adds (see :func:`_within`)
WITHIN_DIM = "a negative Slice index counted from the end within the dim, as onnxruntime's tool counts it"

#: the largest ``c`` of a ``-c`` bound :func:`_within` reads within its dim (the exact guard is
#: found by scanning the symbol's values below ``c``)
MAX_WITHIN = 1 << 12


def _within(ctx, d: D.Dim, s: D.Dim, e: D.Dim, k: D.Dim, n: D.Dim) -> D.Dim:
    """onnxruntime's reading of constant negative bounds ``-c`` on a dim ``d`` of one input
    symbol: they count from the end *within* the dim (``x[-10:-1]`` of ``M`` is 9, where ``n``,
    right at every size, is ``min(M - 1, 9)``). Returns that length, recording the guard under
    which it equals ``n``, exactly: the least ``v`` with the two equal at every size from ``v``
    on, and at no size below it (``10 <= M`` here; ``9 <= M`` for ``x[-1:-10:-1]``), with an
    info G012. Returns ``n`` unchanged when the reading is no simpler, when the two agree on
    sizes below the threshold too (no exact guard), or when the ranges rule the reading out.
    Only under ``onnxruntime_conventions``."""
    if type(d) is int or type(n) is int or type(k) is not int:
        return n
    names = D.symbols(d)
    if len(names) != 1 or not names <= ctx.symbols.input_symbols:
        return n
    cs = [-b for b in (s, e) if type(b) is int and -MAX_WITHIN <= b < 0]
    if not cs:
        return n
    (name,) = names
    ranges = ctx.symbols.effective_ranges()
    lo, hi = D.range_of(name, ranges)
    top = max(cs)
    if top <= lo or (hi is not None and hi < top):
        return n
    narrowed = {**ranges, name: (top, hi)}
    cand = slice_len(d, s, e, k, narrowed)
    if cand is None:
        return n
    cand = simplify(cand, narrowed)
    if D.size(cand) >= D.size(n):
        return n

    def agree(v: int) -> bool:
        return D.evaluate(n, {name: v}) == D.evaluate(cand, {name: v})

    v = top  # cand is n's value at every size in [top, hi]: where below does that stop?
    while v > lo and agree(v - 1):
        v -= 1
    if any(agree(u) for u in range(lo, v - 1)):
        return n  # equal again further down: no bound says exactly where the reading holds
    if v > lo:
        ctx.assume("bound", v, D.sym(name))
        ctx.diag("info", codes.INPUT_GUARD, f"the inferred shapes hold only when {v} <= {name}: {WITHIN_DIM}")
    return cand


def _slice(ctx, data: Fact, starts, ends, axes, steps) -> list:
    if data.shape is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape)
    if starts is None or ends is None or axes is None or steps is None:
        # unknown bounds: sliced axes are unknown; others keep their dims
        if axes is None:
            return [tensor(data.dtype, ctx.fresh_shape(r))]
        shape = list(data.shape)
        for a in axes:
            shape[norm_axis(a, r)] = ctx.fresh()
        return [tensor(data.dtype, shape)]
    if not (len(starts) == len(ends) == len(axes) == len(steps)):
        raise InferenceError(codes.SLICE_INVALID, "Slice starts/ends/axes/steps differ in length")
    shape = list(data.shape)
    seen = set()
    plan = [(0, d, 1) for d in data.shape]
    for s, e, a, k in zip(starts, ends, axes, steps):
        a = norm_axis(a, r)
        if a in seen:
            raise InferenceError(codes.SLICE_INVALID, f"Slice axis {a} repeated")
        seen.add(a)
        if k == 0:
            raise InferenceError(codes.SLICE_INVALID, "Slice step 0")
        guard_nonzero(ctx, k)
        if s is None or e is None or k is None:
            shape[a] = ctx.fresh()
            plan = None
            continue
        n = slice_len(data.shape[a], s, e, k, ctx.symbols.effective_ranges())
        if n is not None:
            n = ctx.symbols.simplify(n)
            if ctx.policy.onnxruntime_conventions:
                n = _within(ctx, data.shape[a], s, e, k, n)
        if type(k) is int and k < 0 and type(e) is int and e in AMBIGUOUS_NEGATIVE_STEP_ENDS:
            msg = f"Slice end {e} with step {k}: ONNX stops at the last index, onnxruntime runs to 0"
            ctx.diag("warning", codes.SLICE_NEGATIVE_STEP_END, msg)
        shape[a] = ctx.fresh() if n is None else n
        if n is None or type(s) is not int or type(e) is not int or type(k) is not int:
            plan = None
        elif plan is not None:
            plan[a] = (s, e, k)
    value = None
    if data.value is not None and plan is not None and is_static_shape(data.shape) and is_static_shape(shape):
        ranges = [onnx_slice_range(d, s, e, k) for d, (s, e, k) in zip(data.shape, plan)]
        value = []
        st = row_major_strides(data.shape)
        n = 1
        for d in shape:
            n *= d
        for k in range(n):
            pos = unravel_index(k, shape)
            value.append(data.value[sum(ranges[i][p] * st[i] for i, p in enumerate(pos))])
    return [tensor(data.dtype, shape, value)]


def _bounds(f: Fact | None):
    if f is None or f.value is None:
        return None
    out = []
    for v in f.value:
        if type(v) is int or isinstance(v, D.Expr):
            out.append(v)
        else:
            out.append(None)
    return out


@register("Slice", since=1)
def slice_v1(ctx, ins: list) -> list:
    """Slice-1: starts/ends/axes attributes, step 1."""
    data = ins[0]
    starts, ends = ctx.attr("starts"), ctx.attr("ends")
    if starts is None or ends is None:
        raise InferenceError(codes.SLICE_INVALID, "Slice-1 needs starts and ends")
    axes = ctx.attr("axes", list(range(len(starts))))
    return _slice(ctx, data, starts, ends, axes, [1] * len(starts))


@register("Slice", since=10)
def slice_v10(ctx, ins: list) -> list:
    """Slice-10+: starts/ends/axes/steps inputs; negative steps and clamping per the spec."""
    data = ins[0]
    starts, ends = _bounds(ins[1]), _bounds(ins[2])
    n = None
    for f in (ins[1], ins[2]):
        if f is not None and f.shape is not None and len(f.shape) == 1 and type(f.shape[0]) is int:
            n = f.shape[0]
    axes_f = ins[3] if len(ins) > 3 else None
    steps_f = ins[4] if len(ins) > 4 else None
    if axes_f is None:
        axes = list(range(n)) if n is not None else None
    else:
        axes = known_ints(axes_f)
    if steps_f is None:
        steps = [1] * n if n is not None else None
    else:
        steps = _bounds(steps_f)  # per axis: an int, a symbolic step, or None (that axis unknown)
    return _slice(ctx, data, starts, ends, axes, steps)


# ------------------------------------------------------------------------------ Concat / Split


def _equal_unless_empty(ctx, s: Sequence, shape: Sequence, axis: int, ref: Sequence) -> None:
    """Guards that a Concat input ``s`` that may be empty has ``shape``'s dims off ``axis``
    wherever it has elements, and so does the input ``ref`` that ``shape`` came from when that
    may be empty too (``()`` when it cannot): ``min(..., |s[i] - shape[i]|) <= 0``, said as
    ``s_k <= 0 or ... or s[i] == shape[i]`` (Focus: x[0::2] beside x[1::2], h even or 1)."""
    zeros = []
    for d in (*s, *ref):
        if d == 0:
            return  # empty: onnxruntime reads none of its dims
        if type(d) is not int and not ctx.symbols.prove_le(1, d):
            zeros.append(d)
    for i in range(len(s)):
        w = D.sub(s[i], shape[i])
        if i == axis or w == 0:
            continue
        alternatives = zeros if type(w) is int else [*zeros, D.absolute(w)]
        if any(ctx.symbols.has_fresh(a) for a in alternatives):
            continue  # a size inference does not know: no condition on the inputs to say
        if alternatives:
            bound = D.dmin(*alternatives) if len(alternatives) > 1 else alternatives[0]
            ctx.assume("bound", bound, 0, report=True)


def _leave_unwritten(ctx, ins: list, full: list, axis: int) -> None:
    """Leave out of what is written the type of each input that may be empty whose dims off
    ``axis`` are not proven equal to every other input's (:attr:`Result.unwritten`): onnx's
    inference, which onnxruntime runs at load, requires them equal where onnxruntime's kernel
    reads none of an empty input's dims."""
    path = ctx.scope.path
    if path is None:
        return
    for k, f in enumerate(ins):
        if f is None or f.shape is None or any(f.shape is s for s in full) or k >= len(ctx.node.input):
            continue
        others = [g for j, g in enumerate(ins) if j != k and g is not None]
        if any(
            g.shape is None or any(i != axis and not ctx.symbols.prove_eq(d, g.shape[i]) for i, d in enumerate(f.shape))
            for g in others
        ):
            _leave_unwritten_from(ctx, path, ctx.node.input[k])


def _leave_unwritten_from(ctx, path: str, name: str, depth: int = 0) -> None:
    """Leave ``name`` unwritten, and what its shape may follow from, a few levels up: its
    producer's inputs, and the outputs of the subgraphs the producer runs (a Loop's body):
    written, their types can tell onnxruntime's optimizer the shape again (a Squeeze of a Loop
    whose body's output type says it)."""
    key = (path, name)
    if key in ctx.engine.unwritten:
        return
    ctx.engine.unwritten.add(key)
    if depth >= 6 or path != ctx.scope.path:
        return
    found = ctx.producer(name, anywhere=True)
    if found is None:
        return
    k, node = found
    for attr, body in subgraph_attrs(node):
        at = graph_path(ctx.graph, k, attr)
        ctx.engine.unwritten.update((at, o.name) for o in body.output)
    for i in node.input:
        if i:
            _leave_unwritten_from(ctx, path, i, depth + 1)


@register("Concat")
def concat(ctx, ins: list) -> list:
    """Concat: dims equal except ``axis``, which sums; values concatenated. onnxruntime checks
    the other dims of the inputs that have elements only (an empty input's are not read, its
    ``axis`` dim still sums): they are equated among the inputs proven non-empty, and an input
    that may be empty (a dim not proven at least 1) is not equated to them."""
    facts = [f for f in ins if f is not None]
    dtype = next((f.dtype for f in facts if f.dtype), 0)
    shapes = [f.shape for f in facts]
    known = [s for s in shapes if s is not None]
    if not known:
        return [Fact(dtype, None)]
    r = len(known[0])
    if any(len(s) != r for s in known):
        raise InferenceError(codes.CONCAT_INVALID, "Concat inputs differ in rank")
    if ctx.has_attr("axis"):
        axis = norm_axis(ctx.attr("axis"), r)
    elif ctx.version < 4:
        axis = norm_axis(1, r)  # Concat-1's default
    else:
        raise InferenceError(codes.CONCAT_INVALID, "Concat needs an axis attribute")
    full = [s for s in known if all(ctx.symbols.prove_le(1, d) for d in s)]
    if len(full) < len(shapes):
        _leave_unwritten(ctx, ins, full, axis)
    if len(known) < len(shapes):  # an input of unknown shape: the axis unknown, the others as below
        shape = list(full[0] if full else known[0])
        for s in full[1:]:
            for i in range(r):
                if i != axis:
                    shape[i] = ctx.unify(shape[i], s[i])
        for i in range(r):
            if not full and i != axis and any(D.sub(s[i], shape[i]) != 0 for s in known[1:]):
                shape[i] = ctx.fresh()
        shape[axis] = ctx.fresh()
        return [tensor(dtype, shape)]
    shape = list(full[0] if full else known[0])
    total: D.Dim = 0
    for s in known:
        total = D.add(total, s[axis])
    for s in full[1:]:
        for i in range(r):
            if i != axis:
                shape[i] = ctx.unify(shape[i], s[i])
    ref = full[0] if full else known[0]
    for s in known:
        if s is not ref and not any(s is f for f in full):
            _equal_unless_empty(ctx, s, shape, axis, () if full else ref)
    if not full:  # every input may be empty: a dim all of them agree on, else unknown
        for i in range(r):
            if i != axis and any(D.sub(s[i], shape[i]) != 0 for s in known[1:]):
                shape[i] = ctx.fresh()
    shape[axis] = total
    value = None
    if any(f.value is not None for f in facts) and is_static_shape(shape):
        # a part whose values are unknown contributes unknown elements (kept per element)
        facts = [
            tensor(f.dtype, f.shape, (None,) * _numel(f.shape)) if f.value is None and is_static_shape(f.shape) else f
            for f in facts
        ]
    if all(f.value is not None for f in facts) and is_static_shape(shape):
        n = 1
        for d in shape:
            n *= d
        if n <= MAX_VALUE_ELEMENTS:
            outer = 1
            for d in shape[:axis]:
                outer *= d
            value = []
            for o in range(outer):
                for f in facts:
                    inner = 1
                    for d in f.shape[axis:]:
                        inner *= d
                    value.extend(f.value[o * inner : (o + 1) * inner])
    return [tensor(dtype, shape, value)]


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def split_sizes(ctx, dim: D.Dim, n_out: int, split: list | None, num_outputs: int | None) -> list:
    """The per-output sizes Split gives along its axis ``dim``. onnxruntime refuses sizes that
    do not add up to it, equal parts that do not divide it, and ``num_outputs`` parts whose
    last would be negative: an error for a static dim, a guard for a symbolic one."""
    if split is not None:
        total = sum(split)
        if type(dim) is int and total != dim:
            raise InferenceError(codes.SPLIT_INVALID, f"Split sizes {list(split)} add up to {total}, not {dim}")
        if type(dim) is not int:
            ctx.unify(dim, total)
        return list(split)
    n = num_outputs or n_out
    if type(dim) is int:
        if ctx.version >= 18 and num_outputs:
            chunk = -(-dim // n)
            sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
            if sizes[-1] < 0:
                raise InferenceError(
                    codes.SPLIT_INVALID, f"Split of {dim} into {n} outputs leaves a negative last chunk"
                )
            return sizes
        if dim % n:
            raise InferenceError(codes.SPLIT_INVALID, f"Split of {dim} into {n} equal parts")
        return [dim // n] * n
    q = D.exact_div(dim, n)
    if q is not None:
        return [q] * n
    if ctx.version >= 18 and num_outputs:
        chunk = D.ceildiv(dim, n)
        if not holds_le(D.mul(chunk, n - 1), dim):
            ctx.assume("bound", D.mul(chunk, n - 1), dim, report=True)
        return [chunk] * (n - 1) + [D.sub(dim, D.mul(chunk, n - 1))]
    ctx.assume("divisibility", dim, n, report=True)
    return [D.floordiv(dim, n)] * n


@register("Split")
def split(ctx, ins: list) -> list:
    """Split (attribute form before 13, input form from 13, num_outputs from 18)."""
    data = ins[0]
    n_out = ctx.num_outputs
    num_outputs = ctx.attr("num_outputs") if ctx.version >= 18 else None
    if num_outputs is not None and num_outputs != n_out:  # checked before anything is sized by it
        raise InferenceError(codes.SPLIT_INVALID, f"Split num_outputs={num_outputs} but the node has {n_out} outputs")
    if data.shape is None:
        return [Fact(data.dtype, None)] * n_out
    r = len(data.shape)
    axis = norm_axis(ctx.attr("axis", 0), r)
    if ctx.version >= 13:
        sf = ins[1] if len(ins) > 1 else None
        split = None if sf is None else known_ints(sf)
        if sf is not None and split is None:
            out = []
            for _ in range(n_out):
                s = list(data.shape)
                s[axis] = ctx.fresh()
                out.append(tensor(data.dtype, s))
            return out
    else:
        split = ctx.attr("split")
        if ctx.version < 2 and split is None and len(ins) > 1 and ins[1] is not None:
            split = known_ints(ins[1])
    if split is not None and len(split) == 0:
        split = None  # an empty split is none: equal parts
    sizes = split_sizes(ctx, data.shape[axis], n_out, split, num_outputs)
    if len(sizes) != n_out:
        raise InferenceError(codes.SPLIT_INVALID, f"Split gives {len(sizes)} parts for {n_out} outputs")
    out = []
    offset = 0
    for sz in sizes:
        s = list(data.shape)
        s[axis] = sz
        value = None
        if data.value is not None and is_static_shape(data.shape) and type(sz) is int:
            value = _slice(ctx, data, [offset], [offset + sz], [axis], [1])[0].value
            offset += sz
        out.append(tensor(data.dtype, s, value))
    return out


# ------------------------------------------------------------------------------ Squeeze / Unsqueeze


def _axes(ctx, ins: list, since_input: int) -> list | None:
    if ctx.version >= since_input:
        f = ins[1] if len(ins) > 1 else None
        if f is None:
            return []  # none given
        v = known_ints(f)
        return None if v is None else list(v)
    return list(ctx.attr("axes", []))


@register("Squeeze")
def squeeze(ctx, ins: list) -> list:
    """Squeeze: drop the listed size-1 axes (all static 1s when none are listed)."""
    data = ins[0]
    axes = _axes(ctx, ins, 13)
    if data.shape is None or axes is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape)
    if not axes:
        sym = [d for d in data.shape if type(d) is not int]
        if sym:
            return [Fact(data.dtype, None)]
        shape = tuple(d for d in data.shape if d != 1)
    else:
        ax = {norm_axis(a, r) for a in axes}
        for a in ax:
            d = data.shape[a]
            if type(d) is int and d != 1:
                raise InferenceError(codes.SQUEEZE_UNSQUEEZE_INVALID, f"Squeeze axis {a} has size {d}")
            if type(d) is not int:
                ctx.unify(d, 1)
        shape = tuple(d for i, d in enumerate(data.shape) if i not in ax)
    return [tensor(data.dtype, shape, data.value)]


@register("Unsqueeze")
def unsqueeze(ctx, ins: list) -> list:
    """Unsqueeze: insert size-1 axes at the listed output positions."""
    data = ins[0]
    axes = _axes(ctx, ins, 13)
    if data.shape is None or axes is None:
        return [Fact(data.dtype, None)]
    r = len(data.shape) + len(axes)
    ax = sorted(norm_axis(a, r) for a in axes)
    if len(set(ax)) != len(ax):
        raise InferenceError(codes.SQUEEZE_UNSQUEEZE_INVALID, "Unsqueeze axes repeated")
    shape = list(data.shape)
    for a in ax:
        shape.insert(a, 1)
    return [tensor(data.dtype, shape, data.value)]


@register("Identity")
def identity(ctx, ins: list) -> list:
    """Identity: the input's fact (tensors, sequences and optionals alike)."""
    return [ins[0]]


@register("ReverseSequence", since=10)
def reverse_sequence(ctx, ins: list) -> list:
    """ReverseSequence: the data input's type and shape. onnxruntime takes one length per
    entry of ``batch_axis``, each at most the size of ``time_axis``: an equality, and for known
    lengths the guard that the longest fits (an error where the size is known)."""
    x = ins[0]
    lens = ins[1] if len(ins) > 1 else None
    b_axis, t_axis = ctx.attr("batch_axis", 1), ctx.attr("time_axis", 0)
    if x.shape is None or len(x.shape) < 2 or {b_axis, t_axis} != {0, 1} or lens is None:
        return [tensor(x.dtype, x.shape)]
    if lens.shape is not None and len(lens.shape) == 1:
        ctx.unify(lens.shape[0], x.shape[b_axis])
    vals = known_ints(lens)
    if vals:
        need, n = max(vals), x.shape[t_axis]
        if min(vals) < 0:
            raise InferenceError(codes.INVALID_NODE, f"sequence length {min(vals)} is negative")
        if type(n) is int:
            if need > n:
                raise InferenceError(codes.INVALID_NODE, f"sequence length {need} is longer than the time axis ({n})")
        elif not holds_le(need, n):
            ctx.assume("bound", need, n, report=True)
    return [tensor(x.dtype, x.shape)]


@register("Scatter", since=9)
@register("ScatterElements", since=11)
def scatter_elements(ctx, ins: list) -> list:
    """Scatter, ScatterElements: the data input's type and shape. indices and updates are one
    shape, no longer than data on any other axis than ``axis``, and known indices fit ``axis``
    (guards where not proven, as onnxruntime checks them)."""
    data, idx = ins[0], ins[1]
    upd = ins[2] if len(ins) > 2 else None
    shape = idx.shape
    if data.shape is not None and shape is not None and len(shape) == len(data.shape) and shape:
        along = norm_axis(ctx.attr("axis", 0), len(shape))
        if upd is not None and upd.shape is not None and len(upd.shape) == len(shape):
            for x, y in zip(shape, upd.shape):
                ctx.unify(x, y)
        for d, (i, n) in enumerate(zip(shape, data.shape, strict=True)):
            if d != along and not (type(i) is int and type(n) is int) and not holds_le(i, n):
                ctx.assume("bound", i, n, report=True)
        iv = known_ints(idx)
        if iv is not None:
            guard_indices(ctx, iv, data.shape[along], ctx.op_type)
    return [tensor(data.dtype, data.shape)]


@register("ScatterND", since=11)
def scatter_nd(ctx, ins: list) -> list:
    """ScatterND: the data input's type and shape. updates are ``indices.shape[:-1] +
    data.shape[k:]`` and known indices fit the axes they index (guards)."""
    data, idx = ins[0], ins[1]
    upd = ins[2] if len(ins) > 2 else None
    if data.shape is not None and idx.shape and type(idx.shape[-1]) is int and idx.shape[-1] <= len(data.shape):
        k = idx.shape[-1]
        want = tuple(idx.shape[:-1]) + tuple(data.shape[k:])
        if upd is not None and upd.shape is not None and len(upd.shape) == len(want):
            for x, y in zip(want, upd.shape):
                ctx.unify(x, y)
        _guard_coordinates(ctx, known_ints(idx), k, data.shape[:k], "ScatterND")
    return [tensor(data.dtype, data.shape)]


def gather_bounds(ctx, ins: list, outs: list, bounds: list):
    """Value-bounds rule of Gather: elements selected from its data, so the data's bounds; and
    where the indices have bounds and the gathered axis a fixed size ``N``, the guard they need
    (info G012): indices within ``[-N, N-1]`` (onnxruntime checks this and fails otherwise)."""
    idx = bounds[1] if len(bounds) > 1 else None
    if idx is not None:
        data = ins[0] if ins else None
        axis = 0
        for a in ctx.node.attribute:
            if a.name == "axis":
                axis = a.i
        shape = None if data is None else data.shape
        if shape is not None and -len(shape) <= axis < len(shape) and type(shape[axis]) is int:
            n = shape[axis]
            resolve = ctx.symbols.resolve
            ctx.assume("bound", resolve(idx[1]), n - 1, report=True)
            ctx.assume("bound", -n, resolve(idx[0]), report=True)
    return carry_bounds(ctx, ins, outs, bounds)


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Gather", value_bounds=gather_bounds)
declare_traits("Unsqueeze", shape_inputs={1: "exact"}, value_bounds=carry_bounds, movement="reshape")
declare_traits("Squeeze", shape_inputs={1: "exact"}, value_bounds=carry_bounds, movement="reshape")
declare_traits("Identity", value_bounds=carry_bounds, movement="copy")
declare_traits(
    "Slice", shape_inputs={1: "start", 2: "end", 3: "exact", 4: "exact"}, value_bounds=carry_bounds, movement="copy"
)
declare_traits("Split", shape_inputs={1: "exact"})
