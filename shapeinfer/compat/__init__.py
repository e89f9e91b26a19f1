"""Drop-in replacements for the shape inference entry points tools already call.

- :mod:`shapeinfer.compat.onnx`: ``infer_shapes`` and ``infer_shapes_path`` with the signatures
  of ``onnx.shape_inference``'s;
- :mod:`shapeinfer.compat.onnxruntime`: ``SymbolicShapeInference.infer_shapes`` with the
  signature of onnxruntime's ``onnxruntime.tools.symbolic_shape_infer``, and its command line
  (``python -m shapeinfer.compat.onnxruntime --input M --output OUT``);
- :mod:`shapeinfer.compat.onnx_shape_inference`: ``infer_symbolic_shapes`` with the signature of
  onnx-shape-inference's, on an ``onnx_ir.Model`` in place (needs ``onnx-ir``).

Switching is a change of import. Each module's docstring lists how the results differ.
"""
