"""How a run reads what other tools read differently: :class:`InferencePolicy`, one frozen value
given to :func:`~shapeinfer.inference.engine.infer` and carried on every
:class:`~shapeinfer.inference.node_context.NodeContext` (``ctx.policy``), so the rules that
read a case another way ask it there instead of being handed flags."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InferencePolicy:
    """The readings a run takes besides shapeinfer's own (all off: :data:`DEFAULT_POLICY`).

    - ``defaults_as_constants``: the values of the main graph's initializers that are also
      graph inputs (defaults a caller may override, otherwise only typed) are read as
      constants, as onnx's inference does, with an info G013 per input saying so
      (:mod:`shapeinfer.compat.onnx` takes it).
    - ``onnxruntime_conventions``: two readings of onnxruntime's symbolic tool, each visible
      (:mod:`shapeinfer.compat.onnxruntime` takes it): a constant negative Slice start or end
      counts from the end *within* a symbolic dim (``x[-10:]`` of ``M`` rows is 10 rows),
      recorded as the guard ``10 <= M`` with an info G012; and an Einsum whose contracted
      letter has two sizes (the node fails at run time: an error G002 all the same) still gets
      the output dims its other letters give.
    - ``claims_unassumed``: a declared type (``value_info``, a graph output) is checked against
      inference but never taken where inference knows less (no G013): the optimize passes'
      reading. A rewrite computed from a claim (a dim a graph output declares, folded into a
      constant) makes the written model fail wherever the claim is wrong, though its input,
      which computes the value, runs there.
    """

    defaults_as_constants: bool = False
    onnxruntime_conventions: bool = False
    claims_unassumed: bool = False


#: shapeinfer's own reading.
DEFAULT_POLICY = InferencePolicy()

#: the optimize passes' reading: what they rewrite is computed, never claimed.
PASSES_POLICY = InferencePolicy(claims_unassumed=True)
