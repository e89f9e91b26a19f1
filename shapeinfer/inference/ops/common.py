"""Helpers shared by the op families: broadcasting, axes, reading shape-tensor values."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.io.onnxio import fact_type, type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, is_dim_value
from shapeinfer.symbolic.intervals import holds_le

#: The largest rank a rule builds from a length the model gives (a shape tensor's length, a
#: count of spatial dims): past it the output rank is left unknown rather than expanded.
MAX_RANK = 1024


def rank_from_model(ctx, n) -> int | None:
    """``n`` (a rank read from the model) when it is an int up to :data:`MAX_RANK`; otherwise
    None, with a warning (E012) when it is an int past the cap."""
    if type(n) is not int:
        return None
    if n > MAX_RANK:
        ctx.diag(
            "warning",
            codes.RANK_TOO_LARGE,
            f"a rank of {n} (over {MAX_RANK}) is not expanded: output rank left unknown",
        )
        return None
    return n


def norm_axis(axis: int, rank: int, code: str = codes.INVALID_NODE) -> int:
    """``axis`` in ``[-rank, rank)`` mapped to ``[0, rank)``; raises InferenceError otherwise."""
    if not -rank <= axis < rank:
        raise InferenceError(code, f"axis {axis} out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def broadcast_dim(ctx, a: D.Dim, b: D.Dim) -> D.Dim:
    """The multidirectional-broadcast result of two dims."""
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if type(a) is int and type(b) is int:
        raise InferenceError(codes.BROADCAST_INCOMPATIBLE, f"dims {a} and {b} cannot broadcast")
    # An unknown (fresh) dim may be 1, so broadcasting does not make it equal to a known other
    # side: the result is the known side, and the unknown stays unknown (no unify).
    fa, fb = (ctx.symbols.has_fresh(d) for d in (a, b))
    if fa != fb:
        unknown, known = (a, b) if fa else (b, a)
        if not ctx.symbols.prove_le(2, known):
            # the known side may be 1, where the result is the unknown one's size
            lows = (ctx.symbols.interval(known)[0], ctx.symbols.interval(unknown)[0])
            if any(lo is None or lo < 1 for lo in lows):
                return ctx.symbols.join((a, b))  # one of the two sizes, not a size of its own
            ctx.assume("mutual_broadcast", a, b)
            return D.dmax(a, b)
        # the unknown side is assumed to be 1 or the known one: a guard, said as G012
        ctx.assume("broadcast", unknown, known, report=True)
        return known
    # A symbolic dim against an int above 1 (``[b, 4, 128] + [b, 1, 4, 1, 128]``): the result is
    # the int whether the symbol is 1 or equal to it; equating them would refuse b = 1, which runs.
    if (type(a) is int) != (type(b) is int) and D.lower_bound(a if type(b) is int else b) is not None:
        k, x = (a, b) if type(a) is int else (b, a)
        if k > 1 and D.lower_bound(x) >= 1:
            ctx.assume("broadcast", x, k, report=True)
            return k
    # Two dims that run only where they are equal (neither is 1 where the other is not): equal.
    # Otherwise the side that may be 1 alone is assumed to be 1 or the other (whose size is the
    # result either way: at h = 1 a stride-16 level of (h + 15)//16 = 1 broadcasts against an
    # upsampled 2*((h + 31)//32) = 2), and where either may be 1 alone the result is the larger.
    symbols = ctx.symbols
    a_alone = not symbols.one_forces_one(a, b)
    b_alone = not symbols.one_forces_one(b, a)
    if not (a_alone or b_alone) or symbols.prove_eq(a, b):
        return ctx.unify(a, b)
    if a_alone != b_alone:
        one, other = (a, b) if a_alone else (b, a)
        ctx.assume("broadcast", one, other, report=True)
        return other
    lows = (symbols.interval(a)[0], symbols.interval(b)[0])
    if fa or any(lo is None or lo < 1 for lo in lows):
        # a side that may be 0 (x[1::2]): the size is not max(a, b) (1 against 0 is 0), but
        # the sides still broadcast (x[0::2] + x[1::2] runs at h = 1 and where h is even)
        if not fa:
            ctx.assume("mutual_broadcast", a, b, report=True)
        return ctx.symbols.join((a, b))
    ctx.diag(
        "warning",
        codes.ASSUMED_DIM_EQUALITY,
        f"broadcasting {D.format(a)} against {D.format(b)}: assuming they are equal or one of them is 1",
    )
    ctx.assume("mutual_broadcast", a, b)
    return D.dmax(a, b)


def broadcast_one_way(ctx, shape: Sequence[D.Dim], target: Sequence[D.Dim]) -> None:
    """``shape`` broadcast one way to ``target``, right-aligned (onnxruntime refuses anything
    else): each dim is 1 or ``target``'s, an equality for an int above 1, the guard ``p == 1 or
    p == x`` for a symbolic ``p``. Dims past ``target``'s rank are the caller's to check."""
    for d, x in zip(shape[::-1], target[::-1]):
        if d == 1 or D.sub(d, x) == 0:
            continue
        if type(d) is int:
            ctx.unify(d, x)  # a number above 1: the one size the target's dim can be
        else:
            ctx.assume("broadcast", d, x, report=True)


def broadcast_shapes(ctx, shapes: Sequence[tuple[D.Dim, ...] | None]) -> tuple[D.Dim, ...] | None:
    """Numpy-style broadcast of several shapes (None if any rank is unknown)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out: list[D.Dim] = [1] * rank
    for s in shapes:
        off = rank - len(s)
        for i, d in enumerate(s):
            out[off + i] = broadcast_dim(ctx, out[off + i], d)
    return tuple(out)


