"""``shapeinfer profile``: the click command and its text report. The ranges, trtexec shapes and
memory bounds themselves are computed by :mod:`shapeinfer.analysis.deployment`.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
"""

from __future__ import annotations

import json
import shlex

import click

from shapeinfer.cli.common import (
    DIM_RANGE_HELP,
    CliError,
    _run_guarded,
    parse_bind,
    parse_dim_ranges,
    show,
)


@click.command("profile", short_help="Valid input ranges, trtexec shapes and memory bounds.")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI[:STEP]", help=DIM_RANGE_HELP)
@click.option("--opt", "opt", multiple=True, metavar="SYM=INT[,SYM=INT]", help="The opt shapes' symbol values.")
@click.option("-a", "--all", "show_all", is_flag=True, help="List every tensor's bound, not only the largest.")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def profile_cmd(model: str, dim_range: tuple, opt: tuple, show_all: bool, as_json: bool, debug: bool) -> None:
    """Print the valid range of every graph input's dims under the guards inference found (and
    --dim-range), as trtexec --minShapes/--optShapes/--maxShapes, and each tensor's upper bound
    in elements and bytes at the range maxima with the peak of live activations in graph order.
    A symbol without an upper bound has no max shapes (say one with --dim-range).

    No shape outside the ranges is ever printed: a --dim-range under which a guard the model
    needs cannot hold (seq=513: where it needs seq <= 512), or an --opt value the model cannot
    run at, prints the error naming the range, the guard and its nodes instead of a profile.
    The same min/opt/max are printed as onnxruntime free dimension overrides (one fixed size
    per named dim: SessionOptions.add_free_dimension_override_by_name, onnxruntime_perf_test -f)
    and as OpenVINO's ovc --input (each dim its min..max).

    Exit codes: 0 a profile, 1 no profile (the model cannot run in the ranges), 2 bad input or
    usage (an --opt outside [min, max] of its symbol or violating a guard too).
    """
    ranges = parse_dim_ranges(dim_range)
    opt_b = parse_bind(opt, "--opt")

    def run():
        from shapeinfer.analysis.deployment import profile
        from shapeinfer.document import open as open_model
        from shapeinfer.inference.bindings import BIND, BindError

        doc = open_model(model)
        try:
            doc.check(bind=opt_b or None, dim_ranges=ranges or None)
        except BindError as e:
            raise CliError(e.flag_message("--opt" if e.kind == BIND else None)) from None
        for s, v in opt_b.items():
            lo, hi = ranges.get(s, (1, None))
            if v < lo or (hi is not None and v > hi):
                raise CliError(f"--opt {s}={v}: outside --dim-range {s}={lo}:{'' if hi is None else hi}")
        result = doc.infer(dim_ranges=ranges or None)
        prof = profile(result, opt_b, show(model))
        if prof.bad_opt:  # the flag's value is wrong, not the model: a usage error
            raise CliError("; ".join(prof.errors))
        return prof

    prof = _run_guarded(debug, run, model)
    if as_json:
        click.echo(json.dumps(prof.to_dict(), indent=1))
    elif prof.errors:
        click.echo(prof.model)
        click.echo("no profile: the model cannot run where asked (errors on standard error)")
        click.echo("holds when: " + ("; ".join(g.text for g in prof.guards) or "always (no guards)"))
        for e in prof.errors:
            click.echo(f"shapeinfer: error: {e}", err=True)
    else:
        _profile_text(prof, show_all)
    if prof.errors:
        click.get_current_context().exit(1)


