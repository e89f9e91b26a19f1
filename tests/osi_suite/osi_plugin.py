"""pytest plugin: run onnx-shape-inference's own tests with shapeinfer's drop-in in its place.

Loaded with ``-p osi_plugin`` by :mod:`osi_harness` (in a subprocess, over the test files the installed
``onnx_shape_inference`` package ships). With ``SHAPEINFER_OSI_DROPIN=1`` it replaces, before the
test modules are imported,

- ``infer_symbolic_shapes`` (the package's and ``_engine``'s) by
  :func:`shapeinfer.compat.onnx_shape_inference.infer_symbolic_shapes`;
- ``OpUsageError`` and ``ShapeInferenceError`` by the drop-in's, so the tests' ``assertRaises``
  judge what the drop-in raises;
- each per-op rule the package's ``registry`` hands out (what the op tests call, through
  ``_ops._testing.run_shape_inference`` or directly, with a ``ShapeInferenceContext``) by one that
  builds a one-node ``onnx_ir`` model of the node (its inputs as graph inputs, constant ones as
  initializers, an input whose elements the context knows computed from ``Shape`` of inputs of
  those dims), runs the drop-in on it and hands the outputs' types, shapes and SYM_DATA_KEY
  values back to the context, as the rule would set them.

Without the variable it only records. Either way each test is recorded as ``pass``, ``fail`` or
``skipped``, with whether it ran the drop-in (``dropin``) and whether it called the original's
inference internals itself (``original``: its engine's graph walk, its anchor/constraint pass,
its function inliner), and the first line of a failure. The results are written as JSON to
``$SHAPEINFER_OSI_OUT``.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re

import pytest

DROPIN = os.environ.get("SHAPEINFER_OSI_DROPIN") == "1"

_state: dict = {"dropin": False, "original": False, "last": None, "raised": None, "codes": set()}

_CODE = re.compile(r"^(?:info|warning|error) ([A-Z]\d{3}) ")


class _Codes(logging.Handler):
    """Keeps the codes of shapeinfer's diagnostics the drop-in logs (logger shapeinfer.compat)."""

    def emit(self, record: logging.LogRecord) -> None:
        m = _CODE.match(record.getMessage())
        if m:
            _state["codes"].add(m.group(1))


_results: dict[str, dict] = {}
_observed_run = None