def dim_values(f: Fact | None) -> tuple[D.Dim | None, ...] | None:
    """Values usable as dims (ints / expressions; None for unknown elements), or None."""
    if f is None or f.value is None:
        return None
    out = []
    for v in f.value:
        if is_dim_value(v):
            out.append(v)
        elif isinstance(v, float) and v.is_integer():
            out.append(int(v))
        else:
            out.append(None)
    return tuple(out)


def known_ints(f: Fact | None) -> tuple[int, ...] | None:
    """The values when every one is a known Python int, else None."""
    if f is None or f.value is None:
        return None
    if all(type(v) is int for v in f.value):
        return f.value
    return None


def guard_indices(ctx, values: Sequence[int], n: D.Dim, what: str) -> None:
    """Known indices ``values`` into an axis of size ``n``: onnxruntime refuses one outside
    ``[-n, n - 1]``. An error for a static ``n``; for a symbolic one the guard that every index
    fits (``8 <= n`` for an index 7 or -8), unless that is proven."""
    if not values:
        return
    need = max(max(values) + 1, -min(values))  # the least size every index fits in
    if type(n) is int:
        if need > n:
            raise InferenceError(
                codes.GATHER_INDEX_OUT_OF_RANGE, f"{what} index out of range for dim {n}: it needs {need}"
            )
        return
    if not holds_le(need, n):
        ctx.assume("bound", need, n, report=True)


def guard_sizes(ctx, values: Sequence, least: int) -> None:
    """Sizes ``values`` computed in the graph (an output dim, a repeat count, a depth) that
    onnxruntime refuses below ``least``: the guard ``least <= v`` for each symbolic one, unless
    proven. Known ints and unknown entries (None) are the caller's; an entry of a fresh symbol
    (a size inference does not know, such as a count of detections) is read as it says.
    Soft where the node rests on a soft reading (a floor where int64 Div truncates: ``(n - 3)//2``
    is -1 at n = 2, where the model runs with 0; see ``NodeContext.assume``)."""
    for v in values:
        if v is None or type(v) is int or holds_le(least, v):
            continue
        if ctx.symbols.has_fresh(v):
            continue
        ctx.assume("bound", least, v, report=True)


