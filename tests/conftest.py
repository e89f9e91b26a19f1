"""Pytest set-up: the parametrized shipped-model fixture; shared helpers are in the
``support`` package (tests/support/)."""

from __future__ import annotations

import pytest
from support.common import MODEL_NAMES

# onnx's own test files, vendored for tests/onnx_suite/harness.py (run in a subprocess with
# shapeinfer in place of onnx's inference): never collected as this project's tests.
collect_ignore = ["onnx_suite"]


@pytest.fixture(params=MODEL_NAMES)
def model_name(request) -> str:
    return request.param
