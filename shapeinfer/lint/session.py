"""One ``shapeinfer lint`` run, without the command line: the documentation of rules
(:func:`explain`, :func:`list_rules`), the settings (:func:`configure`), the files linted
(:func:`lint_run`) and the report (:func:`render_report`). The click command,
:mod:`shapeinfer.cli.commands.lint`, calls these and prints what they return.

Exit codes: 0 no finding at or above the ``--fail-on`` severity (default ``error``), 1 at least
one, 2 could not run (bad flag or configuration, a missing path, or a model file that cannot be
read, reported as E900). With ``--fix`` the findings counted are those left after fixing: the
written model's, or the model's own where nothing was written (so a fix that wrote nothing
leaves its findings, and exits 1 when they reach ``--fail-on``).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shapeinfer.base.codes import Code
from shapeinfer.base.diagnostics import SEVERITIES
from shapeinfer.base.progress import Progress
from shapeinfer.base.suggest import did_you_mean
from shapeinfer.io.userfiles import STDIO, UserFileError, check_stdout, output_target
from shapeinfer.lint.config import ConfigError, LintConfig, resolve
from shapeinfer.lint.context import Finding
from shapeinfer.lint.registry import RULES, split_codes
from shapeinfer.lint.report import github_lines, summary_line, text_lines, to_json, to_sarif
from shapeinfer.lint.runner import FileResult, LintUsageError, default_jobs, discover, fixed_path, lint_paths

EXIT_CLEAN, EXIT_FINDINGS, EXIT_FAILED = 0, 1, 2


class LintError(Exception):
    """A user-facing failure before linting starts (one line, exit 2)."""


def find_rule(key: str) -> Code:
    """The rule a code (``R009``, any case) or a name (``reshape-noop``) names; LintError with a
    "did you mean" otherwise."""
    k = key.strip()
    r = RULES.get(k.upper()) or next((r for r in RULES.values() if r.name == k.lower()), None)
    if r is None:
        names = [*RULES, *(r.name for r in RULES.values())]
        raise LintError(f"--explain: unknown rule {k!r}{did_you_mean(k, names)} (see --list-rules)")
    return r


def plain(text: str) -> str:
    """A rule doc as plain text: the docstrings' reStructuredText literals (````x````) as ``x``."""
    return re.sub(r"``(.+?)``", r"\1", text, flags=re.S)


def explain(keys: str) -> str:
    """The documentation of the rules ``keys`` names (codes or names, comma-separated: ``R004``,
    ``reshape-noop``) as plain text (``shapeinfer lint --explain``)."""
    out = []
    for key in split_codes([keys]) or [keys]:
        r = find_rule(key)
        lines = [f"{r.code} {r.name} ({r.severity})", "", r.summary, "", plain(r.doc)]
        if r.fix:
            lines += ["", f"Fixable: shapeinfer lint --fix applies the {r.fix} pass."]
        if r.target:
            lines += ["", f"Runs only with --target {r.target}."]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def list_rules() -> str:
    """One line per rule: code, severity, fix, name, summary."""
    out = []
    for code in sorted(RULES):
        r = RULES[code]
        tags = [r.severity] + (["fix"] if r.fix else []) + ([r.target] if r.target else [])
        out.append(f"{code}  {r.name:<42} {','.join(tags):<20} {r.summary}")
    return "\n".join(out)


def configure(
    rules: str | None,
    select: Sequence[str],
    extend_select: Sequence[str],
    ignore: Sequence[str],
    target: str | None,
    config: str | None,
    isolated: bool,
    dim_ranges: dict | None = None,
    fail_on: str | None = None,
) -> LintConfig:
    """The settings of one run (profile, project file, flags); LintError for anything invalid."""
    try:
        return resolve(
            rules=rules,
            select=split_codes(select) or None,
            extend_select=split_codes(extend_select),
            ignore=split_codes(ignore),
            target=target,
            config=config,
            isolated=isolated,
            dim_ranges=dim_ranges,
            fail_on=fail_on,
        )
    except ConfigError as e:
        raise LintError(str(e)) from None