def guard_nonzero(ctx, v) -> None:
    """A value ``v`` computed in the graph that onnxruntime refuses at 0 (a Slice step, a Range
    delta): the guard ``1 <= max(v, -v)`` where ``v`` is symbolic and not proven non-zero. Ints
    are the caller's; an unknown value, or one of a fresh symbol, is not checked."""
    if not isinstance(v, D.Expr) or ctx.symbols.has_fresh(v) or D.never_zero(v):
        return
    if ctx.symbols.prove_le(1, v) or ctx.symbols.prove_le(v, -1):
        return
    ctx.assume("bound", 1, D.absolute(v), report=True)


def guard_computed_indices(ctx, values: Sequence, n: D.Dim) -> None:
    """Indices ``values`` computed in the graph (``seq - 1``: the last position) into an axis of
    size ``n``: onnxruntime refuses one outside ``[-n, n - 1]``, the guards ``-n <= v`` and
    ``v <= n - 1`` where not proven (soft where the node rests on a soft reading). Known ints are
    :func:`guard_indices`'; an unknown entry, or one of a fresh symbol, is not checked."""
    if ctx.symbols.has_fresh(n):
        return
    for v in values:
        if not isinstance(v, D.Expr) or ctx.symbols.has_fresh(v):
            continue
        if not holds_le(v, D.sub(n, 1)):
            ctx.assume("bound", v, D.sub(n, 1), report=True)
        if not holds_le(D.neg(n), v):
            ctx.assume("bound", D.neg(n), v, report=True)


def scalar_value(f: Fact | None):
    """The single value of a one-element tensor, or None."""
    if f is None or f.value is None or len(f.value) != 1:
        return None
    return f.value[0]


def flat_index(index: Sequence[int], shape: Sequence[int]) -> int:
    k = 0
    for i, d in zip(index, shape):
        k = k * d + i
    return k


def is_static_shape(shape) -> bool:
    """True when ``shape`` is known and every dim an int."""
    return shape is not None and all(type(d) is int for d in shape)


def row_major_strides(shape) -> list[int]:
    """Row-major element strides of a static shape."""
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def unravel_index(k: int, shape) -> list[int]:
    """The index of flat position ``k`` in a static shape (the inverse of :func:`flat_index`)."""
    idx = []
    for d in reversed(shape):
        idx.append(k % d)
        k //= d
    return idx[::-1]


