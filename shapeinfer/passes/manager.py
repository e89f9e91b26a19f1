"""The pass manager: the registry of passes by name and optimize's rounds.

Every pass is a declared :class:`~shapeinfer.passes.base.Pass` (the ``PASS`` of its module,
registered by name in :data:`PASSES`). The manager alone decides when the model is inferred,
indexed, exported and written: :meth:`PassContext.apply` hands a protobuf pass the ModelProto
and an index pass the index and the facts, and exports what the pass edited.

:func:`optimize` runs the protobuf stage first: ``fold-if`` (with ``bind``'s values, before
they are written into the graph inputs: a branch that is dead at the binding may be invalid
there), then ``reshape-v1-to-v5`` once, lifts the opset when asked; then the index stage
repeats the other selected passes until a round changes nothing (so a second run changes
nothing), handing the edited index (:class:`Edited`) from pass to pass, and annotates the
result like ``shapeinfer -o``. While Ifs or Loops are left after the first fold, ``fold-if``
joins the rounds too (what the index passes fold may decide a condition); the manager writes
the index out for it. A pass is not rerun where that provably changes nothing: one
declared ``idempotent`` on its own unchanged output; one whose run found nothing and said
``settled``, when only the passes its ``settled_under`` names changed the model since.
"""

from __future__ import annotations

import gc
import importlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import onnx

from shapeinfer.base import codes
from shapeinfer.inference.bindings import specialise_inputs
from shapeinfer.io.modelsource import ModelLike
from shapeinfer.io.source import Source
from shapeinfer.passes.base import Pass, PassResult, Stage
from shapeinfer.passes.errors import OptimizeError

#: Pass name -> module implementing it (``run(model, ctx) -> (model, changes)``).
PASSES: dict[str, str] = {
    "fold-if": "shapeinfer.passes.fold_if",
    "reshape-v1-to-v5": "shapeinfer.passes.reshape_v1_to_v5",
    "fold-shapes": "shapeinfer.passes.fold_shapes",
    "fold-constants": "shapeinfer.passes.fold_constants",
    "canonicalize-reshape": "shapeinfer.passes.canonicalize_reshape",
    "remove-noop-reshape": "shapeinfer.passes.remove_noop_reshape",
    "remove-neutral": "shapeinfer.passes.remove_neutral",
    "merge-transposes": "shapeinfer.passes.merge_transposes",
    "remove-expand": "shapeinfer.passes.remove_expand",
    "dedupe-shapes": "shapeinfer.passes.dedupe_shapes",
    "dce": "shapeinfer.passes.dce",
    "scalar-if-condition": "shapeinfer.passes.scalar_if_condition",
}

#: the passes optimize runs unless told: every pass but those that serve one runtime only
#: (scalar-if-condition: OpenVINO's If; lint --fix runs it for P007)
DEFAULT_PASSES: tuple[str, ...] = tuple(p for p in PASSES if p != "scalar-if-condition")

#: Rounds of the repeated passes before giving up on reaching a fixpoint.
MAX_ROUNDS = 8

#: Largest tensor (elements) fold-shapes writes as an initializer.
FOLD_CAP = 1024

#: Bytes one tensor fold-constants stores may add to the model (``max_fold_growth``).
MAX_FOLD_GROWTH = 1 << 16


class Edited:
    """The index as the passes left it, not written out as a ModelProto yet.

    Optimize's rounds hand it from pass to pass (each index pass edits it in place), so passes
    that each change a little do not each write the whole model; :meth:`PassContext.materialize`
    writes it out, once, when a ModelProto is needed (a fresh inference, a protobuf pass, the
    end). It is not a model: only the manager holds it.
    """

    __slots__ = ("gm", "real")

    def __init__(self, gm) -> None:
        self.gm = gm
        self.real: onnx.ModelProto | None = None  # the written-out model, once materialized


def node_count(model) -> int:
    """The main-graph nodes of ``model`` (a ModelProto or an :class:`Edited` index)."""
    if type(model) is Edited:
        return len(model.gm.graph.nodes)
    return len(model.graph.node)


