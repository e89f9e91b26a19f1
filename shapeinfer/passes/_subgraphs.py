"""The passes inside subgraphs: each If branch, Loop body and Scan body optimized as a graph of its own.

:func:`optimize_subgraphs` takes a model whose main graph the passes are done with and runs the
same pipeline on every subgraph of its default-domain ``If``, ``Loop`` and ``Scan`` nodes, then
on the subgraphs nested in those (each level is the "main graph" of the level below). A
subgraph is optimized as a **standalone model**:

- its inputs (a Loop's iteration number, condition and carried values, a Scan's states and
  slices) are graph inputs typed with inference's facts of the body (the loop-carried
  fixpoint: a dim that changes between iterations is a symbol of its own), values dropped;
- every outer-scope name it reads (at any depth) is a graph input typed with the enclosing
  graph's fact, or, for a small initializer of the enclosing graph (``COPY_LIMIT``: shape
  constants, not weights) that is not also a graph input (a default the caller may
  override), that initializer itself (its values are then known inside, as at run time);
- symbols inference made up (``unk_N``) in those types are renamed so the subgraph's own
  inference cannot mistake them for the ones it makes up;
- a graph input of the model itself gets symbols of its own inside (``in<k>_batch``): the
  equalities its declared dims state with other inputs' are not used. optimum's merged
  decoders declare the inputs of the branch without cache (``attention_mask`` as
  ``[batch_size, sequence_length]``) and are run with ``[batch_size, past + sequence]`` in the
  other: a branch rebuilt from the declared equalities would read the wrong length there.

So the facts a pass uses inside a branch are the facts of everything outside (which hold in
both branches) and of that branch only: a fact that holds in one branch is never used in
the other. The optimized graph is put back with the subgraph's own inputs and outputs (names,
order and declared types) unchanged; the outer names stay references to the enclosing
graph (their graph inputs and initializers in the standalone model are dropped). New names
are fresh across the whole model (``reserved``). A subgraph is left as it was when anything
does not hold: a type cannot be written (an element type inference does not know), a read
name has no fact, the result defines an outer or input name, or its outputs differ.

Model-local functions are not optimized here: a function body is shared by every call site,
its formal inputs have no types and its attributes may refer to the caller's; a fact would
have to hold at every call site, which inference does not record. Only the passes that read
no facts run in function bodies (:mod:`shapeinfer.passes._functions`). Subgraphs of nodes of other domains
(com.microsoft's BeamSearch...) are left alone too: what their inputs are is not known here.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import AttributeProto, GraphProto, NodeProto

from shapeinfer.base.ir_version import initializers_are_inputs
from shapeinfer.inference.engine import graph_path
from shapeinfer.io.annotate import is_complete
from shapeinfer.io.onnxio import fact_type, graphs_within, initializer_names, subgraph_attrs
from shapeinfer.ir.queries import default_opset
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.scope import FRESH_PREFIX

#: The ops whose subgraphs are optimized (default domain only).
CONTROL_FLOW = ("If", "Loop", "Scan")

#: Largest initializer of the enclosing graph (bytes) a standalone subgraph gets a copy of; a
#: larger one (a weight) is a typed graph input: its values are unknown inside, so no pass
#: makes a branch its own changed copy of a weight the model stores once.
COPY_LIMIT = 64 << 10

#: Prefix of the renamed made-up symbols of the enclosing graph.
OUTER_PREFIX = "outer_"


def count_subgraph_nodes(g: GraphProto) -> int:
    """Nodes of every graph nested in ``g``'s nodes (not ``g``'s own)."""
    return sum(len(sg.node) for sg in graphs_within(g)) - len(g.node)


def has_subgraphs(model: onnx.ModelProto) -> bool:
    """True when a default-domain If, Loop or Scan of the main graph holds a subgraph."""
    return any(n.op_type in CONTROL_FLOW and n.domain in ("", "ai.onnx") for n in model.graph.node)


def defined_names(model: onnx.ModelProto) -> set[str]:
    """Every tensor and node name of ``model`` (all graphs, functions)."""
    out: set[str] = set()
    for g in graphs_within(model.graph):
        out.update(vi.name for vi in g.input)
        out.update(initializer_names(g))
        for n in g.node:
            out.update(n.output)
            out.update(n.input)
            if n.name:
                out.add(n.name)
    for f in model.functions:
        out.update(f.input)
        out.update(f.output)
        for n in f.node:
            out.update(n.output)
            out.update(n.input)
            if n.name:
                out.add(n.name)
    out.discard("")
    return out


def fresh_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_1``, ``base_2``, ... : the first not in ``taken``, which it joins."""
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _defs_and_reads(g: GraphProto) -> tuple[set[str], set[str]]:
    """(names ``g`` and its nested graphs define, names they read)."""
    defs: set[str] = set()
    reads: set[str] = set()
    for sg in graphs_within(g):
        defs.update(vi.name for vi in sg.input)
        defs.update(initializer_names(sg))
        reads.update(vi.name for vi in sg.output)
        for n in sg.node:
            defs.update(o for o in n.output if o)
            reads.update(i for i in n.input if i)
    return defs, reads


