"""The body of ``shapeinfer lint`` (the click command itself is in :mod:`shapeinfer.commands.lint`).

Exit codes: 0 no error-level finding, 1 at least one, 2 could not run (bad flag or
configuration, a missing path, or a model file that cannot be read, reported as E900).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

import click

from shapeinfer.checks.config import ConfigError, LintConfig, resolve
from shapeinfer.checks.registry import RULES, split_codes
from shapeinfer.checks.report import github_lines, summary_line, text_lines, to_json, to_sarif
from shapeinfer.checks.runner import FileResult, LintUsageError, default_jobs, discover, lint_paths

EXIT_CLEAN, EXIT_FINDINGS, EXIT_FAILED = 0, 1, 2


class LintError(Exception):
    """A user-facing failure before linting starts (one line, exit 2)."""


def explain(code: str) -> str:
    """A rule's documentation as plain text (``shapeinfer lint --explain R004``)."""
    r = RULES.get(code.strip().upper())
    if r is None:
        raise LintError(f"--explain: unknown rule code {code!r} (see --list-rules)")
    lines = [f"{r.code} {r.name} ({r.severity})", "", r.summary, "", r.doc]
    if r.fix:
        lines += ["", f"Fixable: `shapeinfer lint --fix` applies the {r.fix} pass."]
    if r.target:
        lines += ["", f"Runs only with --target {r.target}."]
    return "\n".join(lines)


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
) -> LintConfig:
    try:
        return resolve(
            rules=rules,
            select=split_codes(select) or None,
            extend_select=split_codes(extend_select),
            ignore=split_codes(ignore),
            target=target,
            config=config,
            isolated=isolated,
        )
    except ConfigError as e:
        raise LintError(str(e)) from None


def run(
    paths: Sequence[str],
    cfg: LintConfig,
    *,
    fmt: str = "text",
    output_file: str | None = None,
    fix: bool = False,
    in_place: bool = False,
    jobs: int = 0,
    version: str = "",
) -> int:
    """Lint ``paths``, write the report, return the exit code."""
    if in_place and not fix:
        raise LintError("--in-place only applies with --fix")
    try:
        files = discover(paths)
    except LintUsageError as e:
        raise LintError(str(e)) from None
    if output_file is not None:  # refused before any work, like a model's -o
        from shapeinfer.userfiles import UserFileError, output_target

        try:
            output_target(output_file, inputs=[*files, *cfg_files(cfg)], what="report")
        except UserFileError as e:
            raise LintError(str(e)) from None
    n_jobs = jobs or default_jobs(len(files))
    from shapeinfer.progress import Progress

    with Progress("lint", total=len(files)) as bar:
        results = lint_paths(files, cfg, fix=fix, in_place=in_place, jobs=n_jobs, on_done=lambda r: bar.advance())
    for r in results:
        for note in r.notes:
            click.echo(note, err=True)
    findings = [f for r in results for f in r.findings]
    data = [p for r in results for p in r.data_files]
    _write_report(findings, results, cfg, fmt, output_file, version, inputs=[*files, *cfg_files(cfg)], data_inputs=data)
    unreadable = [r.path for r in results if r.unreadable]
    if unreadable:
        click.echo(
            f"shapeinfer: error: {len(unreadable)} file(s) could not be read as ONNX models (E900): "
            + ", ".join(unreadable[:5])
            + (" ..." if len(unreadable) > 5 else ""),
            err=True,
        )
        return EXIT_FAILED
    return EXIT_FINDINGS if any(f.severity == "error" for f in findings) else EXIT_CLEAN


def cfg_files(cfg: LintConfig) -> list[str]:
    """The configuration files ``cfg`` was read from (inputs a report must not overwrite)."""
    paths = [src.split(" [", 1)[0] for src in cfg.sources]
    return [p for p in paths if os.path.isfile(p)]


def _write_report(
    findings,
    results: list[FileResult],
    cfg: LintConfig,
    fmt: str,
    output_file,
    version: str,
    inputs: Sequence[str] = (),
    data_inputs: Sequence[str] = (),
) -> None:
    to_terminal = output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    if fmt == "json":
        text = to_json(findings)
    elif fmt == "sarif":
        active = [c for c in RULES if cfg.is_active(c)]
        text = json.dumps(to_sarif(findings, version, active), indent=1)
    elif fmt == "github":
        text = "\n".join(github_lines(findings))
    else:
        lines = text_lines(findings, color=to_terminal)
        lines.append(summary_line(findings, len(results)))
        text = "\n".join(lines)
    if output_file is None:
        if text:
            click.echo(text, color=to_terminal)
        return
    from shapeinfer.userfiles import UserFileError, write_output

    try:
        data = (text + ("\n" if text else "")).encode("utf-8", "backslashreplace")
        write_output(output_file, data, inputs=inputs, what="report", data_inputs=data_inputs)
    except UserFileError as e:
        raise LintError(str(e)) from None
