"""``shapeinfer diff``: the click command and its report. The comparison itself is
:mod:`shapeinfer.analysis.contract`.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
"""

from __future__ import annotations

import json

import click

from shapeinfer.cli.common import CliError, _run_guarded, show


@click.command("diff", short_help="Did the input/output shape contract change between two models?")
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def diff_cmd(old: str, new: str, as_json: bool, debug: bool) -> None:
    """Compare the shape contracts of OLD and NEW: inputs and outputs by name and order, their
    element types and dims, and the guards and ranges inference finds in each.

    Output dims are compared as inference proves them, in the input symbols; a dim it cannot
    prove is ? (an exporter's name for an output dim is a claim, not part of the contract).
    Input symbols are matched by position (input name and axis): batch in OLD and N at the same
    place in NEW are the same size, so a rename is no change.

    For CI: shapeinfer diff model.onnx optimized.onnx. Exit codes: 0 the same contract, 1 it
    changed (each change on a line: output logits: dim 0 batch -> 1), 2 usage errors (a file
    that is no model).
    """

    if old == "-" and new == "-":
        raise CliError("OLD and NEW are both '-': standard input can be read once; give one of them as a file")

    def run():
        from shapeinfer.analysis.contract import compare, contract_of
        from shapeinfer.api import infer

        a = _run_guarded(debug, lambda: contract_of(infer(old)), old)
        b = _run_guarded(debug, lambda: contract_of(infer(new)), new)
        return compare(a, b)

    changes = run()
    if as_json:
        rows = [{"where": c.where, "what": c.what, "old": c.old, "new": c.new} for c in changes]
        click.echo(json.dumps({"old": old, "new": new, "same": not changes, "changes": rows}, indent=1))
    else:
        for c in changes:
            click.echo(show(str(c)))
        click.echo("the same contract" if not changes else f"{len(changes)} change{'s' if len(changes) != 1 else ''}")
    click.get_current_context().exit(1 if changes else 0)