@dataclass
class PassContext:
    """What a pass may use besides the model: where external data lives, the folding cap."""

    base_dir: str | None = None
    fold_cap: int = FOLD_CAP
    max_fold_growth: int = MAX_FOLD_GROWTH  # bytes one tensor fold-constants stores may add
    interface: set[str] | None = None  # the given model's graph inputs (None: every graph input)
    bind: Mapping[str, int] | None = None  # symbol values inference specialises to
    deadline: float | None = None  # time.monotonic() past which the passes give up (--timeout)
    defer: bool = False  # export gives an Edited index (optimize's rounds; only from IR 4)
    keep_alive: list | None = None  # facts and indexes replaced go here instead of being freed
    #: names used elsewhere in the model (a subgraph optimized on its own): new names avoid them
    reserved: set[str] | None = None
    resorted: bool = False  # the passes left the main graph unsorted: its nodes were reordered
    maybe_unsorted: bool = True  # False: inference walked the input's main graph in order (no G004)
    _facts: tuple | None = field(default=None, repr=False)  # (model, Result, fresh?)
    _graph: tuple | None = field(default=None, repr=False)
    _given: object = field(default=None, repr=False)  # the model the running index pass stands for
    #: the bytes the input model was parsed from (:meth:`~shapeinfer.io.source.Source.nodes_read`):
    #: its index writes unchanged nodes from their fields (:class:`~shapeinfer.io.wire.NodeFields`)
    source: Source | None = field(default=None, repr=False)

    def infer(self, model: onnx.ModelProto, whole: bool = False):
        """Inference facts of ``model`` (:class:`shapeinfer.inference.engine.Result`).

        Passes never modify the model they are given, so facts are reused while the same
        ModelProto object is passed on (a pass that changes nothing returns its input), and
        carried over a pass that keeps every surviving main-graph tensor's value
        (:meth:`carry`): those facts cover the main graph's old tensors only (a tensor the pass
        created has none, which passes read as unknown). ``whole`` asks for a fresh inference
        (subgraph facts, whose paths hold node positions, and the new tensors' facts too).

        A model not indexed yet is inferred with ``record_reads``: its index (:meth:`graph`)
        then takes each node's op, inputs and outputs from what inference read.
        """
        from shapeinfer.inference.engine import infer

        model = _written(model)
        if self._facts is not None and self._facts[0] is model and (self._facts[2] or not whole):
            return self._facts[1]
        model = self.materialize(model)
        indexed = self._graph is not None and self._graph[0] is model
        res = infer(
            model,
            base_dir=self.base_dir,
            bind=self.bind or None,
            timeout=self.remaining(),
            record_reads=not indexed,
        )
        self._retire(self._facts)
        self._facts = (model, res, True)
        return res

    def graph_inputs(self) -> list[str]:
        """The graph input names of the model the running pass was given (:meth:`apply`): before
        IR 4 these include the initializers earlier exports listed as inputs."""
        m = self._given
        return [vi.name for vi in (m.gm.model if type(m) is Edited else m).graph.input]

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no limit); raises InferenceTimeout past it."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            from shapeinfer.inference.engine import InferenceTimeout

            raise InferenceTimeout("optimize took longer than its --timeout")
        return left

    def carry(self, before: onnx.ModelProto, after: onnx.ModelProto) -> None:
        """``after`` keeps the value of every main-graph tensor of ``before`` it still has: its
        facts so far stand for it (see :meth:`infer`)."""
        before, after = _written(before), _written(after)
        if self._facts is not None and self._facts[0] is before and before is not after:
            self._facts = (after, self._facts[1], False)

    def refresh(self) -> None:
        """Drop carried facts: the next :meth:`infer` infers afresh."""
        if self._facts is not None and not self._facts[2]:
            self._retire(self._facts)
            self._facts = None

    def _retire(self, old) -> None:
        if old is not None and self.keep_alive is not None:
            self.keep_alive.append(old)

    def graph(self, model: onnx.ModelProto):
        """``model`` indexed for editing (:class:`~shapeinfer.passes._graph.GraphModel`).

        The GraphModel a pass exported with :meth:`export` is handed on to the next pass when it
        receives that export, instead of indexing it again.
        """
        from shapeinfer.passes._graph import GraphModel

        if type(model) is Edited:
            return model.gm
        if self._graph is not None and self._graph[0] is model:
            return self._graph[1]
        source = None if self.source is None else self.source.nodes_read(model)
        reads = None  # what a fresh inference of this very model read of its nodes
        if self._facts is not None and self._facts[0] is model and self._facts[2]:
            reads = self._facts[1].node_reads
        gm = GraphModel(model, self.base_dir, source, reads)
        if self.reserved:
            gm.names.update(self.reserved)
        self._retire(self._graph)
        self._graph = (model, gm)
        return gm

    def export(self, gm) -> onnx.ModelProto | Edited:
        """``gm`` exported; the next pass given the result may reuse ``gm`` (see :meth:`graph`).

        With ``defer`` (and IR 4 or later, where export adds no graph inputs) the result is a
        :class:`Edited`, written out by :meth:`materialize` when needed.
        """
        ir = gm.model.ir_version
        from shapeinfer.passes._export import export_model

        out = Edited(gm) if self.defer and not (ir and ir < 4) else export_model(gm)
        self._graph = (out, gm)
        return out

    def written_nodes(self, model: onnx.ModelProto) -> bytes | None:
        """The serialised main-graph node fields ``model`` was made from, or None: the source's
        (:attr:`source`) for the model read, the export's for one the index wrote out from them.
        True only while nothing changed ``model``'s nodes since (the caller knows)."""
        read = None if self.source is None else self.source.nodes_read(model)
        if read is not None:
            return read.data
        gm = self._graph[1] if self._graph is not None else None
        w = None if gm is None else gm.written_nodes
        return w[1] if w is not None and w[0] is model else None

    def apply(self, p: Pass, model) -> tuple[onnx.ModelProto | Edited, PassResult]:
        """One run of ``p`` on ``model`` (a ModelProto or an :class:`Edited` index) and its result.

        This is where a pass meets the model: a protobuf pass gets the model written out; an
        index pass gets the index and, when it declares ``infers_first``, the facts inferred
        before the index (so the index takes what inference read of each node). What an index
        pass edited is exported (:meth:`export`); over a pass that ``keeps_values`` the facts
        carry to its output (:meth:`carry`). The model is returned as it was when nothing changed.
        """
        if p.stage is Stage.PROTO:
            model = self.materialize(model)
            res = p.run(model, self)
            out = model if res.model is None else res.model
        else:
            facts = self.infer(model) if p.infers_first else None
            gm = self.graph(model)
            self._given = model
            try:
                res = p.run(gm, facts, self)
            finally:
                self._given = None
            out = self.export(gm) if res.edited else model
        if p.keeps_values:
            self.carry(model, out)
        return out, res

    def materialize(self, model) -> onnx.ModelProto:
        """``model`` as a ModelProto: a :class:`Edited` is written out (once); facts and
        the index kept for it stay with the written model."""
        if type(model) is not Edited:
            return model
        if model.real is None:
            from shapeinfer.passes._export import export_model

            model.real = export_model(model.gm)
            if self._facts is not None and self._facts[0] is model:
                self._facts = (model.real, *self._facts[1:])
            self._graph = (model.real, model.gm)
        return model.real


