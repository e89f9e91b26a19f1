"""``shapeinfer explain``: the click command and its report. The reading of the facts is
:mod:`shapeinfer.analysis.explain`.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`.
"""

from __future__ import annotations

import json

import click

from shapeinfer.cli.common import CliError, _run_guarded, show


@click.command("explain", short_help="Why a tensor's dims are what they are.")
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("tensor")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def explain_cmd(model: str, tensor: str, as_json: bool, debug: bool) -> None:
    """For each dim of TENSOR (a tensor of MODEL: the main graph's, else the first If / Loop /
    Scan body's of that name, which the report names): its expression, the chain of nodes
    it came through (graph input dim -> Shape -> Gather -> ... -> the tensor), the guards it
    may rest on with the node that imposed each, and for a dim inference could not express in
    the input symbols, why: a data-dependent op, a size taken from values computed from data
    or in floating point, If branches that disagree, a limit, an invalid node, no rule.

    Exit codes: 0 explained, 2 usage errors (a file that is no model, a tensor no graph of the
    model has: the closest names are suggested).
    """
    from shapeinfer.analysis.explain import UnknownTensor, explain
    from shapeinfer.api import infer

    result = _run_guarded(debug, lambda: infer(model), model)
    try:
        dims = explain(result, tensor)
    except UnknownTensor as e:
        raise CliError(str(e)) from None
    if as_json:
        click.echo(json.dumps({"model": model, "tensor": tensor, "dims": [d.as_dict() for d in dims]}, indent=1))
        return
    for d in dims:
        head = "rank" if d.axis < 0 else f"dim {d.axis}"
        where = "" if d.graph == "main" else f" (in {d.graph})"
        click.echo(show(f"{tensor}{where} {head}: {d.text}" + ("" if d.known else "  (unknown)")))
        for step in d.chain:
            click.echo(show(f"    {step}"))
        for cond, node in d.guards:
            click.echo(show(f"    holds where {cond}  (guard from {node})"))
        if d.reason:
            click.echo(show(f"    why unknown: {d.reason}"))
