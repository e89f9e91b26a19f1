"""No native rule makes inference raise, whatever it is fed: unknown ranks, scalars, symbolic dims,
missing attributes, too few inputs. Invalid nodes become diagnostics."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import shapeinfer
from shapeinfer.inference import op_registry as registry

F = TensorProto.FLOAT
INPUT_KINDS = {
    "unknown_rank": lambda i: helper.make_tensor_value_info(f"x{i}", F, None),
    "scalar": lambda i: helper.make_tensor_value_info(f"x{i}", TensorProto.INT64, []),
    "symbolic": lambda i: helper.make_tensor_value_info(f"x{i}", F, ["n", 3, "m"]),
}


def _schema(domain: str, op: str, version: int):
    try:
        return onnx.defs.get_schema(op, version, domain)
    except onnx.defs.SchemaError:
        return None


@pytest.mark.parametrize("kind", list(INPUT_KINDS))
def test_every_native_rule_survives_odd_inputs(kind: str) -> None:
    checked = 0
    for domain, op, since in registry.registered():
        schema = _schema(domain, op, max(since, 1))
        n_in = len(schema.inputs) if schema is not None else 2
        n_out = max(1, len(schema.outputs)) if schema is not None else 1
        for n in sorted({1, max(1, n_in)}):
            inputs = [INPUT_KINDS[kind](i) for i in range(n)]
            outs = [f"y{i}" for i in range(n_out)]
            node = helper.make_node(op, [vi.name for vi in inputs], outs, domain=domain)
            opsets = [helper.make_opsetid("", max(since, 1) if not domain else 21)]
            if domain:
                opsets.append(helper.make_opsetid(domain, max(since, 1)))
            graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outs])
            model = helper.make_model(graph, opset_imports=opsets, ir_version=9)
            r = shapeinfer.infer(model)
            assert set(outs) <= set(r.facts), (op, since)
            checked += 1
    assert checked > 150
