"""The symbolic algebra, ONNX-free: dims and their bounds (:mod:`.dims`, over :mod:`.expr` and
:mod:`.lower_bounds`), interval proofs (:mod:`.intervals`), guards and their contradictions
(:mod:`.guards`), the symbolic state of one run (:mod:`.scope`) and what is known of one tensor
(:mod:`.facts`). Nothing here imports onnx or any layer above.

Importing the package registers :func:`~.dims.lower_bound`'s refinements with the algebra
(:mod:`.lower_bounds` builds on :mod:`.dims`, which therefore cannot import it): any import of a
module of the package runs this first."""

from shapeinfer.symbolic import lower_bounds  # noqa: F401  (registers the refinements)
