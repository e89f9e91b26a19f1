"""P008: OpenVINO's CPU plugin compiles static ranks only; onnx and onnxruntime run a tensor
whose rank is known at run time. Checked against the runtimes on a model and its neighbour."""

from __future__ import annotations

import onnx
import pytest

from testkit.lint_models import if_branch_declared_rank, if_with_constant_branch, reshape_to_runtime_rank
from testkit.runtime_probe import available, lint_verdict, probe

needs_openvino = pytest.mark.skipif(not available("openvino"), reason="openvino is not installed")


@pytest.mark.parametrize("length", ["k", 4], ids=["unknown-length", "length-4"])
def test_p008_exactly_where_the_rank_is_lost(tmp_path, length):
    p = tmp_path / "m.onnx"
    onnx.save(reshape_to_runtime_rank(length), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P008" in errors) == (length == "k")
    for target in ("onnx", "onnxruntime"):
        assert "P008" not in {f.code for f in lint_verdict(str(p), target)}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("length", ["k", 4], ids=["unknown-length", "length-4"])
def test_openvino_refuses_exactly_what_p008_reports(tmp_path, length):
    p = tmp_path / "m.onnx"
    onnx.save(reshape_to_runtime_rank(length), str(p))
    refused = probe("openvino", str(p))
    assert (refused is not None) == (length == "k"), refused


CONSTANT_BRANCHES = [[0, 4, 1, 8], [1, 4, 1, 8], [0]]
BRANCH_IDS = ["empty-constant", "one-row-constant", "empty-vector"]


def _lost(dims: list) -> bool:
    """OpenVINO loses the rank: an empty constant of rank 2 or more (rank 0 and 1 merge)."""
    return 0 in dims and len(dims) >= 2


@pytest.mark.parametrize("dims", CONSTANT_BRANCHES, ids=BRANCH_IDS)
def test_p008_an_if_branch_of_an_empty_constant(tmp_path, dims):
    """optimum's merged seq2seq decoders: the use-cache branch gives the encoder's past as an
    empty constant, which OpenVINO's frontend makes rank 0 against the other branch's rank 4;
    torchvision's detectors give an empty [0] against a rank-1 branch, which it merges."""
    p = tmp_path / "m.onnx"
    onnx.save(if_with_constant_branch(dims), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P008" in errors) == _lost(dims)
    for target in ("onnx", "onnxruntime"):
        assert "P008" not in {f.code for f in lint_verdict(str(p), target)}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("dims", CONSTANT_BRANCHES, ids=BRANCH_IDS)
def test_openvino_refuses_exactly_the_empty_constant_branch(tmp_path, dims):
    p = tmp_path / "m.onnx"
    onnx.save(if_with_constant_branch(dims), str(p))
    refused = probe("openvino", str(p))
    assert (refused is not None) == _lost(dims), refused


#: (label, model builder, OpenVINO refuses it): a rank the model declares, which OpenVINO's ONNX
#: frontend does not read, against the same models with a shape of static length.
DECLARED = [
    ("main-value-info", lambda: reshape_to_runtime_rank("k", declared=True), True),
    ("main-value-info-length-2", lambda: reshape_to_runtime_rank(2, declared=True), False),
    ("if-branch-output", lambda: if_branch_declared_rank("k"), True),
    ("if-branch-output-length-2", lambda: if_branch_declared_rank(2), False),
    ("if-branch-undeclared", lambda: if_branch_declared_rank("k", declared=False), True),
]


@pytest.mark.parametrize(("label", "build", "refused"), DECLARED, ids=[d[0] for d in DECLARED])
def test_p008_a_declared_rank_is_not_openvinos(tmp_path, label, build, refused):
    """Inference takes a rank it cannot determine from the model's declarations (G013); OpenVINO
    does not read them (silero-vad: If branch outputs declared deep in nested Ifs)."""
    p = tmp_path / "m.onnx"
    onnx.save(build(), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P008" in errors) == refused
    for target in ("onnx", "onnxruntime"):
        assert "P008" not in {f.code for f in lint_verdict(str(p), target)}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize(("label", "build", "refused"), DECLARED, ids=[d[0] for d in DECLARED])
def test_openvino_refuses_a_rank_only_declared(tmp_path, label, build, refused):
    p = tmp_path / "m.onnx"
    onnx.save(build(), str(p))
    why = probe("openvino", str(p))
    assert (why is not None) == refused, why


def test_p008_leaves_the_model_as_it_was():
    """P008 reads the model without its declarations in place (no copy of the weights) and puts
    them back: the linted model has the same bytes after, untyped outputs included."""
    from shapeinfer.lint import lint_model

    for m in (if_branch_declared_rank("k"), reshape_to_runtime_rank("k", declared=True)):
        m.graph.output.add().name = "untyped"  # an output without a type stays without one
        m.graph.node.add().CopyFrom(onnx.helper.make_node("Identity", ["x"], ["untyped"]))
        before = m.SerializeToString()
        assert "P008" in {f.code for f in lint_model(m, "m.onnx", target="openvino")}
        assert m.SerializeToString() == before
