"""The graph the passes edit: onnx-graphsurgeon's IR, written back without losing anything.

:class:`GsModel` imports a ModelProto with onnx-graphsurgeon and exports it again. gs models
nodes, tensors and their producer/consumer links, which is what the passes need; it does not
model everything a ModelProto can hold (empty list attributes, attribute types it skips,
node doc strings, IR < 4 initializer inputs, subgraph scoping of initializers). So export
does not use gs's exporter: each node that came from the model is written from its original
NodeProto (attributes the pass did not replace are copied byte for byte), each graph keeps
its original inputs, outputs and remaining initializers, and only what a pass created is
built from gs objects. ``value_info`` is dropped: the pipeline re-annotates at the end.

Only this module and the passes import onnx-graphsurgeon, always lazily.

Cost: gs keeps producer/consumer links in lists it synchronises with ``list.remove``, which
compares nodes with ``Node.__eq__`` (field by field, logging each call): unlinking one node
from a tensor read by k nodes costs k such comparisons, so removing or rewiring the readers
of a shared tensor one by one is quadratic. Every link edit of the passes goes through
:func:`set_input`, :func:`replace_uses` and :meth:`GsModel.remove_nodes`, which edit the
lists directly by identity and in bulk (linear in what they touch).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto

#: Ops whose outputs are random: never merged, folded or moved.
NONDETERMINISTIC = {
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Bernoulli",
    "Multinomial",
}


_GS = None


def gs_module():
    """onnx_graphsurgeon, imported on first use with its logger quietened (then cached)."""
    global _GS
    if _GS is None:
        import onnx_graphsurgeon as gs
        from onnx_graphsurgeon.logger import G_LOGGER

        G_LOGGER.severity = G_LOGGER.ERROR
        _GS = gs
    return _GS


def _unlink(lst: list, obj) -> None:
    """Remove one occurrence of ``obj`` (by identity) from a gs link list, without syncing back."""
    for i, x in enumerate(lst):
        if x is obj:
            list.__delitem__(lst, i)
            return


def set_input(node, k: int, new) -> None:
    """``node.inputs[k] = new``, keeping gs's consumer lists right without ``Node.__eq__``."""
    old = node.inputs[k]
    if old is new:
        return
    _unlink(old.outputs, node)
    list.__setitem__(node.inputs, k, new)
    list.append(new.outputs, node)


def set_inputs(node, new: list) -> None:
    """Replace all of ``node``'s inputs with ``new`` (see :func:`set_input`)."""
    for t in node.inputs:
        _unlink(t.outputs, node)
    list.clear(node.inputs)
    for t in new:
        list.append(node.inputs, t)
        list.append(t.outputs, node)


def set_output(node, k: int, new) -> None:
    """``node.outputs[k] = new``: ``new`` is produced by ``node`` and no longer by anything else."""
    old = node.outputs[k]
    if old is new:
        return
    _unlink(old.inputs, node)
    list.__setitem__(node.outputs, k, new)
    for p in list(new.inputs):
        _unlink(p.outputs, new)
    list.clear(new.inputs)
    list.append(new.inputs, node)


def unlink_nodes(nodes) -> None:
    """Detach ``nodes`` from every tensor they read or write, in one sweep per tensor."""
    gone = {id(n) for n in nodes}
    touched: dict[int, object] = {}
    for n in nodes:
        for t in n.inputs:
            touched[id(t)] = t
        for t in n.outputs:
            touched[id(t)] = t
    for t in touched.values():
        if any(id(c) in gone for c in t.outputs):
            list.__setitem__(t.outputs, slice(None), [c for c in t.outputs if id(c) not in gone])
        if any(id(p) in gone for p in t.inputs):
            list.__setitem__(t.inputs, slice(None), [p for p in t.inputs if id(p) not in gone])
    for n in nodes:
        list.clear(n.inputs)
        list.clear(n.outputs)


