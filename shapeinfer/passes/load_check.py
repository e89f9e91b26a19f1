"""The safety net of ``optimize --bind``: what it writes loads wherever its input does.

A branch of an If whose condition stays undecided (it reads a runtime value, not a shape) can be
invalid at the bound dims, e.g. ``Squeeze(x, 0)`` with ``x``'s first dim bound to 2. The engine
cannot prove that branch dead, so fold-if keeps it; onnx's strict inference (which onnxruntime
runs when it loads a model) then rejects the specialised model, though the input loaded.

:func:`make_loadable` checks the optimized model with onnx's strict inference and this engine's
error diagnostics (:func:`load_error`; in process, no onnxruntime needed) when the input passes
them, and falls back step by step, keeping as much of
the specialisation as loads:

1. the graph inputs whose dims ``--bind`` wrote get their input's declared types back (then
   each is specialised again alone while the model still passes);
2. besides, every ``value_info`` goes and the graph outputs get their input's declared types
   back (subgraph outputs keep only their element types);
3. else :class:`~shapeinfer.passes.OptimizeError`: nothing is written.

The graph itself is never changed here: its values at the binding are the input's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import onnx
from onnx import GraphProto, TypeProto

from shapeinfer.inference.engine import infer
from shapeinfer.io.onnxio import subgraph_attrs
from shapeinfer.passes.errors import OptimizeError

#: Graph inputs specialised again one at a time (each costs a strict inference) up to this many.
MAX_RETRIES = 8


def load_error(model: onnx.ModelProto, base_dir: str | None = None) -> str | None:
    """Why onnxruntime may refuse ``model`` at load: None, or one line.

    onnx's strict inference (:func:`strict_error`), then this engine's own errors (an ``error``
    diagnostic, e.g. a Squeeze of a dim that is not 1): onnx's Python inference does not see
    outer-scope shapes in If branches, onnxruntime's loader does, and so does the engine.
    The engine runs first: its facts size onnx's data propagation (:func:`long_vector`) before
    onnx runs, so the check never materialises more than :data:`MAX_PROPAGATED` dims per tensor.
    """

    try:
        res = infer(model, base_dir=base_dir)
    except Exception as e:  # the engine refusing the model is a reason too
        err = strict_error(model)
        return err if err is not None else f"{type(e).__name__}: {e}"[:300]
    err = strict_error(model, data_prop=long_vector(res) is None)
    if err is not None:
        return err
    for d in res.diagnostics:
        if d.severity == "error":
            where = f"{d.op_type} {d.node!r}" if d.node else (d.op_type or "")
            return f"{d.code} {where}: {d.message}"[:300]
    return None


#: onnx's data propagation writes every element of a tensor of rank 0 or 1 that reaches an op
#: it propagates through (Add, Concat, Gather, ...) as a dim of a TensorShapeProto, whether
#: its values are known or not: an Add of a 10**8-element vector took 32 s and 5.4 GB before
#: failing. A model with a longer vector (by the engine's facts) is checked without it.
MAX_PROPAGATED = 1 << 16


def long_vector(res) -> str | None:
    """The name of a tensor of rank 0 or 1 with more than :data:`MAX_PROPAGATED` elements in
    any graph of the inferred model ``res`` (:class:`shapeinfer.inference.engine.Result`), or None."""
    for facts in [res.facts, *res.graph_facts.values()]:
        for name, f in facts.items():
            shape = f.shape
            if shape is not None and len(shape) == 1 and type(shape[0]) is int and shape[0] > MAX_PROPAGATED:
                return name
    return None


#: onnx's data propagation materialises the values of a Range of constants as shape data for
#: the ops that read it (a 2**31-element one took 5 GB and 40 s before failing): a model with a
#: longer one is checked without data propagation.
MAX_PROPAGATED_RANGE = 1 << 16


def _long_constant_range(model: onnx.ModelProto) -> bool:
    """True when a main-graph Range has constant scalar inputs (initializers or Constant nodes)
    giving more than :data:`MAX_PROPAGATED_RANGE` elements."""
    ranges = [n for n in model.graph.node if n.op_type == "Range" and n.domain in ("", "ai.onnx")]
    if not ranges:
        return False
    consts: dict[str, onnx.TensorProto] = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output and n.attribute and n.attribute[0].name == "value":
            consts[n.output[0]] = n.attribute[0].t
    for n in ranges:
        ts = [consts.get(x) for x in n.input]
        if len(ts) != 3 or any(t is None or t.data_location or math.prod(t.dims) != 1 for t in ts):
            continue
        try:
            start, limit, delta = (onnx.numpy_helper.to_array(t).item() for t in ts)
            count = math.ceil((limit - start) / delta)
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            continue
        if count > MAX_PROPAGATED_RANGE:
            return True
    return False


def strict_error(model: onnx.ModelProto, data_prop: bool | None = None) -> str | None:
    """onnx's strict type and shape inference on ``model``: None if it passes, else its first line.

    ``data_prop``: with onnx's data propagation or not; None: with it, unless a long Range of
    constants would be materialised by it (:data:`MAX_PROPAGATED_RANGE`; :func:`load_error`
    decides from the engine's facts instead).
    """
    if data_prop is None:
        data_prop = not _long_constant_range(model)
    else:
        data_prop = data_prop and not _long_constant_range(model)
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=data_prop)
    except Exception as e:  # onnx raises several types (InferenceError, ValueError over 2 GB...)
        text = str(e).strip().splitlines()
        return (text[0] if text else type(e).__name__)[:300]
    return None


def _clear_subgraph_types(g: GraphProto, top: bool) -> None:
    del g.value_info[:]
    if not top:
        for vi in g.output:
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
    for n in g.node:
        for _, sg in subgraph_attrs(n):
            _clear_subgraph_types(sg, False)


def make_loadable(
    model: onnx.ModelProto,
    input_types: Mapping[str, TypeProto],
    output_types: Mapping[str, TypeProto],
    base_dir: str | None = None,
) -> list[str]:
    """Make ``model`` (optimized under ``--bind``) pass onnx's strict inference, in place.

    ``input_types`` / ``output_types``: the input model's declared types of its graph inputs and
    outputs (the input model passed strict inference). Returns notes for the user (empty when
    the model passed as it was). Raises OptimizeError when even the fallbacks fail.
    """

    first = load_error(model, base_dir)
    if first is None:
        return []
    notes: list[str] = []
    inputs = [vi for vi in model.graph.input if vi.name in input_types and vi.type != input_types[vi.name]]
    bound = {vi.name: TypeProto.FromString(vi.type.SerializeToString()) for vi in inputs}
    for vi in inputs:
        vi.type.CopyFrom(input_types[vi.name])
    if load_error(model, base_dir) is None:
        kept = []
        if len(inputs) > 1 and len(inputs) <= MAX_RETRIES:
            for vi in inputs:
                vi.type.CopyFrom(bound[vi.name])
                if load_error(model, base_dir) is None:
                    kept.append(vi.name)
                else:
                    vi.type.CopyFrom(input_types[vi.name])
        undone = [vi.name for vi in inputs if vi.name not in kept]
        notes.append(
            f"--bind: kept the declared dims of graph input{'s' if len(undone) > 1 else ''} {', '.join(undone)}: "
            f"the bound dims make a part of the graph that cannot be proved dead invalid ({first}; "
            "e.g. an If branch on a runtime condition)"
        )
        return notes
    _clear_subgraph_types(model.graph, True)
    for vi in model.graph.output:
        if vi.name in output_types:
            vi.type.CopyFrom(output_types[vi.name])
    if load_error(model, base_dir) is None:
        notes.append(
            "--bind: wrote no value_info and kept the declared dims of the graph inputs and outputs: "
            f"the bound dims make part of the graph invalid ({first})"
        )
        return notes
    raise OptimizeError(
        f"--bind: the optimized model fails inference ({first}) where the input "
        "passes it; nothing written (the binding may make a kept part of the graph invalid)"
    )


__all__ = ["MAX_PROPAGATED", "MAX_RETRIES", "load_error", "long_vector", "make_loadable", "strict_error"]
