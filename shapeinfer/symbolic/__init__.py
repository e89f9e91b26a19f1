"""The symbolic algebra, ONNX-free: dims and their bounds (:mod:`.dims`), interval proofs
(:mod:`.intervals`), guards and their contradictions (:mod:`.guards`), the symbolic state of
one run (:mod:`.scope`) and what is known of one tensor (:mod:`.facts`). Nothing here imports
onnx or any layer above."""