def captured_names(g: GraphProto) -> list[str]:
    """The outer-scope names subgraph ``g`` reads (its nested graphs included), sorted."""
    defs, reads = _defs_and_reads(g)
    return sorted(reads - defs)


class _Renamer:
    """Made-up symbols of the enclosing graph renamed apart from the subgraph's own."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.map: dict[str, D.Dim] = {}

    def dim(self, d):
        if type(d) is int:
            return d
        fresh = [s for s in D.symbols(d) if s.startswith(FRESH_PREFIX)]
        if not fresh:
            return d
        for s in fresh:
            if s not in self.map:
                name, k = OUTER_PREFIX + s, 1
                while name in self.taken:
                    name, k = f"{OUTER_PREFIX}{s}_{k}", k + 1
                self.taken.add(name)
                self.map[s] = D.sym(name)
        return D.resolve(d, self.map)

    def fact(self, f: Fact | None) -> Fact | None:
        if f is None:
            return None
        shape = None if f.shape is None else tuple(self.dim(d) for d in f.shape)
        return Fact(f.dtype, shape, None, f.kind, self.fact(f.elem))

    def own(self, f: Fact | None, k: int) -> Fact | None:
        """``f`` with every symbol renamed to one of its own (``in<k>_<symbol>``): equal dims
        within it stay equal, none equals another value's."""
        if f is None:
            return None
        mapping: dict[str, D.Dim] = {}

        def dim(d):
            if type(d) is int:
                return d
            for s in D.symbols(d):
                if s not in mapping:
                    name, j = f"in{k}_{s}", 1
                    while name in self.taken:
                        name, j = f"in{k}_{s}_{j}", j + 1
                    self.taken.add(name)
                    mapping[s] = D.sym(name)
            return D.resolve(d, mapping)

        def walk(f):
            if f is None:
                return None
            shape = None if f.shape is None else tuple(dim(d) for d in f.shape)
            return Fact(f.dtype, shape, None, f.kind, walk(f.elem))

        return walk(f)


def _complete(tp: onnx.TypeProto) -> bool:
    return tp.WhichOneof("value") is not None and is_complete(tp)


def _value_info(name: str, f: Fact | None, renamer: _Renamer, own: int | None = None) -> onnx.ValueInfoProto | None:
    """A graph input ``name`` typed from fact ``f`` (None when the type cannot be written);
    ``own``: its symbols made its own (:meth:`_Renamer.own`, with that number)."""
    if f is None:
        return None
    tp = fact_type(renamer.fact(f) if own is None else renamer.own(f, own))
    if not _complete(tp):
        return None
    vi = onnx.ValueInfoProto(name=name)
    vi.type.CopyFrom(tp)
    return vi


def _symbols_in(facts) -> set[str]:
    out: set[str] = set()
    for f in facts:
        while f is not None:
            if f.shape is not None:
                for d in f.shape:
                    if type(d) is not int:
                        out.update(D.symbols(d))
            f = f.elem
    return out


