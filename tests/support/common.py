"""The real models shipped in examples/models/ and the command line run as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "examples" / "models"
MODEL_NAMES = ["bert_ts", "gpt2_ts", "llama_ts", "bert_dynamo", "llama_dynamo", "vit_dynamo"]


def model_path(name: str) -> Path:
    """Path of a shipped model by stem (``bert_ts``)."""
    return MODELS_DIR / f"{name}.onnx"


def load_stripped(name: str) -> onnx.ModelProto:
    """A shipped model with every annotation removed but the graph inputs' shapes."""
    m = onnx.load(str(model_path(name)))
    del m.graph.value_info[:]
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    return m


def run_cli(*args: str, cwd: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m shapeinfer.cli ARGS`` in a subprocess (as a user runs it), its stdout and
    stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "shapeinfer.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
