"""The lint rules by subject, each registering its checks on import: graph structure
(:mod:`.graph`), model-level (:mod:`.model`), Reshape (:mod:`.reshape`), shapes
(:mod:`.shape`) and runtime targets (:mod:`.targets`)."""
