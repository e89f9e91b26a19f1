"""What is written loads wherever its input does: the safety net of ``optimize --bind`` and of
every annotated write (``shapeinfer MODEL -o``, :meth:`shapeinfer.document.Document.write`).

A branch of an If whose condition stays undecided (it reads a runtime value, not a shape) can be
invalid at the bound dims, e.g. ``Squeeze(x, 0)`` with ``x``'s first dim bound to 2. The engine
cannot prove that branch dead, so fold-if keeps it; onnx's strict inference (which onnxruntime
runs when it loads a model) then rejects the specialised model, though the input loaded. An
annotation can do the same without a binding: the types written into a Loop body that never
runs at the input's sizes tell onnxruntime's loader what makes a node in it invalid.

:class:`LoadBaseline` is what the input passes: onnx's strict inference in the strictest mode
the input passes (with ``check_type`` or without), and the engine's error diagnostics it has
already. :meth:`LoadBaseline.regression` says why a model written from it may fail to load
where it loads (in process, no onnxruntime needed).

:func:`make_loadable` (``optimize --bind``) falls back step by step, keeping as much of the
specialisation as loads:

1. the graph inputs whose dims ``--bind`` wrote get their input's declared types back (then
   each is specialised again alone while the model still passes);
2. besides, every ``value_info`` goes and the graph outputs get their input's declared types
   back (subgraph outputs keep only their element types);
3. else :class:`~shapeinfer.passes.OptimizeError`: nothing is written.

:func:`loadable_annotation` (an annotated write) falls back likewise: the graph inputs as
declared (under a binding), then the subgraphs as read, then the model as read.

The graph itself is never changed here: its values at the binding are the input's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import onnx
from onnx import GraphProto, TypeProto

from shapeinfer.base import isolated
from shapeinfer.inference.engine import infer
from shapeinfer.io.onnxio import stacked_outputs_from, subgraph_attrs
from shapeinfer.passes.errors import OptimizeError

#: the note of a write whose subgraphs keep the types they were read with
_UNTYPED_SUBGRAPHS = "wrote no inferred types into the subgraphs (If branches, Loop and Scan bodies)"
#: Graph inputs specialised again one at a time (each costs a strict inference) up to this many.
MAX_RETRIES = 8


@dataclass(frozen=True)
class LoadBaseline:
    """What a model passes that a model written from it must pass too.

    ``check_type``: the strictest mode of onnx's strict inference the model passes (True: with
    ``check_type``; False: only without it; None: neither, or onnx's inference did not finish;
    then ``onnx_errors`` holds what it reports without ``check_type``, None when it did not
    finish, so it checks nothing written from it). ``errors``: the ``(code, node)`` of the engine's
    error diagnostics on the model (None: the engine refused it), which a model written from it
    may have too. ``data_prop``: onnx's inference with its data propagation (sized by the
    engine's facts, :func:`long_vector`); without it for an annotation, which keeps the shape
    arithmetic that onnx's propagation misreads (an Unsqueeze of a Range's values added to a
    vector: "Invalid rank for Add broadcasting" on a model onnxruntime loads).
    """

    check_type: bool | None
    errors: frozenset[tuple[str, str]] | None
    base_dir: str | None = None
    data_prop: bool = True
    #: when the model passes neither mode: the lines of onnx's errors without ``check_type`` and
    #: without data propagation (each names its node), which a model written from it may
    #: repeat, and no other
    onnx_errors: frozenset[str] | None = None

    @classmethod
    def of(
        cls, model: onnx.ModelProto, base_dir: str | None = None, *, data_prop: bool = True, result=None
    ) -> LoadBaseline:
        """The baseline of ``model``: one engine inference (``result`` when the caller has it:
        ``infer(model, base_dir=base_dir)``'s) and one to four strict inferences (each mode
        with data propagation, then without when that fails)."""
        res = result
        if res is None:
            try:
                res = infer(model, base_dir=base_dir)
            except Exception:  # the engine refusing the input: only onnx's inference checks what is written
                res = None
        dp = data_prop and (res is None or long_vector(res) is None)
        mode = onnx_errors = None
        for ct in (True, False):
            finished, err = _strict(model, dp, ct)
            if finished and err is not None and dp:
                # onnx's data propagation fails on models onnxruntime loads ("Data for input 0
                # already exists" in a merged decoder's branch): the mode without it, if it passes
                finished, err = _strict(model, False, ct)
                if finished and err is None:
                    data_prop = False
            if not finished:
                break  # (the other mode would not finish either)
            if err is None:
                mode = ct
                break
            if not ct:  # its errors, compared without data propagation (which can take gigabytes)
                onnx_errors = frozenset(err.splitlines()) if err else None
        errors = None if res is None else frozenset(_error_keys(res))
        return cls(mode, errors, base_dir, data_prop, onnx_errors)

    def regression(self, model: onnx.ModelProto) -> str | None:
        """Why onnxruntime may refuse ``model`` where it loads the baseline's model: None, or one line.

        onnx's strict inference in the baseline's mode (a crash of it counts), then the engine's
        error diagnostics the baseline's model does not have (onnx's Python inference does not
        see outer-scope shapes in If branches, onnxruntime's loader does, and so does the
        engine). The engine runs first: its facts size onnx's data propagation
        (:func:`long_vector`) before onnx runs, so the check never materialises more than
        :data:`MAX_PROPAGATED` dims per tensor.
        """
        try:
            res = infer(model, base_dir=self.base_dir)
        except Exception as e:  # the engine refusing the model is a reason too
            dp = None if self.data_prop else False
            err = None if self.check_type is None else strict_error(model, dp, check_type=self.check_type)
            if err is None and self.errors is None:
                return None  # the engine refused the baseline's model as well
            return err if err is not None else f"{type(e).__name__}: {e}"[:300]
        if self.check_type is not None:
            dp = self.data_prop and long_vector(res) is None
            err = strict_error(model, data_prop=dp, check_type=self.check_type)
            if err is not None:
                return err
        elif self.onnx_errors is not None:
            # the baseline's model fails onnx's inference too: what is written may fail as it
            # does, node for node and message for message, but nowhere else (an If branch of
            # optimum's merged decoder whose Concat fails: onnxruntime loads the model as read,
            # and refused the types written into the branch)
            finished, err = _strict(model, False, False)
            lines = (err or "").splitlines()
            new = [line for line in lines if line not in self.onnx_errors] if finished else lines
            if new:
                return new[0][:300]
        known = self.errors or frozenset()
        for d in res.diagnostics:
            if d.severity == "error" and (d.code, d.node or "") not in known:
                where = f"{d.op_type} {d.node!r}" if d.node else (d.op_type or "")
                return f"{d.code} {where}: {d.message}"[:300]
        return None


def _error_keys(res) -> list[tuple[str, str]]:
    return [(d.code, d.node or "") for d in res.diagnostics if d.severity == "error"]


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


def strict_error(model: onnx.ModelProto, data_prop: bool | None = None, *, check_type: bool = True) -> str | None:
    """onnx's strict type and shape inference on ``model``: None if it passes, else its first line
    (or why it did not finish: :func:`_strict`).

    ``data_prop``: with onnx's data propagation or not; None: with it, unless a long Range of
    constants would be materialised by it (:data:`MAX_PROPAGATED_RANGE`;
    :meth:`LoadBaseline.regression` decides from the engine's facts instead). ``check_type``:
    onnx's check of each node's types against its schema too (onnxruntime loads some models
    that fail it: a Constant of int64 at opset 8).
    """
    err = _strict(model, data_prop, check_type)[1]
    return None if err is None else err.splitlines()[0][:300]


def _strict(model: onnx.ModelProto, data_prop: bool | None, check_type: bool) -> tuple[bool, str | None]:
    """onnx's strict inference as ``(finished, errors)``: ``errors`` None when it passes, else
    its message, one error a line (each naming its node); ``finished`` False when
    onnx's inference crashed, ran out of memory or time (``errors`` then says which), so it
    checked nothing."""
    if data_prop is None:
        data_prop = not _long_constant_range(model)
    else:
        data_prop = data_prop and not _long_constant_range(model)

    def run() -> tuple[bool, str | None]:
        added = _outer_constants_inlined(model.graph, {})  # (in place, taken back below)
        try:
            onnx.shape_inference.infer_shapes(model, check_type=check_type, strict_mode=True, data_prop=data_prop)
        except MemoryError:
            return False, "onnx's inference ran out of memory"
        except Exception as e:  # onnx raises several types (InferenceError, ValueError over 2 GB...)
            text = "\n".join(line.strip() for line in str(e).splitlines() if line.strip())
            text = text or type(e).__name__
            return "bad_alloc" not in text, text
        finally:
            for g, n in added:
                del g.initializer[len(g.initializer) - n :]
        return True, None

    return isolated.run(run, "onnx's inference", model.ByteSize())


#: the largest initializer (elements) :func:`_outer_constants_inlined` copies into a subgraph
MAX_INLINED_ELEMENTS = 4096


def _outer_constants_inlined(g: GraphProto, outer: dict[str, onnx.TensorProto]) -> list[tuple[GraphProto, int]]:
    """Copy into each subgraph below ``g`` the small initializers of its enclosing graphs
    (``outer``, then ``g``'s own) that it reads, where it defines no value of that name:
    onnxruntime's loader reads an outer-scope initializer's value when it infers a subgraph (an
    Expand to ``[2]`` in an If branch that is not taken fails its load where the operand is typed
    ``[8]``); onnx's inference reads only a graph's own. Returns ``(graph, count)`` for each
    graph given copies (appended last: the caller deletes them)."""
    scope = dict(outer)
    for t in g.initializer:
        if not t.data_location and math.prod(t.dims) <= MAX_INLINED_ELEMENTS:
            scope[t.name] = t
        else:
            scope.pop(t.name, None)
    added: list[tuple[GraphProto, int]] = []
    if not scope:
        return added
    for node in g.node:
        for _, sg in subgraph_attrs(node):
            own = {i.name for i in sg.input} | {t.name for t in sg.initializer}
            own.update(o for n in sg.node for o in n.output)
            wanted = sorted((_reads(sg) & scope.keys()) - own)
            if wanted:
                sg.initializer.extend(scope[k] for k in wanted)
                added.append((sg, len(wanted)))
            inner = {k: v for k, v in scope.items() if k not in own}
            added += _outer_constants_inlined(sg, inner)
    return added


def _reads(g: GraphProto) -> set[str]:
    """The names ``g``'s nodes read, those of the subgraphs below them included."""
    out: set[str] = set()
    for n in g.node:
        out.update(n.input)
        for _, sg in subgraph_attrs(n):
            out |= _reads(sg)
    return out


def _clear_subgraph_types(g: GraphProto, top: bool, stacked_from: int | None = None) -> None:
    """Drop ``g``'s value_info and, below the main graph, its outputs' shapes, but a Loop's or a
    Scan's scan outputs' (from ``stacked_from`` on): onnxruntime shapes the node's outputs from
    them when no iteration runs."""
    del g.value_info[:]
    if not top:
        for vi in g.output if stacked_from is None else g.output[:stacked_from]:
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
    _clear_types_below(g)


def _clear_types_below(g: GraphProto) -> None:
    """:func:`_clear_subgraph_types` of every subgraph of ``g``'s nodes (``g`` itself kept)."""
    for n in g.node:
        for _, sg in subgraph_attrs(n):
            _clear_subgraph_types(sg, False, stacked_outputs_from(n, sg))


def make_loadable(
    model: onnx.ModelProto,
    input_types: Mapping[str, TypeProto],
    output_types: Mapping[str, TypeProto],
    baseline: LoadBaseline,
    *,
    bound: bool = True,
) -> list[str]:
    """Make ``model`` (optimized under ``--bind``, or with a subgraph that never runs and would
    fail: ``bound`` False) load wherever its input does, in place: pass what the input passes
    (``baseline``, :meth:`LoadBaseline.regression`).

    ``input_types`` / ``output_types``: the input model's declared types of its graph inputs and
    outputs. Returns notes for the user (empty when the model passed as it was). Raises
    OptimizeError when even the fallbacks fail. Without a binding the first fallback is the
    subgraphs without inferred types (the main graph's kept).
    """

    first = baseline.regression(model)
    if first is None:
        return []
    if not bound:
        return _loadable_unbound(model, output_types, baseline, first)
    notes: list[str] = []
    inputs = [vi for vi in model.graph.input if vi.name in input_types and vi.type != input_types[vi.name]]
    bound_types = {vi.name: TypeProto.FromString(vi.type.SerializeToString()) for vi in inputs}
    for vi in inputs:
        vi.type.CopyFrom(input_types[vi.name])
    if baseline.regression(model) is None:
        kept = []
        if len(inputs) > 1 and len(inputs) <= MAX_RETRIES:
            for vi in inputs:
                vi.type.CopyFrom(bound_types[vi.name])
                if baseline.regression(model) is None:
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
    if baseline.regression(model) is None:
        notes.append(
            "--bind: wrote no value_info and kept the declared dims of the graph inputs and outputs: "
            f"the bound dims make part of the graph invalid ({first})"
        )
        return notes
    raise OptimizeError(
        f"--bind: the optimized model fails inference ({first}) where the input "
        "does not; nothing written (the binding may make a kept part of the graph invalid)"
    )


def _loadable_unbound(
    model: onnx.ModelProto, output_types: Mapping[str, TypeProto], baseline: LoadBaseline, first: str
) -> list[str]:
    """:func:`make_loadable` without a binding: the subgraphs without inferred types; else no
    value_info and the graph outputs as the input declares them; else OptimizeError."""
    why = f"with them, the model fails the load check ({first})"
    _clear_types_below(model.graph)
    if baseline.regression(model) is None:
        return [f"{_UNTYPED_SUBGRAPHS}: {why}"]
    _clear_subgraph_types(model.graph, True)
    for vi in model.graph.output:
        if vi.name in output_types:
            vi.type.CopyFrom(output_types[vi.name])
    if baseline.regression(model) is None:
        return [f"wrote no value_info and kept the declared types of the graph outputs: {why}"]
    raise OptimizeError(f"the optimized model fails inference ({first}) where the input does not; nothing written")


def loadable_annotation(
    original: onnx.ModelProto,
    annotated: onnx.ModelProto,
    tail: bytes = b"",
    *,
    base_dir: str | None = None,
) -> tuple[bytes, list[str]]:
    """Make ``annotated`` (``original`` with inferred types written, and the graph inputs
    specialised under a binding) load wherever ``original`` does, in place: pass the load check
    (:meth:`LoadBaseline.regression`, with ``original`` as the baseline, without onnx's data
    propagation).

    ``tail``: the main graph's new ``value_info`` entries, serialised and not merged yet
    (:func:`shapeinfer.io.annotate.annotate_for_writing`). What does not pass what ``original``
    passes falls back, one step at a time: the graph inputs as ``original`` declares them (under
    a binding); else every subgraph as ``original`` has it; else both; else the whole model as
    ``original`` has it (no inferred type written). Returns the tail to write and notes for
    the user (empty when the annotation passed as it was).
    """

    def with_tail() -> onnx.ModelProto:
        if not tail:
            return annotated
        whole = onnx.ModelProto()
        whole.CopyFrom(annotated)
        whole.graph.MergeFromString(tail)
        return whole

    baseline = LoadBaseline.of(original, base_dir, data_prop=False)
    first = baseline.regression(with_tail())
    if first is None:
        return tail, []
    declared = {vi.name: vi.type for vi in original.graph.input}
    bound = {vi.name: TypeProto.FromString(vi.type.SerializeToString()) for vi in annotated.graph.input}
    bound = {k: tp for k, tp in bound.items() if k in declared and tp != declared[k]}
    pairs = [(n, m) for n, m in zip(annotated.graph.node, original.graph.node) if subgraph_attrs(n)]
    typed = [onnx.NodeProto.FromString(n.SerializeToString()) for n, _ in pairs]

    def attempt(inputs_declared: bool, subgraphs_as_read: bool) -> bool:
        for vi in annotated.graph.input:
            if vi.name in bound:
                vi.type.CopyFrom(declared[vi.name] if inputs_declared else bound[vi.name])
        for (n, m), t in zip(pairs, typed):
            n.CopyFrom(m if subgraphs_as_read else t)
        return baseline.regression(with_tail()) is None

    why = f"with them, the model fails the load check ({first})"
    kept = f"kept the declared dims of graph input{'s' if len(bound) > 1 else ''} {', '.join(bound)}"
    if bound and attempt(True, False):
        return tail, [f"{kept}: {why.replace('them', 'the bound dims')}"]
    if pairs and attempt(False, True):
        return tail, [f"{_UNTYPED_SUBGRAPHS}: {why}"]
    if bound and pairs and attempt(True, True):
        return tail, [f"{kept} and {_UNTYPED_SUBGRAPHS}: {why}"]
    annotated.CopyFrom(original)
    return b"", [f"wrote the model as read, with no inferred types: {why}"]


__all__ = [
    "MAX_PROPAGATED",
    "MAX_RETRIES",
    "LoadBaseline",
    "loadable_annotation",
    "long_vector",
    "make_loadable",
    "strict_error",
]
