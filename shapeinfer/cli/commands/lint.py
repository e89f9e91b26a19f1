"""``shapeinfer lint``: the click command (its options, what it prints where, its exit codes).
The run itself (settings, the files' findings, the report's text) is
:mod:`shapeinfer.lint.session`; the rules are the catalog of codes, documented in docs/rules.md.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
"""

from __future__ import annotations

import os
import sys

import click

from shapeinfer import __version__
from shapeinfer.cli.common import SECONDS, CliError, Number, _run_guarded, parse_dim_ranges


@click.command("lint", short_help="Check models against the rule catalog (CI gate).")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--rules", metavar="NAME|FILE", help="Rule profile: default, strict, onnxruntime, openvino, onednn, or a TOML file."
)
@click.option("--select", multiple=True, metavar="CODES", help="Only these rules (codes or prefixes, comma-separated).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add rules to the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Turn rules off (codes or prefixes).")
@click.option(
    "--target",
    type=click.Choice(["onnx", "onnxruntime", "openvino", "onednn"]),  # base.codes.TARGETS
    help="The runtime the model is for: its rules (P...) run, an error means it refuses the model.",
)
@click.option(
    "--dim-range",
    "dim_range",
    multiple=True,
    metavar="SYM=LO:HI[:STEP]",
    help="The sizes an input symbol takes, e.g. seq=1:512 (HI may be empty: no max), height=32:1024:32 (a "
    "multiple of 32); what the range proves "
    "is not reported as assumed (G003), a guard it rules out is a G015 error. Repeatable; "
    "also the [tool.shapeinfer] key ranges.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    help="Exit 1 when a finding of this severity or worse remains (default error; also the "
    "[tool.shapeinfer] key fail-on).",
)
@click.option(
    "--statistics", is_flag=True, help="Print the number of findings per code instead of the findings (text, json)."
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True
)
@click.option("-o", "--output-file", type=click.Path(), help="Write the report here instead of stdout.")
@click.option("--fix", is_flag=True, help="Apply the fixable findings' rewrites; writes MODEL.fixed.onnx.")
@click.option("--in-place", is_flag=True, help="With --fix, overwrite the model instead.")
@click.option(
    "-j",
    "--jobs",
    type=Number(int, "a number of workers (0: one per core)", 0),
    metavar="N",
    default=0,
    help="Worker processes (0: one per core).",
)
@click.option("--config", type=click.Path(dir_okay=False), help="TOML file with [tool.shapeinfer] (default: nearest).")
@click.option("--isolated", is_flag=True, help="Ignore [tool.shapeinfer] in pyproject.toml.")
@click.option(
    "--explain", metavar="CODE|NAME", help="Print rules' documentation (codes or names, comma-separated) and exit."
)
@click.option("--list-rules", is_flag=True, help="List every rule and exit.")
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="Give up on a model after this long (an E001 error).")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def lint_cmd(
    paths: tuple[str, ...],
    rules: str | None,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    target: str | None,
    dim_range: tuple[str, ...],
    fail_on: str | None,
    statistics: bool,
    fmt: str,
    output_file: str | None,
    fix: bool,
    in_place: bool,
    jobs: int,
    config: str | None,
    isolated: bool,
    explain: str | None,
    list_rules: bool,
    timeout: float | None,
    debug: bool,
) -> None:
    """Check models (files, or folders searched for *.onnx) against the rule catalog.

    Exit codes: 0 no finding at the --fail-on severity (default error) or worse, 1 such
    findings (with --fix: those left after fixing, so a fix that wrote nothing counts its
    findings), 2 could not run.
    Settings: --rules profile, then [tool.shapeinfer] in the nearest pyproject.toml, then flags.
    Folders are searched for *.onnx, leaving out the *.fixed.onnx files --fix writes.
    Text output is coloured on a terminal unless NO_COLOR is set.
    """
    from shapeinfer.lint import session

    ranges = parse_dim_ranges(dim_range)

    def run() -> int:
        try:
            if explain:
                click.echo(session.explain(explain))
                return 0
            if list_rules:
                click.echo(session.list_rules())
                return 0
            if not paths:
                raise CliError("lint needs at least one model file or folder")
            cfg = session.configure(
                rules, select, extend_select, ignore, target, config, isolated, dim_ranges=ranges, fail_on=fail_on
            )
            cfg.timeout = timeout
            done = session.lint_run(
                paths,
                cfg,
                fmt=fmt,
                output_file=output_file,
                fix=fix,
                in_place=in_place,
                jobs=jobs,
                statistics=statistics,
            )
            for note in done.notes:
                click.echo(note, err=True)
            color = not statistics and output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            style = click.style if color else None
            text = session.render_report(done, cfg, fmt, __version__, statistics=statistics, style=style)
            _write(text, output_file, color, inputs=[*done.files, *session.cfg_files(cfg)], data_inputs=done.data_files)
            line = done.unreadable_line()
            if line is not None:
                click.echo(line, err=True)
            return done.exit_code(cfg)
        except session.LintError as e:
            raise CliError(str(e)) from None

    click.get_current_context().exit(_run_guarded(debug, run))


def _write(text: str, output_file: str | None, color: bool, inputs: list[str], data_inputs: list[str]) -> None:
    """The report on stdout (nothing for an empty one), or into ``output_file`` (UTF-8, a final
    newline), refused as a CliError where it would overwrite one of the ``inputs`` or land in
    one of the ``data_inputs`` (standard output appending to a model's external data)."""
    from shapeinfer.io.userfiles import UserFileError, check_stdout, write_output

    if output_file is None:
        try:
            check_stdout(data_inputs=data_inputs, what="report")  # (>> m.data: known once read)
        except UserFileError as e:
            raise CliError(str(e)) from None
        if text:
            click.echo(text, color=color)
        return
    try:
        data = (text + ("\n" if text else "")).encode("utf-8", "backslashreplace")
        write_output(output_file, data, inputs=inputs, what="report", data_inputs=data_inputs)
    except UserFileError as e:
        raise CliError(str(e)) from None
