"""Tools over an inference result, beside the passes and the linter: comparison with
onnxruntime (:mod:`.verify`), deployment shape profiles (:mod:`.deployment`, the ``profile``
command) and the model at a glance (:mod:`.summary`)."""
