"""The ground floor: what every layer may use. No onnx, no other shapeinfer import: the
diagnostic record (:mod:`.diagnostics`), did-you-mean hints (:mod:`.suggest`), the progress
line on stderr (:mod:`.progress`), a topological order (:mod:`.toposort`)."""