@dataclass
class PassReport:
    """What one pass did over all rounds: change counts and main-graph node counts.

    ``nodes_before`` is the count before its first run, ``nodes_after`` after its last.
    """

    name: str
    changes: dict[str, int] = field(default_factory=dict)
    nodes_before: int = 0
    nodes_after: int = 0
    node_delta: int = 0  # main-graph nodes added (+) or removed (-) by this pass, over all runs
    runs: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return any(self.changes.values())

    def add(self, changes: Mapping[str, int]) -> None:
        """Count ``changes`` (what one run did, by kind) into :attr:`changes`."""
        for k, v in changes.items():
            self.changes[k] = self.changes.get(k, 0) + v


@dataclass
class OptimizeReport:
    """What :func:`optimize_with_report` did."""

    def blocking(self) -> list:
        """The input's errors that make the model unfit to write (``optimize -o`` refuses it
        without ``--force``): all but a declared type that contradicts inference (G006) of a
        value that is not a graph input, which the written model declares as inferred, a main
        graph whose nodes are out of order (G004 without a cycle), which is written sorted, and
        external data that cannot be read (E003), whose references are written as they are."""
        return [
            d
            for d in self.errors
            if d.code != codes.EXTERNAL_DATA_UNREADABLE
            and not (d.code == codes.DECLARED_SHAPE_MISMATCH and not str(d.message).startswith("graph input"))
            and not (d.code == codes.GRAPH_ORDER_OR_CYCLE and d.graph in (None, "main") and "cycle" not in d.message)
        ]

    passes: list[PassReport]
    nodes_before: int
    nodes_after: int
    opset_before: int | None  # None: the model imports no default-domain opset
    opset_after: int | None
    rounds: int
    seconds: float
    notes: list[str] = field(default_factory=list)  # for the user (e.g. a --bind fallback)
    #: the error diagnostics of inference on the input model (without ``bind``), as ``infer``
    #: reports them; :meth:`blocking` those that make it unfit to write
    errors: list = field(default_factory=list)
    #: nodes of the subgraphs (If branches, Loop and Scan bodies, at every depth) before and after
    subgraph_nodes_before: int = 0
    subgraph_nodes_after: int = 0
    #: nodes of the model-local function bodies before and after
    function_nodes_before: int = 0
    function_nodes_after: int = 0
    #: where the returned model came from and what of it is serialised already (its main
    #: graph's nodes and value_info when known, the input's external data files), for
    #: :func:`shapeinfer.io.writer.save_model` (stale once the model is edited)
    source: Source = field(default_factory=Source, repr=False)
    #: what stays dynamic in the result and why (:mod:`shapeinfer.passes.remaining`)
    remaining: Any = None


