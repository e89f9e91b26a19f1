"""shapeinfer: static symbolic shape inference and graph rewriting for ONNX models.

Python API:

- :func:`infer_shapes` — a copy of a model with every tensor's dims in ``value_info``.
- :func:`infer` — the full result: per-tensor facts (dims as ints / symbolic expressions),
  input and fresh symbols, assumed equalities, diagnostics.
- :mod:`shapeinfer.dims` — the symbolic dimension algebra.
"""

from shapeinfer.api import infer, infer_shapes
from shapeinfer.engine import Result
from shapeinfer.passes import optimize

__version__ = "0.1.0"

__all__ = ["Result", "__version__", "infer", "infer_shapes", "optimize"]
