"""Shape inference: the entry points (:mod:`.engine`: ``infer`` and the checks after the walk,
:mod:`.result`, :mod:`.policy`), the walk over graphs (:mod:`.walker`, with :mod:`.functions`,
:mod:`.declared_types`, :mod:`.limits` and onnx's per-node inference in :mod:`.fallback`), what a
rule sees (:mod:`.node_context`), the op-rule registry (:mod:`.op_registry`) and the rules by op
family (:mod:`.ops`), declared types as claims (:mod:`.declarations`), the user's bindings
(:mod:`.bindings`) and the inferred types written into a model (:mod:`.annotate`). Imports only
:mod:`shapeinfer.io` and below."""