def _copy_fields(dst, src, skip: tuple[str, ...]) -> None:
    """Copy every set field of protobuf message ``src`` into ``dst`` except those in ``skip``."""
    for fd, val in src.ListFields():
        if fd.name in skip:
            continue
        if fd.is_repeated:
            getattr(dst, fd.name).extend(val)
        elif fd.type == fd.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(val)
        else:
            setattr(dst, fd.name, val)


class GsModel:
    """A model imported into onnx-graphsurgeon, with what export needs to write it back losslessly.

    ``graph`` is the gs main graph (subgraphs are gs graphs in node attributes, model-local
    functions in ``graph.functions``). Passes edit it, create initializers with
    :meth:`constant` (scoped to the graph or function they belong to), drop initializers with
    :meth:`drop_initializer`, and call :meth:`export` for the new ModelProto.
    """

    def __init__(self, model: ModelProto, base_dir: str | None = None) -> None:
        gs = gs_module()
        self.model = model
        self.graph = gs.import_onnx(model)
        _guard_external_values(self.graph, base_dir)
        self._orig_node: dict[int, tuple[NodeProto, dict[str, Any]]] = {}
        self._orig_graph: dict[int, GraphProto] = {}
        self._orig_func: dict[int, onnx.FunctionProto] = {}
        self._new_consts: dict[int, list] = {}
        self._dropped: dict[int, set[str]] = {}
        self._keep_alive: list = []  # ids above are only valid while the objects live
        self.names: set[str] = set()
        self._map_graph(self.graph, model.graph)
        for f, fp in zip(self.graph.functions, model.functions):
            self._orig_func[id(f)] = fp
            self._keep_alive.append(f)
            self._map_nodes(f.nodes, fp.node)
            self.names.update(fp.input)
            self.names.update(fp.output)

    # ------------------------------------------------------------------ import bookkeeping
    def _map_graph(self, g, gp: GraphProto) -> None:
        self._orig_graph[id(g)] = gp
        self._keep_alive.append(g)
        self.names.update(vi.name for vi in gp.input)
        self.names.update(t.name for t in gp.initializer)
        self._map_nodes(g.nodes, gp.node)

    def _map_nodes(self, nodes, protos) -> None:
        Graph = gs_module().Graph
        for n, p in zip(nodes, protos):
            self._orig_node[id(n)] = (p, dict(n.attrs))
            self._keep_alive.append(n)
            self.names.update(x for x in p.output if x)
            if p.name:
                self.names.add(p.name)
            for a in p.attribute:
                if a.type == AttributeProto.GRAPH and isinstance(n.attrs.get(a.name), Graph):
                    self._map_graph(n.attrs[a.name], a.g)

    # ------------------------------------------------------------------ editing helpers
    def fresh(self, base: str) -> str:
        """A tensor or node name not used anywhere in the model, derived from ``base``."""
        name = base
        k = 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name

    def constant(self, owner, base: str, array, exact: bool = False):
        """A new initializer (a gs Constant), owned by graph/function ``owner``.

        ``array`` is a numpy array or an existing gs Constant's values (kept as they are).
        With ``exact`` the name is ``base`` itself (the caller has freed it), else a fresh one.
        """
        gs = gs_module()
        name = base if exact else self.fresh(base)
        self.names.add(name)
        # np.array, not np.ascontiguousarray: the latter makes a 0-D value 1-D
        values = array if isinstance(array, gs.ir.tensor.LazyValues) else np.array(array, order="C")
        c = gs.Constant(name, values)
        self._new_consts.setdefault(id(owner), []).append(c)
        self._keep_alive.append(owner)
        return c

    def variable(self, base: str, dtype: Any = None):
        """A new, not yet produced tensor named after ``base``."""
        gs = gs_module()
        return gs.Variable(self.fresh(base), dtype=dtype)

    def node(self, op: str, base: str, inputs: list, outputs: list, attrs: dict | None = None, domain: str = ""):
        """A new gs Node (not yet placed in any graph)."""
        gs = gs_module()
        return gs.Node(op, self.fresh(base), attrs or {}, inputs, outputs, domain=domain or None)

    def remove_nodes(self, g, ids: set[int]) -> None:
        """Take the nodes whose ids are in ``ids`` out of graph ``g``, unlinking their tensors."""
        if not ids:
            return
        keep = []
        gone = []
        for n in g.nodes:
            (gone if id(n) in ids else keep).append(n)
        unlink_nodes(gone)
        g.nodes = keep

    def drop_initializer(self, owner, name: str) -> None:
        """Remove initializer ``name`` of graph ``owner`` on export (before IR 4, its input too)."""
        self._dropped.setdefault(id(owner), set()).add(name)

    def initializer_names(self, owner) -> list[str]:
        """Names of the initializers graph ``owner`` will export (original ones still kept, then new)."""
        gp = self._orig_graph.get(id(owner))
        dropped = self._dropped.get(id(owner), set())
        names = [t.name for t in gp.initializer if t.name not in dropped] if gp is not None else []
        names += [c.name for c in self._new_consts.get(id(owner), []) if c.name not in dropped]
        return names

    def original_input_names(self, owner) -> set[str]:
        gp = self._orig_graph.get(id(owner))
        return set() if gp is None else {vi.name for vi in gp.input}

    # ------------------------------------------------------------------ export
    def export(self) -> ModelProto:
        """The edited model as a new ModelProto (the imported one is not modified).

        The GsModel stays usable: further edits and exports continue from its current state.
        """
        out = ModelProto()
        _copy_fields(out, self.model, ("graph", "functions"))
        out.graph.CopyFrom(self._export_graph(self.graph, main=True))
        for f in self.graph.functions:
            out.functions.append(self._export_function(f))
        return out

    def _export_graph(self, g, main: bool = False) -> GraphProto:
        gs = gs_module()
        gp = self._orig_graph.get(id(g))
        out = GraphProto()
        if gp is not None:
            _copy_fields(out, gp, ("node", "initializer", "value_info"))
        else:
            out.name = g.name or "graph"
            for t in g.inputs:
                out.input.append(gs.exporters.onnx_exporter.OnnxExporter.export_value_info_proto(t, False))
            for t in g.outputs:
                out.output.append(gs.exporters.onnx_exporter.OnnxExporter.export_value_info_proto(t, False))
        for n in g.nodes:
            out.node.append(self._export_node(n))
        dropped = self._dropped.get(id(g), set())
        if gp is not None:
            for t in gp.initializer:
                if t.name not in dropped:
                    out.initializer.append(t)
        new_inputs = []
        for c in self._new_consts.get(id(g), []):
            if c.name not in dropped:
                out.initializer.append(_tensor_proto(c))
                new_inputs.append(c)
        if self.model.ir_version and self.model.ir_version < 4:
            # Before IR 4 every initializer is also a graph input (so passes create
            # initializers of subgraphs in the main graph, which subgraphs can read).
            listed = {vi.name for vi in out.input}
            for c in new_inputs:
                if c.name not in listed:
                    out.input.append(_value_info_of(c))
            if dropped:
                kept = [vi for vi in out.input if vi.name not in dropped]
                if len(kept) != len(out.input):
                    del out.input[:]
                    out.input.extend(kept)
        return out

    def _export_function(self, f) -> onnx.FunctionProto:
        fp = self._orig_func[id(f)]
        out = onnx.FunctionProto()
        _copy_fields(out, fp, ("node", "value_info"))
        for c in self._new_consts.get(id(f), []):
            out.node.append(onnx.helper.make_node("Constant", [], [c.name], value=_tensor_proto(c)))
        for n in f.nodes:
            out.node.append(self._export_node(n))
        return out

    def _export_node(self, n) -> NodeProto:
        gs = gs_module()
        p = NodeProto()
        orig = self._orig_node.get(id(n))
        snap: dict[str, Any] = {}
        po = None
        if orig is not None:
            po, snap = orig
            _copy_fields(p, po, ("input", "output", "attribute", "op_type", "domain", "name"))
        p.op_type = n.op
        if n.domain:
            p.domain = n.domain
        if n.name:
            p.name = n.name
        p.input.extend(t.name for t in n.inputs)
        p.output.extend(t.name for t in n.outputs)
        orig_attrs = {a.name: a for a in po.attribute} if po is not None else {}
        for k, v in n.attrs.items():
            if isinstance(v, gs.Graph):
                a = p.attribute.add()
                a.name = k
                a.type = AttributeProto.GRAPH
                a.g.CopyFrom(self._export_graph(v))
            elif k in orig_attrs and k in snap and snap[k] is v:
                p.attribute.append(orig_attrs[k])
            else:
                p.attribute.append(_make_attr(k, v))
        for k, a in orig_attrs.items():
            if k not in snap:  # a kind of attribute gs does not import: keep it as it was
                p.attribute.append(a)
        return p


