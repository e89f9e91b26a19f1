"""What the runtimes behind the lint targets (and optimize --target-opset) can load: ``runtime_ops.json``.

The file is generated from the installed runtimes by ``tools/generators/make_runtime_tables.py``
(onnxruntime's CPU kernels, and ops it expands; the ops OpenVINO's ONNX frontend has a
conversion rule for), and records the runtime versions it was made with. For each runtime and
each domain it probed: op name -> the ranges of that domain's opset versions it loads.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

#: The runtimes in the table (lint targets with a table of their own).
RUNTIMES = ("onnxruntime", "openvino")

#: The runtime each lint target is judged by: oneDNN Graph has none to install, and its
#: profile follows onnx's checker.
JUDGED_BY = {"onnx": "onnx", "onnxruntime": "onnxruntime", "openvino": "openvino", "onednn": "onnx"}


#: How a finding names the runtime that judges it.
RUNTIME_NAMES = {"onnx": "onnx's checker", "onnxruntime": "onnxruntime", "openvino": "OpenVINO"}


def judging_runtime(target: str) -> str:
    """The runtime whose acceptance a finding's severity under ``target`` follows."""
    return JUDGED_BY.get(target, "onnx")


@lru_cache(maxsize=1)
def table() -> dict:
    """The parsed ``runtime_ops.json``."""
    text = (resources.files("shapeinfer.base") / "runtime_ops.json").read_text(encoding="utf-8")
    return json.loads(text)


def version(runtime: str) -> str:
    """The version of ``runtime`` the table was generated with (``2026.4.1``)."""
    return table()[runtime]["version"]


def knows_domain(runtime: str, domain: str) -> bool:
    """Whether the table lists ``domain``'s ops for ``runtime`` (``ai.onnx`` is ``""``)."""
    return ("" if domain == "ai.onnx" else domain) in table()[runtime]["ops"]


def newest_opset(runtime: str, domain: str) -> int | None:
    """The newest opset version of ``domain`` a model may import for ``runtime`` to load it (it
    refuses a newer one whatever the nodes); None when the table does not say (OpenVINO loads
    newer imports)."""
    return table()[runtime].get("newest_opsets", {}).get("" if domain == "ai.onnx" else domain)


def loads(runtime: str, domain: str, op: str, opset: int) -> bool | None:
    """Whether ``runtime`` loads ``domain.op`` under ``domain``'s opset ``opset``: None when the
    table does not cover ``domain``. A version above the highest probed counts as the highest."""
    domain = "" if domain == "ai.onnx" else domain
    t = table()[runtime]
    ops = t["ops"].get(domain)
    if ops is None:
        return None
    v = min(opset, t["opsets"][domain][1])
    return any(lo <= v <= hi for lo, hi in ops.get(op, ()))
