"""The one catalog of codes (shapeinfer/base/codes.py): each entry says who reports it and names
its fixture truthfully, and docs/rules.md is what tools/gen_rule_docs.py makes of it."""

from __future__ import annotations

import importlib.util

from support.common import ROOT

from shapeinfer.base.codes import CATALOG, CHECK, ENGINE, READER, TARGETS
from shapeinfer.base.diagnostics import SEVERITIES
from shapeinfer.lint.registry import CHECKS
from testkit.lint_models import CASES


def _generator():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", ROOT / "tools" / "gen_rule_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_rules_md_is_up_to_date():
    """docs/rules.md is generated (regenerate: python tools/gen_rule_docs.py)."""
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert text == _generator().render(), "docs/rules.md is stale: run python tools/gen_rule_docs.py"
    for code, c in CATALOG.items():
        assert f"### {code} {c.name}\n" in text


def test_every_entry_is_well_formed():
    for code, c in CATALOG.items():
        assert c.code == code
        assert c.severity in SEVERITIES, code
        assert c.target is None or c.target in TARGETS, code
        assert c.by and set(c.by) <= {ENGINE, CHECK, READER}, code


def test_an_entry_says_a_check_reports_it_exactly_when_one_does():
    checked = {code for code, _ in CHECKS}
    assert checked == {code for code, c in CATALOG.items() if CHECK in c.by}


def test_fixtures_name_a_case_that_fires():
    """An entry's fixture is a case of its own code that must fire; a code with such a case
    names one."""
    firing: dict[str, set[str]] = {}
    for case in CASES:
        if case.triggers:
            firing.setdefault(case.code, set()).add(case.id)
    for code, c in CATALOG.items():
        if c.fixture is not None:
            assert c.fixture in firing.get(code, set()), (code, c.fixture)
        else:
            assert code not in firing, code
