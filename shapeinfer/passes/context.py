"""Where a pass meets the model: :class:`PassContext` decides when the model is inferred,
indexed (:class:`~shapeinfer.ir.graph.GraphModel`), exported and written out, and hands
each pass the index and, when it asks, the facts (:meth:`PassContext.apply`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx

from shapeinfer.inference.engine import InferenceTimeout, infer
from shapeinfer.inference.policy import PASSES_POLICY, InferencePolicy
from shapeinfer.io.source import Source
from shapeinfer.ir.export import export_model
from shapeinfer.ir.graph import GraphModel
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.passes.registry import FOLD_CAP, MAX_FOLD_GROWTH, get_pass


class Edited:
    """The index as the passes left it, not written out as a ModelProto yet.

    Optimize's rounds hand it from pass to pass (each pass edits it in place), so passes
    that each change a little do not each write the whole model; :meth:`PassContext.materialize`
    writes it out, once, when a ModelProto is needed (a fresh inference, the
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
    #: --target-opset refuses a lift that leaves an op without an onnxruntime kernel (lift_opset)
    runtime_check: bool = True
    interface: set[str] | None = None  # the given model's graph inputs (None: every graph input)
    bind: Mapping[str, int] | None = None  # symbol values inference specialises to
    deadline: float | None = None  # time.monotonic() past which the passes give up (--timeout)
    defer: bool = False  # export gives an Edited index (optimize's rounds; only from IR 4)
    keep_alive: list | None = None  # facts and indexes replaced go here instead of being freed
    #: names used elsewhere in the model (a subgraph optimized on its own): new names avoid them
    reserved: set[str] | None = None
    resorted: bool = False  # the passes left the main graph unsorted: its nodes were reordered
    maybe_unsorted: bool = True  # False: inference walked the input's main graph in order (no G004)
    _facts: tuple | None = field(default=None, repr=False)  # (model, Result, fresh?, policy)
    _graph: tuple | None = field(default=None, repr=False)
    _given: object = field(default=None, repr=False)  # the model the running index pass stands for
    #: the bytes the input model was parsed from (:meth:`~shapeinfer.io.source.Source.nodes_read`):
    #: its index writes unchanged nodes from their fields (:class:`~shapeinfer.io.wire.NodeFields`)
    source: Source | None = field(default=None, repr=False)

    def infer(self, model: onnx.ModelProto, whole: bool = False, *, policy: InferencePolicy = PASSES_POLICY):
        """Inference facts of ``model`` (:class:`shapeinfer.inference.engine.Result`), read as the
        passes read it (:data:`~shapeinfer.inference.policy.PASSES_POLICY`: no declared type is
        assumed) unless ``policy`` says otherwise (the annotation at the end).

        Passes never modify the model they are given, so facts are reused while the same
        ModelProto object is passed on (a pass that changes nothing returns its input), and
        carried over a pass that keeps every surviving main-graph tensor's value
        (:meth:`carry`): those facts cover the main graph's old tensors only (a tensor the pass
        created has none, which passes read as unknown). ``whole`` asks for a fresh inference
        (subgraph facts, whose paths hold node positions, and the new tensors' facts too).

        A model not indexed yet is inferred with ``record_reads``: its index (:meth:`graph`)
        then takes each node's op, inputs and outputs from what inference read.
        """
        model = _written(model)
        if (
            self._facts is not None
            and self._facts[0] is model
            and (self._facts[2] or not whole)
            and self._facts[3] is policy
        ):
            return self._facts[1]
        model = self.materialize(model)
        indexed = self._graph is not None and self._graph[0] is model
        res = infer(
            model,
            base_dir=self.base_dir,
            bind=self.bind or None,
            timeout=self.remaining(),
            record_reads=not indexed,
            policy=policy,
        )
        self._retire(self._facts)
        self._facts = (model, res, True, policy)
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
            raise InferenceTimeout("optimize took longer than its --timeout")
        return left

    def carry(self, before: onnx.ModelProto, after: onnx.ModelProto) -> None:
        """``after`` keeps the value of every main-graph tensor of ``before`` it still has: its
        facts so far stand for it (see :meth:`infer`)."""
        before, after = _written(before), _written(after)
        if self._facts is not None and self._facts[0] is before and before is not after:
            self._facts = (after, self._facts[1], False, self._facts[3])

    def refresh(self) -> None:
        """Drop carried facts: the next :meth:`infer` infers afresh."""
        if self._facts is not None and not self._facts[2]:
            self._retire(self._facts)
            self._facts = None

    def drop_stale_index(self, model: onnx.ModelProto) -> None:
        """Drop an index kept for ``model`` that was made from another ModelProto (an earlier
        pass's input), for when ``model`` differs from that protobuf in what the index reads
        from it: its graph inputs (rewritten in place by ``--bind``), its opset imports (raised
        by reshape-v1-to-v5). The next pass indexes ``model`` itself."""
        if self._graph is not None and self._graph[0] is model and self._graph[1].model is not model:
            self._retire(self._graph)
            self._graph = None

    def _retire(self, old) -> None:
        if old is not None and self.keep_alive is not None:
            self.keep_alive.append(old)

    def graph(self, model: onnx.ModelProto):
        """``model`` indexed for editing (:class:`~shapeinfer.ir.graph.GraphModel`).

        The GraphModel a pass exported with :meth:`export` is handed on to the next pass when it
        receives that export, instead of indexing it again.
        """

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

        This is where a pass meets the model: it gets the index and, when it declares
        ``infers_first``, the facts inferred before the index (so the index takes what inference
        read of each node). What it edited is exported (:meth:`export`); over a pass that
        ``keeps_values`` the facts carry to its output (:meth:`carry`). The model is returned as
        it was when nothing changed.
        """
        facts = self.infer(model, whole=p.whole_facts) if p.infers_first else None
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
            model.real = export_model(model.gm)
            if self._facts is not None and self._facts[0] is model:
                self._facts = (model.real, *self._facts[1:])
            self._graph = (model.real, model.gm)
        return model.real


def _written(model):
    """A materialized Edited's ModelProto; anything else as it is."""
    if type(model) is Edited and model.real is not None:
        return model.real
    return model


def run_pass(name: str, model: onnx.ModelProto, ctx: PassContext | None = None) -> tuple[onnx.ModelProto, dict]:
    """Pass ``name`` run once on ``model`` alone (outside optimize's rounds): the resulting
    ModelProto (``model`` itself when nothing changed) and its change counts."""
    ctx = PassContext() if ctx is None else ctx
    out, res = ctx.apply(get_pass(name), model)
    return ctx.materialize(out), dict(res.changes)
