"""fold-constants: nodes whose inputs are all constant are evaluated and become initializers.

Contract (main graph only):

- A node is folded when every input it reads is a constant (an initializer that is not a graph
  input, a Constant node's value, or the output of another folded node), it is a default-domain
  op without subgraphs that is deterministic and not a quantization boundary
  (:data:`NEVER_FOLDED`: runtimes match ``DequantizeLinear`` / ``QuantizeLinear`` on weights),
  none of its outputs is a graph output, and inference knows every output's type and static
  shape, with at most :func:`eval_limit` bytes each (nothing unbounded is ever computed).
- Values are computed by onnxruntime's CPU kernels when onnxruntime is installed (one session
  over all folded nodes, graph optimizations off: exactly what onnxruntime computes for those
  nodes in the original model), else by onnx's reference evaluator for the ops in
  :data:`EXACT` only, whose results are the same bits onnxruntime gives (data movement,
  integer arithmetic, comparisons, logic, IEEE-rounded float32/float64 ``+ - * /``; why these:
  docs/decisions.md).
- Size cap: a folded tensor that some remaining node reads becomes an initializer only when
  it grows the model by at most ``ctx.max_fold_growth`` bytes: its bytes minus those of the
  constants only its own folded nodes read (so a Transpose of a weight folds at any size, an
  Expand of a scalar into a large mask does not). Folded tensors are stored in the model, so
  constants in external data free nothing there (a Transpose of an external weight folds only
  within the bound). A node whose output is refused stays, and its inputs are then considered
  in its place.
- Folded nodes are removed; the initializers they leave unread go in ``dce``.

Every surviving tensor keeps its name and value. The pass is optional on onnxruntime: without
it, fewer nodes fold, and inference never needs it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper

from shapeinfer.inference.op_registry import op_traits
from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.io.external import SMALL_BYTES
from shapeinfer.ir.export import _export_node
from shapeinfer.ir.graph import Constant, Node, Tensor, rename, replace_uses
from shapeinfer.ir.queries import const_array, producer
from shapeinfer.passes.base import Pass, PassResult

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

#: Ops never folded besides the random ones (:func:`never_folded`): quantization boundaries (onnxruntime, TensorRT
#: and OpenVINO match DequantizeLinear on a weight as a QDQ pattern; folded, the weight is
#: float and four times larger), ops with side effects or non-tensor values, and Constant
#: itself (already a stored value: fold-shapes makes it an initializer).
NEVER_FOLDED = {
    "Constant",
    "QuantizeLinear",
    "DequantizeLinear",
    "DynamicQuantizeLinear",
    "If",
    "Loop",
    "Scan",
    "Optional",
    "OptionalGetElement",
    "OptionalHasElement",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceAt",
    "SequenceInsert",
    "SequenceErase",
    "SequenceLength",
    "SplitToSequence",
    "ConcatFromSequence",
}


def never_folded(op: str, domain: str, inputs: list[str]) -> bool:
    """True for a node fold-constants never evaluates: an op of :data:`NEVER_FOLDED`, a random
    one (its family declares it ``nondeterministic``: :func:`~shapeinfer.inference.op_registry.op_traits`),
    or a Dropout given a ``training_mode`` input (true at run time, it draws a mask; without it,
    it is the identity). ``inputs``: the input names ("" for an omitted one)."""
    if op in NEVER_FOLDED or op_traits(op, domain).nondeterministic:
        return True
    return op == "Dropout" and domain in ("", "ai.onnx") and len(inputs) > 2 and bool(inputs[2])


_FLOAT = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE}
_INT = INT_TYPES
_BOOL = {onnx.TensorProto.BOOL}
_ANY = _FLOAT | _INT | _BOOL | {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}

#: Ops the reference evaluator computes to the bits onnxruntime computes, with the element
#: types of their inputs for which that holds (data movement is exact for any type; IEEE
#: single operations are correctly rounded in both; integer Div and float Max/Min, Range,
#: Pow, Sqrt and the transcendental ones are not in it).
EXACT: dict[str, set[int]] = {
    **dict.fromkeys(
        [
            "Identity",
            "Transpose",
            "Reshape",
            "Squeeze",
            "Unsqueeze",
            "Flatten",
            "Concat",
            "Split",
            "Slice",
            "Gather",
            "Expand",
            "Tile",
            "Shape",
            "Size",
            "ConstantOfShape",
            "Where",
        ],
        _ANY,
    ),
    **dict.fromkeys(["Add", "Sub", "Mul", "Neg", "Abs"], _INT | _FLOAT),
    "Div": _FLOAT,
    **dict.fromkeys(["Max", "Min", "Range"], _INT),
    **dict.fromkeys(["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"], _INT | _FLOAT | _BOOL),
    **dict.fromkeys(["Not", "And", "Or", "Xor"], _BOOL),
    "Cast": _INT | _BOOL,  # from an integer or bool (to float: rounded to nearest even in both)
}


def eval_limit(max_growth: int, input_bytes: int) -> int:
    """Bytes an output of a node may have to be computed at all: the growth bound, or the
    bytes of the constants it reads (a Transpose of a weight), whichever is larger."""
    return max(max_growth, input_bytes)


def _tensor_bytes(dtype: int, shape) -> int | None:
    try:
        item = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(dtype)).itemsize
    except Exception:
        return None
    if dtype == onnx.TensorProto.STRING:
        return None
    return item * math.prod(shape)


def _const_bytes(t: Tensor) -> int:
    """Bytes of a constant's value stored in the model itself, from its header: 0 for one in
    external data (a folded tensor is stored inline, so freeing an external one does not make
    room for it in the model file)."""
    if isinstance(t, Constant):
        if t.proto is not None:
            if t.proto.data_location == onnx.TensorProto.EXTERNAL:
                return 0
            b = _tensor_bytes(t.proto.data_type, t.proto.dims)
            return 0 if b is None else b
        return int(np.asarray(t._array).nbytes)
    return 0


def ort_available() -> bool:
    """True when onnxruntime can be imported (the evaluation then uses its kernels)."""
    try:
        import onnxruntime  # noqa: F401
    except Exception:
        return False
    return True


def _is_const(t: Tensor, graph_inputs: set[int]) -> bool:
    if not t.name:
        return True  # an omitted optional input
    if isinstance(t, Constant):
        if t.proto is not None and t.proto.data_location == onnx.TensorProto.EXTERNAL:
            b = _tensor_bytes(t.proto.data_type, t.proto.dims)
            if b is None or b > SMALL_BYTES:
                return False  # external data is read only up to a cap: its value stays unknown here
        return id(t) not in graph_inputs
    p = producer(t)
    return p is not None and p.op == "Constant" and not p.domain and const_array(t) is not None


def candidates(g, facts: Mapping, max_growth: int, exact_only: bool, in_function: bool = False) -> list[Node]:
    """The nodes of main graph ``g`` that may be folded, in graph order (see the module
    docstring), without the size cap on what stays. ``in_function``: ``g`` is a function body,
    where a node with an attribute referring to the function's own is never folded (its value
    depends on the call)."""
    graph_inputs = {id(t) for t in g.inputs}
    outputs = {t.name for t in g.outputs}
    folded: set[int] = set()  # ids of tensors computed by candidate nodes
    out: list[Node] = []
    for n in g.nodes:
        if n.domain not in ("", "ai.onnx") or n.graphs or not n.outputs:
            continue
        if exact_only and n.op not in EXACT:
            continue
        ins = n.inputs
        if not all(id(t) in folded or _is_const(t, graph_inputs) for t in ins):  # (the cheap test first)
            continue
        if never_folded(n.op, n.domain, [t.name for t in ins]):
            continue
        if in_function and n.proto is not None and any(a.ref_attr_name for a in n.proto.attribute):
            continue
        if any(t.name in outputs or not t.name for t in n.outputs):
            continue
        in_bytes = sum(_const_bytes(t) if isinstance(t, Constant) else _fact_bytes(facts, t) or 0 for t in ins)
        limit = eval_limit(max_growth, in_bytes)
        ok = True
        for t in n.outputs:
            f = facts.get(t.name)
            b = _fact_bytes(facts, t)
            if b is None or b > limit or f.dtype not in _ANY:
                ok = False
                break
        if ok and exact_only:
            allowed = EXACT[n.op]
            for t in ins:
                if t.name and _dtype(facts, t) not in allowed:
                    ok = False
                    break
        if ok:
            out.append(n)
            folded.update(id(t) for t in n.outputs)
    return out


def _dtype(facts: Mapping, t: Tensor) -> int | None:
    if isinstance(t, Constant) and t.proto is not None:
        return t.proto.data_type
    f = facts.get(t.name)
    if f is not None and f.dtype:
        return f.dtype
    if isinstance(t, Constant):
        try:
            return onnx.helper.np_dtype_to_tensor_dtype(np.asarray(t.values).dtype)
        except Exception:
            return None
    return None


def _fact_bytes(facts: Mapping, t: Tensor) -> int | None:
    f = facts.get(t.name)
    if f is None or f.kind != "tensor" or not f.dtype or not f.is_static:
        return None
    return _tensor_bytes(f.dtype, f.shape)


def _sizes(facts: Mapping, nodes: list[Node]) -> dict[int, int]:
    return {id(t): _fact_bytes(facts, t) for n in nodes for t in n.outputs}


def _frontier(nodes: list[Node], chosen) -> list[Tensor]:
    """The outputs of ``nodes`` that a node not folded reads (they become initializers)."""
    return [t for n in nodes for t in n.outputs if t.outputs and not all(id(c) in chosen for c in t.outputs)]


def _select(nodes: list[Node], max_growth: int, sizes: Mapping[int, int]) -> set[int]:
    """The ids of the nodes of ``nodes`` to fold under the size cap. ``sizes``: bytes of each
    candidate output tensor (by id)."""
    chosen = {id(n): n for n in nodes}
    while True:
        changed = False
        for n in list(chosen.values()):
            for t in n.outputs:
                if all(id(c) in chosen for c in t.outputs):
                    continue  # read only by folded nodes: never stored
                growth = sizes[id(t)] - _freed(t, chosen)
                if growth > max_growth:
                    del chosen[id(n)]
                    changed = True
                    break
        if not changed:
            return set(chosen)


def _freed(t: Tensor, chosen: Mapping[int, Node]) -> int:
    """Bytes of the constants in ``t``'s folded cone that only folded nodes of that cone read."""
    cone: set[int] = set()
    stack = [t]
    consts: dict[int, Tensor] = {}
    while stack:
        x = stack.pop()
        p = producer(x)
        if p is not None and id(p) in chosen and id(p) not in cone:
            cone.add(id(p))
            stack.extend(p.inputs)
        elif isinstance(x, Constant):
            consts[id(x)] = x
    return sum(_const_bytes(c) for c in consts.values() if c.outputs and all(id(r) in cone for r in c.outputs))


