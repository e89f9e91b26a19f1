"""onnx-shape-inference's ``infer_symbolic_shapes``, answered by shapeinfer.

::

    # from onnx_shape_inference import infer_symbolic_shapes, SYM_DATA_KEY
    from shapeinfer.compat.onnx_shape_inference import infer_symbolic_shapes, SYM_DATA_KEY

    model = infer_symbolic_shapes(model)  # an onnx_ir.Model, modified in place and returned

Needs ``onnx_ir`` (``pip install onnx-ir``, or shapeinfer's ``test`` extra); onnx-shape-inference
itself is not needed. Same signature, same in-place contract, same merge policies: each value's
inferred type is merged with what the value already has as onnx-shape-inference 0.4 merges it,

- ``refine`` (default): an element type or a shape the value lacks is set; in a shape of the same
  rank, a dim is replaced only by a more specific one (an integer over a name, a name over an
  unknown dim); a declared shape of another rank, a declared dim that differs, stay;
- ``strict``: as ``refine``, after raising :class:`ShapeInferenceError` ("Shape inference failed
  for ::Op", from the ``ValueError`` naming the value) where the value has another rank, an
  integer dim of another value or another element type than the inferred one;
- ``override``: what is inferred replaces what the value has (what is not inferred stays);
- ``skip``: only what the value lacks is set, and the errors inference finds are logged
  (``Shape inference error: ...``) instead of raised;

with the same exceptions (:class:`OpUsageError` for a node with too few inputs, a required input
or attribute left out, whatever the policy, where inference can say nothing of its outputs;
:class:`ShapeInferenceError` for a node whose inputs or attributes inference refuses, except
inputs that cannot broadcast, whose output the original leaves unknown silently: both
``ValueError``, built and printed as the original's), the same warnings (``No shape inference
registered for domain::Op`` once per op and graph, logger ``onnx_shape_inference._engine``, unless
``warn_on_missing=False``; a model-local function that calls itself, logger
``onnx_shape_inference._functions``), its names for the dims it invents (``_d0``, ``_d1``... past
every name the model uses, written on graph inputs' and node inputs' unnamed dims too), its
spelling of expressions (sympy's: ``floor(H/2)``, ``-floor(-N/2)``, ``2*N``), and
:data:`SYM_DATA_KEY` metadata (the JSON list of a value's elements, ``["N", 3]``, an unknown one
named as a new dim) on the outputs of the ops whose values it tracks (Shape, Gather, Concat,
Slice, arithmetic...) and of model-local function calls, plus their ``const_value`` for a 0-d or
1-d value of integers. A value that carries a ``const_value`` without being an initializer is
read as the constant it holds, as the original reads it. ``adopt_declared_symbols`` (default
True): under ``refine`` and ``strict``, a dim inference invents takes the name a ``value_info`` or
graph output declares for it (also through an expression: ``2*_d0`` declared ``2*dnz``), on
every value it flows to; a declared integer is never taken for an invented dim (a data-dependent
count stays a symbol, as in the original).

How the results differ from onnx-shape-inference's:

- dims are shapeinfer's: what they hold is checked (a declaration is a claim: it is kept on the
  value as the policy says, but the dims downstream follow what the model computes, where the
  original carries a declared dim forward), and more are known (expressions through Reshape,
  Slice, Resize, Loop, If...); where the original's dims differ from onnxruntime's (a slice it
  assumes in bounds, the last window of a ceil_mode pool that starts past the input) they are
  onnxruntime's;
- nothing is written when an exception is raised (the original has modified the values before
  the failing node); a node onnxruntime refuses may raise where the original infers, or the
  reverse (each checks what its own rules read);
- with ``adopt_declared_symbols=False`` no declared name is carried anywhere: values downstream
  of a declared one get the invented name where the original carries the declared one;
- only ``infer_symbolic_shapes`` and its constants and exceptions are offered: not the original's
  extension API (its ``registry`` of per-op functions, ``ShapeInferenceContext``,
  ``broadcast_shapes``): an op shapeinfer has no rule for is inferred by onnx's own per-node
  inference, else left unknown with the warning above.

Of the original's own tests (0.4.0), tests/osi_suite/osi_harness.py gives the figures and the
reason for each difference (the README's drop-in section quotes them).

shapeinfer's own diagnostics are logged at INFO (logger ``shapeinfer.compat``), silent unless
logging is configured.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, get_args

import onnx

from shapeinfer.base import codes
from shapeinfer.compat._osi_spelling import Spelling, invented_input_dims, renames, taken_names
from shapeinfer.document import Document
from shapeinfer.inference.engine import Result
from shapeinfer.io.onnxio import graph_path, graphs_with_paths, type_dims
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

if TYPE_CHECKING:
    import onnx
    import onnx_ir as ir

__all__ = ["SYM_DATA_KEY", "OpUsageError", "ShapeInferenceError", "ShapeMergePolicy", "infer_symbolic_shapes"]

#: The ``metadata_props`` key under which a value's known elements are stored (the original's).
SYM_DATA_KEY = "pkg.onnx_shape_inference.sym_data"

ShapeMergePolicy = Literal["skip", "override", "refine", "strict"]

logger = logging.getLogger("shapeinfer.compat")
#: the loggers the original's warnings come from: scripts filter them by name
_engine_logger = logging.getLogger("onnx_shape_inference._engine")
_context_logger = logging.getLogger("onnx_shape_inference._context")
_functions_logger = logging.getLogger("onnx_shape_inference._functions")


class ShapeInferenceError(ValueError):
    """A node inference refuses (onnx-shape-inference's exception: same fields, same text)."""

    def __init__(self, *, node_name: str | None, op_type: str, domain: str, message: str) -> None:
        self.node_name = node_name
        self.op_type = op_type
        self.domain = domain
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        op_id = f"{self.domain}::{self.op_type}" if self.domain else self.op_type
        node_desc = f" (node {self.node_name!r})" if self.node_name else ""
        return f"{op_id}{node_desc}: {self.message}"


class OpUsageError(ValueError):
    """A malformed node: too few inputs, a missing required input or attribute
    (onnx-shape-inference's exception: same fields, same text)."""

    def __init__(self, node: ir.Node, message: str) -> None:
        self.node = node
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        op_id = f"{self.node.domain}::{self.node.op_type}" if self.node.domain else self.node.op_type
        node_desc = f" (node {self.node.name!r})" if self.node.name else ""
        return f"{op_id}{node_desc}: {self.message}"


def _onnx_ir():
    try:
        import onnx_ir
    except ModuleNotFoundError as e:  # pragma: no cover  (onnx_ir is a test dependency)
        raise ModuleNotFoundError(
            "shapeinfer.compat.onnx_shape_inference works on onnx_ir models: pip install onnx-ir"
        ) from e
    return onnx_ir


# ------------------------------------------------------------------------------ which errors raise

#: Codes of a malformed node (an input, an output or an attribute its op requires is missing, or
#: there are more or fewer than its schema takes): the original's OpUsageError, whatever the policy,
#: where inference can say nothing of the node's outputs (the original checks only what its rules read).
_USAGE = {
    codes.WRONG_INPUT_OUTPUT_COUNT,
    codes.MISSING_ATTRIBUTE_OR_OPERAND,
    codes.CONSTANT_WITHOUT_VALUE,
    codes.OPTIONAL_WITHOUT_TYPE,
}

#: Error codes that say nothing about a node's own inputs and attributes (a declaration, the
#: file, the graph's order, a condition on the sizes): never raised.
_NOT_RAISED = {
    codes.DECLARED_SHAPE_MISMATCH,  # a declaration: the policy decides
    codes.EXTERNAL_DATA_UNREADABLE,
    codes.TENSOR_DEFINED_TWICE,
    codes.GRAPH_ORDER_OR_CYCLE,
    codes.UNDEFINED_TENSOR,
    codes.RECURSIVE_FUNCTION,
    codes.FUNCTION_CALL_ARITY,
    codes.UNSATISFIABLE_GUARD,
    codes.INVALID_INITIALIZER,
}


def _raised(d) -> bool:
    if d.code == codes.BROADCAST_INCOMPATIBLE and "cannot broadcast" in d.message:
        return False  # the original leaves such an output's shape unknown, silently
    return d.severity == "error" and d.op_type is not None and d.index is not None and d.code not in _NOT_RAISED


# ------------------------------------------------------------------------------ the model's graphs


def _subgraphs(ir, node: ir.Node, path: str, k: int) -> Iterator[tuple[str, ir.Graph]]:
    """``(path, graph)`` for each subgraph of ``node``, the ``k``-th node of the graph at ``path``,
    keyed as ``Result.graph_facts`` keys them (the serialised model keeps the node order)."""
    for name, attr in node.attributes.items():
        if attr.is_ref():
            continue
        if attr.type == ir.AttributeType.GRAPH:
            yield graph_path(path, k, name), attr.as_graph()
        elif attr.type == ir.AttributeType.GRAPHS:
            for j, g in enumerate(attr.as_graphs()):
                yield graph_path(path, k, f"{name}[{j}]"), g


def _ir_graphs(ir, graph: ir.Graph, path: str = "main") -> Iterator[tuple[str, ir.Graph]]:
    """``(path, graph)`` for ``graph`` and every subgraph in it, parents first."""
    yield path, graph
    for k, node in enumerate(graph):
        for sub_path, sub in _subgraphs(ir, node, path, k):
            yield from _ir_graphs(ir, sub, sub_path)


def _add_constant_values(ir, model: ir.Model, proto: onnx.ModelProto) -> None:
    """Write as initializers of ``proto`` the values of ``model`` that hold a ``const_value``
    without being an initializer, a graph input or a node's output (onnx_ir lets a value carry
    its constant, and the original reads it; the serialiser writes only initializers)."""
    protos = dict(graphs_with_paths(proto.graph))
    for path, graph in _ir_graphs(ir, model.graph):
        g = protos.get(path)
        if g is None:
            continue
        have = {t.name for t in g.initializer} | {i.name for i in g.input}
        for node in graph:
            for v in node.inputs:
                if v is None or v.const_value is None or not v.name or v.name in have or v.producer() is not None:
                    continue
                try:
                    t = ir.serde.serialize_tensor(v.const_value)
                except Exception:  # a tensor onnx_ir cannot write: the value stays unknown
                    continue
                have.add(v.name)
                t.name = v.name
                g.initializer.append(t)


def _forget_declarations(proto: onnx.ModelProto, names: bool) -> None:
    """Clear the dims the main graph's ``value_info`` and outputs declare: their integers (the
    original relates a declared integer to nothing: a data-dependent count stays a symbol, where
    inference would take the declared size), and with ``names`` their symbols too (inference then
    adopts no declared name). The declarations stay on the caller's values, where the policy
    keeps them. (A subgraph's declarations stay: the original reads a branch's or body's
    declared outputs as what the node gives.)"""
    g = proto.graph
    for vi in (*g.output, *g.value_info):
        for d in type_dims(vi.type):
            if d.HasField("dim_value") or (names and d.HasField("dim_param")):
                d.Clear()


# ------------------------------------------------------------------------------ merging, as the original merges


def _more_specific(ir, inferred, existing) -> bool:
    """The original's order: an integer over anything else, a name over an unknown dim."""
    if isinstance(inferred, int):
        return not isinstance(existing, int)
    return (
        isinstance(inferred, ir.SymbolicDim)
        and inferred.value is not None
        and isinstance(existing, ir.SymbolicDim)
        and existing.value is None
    )


def _refined(ir, existing: ir.Shape, inferred: ir.Shape) -> ir.Shape | None:
    """``existing`` with each dim ``inferred`` knows better replaced, or None if nothing changes
    (a shape of another rank changes nothing)."""
    if existing.rank() != inferred.rank():
        return None
    dims, changed = [], False
    for e, i in zip(existing.dims, inferred.dims):
        if _more_specific(ir, i, e):
            dims.append(i)
            changed = True
        else:
            dims.append(e)
    return ir.Shape(dims) if changed else None


def _conflict(value: ir.Value, existing: ir.Shape, inferred: ir.Shape) -> str | None:
    """The original's strict-policy ValueError text for two shapes, or None."""
    if existing.rank() != inferred.rank():
        return f"Shape rank mismatch for {value.name}: existing {existing.rank()} vs inferred {inferred.rank()}"
    for i, (e, d) in enumerate(zip(existing.dims, inferred.dims)):
        if isinstance(e, int) and isinstance(d, int) and e != d:
            return f"Shape conflict for {value.name} at dim {i}: existing {e} vs inferred {d}"
    return None


class _Write:
    """What is to be set on one value: its type (a non-tensor one), dtype and shape."""

    __slots__ = ("const", "dtype", "shape", "sym", "type", "value")

    def __init__(self, value: ir.Value) -> None:
        self.value = value
        self.type = None
        self.dtype = None
        self.shape = None
        self.sym = None
        self.const = None


def _merge(ir, value: ir.Value, inferred_type, inferred_dtype, inferred_shape, policy: str, w: _Write) -> str | None:
    """Merge one inferred type into ``w`` as the original's ``set_type`` / ``set_dtype`` /
    ``set_shape`` do under ``policy``; returns the strict policy's ValueError text, or None."""
    if inferred_type is not None:  # a sequence, optional or sparse type
        existing = value.type
        if existing is None or policy == "override":
            w.type = inferred_type
        elif policy == "strict":
            if type(existing) is not type(inferred_type):
                return (
                    f"Type kind mismatch for {value.name}: existing {type(existing).__name__} "
                    f"vs inferred {type(inferred_type).__name__}"
                )
            if existing != inferred_type:
                return f"Type conflict for {value.name}: existing {existing!r} vs inferred {inferred_type!r}"
        return None
    if inferred_shape is not None:
        existing = value.shape
        if existing is None or policy == "override":
            w.shape = inferred_shape
        elif policy in ("refine", "strict"):
            if policy == "strict":
                why = _conflict(value, existing, inferred_shape)
                if why:
                    return why
            w.shape = _refined(ir, existing, inferred_shape)
    if inferred_dtype is not None:
        existing = value.dtype
        if existing is None or policy == "override":
            w.dtype = inferred_dtype
        elif policy == "strict" and existing != inferred_dtype:
            return f"Dtype conflict for {value.name}: existing {existing} vs inferred {inferred_dtype}"
    return None


def _ir_type(ir, f: Fact, spell: Spelling):
    """``(type, dtype, shape)`` to set for fact ``f``: ``type`` for a sequence, optional or sparse
    tensor (complete ones only), else the tensor's dtype and shape (each None where unknown)."""
    if f.kind == "tensor":
        dtype = ir.DataType(f.dtype) if f.dtype else None
        shape = None if f.shape is None else ir.Shape([spell.dim(ir, d) for d in f.shape])
        return None, dtype, shape
    t = _nested_type(ir, f)
    return t, None, None


def _nested_type(ir, f: Fact | None):
    if f is None:
        return None
    if f.kind == "tensor":
        return ir.TensorType(ir.DataType(f.dtype)) if f.dtype else None
    if f.kind == "sparse_tensor":
        return ir.SparseTensorType(ir.DataType(f.dtype)) if f.dtype else None
    if f.kind in ("sequence", "optional"):
        elem = _nested_type(ir, f.elem)
        if elem is None:
            return None
        return ir.SequenceType(elem) if f.kind == "sequence" else ir.OptionalType(elem)
    return None  # maps: onnx_ir has no type for them


_INT_TYPES = {2, 3, 4, 5, 6, 7, 12, 13}  # uint8, int8, uint16, int16, int32, int64, uint32, uint64

#: The ops whose outputs' known elements the original records (SYM_DATA_KEY): shape arithmetic.
_SYM_DATA_OPS = frozenset(
    {"Shape", "Size", "Gather", "Concat", "Slice", "Split", "Squeeze", "Unsqueeze", "Reshape", "Cast", "Identity"}
    | {"Where", "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Floor", "Ceil", "Neg"}
)


def _sym_data(ir, f: Fact, spell: Spelling) -> tuple[str, list | None] | None:
    """The SYM_DATA_KEY text of a node output with fact ``f`` (an integer tensor some of whose
    elements are known: the flattened list, as the original stores it, an unknown element named
    as a new dim) and the integers for its ``const_value`` (a 0-d or 1-d value whose elements are
    all integers; else None)."""
    if f.kind != "tensor" or f.dtype not in _INT_TYPES or f.shape is None or f.value is None:
        return None
    if all(v is None for v in f.value):
        return None
    elems = [v if type(v) is int else spell.mint(ir) if v is None else spell.dim(ir, v) for v in f.value]
    if not all(type(v) is int or isinstance(v, ir.SymbolicDim) for v in elems):
        return None
    text = json.dumps([v if type(v) is int else str(v.value) for v in elems])
    ints = elems if len(f.shape) <= 1 and all(type(v) is int for v in elems) else None
    return text, ints


# ------------------------------------------------------------------------------ the entry point


def infer_symbolic_shapes(
    model: ir.Model,
    *,
    policy: ShapeMergePolicy = "refine",
    warn_on_missing: bool = True,
    adopt_declared_symbols: bool = True,
) -> ir.Model:
    """Infer every value's type and shape in ``model`` (an ``onnx_ir.Model``), in place, and
    return ``model``: onnx-shape-inference's ``infer_symbolic_shapes`` (see the module docstring
    for the policies, the exceptions and how the results differ).

    Raises :class:`OpUsageError` for a malformed node, :class:`ShapeInferenceError` for a node
    inference refuses (logged instead under ``policy="skip"``) and, under ``policy="strict"``,
    for a value whose type or integer dims contradict the inferred ones. Nothing is written
    when it raises.
    """
    ir = _onnx_ir()
    if not isinstance(model, ir.Model):
        raise TypeError(f"infer_symbolic_shapes takes an onnx_ir.Model, not {type(model).__name__}")
    if policy not in get_args(ShapeMergePolicy):
        raise ValueError(f"policy must be one of {', '.join(get_args(ShapeMergePolicy))}, not {policy!r}")
    proto = ir.serde.serialize_model(model)
    _add_constant_values(ir, model, proto)
    # the original relates a declared name to an inferred dim only where it refines
    _forget_declarations(proto, names=not adopt_declared_symbols or policy in ("skip", "override"))
    result = Document.adopt(proto).infer(reading="onnx")  # the ir.Model is annotated below, not the proto
    graphs = dict(_ir_graphs(ir, model.graph))
    for d in result.diagnostics:
        logger.log(logging.INFO, "%s", d)

    _raise_errors(ir, model, result, graphs, policy)
    _warn(result, graphs, warn_on_missing)

    invented = invented_input_dims(proto, result)
    dim_names = renames(proto, result, invented)
    spell = Spelling(dim_names, set(result.fresh_symbols), taken_names(proto))
    if adopt_declared_symbols and policy in ("refine", "strict"):
        _adopt(ir, result, graphs, spell)
    writes = _plan(ir, model, result, graphs, spell, policy)

    # graph inputs' anonymous dims get their names, as the original names them before it starts
    by_input = {}
    for name, axis, s in invented:
        by_input.setdefault(name, {})[axis] = dim_names[s]
    for value in model.graph.inputs:
        names = by_input.get(value.name)
        if names and value.shape is not None:
            value.shape = ir.Shape(
                [
                    ir.SymbolicDim(names[i]) if i in names and isinstance(x, ir.SymbolicDim) and x.value is None else x
                    for i, x in enumerate(value.shape.dims)
                ]
            )
    for w in writes:
        v = w.value
        if w.type is not None:
            v.type = w.type
        if w.dtype is not None:
            v.dtype = w.dtype
        if w.shape is not None:
            v.shape = w.shape
        if w.sym is not None:
            v.metadata_props[SYM_DATA_KEY] = w.sym
        if w.const is not None:
            v.const_value = w.const
    # as the original, which names every node input's unknown dims before the node is inferred
    for graph in graphs.values():
        for node in graph:
            for v in node.inputs:
                if v is not None and v.shape is not None and any(_anonymous(ir, x) for x in v.shape.dims):
                    v.shape = ir.Shape([spell.mint(ir) if _anonymous(ir, x) else x for x in v.shape.dims])
    return model


def _anonymous(ir, d) -> bool:
    return isinstance(d, ir.SymbolicDim) and d.value is None


def _adopt(ir, result: Result, graphs: dict, spell: Spelling) -> None:
    """Adopt the names a value's declared dims give the symbols inference invented, where the
    declared dim and the inferred one are equal and solve for the one invented symbol in it as an
    integer polynomial of the others (``2*_d0`` declared ``2*dnz``: ``_d0`` is ``dnz``;
    ``past + _d1`` declared ``total``: ``_d1`` is ``total - past``), as the original's
    anchor pass does (inference itself adopts a name declared for the invented symbol alone)."""
    import sympy

    fresh = set(result.fresh_symbols) - set(result.join_symbols)
    assumed = _assumed_over(result)
    for path, graph in graphs.items():
        facts = result.graph_facts.get(path, {})
        for node in graph:
            for value in node.outputs:
                f = facts.get(value.name) if value is not None and value.name else None
                declared = value.shape if value is not None else None
                if f is None or f.kind != "tensor" or f.shape is None or declared is None:
                    continue
                inferred = assumed.get((path, value.name), f.shape)
                if len(declared) != len(inferred):
                    continue
                for e, d in zip(declared.dims, inferred):
                    if d is None or not (isinstance(e, ir.SymbolicDim) and e.value and D.is_symbolic(d)):
                        continue
                    mine = [s for s in D.symbols(d) if s in fresh and s not in spell.adopted]
                    e_dim = D.parse(e.value)
                    if len(mine) != 1 or not D.is_symbolic(e_dim) or D.symbols(e_dim) & fresh:
                        continue
                    try:
                        target = sympy.Symbol(spell.renames.get(mine[0], mine[0]), integer=True, nonnegative=True)
                        lhs = spell.expr(d).subs(
                            {s: target for s in spell.expr(d).free_symbols if s.name == target.name}
                        )
                        solved = sympy.solve(sympy.Eq(lhs, spell.expr(e_dim)), target)
                    except Exception:  # an equation sympy cannot solve: nothing adopted
                        continue
                    if len(solved) == 1 and _integer_polynomial(sympy, solved[0]):
                        spell.adopted[mine[0]] = solved[0]


#: the engine's G013 for a tensor that took its declared shape over the one it inferred
_ASSUMED = re.compile(r"assuming the declared shape \[.*\] \(inferred \[(.*)\]\)")


def _split_dims(text: str) -> list[str]:
    """``a, max(b, c), 3`` -> ``["a", "max(b, c)", "3"]`` (commas inside parentheses kept)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        depth += (ch == "(") - (ch == ")")
        cur.append(ch)
    out.append("".join(cur).strip())
    return out


def _assumed_over(result: Result) -> dict[tuple[str, str], list]:
    """``(graph, tensor) -> dims`` inferred for each tensor that took its declared shape instead
    (G013 says which): what a declared dim is to be solved against."""
    out = {}
    for d in result.diagnostics:
        if d.code != codes.DECLARED_TYPE_ASSUMED or not d.tensor:
            continue
        m = _ASSUMED.search(d.message)
        if m:
            out[(d.graph or "main", d.tensor)] = [None if t == "?" else D.parse(t) for t in _split_dims(m.group(1))]
    return out


def _integer_polynomial(sympy, e) -> bool:
    """Whether ``e`` is a polynomial with integer coefficients (a name, ``total - past``)."""
    if e.is_Integer:
        return True
    try:
        return all(c.is_Integer for c in sympy.Poly(e, *sorted(e.free_symbols, key=str)).coeffs())
    except sympy.PolynomialError:
        return False


def _node_at(graphs: dict, d) -> ir.Node | None:
    g = graphs.get(d.graph or "main")
    if g is None or d.index is None:
        return None
    nodes = list(g)
    return nodes[d.index] if 0 <= d.index < len(nodes) else None


def _opset(model: ir.Model, graph: ir.Graph, domain: str) -> int:
    imports = model.opset_imports
    if domain in ("", "ai.onnx"):
        return imports.get("", imports.get("ai.onnx", 1))
    return imports.get(domain, 1)


def _usage(model: ir.Model, graph: ir.Graph, node: ir.Node) -> str | None:
    """The original's OpUsageError text for ``node``, as its ``check_inputs`` and ``require_attr``
    word it, read from the op's schema (onnx's, or onnxruntime's for a contrib op): too few
    inputs, a required input left out, a required attribute missing. None when well formed.
    (The original checks only what each op's rule reads: this is asked only of a node whose
    outputs inference could not say anything of.)"""

    domain = node.domain or ""
    version = _opset(model, graph, domain)
    required: list[str] = []
    attrs: list[str] = []
    try:
        s = onnx.defs.get_schema(node.op_type, version, domain)
    except Exception:  # not an onnx op at this opset: onnxruntime's contrib table, if any
        from shapeinfer.inference.ops.contrib import schemas as contrib

        c = contrib.lookup(domain, node.op_type, version)
        if c is None:
            return None
        required = [p.name for p in c.inputs if not p.optional and not p.variadic]
        attrs = [name for name, (_, req) in c.attributes.items() if req]
        variadic_min = c.min_input if any(p.variadic for p in c.inputs) else 0
    else:
        single = onnx.defs.OpSchema.FormalParameterOption.Single
        variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
        required = [p.name for p in s.inputs if p.option == single]
        attrs = [name for name, a in s.attributes.items() if a.required]
        variadic_min = s.min_input if any(p.option == variadic for p in s.inputs) else 0
    inputs = list(node.inputs)
    need = max(len(required), variadic_min)
    if len(inputs) < need:
        return f"Expected at least {need} input(s), got {len(inputs)}"
    for i, name in enumerate(required):
        if inputs[i] is None:
            return f"Required input '{name}' (#{i}) is None"
    for name in attrs:
        if name not in node.attributes:
            return f"Missing required attribute '{name}'"
    return None


def _inferred_any(result: Result, path: str, node: ir.Node) -> bool:
    """Whether inference knows anything of an output of ``node`` (the graph at ``path``'s)."""
    facts = result.graph_facts.get(path, {})
    for v in node.outputs:
        f = facts.get(v.name) if v is not None and v.name else None
        if f is not None and not (f.kind == "tensor" and not f.dtype and f.shape is None):
            return True
    return False


def _raise_errors(ir, model: ir.Model, result: Result, graphs: dict, policy: str) -> None:
    """Raise the original's exception for the first node, in the walk's order (a node's
    subgraphs before it), that is malformed (OpUsageError, any policy) or that inference refuses
    (ShapeInferenceError; logged instead under ``skip``)."""
    errors: dict[tuple[str, int], list] = {}
    for d in result.diagnostics:
        if _raised(d):
            errors.setdefault((d.graph or "main", d.index), []).append(d)

    def walk(path: str, graph: ir.Graph) -> None:
        for k, node in enumerate(graph):
            for sub_path, sub in _subgraphs(ir, node, path, k):
                walk(sub_path, sub)
            why = None if _inferred_any(result, path, node) else _usage(model, graph, node)
            if why is not None:
                raise OpUsageError(node, why)
            found = errors.get((path, k), ())
            usage = [d for d in found if d.code in _USAGE]
            if usage and not _inferred_any(result, path, node):
                raise OpUsageError(node, usage[0].message)
            for d in [d for d in found if d.code not in _USAGE][:1]:
                error = ShapeInferenceError(
                    node_name=node.name, op_type=node.op_type, domain=node.domain, message=d.message
                )
                if policy != "skip":
                    raise error
                _context_logger.warning("Shape inference error: %s", error)

    walk("main", model.graph)


#: the engine's G010 message, naming the function's domain and name
_CALLS_ITSELF = re.compile(r"^function (.*)\.([^.]+) calls itself")


def _warn(result: Result, graphs: dict, missing: bool) -> None:
    """The original's warnings: for each model-local function that calls itself; with
    ``missing``, for each op no rule knows, once per op and graph."""
    warned: set[tuple[str, str, str]] = set()
    warned_functions: set[str] = set()
    for d in result.diagnostics:
        if d.code == codes.RECURSIVE_FUNCTION:
            m = _CALLS_ITSELF.match(d.message)
            if m and m.group(0) not in warned_functions:
                warned_functions.add(m.group(0))
                _functions_logger.warning(
                    "Recursive function call detected for %s::%s; skipping to avoid infinite loop", m[1], m[2]
                )
            continue
        if d.code != codes.NO_OP_SCHEMA or not missing:
            continue
        node = _node_at(graphs, d)
        if node is None:
            continue
        key = (d.graph or "main", node.domain or "", node.op_type)
        if key not in warned:
            warned.add(key)
            _engine_logger.warning("No shape inference registered for %s::%s", node.domain or "", node.op_type)


def _plan(ir, model: ir.Model, result: Result, graphs: dict, spell: Spelling, policy: str) -> list[_Write]:
    """What to write on each value, node by node and graph by graph; under ``strict`` the
    first contradiction raises ShapeInferenceError (from the ValueError) before anything is set."""
    writes: list[_Write] = []
    seen: set[int] = set()
    for path, graph in graphs.items():
        facts = result.graph_facts.get(path)
        if facts is None:
            continue
        targets: list[tuple[ir.Value, ir.Node | None]] = []
        if path != "main":  # a body's inputs get the types the node gives them
            targets += [(v, None) for v in graph.inputs]
        for node in graph:
            targets += [(v, node) for v in node.outputs if v is not None]
        for value, node in targets:
            if id(value) in seen or not value.name:
                continue
            seen.add(id(value))
            f = facts.get(value.name)
            if f is None or (f.kind == "tensor" and not f.dtype and f.shape is None):
                continue
            t, dtype, shape = _ir_type(ir, f, spell)
            w = _Write(value)
            why = _merge(ir, value, t, dtype, shape, policy, w)
            if why is not None:
                cause = ValueError(why)
                if node is None:
                    raise cause
                domain = node.domain or ""
                raise ShapeInferenceError(
                    node_name=node.name,
                    op_type=node.op_type,
                    domain=domain,
                    message=f"Shape inference failed for {domain}::{node.op_type}",
                ) from cause
            if node is not None and (
                ((node.domain or "") == "" and node.op_type in _SYM_DATA_OPS)
                or (node.domain, node.op_type, node.overload or "") in model.functions
            ):
                sd = _sym_data(ir, f, spell)
                if sd is not None:
                    w.sym = sd[0]
                    if sd[1] is not None and value.const_value is None:
                        w.const = _const(ir, value, w, sd[1])
            if w.type is not None or w.dtype is not None or w.shape is not None or w.sym is not None:
                writes.append(w)
    return writes


def _const(ir, value: ir.Value, w: _Write, ints: list[int]):
    """The ``const_value`` the original sets on a value whose elements are all known integers:
    a tensor of its dtype (int64 when unknown), a scalar for a 0-d value."""
    dtype = w.dtype or value.dtype or ir.DataType.INT64
    shape = w.shape or value.shape
    if shape is None or len(shape) > 1:
        return None
    data = ints[0] if len(shape) == 0 and ints else ints
    return ir.tensor(data, dtype=dtype, name=value.name)
