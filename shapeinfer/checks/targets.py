"""Target rules: how a model's Reshapes map onto OpenVINO (P0xx) and oneDNN Graph (P1xx).

They run only under ``--target openvino`` / ``--target onednn`` (or a profile that sets the
target), and follow the specs of OpenVINO opset1 Reshape and oneDNN Graph
StaticReshape/DynamicReshape.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from onnx import TensorProto

from shapeinfer.checks.context import LintContext, NodeRef, dtype_name
from shapeinfer.checks.registry import rule
from shapeinfer.checks.reshape import _reshapes, _version, constant_target_for, runtime_target
from shapeinfer.ops.common import dim_values

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

#: Element types that are not numbers: OpenVINO Reshape-1's T is "any numeric type".
NON_NUMERIC = (TensorProto.BOOL, TensorProto.STRING)
#: oneDNN Graph DynamicReshape's T1 (the data): f32, f16, bf16.
ONEDNN_DATA = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)


def _data_types(ctx: LintContext) -> Iterator[tuple[NodeRef, int]]:
    """``(reshape, element type of its data)`` for each Reshape whose data type is known."""
    for ref in _reshapes(ctx):
        data = ref.input_fact(0)
        if data is not None and data.kind == "tensor" and data.dtype:
            yield ref, data.dtype


def _target_values(ctx: LintContext, ref: NodeRef) -> Sequence | None:
    """The target a Reshape gives: Reshape-1's ``shape`` attribute, else the known values of its
    second input (ints, or symbolic dims); None when they are not known."""
    if _version(ctx, ref) < 5:
        return list(ref.attr("shape") or [])
    return dim_values(ref.input_fact(1)) if len(ref.node.input) > 1 else None


@rule("P001", "openvino-reshape-non-numeric", "error", "Reshape data of a non-numeric type", target="openvino")
def openvino_non_numeric(ctx: LintContext) -> None:
    """
    OpenVINO opset1 Reshape takes data of "any numeric type" ``T``. A Reshape of bool or string
    data is outside that spec: the conversion may fail or need a Cast around the node. Cast to a
    numeric type (uint8 for masks) before the Reshape and back after it.
    """
    for ref, dtype in _data_types(ctx):
        if dtype in NON_NUMERIC:
            ctx.report(
                "P001",
                f"OpenVINO Reshape-1 takes numeric data; this Reshape's data is {dtype_name(dtype)}",
                ref,
                tensor=ref.node.input[0],
            )


@rule("P002", "openvino-special-zero-mapping", "info", "how allowzero maps to special_zero", target="openvino")
def openvino_special_zero(ctx: LintContext) -> None:
    """
    OpenVINO's Reshape has ``special_zero`` where ONNX has ``allowzero``, with the opposite
    sense: ONNX ``allowzero=0`` (the default, a 0 copies the input dim) becomes
    ``special_zero=true``; ``allowzero=1`` (a 0 is a literal zero dim) becomes
    ``special_zero=false``. Reported for every Reshape whose target holds a 0, or whose target
    is only known at run time, so that the mapping can be checked where it matters.
    """
    for ref in _reshapes(ctx):
        allowzero = bool(ref.attr("allowzero", 0)) if _version(ctx, ref) >= 14 else False
        values = _target_values(ctx, ref)
        mapping = "allowzero=1 maps to special_zero=false" if allowzero else "allowzero=0 maps to special_zero=true"
        meaning = "a 0 is a literal zero-size dim" if allowzero else "a 0 copies the input dim at its index"
        if values is None:
            ctx.report("P002", f"{mapping} ({meaning}); the target is only known at run time", ref)
        elif any(type(t) is int and t == 0 for t in values):
            zeros = [i for i, t in enumerate(values) if type(t) is int and t == 0]
            ctx.report("P002", f"{mapping}: the 0 at index {', '.join(map(str, zeros))}: {meaning}", ref)


@rule("P101", "onednn-reshape-data-type", "error", "Reshape data type outside f32/f16/bf16", target="onednn")
def onednn_data_type(ctx: LintContext) -> None:
    """
    oneDNN Graph's StaticReshape/DynamicReshape take data ``T1`` of f32, f16 or bf16 only. A
    Reshape of integer or bool data (shape arithmetic, masks, token ids) cannot be mapped to
    them and falls back to another implementation or fails. Keep such Reshapes out of the part
    of the graph given to oneDNN, or fold them (``shapeinfer optimize``) when they are shape
    arithmetic.
    """
    for ref, dtype in _data_types(ctx):
        if dtype not in ONEDNN_DATA:
            ctx.report(
                "P101",
                f"oneDNN Graph Reshape takes f32/f16/bf16 data; this Reshape's data is {dtype_name(dtype)}",
                ref,
                tensor=ref.node.input[0],
            )


@rule("P102", "onednn-shape-out-of-int32", "error", "target values outside int32", target="onednn")
def onednn_int32_target(ctx: LintContext) -> None:
    """
    oneDNN Graph DynamicReshape's shape input ``T2`` is s32 (and StaticReshape's ``shape``
    attribute is read the same way), while an ONNX target is int64. A target value outside the
    int32 range cannot be represented; it is usually a dim so large the model is wrong anyway,
    or a sentinel from shape arithmetic.
    """
    for ref in _reshapes(ctx):
        bad = [t for t in _target_values(ctx, ref) or () if type(t) is int and not INT32_MIN <= t <= INT32_MAX]
        if bad:
            ctx.report("P102", f"target value {bad[0]} does not fit the int32 shape oneDNN Graph takes", ref)


@rule(
    "P103",
    "onednn-dynamic-reshape",
    "warning",
    "Reshape with a runtime target (becomes DynamicReshape)",
    fix="canonicalize-reshape",
    target="onednn",
)
def onednn_dynamic_reshape(ctx: LintContext) -> None:
    """
    A Reshape whose target is computed at run time maps to oneDNN Graph's DynamicReshape; one
    with a constant target maps to StaticReshape, which can be compiled into the partition. When
    the target is equivalent to a constant (see R010) the fix is ``shapeinfer optimize`` (the
    ``canonicalize-reshape`` pass, also applied by ``lint --fix``); otherwise the finding says
    the target is genuinely dynamic.
    """
    for ref in _reshapes(ctx):
        if _version(ctx, ref) < 5 or not runtime_target(ref):
            continue
        target = constant_target_for(ctx, ref)
        if target is not None:
            ctx.report(
                "P103",
                f"runtime target {ref.node.input[1]!r} makes this a DynamicReshape; it is always {target}: "
                "`shapeinfer optimize` (canonicalize-reshape) makes it a StaticReshape",
                ref,
                fix=ref.graph == "main",
            )
        else:
            ctx.report(
                "P103",
                f"runtime target {ref.node.input[1]!r} makes this a DynamicReshape (no constant target spells it)",
                ref,
                fix=None,
            )
