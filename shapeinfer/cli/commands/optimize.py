"""``shapeinfer optimize``: the click command and its report (text or --json). The passes and
the optimize run itself are in :mod:`shapeinfer.passes`.

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`. The keep-alive list ``common._UNTIL_EXIT`` (set by
:func:`shapeinfer.cli.main.entry`) is read through the module when the command runs, never
copied at import.
"""

from __future__ import annotations

import json
import re

import click

from shapeinfer.base import codes
from shapeinfer.cli import common
from shapeinfer.cli.common import (
    EXTERNAL_DATA_HELP,
    SECONDS,
    CliError,
    Number,
    _echo_for,
    _run_guarded,
    check_output,
    deadline_paused,
    parse_bind,
    parse_bytes,
    refusal_line,
    show,
    write_notes,
)


@click.command("optimize", short_help="Fold shape arithmetic, rewrite legacy Reshape.")
@click.argument("model", type=click.Path(dir_okay=True), required=False)
@click.option("-o", "--output", type=click.Path(), help="Write the optimized model here (else only report).")
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
@click.option("--external-data", "external_data", metavar="NAME", help=EXTERNAL_DATA_HELP)
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="Specialise an input symbol first (the graph inputs are rewritten); a static model folds completely.",
)
@click.option("--passes", "passes", metavar="A,B,...", help="Run only these passes, in this order (dce always runs).")
@click.option("--list-passes", is_flag=True, help="List the passes and exit.")
@click.option(
    "--target-opset",
    type=Number(int, "an opset number (1 or more)", 1, maximum=10_000),
    metavar="N",
    help="Lift the default-domain opset to N (onnx's converter). Refused (exit 2) when it leaves an op "
    "without an onnxruntime CPU kernel that the input has (RoiAlign-22 in onnxruntime 1.32); --force lifts anyway.",
)
@click.option(
    "--max-fold-growth",
    metavar="SIZE",
    help="fold-constants stores a tensor only when it grows the model by at most SIZE (64K, 1M, 0; default 64K).",
)
@click.option(
    "--all-shapes",
    is_flag=True,
    help="Write every tensor's inferred type into value_info, as `shapeinfer MODEL -o` does. By default the "
    "graph outputs get the inferred types and the value_info entries MODEL has keep theirs unless inference "
    "contradicts them: with more shapes it can tell equal, onnxruntime reuses buffers and picks other kernels, "
    "which ran models up to 9% slower.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--force",
    is_flag=True,
    help="Write -o even when inference finds errors in the model or its data file is missing, and lift "
    "--target-opset even where onnxruntime has no kernel for an op at that opset.",
)
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="Give up after this long.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def optimize_cmd(
    model: str | None,
    output: str | None,
    in_place: bool,
    external_data: str | None,
    bind: tuple,
    passes: str | None,
    list_passes: bool,
    target_opset: int | None,
    max_fold_growth: str | None,
    all_shapes: bool,
    as_json: bool,
    force: bool,
    timeout: float | None,
    debug: bool,
) -> None:
    """Rewrite MODEL to compute the same values with less shape arithmetic and no Reshape-1.

    Runs inference, then the passes (--list-passes), and writes the model with the inferred
    types in its graph outputs; the value_info entries MODEL has keep their types unless
    inference contradicts them (--all-shapes: every tensor's inferred type, as `shapeinfer
    -o`). Prints what each pass changed and the node counts before and after, and the errors
    inference finds in MODEL, as `shapeinfer MODEL` does. A model with such errors
    (an undefined input, a Reshape that cannot run...) is not written unless --force: exit 1.
    A declared type that contradicts inference (G006) does not stop it (where its element
    type, rank or a number is wrong, the written model declares the inferred type; a symbolic
    name stays as declared), nor external data it cannot read (E003: the references are
    written as they are), except a missing data file: a model pointing at it is not written
    without --force. -o never writes into a file this run did not create: a data file name the
    output's folder already holds is refused (see --external-data). Exit codes: 0 done, 1 not
    written, 2 bad input or usage.
    """
    from shapeinfer.passes import describe_passes

    if list_passes:
        for name, summary in describe_passes():
            click.echo(f"{name:<22} {summary}")
        click.echo("(dce always runs after the selected passes; the others repeat until nothing changes)")
        return
    if not model:
        raise CliError("optimize needs a MODEL (or --list-passes)")
    binding = parse_bind(bind)
    names = None
    if passes is not None:
        names = [p.strip() for p in passes.split(",") if p.strip()]
        if not names:
            raise CliError("--passes needs at least one pass name (see --list-passes)")
    check_output(output, model, in_place)
    if external_data is not None and output in (None, "-"):
        raise CliError("--external-data names the data file -o writes: give -o FILE too")
    from shapeinfer.passes import MAX_FOLD_GROWTH

    growth = MAX_FOLD_GROWTH
    if max_fold_growth is not None:  # 0: only folds that add nothing (a Transpose of a weight)
        zero = re.fullmatch(r"\s*0+(\.0*)?\s*([KMGT]?)(i?B)?\s*", max_fold_growth, re.IGNORECASE)
        growth = 0 if zero else parse_bytes(max_fold_growth, "--max-fold-growth")

    def run():
        from shapeinfer.document import check_passes
        from shapeinfer.document import open as open_model
        from shapeinfer.inference.bindings import BindError, Unsatisfiable
        from shapeinfer.io.userfiles import WriteRefused
        from shapeinfer.passes import OptimizeError

        try:
            check_passes(names)  # an unknown pass is named before the model is read
            doc = open_model(model)
            optimized = doc.optimize(
                passes=names,
                bind=binding or None,
                target_opset=target_opset,
                timeout=timeout,
                keep_alive=common._UNTIL_EXIT,
                max_fold_growth=growth,
                runtime_check=not force,
                all_shapes=all_shapes,
            )
        except OptimizeError as e:
            raise CliError(e.flag_message()) from None
        except Unsatisfiable as e:  # the model cannot run at the binding: a finding, as -o says it
            return _unsatisfiable_report(doc, e), e
        except BindError as e:
            raise CliError(e.flag_message()) from None
        report, refusal = optimized.report, None
        if output and (force or not report.blocking()):
            try:
                with deadline_paused():
                    optimized.write(output, in_place=in_place, external_data=external_data, force=force)
                report.notes.extend(write_notes(optimized, external_data))
            except WriteRefused as e:
                refusal = e
        return report, refusal

    report, refusal = _run_guarded(debug, run)
    from shapeinfer.inference.bindings import Unsatisfiable

    if isinstance(refusal, Unsatisfiable):  # no input size satisfies the guards: nothing ran
        if as_json:
            _optimize_report(report, model, output, as_json, refused=True)
        click.echo(f"shapeinfer: {refusal.flag_message()}", err=True)
        if output:
            click.echo(f"shapeinfer: {show(output)} not written: no input size satisfies the guards (G015)", err=True)
        click.get_current_context().exit(1)
    refused = bool(output) and not force and bool(report.blocking())
    _optimize_report(report, model, output, as_json, refused or refusal is not None)
    if refusal is not None:
        click.echo(refusal_line(refusal), err=True)
        click.get_current_context().exit(1)
    if refused:
        n = len(report.blocking())
        click.echo(
            f"shapeinfer: {show(output)} not written: the model has {n} error{'s' if n != 1 else ''} "
            "(--force writes it anyway)",
            err=True,
        )
        click.get_current_context().exit(1)