def _written(model):
    """A materialized Edited's ModelProto; anything else as it is."""
    if type(model) is Edited and model.real is not None:
        return model.real
    return model


def pass_module(name: str):
    """The module implementing pass ``name``; OptimizeError for an unknown name."""
    mod = PASSES.get(name)
    if mod is None:
        from shapeinfer.base.suggest import did_you_mean

        raise OptimizeError(f"unknown pass {name!r}{did_you_mean(name, PASSES)} (passes: {', '.join(PASSES)})")
    return importlib.import_module(mod)


def get_pass(name: str) -> Pass:
    """The declared pass ``name`` (its module's ``PASS``); OptimizeError for an unknown name."""
    return pass_module(name).PASS


def run_pass(name: str, model: onnx.ModelProto, ctx: PassContext | None = None) -> tuple[onnx.ModelProto, dict]:
    """Pass ``name`` run once on ``model`` alone (outside optimize's rounds): the resulting
    ModelProto (``model`` itself when nothing changed) and its change counts."""
    ctx = PassContext() if ctx is None else ctx
    out, res = ctx.apply(get_pass(name), model)
    return ctx.materialize(out), dict(res.changes)


def describe_passes() -> list[tuple[str, str]]:
    """(name, one-line summary) of every pass, in pipeline order."""
    out = []
    for name in PASSES:
        doc = (pass_module(name).__doc__ or "").strip().splitlines()
        first = doc[0] if doc else ""
        text = first.split(": ", 1)[-1] if first.startswith(name) else first
        out.append((name, text.replace("``", "")))
    return out


def _load(model) -> tuple[onnx.ModelProto, str | None, str | None, bytes | None, list | None]:
    """``model`` as a ModelProto of its own (a copy of a given one) whose text fields are all
    valid UTF-8 (:func:`~shapeinfer.io.modeltext.decode_model_text`: names that are not are
    escaped alike everywhere), the path of its file (None for a model given in memory), its
    folder, the bytes it was parsed from when it is still as parsed from them (else None), and
    its tensors stored as external data as read from the file (None for a model given in
    memory: not looked for). A :class:`~shapeinfer.io.source.Source` holding a file read in
    full (``Source(path, load_model_file(path))``, as :class:`shapeinfer.Document` hands it
    over) is that file, its model handed over: not read again, not copied."""
    from shapeinfer.inference.engine import model_dir
    from shapeinfer.io.modelsource import own_copy
    from shapeinfer.io.modeltext import all_text_is_utf8, decode_model_text
    from shapeinfer.io.onnxio import load_model_file

    if isinstance(model, Source) and model.loaded is not None and not model.loaded.lean and model.path is not None:
        path, loaded = model.path, model.loaded
    else:
        m = own_copy(model)  # TypeError for what is no model
        if m is not None:
            return decode_model_text(m), None, None, None, None
        path = os.fspath(model)
        loaded = load_model_file(path)
    if all_text_is_utf8(loaded.model, loaded.data):
        return loaded.model, path, model_dir(path), loaded.data, loaded.external
    return decode_model_text(loaded.model, loaded.data), path, model_dir(path), None, loaded.external


def _repeated(names: list[str]) -> list[str]:
    """The passes optimize's rounds repeat, in order: the selected ones but the Reshape-1
    rewrite (run once before), with ``dce`` last (fold-if is dropped when nothing is left
    for it)."""
    return [n for n in names if n not in ("reshape-v1-to-v5", "dce")] + ["dce"]


