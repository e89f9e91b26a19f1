"""``shapeinfer make-dynamic``: the click command. The work is
:func:`shapeinfer.passes.make_dynamic.make_dynamic`; the write is the Document's.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
"""

from __future__ import annotations

import click

from shapeinfer.cli.common import (
    EXTERNAL_DATA_HELP,
    CliError,
    _run_guarded,
    check_output,
    refusal_line,
    show,
    write_notes,
)


def _parse_dims(specs: tuple[str, ...]) -> dict[str, dict[int, str]]:
    """``INPUT:AXIS=SYMBOL`` entries as ``{input: {axis: symbol}}`` (CliError for a malformed one
    and for an axis given two symbols)."""
    out: dict[str, dict[int, str]] = {}
    for spec in specs:
        head, eq, symbol = spec.rpartition("=")
        name, colon, axis = head.rpartition(":")
        if not eq or not colon or not name or not symbol:
            raise CliError(f"--dim {spec!r}: expected INPUT:AXIS=SYMBOL")
        try:
            a = int(axis)
        except ValueError:
            raise CliError(f"--dim {spec!r}: the axis {axis!r} is not an integer") from None
        axes = out.setdefault(name, {})
        if axes.get(a, symbol) != symbol:
            raise CliError(f"--dim {name}:{axis} is given twice, as {axes[a]} and {symbol}")
        axes[a] = symbol
    return out


@click.command("make-dynamic", short_help="Make static input axes symbolic, with proof.")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, help="Where to write the rewritten model.")
@click.option("--dim", "dims", multiple=True, required=True, metavar="INPUT:AXIS=SYMBOL",
              help="An input axis to make the symbol (repeatable).")  # fmt: skip
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
@click.option("--external-data", "external_data", metavar="NAME", help=EXTERNAL_DATA_HELP)
@click.option("--force", is_flag=True, help="Write -o even when the model's external data file is missing.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def make_dynamic_cmd(
    model: str,
    output: str,
    dims: tuple[str, ...],
    in_place: bool,
    external_data: str | None,
    force: bool,
    debug: bool,
) -> None:
    """Make each --dim input axis of MODEL the symbol named, and rewrite every constant that
    baked its old size in (Reshape targets, Expand / ConstantOfShape / Tile shapes, Range
    limits, Slice ends, position ids) into a computation from the input shapes; the rewritten
    model is inferred again and must follow the symbols with no guard on them.

    The write is infer's -o (--in-place, --external-data, --force as there). Exit codes: 0
    written; 1 refused (each node that cannot follow the size is named, nothing is written) or
    a write refused (a data file of that name exists, the model's data file is missing); 2
    usage errors (a file that is no model, a --dim that is malformed or names no static input
    axis, an output that cannot be written).
    """
    from shapeinfer.document import open as open_model
    from shapeinfer.io.userfiles import WriteRefused
    from shapeinfer.passes.make_dynamic import MakeDynamicError, make_dynamic

    wanted = _parse_dims(dims)
    check_output(output, model, in_place)
    doc = _run_guarded(debug, lambda: open_model(model), model)

    def rewrite():
        try:
            return make_dynamic(doc.model, wanted, base_dir=doc.folder), None
        except ValueError as e:
            raise CliError(str(e)) from None
        except MakeDynamicError as e:
            return None, e

    rewritten, refusal = _run_guarded(debug, rewrite, model)  # (anything else: one line, exit 2)
    if refusal is not None:
        for r in refusal.refusals:
            click.echo(show(f"shapeinfer: refused: {r}"), err=True)
        click.echo(f"shapeinfer: nothing written: {len(refusal.refusals)} node(s) cannot follow the size", err=True)
        raise SystemExit(1)

    def write() -> WriteRefused | None:
        try:
            doc.write(output, model=rewritten, in_place=in_place, external_data=external_data, force=force)
        except WriteRefused as e:
            return e
        return None

    refused = _run_guarded(debug, write, model)
    if refused is not None:
        click.echo(refusal_line(refused), err=True)
        raise SystemExit(1)
    for note in write_notes(doc, external_data):
        click.echo(show(f"note: {note}"), err=True)
    click.echo(show(f"wrote {output}"), err=True)
