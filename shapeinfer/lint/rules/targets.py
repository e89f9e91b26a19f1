"""Target rules: what OpenVINO (P0xx), oneDNN Graph (P1xx) and onnxruntime (P2xx) accept.

They run only under ``--target openvino`` / ``onednn`` / ``onnxruntime`` (or a profile that
sets the target). An error means the runtime refuses the model (checked against the runtime by
``benchmarks/lint_vs_runtime.py``); a warning means it runs the model on a fallback or slower
path; info is for review. Which ops a runtime loads is read from ``runtime_ops.json``
(:mod:`~shapeinfer.base.runtimes`), generated from OpenVINO's ONNX frontend and onnxruntime's
CPU kernels; the Reshape rules follow OpenVINO opset1 Reshape and oneDNN Graph
StaticReshape/DynamicReshape.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import onnx
from onnx import TensorProto

from shapeinfer.base import runtimes
from shapeinfer.inference.engine import infer
from shapeinfer.inference.op_registry import lookup
from shapeinfer.inference.ops.common import dim_values
from shapeinfer.io.onnxio import graphs_within, subgraph_attrs
from shapeinfer.lint.context import LintContext, NodeRef, dtype_name
from shapeinfer.lint.registry import check
from shapeinfer.lint.rules.reshape import _reshapes, _version, constant_target_for, runtime_target

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


@check("P001")
def openvino_non_numeric(ctx: LintContext) -> None:
    for ref, dtype in _data_types(ctx):
        if dtype in NON_NUMERIC:
            ctx.report(
                "P001",
                f"this Reshape's data is {dtype_name(dtype)}, outside the numeric T of OpenVINO's Reshape-1 spec "
                "(OpenVINO's CPU plugin runs it)",
                ref,
                tensor=ref.node.input[0],
            )


@check("P002")
def openvino_special_zero(ctx: LintContext) -> None:
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


@check("P101")
def onednn_data_type(ctx: LintContext) -> None:
    for ref, dtype in _data_types(ctx):
        if dtype not in ONEDNN_DATA:
            ctx.report(
                "P101",
                f"oneDNN Graph Reshape takes f32/f16/bf16 data; this Reshape's data is {dtype_name(dtype)}: "
                "it falls back to the framework's implementation outside oneDNN's partitions",
                ref,
                tensor=ref.node.input[0],
            )


@check("P102")
def onednn_int32_target(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        if _version(ctx, ref) < 5 or not runtime_target(ref):
            continue  # a constant target: StaticReshape's s64 shape attribute holds it
        bad = [t for t in _target_values(ctx, ref) or () if type(t) is int and not INT32_MIN <= t <= INT32_MAX]
        if bad:
            ctx.report("P102", f"target value {bad[0]} does not fit the int32 shape oneDNN Graph takes", ref)


@check("P103")
def onednn_dynamic_reshape(ctx: LintContext) -> None:
    for ref in _reshapes(ctx):
        if _version(ctx, ref) < 5 or not runtime_target(ref):
            continue
        target = constant_target_for(ctx, ref)
        if target is not None:
            ctx.report(
                "P103",
                f"runtime target {ref.node.input[1]!r} makes this a DynamicReshape (the slower path: the target "
                f"is read at run time, not compiled in); it is always {target}: "
                "`shapeinfer optimize` (canonicalize-reshape) makes it a StaticReshape",
                ref,
                fix=ref.graph == "main",
            )
        else:
            ctx.report(
                "P103",
                f"runtime target {ref.node.input[1]!r} makes this a DynamicReshape (the slower path: the target "
                "is read at run time, not compiled in; no constant target spells it)",
                ref,
                fix=None,
            )


def _op_name(domain: str, op: str) -> str:
    return f"{domain}.{op}" if domain else op


def _unloadable(ctx: LintContext, runtime: str, skip_domains: tuple[str, ...] = ()) -> Iterator[tuple[NodeRef, str]]:
    """``(node, why)`` for each node ``runtime`` has no implementation for (``skip_domains``
    aside), per :func:`runtimes.loads`. A call of a model-local function is one for OpenVINO,
    whose ONNX frontend does not expand them (2026.4: "No conversion rule found for operations:
    DOMAIN.NAME"); onnxruntime inlines them."""
    for ref in ctx.nodes():
        n = ref.node
        domain = "" if n.domain == "ai.onnx" else n.domain
        if domain in skip_domains:
            continue
        if (n.domain, n.op_type) in ctx.functions:
            if runtime == "openvino":
                yield ref, f"the model-local function {_op_name(domain, n.op_type)} (not expanded by OpenVINO)"
            continue
        v = ctx.opset(domain)
        ok = runtimes.loads(runtime, domain, n.op_type, v)
        if ok is None:
            yield ref, f"no op of domain {domain!r}"
        elif not ok:
            yield ref, f"{_op_name(domain, n.op_type)} at opset {v}"


@check("P003")
def openvino_conversion_rule(ctx: LintContext) -> None:
    for ref, what in _unloadable(ctx, "openvino", skip_domains=("org.openvinotoolkit",)):
        ctx.report(
            "P003",
            f"OpenVINO {runtimes.version('openvino')}'s ONNX frontend has no conversion rule for {what}: "
            "read_model refuses the model",
            ref,
        )


@check("P004")
def openvino_non_tensor(ctx: LintContext) -> None:
    g = ctx.model.graph
    for where, values in (("input", g.input), ("output", g.output), ("value_info", g.value_info)):
        for v in values:
            kind = v.type.WhichOneof("value") if v.HasField("type") else None
            if kind is not None and kind != "tensor_type":
                ctx.report(
                    "P004",
                    f"{where} {v.name!r} is a {kind.replace('_type', '')}: OpenVINO reads only tensors here "
                    "(read_model refuses the model)",
                    tensor=v.name,
                    graph="main",
                )


@check("P005")
def openvino_loop_pass_through(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        if ref.node.op_type != "Loop" or ref.node.domain not in ("", "ai.onnx"):
            continue
        body = next((g for name, g in subgraph_attrs(ref.node) if name == "body"), None)
        if body is None:
            continue
        inputs = {i.name for i in body.input}
        passed = [o.name for o in body.output if o.name in inputs]
        if passed:
            ctx.report(
                "P005",
                f"the Loop body returns its input{'s' if len(passed) > 1 else ''} "
                f"{', '.join(repr(n) for n in passed)} unchanged: OpenVINO {runtimes.version('openvino')}'s "
                "ONNX frontend refuses such a loop (give the output its own name through an Identity)",
                ref,
            )


#: The 8-bit element types of a quantized tensor, the ones OpenVINO's low-precision passes take.
EIGHT_BIT = (TensorProto.UINT8, TensorProto.INT8)


def _qdq_source(tensor: str, made: dict[str, NodeRef], readers: dict[str, int]) -> str | None:
    """The tensor ``x`` when ``tensor`` is ``DequantizeLinear(QuantizeLinear(x))`` with one 8-bit
    per-tensor (rank-0 scale) pair whose two outputs each have exactly one reader (``readers``
    counts graph outputs and reads from subgraphs too); None otherwise."""
    dq = made.get(tensor)
    if dq is None or dq.node.op_type != "DequantizeLinear" or dq.node.domain not in ("", "ai.onnx"):
        return None
    q = made.get(dq.node.input[0])
    if q is None or q.node.op_type != "QuantizeLinear" or q.node.domain not in ("", "ai.onnx"):
        return None
    if readers.get(tensor) != 1 or readers.get(dq.node.input[0]) != 1:
        return None
    low = q.output_fact(0)
    if low is None or low.dtype not in EIGHT_BIT:
        return None
    for ref in (q, dq):
        scale = ref.input_fact(1)
        if scale is None or scale.rank != 0:
            return None
    return q.node.input[0]


@check("P006")
def openvino_qdq_matmul_scale(ctx: LintContext) -> None:
    graphs = ctx.graphs()
    main = graphs[0][2]
    readers: dict[str, int] = {}  # reads of each name: main-graph nodes and outputs, any subgraph's nodes
    for _, _, refs in graphs:
        for ref in refs:
            for i in ref.node.input:
                readers[i] = readers.get(i, 0) + 1
    for o in ctx.model.graph.output:
        readers[o.name] = readers.get(o.name, 0) + 1
    made = {o: ref for ref in main for o in ref.node.output if o}
    quantized = Counter(ref.node.input[0] for ref in main if ref.node.op_type == "QuantizeLinear" and ref.node.input)
    for ref in main:
        n = ref.node
        if n.op_type != "Mul" or n.domain not in ("", "ai.onnx") or len(n.input) != 2:
            continue
        sources = [_qdq_source(t, made, readers) for t in n.input]
        if None in sources:
            continue
        for x, c in (sources, sources[::-1]):
            mm = made.get(x)
            if mm is None or mm.node.op_type != "MatMul" or mm.node.domain not in ("", "ai.onnx"):
                continue
            # the MatMul result has one QuantizeLinear (no pair for OpenVINO to merge) and the
            # constant is read by its QuantizeLinear alone
            if quantized[x] != 1 or not ref.is_constant(c) or readers.get(c) != 1:
                continue
            ctx.report(
                "P006",
                f"this Mul multiplies the quantized result of MatMul {mm.node.name or x!r} by the quantized "
                f"constant {c!r}, which nothing else reads: OpenVINO {runtimes.version('openvino')}'s CPU "
                "plugin fails on it in compile_model (MultiplyPartialTransformation: \"index '0' out of "
                'range"); keep the constant out of the quantization',
                ref,
            )
            break


@check("P201")
def onnxruntime_kernel(ctx: LintContext) -> None:
    for ref, what in _unloadable(ctx, "onnxruntime"):
        ctx.report(
            "P201",
            f"onnxruntime {runtimes.version('onnxruntime')} (CPU) has no kernel for {what}: "
            "InferenceSession refuses the model",
            ref,
        )


def _batch_transpose(perm: Sequence[int]) -> bool:
    """True for the perms com.microsoft FusedMatMul expresses with ``transBatch`` (alone: the
    leading dim moved to just before the last, ``[1, ..., r-2, 0, r-1]``; with ``trans``: past
    it, ``[1, ..., r-2, r-1, 0]``), rank 3 or more: the perms onnxruntime's
    MatmulTransposeFusion can fold into the MatMul, and the ones measured to crash (P202)."""
    r = len(perm)
    middle = list(range(1, r - 1))
    return r >= 3 and list(perm) in (middle + [0, r - 1], middle + [r - 1, 0])


#: What a Transpose may read for P202: ops whose float16 result onnxruntime's CPU provider keeps
#: in float16 (measured: a Transpose after each of them crashes, after Relu, Sigmoid, Neg, Abs,
#: Sqrt, Exp, Tanh, Floor, Softplus, Add, Mul, Pad, Tile, Where, Softmax or MatMul it loads).
FP16_KEPT = frozenset(
    {"Reshape", "Squeeze", "Unsqueeze", "Slice", "Concat", "Gather", "Expand", "Split", "LayerNormalization", "Cast"}
)


def _through_identities(name: str, producer) -> tuple[str, NodeRef | None]:
    """Where ``name`` comes from through default-domain Identities (which onnxruntime and
    OpenVINO's frontend drop): the first name no Identity makes, and its producer
    (``producer(name)``: a NodeRef, None for a graph input, an initializer or an outer value)."""
    ref = producer(name)
    while ref is not None and ref.node.op_type == "Identity" and ref.node.domain in ("", "ai.onnx"):
        name = ref.node.input[0]
        ref = producer(name)
    return name, ref


@check("P202")
def onnxruntime_fp16_batch_transpose_matmul(ctx: LintContext) -> None:
    main = ctx.graphs()[0][2]
    readers: dict[str, list[NodeRef]] = {}
    for ref in main:
        for x in ref.node.input:
            readers.setdefault(x, []).append(ref)
    inputs = {i.name for i in ctx.model.graph.input} - {t.name for t in ctx.model.graph.initializer}

    def made(name: str) -> NodeRef | None:
        return ctx.producer("main", name)

    def source(name: str) -> NodeRef | str | None:
        """The node that makes ``name`` through Identities, or the name when it is a graph input
        that is not an initializer, else None."""
        name, ref = _through_identities(name, made)
        return ref if ref is not None else (name if name in inputs else None)

    for ref in main:
        n = ref.node
        if n.op_type != "MatMul" or n.domain not in ("", "ai.onnx") or len(n.input) != 2:
            continue
        facts = [ref.input_fact(0), ref.input_fact(1)]
        if any(f is None or f.kind != "tensor" or f.dtype != TensorProto.FLOAT16 for f in facts):
            continue
        after = {r.node.op_type for r in readers.get(n.output[0], ()) if r.node.domain in ("", "ai.onnx")}
        if after & {"Mul", "Div"}:
            continue  # MatMulScaleFusion may take the MatMul first
        if "Add" in after and all(f.is_static for f in facts):
            continue  # MatMulAddFusion makes it a Gemm
        for k in (0, 1):
            t = made(n.input[k])
            other, of = n.input[1 - k], facts[1 - k]
            if t is None or t.node.op_type != "Transpose" or t.node.domain not in ("", "ai.onnx"):
                continue
            perm = t.attr("perm")
            if perm is None or not _batch_transpose(perm):
                continue
            if not ref.is_constant(other) or of.shape is None or len(of.shape) > 2:
                continue
            src = source(t.node.input[0])
            if src is None or (not isinstance(src, str) and src.node.op_type not in FP16_KEPT):
                continue
            ctx.report(
                "P202",
                f"this float16 MatMul reads Transpose {t.node.name or n.input[k]!r} (perm {list(perm)}) and the "
                f"float16 constant {other!r} of rank {len(of.shape)}: onnxruntime "
                f"{runtimes.version('onnxruntime')} (CPU) crashes creating the session (segmentation fault in "
                "its graph optimizations); keep this MatMul in float32, or give the constant a leading 1 ([1, K, N])",
                ref,
            )
            break


#: (domain, op) of the convolutions onnxruntime pads through ConvAttributes (P203)
_ORT_SAME_PAD_CONVS = {("", "Conv"), ("", "ConvInteger"), ("", "QLinearConv"), ("com.microsoft", "FusedConv")}


@check("P203")
def onnxruntime_conv_dilated_same(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        if (n.domain if n.domain != "ai.onnx" else "", n.op_type) not in _ORT_SAME_PAD_CONVS:
            continue
        pad = ref.attr("auto_pad", b"NOTSET")
        pad = pad.decode() if isinstance(pad, bytes) else str(pad)
        dilations = ref.attr("dilations") or []
        if pad in ("SAME_UPPER", "SAME_LOWER") and any(d != 1 for d in dilations):
            ctx.report(
                "P203",
                f"{n.op_type} with dilations {list(dilations)} and auto_pad {pad}: onnxruntime "
                f'{runtimes.version("onnxruntime")} (CPU) loads it and fails every run ("Dilation not supported '
                'for AutoPadType::SAME_UPPER or AutoPadType::SAME_LOWER"); write the pads out (see the rule)',
                ref,
            )


@check("P204")
def onnxruntime_convtranspose_output_padding(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "ConvTranspose" or n.domain not in ("", "ai.onnx"):
            continue
        padding = list(ref.attr("output_padding") or [])
        strides = list(ref.attr("strides") or [1] * len(padding))
        over = [i for i, (p, s) in enumerate(zip(padding, strides)) if p >= s]
        if over:
            ctx.report(
                "P204",
                f"output_padding {padding} with strides {strides}: onnxruntime "
                f"{runtimes.version('onnxruntime')} (CPU) loads it and fails every run (an output padding "
                f"must be below its stride; axis {', '.join(map(str, over))} is not)",
                ref,
            )


@check("P007")
def openvino_if_condition_rank(ctx: LintContext) -> None:
    from shapeinfer.passes.scalar_if_condition import condition_refused

    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "If" or n.domain not in ("", "ai.onnx") or not n.input or not n.input[0]:
            continue
        f = ref.input_fact(0)
        if not condition_refused(f):
            continue
        ctx.report(
            "P007",
            f"the If condition {n.input[0]!r} has rank {len(f.shape)}: OpenVINO {runtimes.version('openvino')} "
            "refuses an If whose condition is not a scalar or of rank 1 (read_model); reshape it to a scalar",
            ref,
            fix=ref.graph == "main",
        )


def _rank_unknown(f) -> bool:
    return f is not None and f.kind == "tensor" and f.shape is None


def _known_rank(f) -> bool:
    return f is not None and f.kind == "tensor" and f.shape is not None


@contextmanager
def _undeclared(model: onnx.ModelProto) -> Iterator[onnx.ModelProto]:
    """``model`` without the shapes it declares for values other than graph inputs, for the
    time of the ``with`` block: no ``value_info``, no shape on any graph's outputs (the main
    graph's and every subgraph's, recursively). Graph inputs keep theirs: they are what
    OpenVINO's ONNX frontend reads. Done in place (a copy would double the memory of a model with
    inline weights) and undone on leaving the block, to the same bytes."""

    saved = []
    try:
        for g in graphs_within(model.graph):
            infos = [_copy_proto(v) for v in g.value_info]
            shapes = [_copy_proto(o.type) if o.HasField("type") else None for o in g.output]
            saved.append((g, infos, shapes))
            del g.value_info[:]
            for o in g.output:
                if o.type.HasField("tensor_type"):
                    o.type.tensor_type.ClearField("shape")
        yield model
    finally:
        for g, infos, shapes in saved:
            del g.value_info[:]
            g.value_info.extend(infos)
            for o, t in zip(g.output, shapes):
                if t is None:
                    o.ClearField("type")
                else:
                    o.type.CopyFrom(t)


def _copy_proto(p):
    """A copy of the protobuf message ``p``."""
    out = type(p)()
    out.CopyFrom(p)
    return out


def _openvino_facts(ctx: LintContext) -> dict:
    """The main graph's facts as OpenVINO's ONNX frontend can know them: it reads the shapes of
    the graph inputs and nothing else the model declares (``value_info`` and the outputs' types,
    of the main graph and of If branches, are not read: core/graph.cpp makes Parameters of the
    graph inputs only, and op/if.cpp gives an If the shapes its branch bodies infer), so a rank
    inference took from a declaration (an info G013) is unknown to it. The facts of inference
    run again on the model without those declarations when the first run assumed any (else
    the first run's)."""
    main = ctx.result.graph_facts.get("main", {})
    if not any(d.code == "G013" for d in ctx.result.diagnostics):
        return main

    with _undeclared(ctx.model) as bare:
        return infer(bare, base_dir=ctx.base_dir).graph_facts.get("main", {})


@check("P008")
def openvino_dynamic_rank(ctx: LintContext) -> None:
    from shapeinfer.ir.graph import GraphModel
    from shapeinfer.passes.empty_branch_constants import empty_branch_outputs

    main = None  # the main graph as the passes see it, made at the first If
    known = None  # the main graph's facts as OpenVINO knows them (see _openvino_facts)
    for ref in ctx.nodes():
        if ref.graph != "main" or ref.node.domain not in ("", "ai.onnx"):
            continue
        n = ref.node
        if n.op_type == "If":
            if main is None:
                main = GraphModel(ctx.model, ctx.base_dir).graph
            facts = [ref.output_fact(k) for k in range(len(n.output))]
            found = empty_branch_outputs(main.nodes[ref.index], facts, main)
            if found:
                k = found[0][1]
                ctx.report(
                    "P008",
                    f"one branch gives {n.output[k]!r} as a constant of no elements, which OpenVINO "
                    f"{runtimes.version('openvino')}'s ONNX frontend makes rank 0, the other branch a tensor of rank "
                    f"{len(ref.output_fact(k).shape)}: the If's rank is dynamic and the CPU plugin refuses it "
                    "(compile_model); give the constant at least one element (lint --fix computes it with "
                    "ConstantOfShape)",
                    ref,
                )
                continue
        if known is None:
            known = _openvino_facts(ctx)
        lost = [o for o in n.output if o and _rank_unknown(known.get(o))]
        if not lost or any(_rank_unknown(known.get(x)) or known.get(x) is None for x in n.input if x):
            continue
        if lookup(n.domain, n.op_type, _version(ctx, ref)) is None:
            continue
        declared = _known_rank(ref.output_fact(list(n.output).index(lost[0])))
        why = (
            "is known only from what the model declares (value_info or an If branch's outputs), which "
            "OpenVINO's ONNX frontend does not read: to OpenVINO it is"
            if declared
            else "is"
        )
        ctx.report(
            "P008",
            f"the rank of {lost[0]!r} {why} only known at run time: OpenVINO {runtimes.version('openvino')}'s CPU "
            "plugin compiles static ranks only (compile_model, or read_model for a Conv or an If, refuses "
            "the model); give the shape a static length",
            ref,
            fix=None,
        )


@check("P009")
def openvino_gqa_softcap(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "GroupQueryAttention" or n.domain != "com.microsoft":
            continue
        softcap = ref.attr("softcap", 0.0)
        if softcap:
            ctx.report(
                "P009",
                f"softcap={softcap:g}: OpenVINO {runtimes.version('openvino')}'s ONNX frontend converts "
                "GroupQueryAttention only without a softcap (read_model refuses the model)",
                ref,
            )


@check("P010")
def openvino_attention_without_bias(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "Attention" or n.domain != "com.microsoft":
            continue
        if len(n.input) < 3 or not n.input[2]:
            ctx.report(
                "P010",
                f"this Attention has no bias input: OpenVINO {runtimes.version('openvino')}'s ONNX frontend "
                "reads one regardless, and the CPU plugin fails in compile_model (give it a zero bias)",
                ref,
            )


@check("P011")
def openvino_gather_block_quantized_computed(ctx: LintContext) -> None:
    made = None
    for ref in ctx.nodes():
        n = ref.node
        if n.op_type != "GatherBlockQuantized" or n.domain != "com.microsoft":
            continue
        if made is None:  # every graph's: an operand may come from an enclosing graph
            made = {o: r for r in ctx.nodes() for o in r.node.output if o}
        for k, what in ((0, "table (data)"), (2, "scales"), (3, "zero points")):
            # OpenVINO's frontend sees an initializer or a Constant node's output, through Identities
            if k < len(n.input) and n.input[k] and not ref.is_constant(_through_identities(n.input[k], made.get)[0]):
                ctx.report(
                    "P011",
                    f"its {what} {n.input[k]!r} is computed, not stored: OpenVINO "
                    f"{runtimes.version('openvino')}'s ONNX frontend converts GatherBlockQuantized only "
                    "with constant operands (read_model refuses the model); store it as an initializer",
                    ref,
                )
                break
