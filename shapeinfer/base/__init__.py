"""The ground floor: what every layer may use. No onnx, no other shapeinfer import: the
diagnostic record (:mod:`.diagnostics`), the catalog of every code the lower layers report
(:mod:`.codes`), did-you-mean hints (:mod:`.suggest`), the progress line on stderr
(:mod:`.progress`), a topological order (:mod:`.toposort`), what an IR version implies
(:mod:`.ir_version`), a call run apart in a forked child (:mod:`.isolated`), a name a model
holds as text (:mod:`.text`)."""