def broadcast_values(
    fn: Callable, facts: Sequence[Fact], shape: tuple | None, *, unknown_elements: bool = False
) -> tuple | None:
    """Elementwise ``fn`` over broadcast values (None where any operand element is unknown,
    unless ``unknown_elements``: then ``fn`` gets None for them and decides)."""
    if shape is None or not all(type(d) is int for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    if n > MAX_VALUE_ELEMENTS:
        return None
    vals = []
    for f in facts:
        if f.value is None or f.shape is None:
            return None
        vals.append(f)
    rank = len(shape)
    out = []
    for k in range(n):
        idx = []
        r = k
        for d in reversed(shape):
            idx.append(r % d)
            r //= d
        idx.reverse()
        args = []
        for f in vals:
            fs = f.shape
            off = rank - len(fs)
            sub = [0 if fs[j] == 1 else idx[off + j] for j in range(len(fs))]
            args.append(f.value[flat_index(sub, fs)])
        if not unknown_elements and any(a is None for a in args):
            out.append(None)
            continue
        try:
            out.append(fn(*args))
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            out.append(None)
    return tuple(out)


# ------------------------------------------------------------------ checking onnx's fallback

#: Values given to symbols when onnx's per-node inference is re-run on concrete dims: distinct,
#: large, and divisible by every small factor an op may require (block sizes, groups, heads).
_PROBE_BASE = 5040


def probe_binding(facts: Sequence[Fact | None]) -> dict[str, int]:
    """A distinct concrete value for every symbol in the dims of ``facts`` (empty when static)."""
    names: set[str] = set()
    for f in facts:
        while f is not None:
            for d in f.shape or ():
                if type(d) is not int:
                    names |= D.symbols(d)
            f = f.elem
    return {s: _PROBE_BASE * (k + 3) for k, s in enumerate(sorted(names))}


def bind_fact(f: Fact, binding: dict[str, int]) -> Fact:
    """``f`` with every symbolic dim evaluated at ``binding`` (values dropped when symbolic)."""
    shape = f.shape
    if shape is not None:
        shape = tuple(d if type(d) is int else D.evaluate(d, binding) for d in shape)
    value = f.value
    if value is not None and any(isinstance(v, D.Expr) for v in value):
        value = None
    elem = None if f.elem is None else bind_fact(f.elem, binding)
    return Fact(f.dtype, shape, value, f.kind, elem)


def check_against_probe(sym: Fact, probe: Fact | None, binding: dict[str, int], fresh: Callable) -> Fact:
    """Keep only the dims of ``sym`` (onnx's answer on symbolic dims) that ``probe`` confirms.

    ``probe`` is onnx's answer for the same node with the symbols bound to ``binding``. A dim
    of ``sym`` survives when it evaluates, at the binding, to the probe's integer (or when the
    probe has no integer there to contradict it); otherwise it becomes a fresh symbol. A rank
    the probe contradicts makes the shape unknown. This catches onnx rules that read an absent
    ``dim_value`` as 0 or copy a ``dim_param`` where the dim is really computed.
    """
    if probe is None or sym.kind != probe.kind:
        return sym
    elem = sym.elem
    if sym.elem is not None and probe.elem is not None:
        elem = check_against_probe(sym.elem, probe.elem, binding, fresh)
    shape = sym.shape
    if shape is not None and probe.shape is not None:
        if len(shape) != len(probe.shape):
            shape = None
        else:
            out = []
            for d, p in zip(shape, probe.shape):
                if type(p) is int and (type(d) is int or D.symbols(d) <= binding.keys()):
                    try:
                        ok = D.evaluate(d, binding) == p
                    except ZeroDivisionError:  # a degenerate binding for d: nothing to compare
                        ok = True
                    out.append(d if ok else fresh())
                else:
                    out.append(d)
            shape = tuple(out)
    return Fact(sym.dtype, shape, sym.value, sym.kind, elem)


def clear_foreign_params(tp, allowed) -> None:
    """Clear (in place) every ``dim_param`` of TypeProto ``tp`` that is not an expression over the
    symbols ``allowed`` (the node's input symbols): onnx can only copy those, anything else is a
    name of its own that would otherwise alias across nodes."""
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(tp, which)
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                if d.HasField("dim_param") and not D.symbols(D.parse(d.dim_param)) <= allowed:
                    d.ClearField("dim_param")
    elif which == "sequence_type":
        clear_foreign_params(tp.sequence_type.elem_type, allowed)
    elif which == "optional_type":
        clear_foreign_params(tp.optional_type.elem_type, allowed)


def probe_outputs(
    schema, node, ins: Sequence[Fact | None], data: dict, binding: dict[str, int], opsets, ir: int
) -> dict:
    """onnx's per-node inference on ``ins`` with symbols bound to ``binding``: output name -> Fact.

    Dims onnx leaves open are None in the facts. Empty when onnx fails on the concrete dims.
    """
    import onnx

    try:
        types = {}
        for name, f in zip(node.input, ins):
            if not name or f is None or (f.kind == "tensor" and f.dtype == 0 and f.shape is None):
                continue
            types[name] = fact_type(bind_fact(f, binding))  # may divide by zero at the binding
        out = onnx.shape_inference.infer_node_outputs(schema, node, types, data, None, opsets, ir)
        return {name: type_fact(tp, lambda axis: None) for name, tp in out.items()}
    except Exception:
        return {}


def provably_nonneg(d: D.Dim, ranges: Mapping[str, tuple[int, int | None]] | None = None) -> bool:
    """True when ``d >= 0`` for every binding of its symbols inside ``ranges`` (default: positive
    integers) (:func:`shapeinfer.symbolic.dims.lower_bound`, the one bounds analysis)."""
    if type(d) is int:
        return d >= 0
    lb = D.lower_bound(d, ranges)
    return lb is not None and lb >= 0


def carry_bounds(ctx, ins: list, outs: list, bounds: list):
    """Value-bounds rule (:data:`~shapeinfer.inference.op_registry.BoundsRule`) of an op whose
    first output's elements are its first input's, moved, selected or copied: theirs."""
    return bounds[0] if bounds else None
