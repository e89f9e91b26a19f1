"""Every ai.onnx.ml op's shape and type rule against onnxruntime, on the fixtures of
tests/models/ml (tools/generators/make_ml_models.py: skl2onnx and onnxmltools exports of the common
estimators and pipelines, hand-built models for the ops and attribute variants no exporter writes).

For each model and batch size (1, 3, and 0 where onnxruntime runs the model on no rows), every
tensor a main-graph node makes is made a graph output declared with the element type (or
sequence / map kind) inference gives it: onnxruntime refuses to load a model whose declared type
differs from its own. The model is then run, and each value compared with the inferred fact at
the batch size: kind, element type (strings included), rank and every dim over the input
symbols. Each ai.onnx.ml op's outputs must be fully resolved (a known rank, every dim a number
or an expression of the batch symbol), but for the one dim no attribute gives (a dense CastMap's map size)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.io.onnxio import fact_type
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact

ort = pytest.importorskip("onnxruntime")

MODELS = sorted((Path(__file__).resolve().parents[2] / "models" / "ml").glob("*.onnx"))
ML = "ai.onnx.ml"

#: (op type, output index) whose dims an attribute cannot give: left unknown by design.
UNKNOWN_BY_DESIGN = {("CastMap", 0)}

#: Models onnxruntime 1.32 cannot run on no rows without aborting the process (a FeatureVectorizer
#: of two inputs): run at 1 and 3 rows only.
ABORTS_ON_NO_ROWS = {"featurevectorizer"}


def _feed(vi: onnx.ValueInfoProto, n: int, rng: np.random.Generator):
    """A value for graph input ``vi`` with ``n`` rows (what tools/generators/make_ml_models.py says)."""
    tp = vi.type
    if tp.WhichOneof("value") == "map_type":
        key = tp.map_type.key_type
        keys = ["a", "b", "c"] if key == onnx.TensorProto.STRING else [0, 1, 2]
        return {k: float(i + 1) for i, k in enumerate(keys)}
    tt = tp.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else n for d in tt.shape.dim]
    if tt.elem_type == onnx.TensorProto.STRING:
        return rng.choice(np.array(["a", "b", "c"], dtype=object), size=shape)
    if tt.elem_type == onnx.TensorProto.INT64:
        return rng.integers(0, 3, size=shape).astype(np.int64)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
    return (rng.random(shape) * 4 - 2).astype(dtype)


def _without_shapes(tp: onnx.TypeProto) -> onnx.TypeProto:
    """``tp`` with every tensor shape dropped: a declaration of kind and element type only."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        tp.tensor_type.ClearField("shape")
    elif which == "sequence_type":
        _without_shapes(tp.sequence_type.elem_type)
    elif which == "map_type":
        _without_shapes(tp.map_type.value_type)
    return tp


def _typed(f: Fact | None) -> bool:
    if f is None:
        return False
    if f.kind == "tensor":
        return bool(f.dtype)
    return f.elem is not None and _typed(f.elem) and (f.kind != "map" or bool(f.dtype))


def _resolved(f: Fact, batch: set[str]) -> bool:
    return f.shape is not None and all(type(d) is int or D.symbols(d) <= batch for d in f.shape)


def _batch_symbols(result, m: onnx.ModelProto) -> set[str]:
    syms: set[str] = set()
    for vi in m.graph.input:
        f = result.facts.get(vi.name)
        if f is not None and f.kind == "tensor" and f.shape:
            syms |= D.symbols(f.shape[0]) if not isinstance(f.shape[0], int) else set()
    return syms


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_output_has_onnxruntimes_type_and_shape(path):
    m = onnx.load(str(path))
    result = shapeinfer.infer(m)
    batch = _batch_symbols(result, m)
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    del probe.graph.output[:]
    produced = []
    for node in m.graph.node:
        for k, name in enumerate(node.output):
            f = result.facts.get(name)
            assert _typed(f), f"{node.op_type} {name}: type unknown ({f})"
            if node.domain == ML and (node.op_type, k) not in UNKNOWN_BY_DESIGN and f.kind == "tensor":
                assert _resolved(f, batch), f"{node.op_type} output {k} not resolved: {f.shape}"
            vi = probe.graph.output.add()
            vi.name = name
            vi.type.CopyFrom(_without_shapes(fact_type(f)))
            produced.append((node.op_type, name, f))
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
    for n in (1, 3, 0) if path.stem not in ABORTS_ON_NO_ROWS else (1, 3):
        rng = np.random.default_rng(n)
        try:
            values = sess.run(None, {vi.name: _feed(vi, n, rng) for vi in m.graph.input})
        except Exception as e:  # some pipelines' default-domain ops refuse no rows at all
            assert n == 0, e
            continue
        binding = dict.fromkeys(batch, n)
        for (op, name, f), value in zip(produced, values):
            reason, _, expected = compare(f, value, binding)
            assert reason is None, f"batch {n}: {op} {name}: {reason}: inferred {expected}"
            if f.kind == "tensor":  # compare() lets an object array pass for any type
                arr = np.asarray(value)
                assert (arr.dtype.kind in "OUS") == (f.dtype == onnx.TensorProto.STRING), (op, name, arr.dtype)


def test_the_fixtures_cover_every_op_of_the_domain():
    ops = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ML}
    used = {n.op_type for p in MODELS for n in onnx.load(str(p)).graph.node if n.domain == ML}
    assert ops <= used, sorted(ops - used)


@pytest.mark.parametrize("rank", [None, 0, 1, 2, 3])
def test_no_ml_rule_raises_on_odd_inputs(rank):
    """Every version of every op of the domain, without attributes, on inputs of unknown or 0 to
    3 rank (symbolic dims), or a map: no rule fails (E001)."""
    checked = 0
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain != ML:
            continue
        shape = None if rank is None else ["n", 3, 4][:rank]
        inputs = [onnx.helper.make_tensor_value_info(f"x{i}", onnx.TensorProto.FLOAT, shape) for i in range(2)]
        if schema.name in ("CastMap", "DictVectorizer"):
            inputs[0] = onnx.helper.make_value_info(
                "x0",
                onnx.helper.make_map_type_proto(onnx.TensorProto.INT64, onnx.helper.make_tensor_type_proto(1, None)),
            )
        n_in = 2 if schema.name == "ArrayFeatureExtractor" else 1
        outs = [f"y{i}" for i in range(len(schema.outputs))]
        node = onnx.helper.make_node(schema.name, [f"x{i}" for i in range(n_in)], outs, domain=ML)
        graph = onnx.helper.make_graph([node], "g", inputs[:n_in], [onnx.ValueInfoProto(name=o) for o in outs])
        opsets = [onnx.helper.make_opsetid("", 21), onnx.helper.make_opsetid(ML, schema.since_version)]
        result = shapeinfer.infer(onnx.helper.make_model(graph, opset_imports=opsets))
        assert not [d for d in result.diagnostics if d.code == "E001"], (schema.name, result.diagnostics)
        checked += 1
    assert checked == 25  # 19 ops; LabelEncoder, TreeEnsembleClassifier/Regressor have 3 versions
