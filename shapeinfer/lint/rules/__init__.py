"""The lint rules by subject, each registering its checks on import: graph structure
(:mod:`.graph`), model-level (:mod:`.model`), Reshape (:mod:`.reshape`), shapes
(:mod:`.shape`), runtime targets (:mod:`.targets`), model structure (:mod:`.structure`) and
attributes against the op's schema (:mod:`.attributes`)."""
