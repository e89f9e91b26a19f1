"""What ``-o`` and ``optimize -o`` write runs wherever the original runs (issue 32), on the vision
sample of ``tests/models/vision/`` (real exporters: ultralytics YOLO, timm Swin, torchvision
RetinaNet, a paddle2onnx DB detector with ``[-1, 3, ?, ?]`` inputs): in onnxruntime with its
default session options, at every size 1, 2, 3, two draws of odd non-square sizes, and the
sizes each model's sidecar says fit it, with the original's outputs. And inference resolves
them: no dim a peer resolves is left open, no dim is wrong at the sidecar's bindings."""

from __future__ import annotations

import json

import onnx
import pytest
from support.common import ROOT
from support.written import axis_keys, feeds, size_grid, written_problems

import shapeinfer
from shapeinfer.analysis.verify import compare
from testkit import ort_oracle

VISION = ROOT / "tests" / "models" / "vision"
MODELS = sorted(p.stem for p in VISION.glob("*.onnx"))


def _load(name: str) -> tuple[onnx.ModelProto, list[dict[str, int]]]:
    m = onnx.load(str(VISION / f"{name}.onnx"))
    keys = axis_keys(m)
    bindings = []
    for b in json.loads((VISION / f"{name}.json").read_text())["bindings"]:
        # a sidecar binds dims by name; an axis with no name of its own takes its dim_param's value
        by_param = {
            key: b[vi.type.tensor_type.shape.dim[i].dim_param]
            for (inp, i), key in keys.items()
            for vi in m.graph.input
            if vi.name == inp
        }
        bindings.append(by_param)
    return m, bindings


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_written_models_run_wherever_the_original_runs(name):
    m, bindings = _load(name)
    grid = size_grid(set(axis_keys(m).values()), bindings)
    for how, written in (("-o", shapeinfer.infer_shapes(m)), ("optimize -o", shapeinfer.optimize(m))):
        runs, problems = written_problems(m, written, grid)
        assert runs >= 2, f"{how}: the original runs at {runs} sizes only"
        assert not problems, f"{how}: {problems}"


@pytest.mark.parametrize("name", MODELS)
def test_vision_sample_dims_are_right_at_the_sidecar_bindings(name):
    m, bindings = _load(name)
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    keys = axis_keys(m)
    for sizes in bindings:
        actual = ort_oracle.run_all(m, feeds(m, sizes))
        # facts are over the input symbols: bind them (a placeholder axis by its <input>_d<axis> name)
        binding = {}
        for (inp, i), key in keys.items():
            d = r.facts[inp].shape[i]
            binding.update({s: sizes[key] for s in shapeinfer.symbolic.dims.symbols(d)})
        for tensor, a in actual.items():
            reason, _, expected = compare(r.facts.get(tensor), a, binding)
            assert reason is None, (sizes, tensor, reason, expected)