def _profile_text(prof, show_all: bool) -> None:
    from shapeinfer.analysis.deployment import ASSUMES
    from shapeinfer.analysis.verify import format_bytes

    def num(v) -> str:
        return "no max" if v is None else str(v)

    click.echo(prof.model)
    click.echo("ranges: " + "; ".join(f"{k} in [{lo}, {num(hi)}]" for k, (lo, hi) in prof.ranges.items()))
    click.echo("holds when: " + ("; ".join(g.text for g in prof.guards) or "always (no guards)"))
    click.echo("inputs:")
    for i in prof.inputs:
        if i["dims"] is None:
            click.echo(f"  {i['name']:<24} rank unknown")
            continue

        def shp(v) -> str:
            return "x".join("?" if d is None else str(d) for d in v)

        click.echo(
            f"  {i['name']:<24} [{', '.join(i['dims'])}]  min {shp(i['min'])}  opt {shp(i['opt'])}  max {shp(i['max'])}"
        )
    from shapeinfer.analysis.deployment import shell_word, trtexec_name

    bad = [i["name"] for i in prof.inputs if trtexec_name(i["name"]) is None]
    for k, v in prof.trtexec().items():
        if v is not None:
            click.echo(shell_word(f"--{k}={v}"))
        elif k[:3] in prof.violated:
            click.echo(f"--{k}: none (the model cannot run at the {k[:3]} binding: {prof.violated[k[:3]]})")
        elif bad:
            click.echo(f"--{k}: none (trtexec's flags cannot name the input {bad[0]!r}: a ',' or a quote in it)")
        else:
            click.echo(f"--{k}: none (an input dim has no max)")
    ort = prof.onnxruntime()
    click.echo("onnxruntime free dimension overrides (one fixed size per named dim):")
    for k, v in ort.items():
        if v is None and k in prof.violated:
            click.echo(f"  {k}: none (the model cannot run at the {k} binding)")
        elif v is None:
            click.echo(f"  {k}: none (a named dim has no {k} value)")
        elif not v:
            click.echo(f"  {k}: none needed (no named dims)")
        elif any(":" in d for d in v):  # onnxruntime_perf_test -f splits at the first ':'
            click.echo(f"  {k}: " + ", ".join(f"{d!r}={n}" for d, n in v.items()) + " (perf_test -f cannot name them)")
        else:
            click.echo(f"  {k}: " + " ".join(f"-f {shell_word(f'{d}:{n}')}" for d, n in v.items()))
    if ort["opt"]:
        calls = "; ".join(f"so.add_free_dimension_override_by_name({d!r}, {n})" for d, n in ort["opt"].items())
        click.echo(f"  python (opt): {calls}")
    ov = prof.openvino()
    click.echo(
        f"openvino: ovc {shlex.quote(prof.model)} --input {shlex.quote(ov)}"
        if ov
        else "openvino: none (an input's rank is unknown)"
    )
    rows = sorted(prof.tensors, key=lambda t: (t["bytes"] is not None, t["bytes"] or 0), reverse=True)
    unbounded = [t for t in rows if t["bytes"] is None]
    shown = rows if show_all else rows[:10]
    click.echo(f"tensor bounds at the range maxima ({len(rows)} tensors, {len(unbounded)} without a bound):")
    for t in shown:
        el = "no bound" if t["elements"] is None else f"{t['elements']} elements"
        by = "no bound" if t["bytes"] is None else format_bytes(t["bytes"])
        click.echo(f"  {_fit(t['name'], 48):<48} {t['op']:<16} {el:<22} {by}")
    if len(rows) > len(shown):
        click.echo(f"  ... {len(rows) - len(shown)} more (use --all or --json)")
    if prof.peak_bytes is None:
        click.echo(f"peak of live activations: no bound (a tensor live at {prof.peak_at} has none)")
    else:
        click.echo(
            f"peak of live activations: {format_bytes(prof.peak_bytes)} ({prof.peak_bytes} bytes) at {prof.peak_at}"
        )
    click.echo(f"assumes: {ASSUMES}")
    for n in prof.notes:
        click.echo(f"note: {n}")


def _fit(name: str, width: int) -> str:
    """``name`` in ``width`` characters: a longer one keeps its start and its end (where tensor
    names differ: ``.../layers.11/attn/MatMul_output_0``) around an ellipsis."""
    if len(name) <= width:
        return name
    head = (width - 1) * 2 // 5
    return name[:head] + "\u2026" + name[len(name) - (width - 1 - head) :]
