"""The bindings and inputs of the deployment round trip (``benchmarks/deploy_roundtrip.py``);
``tools/generators/make_deploy_variants.py`` checks its variants and draws its calibration data
with the same ones."""

from __future__ import annotations

import numpy as np
import onnx

from testkit import ort_oracle

#: The two bindings of the input symbols every round-trip model is run at.
BINDINGS = ({"batch": 2, "seq": 7}, {"batch": 3, "seq": 11})


def feeds(model: onnx.ModelProto, binding: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """The round trip's inputs (:func:`ort_oracle.feeds`; a symbol ``binding`` lacks is 1)."""
    return ort_oracle.feeds(model, binding, seed, unbound=1)
