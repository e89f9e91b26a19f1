"""What every front end writes keeps what it does not own (issue 33, the README's write contract).

``shapeinfer MODEL -o`` changes types and shapes only: a protobuf diff of input and output with
the types masked (:mod:`support.kept`) is empty, on every model the tests use, and the output
passes ``onnx.checker.check_model(full_check=True)`` wherever the input does. torch.export
(dynamo) models declare a ``value_info`` entry per parameter with ``metadata_props``: every one
stays. ``optimize -o`` keeps every entry of a tensor that still exists. A model built to hold
every kind of entry (doc strings, metadata, entries of an initializer, an output, a stale name,
a wrong type to refine, in an If branch and in a function) goes through every front end.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper
from support.common import MODELS_DIR, ROOT
from support.kept import differences, optimize_differences

import shapeinfer
from shapeinfer.cli.main import main

MODELS = sorted(glob.glob(str(MODELS_DIR / "*.onnx"))) + sorted(
    glob.glob(str(ROOT / "tests" / "models" / "**" / "*.onnx"), recursive=True)
)
DYNAMO = [p for p in MODELS if "dynamo" in os.path.basename(p)]


def _cli(*args: str) -> None:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output


def _checker_error(model) -> str | None:
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        return str(e).splitlines()[0]
    return None


def test_the_corpus_is_the_tests_models():
    assert len(MODELS) >= 37 and len(DYNAMO) >= 4
    # the dynamo exports declare their parameters' entries with metadata: what issue 33 lost
    m = onnx.load(DYNAMO[0], load_external_data=False)
    params = {t.name for t in m.graph.initializer}
    assert sum(1 for vi in m.graph.value_info if vi.name in params and len(vi.metadata_props)) > 10


@pytest.mark.parametrize("path", MODELS, ids=lambda p: os.path.relpath(p, ROOT))
def test_dash_o_changes_only_types(path, tmp_path):
    out = str(tmp_path / "out.onnx")
    _cli(path, "-o", out)
    original = onnx.load(path, load_external_data=False)
    written = onnx.load(out, load_external_data=False)
    assert differences(original, written) == []
    if _checker_error(path) is None:
        assert _checker_error(out) is None
    # nothing else written but the copies of the model's external data files
    data = {e.value for t in original.graph.initializer for e in t.external_data if e.key == "location"}
    assert sorted(os.listdir(tmp_path)) == sorted({"out.onnx", *data})


@pytest.mark.parametrize("path", DYNAMO, ids=os.path.basename)
def test_optimize_keeps_the_entries_of_live_tensors(path, tmp_path):
    out = str(tmp_path / "out.onnx")
    _cli("optimize", path, "-o", out)
    original = onnx.load(path, load_external_data=False)
    written = onnx.load(out, load_external_data=False)
    assert optimize_differences(original, written) == []
    # the entries of the parameters it kept (dedupe-shapes merges equal ones), with their metadata
    params = {t.name for t in written.graph.initializer}
    had = [vi.name for vi in original.graph.value_info if vi.name in params and len(vi.metadata_props)]
    kept = [vi.name for vi in written.graph.value_info if vi.name in params and len(vi.metadata_props)]
    assert kept == had
    assert _checker_error(out) is None


def _entry(name, elem, shape, doc="", meta=()):
    vi = helper.make_tensor_value_info(name, elem, shape) if elem is not None else onnx.ValueInfoProto(name=name)
    vi.doc_string = doc
    for k, v in meta:
        p = vi.metadata_props.add()
        p.key, p.value = k, v
    return vi


def annotated_everywhere() -> onnx.ModelProto:
    """An If, a model-local function and declarations of every kind, each with a doc string
    and metadata: ``h`` declared with a symbol where inference knows 4, ``r`` declared without a
    type, ``ghost`` naming no tensor, entries of the weight, the input and the output."""
    st = ("pkg.torch.onnx.stack_trace", 'File "m.py", line 3')
    one = numpy_helper.from_array(np.ones([4], "float32"), "one")
    then_g = helper.make_graph(
        [helper.make_node("Add", ["r", "one"], ["u"]), helper.make_node("Relu", ["u"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
        [one],
        value_info=[_entry("u", TensorProto.FLOAT, ["n", 4], "then's u", [st])],
    )
    e = helper.make_tensor_value_info("e", TensorProto.FLOAT, None)
    else_g = helper.make_graph([helper.make_node("Neg", ["r"], ["e"])], "else", [], [e])
    w = numpy_helper.from_array(np.eye(4, dtype="float32"), "w")
    twice = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 18)]
    )
    twice.value_info.append(_entry("b", TensorProto.FLOAT, None, "the function's b", [st]))
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], doc_string="mm"),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Twice", ["y"], ["z"], domain="local"),
        ],
        "g",
        [_entry("x", TensorProto.FLOAT, ["n", 4], "input doc", [("k", "v")]), _entry("cond", TensorProto.BOOL, [])],
        [_entry("z", TensorProto.FLOAT, ["n", None], "output doc")],
        [w],
        value_info=[
            _entry("w", TensorProto.FLOAT, [4, 4], "a parameter", [st, ("pkg.torch.onnx.name_scopes", "['', 'lin']")]),
            _entry("h", TensorProto.FLOAT, ["n", "d"], "declared vaguer", [st]),
            _entry("r", None, None, "no type", [st]),
            _entry("ghost", TensorProto.FLOAT, [2], "names no tensor"),
            _entry("x", TensorProto.FLOAT, ["n", 4], "the input again"),
            _entry("z", TensorProto.FLOAT, None, "the output again", [st]),
        ],
    )
    g.doc_string = "graph doc"
    p = g.metadata_props.add()
    p.key, p.value = "graph", "meta"
    m = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
        functions=[twice],
        producer_name="test",
        doc_string="model doc",
    )
    m.ir_version = 10
    onnx.helper.set_model_props(m, {"model": "meta"})
    return m


def _refined(model: onnx.ModelProto) -> list:
    dims = {vi.name: vi.type.tensor_type.shape.dim for vi in model.graph.value_info}
    return [d.dim_param or d.dim_value for d in dims["h"]], model.graph.value_info[2].type.tensor_type.elem_type


def test_every_front_end_keeps_every_entry(tmp_path):
    from shapeinfer.compat import onnx as compat

    m = annotated_everywhere()
    assert _checker_error(m) is None
    src = str(tmp_path / "m.onnx")
    onnx.save(m, src)
    written = {}
    _cli(src, "-o", str(tmp_path / "o.onnx"))
    written["-o"] = onnx.load(str(tmp_path / "o.onnx"))
    written["infer_shapes"] = shapeinfer.infer_shapes(src)
    written["infer_shapes(proto)"] = shapeinfer.infer_shapes(m)
    written["compat.infer_shapes"] = compat.infer_shapes(m)
    compat.infer_shapes_path(src, str(tmp_path / "c.onnx"))
    written["compat.infer_shapes_path"] = onnx.load(str(tmp_path / "c.onnx"))
    for how, w in written.items():
        assert differences(m, w) == [], how
        assert _refined(w) == (["n", 4], TensorProto.FLOAT), how  # types refined in place
        assert _checker_error(w) is None, how
    _cli("optimize", src, "-o", str(tmp_path / "opt.onnx"))
    opt = onnx.load(str(tmp_path / "opt.onnx"))
    assert optimize_differences(m, opt) == []
    assert _refined(opt) == (["n", "d"], 0)  # optimize adds no shape to an entry inference does not contradict
    assert [vi.name for vi in opt.functions[0].value_info] == ["b"]
    assert _checker_error(opt) is None


def _ld(number: int, payload: bytes) -> bytes:
    from shapeinfer.io.wire import varint

    return varint(number << 3 | 2) + varint(len(payload)) + payload


@pytest.mark.parametrize("command", [[], ["optimize"], ["make-dynamic", "--dim", "x:0=b"]])
def test_fields_of_a_newer_onnx_are_kept(command, tmp_path):
    """A model from a newer ONNX has fields this onnx does not know (field 99 here, in the
    model, its graph and a node): every write keeps them, as onnx's load and save do (the
    model and graph ones were lost: the writer copies the fields it knows)."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.graph.node[0].MergeFromString(_ld(99, b"node-extra"))
    m.graph.MergeFromString(_ld(99, b"graph-extra"))
    m.MergeFromString(_ld(99, b"model-extra"))
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    src.write_bytes(m.SerializeToString())
    _cli(*command[:1], str(src), "-o", str(out), *command[1:])
    written = out.read_bytes()
    assert [t in written for t in (b"model-extra", b"graph-extra", b"node-extra")] == [True] * 3
    again = onnx.load(str(out))
    assert again.graph.node[0].op_type == "Relu"
