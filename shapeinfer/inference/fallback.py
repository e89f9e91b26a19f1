"""onnx's own per-node inference, as the fallback for ops without a native rule and as the
validator of the nodes a rule inferred: :class:`OnnxNodeInference`, one per run (its schema,
attribute-type and serialisation caches live as long as the run).

Symbolic dims go to onnx as ``dim_param`` text and small constant values as data; whatever
onnx raises becomes a diagnostic of the node (E011 when onnx rejects the node, E002 when it
fails otherwise, E018 for a node with more or fewer inputs or outputs than its schema allows).
"""

from __future__ import annotations

from typing import Any

import onnx
from onnx import AttributeProto

from shapeinfer.base import codes
from shapeinfer.inference.node_context import NodeContext, Walker
from shapeinfer.inference.ops.common import check_against_probe, clear_foreign_params, probe_binding, probe_outputs
from shapeinfer.io.onnxio import fact_type, type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

_GRAPH_ATTRS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)

_OnnxInferenceError = onnx.shape_inference.InferenceError


class Fallback(Exception):
    """Raised by a rule to hand its node to onnx's per-node inference."""


def _onnx_message(e: Exception) -> str:
    """The last line of what onnx raised (its own verdict), at most 300 characters."""
    text = str(e).strip()
    return (text.splitlines()[-1] if text else type(e).__name__)[:300]


def untyped(f: Fact | None) -> bool:
    """True for an input inference knows nothing of (not even its element type or rank)."""
    return f is None or (f.kind == "tensor" and f.dtype == 0 and f.shape is None)


def _opset_protos(engine: Walker) -> list[onnx.OperatorSetIdProto]:
    """The engine's opset imports as onnx's inference takes them."""
    return [onnx.helper.make_opsetid(d, v) for d, v in engine.opsets.items()]


def _arity_problem(ctx: NodeContext, schema) -> bool:
    """Report (E018) a node with more or fewer inputs or outputs than its schema allows."""
    node = ctx.node
    for what, n, lo, hi in (
        ("input", len(node.input), schema.min_input, schema.max_input),
        ("output", len(node.output), schema.min_output, schema.max_output),
    ):
        if not lo <= n <= hi:
            want = f"{lo}" if lo == hi else f"{lo} to {hi}"
            ctx.diag(
                "error",
                codes.WRONG_INPUT_OUTPUT_COUNT,
                f"{n} {what}(s) where {node.op_type}-{schema.since_version} takes {want}",
            )
            return True
    return False


