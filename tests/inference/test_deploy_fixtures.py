"""The deployment-pipeline fixtures are what their README says, and onnxruntime runs them."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np
import onnx
import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "models" / "deploy"
ROWS = re.findall(r"^\| `([^`]+\.onnx)` \| [^|]+ \| ([^|]+) \|$", (DEPLOY / "README.md").read_text(), re.M)


def test_readme_lists_every_fixture_once() -> None:
    listed = [name for name, _ in ROWS]
    assert sorted(listed) == sorted(p.name for p in DEPLOY.glob("*.onnx"))
    assert sum(p.stat().st_size for p in DEPLOY.glob("*.onnx")) < 8 * 2**20


@pytest.mark.parametrize(("name", "ops"), ROWS, ids=[n for n, _ in ROWS])
def test_fixture_has_its_ops_and_runs_in_onnxruntime(name: str, ops: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    model = onnx.load(str(DEPLOY / name))
    have = collections.Counter(n.op_type for n in model.graph.node)
    for op in re.findall(r"\b[A-Z]\w*[a-z]\w*\b", ops):  # every op type the README row names
        assert have[op], f"{name} has no {op}"
    sess = ort.InferenceSession(str(DEPLOY / name), providers=["CPUExecutionProvider"])
    for batch, seq in ((2, 7), (3, 11)):
        feeds = {}
        for vi in sess.get_inputs():
            shape = [{"batch": batch, "seq": seq}.get(d, d) for d in vi.shape]
            if vi.type == "tensor(int64)":
                feeds[vi.name] = (
                    np.ones(shape, np.int64) if "mask" in vi.name else np.arange(np.prod(shape)).reshape(shape) % 50
                )
            else:
                feeds[vi.name] = np.zeros(shape, np.float32)
        outs = sess.run(None, feeds)
        assert all(np.all(np.isfinite(o)) for o in outs if o.dtype.kind == "f")
