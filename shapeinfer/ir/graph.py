"""The IR the passes edit: a light index over the ModelProto, its import and its link edits.

:class:`GraphModel` indexes a ModelProto as nodes and tensors with producer/consumer links,
which is what the passes need: :class:`Node` (``op``, ``name``, ``domain``, ``attrs``,
``inputs``, ``outputs``), :class:`Tensor` (``name``, ``inputs`` = its producer,
``outputs`` = its readers, nodes of nested subgraphs that read it from the outer scope
included) and :class:`Constant` (an initializer or a tensor attribute, values read lazily),
:class:`Graph` (``nodes``, ``inputs``, ``outputs``, ``functions`` on the main graph).
Attributes are decoded only when a pass reads them.

Cost is linear in the model: import is one walk over the protobuf; link edits go through
:func:`set_input`, :func:`set_inputs`, :func:`set_output`, :func:`replace_uses` and
:func:`unlink_nodes` (identity-based, in bulk). Why an index of our own rather than
onnx-graphsurgeon or onnx_ir: docs/decisions.md.

The IR is three modules, cut where the dependencies go one way:

- this one: the IR, :class:`GraphModel` (import, the editing helpers that create names,
  constants and nodes or drop initializers) and the link edits, which keep each node's
  ``dirty`` flag and each tensor's links consistent: they are the IR's invariants, so they
  live with it;
- :mod:`shapeinfer.ir.queries`: read-only walks (subgraphs, producers, order, constant
  values), which use the IR but nothing here uses them;
- :mod:`shapeinfer.ir.export`: writing the model back (:func:`~shapeinfer.ir.export.export_model`,
  called by the pass manager), which reads the IR and the GraphModel's export state and is never called
  from here otherwise.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable, Mapping
from itertools import repeat
from types import MappingProxyType
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

from shapeinfer.base.ir_version import initializers_are_inputs
from shapeinfer.io.external import tensor_array
from shapeinfer.io.onnxio import attribute_value
from shapeinfer.io.wire import NodeFields

_GRAPH_TYPES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


# ---------------------------------------------------------------------- the IR


class Tensor:
    """A value: ``inputs`` holds its producer (0 or 1 node), ``outputs`` its readers (one entry per read)."""

    __slots__ = ("dtype", "graph", "inputs", "name", "outputs")

    def __init__(self, name: str, dtype: Any = None, graph: Graph | None = None) -> None:
        self.name = name
        self.dtype = dtype
        self.graph = graph  # the graph that defines it (None: defined nowhere in the model)
        self.inputs: list[Node] = []
        self.outputs: list[Node] = []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Variable(Tensor):
    """A tensor computed at run time (or a graph input)."""

    __slots__ = ()


class Constant(Tensor):
    """A tensor whose value is stored in the model: an initializer or a tensor attribute.

    The value comes from ``proto`` (read on first use, wherever its data is:
    :func:`shapeinfer.io.external.tensor_array`) or from a numpy ``array``.
    """

    __slots__ = ("_array", "base_dir", "proto")

    def __init__(
        self,
        name: str,
        proto: TensorProto | None = None,
        array: np.ndarray | None = None,
        graph: Graph | None = None,
        base_dir: str | None = None,
    ) -> None:
        super().__init__(name, None, graph)
        self.proto = proto
        self._array = array
        self.base_dir = base_dir

    @property
    def shape(self) -> tuple[int, ...]:
        if self._array is not None:
            return tuple(self._array.shape)
        return tuple(self.proto.dims)

    @property
    def data_type(self) -> int:
        """The element type (a ``TensorProto`` data type)."""
        if self.proto is not None:
            return self.proto.data_type
        return onnx.helper.np_dtype_to_tensor_dtype(np.asarray(self._array).dtype)

    @property
    def values(self) -> np.ndarray:
        """The value as a numpy array (raises when it cannot be read)."""
        if self._array is None:
            self._array = tensor_array(self.proto, self.base_dir)
        return self._array

    def to_proto(self, name: str | None = None) -> TensorProto:
        """The value as a TensorProto named ``name`` (default: the tensor's own name)."""
        if self.proto is not None:
            t = TensorProto()
            t.CopyFrom(self.proto)
        else:
            t = onnx.numpy_helper.from_array(np.asarray(self._array))
        t.name = self.name if name is None else name
        return t


class Graph:
    """A graph (main graph, subgraph or function body): ``nodes`` in order, ``inputs``, ``outputs``."""

    __slots__ = ("functions", "inputs", "name", "nodes", "outputs", "parent", "proto")

    def __init__(self, name: str, proto: Any = None, parent: Graph | None = None) -> None:
        self.name = name
        self.proto = proto  # the GraphProto / FunctionProto it came from (None: built by a pass)
        self.parent = parent
        self.nodes: list[Node] = []
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self.functions: list[Graph] = []


class Node:
    """An op: ``attrs`` is decoded from ``proto`` on first access (subgraphs are :class:`Graph`)."""

    __slots__ = ("_attrs", "dirty", "domain", "graphs", "inputs", "name", "op", "orig", "outputs", "proto", "snap")

    def __init__(self, op: str, name: str = "", attrs: dict | None = None, domain: str = "") -> None:
        self.op = op
        self.name = name
        self.domain = domain
        self._attrs = attrs
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self.proto: NodeProto | None = None
        self.orig: tuple[str, str, str] | None = None  # (op, name, domain) of ``proto``, read once
        self.snap: dict | None = None  # the attrs as decoded, to tell what a pass changed
        self.graphs: Mapping[str, Any] = _NO_GRAPHS  # subgraph attributes, imported eagerly
        self.dirty = False  # inputs or outputs relinked, or a tensor it touches renamed (see the helpers)

    @property
    def attrs(self) -> dict:
        if self._attrs is None:
            self._attrs = dict(self.graphs)
            if self.proto is not None:
                for a in self.proto.attribute:
                    if a.type not in _GRAPH_TYPES and not a.ref_attr_name:
                        self._attrs[a.name] = _decode(a)
            self.snap = dict(self._attrs)
        return self._attrs

    @attrs.setter
    def attrs(self, value: dict) -> None:
        if self._attrs is None:
            _ = self.attrs  # take the snapshot first
        self._attrs = value

    def __repr__(self) -> str:
        return f"Node({self.op!r}, {self.name!r})"


def _decode(a: AttributeProto) -> Any:
    if a.type == AttributeProto.TENSOR:
        return Constant("", a.t)
    return attribute_value(a)


_HOLDS_GRAPHS: dict[tuple[str, str], bool] = {}  # (domain, op) -> _may_hold_graphs
_HOLDS_GRAPHS_DEFAULT: dict[str, bool] = {}  # op -> _may_hold_graphs, for the default domain ""

#: A node's ``graphs`` when it holds none (shared and read-only: import gives a node with
#: subgraphs its own dict, and nothing else writes into it).
_NO_GRAPHS: Mapping[str, Any] = MappingProxyType({})


def _may_hold_graphs(domain: str, op: str) -> bool:
    """False for a default-domain op whose schema has no graph attribute: onnxruntime refuses
    such a node carrying one, so import need not read its attributes. True otherwise."""
    if domain not in ("", "ai.onnx"):
        return True
    try:
        schema = onnx.defs.get_schema(op, "")
    except Exception:
        return True  # not a known op: look
    return any(a.type in _GRAPH_TYPES for a in schema.attributes.values())


class GraphModel:
    """A model indexed for editing, with what export needs to write it back losslessly.

    ``graph`` is the main graph (subgraphs are :class:`Graph` values in node attributes,
    model-local functions in ``graph.functions``). Passes edit it, create initializers with
    :meth:`constant` (scoped to the graph or function they belong to), drop initializers with
    :meth:`drop_initializer`, and call :meth:`export` for the new ModelProto.
    """

    def __init__(
        self,
        model: ModelProto,
        base_dir: str | None = None,
        source: NodeFields | None = None,
        reads: list | None = None,
    ) -> None:
        self.model = model
        self.base_dir = base_dir
        self.names: set[str] = set()
        #: when set, export raises the default-domain opset import of the model, and of each
        #: function that imports one, to at least this version
        self.default_opset_floor: int | None = None
        self._new_consts: dict[int, list[Constant]] = {}
        self._dropped: dict[int, set[str]] = {}
        self._keep_alive: list = []
        # ``reads``: what inference read of each main-graph node (``Result.node_reads``)
        self.graph = self._import_graph(model.graph, {}, None, reads)
        # ``source``: the bytes ``model.graph.node`` was parsed from; export copies the fields of
        # unchanged main-graph nodes from it instead of copying their NodeProtos
        self._source = source if source is not None and len(source.starts) == len(self.graph.nodes) + 1 else None
        self._source_pos: dict[Node, int] = {}
        if self._source is not None:
            self._source_pos = dict(zip(self.graph.nodes, range(len(self.graph.nodes))))
        #: (the ModelProto :meth:`export` last wrote, its main graph's node fields), when the
        #: export wrote them from ``source``
        self.written_nodes: tuple[ModelProto, bytes] | None = None
        self._written_node_fields = b""
        for fp in model.functions:
            f = Graph(fp.name, fp, None)
            scope: dict[str, Tensor] = {}
            for name in fp.input:
                t = Variable(name, graph=f)
                scope[name] = t
                f.inputs.append(t)
            self.names.update(fp.input)
            self.names.update(fp.output)
            self._import_nodes(f, fp.node, scope)
            f.outputs = [scope.get(o) or Variable(o) for o in fp.output]
            self.graph.functions.append(f)

    # ------------------------------------------------------------------ import
    def _import_graph(self, gp: GraphProto, outer: Any, parent: Graph | None, reads: list | None = None) -> Graph:
        g = Graph(gp.name, gp, parent)
        # A subgraph sees the outer names through a chain (no copy: linear in nested models).
        scope: Any = ChainMap({}, *outer.maps) if isinstance(outer, ChainMap) else ChainMap({}, outer) if outer else {}
        names = self.names
        for t in gp.initializer:
            scope[t.name] = Constant(t.name, t, graph=g, base_dir=self.base_dir)
            names.add(t.name)
        for vi in gp.input:
            t = scope.get(vi.name)
            if t is None or t.graph is not g:
                t = Variable(vi.name, graph=g)
                scope[vi.name] = t
            g.inputs.append(t)
            names.add(vi.name)
        self._import_nodes(g, gp.node, scope, reads)
        for vi in gp.output:
            t = scope.get(vi.name)
            if t is None:
                t = scope[vi.name] = Variable(vi.name)
            g.outputs.append(t)
        return g

    def _import_nodes(self, g: Graph, protos, scope: dict[str, Tensor], reads: list | None = None) -> None:
        # The hot loop of every optimize run (one step per node): names bound locally, nodes
        # and their output tensors built without calling __init__ (the same fields, set here).
        # ``reads``: (op_type, domain, inputs, outputs) of each node, as inference read them
        # (a None entry, or no list: read here).
        if reads is None or len(reads) != len(protos):
            reads = repeat(None)
        names_add = self.names.add
        nodes_append = g.nodes.append
        scope_get = scope.get
        graph_types = _GRAPH_TYPES
        holds_graphs = _HOLDS_GRAPHS
        holds_default = _HOLDS_GRAPHS_DEFAULT
        new_node = Node.__new__
        new_var = Variable.__new__
        no_graphs = _NO_GRAPHS
        for p, r in zip(protos, reads):
            n = new_node(Node)
            if r is None:
                op = p.op_type
                domain = p.domain
                in_names = p.input[:]  # (a slice is read in C at once; iterating is not)
                out_names = p.output[:]
            else:
                op, domain, in_names, out_names = r
            n.op = op
            n.domain = domain
            name = n.name = p.name
            n.orig = (op, name, domain)
            n._attrs = None
            n.proto = p
            n.snap = None
            n.graphs = no_graphs
            n.dirty = False
            ins = n.inputs = list(map(scope_get, in_names))
            if None in ins or "" in in_names:
                for k, x in enumerate(in_names):
                    if not x:
                        ins[k] = Variable("")
                    elif ins[k] is None:
                        t = scope_get(x)  # (an input may repeat a name read before its definition)
                        ins[k] = t if t is not None else scope.setdefault(x, Variable(x))
            for t in ins:
                t.outputs.append(n)
            if domain:
                holds = holds_graphs.get((domain, op))
                if holds is None:
                    holds = holds_graphs[(domain, op)] = _may_hold_graphs(domain, op)
            else:
                holds = holds_default.get(op)
                if holds is None:
                    holds = holds_default[op] = _may_hold_graphs(domain, op)
            if holds:
                for a in p.attribute:
                    if a.type in graph_types:
                        if n.graphs is no_graphs:
                            n.graphs = {}
                        if a.type == AttributeProto.GRAPH:
                            n.graphs[a.name] = self._import_graph(a.g, scope, g)
                        else:
                            n.graphs[a.name] = [self._import_graph(sg, scope, g) for sg in a.graphs]
            if len(out_names) == 1:  # the common case: one new tensor
                x = out_names[0]
                if x and scope_get(x) is None:
                    t = new_var(Variable)
                    t.name = x
                    t.dtype = None
                    t.graph = g
                    t.inputs = [n]
                    t.outputs = []
                    scope[x] = t
                    names_add(x)
                    n.outputs = [t]
                    if name:
                        names_add(name)
                    nodes_append(n)
                    continue
            outs = n.outputs = []
            for x in out_names:
                if x:
                    t = scope_get(x)
                    if t is None or t.inputs or t.graph is not None:
                        t = new_var(Variable)
                        t.name = x
                        t.dtype = None
                        t.graph = g
                        t.inputs = [n]
                        t.outputs = []
                        scope[x] = t
                    else:
                        t.graph = g  # read earlier in an unsorted graph: this is its definition
                        t.inputs.append(n)
                    names_add(x)
                else:
                    t = Variable("")
                    t.inputs.append(n)
                outs.append(t)
            if name:
                names_add(name)
            nodes_append(n)

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

    def constant(self, owner: Graph, base: str, array, exact: bool = False) -> Constant:
        """A new initializer owned by graph/function ``owner``.

        ``array`` is a numpy array or an existing :class:`Constant` (its stored value is reused).
        With ``exact`` the name is ``base`` itself (the caller has freed it), else a fresh one.
        """
        name = base if exact else self.fresh(base)
        self.names.add(name)
        if isinstance(array, Constant):
            c = Constant(name, array.proto, array._array, owner, array.base_dir)
        else:
            # np.array, not np.ascontiguousarray: the latter makes a 0-D value 1-D
            c = Constant(name, None, np.array(array, order="C"), owner)
        self._new_consts.setdefault(id(owner), []).append(c)
        self._keep_alive.append(owner)
        return c

    def variable(self, base: str, dtype: Any = None) -> Variable:
        """A new, not yet produced tensor named after ``base``."""
        return Variable(self.fresh(base), dtype)

    def node(
        self,
        op: str,
        base: str,
        inputs: list,
        outputs: list,
        attrs: dict | None = None,
        domain: str = "",
        exact: bool = False,
    ) -> Node:
        """A new node reading ``inputs`` and producing ``outputs`` (not yet placed in any graph),
        named fresh from ``base``; with ``exact`` named ``base`` itself (the caller has freed it)."""
        n = Node(op, base if exact else self.fresh(base), dict(attrs or {}), domain)
        n.snap = {}
        for t in inputs:
            n.inputs.append(t)
            t.outputs.append(n)
        for t in outputs:
            n.outputs.append(t)
            t.inputs.append(n)
        return n

    def remove_nodes(self, g: Graph, ids: set[int]) -> None:
        """Take the nodes whose ids are in ``ids`` out of graph ``g``, unlinking their tensors."""
        if not ids:
            return
        keep = []
        gone = []
        for n in g.nodes:
            (gone if id(n) in ids else keep).append(n)
        unlink_nodes(gone)
        g.nodes = keep

    @property
    def lists_initializers_as_inputs(self) -> bool:
        """Whether the written graphs list their initializers among their inputs: before IR 4
        every initializer is also a graph input, so export lists the ones the passes create."""
        return initializers_are_inputs(self.model.ir_version)

    def drop_initializer(self, owner: Graph, name: str) -> None:
        """Remove initializer ``name`` of graph ``owner`` on export (before IR 4, its input too)."""
        self._dropped.setdefault(id(owner), set()).add(name)

    def initializer_names(self, owner: Graph) -> list[str]:
        """Names of the initializers graph ``owner`` will export (original ones still kept, then new)."""
        gp = owner.proto if isinstance(owner.proto, GraphProto) else None
        dropped = self._dropped.get(id(owner), set())
        names = [t.name for t in gp.initializer if t.name not in dropped] if gp is not None else []
        names += [c.name for c in self._new_consts.get(id(owner), []) if c.name not in dropped]
        return names

    def new_constants(self, owner: Graph) -> list[Constant]:
        """The initializers :meth:`constant` created for graph ``owner``, in order (dropped ones too)."""
        return list(self._new_consts.get(id(owner), ()))

    def original_input_names(self, owner: Graph) -> set[str]:
        gp = owner.proto if isinstance(owner.proto, GraphProto) else None
        return set() if gp is None else {vi.name for vi in gp.input}


# ---------------------------------------------------------------------- link edits


def _unlink(lst: list, obj) -> None:
    """Remove one occurrence of ``obj`` (by identity) from a link list."""
    for i, x in enumerate(lst):
        if x is obj:
            del lst[i]
            return


def set_input(node: Node, k: int, new: Tensor) -> None:
    """``node`` reads ``new`` as its input ``k``."""
    old = node.inputs[k]
    if old is new:
        return
    _unlink(old.outputs, node)
    node.inputs[k] = new
    new.outputs.append(node)
    node.dirty = True


def set_inputs(node: Node, new: list[Tensor]) -> None:
    """Replace all of ``node``'s inputs with ``new``."""
    for t in node.inputs:
        _unlink(t.outputs, node)
    node.inputs[:] = new
    for t in new:
        t.outputs.append(node)
    node.dirty = True


def append_input(node: Node, t: Tensor) -> None:
    """``node`` reads ``t`` as one more input."""
    node.inputs.append(t)
    t.outputs.append(node)
    node.dirty = True


def set_output(node: Node, k: int, new: Tensor) -> None:
    """``node.outputs[k] = new``: ``new`` is produced by ``node`` and no longer by anything else."""
    old = node.outputs[k]
    if old is new:
        return
    _unlink(old.inputs, node)
    node.outputs[k] = new
    for p in new.inputs:
        _unlink(p.outputs, new)
        p.dirty = True
    new.inputs[:] = [node]
    node.dirty = True


def rename(t: Tensor, name: str) -> None:
    """Give tensor ``t`` a new name (its producer and readers are written anew on export)."""
    t.name = name
    for n in t.inputs:
        n.dirty = True
    for n in t.outputs:
        n.dirty = True


def unlink_nodes(nodes) -> None:
    """Detach ``nodes`` from every tensor they read or write, in one sweep per tensor."""
    # Nodes and tensors hash by identity, so sets of them do the bookkeeping in C.
    gone = set(nodes)
    touched: set[Tensor] = set()
    for n in gone:
        touched.update(n.inputs)
        touched.update(n.outputs)
    isdisjoint = gone.isdisjoint
    for t in touched:
        if not isdisjoint(t.outputs):
            t.outputs[:] = [c for c in t.outputs if c not in gone]
        if not isdisjoint(t.inputs):
            t.inputs[:] = [p for p in t.inputs if p not in gone]
    for n in gone:
        n.inputs.clear()
        n.outputs.clear()


def replace_uses(old: Tensor, new: Tensor) -> int:
    """Point every reader of tensor ``old`` at ``new``; returns how many inputs changed.

    Readers include nodes of nested subgraphs that read ``old`` from the outer scope.
    """
    if old is new:
        return 0
    count = 0
    seen: set[int] = set()
    for c in old.outputs:
        if id(c) in seen:
            continue
        seen.add(id(c))
        for k, t in enumerate(c.inputs):
            if t is old:
                c.inputs[k] = new
                new.outputs.append(c)
                c.dirty = True
                count += 1
    old.outputs.clear()
    return count


# ---------------------------------------------------------------------- what the import knows of ops


def may_hold_subgraphs(ops: Iterable[tuple[str, str]]) -> bool:
    """False when no ``(domain, op_type)`` of ``ops`` can hold a subgraph (see
    :func:`_may_hold_graphs`: a default-domain op whose schema has no graph attribute)."""
    for domain, op in set(ops):
        holds = _HOLDS_GRAPHS.get((domain, op))
        if holds is None:
            holds = _HOLDS_GRAPHS[(domain, op)] = _may_hold_graphs(domain, op)
        if holds:
            return True
    return False
