"""fold-if: an If whose condition is known is replaced by its taken branch; a Loop that never runs goes.

Contract (every graph: main, If/Loop/Scan bodies at any depth; not model-local functions):

- An ``If`` whose condition inference knows (from values, from ``--bind``, from what earlier
  passes folded; a subgraph's facts are its own inference at the loop fixpoint or in the
  branch, outer names looked up through the enclosing graphs) is replaced, where it stands,
  by the taken branch: its nodes, its initializers (initializers of the main graph from IR 4,
  else ``Constant`` nodes) and an ``Identity`` for each If output the branch does not compute
  itself (an outer-scope name, an initializer, or a tensor it returns twice). A branch output
  computed by a branch node is renamed to the If output, so readers need no change. Names the
  branch defines that are defined anywhere else in the model get fresh names (references in
  the branch's own subgraphs follow, unless a subgraph defines the name itself). Ifs nested in
  the taken branch are folded first, with the branch's facts. The dead branch goes, so a
  specialised model never carries a branch that would be invalid at the bound dims.
- A ``Loop`` whose trip count is known 0, or whose condition input is known false, never runs
  its body: its carried outputs are its initial values (``Identity`` nodes). It is removed
  only when none of its scan outputs is read or is a graph output (a zero-iteration scan
  output's shape is runtime-defined).
- Graph inputs and outputs keep their names; values are the same wherever the model runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import onnx
from onnx import AttributeProto, GraphProto, NodeProto

from shapeinfer.inference.engine import MAIN, graph_path
from shapeinfer.io.onnxio import graphs_within, subgraph_attrs
from shapeinfer.passes._subgraphs import fresh_name
from shapeinfer.passes.base import Pass, PassResult, Stage

#: The default domain's names.
_DEFAULT = ("", "ai.onnx")


def _known_bool(f) -> bool | None:
    if f is None or f.kind != "tensor" or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    if type(v) is int or isinstance(v, float):
        return bool(v)
    return None


def _known_int(f) -> int | None:
    if f is None or f.kind != "tensor" or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    return v if type(v) is int else None


def _definitions(g: GraphProto, counts: Counter) -> None:
    """Count every name ``g`` and its subgraphs define (inputs, initializers, node outputs)."""
    counts.update(vi.name for vi in g.input)
    counts.update(t.name for t in g.initializer)
    counts.update(t.values.name for t in g.sparse_initializer)
    for n in g.node:
        counts.update(o for o in n.output if o)
        for _, sg in subgraph_attrs(n):
            _definitions(sg, counts)


def _local_definitions(g: GraphProto) -> set[str]:
    names = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    names |= {t.values.name for t in g.sparse_initializer}
    for n in g.node:
        names.update(o for o in n.output if o)
    return names


def _rename_refs(g: GraphProto, mapping: dict[str, str]) -> None:
    """Rename references to outer names in subgraph ``g`` (names ``g`` defines shadow them)."""
    mine = _local_definitions(g)
    live = {k: v for k, v in mapping.items() if k not in mine}
    if not live:
        return
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in live:
                n.input[k] = live[i]
        for _, sg in subgraph_attrs(n):
            _rename_refs(sg, live)
    for vi in g.output:
        if vi.name in live:  # an output that is an outer name
            vi.name = live[vi.name]


class _Folder:
    def __init__(self, model: onnx.ModelProto, result) -> None:
        self.model = model
        self.result = result
        self.counts: Counter = Counter()
        _definitions(model.graph, self.counts)
        self.node_names = {n.name for n in _all_nodes(model.graph) if n.name}
        self.used: set[str] = set(self.counts) | self.node_names
        self.stats = {"If nodes folded": 0, "Loop nodes that never run removed": 0}
        self.old_ir = bool(model.ir_version) and model.ir_version < 4

    # ------------------------------------------------------------------ facts
    def fact(self, path: str, name: str):
        while True:
            f = self.result.graph_facts.get(path, {}).get(name)
            if f is not None or path == MAIN or "/" not in path:
                return f
            path = path.rsplit("/", 1)[0]

    def fresh(self, base: str) -> str:
        return fresh_name(base, self.used)

    # ------------------------------------------------------------------ walking
    def fold_graph(self, g: GraphProto, path: str, main: bool) -> bool:
        """Fold the decidable Ifs and dead Loops of ``g`` and of the graphs under it."""
        changed = False
        readers = None
        new_nodes: list[NodeProto] = []
        for k, n in enumerate(g.node):
            sub = graph_path(path, k, "")
            domain_ok = n.domain in _DEFAULT
            if domain_ok and n.op_type == "If" and n.input and n.input[0]:
                taken = _known_bool(self.fact(path, n.input[0]))
                branch = _attr_graph(n, "then_branch" if taken else "else_branch") if taken is not None else None
                if branch is not None and len(branch.output) >= len(n.output):
                    attr = "then_branch" if taken else "else_branch"
                    self.fold_graph(branch, sub + attr, False)
                    new_nodes.extend(self.inline(g, n, branch, main))
                    self.stats["If nodes folded"] += 1
                    changed = True
                    continue
            if domain_ok and n.op_type == "Loop" and self.never_runs(n, path):
                if readers is None:
                    readers = _readers(g)
                body = _attr_graph(n, "body")
                n_carried = max(0, len(n.input) - 2)
                scans = list(n.output[n_carried:])
                initial = list(n.input[2:])
                if body is not None and all(initial) and not any(s and s in readers for s in scans):
                    for src, dst in zip(initial, n.output[:n_carried]):
                        if dst:
                            new_nodes.append(self.identity(src, dst))
                    self.stats["Loop nodes that never run removed"] += 1
                    changed = True
                    continue
            for attr, sg in subgraph_attrs(n):
                changed |= self.fold_graph(sg, sub + attr, False)
            new_nodes.append(n)
        if changed:
            del g.node[:]
            g.node.extend(new_nodes)
        return changed

    def never_runs(self, n: NodeProto, path: str) -> bool:
        m = _known_int(self.fact(path, n.input[0])) if n.input and n.input[0] else None
        c = _known_bool(self.fact(path, n.input[1])) if len(n.input) > 1 and n.input[1] else None
        return (m is not None and m <= 0) or c is False

    def identity(self, src: str, dst: str) -> NodeProto:
        return onnx.helper.make_node("Identity", [src], [dst], name=self.fresh(f"{dst}_Identity"))

    # ------------------------------------------------------------------ inlining
    def inline(self, parent: GraphProto, node: NodeProto, branch: GraphProto, main: bool) -> list[NodeProto]:
        """The nodes that replace If ``node`` by ``branch`` (initializers go to ``parent`` when it can hold them)."""
        outs = list(node.output)
        produced = set()
        for n in branch.node:
            produced.update(o for o in n.output if o)
        mapping: dict[str, str] = {}
        # A branch output a branch node computes becomes the If output itself.
        renamed_to_out: set[str] = set()
        for b, o in zip(branch.output, outs):
            if o and b.name in produced and b.name not in renamed_to_out:
                mapping[b.name] = o
                renamed_to_out.add(b.name)
        for name in _local_definitions(branch):
            if name in mapping:
                continue
            if self.counts[name] > 1:
                mapping[name] = self.fresh(name)
        result: list[NodeProto] = []
        for t in branch.initializer:
            c = onnx.TensorProto()
            c.CopyFrom(t)
            c.name = mapping.get(t.name, t.name)
            if main and not self.old_ir:
                parent.initializer.append(c)
            else:
                result.append(
                    onnx.helper.make_node("Constant", [], [c.name], name=self.fresh(c.name + "_Constant"), value=c)
                )
        for t in branch.sparse_initializer:
            c = onnx.SparseTensorProto()
            c.CopyFrom(t)
            c.values.name = mapping.get(t.values.name, t.values.name)
            result.append(
                onnx.helper.make_node(
                    "Constant", [], [c.values.name], name=self.fresh(c.values.name + "_Constant"), sparse_value=c
                )
            )
        for n in branch.node:
            c = NodeProto()
            c.CopyFrom(n)
            for k, i in enumerate(c.input):
                if i in mapping:
                    c.input[k] = mapping[i]
            for k, o in enumerate(c.output):
                if o in mapping:
                    c.output[k] = mapping[o]
            if c.name:
                if c.name in self.node_names:
                    c.name = self.fresh(c.name)
                self.node_names.add(c.name)
            for _, sg in subgraph_attrs(c):
                _rename_refs(sg, mapping)
            result.append(c)
        for b, o in zip(branch.output, outs):
            if not o or mapping.get(b.name) == o:
                continue
            result.append(self.identity(mapping.get(b.name, b.name), o))
        for name in list(mapping.values()) + outs:
            self.counts[name] = max(self.counts[name], 1)
        return result


def _attr_graph(n: NodeProto, name: str) -> GraphProto | None:
    for a in n.attribute:
        if a.name == name and a.type == AttributeProto.GRAPH:
            return a.g
    return None


def _all_nodes(g: GraphProto) -> Iterator[NodeProto]:
    """The nodes of ``g`` and of every subgraph nested in it (graph by graph)."""
    return (n for sg in graphs_within(g) for n in sg.node)


def _readers(g: GraphProto) -> set[str]:
    """Names read in ``g`` (by its nodes, their subgraphs, or as its outputs)."""
    names = {vi.name for vi in g.output}
    for n in _all_nodes(g):
        names.update(i for i in n.input if i)
    for n in g.node:
        for _, sg in subgraph_attrs(n):
            names.update(vi.name for vi in sg.output)
    return names


def has_control_flow(model: onnx.ModelProto) -> bool:
    """True when an If or a Loop is anywhere in ``model``'s graphs."""
    return any(n.op_type in ("If", "Loop") for n in _all_nodes(model.graph))


def run(model: onnx.ModelProto, ctx) -> PassResult:
    """Replace decidable Ifs by their taken branch and remove Loops that never run."""
    if not has_control_flow(model):
        return PassResult()
    result = ctx.infer(model, whole=True)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    folder = _Folder(out, result)
    folder.used |= ctx.reserved or set()  # names of the rest of the model
    if not folder.fold_graph(out.graph, MAIN, True):
        return PassResult()
    for g in graphs_within(out.graph):
        del g.value_info[:]
    return PassResult(folder.stats, model=out)


#: It copies and edits the protobuf (subgraphs at every depth), before the index stage.
PASS = Pass("fold-if", Stage.PROTO, run)