def _make_attr(name: str, value: Any) -> AttributeProto:
    gs = gs_module()
    if isinstance(value, gs.Constant):
        return onnx.helper.make_attribute(name, _tensor_proto(value))
    return onnx.helper.make_attribute(name, value)


def _tensor_proto(c) -> onnx.TensorProto:
    gs = gs_module()
    if isinstance(c._values, gs.ir.tensor.LazyValues):
        t = onnx.TensorProto()
        t.CopyFrom(c._values.tensor)
        t.name = c.name
        return t
    return onnx.numpy_helper.from_array(np.asarray(c.values), c.name)


def _value_info_of(c) -> onnx.ValueInfoProto:
    arr = np.asarray(c.values)
    return onnx.helper.make_tensor_value_info(c.name, onnx.helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape)


# ---------------------------------------------------------------------- external data

_SAFE_LAZY: list = []


def _safe_lazy_class():
    """A gs LazyValues whose load() reads through :mod:`shapeinfer.external` (checked entry,
    the model's own folder, small tensors only) instead of onnx's reader (relative to the
    working directory, no size cap)."""
    if not _SAFE_LAZY:
        Lazy = gs_module().ir.tensor.LazyValues

        class ExternalValues(Lazy):
            def __init__(self, tensor, base_dir: str | None) -> None:
                super().__init__(tensor)
                self.base_dir = base_dir

            def load(self):
                from shapeinfer.external import read_external_tensor

                return np.array(read_external_tensor(self.tensor, self.base_dir))

        _SAFE_LAZY.append(ExternalValues)
    return _SAFE_LAZY[0]