def _unsatisfiable_report(doc, e: Exception):
    """The report of a run stopped before any pass by sizes that no input can have (G015)."""
    from shapeinfer.base.diagnostics import Diagnostic
    from shapeinfer.passes.report import OptimizeReport

    n, opset = doc.node_count, doc.opset
    error = Diagnostic("error", codes.UNSATISFIABLE_GUARD, e.detail)
    return OptimizeReport([], n, n, opset, opset, rounds=0, seconds=0.0, errors=[error])


def _optimize_report(report, model: str, output: str | None, as_json: bool, refused: bool = False) -> None:
    echo = _echo_for(output)
    if as_json:
        from shapeinfer.cli.commands.infer import JSON_SCHEMA_VERSION

        doc = {
            "schema": JSON_SCHEMA_VERSION,
            "model": show(model),
            "output": None if refused else output,
            "passes": [
                {
                    "name": p.name,
                    "changes": {_json_key(k): v for k, v in p.changes.items()},
                    "node_delta": p.node_delta,
                    "seconds": round(p.seconds, 4),
                }
                for p in report.passes
            ],
            "nodes_before": report.nodes_before,
            "nodes_after": report.nodes_after,
            "subgraph_nodes_before": report.subgraph_nodes_before,
            "subgraph_nodes_after": report.subgraph_nodes_after,
            "function_nodes_before": report.function_nodes_before,
            "function_nodes_after": report.function_nodes_after,
            "opset_before": report.opset_before,
            "opset_after": report.opset_after,
            "rounds": report.rounds,
            "seconds": round(report.seconds, 4),
            "notes": report.notes,
            "diagnostics": [d.to_dict() for d in report.errors],
            "remaining": None if report.remaining is None else report.remaining.as_json(),
        }
        echo(json.dumps(doc, indent=1))
        return
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    echo(show(model))
    if report.errors:
        echo("diagnostics:")
        for d in report.errors[:50]:
            echo(f"  {d}")
        if len(report.errors) > 50:
            echo(f"  ... {len(report.errors) - 50} more (use --json for all)")
    for p in report.passes:
        what = ", ".join(f"{v} {k}" for k, v in p.changes.items() if v) or "no change"
        delta = f" (nodes {p.node_delta:+d})" if p.node_delta else ""
        echo(f"  {p.name:<22} {what}{delta}")
    opset = f"opset {report.opset_before if report.opset_before is not None else '-'}"
    if report.opset_after != report.opset_before:
        opset += f" -> {report.opset_after}"
    sub = ""
    if report.subgraph_nodes_before:
        sub = f", in subgraphs {report.subgraph_nodes_before} -> {report.subgraph_nodes_after}"
    if report.function_nodes_before:
        sub += f", in functions {report.function_nodes_before} -> {report.function_nodes_after}"
    echo(
        f"nodes {report.nodes_before} -> {report.nodes_after}{sub}, {opset}, "
        f"{report.rounds} round{'s' if report.rounds != 1 else ''} ({report.seconds:.2f}s)"
    )
    if report.remaining is not None:
        for line in _remaining_lines(report.remaining):
            echo(line)
    if refused:
        pass  # the refusal follows on stderr
    elif output == "-":
        echo("wrote the model to standard output")
    else:
        echo(f"wrote {output}" if output else "no -o given: nothing written")