def _infers_first(m: onnx.ModelProto, names: list[str], bind, target_opset) -> bool:
    """True when optimize's first inference of ``m`` comes before its first index anyway: the
    first repeated pass after fold-if asks for facts first (``infers_first``) and nothing
    before it changes ``m`` (``bind`` rewrites the graph inputs, the Reshape-1 rewrite and the
    opset lift make a new model)."""
    from shapeinfer.passes.reshape_v1_to_v5 import needed

    if bind or target_opset is not None or ("reshape-v1-to-v5" in names and needed(m)):
        return False
    first = next(n for n in _repeated(names) if n != "fold-if")
    return get_pass(first).infers_first


def check_bind(model: onnx.ModelProto, bind: Mapping[str, int]) -> dict[str, int]:
    """``bind`` checked for ``model`` (:mod:`shapeinfer.inference.bindings`, the rules and wording of
    ``infer`` and the command line): :class:`~shapeinfer.inference.bindings.BindError` for a value that
    is not an int of at least 1 within int64 or a symbol no graph input uses. Returns it."""
    from shapeinfer.inference.bindings import check_bind_values, check_model

    bind = check_bind_values(bind)
    check_model(model, bind=bind)
    return bind


def optimize_with_report(
    model: ModelLike | Source,
    *,
    passes: Sequence[str] | None = None,
    bind: Mapping[str, int] | None = None,
    target_opset: int | None = None,
    base_dir: str | None = None,
    timeout: float | None = None,
    keep_alive: list | None = None,
    max_fold_growth: int = MAX_FOLD_GROWTH,
) -> tuple[onnx.ModelProto, OptimizeReport]:
    """Optimize ``model`` and say what each pass did.

    ``model``: a ModelProto (not modified), a path, the bytes of a serialised model, an
    ``onnx_ir.Model`` or an ``onnx_graphsurgeon.Graph`` (:mod:`shapeinfer.io.modelsource`;
    TypeError for anything else), or a file already read in full as a
    :class:`~shapeinfer.io.source.Source` (its model is handed over: the passes change it).
    The result is always a ModelProto.

    ``passes`` selects and orders passes by name (default: all, in pipeline order); ``dce``
    always runs after them. ``bind`` specialises input symbols to ints first (the graph
    inputs' dims are rewritten, so the result is valid only at those values; a binding that
    cannot be right raises :class:`~shapeinfer.inference.bindings.BindError` up front, as ``infer`` does).
    With ``bind``, a result that fails onnx's strict inference or has an
    engine error where the input has neither falls
    back to keeping declared dims (:mod:`shapeinfer.passes.load_check`; ``notes`` says so) or
    raises OptimizeError.
    ``target_opset`` lifts the default-domain opset with onnx's version converter after the
    Reshape-1 rewrite, with inferred shapes in place for adapters that need them.
    The result is annotated like ``shapeinfer -o``. Raises OptimizeError for bad arguments.
    ``max_fold_growth``: the bytes one tensor ``fold-constants`` stores may add to the model
    (:mod:`shapeinfer.passes.fold_constants`; OptimizeError below 0).
    ``timeout`` (seconds) bounds the whole run: inference and each pass check it, and
    :class:`~shapeinfer.inference.engine.InferenceTimeout` is raised past it.

    ``keep_alive``: for a process that ends right after (the console script, which exits
    without tearing down): the run's large intermediate objects (the edited index, inference
    facts, intermediate models) are appended to it instead of being freed on return, and the
    objects alive are frozen out of the garbage collector (:func:`gc.freeze`). Freeing the
    Python objects of a 250k-node model one by one costs about a tenth of the whole run, and
    collecting them when the collector is re-enabled costs as much again, for memory the
    operating system reclaims at exit anyway.
    """
    from shapeinfer.base.progress import Progress

    gc_was_enabled = gc.isenabled()
    gc.disable()  # the passes build large acyclic object graphs: collection passes only cost
    progress = Progress("optimize")  # a line on a terminal's stderr once it takes over a second
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        if not isinstance(max_fold_growth, int) or max_fold_growth < 0:
            raise OptimizeError(f"max_fold_growth must be a number of bytes (0 or more), not {max_fold_growth!r}")
        return _optimize(model, passes, bind, target_opset, base_dir, progress, deadline, keep_alive, max_fold_growth)
    finally:
        progress.close()
        if keep_alive is not None:
            gc.freeze()
        if gc_was_enabled:
            gc.enable()


