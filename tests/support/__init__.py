"""What the tests share: paths of the shipped models and the command run as a subprocess
(:mod:`.common`), oracles (onnxruntime: :mod:`.ort_oracle`, :mod:`.op_oracle`,
:mod:`.contrib_oracle`, :mod:`.runtime_probe`), model builders (:mod:`.builders`,
:mod:`.external_models`, :mod:`.lint_models`, :mod:`.fuzz_graphs`), pass helpers and the
I/O audit driver (:mod:`.cli_driver`). Imported as ``from support.X import ...`` (``tests/``
is on ``sys.path`` through its conftest.py); the benchmarks import some of them too."""