def _evaluate_ort(gm, nodes: list[Node], wanted: list[Tensor]) -> dict[str, np.ndarray] | None:
    """The values of ``wanted`` computed by onnxruntime from ``nodes``, or None on failure."""

    try:
        import onnxruntime as ort
    except Exception:
        return None
    made = {id(t) for n in nodes for t in n.outputs}
    inits: dict[str, onnx.TensorProto] = {}
    protos = []
    for n in nodes:
        for t in n.inputs:
            if t.name and id(t) not in made and t.name not in inits:
                arr = const_array(t)
                if arr is None:
                    return None
                inits[t.name] = onnx.numpy_helper.from_array(np.asarray(arr), t.name)
        protos.append(_export_node(gm, n))
    graph = helper.make_graph(
        protos,
        "fold",
        [],
        [helper.make_value_info(t.name, onnx.TypeProto()) for t in wanted],
        list(inits.values()),
    )
    model = helper.make_model(graph, opset_imports=list(gm.model.opset_import), ir_version=gm.model.ir_version)
    try:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 4
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        values = sess.run([t.name for t in wanted], {})
    except Exception:
        return None
    out = {}
    for t, v in zip(wanted, values):
        if isinstance(v, np.ndarray) and v.dtype != object:
            out[t.name] = v
    return out


