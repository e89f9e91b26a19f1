"""The human-readable catalog in the top-level ``rules/`` folder, generated from the registry.

``rules/README.md`` has hand-written prose around a generated section (between the
``<!-- catalog:start -->`` and ``<!-- catalog:end -->`` markers) that is rendered from
:data:`~shapeinfer.lint.registry.RULES`. The profiles exist once, in ``shapeinfer/lint/profiles/``
(a profile copied into ``rules/`` is reported). ``python -m shapeinfer.lint.catalog [--check]
[ROOT]`` rewrites the section (or, with ``--check``, exits 1 listing what is out of date).
"""

from __future__ import annotations

import os
import sys

from shapeinfer.lint import RULES
from shapeinfer.lint.registry import CHECKS, FAMILIES

START = "<!-- catalog:start -->"
END = "<!-- catalog:end -->"


def catalog_markdown() -> str:
    """The generated part of rules/README.md: a summary table, then a section per rule."""
    lines = [
        "| code | name | default severity | fix | target | summary |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    checked = {code for code, _ in CHECKS}
    for code in sorted(RULES, key=_order):
        r = RULES[code]
        lines.append(
            f"| [{code}](#{code.lower()}-{r.name}) | {r.name} | {r.severity} | {r.fix or ''} | "
            f"{r.target or 'all'} | {r.summary} |"
        )
    family = None
    for code in sorted(RULES, key=_order):
        r = RULES[code]
        if r.family != family:
            family = r.family
            lines += ["", f"### {family}"]
        lines += ["", f"#### {code} {r.name}", ""]
        meta = f"*Default severity:* **{r.severity}**"
        if r.fix:
            meta += f" · *Fixable* by the `{r.fix}` pass (`shapeinfer lint --fix`)"
        if r.target:
            meta += f" · *Only with* `--target {r.target}`"
        if code == "E900":
            by = ["the file reader"]
        else:
            by = ["inference"] if r.function is None else []
            by += ["a check over the graph and the inferred facts"] if code in checked else []
        meta += f" · *Reported by:* {' and '.join(by)}"
        lines += [meta, "", r.doc]
    return "\n".join(lines) + "\n"


def _order(code: str) -> tuple:
    fam = list(FAMILIES).index(code[0]) if code[0] in FAMILIES else len(FAMILIES)
    return (fam, code)


def render_readme(text: str) -> str:
    """``text`` with the generated section replaced (ValueError when the markers are missing)."""
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"rules/README.md lacks the {START} ... {END} markers")
    return text[: i + len(START)] + "\n\n" + catalog_markdown() + "\n" + text[j:]


def sync(root: str, check: bool = False) -> list[str]:
    """Bring ``ROOT/rules`` up to date (or, with ``check``, only list what differs)."""
    folder = os.path.join(root, "rules")
    stale = []
    readme = os.path.join(folder, "README.md")
    with open(readme, encoding="utf-8") as f:
        old = f.read()
    new = render_readme(old)
    if new != old:
        stale.append(readme)
        if not check:
            with open(readme, "w", encoding="utf-8") as f:
                f.write(new)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".toml"):
            stale.append(os.path.join(folder, name) + " (a second copy: profiles live in shapeinfer/lint/profiles/)")
    return stale


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    root = rest[0] if rest else "."
    stale = sync(root, check)
    for p in stale:
        print(("out of date: " if check else "updated: ") + p)
    return 1 if check and stale else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