class OnnxNodeInference:
    """onnx's per-node inference for the nodes of one run, with the run's caches (schemas,
    attribute types, serialised types). Of the engine (``ctx.engine``) it reads the opset
    imports as they stand at each call (a function body's replace them while it is inferred),
    the model's IR version, the graph-input defaults and the fresh symbols."""

    def __init__(self) -> None:
        self._type_cache: dict[Fact, onnx.TypeProto] = {}
        self._attr_types: dict[tuple, dict[str, int]] = {}
        self._schemas: dict[tuple, Any] = {}
        self._validate_cache: dict[Fact, tuple] = {}
        self._opset_dict: dict[str, int] | None = None

    def attr_types(self, domain: str, op_type: str, version: int) -> dict[str, int]:
        """Attribute name -> AttributeProto type the op's schema (onnx's, else onnxruntime's
        contrib table) declares; empty without one."""
        key = (domain, op_type, version)
        types = self._attr_types.get(key)
        if types is None:
            domain = "" if domain == "ai.onnx" else domain
            try:
                schema = onnx.defs.get_schema(op_type, version, domain)
                types = {k: int(a.type) for k, a in schema.attributes.items()}
            except onnx.defs.SchemaError:
                from shapeinfer.inference.ops.contrib import schemas as contrib_schemas  # only for contrib ops

                contrib = contrib_schemas.lookup(domain, op_type, version)
                types = contrib.attr_types if contrib is not None else {}
            self._attr_types[key] = types
        return types

    def typeproto(self, f: Fact) -> onnx.TypeProto:
        tp = self._type_cache.get(f)
        if tp is None:
            tp = fact_type(f)
            self._type_cache[f] = tp
        return tp

    def schema(self, ctx: NodeContext):
        try:
            return onnx.defs.get_schema(ctx.node.op_type, ctx.version, ctx.domain or "")
        except onnx.defs.SchemaError:
            return None

    def onnx_infer(self, ctx: NodeContext, schema, ins: list[Fact | None]) -> tuple[onnx.NodeProto, dict, dict]:
        """onnx's per-node inference of ``ctx``'s node on ``ins`` (symbolic dims as dim_param text,
        small constant values as data): the node as given to onnx, output name -> TypeProto.
        The third item is the constant data given to onnx. Raises what onnx raises."""
        node = ctx.node
        types = {}
        data = {}
        for name, f in zip(node.input, ins):
            if not name or f is None or (f.kind == "tensor" and f.dtype == 0 and f.shape is None):
                continue
            types[name] = self.typeproto(f)
            if (
                f.kind == "tensor"
                and f.known_values
                and f.is_static
                and all(not isinstance(v, D.Expr) for v in f.value)
            ):
                try:
                    import numpy as np

                    arr = np.array(f.value, dtype=onnx.helper.tensor_dtype_to_np_dtype(f.dtype)).reshape(f.shape)
                    data[name] = onnx.numpy_helper.from_array(arr, name)
                except Exception:
                    pass
        if ctx.call_attrs and any(a.ref_attr_name for a in node.attribute):
            node = self.bind_ref_attrs(node, ctx)
        out = onnx.shape_inference.infer_node_outputs(
            schema, node, types, data, None, _opset_protos(ctx.engine), ctx.engine.model.ir_version or onnx.IR_VERSION
        )
        return node, out, data

    def validate(self, ctx: NodeContext, ins: list[Fact | None]) -> None:
        """Run onnx's per-node inference on a node a native rule inferred, as a validator only: a
        node onnx rejects (an attribute or input its contract forbids) is an error diagnostic
        (E011); its outputs stay the rule's. Nodes with subgraphs are left to their rule.

        A graph input with an initializer is checked at its default value (a node that is
        invalid unless the caller overrides the default is reported). Costs one call into onnx
        per node the memo has not seen (serialised types and constant data are cached per fact)."""
        node = ctx.node
        if any(a.type in _GRAPH_ATTRS for a in node.attribute):
            return
        key = (ctx.domain or "", node.op_type, ctx.version)
        schema = self._schemas.get(key, False)
        if schema is False:
            schema = self._schemas[key] = self.schema(ctx)
        if schema is None:
            return
        if _arity_problem(ctx, schema):
            return
        types: dict[str, bytes] = {}
        data: dict[str, bytes] = {}
        for name, f in zip(node.input, ins):
            if not name:
                continue
            if untyped(f):
                return  # onnx would fail for want of this input's type: no verdict on the node
            cached = self._validate_cache.get(f)
            if cached is None:
                tensor = self._constant_data(f, name)
                cached = (self.typeproto(f).SerializeToString(), None if tensor is None else tensor)
                self._validate_cache[f] = cached
            types[name] = cached[0]
            if cached[1] is None and name in ctx.engine.defaults and f.value is None:
                data[name] = ctx.engine.defaults[name].SerializeToString()
            elif cached[1] is not None:
                t = onnx.TensorProto()
                t.ParseFromString(cached[1])
                t.name = name
                data[name] = t.SerializeToString()
        if ctx.call_attrs and any(a.ref_attr_name for a in node.attribute):
            node = self.bind_ref_attrs(node, ctx)
        if self._opset_dict is None:
            self._opset_dict = dict(ctx.engine.opsets)
        try:
            schema._infer_node_outputs(
                node.SerializeToString(),
                types,
                data,
                {},
                self._opset_dict if self._opset_dict == ctx.engine.opsets else dict(ctx.engine.opsets),
                ctx.engine.model.ir_version or onnx.IR_VERSION,
            )
        except _OnnxInferenceError as e:
            ctx.diag("error", codes.REJECTED_BY_ONNX_INFERENCE, f"onnx inference rejects the node: {_onnx_message(e)}")
        except Exception:  # anything else onnx raises (an input it has no type for) is no verdict
            pass

    @staticmethod
    def _constant_data(f: Fact, name: str) -> bytes | None:
        """A small, static, fully known integer or float tensor fact as serialised TensorProto."""
        if f.kind != "tensor" or not (f.known_values and f.is_static):
            return None
        if any(isinstance(v, D.Expr) for v in f.value):
            return None
        try:
            return onnx.helper.make_tensor(name, f.dtype, f.shape, list(f.value)).SerializeToString()
        except Exception:
            return None

    def fallback(self, ctx: NodeContext, ins: list[Fact | None]) -> list[Fact | None]:
        """onnx's own per-node inference, with symbolic dims passed as dim_param text. A node it
        rejects is an error diagnostic (E011); any other failure a warning (E002)."""
        domain = ctx.domain or ""
        schema = self.schema(ctx)
        if schema is None:
            from shapeinfer.inference.ops.contrib import schemas as contrib_schemas  # only for ops onnx lacks

            name = f"{domain + '.' if domain else ''}{ctx.node.op_type}"
            if contrib_schemas.lookup(domain, ctx.node.op_type, ctx.version) is not None:
                # onnxruntime documents the op, but without a rule here its shapes are unknown
                ctx.diag(
                    "info", codes.NO_OP_SCHEMA, f"no rule for {name} (onnxruntime contrib op): outputs left unknown"
                )
            else:
                ctx.diag("info", codes.NO_OP_SCHEMA, f"no schema for {name}: outputs left unknown")
            return []
        if _arity_problem(ctx, schema):
            return []
        try:
            node, out, data = self.onnx_infer(ctx, schema, ins)
        except _OnnxInferenceError as e:
            if any(untyped(f) for name, f in zip(ctx.node.input, ins) if name):
                ctx.diag(
                    "warning",
                    codes.ONNX_INFERENCE_FAILED,
                    f"onnx inference failed (an input's type is unknown): {_onnx_message(e)}",
                )
            else:
                ctx.diag(
                    "error", codes.REJECTED_BY_ONNX_INFERENCE, f"onnx inference rejects the node: {_onnx_message(e)}"
                )
            return []
        except Exception as e:
            ctx.diag("warning", codes.ONNX_INFERENCE_FAILED, f"onnx inference failed: {_onnx_message(e)}")
            return []
        # onnx rules may read an absent dim_value as 0 or copy a dim_param where the dim is
        # computed: re-run on concrete dims and keep only the symbolic dims that agree.
        binding = probe_binding(ins)
        probe = {}
        if binding and out:
            eng = ctx.engine
            ir_version = eng.model.ir_version or onnx.IR_VERSION
            probe = probe_outputs(schema, node, ins, data, binding, _opset_protos(eng), ir_version)
        fresh = ctx.engine.fresh
        res: list[Fact | None] = []
        for o in node.output:
            tp = out.get(o)
            if tp is not None:
                clear_foreign_params(tp, binding.keys())
            f = None if tp is None else type_fact(tp, lambda axis: fresh())
            if f is not None and binding:
                f = check_against_probe(f, probe.get(o), binding, fresh)
            res.append(f)
        return res

    def bind_ref_attrs(self, node: onnx.NodeProto, ctx: NodeContext) -> onnx.NodeProto:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        del n.attribute[:]
        for a in node.attribute:
            if a.ref_attr_name:
                src = ctx.call_attrs.get(a.ref_attr_name) if ctx.call_attrs else None
                if src is not None:
                    b = n.attribute.add()
                    b.CopyFrom(src)
                    b.name = a.name
            else:
                n.attribute.add().CopyFrom(a)
        return n