def standalone(
    model: onnx.ModelProto,
    body: GraphProto,
    body_facts: dict,
    outer_facts: dict,
    initializers: dict[str, onnx.TensorProto],
    model_inputs: frozenset[str] = frozenset(),
) -> tuple[onnx.ModelProto, set[str]] | None:
    """Subgraph ``body`` as a model of its own (see the module docstring), with the names of its
    graph inputs and initializers that stand for outer-scope values; None when it cannot be.
    ``model_inputs``: the names of the model's own graph inputs, whose symbols are made their
    own inside (see the module docstring)."""
    captured = captured_names(body)
    renamer = _Renamer(_symbols_in(outer_facts.get(n) for n in captured) | _symbols_in(body_facts.values()))
    g = GraphProto(name=body.name or "subgraph")
    for vi in body.input:
        new = _value_info(vi.name, body_facts.get(vi.name), renamer)
        if new is None:
            if not vi.type.WhichOneof("value") or not _complete(vi.type):
                return None
            new = onnx.ValueInfoProto()
            new.CopyFrom(vi)  # the declared type (inference did not reach the body)
        g.input.append(new)
    outer: set[str] = set()
    for name in captured:
        t = initializers.get(name)
        if t is not None and t.data_location != onnx.TensorProto.EXTERNAL and t.ByteSize() <= COPY_LIMIT:
            g.initializer.append(t)
        else:
            own = len(g.input) if name in model_inputs else None
            vi = _value_info(name, outer_facts.get(name), renamer, own)
            if vi is None:
                return None
            g.input.append(vi)
        outer.add(name)
    g.initializer.extend(body.initializer)
    g.sparse_initializer.extend(body.sparse_initializer)
    g.node.extend(body.node)
    g.output.extend(body.output)
    g.value_info.extend(body.value_info)
    # from IR 4 on (whatever the model's): initializers the passes add need no graph input
    m = onnx.ModelProto(ir_version=max(model.ir_version or 8, 4), producer_name="shapeinfer-subgraph")
    m.opset_import.extend(model.opset_import)
    m.functions.extend(model.functions)
    m.graph.CopyFrom(g)
    return m, outer


#: The element types ``Constant`` takes below opset 9 (Constant-1): int64 and the others only
#: from Constant-9 on.
_CONSTANT_1_TYPES = frozenset({onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE})


def _constant_node(t: onnx.TensorProto, opset: int, reserved: set[str]) -> NodeProto | None:
    """A ``Constant`` node making ``t`` (named fresh against ``reserved``), or None when the
    ``Constant`` of default-domain ``opset`` cannot hold ``t``'s element type."""
    if opset < 9 and t.data_type not in _CONSTANT_1_TYPES:
        return None
    name, k = f"{t.name}_Constant", 1
    while name in reserved:
        name, k = f"{t.name}_Constant_{k}", k + 1
    reserved.add(name)
    return onnx.helper.make_node("Constant", [], [t.name], name=name, value=t)


def _old_ir_constants(
    g: GraphProto, tensors: list[onnx.TensorProto], opset: int, reserved: set[str], hoisted: list
) -> None:
    """Before IR 4 a subgraph holds no initializer (one must also be a graph input, which an If
    branch cannot have): each of ``tensors`` becomes a ``Constant`` node at the head of ``g``
    where the opset's ``Constant`` takes its type, else goes to ``hoisted``, for the caller to
    make an initializer (and input) of the main graph, which ``g`` reads as an outer-scope
    value: an int64 shape constant below opset 9. A hoisted tensor is named fresh against
    ``reserved`` (a name local to ``g`` may be used by a sibling branch too) and ``g``'s nodes,
    nested ones included, read it under that name; an output of ``g`` that it is gets it
    through an ``Identity``."""
    nodes = []
    for t in tensors:
        node = _constant_node(t, opset, reserved)
        if node is not None:
            nodes.append(node)
            continue
        old = t.name
        new, k = f"{old}_outer", 1
        while new in reserved:
            new, k = f"{old}_outer_{k}", k + 1
        reserved.add(new)
        moved = onnx.TensorProto()
        moved.CopyFrom(t)
        moved.name = new
        hoisted.append(moved)
        for sg in graphs_within(g):
            for n in sg.node:
                for i, name in enumerate(n.input):
                    if name == old:
                        n.input[i] = new
        if any(o.name == old for o in g.output):
            name, k = f"{old}_Identity", 1
            while name in reserved:
                name, k = f"{old}_Identity_{k}", k + 1
            reserved.add(name)
            nodes.append(onnx.helper.make_node("Identity", [new], [old], name=name))
    if nodes:
        rest = list(g.node)
        del g.node[:]
        g.node.extend(nodes + rest)