def _run_pipeline(
    m, names: list[str], ctx: PassContext, reports: dict[str, PassReport], progress, bind=None, target_opset=None
) -> tuple[onnx.ModelProto | Edited, int]:
    """The passes ``names`` on ``m``'s main graph (fold-if first, the Reshape-1 rewrite once,
    then rounds of the others until one changes nothing), counted into ``reports``. Returns the
    model (maybe still pending) and the number of rounds."""
    from shapeinfer.passes._graph import may_hold_subgraphs
    from shapeinfer.passes._queries import has_control_flow as graph_has_control_flow
    from shapeinfer.passes.fold_if import has_control_flow

    def run(name: str, model) -> tuple[onnx.ModelProto | Edited, PassResult]:
        ctx.remaining()  # raises past the deadline
        before = node_count(model)
        progress.update(f"{name} (round {rounds}, {before} nodes)" if rounds else name)
        rep = reports.setdefault(name, PassReport(name))
        t = time.perf_counter()
        out, res = ctx.apply(get_pass(name), model)
        rep.seconds += time.perf_counter() - t
        if rep.runs == 0:
            rep.nodes_before = before
        rep.runs += 1
        rep.nodes_after = node_count(out)
        rep.node_delta += rep.nodes_after - before
        rep.add(res.changes)
        return out, res

    rounds = 0
    control_flow = False
    if "fold-if" in names:
        reads = None
        if _infers_first(m, names, bind, target_opset):
            # the first round infers m before it indexes it: inferring now lets the index take
            # what inference read of each node, and tells whether any node can hold a subgraph
            reads = ctx.infer(m).node_reads
        if reads is None or m.functions or may_hold_subgraphs(map(itemgetter(1, 0), reads)):
            # no pass creates an If or a Loop; the index made for asking is the one the passes edit
            control_flow = graph_has_control_flow(ctx.graph(m).graph)
    if control_flow:
        for _ in range(MAX_ROUNDS):  # nested Ifs a fold reveals
            m, res = run("fold-if", m)
            if not res.changed:
                break
    elif "fold-if" in names:  # nothing to fold: reported as a run that changed nothing
        n = node_count(m)
        reports["fold-if"] = PassReport("fold-if", nodes_before=n, nodes_after=n, runs=1)
    if bind:
        specialise_inputs(m, bind)
    if "reshape-v1-to-v5" in names or target_opset is not None:
        m, _ = run("reshape-v1-to-v5", m)
    if target_opset is not None:
        from shapeinfer.passes.reshape_v1_to_v5 import lift_opset

        m = lift_opset(m, target_opset, ctx)
    repeated = _repeated(names)
    if "fold-if" in repeated and not (control_flow and has_control_flow(m)):
        repeated.remove("fold-if")
    ctx.defer = True  # passes hand each other the index; the model is written when needed
    changed_by: list[str] = []  # the pass of each run so far that changed the model
    after_own: dict[str, int] = {}  # pass -> len(changed_by) right after its latest run
    settled: dict[str, int] = {}  # pass whose latest run changed nothing and said settled -> same
    while rounds < MAX_ROUNDS:
        rounds += 1
        ctx.refresh()  # each round starts from facts of the model as it is
        any_change = False
        for name in repeated:
            p = get_pass(name)
            if after_own.get(name) == len(changed_by) and p.idempotent:
                continue  # the model is its own output: a run now would change nothing
            if name in settled and set(changed_by[settled[name] :]) <= p.settled_under:
                continue  # only passes that cannot give it work changed the model since it found none
            m, res = run(name, m)
            changed = res.changed
            if changed:
                changed_by.append(name)
            after_own[name] = len(changed_by)
            if not changed and res.settled:
                settled[name] = len(changed_by)
            else:
                settled.pop(name, None)
            any_change |= changed
        if not any_change:
            break
    from shapeinfer.passes._queries import toposort

    # an unsorted input is written sorted (onnx's checker requires it); the passes keep a sorted
    # graph sorted (what they add, they place), so only an input inference found unsorted is sorted
    gm = ctx.graph(m) if ctx.maybe_unsorted else None
    if gm is not None and toposort(gm.graph):
        m = ctx.export(gm)
        ctx.resorted = True
    return m, rounds


