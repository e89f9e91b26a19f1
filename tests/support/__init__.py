"""What the tests share: paths of the shipped models and the command run as a subprocess
(:mod:`.common`), oracles (:mod:`.op_oracle`,
:mod:`.contrib_oracle`), model builders (:mod:`.builders`) and pass
helpers. Imported as ``from support.X import ...`` (``tests/`` is on ``sys.path`` through its
conftest.py). What the tests share with the benchmarks and fuzzers (the onnxruntime oracle, the
runtime probes, the lint and structure fixtures, the fuzz graph strategies, the I/O audit driver)
is in ``testkit/`` at the top of the checkout; the benchmarks never import this package."""
