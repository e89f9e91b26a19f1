"""What a model's IR version says about how to read it (the version as an int: no onnx import)."""

from __future__ import annotations


def initializers_are_inputs(ir_version: int) -> bool:
    """Whether a model of IR version ``ir_version`` lists every initializer among its graph's
    inputs too, as a constant: before IR 4 it must. From IR 4 on an initializer listed as an
    input is a default the caller may override. An unset version (0) counts as a current one."""
    return 0 < ir_version < 4


__all__ = ["initializers_are_inputs"]