def _in_subgraphs(
    m: onnx.ModelProto, names: list[str], ctx: PassContext, reports, progress, reserved=None, model_inputs=None
):
    """``m`` with the passes ``names`` run in the subgraphs of its main graph's If, Loop and
    Scan nodes, at every depth (:mod:`shapeinfer.passes._subgraphs`); ``m`` itself when none
    changed. Their changes count into ``reports`` (node counts apart: see ``subgraph_nodes``)."""
    from shapeinfer.passes._subgraphs import defined_names, has_subgraphs, optimize_subgraphs

    if not has_subgraphs(m):
        return m
    res = ctx.infer(m, whole=True)
    if reserved is None:
        reserved = defined_names(m)
    if model_inputs is None:  # the top level: m is the model given
        model_inputs = frozenset(vi.name for vi in m.graph.input)

    def optimize_graph(sub: onnx.ModelProto) -> onnx.ModelProto:
        progress.update(f"subgraph {sub.graph.name} ({len(sub.graph.node)} nodes)")
        sctx = PassContext(
            base_dir=ctx.base_dir,
            fold_cap=ctx.fold_cap,
            max_fold_growth=ctx.max_fold_growth,
            interface={vi.name for vi in sub.graph.input},
            deadline=ctx.deadline,
            keep_alive=ctx.keep_alive,
            reserved=reserved,
        )
        own: dict[str, PassReport] = {}
        out, _ = _run_pipeline(sub, names, sctx, own, progress)
        sctx.defer = False
        out = sctx.materialize(out)
        for name, rep in own.items():
            total = reports.setdefault(name, PassReport(name))
            total.add(rep.changes)
            total.seconds += rep.seconds
        return _in_subgraphs(out, names, sctx, reports, progress, reserved, model_inputs)

    new = optimize_subgraphs(m, res, optimize_graph, reserved, model_inputs)
    return m if new is None else new