@dataclass
class LintRun:
    """What linting the files found: each file's result, the findings of all of them, the lines
    for stderr that come before the report (``notes``), the external data files read, and the
    exit code."""

    files: list[str]
    results: list[FileResult]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)

    @property
    def unreadable(self) -> list[str]:
        """The files that could not be read as models (E900)."""
        return [r.path for r in self.results if r.unreadable]

    def unreadable_line(self) -> str | None:
        """The error line for stderr naming the unreadable files, None when every file was read."""
        bad = self.unreadable
        if not bad:
            return None
        return (
            f"shapeinfer: error: {len(bad)} file(s) could not be read as ONNX models (E900): "
            + ", ".join(bad[:5])
            + (" ..." if len(bad) > 5 else "")
        )

    def exit_code(self, cfg: LintConfig) -> int:
        """2 when a file was unreadable, else 1 when a finding reaches ``cfg``'s ``--fail-on``, else 0."""
        if self.unreadable:
            return EXIT_FAILED
        return EXIT_FINDINGS if any(cfg.fails(f.severity) for f in self.findings) else EXIT_CLEAN


def lint_run(
    paths: Sequence[str],
    cfg: LintConfig,
    *,
    fmt: str = "text",
    output_file: str | None = None,
    fix: bool = False,
    in_place: bool = False,
    jobs: int = 0,
    statistics: bool = False,
) -> LintRun:
    """Lint ``paths`` under ``cfg`` (with ``fix``, fixing them). LintError, before any model is
    read, for a flag combination that cannot run, a missing path, or an ``output_file`` the
    report may not be written to (one of the inputs, or a model ``fix`` writes)."""
    if in_place and not fix:
        raise LintError("--in-place only applies with --fix")
    if statistics and fmt not in ("text", "json"):
        raise LintError(f"--statistics prints text or json, not {fmt}")
    try:
        files = discover(paths)
    except LintUsageError as e:
        raise LintError(str(e)) from None
    # refused before any work, like a model's -o: the report never lands in a file linted
    written = [fixed_path(f) for f in files] if fix and not in_place else []  # (--fix's outputs)
    if output_file not in (None, STDIO):
        target = os.path.realpath(output_file)
        for w in written:
            if os.path.realpath(w) == target:
                raise LintError(f"{output_file}: the report would overwrite {w}, the model --fix writes")
    try:
        if output_file in (None, STDIO):
            check_stdout([*files, *cfg_files(cfg)], what="report")
        else:
            output_target(output_file, inputs=[*files, *written, *cfg_files(cfg)], what="report")
    except UserFileError as e:
        raise LintError(str(e)) from None
    n_jobs = jobs or default_jobs(len(files))

    with Progress("lint", total=len(files)) as bar:
        results = lint_paths(files, cfg, fix=fix, in_place=in_place, jobs=n_jobs, on_done=lambda r: bar.advance())
    notes = [note for r in results for note in r.notes]
    if fix and not any(r.written for r in results):
        left = sum(1 for r in results for f in r.findings if f.fix)
        why = f"{left} fixable finding{'s' if left != 1 else ''} left" if left else "no fixable finding"
        notes.append(f"shapeinfer: --fix wrote no file ({why})")
    notes += _unused_ranges(cfg, results)
    findings = [f for r in results for f in r.findings]
    data = [p for r in results for p in r.data_files]
    return LintRun(files, results, findings, notes, data)


