"""Native inference rules, one module per op family (``contrib/`` for onnxruntime's contrib ops).

Each family module registers its rules with :func:`shapeinfer.inference.op_registry.register` when it is
imported. Nothing is imported here: :func:`shapeinfer.inference.op_registry.lookup` imports a family the
first time a model uses one of its ops, through the generated index :mod:`.rule_index`
(``python tools/gen_rule_index.py`` after adding or moving a rule).
"""
