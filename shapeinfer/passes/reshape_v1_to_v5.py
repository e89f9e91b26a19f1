"""reshape-v1-to-v5: Reshape-1 (target in the ``shape`` attribute) becomes Reshape-5 form.

Contract:

- Every default-domain Reshape whose version in force is below 5 — in the main graph, in
  If/Loop/Scan bodies at any depth, and in model-local functions — gets its ``shape``
  attribute as an int64 second input: an initializer of the graph it is in (of the main graph
  for subgraphs before IR 4, where subgraph initializers must be inputs). A model at opset 4
  whose functions import its opset has them inlined first (a function holds no initializers,
  and its Constant takes int64 only from opset 9); in a function that imports another opset
  than the model's, a float Constant cast by Cast-1. ``shape`` and ``consumed_inputs`` go.
  The passes that run afterwards keep to the same rule for the constants they add inside
  subgraphs before IR 4 (:mod:`shapeinfer.passes._subgraphs`: a Constant node where the
  opset's Constant takes the type, else an initializer of the main graph).
  Reshape-1's ``0`` copies the input dim exactly as Reshape-5 with ``allowzero`` 0 does, so
  the values are the same.
- The default-domain opset import is raised to 5 (only Reshape changed between 4 and 5).
  A model below opset 4 is first lifted to 4 with ``onnx.version_converter`` (Concat-4,
  Split-2, Pad-2, LpPool-2, GlobalLpPool-2, GRU-3... need adapting) with shapeinfer's shapes
  written into ``value_info`` first: the converter runs its own shape inference, which
  knows nothing of Reshape-1, and some adapters need input shapes. The converter drops
  model-local functions, so a model that needs it has its functions inlined first.
- A model already at opset 5 or more, with no function importing an older one, is unchanged.

:func:`lift_opset` lifts a model further (``--target-opset``) the same way.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.inliner
from onnx import version_converter

from shapeinfer.base import isolated, runtimes
from shapeinfer.base.ir_version import initializers_are_inputs
from shapeinfer.io.annotate import annotate
from shapeinfer.io.onnxio import graphs_within
from shapeinfer.ir.graph import Constant, GraphModel, append_input
from shapeinfer.ir.queries import default_opset, function_opset, subgraphs
from shapeinfer.passes import fold_shapes
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.passes.errors import OptimizeError


def _annotated(model: onnx.ModelProto, ctx) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return annotate(ctx.infer(m))


def _run_converter(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
    """onnx's version converter on ``model``, run in a child process (:mod:`shapeinfer.base.isolated`):
    it aborts the process on some models that cannot run (a negative size reaching a
    ``std::clamp``). RuntimeError with the converter's message (its type's name when it has
    none), or saying it crashed."""

    def convert() -> bytes:
        try:
            return b"M" + version_converter.convert_version(model, target).SerializeToString()
        except Exception as e:  # (the caller keeps its last line)
            return b"E" + (str(e).strip() or type(e).__name__).encode()

    try:
        out = isolated.call(convert, "it", model.ByteSize())
    except isolated.Crashed as e:
        raise RuntimeError(str(e)) from None
    if out[:1] == b"E":
        raise RuntimeError(out[1:].decode(errors="replace"))
    return onnx.ModelProto.FromString(out[1:])


def _convert(model: onnx.ModelProto, target: int, ctx) -> tuple[onnx.ModelProto, int]:
    """``model`` lifted to ``target`` by onnx's version converter, shapes annotated first.

    Returns the model and how many functions were inlined.

    The converter drops model-local functions (and a function must import the model's
    opset), so functions are inlined first: the values computed are the same. What else it
    drops and no opset changes is put back (:func:`_keep_unconverted`). A model with
    ``training_info`` is refused (OptimizeError): its graphs would run at the new opset
    unconverted.
    """
    src = default_opset(model)
    if len(model.training_info):
        raise OptimizeError(
            f"onnx's version converter cannot lift opset {src} to {target}: the model has training_info, "
            "whose graphs it does not convert"
        )
    inlined = len(model.functions)
    original = model
    try:
        if model.functions:
            model = onnx.inliner.inline_local_functions(model)
            # The inlined bodies may hold the Constant -> Cast-1 targets written for functions
            # below opset 9; the converter has no Cast adapter past 5: fold them away first.

            model = ctx.materialize(ctx.apply(fold_shapes.PASS, model)[0])
        out = _run_converter(_annotated(model, ctx), target)
    except Exception as e:
        msg = (str(e).strip().splitlines() or [type(e).__name__])[-1][:300]
        raise OptimizeError(f"onnx's version converter cannot lift opset {src} to {target}: {msg}") from None
    for g in graphs_within(out.graph):
        del g.value_info[:]
    _keep_unconverted(original.graph, out.graph)
    return out, inlined


def _keep_unconverted(src: onnx.GraphProto, out: onnx.GraphProto) -> None:
    """Put back into the converter's ``out`` what it drops of ``src`` that no opset changes:
    the graph's ``metadata_props`` and ``quantization_annotation``, and the sparse
    initializers no node reads (one a node reads makes the converter fail)."""
    if not out.metadata_props:
        out.metadata_props.extend(src.metadata_props)
    if not out.quantization_annotation:
        out.quantization_annotation.extend(src.quantization_annotation)
    have = {t.values.name for t in out.sparse_initializer}
    out.sparse_initializer.extend(t for t in src.sparse_initializer if t.values.name not in have)


def needed(model: onnx.ModelProto) -> bool:
    """True when :func:`run` would change ``model``: its default-domain opset (or a function's)
    is below 5."""
    opset = default_opset(model)
    if opset is None:  # no default-domain op at all
        return False
    return opset < 5 or any(function_opset(fp, opset) < 5 for fp in model.functions)


def _inline_first(model: onnx.ModelProto, opset: int) -> bool:
    """Whether a function of ``model`` (whose default-domain ``opset`` is below 5) holds a
    Reshape and imports the model's opset, so that inlining it changes no op's version."""
    return any(
        function_opset(fp, opset) == opset
        and any(n.op_type == "Reshape" and n.domain in ("", "ai.onnx") for n in fp.node)
        for fp in model.functions
    )


def prepare(model: onnx.ModelProto, ctx) -> tuple[onnx.ModelProto, dict[str, int]]:
    """``model`` made ready for :func:`run`, and what that took: a model below opset 4 lifted
    to 4 by onnx's version converter (functions inlined first), one at opset 4 whose functions
    hold a Reshape and import its opset inlined. The converter and the inliner work on the
    ModelProto, so this runs before the model is indexed (the rounds call it). ``model``
    itself and no counts when nothing is needed."""
    if not needed(model):
        return model, {}
    opset = default_opset(model)
    done = {}
    if opset < 4:
        model, done["functions inlined"] = _convert(model, 4, ctx)
        done["opset lifted with onnx's converter"] = 1
    elif opset == 4 and _inline_first(model, opset):
        # A function's target would be a Constant, which takes int64 only from opset 9: the float
        # Constant + Cast-1 it would take instead is valid ONNX but onnxruntime cannot type
        # Cast-1's ``to`` in an inlined body. Inlined, the target is a main-graph initializer,
        # as the opsets below 4 have it after the converter (which inlines too).
        done["functions inlined"] = len(model.functions)
        model = onnx.inliner.inline_local_functions(model)
    return model, done


def run(gm: GraphModel, result, ctx) -> PassResult:
    """Rewrite every Reshape-1 of the model indexed as ``gm`` to Reshape-5 form and raise its
    opset to 5, once :func:`prepare` has done its part (else nothing changes)."""
    model = gm.model
    if not needed(model):
        return PassResult()
    opset = default_opset(model)
    if opset < 4 or (opset == 4 and _inline_first(model, opset)):
        return PassResult()  # the converter or the inliner first: prepare()
    stats = {"reshapes rewritten": 0, "opset lifted with onnx's converter": 0, "functions inlined": 0}
    old_ir = initializers_are_inputs(model.ir_version)

    def target_for(n, owner, is_function: bool, nodes: list, k: int):
        values = [int(v) for v in n.attrs["shape"]]
        base = f"{n.name or n.outputs[0].name}_shape"
        if not is_function:
            # Before IR 4 a subgraph's initializers must be its inputs, which If bodies
            # cannot have: the value goes to the main graph, whose scope subgraphs see.
            home = gm.graph if old_ir else owner
            return gm.constant(home, base, np.array(values, dtype=np.int64))
        # Functions hold no initializers and Constant takes int64 only from opset 9: a float
        # Constant (exact for dims) cast with Cast-1, whose ``to`` is a type name.
        f = gm.variable(base + "_f")
        c = Constant(gm.fresh(base + "_value"), array=np.array(values, dtype=np.float32))
        i = gm.variable(base, dtype=np.int64)
        nodes.insert(k, gm.node("Constant", base + "_Constant", [], [f], {"value": c}))
        nodes.insert(k + 1, gm.node("Cast", base + "_Cast", [f], [i], {"to": "INT64"}))
        return i

    def rewrite(owner, version: int, is_function: bool = False) -> None:
        nodes = list(owner.nodes)
        k = 0
        while k < len(nodes):
            n = nodes[k]
            for sg in subgraphs(n):
                rewrite(sg, version)
            if n.op != "Reshape" or n.domain or version >= 5 or "shape" not in n.attrs or len(n.inputs) != 1:
                k += 1
                continue
            before = len(nodes)
            append_input(n, target_for(n, owner, is_function, nodes, k))
            n.attrs = {a: v for a, v in n.attrs.items() if a not in ("shape", "consumed_inputs")}
            stats["reshapes rewritten"] += 1
            k += 1 + len(nodes) - before
        owner.nodes = nodes

    if opset < 5:
        rewrite(gm.graph, opset)
    for f in gm.graph.functions:
        rewrite(f, function_opset(f.proto, opset), is_function=True)
    gm.default_opset_floor = 5  # export writes 5 where the model or a function imports less
    return PassResult(stats, edited=True)


#: The Reshape rewrite on the index; onnx's converter and inliner run before, in prepare().
PASS = Pass("reshape-v1-to-v5", run)


def lift_opset(model: onnx.ModelProto, target: int, ctx) -> onnx.ModelProto:
    """``model`` lifted to default-domain opset ``target`` with onnx's version converter.

    Reshape-1 must already be rewritten (run :func:`run` first). Shapes are written into
    ``value_info`` for the converter. Raises OptimizeError for a target below the model's
    opset or beyond what the installed onnx knows, or when the converter fails; and, unless
    ``ctx.runtime_check`` is False, when the lifted model holds a default-domain op onnxruntime's
    CPU provider has no kernel for at ``target`` (:mod:`shapeinfer.base.runtimes`, the table
    lint's P201 reads) where every such op of the model loads at its own opset: the lift
    would make a model onnxruntime loads into one it refuses.
    """

    cur = default_opset(model)
    if cur is None:
        raise _refused(target, "the model imports no default-domain opset to lift")
    newest = onnx.defs.onnx_opset_version()
    if target > newest:
        raise _refused(target, f"the installed onnx knows opsets up to {newest}")
    if target < cur:
        raise _refused(target, f"is below the model's opset {cur}: only lifting is supported", sep=" ")
    if target == cur:
        return model
    lifted = _convert(model, target, ctx)[0]
    if ctx.runtime_check:
        _check_runtime_loads(model, cur, lifted, target)
    return lifted


def _default_ops(model: onnx.ModelProto) -> set[str]:
    """The op types of ``model``'s default-domain nodes, in every graph."""
    return {n.op_type for g in graphs_within(model.graph) for n in g.node if n.domain in ("", "ai.onnx")}


def _versioned(op: str, opset: int) -> str:
    """``op`` with the version of its onnx schema at ``opset`` (``RoiAlign-22``); ``op`` alone
    when onnx has no schema of that name (onnxruntime's own default-domain ops)."""
    try:
        return f"{op}-{onnx.defs.get_schema(op, opset).since_version}"
    except onnx.defs.SchemaError:
        return op


def _check_runtime_loads(model: onnx.ModelProto, cur: int, lifted: onnx.ModelProto, target: int) -> None:
    """OptimizeError when ``lifted`` (``model`` at opset ``target``) holds a default-domain op
    onnxruntime has no CPU kernel for while every default-domain op of ``model`` has one at
    ``cur`` (a model onnxruntime refuses already is not made worse)."""
    if any(runtimes.loads("onnxruntime", "", op, cur) is False for op in _default_ops(model)):
        return
    lost = sorted(op for op in _default_ops(lifted) if runtimes.loads("onnxruntime", "", op, target) is False)
    if not lost:
        return
    ok = [v for v in range(cur, target) if all(runtimes.loads("onnxruntime", "", op, v) for op in lost)]
    named = ", ".join(_versioned(op, target) for op in lost)
    hint = f"; at opset {max(ok)} it has {'it' if len(lost) == 1 else 'them'}" if ok else ""
    why = (
        f"onnxruntime {runtimes.version('onnxruntime')} has no CPU kernel for {named}: "
        f"the lifted model would not load where the input does{hint}"
    )
    raise _refused(target, why, api=" (runtime_check=False lifts anyway)", cli=" (--force lifts anyway)")


def _refused(target: int, why: str, sep: str = ": ", api: str = "", cli: str = "") -> OptimizeError:
    """The refusal of a lift to ``target``, with the argument spelt for the API and the CLI."""
    return OptimizeError(f"target_opset={target}{sep}{why}{api}", f"--target-opset {target}{sep}{why}{cli}")
