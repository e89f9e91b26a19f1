"""``shapeinfer infer`` (also ``shapeinfer MODEL``, the default command): the click command and
its reports (the summary, the --all / --filter table, the --json document).

Registered on the group by :mod:`shapeinfer.cli.main`; imports the plumbing from
:mod:`shapeinfer.cli.common`. Heavy imports (onnx, the engine) stay inside the functions, so
start-up imports only click.
"""

from __future__ import annotations

import json

import click

from shapeinfer.cli.common import (
    DIM_RANGE_HELP,
    EXTERNAL_DATA_HELP,
    SECONDS,
    CliError,
    Timer,
    _echo_for,
    _run_guarded,
    check_output,
    deadline_paused,
    parse_bind,
    parse_dim_ranges,
    parse_input_shapes,
    refusal_line,
    show,
    write_notes,
)

_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@click.command("infer", short_help="Infer every tensor's shape (the default command).")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option("-o", "--output", type=click.Path(), help="Write the model with every tensor's shape in value_info.")
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
@click.option("--external-data", "external_data", metavar="NAME", help=EXTERNAL_DATA_HELP)
@click.option("--force", is_flag=True, help="Write -o even when the model's external data file is missing.")
@click.option(
    "--input-shape",
    "input_shape",
    multiple=True,
    metavar="NAME=D0,D1,...",
    help="Override a graph input's dims (ints or expressions over symbol names; as many as the input's rank). "
    "Repeatable.",
)
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="Specialise an input symbol to an int (at least 1) everywhere; with -o the graph inputs "
    "carry the value too, so the written model is valid only at it. Repeatable.",
)
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI[:STEP]", help=DIM_RANGE_HELP)
@click.option("-a", "--all", "show_all", is_flag=True, help="List every tensor: dtype, dims, op and node.")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="PATTERN",
    help="List the tensors whose name, node name or op type contains PATTERN (a glob with * ? []). Repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option(
    "--summary",
    "with_summary",
    is_flag=True,
    help="Begin with the model at a glance: IR version, opsets, producer, node count, op histogram, parameters.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    help="Exit 1 when a diagnostic of this severity or worse is reported (for CI; as lint's --fail-on).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every diagnostic, not only errors and warnings.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="Give up after this long.")
def infer_cmd(
    model: str,
    output: str | None,
    in_place: bool,
    external_data: str | None,
    force: bool,
    input_shape: tuple,
    bind: tuple,
    dim_range: tuple,
    show_all: bool,
    filters: tuple[str, ...],
    as_json: bool,
    with_summary: bool,
    fail_on: str | None,
    verbose: bool,
    debug: bool,
    timeout: float | None,
) -> None:
    """Infer the shape of every tensor in MODEL and print the graph's inputs and outputs.

    With --all or --filter, print a table of every (matching) tensor instead. A --dim-range,
    --bind or --input-shape under which a guard the model needs cannot hold (seq=513: where
    it needs seq <= 512) is a G015 error naming the range, the guard and its nodes; no shape
    is printed then, and -o writes nothing (exit 1). -o never writes into a file this run did
    not create: a data file name the output's folder already holds is refused (exit 1; see
    --external-data), and so is a model whose external data file is missing (exit 1; --force
    writes it). Exit codes: 0 done, 1 a diagnostic at the --fail-on severity, a G015 error with
    -o or a refused -o, 2 bad input or usage.
    """
    binding = parse_bind(bind)
    ranges = parse_dim_ranges(dim_range)
    shapes = parse_input_shapes(input_shape)
    check_output(output, model, in_place)
    if external_data is not None and output in (None, "-"):
        raise CliError("--external-data names the data file -o writes: give -o FILE too")

    def run():
        from shapeinfer.document import open as open_model
        from shapeinfer.inference.bindings import BIND, BindError
        from shapeinfer.io.userfiles import WriteRefused

        timer = Timer()
        doc = open_model(model, lean=True)  # weights: written back as read, never parsed
        refused = None
        if output and output != "-" and doc.has_external_data:
            try:  # what the write refuses (data files taken, missing, inputs): known before inferring
                doc.check_write(output, in_place=in_place, external_data=external_data, force=force)
            except WriteRefused as e:
                refused = e  # inferred and reported all the same; nothing is written
        try:
            result = doc.infer(
                input_shapes=shapes or None, bind=binding or None, timeout=timeout, dim_ranges=ranges or None
            )
        except BindError as e:
            raise CliError(e.flag_message("--bind" if e.kind == BIND else None)) from None
        secs = timer()
        notes = doc.notes
        if output and not result.contradicted() and refused is None:
            try:
                with deadline_paused():
                    doc.write(output, in_place=in_place, external_data=external_data, force=force)
                notes = doc.notes + write_notes(doc, external_data)
            except WriteRefused as e:
                refused = e
        return result, secs, refused, notes

    result, secs, refused, notes = _run_guarded(debug, run, model)

    def report() -> bool:
        contradicted = result.contradicted()
        table = _tensor_rows(result, filters) if (show_all or filters) and not contradicted else None
        model_info = None
        if with_summary:
            from shapeinfer.analysis.summary import model_summary

            model_info = model_summary(result.model)
        _report(
            result, model, output, secs, as_json, verbose, table, model_info, refused=refused is not None, notes=notes
        )
        return contradicted

    contradicted = _run_guarded(debug, report, model)  # a failure while reporting: one line, no traceback
    if contradicted and output:
        click.echo(f"shapeinfer: {show(output)} not written: no input size satisfies the guards (G015)", err=True)
        click.get_current_context().exit(1)
    if refused is not None:
        click.echo(refusal_line(refused), err=True)
        click.get_current_context().exit(1)
    if fail_on:
        level = _SEVERITY_RANK[fail_on]
        if any(_SEVERITY_RANK.get(d.severity, 0) >= level for d in result.diagnostics):
            click.get_current_context().exit(1)


def _matches(pattern: str, fields: tuple[str, ...]) -> bool:
    from fnmatch import fnmatchcase

    if any(c in pattern for c in "*?["):
        return any(fnmatchcase(f, pattern) for f in fields)
    return any(pattern in f for f in fields)


def _tensor_rows(result, filters: tuple[str, ...]) -> list[dict]:
    """Every tensor of every inferred graph (graph order: inputs, initializers, node outputs)
    with its producer's op type and node name, kept when it matches one of ``filters``."""
    from shapeinfer.io.modeltext import text
    from shapeinfer.io.onnxio import graphs_with_paths, initializer_names

    rows = []
    for path, g in graphs_with_paths(result.model.graph):
        facts = result.graph_facts.get(path)
        if facts is None:
            continue
        where: dict[str, tuple[str, str]] = {}
        for vi in g.input:
            where[vi.name] = ("input", "")
        for name in initializer_names(g):
            where[name] = ("initializer", "")
        for n in g.node:
            for o in n.output:
                if o:
                    where[o] = (n.op_type, n.name)
        for name, f in facts.items():
            op, node = where.get(name, ("", ""))
            if filters and not any(_matches(p, (name, node, op)) for p in filters):
                continue
            rows.append({"graph": path, "name": text(name), "fact": f, "op": text(op), "node": text(node)})
    return rows


def _report(
    result,
    model: str,
    output: str | None,
    secs: float,
    as_json: bool,
    verbose: bool,
    table: list[dict] | None = None,
    model_info: dict | None = None,
    refused: bool = False,
    notes: list[str] | None = None,
) -> None:
    """Print what inference found (``--json``: one document); ``notes``: what the write left
    out so that the written model loads, printed after the line saying it was written."""
    from shapeinfer.io.modeltext import text
    from shapeinfer.symbolic.intervals import range_list

    echo = _echo_for(output)
    g = result.model.graph
    contradicted = result.contradicted()
    facts = {} if contradicted else result.facts  # shapes that hold for no input asked about: none shown
    summary = summarize(result)
    if as_json:
        made_by = _producers(g)
        if contradicted:
            tensors = {}
        elif table is None:
            tensors = {text(k): _io_json(k, f, made_by) for k, f in facts.items()}
        else:
            tensors = {text(r["name"]): _io_json(r["name"], r["fact"], made_by) for r in table if r["graph"] == "main"}
        doc = {
            "schema": JSON_SCHEMA_VERSION,
            "model": show(model),
            "inputs": [_io_json(vi.name, facts.get(vi.name), made_by) for vi in g.input],
            "outputs": [_io_json(vi.name, facts.get(vi.name), made_by) for vi in g.output],
            "tensors": tensors,
            "subgraph_tensors": {} if contradicted else _subgraph_json(result, table),
            "symbols": {"inputs": sorted(result.input_symbols), "fresh": result.fresh_symbols},
            "equalities": [list(e) for e in dict.fromkeys(tuple(e) for e in result.equalities)],
            "guards": [g.to_dict() for g in result.guards()],
            "ranges": {k: range_list(v) for k, v in result.ranges().items()},
            "diagnostics": [d.to_dict() for d in result.diagnostics],
            "summary": summary,
            "seconds": round(secs, 4),
        }
        if model_info is not None:
            doc["model_summary"] = model_info
        if output and not contradicted and not refused:
            doc["written"] = output
            if notes:
                doc["write_notes"] = notes
        if contradicted:
            doc["contradicted"] = True
        echo(json.dumps(doc, indent=1))
        return
    echo(show(model))
    if model_info is not None:
        from shapeinfer.analysis.summary import format_summary

        for line in format_summary(model_info):
            echo(f"  {line}")
    if contradicted:
        echo("no shapes: the model cannot run at the sizes asked for (G015 below)")
    elif table is not None:
        _print_table(table, echo)
    else:
        init = {t.name for t in g.initializer}
        echo("inputs:")
        for vi in g.input:
            if vi.name in init:
                continue
            f = facts.get(vi.name)
            echo(f"  {text(vi.name):<24} {_dtype_name(f.dtype if f else 0):<8} {_fmt_shape(f)}")
        echo("outputs:")
        for vi in g.output:
            f = facts.get(vi.name)
            echo(f"  {text(vi.name):<24} {_dtype_name(f.dtype if f else 0):<8} {_fmt_shape(f)}")
    shown = [d for d in result.diagnostics if verbose or d.severity != "info"]
    if shown:
        echo("diagnostics:")
        for d in shown[:50]:
            echo(f"  {d}")
        if len(shown) > 50:
            echo(f"  ... {len(shown) - 50} more (use --json for all)")
    sev = summary["diagnostics"]
    echo(
        f"{summary['tensors']} tensors, {summary['resolved_pct']}% fully resolved, "
        f"{summary['fresh_symbols']} fresh symbols, diagnostics: {sev['error']} error, "
        f"{sev['warning']} warning, {sev['info']} info ({secs:.2f}s)"
    )
    if output and not contradicted and not refused:
        echo("wrote the model to standard output" if output == "-" else f"wrote {output}")
        for note in notes or ():
            click.echo(f"note: {note}", err=True)
    # a model that cannot run at the sizes asked for has no conditions to hold under
    guards = [] if contradicted else result.guards()
    if guards:
        echo("holds when: " + "; ".join(g.text for g in guards))


def _subgraph_json(result, table: list[dict] | None) -> dict[str, dict]:
    """``--json``'s ``subgraph_tensors``: graph path (``main/<node index>.<attribute>``, as the
    ``--all`` table's graph column) -> that If / Loop / Scan body's tensors, as ``tensors`` gives
    the main graph's (every one, or those ``--filter`` keeps)."""
    from shapeinfer.io.modeltext import text
    from shapeinfer.io.onnxio import graphs_with_paths

    keep = None if table is None else {(r["graph"], r["name"]) for r in table}
    out: dict[str, dict] = {}
    for path, sg in graphs_with_paths(result.model.graph):
        facts = result.graph_facts.get(path)
        if path == "main" or facts is None:
            continue
        made_by = _producers(sg)
        rows = {text(k): _io_json(k, f, made_by) for k, f in facts.items() if keep is None or (path, text(k)) in keep}
        if rows:
            out[path] = rows
    return out


def _print_table(rows: list[dict], echo=click.echo) -> None:
    """The --all / --filter table: one aligned line per tensor (a graph column when the model
    has subgraphs)."""
    subgraphs = any(r["graph"] != "main" for r in rows)
    head = (["graph"] if subgraphs else []) + ["tensor", "dtype", "dims", "op", "node"]
    lines = [head]
    for r in rows:
        f = r["fact"]
        dtype = _dtype_name(f.dtype) if f.kind == "tensor" else f.kind
        cells = [r["name"], dtype, _fmt_shape(f), r["op"], r["node"]]
        lines.append(([r["graph"]] if subgraphs else []) + cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    echo("tensors:")
    for line in lines:
        echo(("  " + "  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1]).rstrip())
    echo(f"{len(rows)} tensor{'s' if len(rows) != 1 else ''} listed")


#: The version of the ``--json`` documents of ``infer`` and ``optimize`` (their JSON Schemas are
#: ``shapeinfer/schemas/infer.schema.json`` and ``optimize.schema.json``); raised when a key is
#: removed or changes meaning, not when one is added.
JSON_SCHEMA_VERSION = 1


def _producers(graph) -> dict[str, dict]:
    """Main-graph tensor name -> its producer, as ``--json`` gives it: ``{"op": op_type,
    "node": node name}`` for a node's output, ``{"op": "input"}`` / ``{"op": "initializer"}``."""
    from shapeinfer.io.modeltext import text
    from shapeinfer.io.onnxio import initializer_names

    out: dict[str, dict] = {name: {"op": "initializer"} for name in initializer_names(graph)}
    out.update((vi.name, {"op": "input"}) for vi in graph.input if vi.name not in out)
    for n in graph.node:
        made = {"op": text(n.op_type), "node": text(n.name)}
        out.update((o, made) for o in n.output if o)
    return out


#: The element types whose tracked values ``--json`` gives (shape tensors, indices, masks; onnx's
#: UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL, UINT32, UINT64): not small float weights.
_INTEGER_TYPES = frozenset({2, 3, 4, 5, 6, 7, 9, 12, 13})


def _io_json(name: str, f, producers: dict | None = None) -> dict:
    """One tensor in ``--json``: name, dtype, shape (ints and expression text, None unknown),
    ``kind`` when not a tensor, ``producer`` (see :func:`_producers`) and, for an integer
    tensor whose values inference tracks (a shape tensor: ``Shape`` outputs and the arithmetic
    on them, small constants), ``value``: its elements flattened, as ints, expression text for
    symbolic sizes, None per unknown element."""
    from shapeinfer.io.modeltext import text

    made = None if producers is None else producers.get(name)
    name = text(name)
    if f is None:
        d = {"name": name, "dtype": None, "shape": None}
    else:
        d = {
            "name": name,
            "dtype": _dtype_name(f.dtype),
            "shape": None if f.shape is None else [_json_dim(x) for x in f.shape],
        }
        if f.kind != "tensor":
            d["kind"] = f.kind
        if f.value is not None and f.dtype in _INTEGER_TYPES:
            d["value"] = [_json_value(v) for v in f.value]
    if made is not None:
        d["producer"] = made
    return d


def _json_value(v):
    """A tracked element value as JSON: ints and finite floats as they are, a symbolic size as
    its expression text, an unknown element or a non-finite float as None."""
    import math

    if v is None or type(v) is int:
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return int(v)
    return _json_dim(v)


def _fmt_shape(f) -> str:
    from shapeinfer.symbolic import dims as D

    if f is None or f.shape is None:
        return "?"
    return "[" + ", ".join(D.format(d) for d in f.shape) + "]"


def _dtype_name(t: int) -> str:
    from shapeinfer.inference.declarations import dtype_text

    return dtype_text(t)


def _json_dim(d):
    from shapeinfer.symbolic import dims as D

    return d if type(d) is int else D.format(d)


def summarize(result) -> dict:
    """Counts for the summary line: tensors, fully resolved share, fresh symbols, diagnostics.

    A fact shared by many tensors (inference reuses one record for the same shape across
    repeated layers) is checked once.
    """
    from shapeinfer.symbolic import dims as D

    inputs = result.input_symbols
    total = resolved = 0
    seen: dict[int, bool] = {}
    for gf in result.graph_facts.values():
        for f in gf.values():
            if f.kind != "tensor":
                continue
            total += 1
            ok = seen.get(id(f))
            if ok is None:
                ok = seen[id(f)] = f.shape is not None and all(
                    type(d) is int or D.symbols(d) <= inputs for d in f.shape
                )
            resolved += ok
    sev = {"error": 0, "warning": 0, "info": 0}
    for d in result.diagnostics:
        sev[d.severity] = sev.get(d.severity, 0) + 1
    return {
        "tensors": total,
        "resolved": resolved,
        "resolved_pct": round(100.0 * resolved / total, 1) if total else 100.0,
        "fresh_symbols": len(result.fresh_symbols),
        "capped_expressions": result.capped,
        "diagnostics": sev,
    }