def _optimize(
    model,
    passes,
    bind,
    target_opset,
    base_dir,
    progress,
    deadline=None,
    keep_alive=None,
    max_fold_growth=MAX_FOLD_GROWTH,
) -> tuple[onnx.ModelProto, OptimizeReport]:
    from shapeinfer.inference.annotate import annotate_serialised
    from shapeinfer.io.entries import restore_entries, saved_entries
    from shapeinfer.passes._queries import default_opset
    from shapeinfer.passes._subgraphs import count_subgraph_nodes

    t0 = time.perf_counter()
    names = list(DEFAULT_PASSES if passes is None else passes)
    for n in names:
        get_pass(n)
    if len(set(names)) != len(names):
        raise OptimizeError(f"a pass is listed twice in {','.join(names)}")
    if bind:  # the values before the model is read, the symbols once it is
        from shapeinfer.inference.bindings import check_bind_values

        bind = check_bind_values(bind)
    m, path, where, data, external = _load(model)
    inline = external == []
    # the files the input's external data names: inputs the written model must never replace
    if external:
        from shapeinfer.io.external import data_files

        input_data_files = data_files(external, where)
    else:
        input_data_files = []
    del external
    if bind:
        check_bind(m, bind)
    if keep_alive is not None:
        keep_alive.append(m)  # the input as loaded (the first round's facts and index point into it)
    # the bytes of m's nodes, while they are as parsed (PassContext.source)
    source = None if data is None else Source.parsed(path, m, data)
    del data
    base_dir = base_dir or where
    ctx = PassContext(
        base_dir=base_dir,
        interface={vi.name for vi in m.graph.input},
        bind=bind,
        deadline=deadline,
        keep_alive=keep_alive,
        source=source,
        max_fold_growth=max_fold_growth,
    )
    if keep_alive is not None:
        keep_alive.append(ctx)  # its index and facts, whatever the outcome
    nodes_before = len(m.graph.node)
    fn_before = sum(len(fp.node) for fp in m.functions)
    opset_before = default_opset(m)
    # the model's value_info entries (doc strings, metadata): the passes drop them, the end puts them back
    entries = saved_entries(m)
    # what the model declares of its values' types: the passes drop value_info, the writer keeps these
    declared = {
        vi.name: onnx.TypeProto.FromString(vi.type.SerializeToString())
        for vi in list(m.graph.value_info) + list(m.graph.output)
    }
    strict_types = None  # the input's declared graph input and output types, when it passes strict inference
    if bind:
        from shapeinfer.passes.load_check import load_error

        progress.update("checking the input")
        if load_error(m, base_dir) is None:
            strict_types = tuple(
                {vi.name: onnx.TypeProto.FromString(vi.type.SerializeToString()) for vi in vis}
                for vis in (m.graph.input, m.graph.output)
            )
    # the input's own errors, as infer reports them: without --bind (a binding that cannot hold
    # was refused above; one a branch cannot take is the load check's fallback); else its facts
    # serve the first pass too
    if bind:
        from shapeinfer.inference.engine import infer

        found = infer(m, base_dir=base_dir, timeout=ctx.remaining()).diagnostics
    else:
        found = ctx.infer(m).diagnostics
    errors = [d for d in found if d.severity == "error"]
    ctx.maybe_unsorted = any(d.code == codes.GRAPH_ORDER_OR_CYCLE and d.graph in (None, "main") for d in found)
    del found
    reports: dict[str, PassReport] = {}
    m, rounds = _run_pipeline(m, names, ctx, reports, progress, bind, target_opset)
    ctx.defer = False
    holds = any(n.graphs for n in ctx.graph(m).graph.nodes)  # (the index: no walk of the protobuf)
    m = ctx.materialize(m)
    sub_after = sub_before = count_subgraph_nodes(m.graph) if holds else 0
    if sub_before:
        ctx.refresh()
        sub = _in_subgraphs(m, names, ctx, reports, progress)
        if sub is not m:
            m = sub
            sub_after = count_subgraph_nodes(m.graph)
            m, dce = ctx.apply(get_pass("dce"), m)  # outer nodes only the subgraphs read may be dead now
            reports.setdefault("dce", PassReport("dce")).add(dce.changes)
            m = ctx.materialize(m)
    if m.functions:  # the passes that hold at every call, in the function bodies
        from shapeinfer.passes._functions import optimize_functions

        gm = ctx.graph(m)
        done = optimize_functions(gm, names, default_opset(m) or 0, ctx.max_fold_growth)
        if done:
            m = ctx.export(gm)
            for name, counts in done.items():
                reports.setdefault(name, PassReport(name)).add(counts)
    progress.update("annotating")
    ctx.refresh()
    res = ctx.infer(m, whole=True)
    entries_moved = restore_entries(m, entries)  # after inference: as before, it sees no declaration
    value_info_fields = annotate_serialised(res, declared)
    from shapeinfer.passes.remaining import remaining

    left = remaining(m, res, ctx.max_fold_growth, ctx.fold_cap, ran=names)
    notes: list[str] = []
    if strict_types is not None:
        from shapeinfer.passes.load_check import make_loadable

        progress.update("checking the output")
        notes = make_loadable(m, *strict_types, base_dir)
        left.declared_types_kept = bool(notes)
    from shapeinfer.inference.annotate import subgraphs_annotated

    # annotate writes into the nodes only through their subgraphs; make_loadable says when it changed anything
    node_fields = None if notes or entries_moved or subgraphs_annotated(res) else ctx.written_nodes(m)
    if notes:
        value_info_fields = None  # make_loadable may have cleared them
    if ctx.resorted:
        notes.insert(0, "the nodes were not in topological order: they are written sorted")
    order = [n for n in DEFAULT_PASSES if n in reports]
    report = OptimizeReport(
        passes=[reports[n] for n in order],
        nodes_before=nodes_before,
        nodes_after=len(m.graph.node),
        opset_before=opset_before,
        opset_after=default_opset(m),
        rounds=rounds,
        seconds=time.perf_counter() - t0,
        subgraph_nodes_before=sub_before,
        subgraph_nodes_after=sub_after,
        function_nodes_before=fn_before,
        function_nodes_after=sum(len(fp.node) for fp in m.functions),
        errors=errors,
        notes=notes,
        source=Source(
            path,
            node_fields=node_fields,
            value_info_fields=value_info_fields,
            external=[] if inline else None,  # (the passes store no new tensor externally)
            data_inputs=input_data_files,
        ),
        remaining=left,
    )
    return m, report


def optimize(
    model: ModelLike,
    *,
    passes: Sequence[str] | None = None,
    bind: Mapping[str, int] | None = None,
    target_opset: int | None = None,
) -> onnx.ModelProto:
    """An optimized, annotated copy of ``model`` computing exactly what it computes.

    See :func:`optimize_with_report` for the arguments; this returns only the model.
    """
    return optimize_with_report(model, passes=passes, bind=bind, target_opset=target_opset)[0]


__all__ = [
    "DEFAULT_PASSES",
    "PASSES",
    "OptimizeError",
    "OptimizeReport",
    "PassContext",
    "PassReport",
    "check_bind",
    "describe_passes",
    "get_pass",
    "optimize",
    "optimize_with_report",
    "pass_module",
    "run_pass",
    "specialise_inputs",
]
