"""What the tests, the benchmarks and the fuzzers share, so that a benchmark and the test of the
same property build, feed and compare alike: the onnxruntime oracle (:mod:`.ort_oracle`), the
round trip's bindings and inputs (:mod:`.roundtrip`), the runtime probes (:mod:`.runtime_probe`),
the lint and model-structure fixtures (:mod:`.lint_models`, :mod:`.structure_models`), the
differential fuzzer's graph strategies (:mod:`.fuzz_graphs`) and the I/O audit driver
(:mod:`.cli_driver`, run as a script) with the external-data model it audits
(:mod:`.external_models`).

Imported as ``from testkit.X import ...`` with the checkout on ``sys.path`` (pytest's
``pythonpath``; the scripts insert it). Never shipped: the package is ``shapeinfer`` alone.
This package imports nothing from ``tests/`` or ``benchmarks/``.
"""