def _reference_model(gm, protos: list, feeds: dict, outputs: list[str]) -> onnx.ModelProto:
    g = helper.make_graph(
        protos,
        "fold",
        [helper.make_tensor_value_info(k, _elem(v), v.shape) for k, v in feeds.items()],
        [helper.make_value_info(name, onnx.TypeProto()) for name in outputs],
    )
    return helper.make_model(g, opset_imports=list(gm.model.opset_import), ir_version=gm.model.ir_version)


def _evaluate_reference(gm, nodes: list[Node], wanted: list[Tensor]) -> dict[str, np.ndarray]:
    """The values of ``wanted`` computed with onnx's reference evaluator (ops of :data:`EXACT`
    only): all nodes in one run, else node by node, where a node that fails leaves its outputs
    (and what reads them) out."""
    from onnx.reference import ReferenceEvaluator

    made = {id(t) for n in nodes for t in n.outputs}
    feeds: dict[str, np.ndarray] = {}
    for n in nodes:
        for t in n.inputs:
            if t.name and id(t) not in made and t.name not in feeds:
                v = const_array(t)
                if v is None:
                    return {}
                feeds[t.name] = np.asarray(v)
    protos = [_export_node(gm, n) for n in nodes]
    try:
        m = _reference_model(gm, protos, feeds, [t.name for t in wanted])
        with np.errstate(all="ignore"):
            res = ReferenceEvaluator(m).run(None, feeds)
        return {t.name: np.asarray(v) for t, v in zip(wanted, res)}
    except Exception:
        pass
    vals: dict[str, np.ndarray] = dict(feeds)
    for n, proto in zip(nodes, protos):
        ins = [t.name for t in n.inputs if t.name]
        if any(x not in vals for x in ins):
            continue  # its producer failed
        mine = {x: vals[x] for x in ins}
        try:
            m = _reference_model(gm, [proto], mine, [t.name for t in n.outputs if t.name])
            with np.errstate(all="ignore"):
                res = ReferenceEvaluator(m).run(None, mine)
        except Exception:
            continue
        for t, v in zip([t for t in n.outputs if t.name], res):
            vals[t.name] = np.asarray(v)
    return {t.name: vals[t.name] for t in wanted if t.name in vals}


