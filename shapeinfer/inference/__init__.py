"""Shape inference: the walk over graphs (:mod:`.engine`), what a rule sees
(:mod:`.node_context`), the op-rule registry (:mod:`.op_registry`) and the rules by op family
(:mod:`.ops`), declared types as claims (:mod:`.declarations`), the user's bindings
(:mod:`.bindings`) and the inferred types written into a model (:mod:`.annotate`). Imports only
:mod:`shapeinfer.io` and below."""