def _json_key(what: str) -> str:
    """A pass's change counter as a ``--json`` key: its text in snake case
    (``"tensors folded to initializers"`` -> ``"tensors_folded_to_initializers"``)."""
    import re

    return re.sub(r"[^a-z0-9]+", "_", what.lower()).strip("_")


def _remaining_lines(left) -> list[str]:
    """What stays dynamic, for the text report: a summary, the open symbols as one line, then
    each item with another reason (at most ``TEXT_LIMIT``; ``--json`` lists every item)."""
    from shapeinfer.passes.remaining import TEXT_LIMIT

    c = left.counts()
    if left.fully_static:
        line = "fully static: every tensor's shape is static, no Shape/Size node, no runtime-computed shape input"
        if c["constant_node"]:
            line += f"; {c['constant_node']} all-constant node{'s' if c['constant_node'] != 1 else ''} kept"
        lines = [line]
    else:
        parts = [
            f"{c['shape_node']} Shape/Size node{'s' if c['shape_node'] != 1 else ''}",
            f"{c['shape_input']} runtime-computed shape input{'s' if c['shape_input'] != 1 else ''}",
            f"{left.dynamic_tensors} of {left.tensors} tensors",
        ]
        if c["constant_node"]:
            parts.append(f"{c['constant_node']} all-constant node{'s' if c['constant_node'] != 1 else ''} kept")
        if left.declared_types_kept:
            parts.append("declared types kept where the inferred ones fail the load check (see the note)")
        lines = ["stays dynamic: " + ", ".join(parts)]
    opened = [i for i in left.items if i.reason == "open_symbols"]
    if opened:
        syms = sorted({s for i in opened for s in i.symbols})
        bind = ",".join(f"{s}=N" for s in syms)
        lines.append(
            f"  {len(opened)} of them depend on {', '.join(syms)}, which the binding leaves open "
            f"(--bind {bind} removes them)"
        )
    elif left.open_symbols and not left.fully_static:
        lines.append(f"  tensor shapes depend on {', '.join(left.open_symbols)}, which the binding leaves open")
    if left.dynamic_origins:
        by_node: dict[tuple[str, str], list[str]] = {}
        for o in left.dynamic_origins:
            by_node.setdefault((o["op"], o["node"]), []).append(o["symbol"])
        src = "; ".join(
            f"{', '.join(syms)} from {op} {node!r}" for (op, node), syms in list(by_node.items())[:TEXT_LIMIT]
        )
        more = f"; and {len(by_node) - TEXT_LIMIT} more nodes" if len(by_node) > TEXT_LIMIT else ""
        lines.append(f"  tensor shapes depend on sizes known only at run time ({src}{more}): no --bind removes them")
    others = [i for i in left.items if i.reason != "open_symbols"]
    for i in others[:TEXT_LIMIT]:
        lines.append(f"  {i.text}")
    if len(others) > TEXT_LIMIT:
        lines.append(f"  ... and {len(others) - TEXT_LIMIT} more (--json lists every one)")
    return lines