def _unused_ranges(cfg: LintConfig, results: Sequence[FileResult]) -> list[str]:
    """A warning for stderr for each range no linted model's inputs use (a typo, or a range
    meant for other models): ranges set for a whole project are not errors."""
    read = [r for r in results if not r.unreadable]
    if not read:
        return []
    used: set[str] = set().union(*(r.symbols for r in read))
    return [
        f"shapeinfer: warning: range {sym} ({cfg.range_sources.get(sym, '?')}): no linted model has an "
        f"input dim named {sym!r}{did_you_mean(sym, used)}"
        for sym in sorted(cfg.dim_ranges.keys() - used)
    ]


def statistics_rows(findings: Sequence[Finding]) -> list[dict]:
    """Counts per code, most frequent first (then by code), as ruff's ``--statistics``: each row
    the code, rule name, the most severe level reported, the count at each level (a code's level
    differs between findings where a target or profile regrades some), the count and how many
    are fixable."""
    count = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix)
    worst: dict[str, str] = {}
    by_severity: dict[str, Counter] = {}
    for f in findings:
        cur = worst.get(f.code)
        if cur is None or _rank(f.severity) < _rank(cur):
            worst[f.code] = f.severity
        by_severity.setdefault(f.code, Counter())[f.severity] += 1
    names = {f.code: f.name for f in findings}
    return [
        {
            "code": c,
            "name": names[c] or (RULES[c].name if c in RULES else ""),
            "severity": worst[c],
            "severities": {k: by_severity[c][k] for k in sorted(by_severity[c], key=_rank)},
            "count": n,
            "fixable": fixable[c],
        }
        for c, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


#: the line under ``--statistics``' table that says what its marks mean
FIXABLE_LEGEND = "[*] every finding fixable with --fix, [-] some, [ ] none"


def _severity_cell(r: dict) -> str:
    """``error`` when every finding of the code has that level, else each level with its count
    (``20 error, 47 warning``): the cells then add up to the summary line's totals."""
    sev = r.get("severities") or {r["severity"]: r["count"]}
    if len(sev) == 1:
        return next(iter(sev))
    return ", ".join(f"{n} {k}" for k, n in sev.items())


def statistics_lines(rows: Sequence[dict]) -> list[str]:
    """The text table: ``count  code  [*]  severity  name``, then :data:`FIXABLE_LEGEND`."""
    if not rows:
        return []
    width = max(len(str(r["count"])) for r in rows)
    sev_w = max(len(_severity_cell(r)) for r in rows)
    out = []
    for r in rows:
        mark = "[*]" if r["fixable"] == r["count"] else "[-]" if r["fixable"] else "[ ]"
        out.append(f"{r['count']:>{width}}  {r['code']}  {mark}  {_severity_cell(r):<{sev_w}}  {r['name']}")
    return [*out, FIXABLE_LEGEND]


def cfg_files(cfg: LintConfig) -> list[str]:
    """The configuration files ``cfg`` was read from (inputs a report must not overwrite)."""
    paths = [src.split(" [", 1)[0] for src in cfg.sources]
    return [p for p in paths if os.path.isfile(p)]


def render_report(
    run: LintRun,
    cfg: LintConfig,
    fmt: str,
    version: str,
    *,
    statistics: bool = False,
    style: Callable[..., str] | None = None,
) -> str:
    """The report of ``run`` in ``fmt`` (text, json, sarif, github; with ``statistics``, the
    counts per code in text or json), without a final newline; ``style`` colours text findings
    (:func:`~shapeinfer.lint.report.text_lines`; never statistics)."""
    findings = run.findings
    if statistics:
        rows = statistics_rows(findings)
        if fmt == "json":
            return json.dumps(rows, indent=1)
        return "\n".join([*statistics_lines(rows), summary_line(findings, len(run.results))])
    if fmt == "json":
        return to_json(findings)
    if fmt == "sarif":
        active = [c for c in RULES if cfg.is_active(c)]
        return json.dumps(to_sarif(findings, version, active), indent=1)
    if fmt == "github":
        return "\n".join(github_lines(findings))
    lines = text_lines(findings, style)
    lines.append(summary_line(findings, len(run.results)))
    return "\n".join(lines)
