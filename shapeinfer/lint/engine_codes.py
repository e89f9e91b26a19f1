"""The codes the layers below lint report, in the lint catalog, each under its own code: lint
reports an engine diagnostic with the engine's code, so ``--select E031``, ``--ignore E017``,
``severity.E032`` and ``--explain E060`` work on them like on any rule.

The entries (name, severity, summary, doc) live below the engine, in
:mod:`shapeinfer.base.codes`, where the engine, its ops, the io layer and the pass manager name
each code by constant; this module declares each of them as a lint rule. A code that a lint
check also reports (``E003``, ``R007``, ``G004``...) adds its check with
:func:`~shapeinfer.lint.registry.also_checks`. ``tests/lint/test_lint_ci.py`` checks that every
code literal in the package is in the catalog.
"""

from __future__ import annotations

from shapeinfer.base.codes import CATALOG
from shapeinfer.lint.registry import declare

for _c in CATALOG.values():
    declare(_c.code, _c.name, _c.severity, _c.summary, _c.doc, fix=_c.fix)