def splice(
    body: GraphProto,
    done: onnx.ModelProto,
    outer: set[str],
    old_ir: bool,
    reserved: set[str],
    opset: int = 9,
    hoisted: list | None = None,
) -> GraphProto | None:
    """``done`` (the optimized standalone model of ``body``) as the subgraph that replaces
    ``body``: same inputs and outputs, outer names referenced again. None when it breaks a
    rule of the module docstring. Before IR 4 (``old_ir``) the initializers the passes made,
    in ``body`` and in the subgraphs nested in it, become ``Constant`` nodes where the
    model's default-domain ``opset`` lets them, else go to ``hoisted`` (see
    :func:`_old_ir_constants`); None when ``hoisted`` is not given for one."""
    dg = done.graph
    inputs = [vi.name for vi in body.input]
    if [vi.name for vi in dg.output] != [vi.name for vi in body.output]:
        return None
    if [vi.name for vi in dg.input if vi.name not in outer] != inputs:
        return None
    keep_init = [t for t in dg.initializer if t.name not in outer]
    produced = {o for n in dg.node for o in n.output if o}
    forbidden = outer | set(inputs)
    if produced & forbidden or {t.name for t in keep_init} & set(inputs):
        return None
    out = GraphProto(name=body.name, doc_string=body.doc_string)
    out.input.extend(body.input)
    out.output.extend(body.output)
    if not old_ir:
        out.initializer.extend(keep_init)
    out.sparse_initializer.extend(dg.sparse_initializer)
    out.node.extend(dg.node)
    out.value_info.extend(vi for vi in body.value_info if vi.name in produced)
    out.metadata_props.extend(body.metadata_props)
    if old_ir:
        lifted: list[onnx.TensorProto] = []
        _old_ir_constants(out, keep_init, opset, reserved, lifted)
        for g in list(graphs_within(out))[1:]:  # the nested ones were optimized at IR 4
            own = {vi.name for vi in g.input}
            moved = [t for t in g.initializer if t.name not in own]
            if moved:
                kept = [t for t in g.initializer if t.name in own]
                del g.initializer[:]
                g.initializer.extend(kept)
                _old_ir_constants(g, moved, opset, reserved, lifted)
        if lifted and hoisted is None:
            return None
        if lifted:
            hoisted.extend(lifted)
    return out


def _graph_attr(node: NodeProto, attr: str) -> tuple[AttributeProto, int | None]:
    """The attribute of ``node`` named by ``attr`` (``name`` or ``name[j]``) and the index j."""
    name, _, j = attr.partition("[")
    a = next(a for a in node.attribute if a.name == name)
    return a, (int(j[:-1]) if j else None)


def optimize_subgraphs(
    model: onnx.ModelProto,
    result,
    optimize_graph: Callable[[onnx.ModelProto], onnx.ModelProto],
    reserved: set[str],
    model_inputs: frozenset[str] = frozenset(),
) -> onnx.ModelProto | None:
    """``model`` with each subgraph of its main graph's control-flow nodes replaced by what
    ``optimize_graph`` makes of it as a standalone model (which optimizes the subgraphs nested
    in it in turn); None when no subgraph changed. ``result``: inference of ``model`` with
    subgraph facts (``infer(..., whole)``). ``reserved``: names used anywhere in the whole
    model, which new names must avoid (updated with the names the subgraphs now use).
    ``model_inputs``: the names of the graph inputs of the model the user gave (at the top
    level: ``model``'s own), typed apart inside (see the module docstring)."""
    # (an initializer that is also a graph input is a default the caller may override: typed only)
    inputs = {vi.name for vi in model.graph.input}
    initializers = {t.name: t for t in model.graph.initializer if t.name not in inputs}
    old_ir = initializers_are_inputs(model.ir_version)
    opset = default_opset(model) or 1
    out: onnx.ModelProto | None = None
    for k, node in enumerate(model.graph.node):
        if node.op_type not in CONTROL_FLOW or node.domain not in ("", "ai.onnx"):
            continue
        for attr, body in subgraph_attrs(node):
            path = graph_path("main", k, attr)
            body_facts = result.graph_facts.get(path)
            if body_facts is None:
                continue  # inference did not reach it (a branch it ruled out, an invalid node)
            made = standalone(model, body, body_facts, result.facts, initializers, model_inputs)
            if made is None:
                continue
            sub, outer = made
            done = optimize_graph(sub)
            hoisted: list[onnx.TensorProto] = []
            new = splice(body, done, outer, old_ir, reserved, opset, hoisted)
            if new is None or new.SerializeToString() == body.SerializeToString():
                continue
            if out is None:
                out = onnx.ModelProto()
                out.CopyFrom(model)
            a, j = _graph_attr(out.graph.node[k], attr)
            (a.g if j is None else a.graphs[j]).CopyFrom(new)
            # before IR 4, an int64 constant below opset 9: an initializer of the main graph,
            # listed as its input too, which the subgraph reads from the outer scope
            out.graph.initializer.extend(hoisted)
            out.graph.input.extend(
                onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in hoisted
            )
            for g in graphs_within(new):
                reserved.update(o for n in g.node for o in n.output)
                reserved.update(n.name for n in g.node if n.name)
                reserved.update(t.name for t in g.initializer)
    return out
