"""Sequences and optionals, as far as types go.

A sequence's fact has ``kind="sequence"`` and the fact every element satisfies in ``elem``
(elements that differ are merged like If branches: equal dims stay, differing ones become a
fresh symbol). The length is not tracked, except that ``value == ()`` marks a sequence known
to be empty (SequenceEmpty): it adds nothing when merged with others, so inserting into it gives
the inserted tensor's fact exactly. An optional's fact has ``kind="optional"`` and its element in
``elem``; ``value == ()`` marks one known to hold nothing.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, norm_axis
from shapeinfer.inference.ops.subgraph_facts import is_empty, merge_facts, run_body
from shapeinfer.io.onnxio import type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

EMPTY = ()


def _in(ins: list, i: int) -> Fact | None:
    return ins[i] if i < len(ins) else None


def sequence_of(elem: Fact | None, empty: bool = False) -> Fact:
    """The fact of a sequence whose elements satisfy ``elem`` (known empty when ``empty``)."""
    return Fact(0, None, EMPTY if empty else None, "sequence", elem if elem is not None else Fact())


def _elem(seq: Fact | None) -> Fact:
    if seq is None or seq.kind != "sequence" or seq.elem is None:
        return Fact()
    return seq.elem


def _with_element(ctx, seq: Fact | None, t: Fact | None) -> Fact:
    """``seq`` with one more element ``t``."""
    if t is not None and t.kind != "tensor":
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"a sequence element must be a tensor, got a {t.kind}")
    if seq is None or is_empty(seq):
        elem = t if t is not None else Fact()
        if seq is not None and seq.elem is not None and seq.elem.dtype and not elem.dtype:
            elem = Fact(seq.elem.dtype, elem.shape, elem.value, elem.kind)
        return sequence_of(elem)
    return sequence_of(merge_facts(ctx, [_elem(seq), t]))


@register("SequenceEmpty", since=11)
def sequence_empty(ctx, ins: list) -> list:
    """SequenceEmpty: an empty sequence of ``dtype`` (float by default)."""
    return [sequence_of(Fact(ctx.attr("dtype", TensorProto.FLOAT)), empty=True)]


@register("SequenceConstruct", since=11)
def sequence_construct(ctx, ins: list) -> list:
    """SequenceConstruct: the elements' facts merged."""
    if not ins:
        raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, "SequenceConstruct needs at least one input")
    for t in ins:
        if t is not None and t.kind != "tensor":
            raise InferenceError(codes.CONV_OR_SEQUENCE_INVALID, f"a sequence element must be a tensor, got a {t.kind}")
    return [sequence_of(merge_facts(ctx, list(ins)))]


@register("SequenceAt", since=11)
def sequence_at(ctx, ins: list) -> list:
    """SequenceAt: a tensor satisfying the element fact."""
    seq = _in(ins, 0)
    if is_empty(seq):
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "SequenceAt on a sequence that is always empty")
    return [_elem(seq)]


@register("SequenceInsert", since=11)
def sequence_insert(ctx, ins: list) -> list:
    """SequenceInsert: the element fact merged with the inserted tensor's."""
    return [_with_element(ctx, _in(ins, 0), _in(ins, 1))]


@register("SequenceErase", since=11)
def sequence_erase(ctx, ins: list) -> list:
    """SequenceErase: the same element fact (the result may be empty)."""
    seq = _in(ins, 0)
    if is_empty(seq):
        raise InferenceError(codes.POOL_OR_SEQUENCE_INVALID, "SequenceErase on a sequence that is always empty")
    return [sequence_of(_elem(seq))]


@register("SequenceLength", since=11)
def sequence_length(ctx, ins: list) -> list:
    """SequenceLength: an int64 scalar (0 for a sequence known empty)."""
    return [tensor(TensorProto.INT64, (), (0,) if is_empty(_in(ins, 0)) else None)]


