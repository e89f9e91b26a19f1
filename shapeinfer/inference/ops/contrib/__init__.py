"""Native rules for onnxruntime's contrib ops (com.microsoft, com.microsoft.nchwc, and the few
schemas onnxruntime registers in the default domain), one module per family, imported when a
model uses one of its ops (see :mod:`shapeinfer.inference.op_registry`).

Shapes and output types follow onnxruntime's contrib operator documentation
(``docs/ContribOperators.md``) and its registered schemas. Rules are keyed by domain, so an
ai.onnx op of the same name (``Attention``-23, ``RotaryEmbedding``-23, ``Gelu``-20) never
reaches a contrib rule, nor the reverse.
"""