def _elem(v: np.ndarray) -> int:
    return onnx.helper.np_dtype_to_tensor_dtype(v.dtype)


def _read_only_by(t: Tensor, ids: set[int]) -> bool:
    return all(id(c) in ids for c in t.outputs)


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Evaluate the all-constant main-graph nodes and store the results as initializers."""
    changes = fold(gm, gm.graph, result.facts, ctx.max_fold_growth)
    if not changes:
        return PassResult()
    return PassResult(changes, edited=True)


def fold(gm, g, facts: Mapping, max_growth: int, in_function: bool = False) -> dict[str, int]:
    """Fold the all-constant nodes of graph ``g`` of index ``gm`` (the main graph, or with
    ``in_function`` a model-local function body whose default-domain opset is the model's),
    ``facts`` holding the types and shapes of their outputs; returns the counts, empty when
    nothing changed. The values are stored as constants of ``g`` under the folded tensors'
    names."""
    nodes = candidates(g, facts, max_growth, exact_only=False, in_function=in_function)
    if not nodes:
        return {}
    exact = candidates(g, facts, max_growth, exact_only=True, in_function=in_function)
    # onnxruntime only for what the reference evaluator cannot compute to its bits (and only
    # imported then); without it, or should it fail, the EXACT nodes alone
    use_ort = len(exact) < len(nodes) and ort_available()
    values = None
    if use_ort:
        chosen = _select(nodes, max_growth, _sizes(facts, nodes))
        nodes = [n for n in nodes if id(n) in chosen]
        frontier = _frontier(nodes, chosen)
        values = _evaluate_ort(gm, nodes, frontier) if nodes else None
    if values is None:
        chosen = _select(exact, max_growth, _sizes(facts, exact))
        nodes = [n for n in exact if id(n) in chosen]
        frontier = _frontier(nodes, chosen)
        values = _evaluate_reference(gm, nodes, frontier) if nodes else {}
    # what was computed must be what inference said it is (type and shape), else it stays a node
    stored = 0
    for t in frontier:
        v = values.get(t.name)
        f = facts.get(t.name)
        if v is None or f is None or tuple(v.shape) != tuple(f.shape):
            continue
        try:
            if onnx.helper.np_dtype_to_tensor_dtype(v.dtype) != f.dtype:
                continue
        except Exception:
            continue
        name = t.name
        rename(t, gm.fresh(name + "__folded"))
        c = gm.constant(g, name, v, exact=True)
        replace_uses(t, c)
        stored += 1
    if not stored:
        return {}
    # the nodes whose outputs nothing reads any more (stored, or read only by folded nodes that
    # go): readers come after their producers, so one backward sweep finds them
    gone: set[int] = set()
    for n in reversed(nodes):
        if all(_read_only_by(t, gone) for t in n.outputs):
            gone.add(id(n))
    gm.remove_nodes(g, gone)
    return {"tensors evaluated to initializers": stored, "nodes removed": len(gone)}


PASS = Pass(
    "fold-constants",
    run,
    keeps_values=True,
    infers_first=True,
)
