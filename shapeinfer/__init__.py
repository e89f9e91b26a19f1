"""shapeinfer: static symbolic shape inference and graph rewriting for ONNX models.

Python API:

- :func:`open` — a :class:`~shapeinfer.document.Document`: one model from load to write
  (``shapeinfer.open("m.onnx").optimize().write("out.onnx")``), what every front end uses.
- :func:`infer_shapes` — a copy of a model with every tensor's dims in ``value_info``.
- :func:`infer` — the full result: per-tensor facts (dims as ints / symbolic expressions),
  input and fresh symbols, assumed equalities, diagnostics.
- :func:`optimize` — the rewriting passes of ``shapeinfer optimize``.
- :func:`make_dynamic` — static input axes made symbolic, every constant that baked them in
  rewritten (``shapeinfer make-dynamic``).
- :mod:`shapeinfer.symbolic.dims` — the symbolic dimension algebra.

The names are imported on first use, so ``import shapeinfer`` (and ``shapeinfer --version``)
does not load onnx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Document", "Result", "__version__", "infer", "infer_shapes", "make_dynamic", "open", "optimize"]

if TYPE_CHECKING:
    from shapeinfer.api import infer, infer_shapes, make_dynamic, optimize
    from shapeinfer.document import Document, open
    from shapeinfer.inference.engine import Result

_LAZY = {
    "infer": "shapeinfer.api",
    "infer_shapes": "shapeinfer.api",
    "Result": "shapeinfer.inference.engine",
    "optimize": "shapeinfer.api",
    "make_dynamic": "shapeinfer.api",
    "open": "shapeinfer.document",
    "Document": "shapeinfer.document",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shapeinfer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
