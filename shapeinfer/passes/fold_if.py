"""fold-if: an If whose condition is known is replaced by its taken branch; a Loop that never runs goes.

Contract (every graph: main, If/Loop/Scan bodies at any depth; not model-local functions):

- An ``If`` whose condition inference knows (from values, from ``--bind``, from what earlier
  passes folded; a subgraph's facts are its own inference at the loop fixpoint or in the
  branch, outer names looked up through the enclosing graphs) is replaced, where it stands,
  by the taken branch: its nodes, its initializers (initializers of the main graph from IR 4,
  else ``Constant`` nodes) and an ``Identity`` for each If output the branch does not compute
  itself (an outer-scope name, an initializer, or a tensor it returns twice). A branch output
  computed by a branch node becomes the If output, so readers need no change. Names the
  branch defines that are defined anywhere else in the model get fresh names (its own
  subgraphs' references follow; a subgraph that defines the name itself keeps its own), and so
  does every named node of the branch. Ifs nested in the taken branch are folded first, with
  the branch's facts. The dead branch goes, so a specialised model never carries a branch that
  would be invalid at the bound dims. A branch that holds sparse initializers is not folded.
- A ``Loop`` whose trip count is known 0, or whose condition input is known false, never runs
  its body: its carried outputs are its initial values (``Identity`` nodes). It is removed
  only when none of its scan outputs is read or is a graph output (a zero-iteration scan
  output's shape is runtime-defined).
- Graph inputs and outputs keep their names; values are the same wherever the model runs.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from shapeinfer.inference.engine import MAIN, graph_path
from shapeinfer.ir.graph import Constant, Graph, Node, Tensor, Variable, rename, replace_uses, set_output, unlink_nodes
from shapeinfer.ir.queries import all_graphs, has_control_flow, named_subgraphs, subgraphs
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

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


class _Folder:
    def __init__(self, gm: GraphModel, result: Result, reserved: set[str]) -> None:
        self.gm = gm
        self.result = result
        self.counts: Counter = Counter()
        self.node_names: set[str] = set()
        for g in all_graphs(gm.graph):
            self.counts.update(t.name for t in g.inputs)
            self.counts.update(gm.initializer_names(g))
            if g.proto is not None:
                self.counts.update(t.values.name for t in g.proto.sparse_initializer)
            for n in g.nodes:
                self.counts.update(t.name for t in n.outputs if t.name)
                if n.name:
                    self.node_names.add(n.name)
        self.used: set[str] = set(self.counts) | self.node_names | reserved
        self.stats = {"If nodes folded": 0, "Loop nodes that never run removed": 0}
        self.old_ir = gm.lists_initializers_as_inputs

    # ------------------------------------------------------------------ facts
    def fact(self, path: str, name: str):
        while True:
            f = self.result.graph_facts.get(path, {}).get(name)
            if f is not None or path == MAIN or "/" not in path:
                return f
            path = path.rsplit("/", 1)[0]

    def fresh(self, base: str) -> str:
        """``base``, or ``base_1``, ... : the first name the model does not use, used from now on.
        (``GraphModel.fresh`` would also avoid the names of tensors earlier passes removed.)"""
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        self.gm.names.add(name)
        return name

    # ------------------------------------------------------------------ walking
    def fold_graph(self, g: Graph, path: str, main: bool) -> bool:
        """Fold the decidable Ifs and dead Loops of ``g`` and of the graphs under it."""
        changed = False
        readers = None
        new_nodes: list[Node] = []
        for k, n in enumerate(g.nodes):
            sub = graph_path(path, k, "")
            domain_ok = n.domain in _DEFAULT
            if domain_ok and n.op == "If" and n.inputs and n.inputs[0].name:
                taken = _known_bool(self.fact(path, n.inputs[0].name))
                attr = "then_branch" if taken else "else_branch"
                branch = n.graphs.get(attr) if taken is not None else None
                if (
                    isinstance(branch, Graph)
                    and len(branch.outputs) >= len(n.outputs)
                    and not (branch.proto is not None and len(branch.proto.sparse_initializer))
                ):
                    self.fold_graph(branch, sub + attr, False)
                    new_nodes.extend(self.inline(g, n, branch, main))
                    self.stats["If nodes folded"] += 1
                    changed = True
                    continue
            if domain_ok and n.op == "Loop" and self.never_runs(n, path):
                if readers is None:
                    readers = _readers(g)
                body = n.graphs.get("body")
                n_carried = max(0, len(n.inputs) - 2)
                scans = [t.name for t in n.outputs[n_carried:]]
                initial = n.inputs[2:]
                read = any(s and s in readers for s in scans)
                if isinstance(body, Graph) and all(t.name for t in initial) and not read:
                    ids = [(src, dst) for src, dst in zip(initial, n.outputs[:n_carried]) if dst.name]
                    _drop(n)
                    new_nodes.extend(self.identity(src, dst) for src, dst in ids)
                    self.stats["Loop nodes that never run removed"] += 1
                    changed = True
                    continue
            for attr, sg in named_subgraphs(n):
                changed |= self.fold_graph(sg, sub + attr, False)
            new_nodes.append(n)
        if changed:
            g.nodes = new_nodes
        return changed

    def never_runs(self, n: Node, path: str) -> bool:
        m = _known_int(self.fact(path, n.inputs[0].name)) if n.inputs and n.inputs[0].name else None
        c = _known_bool(self.fact(path, n.inputs[1].name)) if len(n.inputs) > 1 and n.inputs[1].name else None
        return (m is not None and m <= 0) or c is False

    def identity(self, src: Tensor, dst: Tensor) -> Node:
        """``dst = Identity(src)``; ``dst``'s producer (the If or Loop it replaces) is unlinked."""
        return self.gm.node("Identity", self.fresh(f"{dst.name}_Identity"), [src], [dst], exact=True)

    # ------------------------------------------------------------------ inlining
    def inline(self, parent: Graph, node: Node, branch: Graph, main: bool) -> list[Node]:
        """The nodes that replace If ``node`` by ``branch`` (initializers go to ``parent`` when it can hold them)."""
        gm = self.gm
        outs = list(node.outputs)
        # what the branch defines: its initializers and its nodes' outputs, in order
        consts = _branch_constants(gm, branch)
        produced = [t for n in branch.nodes for t in n.outputs if t.name]
        produced_ids = {id(t) for t in produced}
        # A branch output a branch node computes becomes the If output itself.
        becomes: dict[int, Tensor] = {}  # id(branch tensor) -> the If output it becomes
        for b, o in zip(branch.outputs, outs):
            if o.name and id(b) in produced_ids and id(b) not in becomes:
                becomes[id(b)] = o
        renames: dict[int, str] = {}
        for t in [*branch.inputs, *consts, *produced]:
            if id(t) in becomes or id(t) in renames:
                continue
            if self.counts[t.name] > 1:
                renames[id(t)] = self.fresh(t.name)
        result: list[Node] = []
        moved: dict[int, Tensor] = {}  # id(branch constant) -> what stands for it in parent
        for c in consts:
            name = renames.get(id(c), c.name)
            if main and not self.old_ir:
                moved[id(c)] = gm.constant(parent, name, c, exact=True)
            else:
                v = Variable(name, graph=parent)
                value = Constant(name, c.proto, c._array, base_dir=c.base_dir)
                cn = gm.node("Constant", self.fresh(name + "_Constant"), [], [v], {"value": value}, exact=True)
                result.append(cn)
                moved[id(c)] = v
        # the branch's nodes move into the parent, their outputs and their subgraphs with them
        unlink_nodes([node])
        for c in consts:
            _substitute(c, moved[id(c)], branch.nodes)
        for n in branch.nodes:
            for i, t in enumerate(n.outputs):
                o = becomes.get(id(t))
                if o is not None:
                    _substitute(t, o, branch.nodes)
                    set_output(n, i, o)
                else:
                    if id(t) in renames:
                        rename(t, renames[id(t)])
                    if t.name:
                        t.graph = parent
            for sg in subgraphs(n):
                sg.parent = parent
            if n.name:
                if n.name in self.node_names:
                    n.name = self.fresh(n.name)
                    n.dirty = True
                self.node_names.add(n.name)
            result.append(n)
        for b, o in zip(branch.outputs, outs):
            if not o.name or becomes.get(id(b)) is o:
                continue
            src = becomes.get(id(b)) or moved.get(id(b), b)
            result.append(self.identity(src, o))
        for name in [*renames.values(), *(t.name for t in outs)]:  # (what ``becomes`` maps to is an output)
            self.counts[name] = max(self.counts[name], 1)
        # the dead branch's readers of outer names read nothing now
        for _, sg in named_subgraphs(node):
            if sg is not branch:
                unlink_nodes(list(_all_nodes(sg)))
        return result