def _guard_external_values(graph, base_dir: str | None) -> None:
    """Make every external gs Constant of ``graph`` (subgraphs and functions too) load its
    values through the safe reader, relative to ``base_dir``. Reading a value that is too big,
    missing or invalid raises ExternalDataError, which the passes treat as an unknown value."""
    gs = gs_module()
    cls = _safe_lazy_class()
    graphs = [*all_graphs(graph)]
    for f in getattr(graph, "functions", []):
        graphs.extend(all_graphs(f))
    for g in graphs:
        consts = [t for t in g.tensors().values() if isinstance(t, gs.Constant)]
        for n in g.nodes:
            consts.extend(v for v in n.attrs.values() if isinstance(v, gs.Constant))
        for c in consts:
            lazy = c._values
            if (
                isinstance(lazy, gs.ir.tensor.LazyValues)
                and not isinstance(lazy, cls)
                and isinstance(lazy.tensor, onnx.TensorProto)
                and lazy.tensor.data_location == onnx.TensorProto.EXTERNAL
            ):
                c._values = cls(lazy.tensor, base_dir)


# ---------------------------------------------------------------------- graph queries


def subgraphs(node) -> Iterator:
    """The gs graphs held in ``node``'s attributes."""
    Graph = gs_module().Graph
    for v in node.attrs.values():
        if isinstance(v, Graph):
            yield v