@register("SplitToSequence", since=11)
def split_to_sequence(ctx, ins: list) -> list:
    """SplitToSequence: chunks along ``axis``; the chunk dim is known when every chunk agrees."""
    x, split = _in(ins, 0), _in(ins, 1)
    if x is None or x.shape is None:
        return [sequence_of(Fact(0 if x is None else x.dtype))]
    r = len(x.shape)
    axis = norm_axis(ctx.attr("axis", 0), r)
    d = x.shape[axis]
    if split is None:
        if ctx.attr("keepdims", 1):
            shape = x.shape[:axis] + (1,) + x.shape[axis + 1 :]
        else:
            shape = x.shape[:axis] + x.shape[axis + 1 :]
        return [sequence_of(Fact(x.dtype, shape))]
    chunk: D.Dim | None = None
    sv = dim_values(split)
    if split.shape is not None and len(split.shape) == 0:  # one chunk size, the last chunk smaller
        s = sv[0] if sv else None
        if s is not None:
            if type(s) is int and s <= 0:
                raise InferenceError(
                    codes.SPLIT_OR_CONCAT_SEQUENCE_INVALID,
                    f"SplitToSequence split={s}: a scalar split must be greater than zero",
                )
            if s == d or D.mod(d, s) == 0:
                chunk = s
    elif sv is not None and sv and all(v is not None for v in sv):
        if len(set(sv)) == 1:
            chunk = sv[0]
        if all(type(v) is int for v in sv) and type(d) is int and sum(sv) != d:
            raise InferenceError(
                codes.SPLIT_OR_CONCAT_SEQUENCE_INVALID, f"SplitToSequence split sums to {sum(sv)}, not the dim {d}"
            )
    if chunk is None:
        chunk = ctx.fresh()
    return [sequence_of(Fact(x.dtype, x.shape[:axis] + (chunk,) + x.shape[axis + 1 :]))]


@register("ConcatFromSequence", since=11)
def concat_from_sequence(ctx, ins: list) -> list:
    """ConcatFromSequence: the element shape with a fresh (count-dependent) dim at ``axis``."""
    e = _elem(_in(ins, 0))
    if not ctx.has_attr("axis"):
        raise InferenceError(codes.SPLIT_OR_CONCAT_SEQUENCE_INVALID, "ConcatFromSequence needs an axis")
    if e.shape is None:
        return [Fact(e.dtype)]
    axis = ctx.attr("axis")
    r = len(e.shape)
    if ctx.attr("new_axis", 0):
        a = norm_axis(axis, r + 1)
        return [Fact(e.dtype, e.shape[:a] + (ctx.fresh(),) + e.shape[a:])]
    a = norm_axis(axis, r)
    return [Fact(e.dtype, e.shape[:a] + (ctx.fresh(),) + e.shape[a + 1 :])]


@register("SequenceMap", since=17)
def sequence_map(ctx, ins: list) -> list:
    """SequenceMap: the body on element facts (tensor inputs as they are); outputs are sequences."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "SequenceMap needs a body")
    args = [_elem(f) if f is not None and f.kind == "sequence" else f for f in ins]
    outs = run_body(ctx, body, "body", args)
    return [sequence_of(o) for o in outs[: ctx.num_outputs]]


# ------------------------------------------------------------------------------ optionals


@register("Optional", since=15)
def optional(ctx, ins: list) -> list:
    """Optional: wraps its input, or is empty with the element type of the ``type`` attribute."""
    x = _in(ins, 0)
    if x is not None:
        return [Fact(0, None, None, "optional", x)]
    tp = ctx.attr("type")
    if tp is None:
        raise InferenceError(codes.OPTIONAL_WITHOUT_TYPE, "Optional without an input needs the type attribute")
    return [Fact(0, None, EMPTY, "optional", type_fact(tp, lambda axis: ctx.fresh()))]


@register("OptionalHasElement", since=15)
def optional_has_element(ctx, ins: list) -> list:
    """OptionalHasElement: a bool scalar; known when the input is missing, empty or not optional."""
    x = _in(ins, 0)
    value = None
    if x is None:
        value = (0,)
    elif x.kind == "optional":
        value = (0,) if x.value == EMPTY else None
    elif x.kind == "sequence" or (x.kind == "tensor" and (x.dtype or x.shape is not None)):
        value = (1,)  # not an optional (a bare Fact() is merely unknown)
    return [tensor(TensorProto.BOOL, (), value)]


@register("OptionalGetElement", since=15)
def optional_get_element(ctx, ins: list) -> list:
    """OptionalGetElement: the element of an optional (a tensor or sequence passes through)."""
    x = _in(ins, 0)
    if x is None:
        return [Fact()]
    if x.kind != "optional":
        return [x]
    if x.value == EMPTY:
        ctx.diag("warning", codes.OPTIONAL_ALWAYS_EMPTY, "OptionalGetElement on an optional that is always empty")
    return [x.elem if x.elem is not None else Fact()]