def _substitute(old: Tensor, new: Tensor, nodes: list[Node]) -> None:
    """Every reader of ``old`` reads ``new``, and every graph nested in ``nodes`` that returns
    ``old`` (an outer name) returns ``new``."""
    replace_uses(old, new)
    for n in nodes:
        for sg in subgraphs(n):
            for g in all_graphs(sg):
                if any(x is old for x in g.outputs):
                    g.outputs = [new if x is old else x for x in g.outputs]


def _branch_constants(gm: GraphModel, g: Graph) -> list[Constant]:
    """The initializers graph ``g`` exports, in order, as the tensors that stand for them (one
    made from the stored tensor for an initializer nothing reads)."""
    found: dict[str, Constant] = {}
    for t in _tensors_of(g):
        if isinstance(t, Constant) and t.graph is g:
            found.setdefault(t.name, t)
    for c in gm.new_constants(g):
        found.setdefault(c.name, c)
    stored = {t.name: t for t in g.proto.initializer} if g.proto is not None else {}
    out = []
    for name in gm.initializer_names(g):
        c = found.get(name)
        if c is None:
            c = Constant(name, stored[name], graph=g, base_dir=gm.base_dir)
        out.append(c)
    return out


def _tensors_of(g: Graph):
    for n in _all_nodes(g):
        yield from n.inputs
    yield from g.outputs


def _all_nodes(g: Graph):
    for sg in all_graphs(g):
        yield from sg.nodes


def _drop(n: Node) -> None:
    """Unlink ``n`` and every node of its subgraphs."""
    unlink_nodes([n, *(x for sg in subgraphs(n) for x in _all_nodes(sg))])


def _readers(g: Graph) -> set[str]:
    """Names read in ``g`` (by its nodes, their subgraphs, or as its outputs)."""
    names = {t.name for t in g.outputs}
    for n in _all_nodes(g):
        names.update(t.name for t in n.inputs if t.name)
    for n in g.nodes:
        for sg in subgraphs(n):
            names.update(t.name for t in sg.outputs)
    return names


def run(gm: GraphModel, result: Result, ctx) -> PassResult:
    """Replace decidable Ifs by their taken branch and remove Loops that never run."""
    if not has_control_flow(gm.graph):
        return PassResult()
    folder = _Folder(gm, result, ctx.reserved or set())
    if not folder.fold_graph(gm.graph, MAIN, True):
        return PassResult()
    return PassResult(folder.stats, edited=True)


PASS = Pass("fold-if", run, infers_first=True, whole_facts=True)