def _flag(key: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _state[key] = True
        return fn(*args, **kwargs)

    return wrapper


def _observed(run):
    """``run`` (the drop-in's entry point), keeping what the test gave it last (the model,
    serialised) and what it wrote (main-graph dims by value name), or what it raised."""

    @functools.wraps(run)
    def wrapper(model, *args, **kwargs):
        import onnx_ir as ir

        _state["dropin"] = True
        try:
            given = ir.serde.serialize_model(model).SerializeToString()
        except Exception:  # a model onnx_ir cannot serialise: nothing to judge by
            given = None
        try:
            out = run(model, *args, **kwargs)
        except Exception as e:
            _state["raised"] = type(e).__name__
            _state["last"] = (given, {})
            raise
        dims = {}
        for node in model.graph:
            for v in node.outputs:
                if v is not None and v.name and v.shape is not None:
                    dims[v.name] = [d if isinstance(d, int) else d.value for d in v.shape.dims]
        _state["last"] = (given, dims)
        return out

    return wrapper


# ------------------------------------------------------------------------------ a rule answered by the drop-in

_INVENTED = re.compile(r"\b_d\d+\b")


def _copy_value(ir, v, name: str):
    c = ir.Value(name=name, type=v.type, shape=v.shape)
    if v.const_value is not None:
        c.const_value = v.const_value
    return c


def _producer(ir, ctx, v, name: str, nodes: list, inputs: list, inits: list):
    """A value named ``name`` computed from graph inputs whose dims are the elements the context
    knows of ``v`` (``Shape`` of each, ``Concat``, then ``Cast`` / ``Reshape`` to ``v``'s type)."""
    elems = ctx._symbolic_values[v]
    parts = []
    for k, e in enumerate(elems):
        if isinstance(e, int):
            c = ir.Value(name=f"{name}__c{k}", const_value=ir.tensor([e], dtype=ir.DataType.INT64))
            c.type, c.shape = ir.TensorType(ir.DataType.INT64), ir.Shape([1])
            inits.append(c)
            parts.append(c)
        else:
            src = ir.Value(name=f"{name}__s{k}", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([e]))
            inputs.append(src)
            out = ir.Value(name=f"{name}__shape{k}")
            nodes.append(ir.Node("", "Shape", [src], outputs=[out]))
            parts.append(out)
    if not parts:  # an empty shape value: a constant
        c = ir.Value(name=f"{name}__empty", const_value=ir.tensor(__import__("numpy").zeros(0, "int64")))
        c.type, c.shape = ir.TensorType(ir.DataType.INT64), ir.Shape([0])
        inits.append(c)
        parts.append(c)
    cat = ir.Value(name=f"{name}__cat")
    axis = {"axis": ir.Attr("axis", ir.AttributeType.INT, 0)}
    nodes.append(ir.Node("", "Concat", parts, attributes=axis, outputs=[cat]))
    last = cat
    if v.shape is not None and v.shape.rank() == 0:
        sq = ir.Value(name=f"{name}__sq")
        nodes.append(ir.Node("", "Squeeze", [last], outputs=[sq]))
        last = sq
    elif v.shape is not None and v.shape.rank() > 1 and all(isinstance(d, int) for d in v.shape.dims):
        target = ir.Value(name=f"{name}__target", const_value=ir.tensor(list(v.shape.dims), dtype=ir.DataType.INT64))
        target.type, target.shape = ir.TensorType(ir.DataType.INT64), ir.Shape([v.shape.rank()])
        inits.append(target)
        rs = ir.Value(name=f"{name}__reshaped")
        nodes.append(ir.Node("", "Reshape", [last, target], outputs=[rs]))
        last = rs
    if v.dtype is not None and v.dtype != ir.DataType.INT64:
        cast = ir.Value(name=f"{name}__cast")
        to = {"to": ir.Attr("to", ir.AttributeType.INT, int(v.dtype))}
        nodes.append(ir.Node("", "Cast", [last], attributes=to, outputs=[cast]))
        last = cast
    final = ir.Value(name=name)
    nodes.append(ir.Node("", "Identity", [last], outputs=[final]))
    return final


def _dropin_rule(domain: str, op_type: str):
    """A rule with the registry's signature, ``(ctx, node) -> None``, answered by the drop-in."""

    def rule(ctx, node) -> None:
        import onnx_ir as ir

        from shapeinfer.compat.onnx_shape_inference import SYM_DATA_KEY

        infer_symbolic_shapes = _observed_run
        nodes, inputs, inits, copies, used = [], [], [], {}, set()
        new_inputs = []
        for i, v in enumerate(node.inputs):
            if v is None:
                new_inputs.append(None)
                continue
            if id(v) not in copies:
                name = v.name or f"input_{i}"
                if name in used:  # two values of one name (const_value's default): each its own
                    name = f"{name}__{i}"
                used.add(name)
                if v.const_value is None and v in ctx._symbolic_values:
                    copies[id(v)] = _producer(ir, ctx, v, name, nodes, inputs, inits)
                else:
                    c = _copy_value(ir, v, name)
                    (inits if v.const_value is not None else inputs).append(c)
                    copies[id(v)] = c
            new_inputs.append(copies[id(v)])
        outs = [ir.Value(name=o.name or f"output_{i}") for i, o in enumerate(node.outputs)]
        attrs = {k: a for k, a in node.attributes.items()}
        new = ir.Node(domain, op_type, new_inputs, attributes=attrs, outputs=outs, name=node.name)
        nodes.append(new)
        opsets = dict(ctx.opset_imports)
        graph = ir.Graph(inputs, [o for o in outs], nodes=nodes, initializers=inits, opset_imports=opsets, name="g")
        model = ir.Model(graph, ir_version=11)
        # the drop-in raises what the rule would; it sees the context's policy
        infer_symbolic_shapes(model, policy=ctx.policy, warn_on_missing=False)
        names: dict[str, str] = {}
        known = {  # the context's names for the inputs' dims: kept
            t
            for v in node.inputs
            if v is not None and v.shape is not None
            for d in v.shape.dims
            for t in _INVENTED.findall(str(d))
        }

        def rename(text: str) -> str:
            def one(m):
                t = m.group(0)
                if t in known:
                    return t
                if t not in names:
                    names[t] = ctx.new_symbolic_dim().value
                return names[t]

            return _INVENTED.sub(one, text)

        def dim(d):
            if isinstance(d, ir.SymbolicDim) and d.value is not None:
                return ir.SymbolicDim(rename(d.value))
            return d

        for orig, out in zip(node.outputs, outs):
            if orig is None:
                continue
            if out.type is not None and not isinstance(out.type, ir.TensorType):
                ctx.set_type(orig, out.type)
            else:
                shape = None if out.shape is None else ir.Shape([dim(d) for d in out.shape.dims])
                ctx.set_shape_and_dtype(orig, shape, out.dtype)
            sym = out.metadata_props.get(SYM_DATA_KEY)
            if sym is not None:
                data = [x if isinstance(x, int) else ir.SymbolicDim(rename(x)) for x in json.loads(sym)]
                ctx.set_symbolic_value(orig, data)

    return rule


def _registry_get(real_get):
    @functools.wraps(real_get)
    def get(domain: str, op_type: str, version: int):
        if real_get(domain, op_type, version) is None:
            return None  # the ops the original has a rule for are the ones its tests expect one for
        return _dropin_rule(domain, op_type)

    return get


def _install() -> None:
    import onnx_shape_inference as osi
    from onnx_shape_inference import _constraints, _context, _engine, _functions, _registry

    from shapeinfer.compat import onnx_shape_inference as dropin

    for mod, names in (
        (_engine, ("_infer_symbolic_shapes", "_process_graph", "_refine_body_input", "_propagate_types_to_scan_body")),
        (_functions, ("infer_via_op_schema_function", "infer_function_call_output_shapes")),
        (_constraints, ("propagate_symbolic_constraints", "record_reshape_numel_equalities")),
    ):
        for n in names:
            setattr(mod, n, _flag("original", getattr(mod, n)))
    if not DROPIN:
        _engine.infer_symbolic_shapes = osi.infer_symbolic_shapes = _flag("dropin", osi.infer_symbolic_shapes)
        return
    global _observed_run
    run = _observed_run = _observed(dropin.infer_symbolic_shapes)
    osi.infer_symbolic_shapes = _engine.infer_symbolic_shapes = run
    for name in ("OpUsageError", "ShapeInferenceError"):
        for mod in (osi, _context):
            setattr(mod, name, getattr(dropin, name))
    osi.SYM_DATA_KEY = _context.SYM_DATA_KEY = dropin.SYM_DATA_KEY
    reg = _registry.registry
    reg.get = _registry_get(reg.get)


# ------------------------------------------------------------------------------ pytest hooks


def pytest_configure(config):
    _install()
    log = logging.getLogger("shapeinfer.compat")
    log.addHandler(_Codes())
    log.setLevel(logging.INFO)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _state.update(dropin=False, original=False, last=None, raised=None, codes=set())
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup" and report.skipped:
        _results[item.nodeid] = {"status": "skipped", "dropin": False, "original": False, "detail": ""}
        return
    if report.when != "call":
        return
    if report.passed:
        status, detail = "pass", ""
    elif report.skipped:
        status, detail = "skipped", ""
    else:
        status = "fail"
        exc = call.excinfo
        text = f"{exc.typename}: {exc.value}" if exc is not None else "?"
        detail = text.strip().splitlines()[0][:300] if text.strip() else "?"
    entry = {"status": status, "dropin": _state["dropin"], "original": _state["original"], "detail": detail}
    if status == "fail" and DROPIN and _state["dropin"]:
        entry["raised"] = _state["raised"]
        entry["codes"] = sorted(_state["codes"])
        given, dims = _state["last"] or (None, {})
        try:
            from osi_oracle import check

            entry["onnxruntime"] = check(given, dims) if given else "not runnable: no model"
        except Exception as e:  # the judge failing must not lose the verdict
            entry["onnxruntime"] = f"not runnable: {type(e).__name__}: {str(e)[:120]}"
    _results[item.nodeid] = entry


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SHAPEINFER_OSI_OUT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_results, f, indent=1, sort_keys=True)
