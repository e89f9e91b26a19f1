"""Reshape: one rule for ONNX Reshape-1/5/13/14/19/21/23, OpenVINO Reshape-1, oneDNN DynamicReshape.

:func:`reshape_dims` is the whole semantics; the registered ONNX rules only read the target
(attribute before opset 5, second input from 5) and ``allowzero`` (from 14).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import carry_bounds, dim_values, guard_nonzero, guard_sizes
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.dims import INT64_MAX
from shapeinfer.symbolic.facts import Fact, tensor


def reshape_dims(
    input_dims: Sequence[D.Dim] | None,
    target: Sequence[D.Dim | None],
    zero_copies: bool,
    on_floor: Callable[[D.Dim, D.Dim], None] | None = None,
    on_count: Callable[[D.Dim, D.Dim], None] | None = None,
    on_divisor: Callable[[list], None] | None = None,
) -> tuple[D.Dim | None, ...]:
    """The output dims of reshaping ``input_dims`` to ``target``.

    ``zero_copies`` is ONNX ``allowzero=0`` / OpenVINO ``special_zero=true``: a 0 in the target
    copies the input dim at its index; otherwise 0 is a literal zero dim. One ``-1`` is inferred
    so that element counts match. An empty target means a scalar. ``input_dims`` None means
    unknown rank; a ``None`` target entry is an unknown value. Symbolic target entries are
    taken to be positive dims. An output entry is None where it cannot be determined. A ``-1``
    whose quotient is not provably exact is the floor quotient: exact wherever the model runs,
    and ``on_floor(total, known)`` is called so the caller can record that condition (a guard).
    Element counts that are not provably equal (``b*16`` in, 32 out) are equal only where the
    model runs: ``on_count(total, count)`` is called for the caller to record it. A ``-1``
    beside other dims whose product is symbolic calls ``on_divisor(product)``: onnxruntime
    refuses a product of 0 there (the other dims are passed).

    Raises InferenceError (code R001-R005) for: more than one -1 (R001); both 0 and -1 with
    literal zeros (R002); a copying 0 at an index >= input rank (R003); element counts that
    provably differ, a -1 that cannot be inferred, or int64 overflow (R004); a value < -1 (R005).
    """
    ints = [t for t in target if type(t) is int]
    if ints.count(-1) > 1:
        raise InferenceError(codes.RESHAPE_MULTIPLE_INFERRED_DIMS, f"target {_fmt(target)} has more than one -1")
    bad = [t for t in ints if t < -1]
    if bad:
        raise InferenceError(codes.RESHAPE_INVALID_TARGET_VALUE, f"target {_fmt(target)} has value {bad[0]} < -1")
    if not zero_copies and 0 in ints and -1 in ints:
        raise InferenceError(
            codes.RESHAPE_ALLOWZERO_ZERO_AND_MINUS_ONE, f"target {_fmt(target)} has both 0 and -1 with allowzero=1"
        )
    out: list[D.Dim | None] = []
    infer_at = None
    for i, t in enumerate(target):
        if t == 0 and type(t) is int and zero_copies:
            if input_dims is None:
                out.append(None)
            elif i >= len(input_dims):
                raise InferenceError(
                    codes.RESHAPE_COPY_BEYOND_RANK,
                    f"target {_fmt(target)} copies dim {i} (0) but the input has rank {len(input_dims)}",
                )
            else:
                out.append(input_dims[i])
        elif t == -1 and type(t) is int:
            infer_at = i
            out.append(None)
        else:
            out.append(t)
    total = None if input_dims is None else D.product(input_dims)
    if infer_at is not None:
        others = [d for k, d in enumerate(out) if k != infer_at]
        if total is not None and all(d is not None for d in others):
            known = D.product(others)
            if type(known) is int and known > INT64_MAX:
                raise InferenceError(codes.RESHAPE_ELEMENT_COUNT_MISMATCH, f"target {_fmt(target)} overflows int64")
            if known == 0:
                raise InferenceError(
                    codes.RESHAPE_ELEMENT_COUNT_MISMATCH,
                    f"cannot infer -1 in {_fmt(target)}: the other dims multiply to 0",
                )
            if type(known) is not int and on_divisor is not None:
                on_divisor(others)
            q = D.exact_div(total, known)
            if q is None and type(total) is int and type(known) is int:
                raise InferenceError(
                    codes.RESHAPE_ELEMENT_COUNT_MISMATCH,
                    f"cannot reshape {total} elements to {_fmt(target)}: not divisible by {known}",
                )
            # Not provably exact symbolically; but wherever the model runs the division is exact,
            # so the floor quotient is the dim (e.g. (7*seq)//2).
            out[infer_at] = D.floordiv(total, known) if q is None else q
            if q is None and on_floor is not None:
                on_floor(total, known)
    elif total is not None and all(d is not None for d in out):
        count = D.product(out)
        if count != total:
            if type(count) is int and type(total) is int:
                raise InferenceError(
                    codes.RESHAPE_ELEMENT_COUNT_MISMATCH,
                    f"cannot reshape {total} elements into {_fmt(out)} ({count} elements)",
                )
            ratio = D.exact_div(count, total)
            if D.compare(count, total) in (-1, 1) or type(ratio) is int:
                raise InferenceError(
                    codes.RESHAPE_ELEMENT_COUNT_MISMATCH,
                    f"element counts differ: {D.format(total)} in, {D.format(count)} out",
                )
            if on_count is not None:
                on_count(total, count)  # equal only where the model runs: the caller's guard
    ints_out = [d for d in out if type(d) is int]
    n = 1
    for d in ints_out:
        n *= d
    if any(d > INT64_MAX for d in ints_out) or n > INT64_MAX:
        raise InferenceError(codes.RESHAPE_ELEMENT_COUNT_MISMATCH, f"target {_fmt(out)} overflows int64")
    return tuple(out)


def _fmt(dims: Sequence) -> str:
    return "[" + ", ".join("?" if d is None else D.format(d) for d in dims) + "]"


def openvino_reshape(input_dims: Sequence[D.Dim], pattern: Sequence[D.Dim], special_zero: bool) -> tuple:
    """OpenVINO opset1 Reshape: ``special_zero`` true copies input dims at 0 entries."""
    return reshape_dims(input_dims, pattern, zero_copies=special_zero)


def onednn_dynamic_reshape(input_dims: Sequence[D.Dim], shape: Sequence[D.Dim], special_zero: bool) -> tuple:
    """oneDNN Graph DynamicReshape (and StaticReshape with the shape as attribute)."""
    return reshape_dims(input_dims, shape, zero_copies=special_zero)


def _finish(ctx, data: Fact | None, target: Sequence | None, target_len: D.Dim | None, zero_copies: bool) -> list:
    dtype = data.dtype if data is not None else 0
    in_dims = None if data is None else data.shape
    if target is None:
        if type(target_len) is int:
            return [tensor(dtype, ctx.fresh_shape(target_len))]
        return [Fact(dtype, None)]

    def on_floor(total: D.Dim, known: D.Dim) -> None:
        ctx.assume("divisibility", total, known, report=True)

    def on_count(total: D.Dim, count: D.Dim) -> None:
        ctx.assume("equality", total, count, report=True)

    def on_divisor(others: list) -> None:
        # none of them 0; an entry in exact form (``t + (1 - min(t, 1))*d``) is d where t is 0,
        # and t is at least 0: the guard would be true and unprovable, so it is not said
        guard_sizes(ctx, [d for d in others if not D.atom_kinds(d) & {"min", "max"}], 1)

    target = _literal_entries(ctx, target, in_dims, zero_copies)
    dims = reshape_dims(in_dims, target, zero_copies, on_floor, on_count, on_divisor)
    shape = tuple(ctx.fresh() if d is None else d for d in dims)
    value = data.value if data is not None and data.value is not None else None
    return [tensor(dtype, shape, value)]


def _literal_entries(ctx, target: Sequence, in_dims: Sequence | None, zero_copies: bool) -> list:
    """``target`` with its symbolic entries as the dims they give. An entry is the dim it says
    where it is at least 1 (at least 0 with ``allowzero``): a 0 copies the input dim at its
    index (with ``zero_copies``) and a -1 is inferred, so an entry such as ``n//2`` (0 at
    ``n = 1``) is read literally under the soft guard ``1 <= n//2`` when that is not proven
    (the model runs where it fails, with other shapes). Without soft guards: an entry proven
    at least 0 gives ``t + (1 - min(t, 1))*d``, the input dim ``d`` where ``t`` is 0 (with
    ``zero_copies``); any other is unknown (None). An entry of a fresh symbol (a size inference
    does not know, such as a count of detections) is read as it says, as is one the input dim a
    0 would copy is a multiple of (``2*(seq//2)`` for ``seq//2``: 0 where it is 0). Every other
    symbolic entry is guarded at least -1, at least 0 beside a -1 (onnxruntime refuses a
    dimension below -1 and a second -1), and not 0 past the input's rank (with ``zero_copies``
    a 0 there has no dim to copy)."""
    least = 1 if zero_copies else 0
    # onnxruntime refuses an entry below -1, and a second -1: where the target has a -1, every
    # computed entry is at least 0, else at least -1 (a hard guard: it fails there)
    lowest = 0 if -1 in (t for t in target if type(t) is int) else -1
    out = list(target)
    for i, t in enumerate(target):
        if t is None or type(t) is int or ctx.symbols.prove_le(least, t) or ctx.symbols.has_fresh(t):
            continue  # (proven at least ``least``, so at least -1 too; a fresh size: see above)
        copied = in_dims[i] if zero_copies and in_dims is not None and i < len(in_dims) else None
        copies_nothing = zero_copies and in_dims is not None and i >= len(in_dims)  # a 0 there is refused
        low = 1 if copies_nothing and lowest == 0 else lowest
        if not ctx.symbols.prove_le(low, t):
            ctx.assume("bound", low, t, report=True)
        if copies_nothing and low == -1:
            guard_nonzero(ctx, t)
        if ctx.symbols.prove_le(least, t):
            continue
        if copied is not None and D.exact_div(copied, t) is not None:
            continue  # the dim a 0 copies is a multiple of it, so 0 too: both readings agree
        if ctx.engine.soft_guards:
            ctx.assume("bound", least, t, report=True, soft=True)
        elif copied is not None and ctx.symbols.prove_le(0, t):
            out[i] = D.add(t, D.mul(D.sub(1, D.dmin(t, 1)), copied))
        else:
            out[i] = None
    return out


@register("Reshape", since=1)
def reshape_v1(ctx, ins: list) -> list:
    """Reshape-1: target from the ``shape`` attribute; ``consumed_inputs`` is ignored."""
    target = ctx.attr("shape")
    data = ins[0] if ins else None
    if target is None:
        raise InferenceError(codes.RESHAPE_TARGET_FORM_MISMATCH, "Reshape-1 without a shape attribute")
    return _finish(ctx, data, list(target), len(target), True)


@register("Reshape", since=5)
def reshape_v5(ctx, ins: list) -> list:
    """Reshape-5/13/14/19/21/23: target from the second input, ``allowzero`` from 14."""
    data = ins[0]
    shp = ins[1] if len(ins) > 1 else None
    if shp is None:
        raise InferenceError(codes.RESHAPE_TARGET_FORM_MISMATCH, "Reshape needs a shape input from opset 5")
    allowzero = ctx.attr("allowzero", 0) if ctx.version >= 14 else 0
    if shp.shape is not None and len(shp.shape) != 1:
        raise InferenceError(codes.RESHAPE_TARGET_NOT_INT64, f"Reshape target must be 1-D, got rank {len(shp.shape)}")
    if shp.dtype and shp.kind == "tensor" and shp.dtype != TensorProto.INT64:
        name = TensorProto.DataType.Name(shp.dtype).lower()
        ctx.diag(
            "error",
            codes.RESHAPE_TARGET_NOT_INT64,
            f"target {ctx.node.input[1]!r} is {name}; Reshape takes an int64 target: "
            "cast it (Cast to=INT64) or store it as int64",
        )
    target = dim_values(shp)
    target_len = shp.shape[0] if shp.shape else None
    return _finish(ctx, data, target, target_len, not allowzero)


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Reshape", shape_inputs={1: "reshape"}, value_bounds=carry_bounds, movement="reshape")
