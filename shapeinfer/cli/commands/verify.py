"""``shapeinfer verify``: the click command and its text report. The comparison with onnxruntime
itself is :mod:`shapeinfer.analysis.verify`.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
onnxruntime is imported only when the command runs.
"""

from __future__ import annotations

import json

import click

from shapeinfer.cli.common import (
    DIM_RANGE_HELP,
    CliError,
    Number,
    _run_guarded,
    parse_bind,
    parse_bytes,
    parse_dim_ranges,
    show,
)


@click.command("verify", short_help="Compare inferred shapes with onnxruntime's.")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="One binding of the input symbols; repeat to check several bindings in one run.",
)
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI[:STEP]", help=DIM_RANGE_HELP)
@click.option(
    "--input-value",
    "input_value",
    multiple=True,
    metavar="NAME=V[,V...]",
    help="Feed input NAME these values instead of generated ones (one value fills it, or one per"
    " element): --input-value sample_rate=16000 --input-value use_cache_branch=false. Repeatable.",
)
@click.option("--strict", is_flag=True, help="Count dims inference left unresolved (fresh symbols) as mismatches.")
@click.option(
    "--seed",
    type=Number(int, "a seed (0 to 2**64-1)", 0, maximum=2**64 - 1),
    metavar="N",
    default=0,
    show_default=True,
    help="Seed of the generated inputs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.option(
    "--max-memory",
    metavar="SIZE",
    help="Refuse a binding whose estimated memory is above SIZE (8G, 512M; default 4G).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def verify_cmd(
    model: str,
    bind: tuple,
    dim_range: tuple,
    input_value: tuple,
    strict: bool,
    seed: int,
    as_json: bool,
    max_memory: str | None,
    debug: bool,
) -> None:
    """Run MODEL in onnxruntime and compare every tensor's actual shape with the inferred one.

    verify runs the model, so it needs sizes: each --bind gives every input symbol a value
    (shapeinfer verify m.onnx --bind batch=2,seq=7 --bind batch=3,seq=11), and --input-value
    gives an input's values where generated ones would not do (--input-value sample_rate=16000).
    A binding that violates a guard (a condition the inferred shapes
    need, such as seq <= 512) is named in one line before anything runs, and so is a
    --dim-range that contradicts a guard (seq=513: where the model needs seq <= 512).
    onnxruntime failing at a binding the guards allow is a finding (a condition of the model
    no guard states, or input values it cannot take), and the other bindings still run. Exit
    codes: 0 no mismatch, 1 mismatches, onnxruntime failures, a violated guard or a
    contradicted range, 2 could not run.
    """
    bindings = [parse_bind((b,)) for b in bind]
    values = parse_input_values(input_value)
    ranges = parse_dim_ranges(dim_range)
    limit = parse_bytes(max_memory, "--max-memory") if max_memory is not None else None

    def run():
        from shapeinfer.analysis.verify import DEFAULT_MAX_MEMORY, GuardViolation, VerifyError, verify
        from shapeinfer.inference.bindings import BindError

        try:
            return verify(
                model,
                bindings,
                strict=strict,
                seed=seed,
                max_memory=limit or DEFAULT_MAX_MEMORY,
                dim_ranges=ranges or None,
                input_values=values or None,
            )
        except GuardViolation as e:
            return e
        except VerifyError as e:
            raise CliError(str(e)) from None
        except BindError as e:
            raise CliError(e.flag_message()) from None

    report = _run_guarded(debug, run)
    if isinstance(report, Exception):
        click.echo(f"shapeinfer: {report}", err=True)
        click.get_current_context().exit(1)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1))
    else:
        _verify_text(report)
    click.get_current_context().exit(0 if report.ok else 1)


def _verify_text(report) -> None:
    from shapeinfer.analysis.verify import format_binding

    click.echo(show(report.model))
    for pb in report.per_binding:
        if "failed" in pb:
            click.echo(f"  {format_binding(pb['binding'])}: onnxruntime failed where the guards hold: {pb['failed']}")
            continue
        click.echo(
            f"  {format_binding(pb['binding'])}: {pb['checked']} tensors, {pb['mismatches']} mismatches, "
            f"{pb['unresolved']} unresolved"
        )
    if report.mismatches:
        rows = [("tensor", "op", "binding", "reason", "inferred", "at binding", "actual")]
        for m in report.mismatches[:50]:
            rows.append((m.tensor, m.op, format_binding(m.binding), m.reason, m.inferred, m.expected, m.actual))
        widths = [min(80, max(len(r[i]) for r in rows)) for i in range(len(rows[0]) - 1)]
        click.echo("mismatches:")
        for r in rows:
            click.echo("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
        if len(report.mismatches) > 50:
            click.echo(f"  ... {len(report.mismatches) - 50} more (use --json for all)")
    for note in report.notes:
        click.echo(f"note: {note}")
    nb = len(report.bindings)
    failed = f", onnxruntime failed at {len(report.failures)}" if report.failures else ""
    click.echo(
        f"{report.checked} tensor checks at {nb} binding{'s' if nb != 1 else ''}: "
        f"{len(report.mismatches)} mismatches, {len(report.unresolved)} unresolved{failed}"
    )


def parse_input_values(items: tuple) -> dict[str, list[str]]:
    """``--input-value NAME=V[,V...]`` flags as {NAME: [V, ...]} (the values converted to the
    input's element type by the check); a usage error for text without ``=`` or a name twice."""
    out: dict[str, list[str]] = {}
    for item in items:
        name, eq, rest = item.partition("=")
        name = name.strip()
        vals = [v.strip() for v in rest.split(",")] if eq else []
        if not eq or not name or not all(vals):
            raise CliError(f"--input-value {item!r}: expected NAME=V[,V...] (e.g. --input-value sample_rate=16000)")
        if name in out:
            raise CliError(f"--input-value {name}: given twice")
        out[name] = vals
    return out