def all_graphs(g) -> Iterator:
    """``g`` and every graph nested in its nodes' attributes, outermost first."""
    yield g
    for n in g.nodes:
        for sg in subgraphs(n):
            yield from all_graphs(sg)


def implicit_inputs(node) -> list:
    """Outer-scope tensors that ``node``'s subgraphs read (their foreign tensors)."""
    out = []
    seen = set()
    for sg in subgraphs(node):
        for t in sg._foreign_tensors().values():
            if t.name and t.name not in seen:
                seen.add(t.name)
                out.append(t)
    return out


def producer(t):
    """The node producing tensor ``t`` in its graph, or None (input, initializer, outer scope)."""
    return t.inputs[0] if len(t.inputs) else None


def replace_uses(old, new) -> int:
    """Point every consumer of tensor ``old`` at ``new``; returns how many inputs changed.

    Consumers include nodes of nested subgraphs that read ``old`` from the outer scope.
    """
    if old is new:
        return 0
    count = 0
    for c in list(old.outputs):
        for k, t in enumerate(c.inputs):
            if t is old:
                list.__setitem__(c.inputs, k, new)
                list.append(new.outputs, c)
                count += 1
    list.clear(old.outputs)
    return count


def predecessors(nodes: list) -> list[list[int]]:
    """For each node of ``nodes`` (one graph), the positions of the nodes producing what it reads.

    Subgraph reads of outer tensors count as inputs of the node holding the subgraph.
    """
    prod: dict[str, int] = {}
    for k, n in enumerate(nodes):
        for t in n.outputs:
            if t.name:
                prod[t.name] = k
    preds: list[list[int]] = []
    for k, n in enumerate(nodes):
        ins = n.inputs if not n.attrs else list(n.inputs) + implicit_inputs(n)
        ps = []
        for t in ins:
            p = prod.get(t.name)
            if p is not None and p != k:
                ps.append(p)
        preds.append(ps)
    return preds


def toposort(g) -> bool:
    """Order ``g``'s nodes so producers come first, keeping the current order where it already is.

    Subgraph reads of outer tensors count as inputs. Returns True when the order changed.
    Among ready nodes the one earliest in the current order goes first (a lexicographic
    topological order, with a heap: O(n log n)); nodes on a cycle keep their order at the end.
    """
    nodes = list(g.nodes)
    preds = predecessors(nodes)
    if all(p < k for k, ps in enumerate(preds) for p in ps):
        return False
    indeg = [len(set(ps)) for ps in preds]
    users: list[list[int]] = [[] for _ in nodes]
    for k, ps in enumerate(preds):
        for p in set(ps):
            users[p].append(k)
    ready = [k for k, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, u)
    if len(order) < len(nodes):
        placed = set(order)
        order += [k for k in range(len(nodes)) if k not in placed]
    g.nodes = [nodes[k] for k in order]
    return True


def const_array(t) -> np.ndarray | None:
    """The value of a gs Constant tensor, or of a tensor produced by a Constant node, else None."""
    gs = gs_module()
    if isinstance(t, gs.Constant):
        try:
            return np.asarray(t.values)
        except Exception:
            return None
    p = producer(t)
    if p is not None and p.op == "Constant" and not p.domain:
        v = p.attrs.get("value")
        if isinstance(v, gs.Constant):
            try:
                return np.asarray(v.values)
            except Exception:  # external data that cannot be read: the value is unknown
                return None
        if "value_ints" in p.attrs:
            return np.array(p.attrs["value_ints"], dtype=np.int64)
        if "value_int" in p.attrs:
            return np.array(p.attrs["value_int"], dtype=np.int64)
        if "value_floats" in p.attrs:
            return np.array(p.attrs["value_floats"], dtype=np.float32)
        if "value_float" in p.attrs:
            return np.array(p.attrs["value_float"], dtype=np.float32)
    return None


def default_opset(model: ModelProto) -> int | None:
    """The model's default-domain opset version, or None when it imports none."""
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None
