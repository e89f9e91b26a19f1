"""The ``shapeinfer`` command: a thin layer over the Python API.

``shapeinfer MODEL`` infers shapes (the default command); ``optimize``, ``lint`` and ``verify``
are subcommands. Bad input gives one line on stderr and exit code 2, never a traceback
(``--debug`` shows one); a usage error (an unknown flag, a bad flag value) is one line too.

Only click is imported at start-up: onnx, numpy and the engine are imported by the command
that needs them, so ``--help`` and ``--version`` stay fast.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time

import click

from shapeinfer import __version__
from shapeinfer.dims import INT64_MAX
from shapeinfer.userfiles import show

EXIT_USAGE = 2


class CliError(click.ClickException):
    """A user-facing failure: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"shapeinfer: error: {self.format_message()}", err=True)


def _usage_line(e: click.UsageError) -> str:
    """A click usage error as one line: what is wrong, naming the flag and the value given."""
    msg = e.message
    if isinstance(e, click.BadParameter) and e.param is not None and not isinstance(e, click.MissingParameter):
        p = e.param
        name = " / ".join(p.opts) if isinstance(p, click.Option) else p.human_readable_name
        msg = f"invalid value for {name}: {msg}"
    elif isinstance(e, (click.MissingParameter, click.NoSuchOption)):
        msg = e.format_message()  # with click's "Did you mean --bind?"
    msg = msg.rstrip(".")
    where = e.ctx.command_path if e.ctx is not None else "shapeinfer"
    return f"shapeinfer: error: {msg} (see '{where} --help')"


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, is a model for ``infer``."""

    default_command = "infer"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            first = args[0]
            if not first.startswith("-") and not os.path.lexists(first):
                from shapeinfer.suggest import closest

                guess = closest(first, self.commands)
                if guess is not None:
                    raise click.UsageError(f"unknown command {first!r} (did you mean {guess!r}?)", ctx)
                looks_like_word = first.isidentifier()
                if looks_like_word and any(os.path.lexists(a) for a in args[1:] if not a.startswith("-")):
                    cmds = ", ".join(sorted(self.commands))
                    raise click.UsageError(f"unknown command {first!r} (commands: {cmds})", ctx)
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("shapeinfer", "MODEL [OPTIONS]  |  shapeinfer COMMAND [ARGS]...")

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode: bool = True, **extra):
        """Click's main, with every usage error on one line (exit 2) instead of a usage dump."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as e:
            click.echo(_usage_line(e), err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as e:
            if isinstance(e, CliError):
                e.show()
            else:
                click.echo(f"shapeinfer: error: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("shapeinfer: error: interrupted", err=True)
            sys.exit(EXIT_USAGE)
        sys.exit(rv if isinstance(rv, int) else 0)


class Number(click.ParamType):
    """An int or float flag value within a range; the error names the text given (``0``, ``abc``)."""

    def __init__(self, kind: type, what: str, minimum: float, minimum_open: bool = False, maximum=None) -> None:
        self.kind = kind
        self.what = what
        self.name = kind.__name__
        self.minimum = minimum
        self.minimum_open = minimum_open
        self.maximum = maximum

    def convert(self, value, param, ctx):
        if isinstance(value, self.kind) and not isinstance(value, bool):
            v = value
        else:
            text = str(value).strip()
            try:
                digits = text.lstrip("+-")
                if self.kind is int and (not (digits.isascii() and digits.isdigit()) or len(text) > 25):
                    raise ValueError
                v = self.kind(text)
            except ValueError:
                self.fail(f"{value!r} is not {self.what}", param, ctx)
        bad = (
            (isinstance(v, float) and math.isnan(v))
            or v < self.minimum
            or (self.minimum_open and v == self.minimum)
            or (self.maximum is not None and v > self.maximum)
        )
        if bad:
            self.fail(f"{value} is not {self.what}", param, ctx)
        return v


SECONDS = Number(float, "a number of seconds above 0", 0.0, minimum_open=True)


def _parse_assignments(values: tuple[str, ...], what: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        for part in v.split(",") if what == "bind" else [v]:
            if "=" not in part:
                raise CliError(f"--{what} expects NAME=VALUE, got {part!r}")
            k, _, val = part.partition("=")
            if not k.strip():
                raise CliError(f"--{what} expects NAME=VALUE, got {part!r}")
            out.append((k.strip(), val.strip()))
    return out


def parse_count(text: str, flag: str) -> int:
    """An integer given on the command line, within int64 (checked before converting, so a
    thousand-digit number is one clear line, not Python's int-conversion limit)."""
    from shapeinfer.userfiles import show

    t = text.strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not digits.isascii() or not digits.isdigit():
        raise CliError(f"{flag}={show(text[:40])}: the value must be an integer")
    if len(digits.lstrip("0")) > 19 or int(digits) > INT64_MAX:
        raise CliError(f"{flag}={show(text[:40])}{'...' if len(text) > 40 else ''}: out of range (at most 2**63-1)")
    return int(t)


def parse_bytes(text: str, flag: str) -> int:
    """``8G``, ``512M``, ``1.5GiB``, ``1000000`` as a byte count; CliError for anything else."""
    import re

    m = re.fullmatch(r"\s*([0-9]{1,15}(?:\.[0-9]{1,6})?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise CliError(f"{flag} {text[:40]!r}: expected a size such as 8G, 512M or a byte count")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    n = int(float(m.group(1)) * scale)
    if n <= 0:
        raise CliError(f"{flag} {text!r}: must be positive")
    return n


def parse_bind(values: tuple[str, ...]) -> dict[str, int]:
    """``("batch=2,seq=7", ...)`` as ``{"batch": 2, "seq": 7}``; CliError for anything else.

    Values are ints of at least 1: a symbol stands for a size that is never 0 (the dims algebra
    relies on it), so ``batch=0`` is refused; write a zero-size dim as 0 in ``--input-shape``.
    A symbol given twice with different values is refused.
    """
    bind: dict[str, int] = {}
    for k, v in _parse_assignments(values, "bind"):
        n = parse_count(v, f"--bind {k}")
        if n < 0:
            raise CliError(f"--bind {k}={v}: dims cannot be negative")
        if n == 0:
            raise CliError(
                f"--bind {k}=0: symbols stand for sizes of at least 1; "
                f"a zero-size dim is written as 0 with --input-shape"
            )
        if k in bind and bind[k] != n:
            raise CliError(f"--bind {k} is given twice, with {bind[k]} and {n}")
        bind[k] = n
    return bind


def parse_dim_ranges(values: tuple[str, ...]) -> dict[str, tuple[int, int | None]]:
    """``("seq=1:512", "batch=1:8")`` as ``{"seq": (1, 512), ...}``; CliError for anything else."""
    from shapeinfer.guards import parse_range

    out: dict[str, tuple[int, int | None]] = {}
    for text in values:
        for part in text.split(","):
            try:
                k, r = parse_range(part)
            except ValueError as e:
                raise CliError(f"--dim-range {e}") from None
            if k in out and out[k] != r:
                raise CliError(f"--dim-range {k} is given twice")
            out[k] = r
    return out


DIM_RANGE_HELP = "Give an input symbol an integer range, e.g. seq=1:512 (HI may be empty: no max). Repeatable."


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, list]:
    """``("x=1,3,batch",)`` as ``{"x": [1, 3, Expr(batch)]}``.

    Each dim is a non-negative int or a dims expression over symbol names (``seq``,
    ``2*seq``, ``(seq + 1)//2``); anything else (``[1,seq]``, ``1x128``) is refused, as is an
    input given twice or an expression past the complexity cap inference uses.
    """
    shapes: dict[str, list] = {}
    for k, v in _parse_assignments(values, "input-shape"):
        if k in shapes:
            raise CliError(f"--input-shape {k} is given twice")
        text = v.strip()
        if text and text[0] in "[(" and text[-1] in "])":
            raise CliError(
                f"--input-shape {k}={show(v[:60])}: write the dims without brackets, separated by commas ({k}=1,seq)"
            )
        dims = []
        for tok in [t.strip() for t in v.split(",")] if v.strip() else []:
            if not tok:
                raise CliError(f"--input-shape {k}={v}: empty dim")
            if tok.lstrip("+-").isdigit() and tok.isascii():
                n = parse_count(tok, f"--input-shape {k}")
                if n < 0:
                    raise CliError(f"--input-shape {k}={v}: dims cannot be negative")
                dims.append(n)
            else:
                dims.append(_parse_dim_text(tok, k))
        shapes[k] = dims
    return shapes


def _expansion_bound(node) -> int:
    """An upper bound on the terms ``node`` (a Python AST) expands to: sums add, products
    multiply; a dim given on the command line must stay under the engine's expression cap."""
    import ast

    if isinstance(node, ast.BinOp):
        a, b = _expansion_bound(node.left), _expansion_bound(node.right)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return a + b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Pow):
            e = node.right.value if isinstance(node.right, ast.Constant) and type(node.right.value) is int else 64
            return a ** min(max(e, 1), 64) if a > 1 else a
        return a + b
    if isinstance(node, ast.UnaryOp):
        return _expansion_bound(node.operand)
    if isinstance(node, ast.Call):
        return 1 + sum(_expansion_bound(x) for x in node.args)
    return 1


def _parse_dim_text(tok: str, name: str):
    """A symbolic dim from ``--input-shape``, refused when larger than the engine's cap."""
    import ast

    from shapeinfer import dims as D
    from shapeinfer.engine import MAX_EXPR_SIZE
    from shapeinfer.userfiles import show

    too_big = f"--input-shape {name}: the dim {show(tok[:60])!r} is more complex than the expression cap"
    if len(tok) > 400:
        raise CliError(too_big)
    try:
        tree = ast.parse(tok.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None and _expansion_bound(tree) > MAX_EXPR_SIZE:
        raise CliError(too_big)
    try:
        d = D.parse_expression(tok)
    except ValueError as e:
        hint = f" (dims are separated by commas: {name}={tok.replace('x', ',')})" if "x" in tok else ""
        raise CliError(f"--input-shape {name}: {show(str(e))}{hint}") from None
    if type(d) is int and d < 0:
        raise CliError(f"--input-shape {name}: dims cannot be negative")
    if D.size(d) > MAX_EXPR_SIZE:
        raise CliError(too_big)
    return d


def _fmt_shape(f) -> str:
    from shapeinfer import dims as D

    if f is None or f.shape is None:
        return "?"
    return "[" + ", ".join(D.format(d) for d in f.shape) + "]"


def _dtype_name(t: int) -> str:
    import onnx

    try:
        return onnx.helper.tensor_dtype_to_string(t).replace("TensorProto.", "").lower() if t else "?"
    except Exception:
        return str(t)


def _json_dim(d):
    from shapeinfer import dims as D

    return d if type(d) is int else D.format(d)


def summarize(result) -> dict:
    """Counts for the summary line: tensors, fully resolved share, fresh symbols, diagnostics.

    A fact shared by many tensors (inference reuses one record for the same shape across
    repeated layers) is checked once.
    """
    from shapeinfer import dims as D

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


def write_model(
    model,
    out: str,
    src: str | None,
    in_place: bool = False,
    graph_tail: bytes = b"",
    loaded=None,
    nodes_as_read=False,
    node_fields: bytes | None = None,
    value_info_fields: bytes | None = None,
    external: list | None = None,
) -> None:
    """Write atomically next to ``out``; external data files are copied when the folder changes.
    ``graph_tail``: serialised main-graph fields written after the model's own; ``loaded``: the
    LoadedModel ``model`` came from, when none of its tensors changed; ``nodes_as_read``: nor
    its main graph's nodes; ``node_fields`` / ``value_info_fields``: its main graph's nodes /
    value_info already serialised; ``external``: its tensors stored as external data, when
    known (see save_model)."""
    from shapeinfer.writer import save_model

    save_model(
        model,
        out,
        src,
        in_place=in_place,
        graph_tail=graph_tail,
        loaded=loaded,
        nodes_as_read=nodes_as_read,
        node_fields=node_fields,
        value_info_fields=value_info_fields,
        external=external,
    )


def check_output(out: str | None, src: str, in_place: bool) -> None:
    """Refuse an output path the write would refuse (missing folder, a folder, the input without
    ``--in-place``, a symlink leaving its folder) before any work is done."""
    from shapeinfer.userfiles import STDIO, UserFileError, output_target

    if out is None or out == STDIO:
        return
    try:
        output_target(out, inputs=[src], allow_inputs=in_place, what="model")
    except UserFileError as e:
        raise CliError(str(e)) from None


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.t0


def _run_guarded(debug: bool, fn, path: str | None = None):
    """Run ``fn``; anything it raises becomes one CliError line (exit 2) naming ``path``."""
    from shapeinfer.engine import InferenceTimeout
    from shapeinfer.external import ExternalDataError
    from shapeinfer.onnxio import ModelLoadError
    from shapeinfer.userfiles import UserFileError

    try:
        return fn()
    except click.ClickException:
        raise
    except (ModelLoadError, ExternalDataError, UserFileError) as e:
        if debug:
            raise
        raise CliError(str(e)) from None
    except InferenceTimeout as e:
        raise CliError(f"{path}: {e}" if path else str(e)) from None
    except KeyboardInterrupt:
        raise CliError("interrupted") from None
    except Exception as e:  # never a traceback for users
        if debug:
            raise
        where = f"{path}: " if path else ""
        raise CliError(f"{where}internal error: {type(e).__name__}: {e} (rerun with --debug for a traceback)") from None


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="shapeinfer", message="%(prog)s %(version)s")
def main() -> None:
    """Static symbolic shape inference for ONNX models.

    \b
    shapeinfer MODEL [-o OUT.onnx]   infer every tensor's shape (the default command)
    shapeinfer optimize MODEL -o OUT fold shape arithmetic, rewrite legacy Reshape
    shapeinfer lint PATH...          check models against the rule catalog
    shapeinfer verify MODEL          compare inferred shapes with onnxruntime

    Dims are ints or expressions over the model's symbols (batch, seq, batch*seq,
    (seq + 1)//2). A dim that cannot be determined becomes a fresh symbol unk_<n>.
    Exit codes: 0 success, 1 findings (lint, verify, infer --fail-on), 2 bad input or usage.
    A MODEL of - is read from standard input; -o - writes the model to standard output
    (the report then goes to standard error). NO_COLOR set in the environment turns colour off.
    """
    _escape_unprintable_output()


def _escape_unprintable_output() -> None:
    """Names and paths that the terminal's encoding cannot show are escaped, never an error."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")


_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@main.command("infer", short_help="Infer every tensor's shape (the default command).")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option("-o", "--output", type=click.Path(), help="Write the model with every tensor's shape in value_info.")
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
@click.option(
    "--input-shape",
    "input_shape",
    multiple=True,
    metavar="NAME=D0,D1,...",
    help="Override a graph input's dims (ints or expressions over symbol names). Repeatable.",
)
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="Specialise an input symbol to an int (at least 1) everywhere. Repeatable.",
)
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI", help=DIM_RANGE_HELP)
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
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    help="Exit 1 when a diagnostic of this severity or worse is reported (for CI).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every diagnostic, not only errors and warnings.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="Give up after this long.")
def infer_cmd(
    model: str,
    output: str | None,
    in_place: bool,
    input_shape: tuple,
    bind: tuple,
    dim_range: tuple,
    show_all: bool,
    filters: tuple[str, ...],
    as_json: bool,
    fail_on: str | None,
    verbose: bool,
    debug: bool,
    timeout: float | None,
) -> None:
    """Infer the shape of every tensor in MODEL and print the graph's inputs and outputs.

    With --all or --filter, print a table of every (matching) tensor instead. Exit codes:
    0 done, 1 a diagnostic at the --fail-on severity, 2 bad input or usage.
    """
    binding = parse_bind(bind)
    ranges = parse_dim_ranges(dim_range)
    shapes = parse_input_shapes(input_shape)
    check_output(output, model, in_place)

    def run():
        from shapeinfer.api import BindError, check_bind_symbols
        from shapeinfer.engine import infer, model_dir
        from shapeinfer.onnxio import load_model_file
        from shapeinfer.writer import annotate_for_writing, subgraphs_annotated

        timer = Timer()
        loaded = load_model_file(model, lean=True)  # weights: written back as read, never parsed
        m = loaded.model
        try:
            result = infer(
                m,
                base_dir=model_dir(model),
                input_shapes=shapes or None,
                bind=binding or None,
                timeout=timeout,
                dim_ranges=ranges or None,
            )
            if binding:
                check_bind_symbols(binding, result.input_symbols)
        except KeyError as e:
            raise CliError(f"--input-shape: {e.args[0]}") from None
        except BindError as e:
            raise CliError(f"--bind {e.symbol}: {e}") from None
        try:
            check_bind_symbols(ranges, result.input_symbols)
        except BindError as e:
            raise CliError(f"--dim-range {e.symbol}: {e}") from None
        secs = timer()
        if output:
            # the new value_info entries go to the file as the bytes annotate built
            written, tail = annotate_for_writing(result)
            nodes_as_read = not subgraphs_annotated(result)
            write_model(written, output, model, in_place, graph_tail=tail, loaded=loaded, nodes_as_read=nodes_as_read)
        return result, secs

    result, secs = _run_guarded(debug, run, model)
    table = _tensor_rows(result, filters) if (show_all or filters) else None
    _report(result, model, output, secs, as_json, verbose, table)
    if fail_on:
        level = _SEVERITY_RANK[fail_on]
        if any(_SEVERITY_RANK.get(d.severity, 0) >= level for d in result.diagnostics):
            click.get_current_context().exit(1)


def _graphs(graph, path: str = "main"):
    """``(path, graph)`` for the main graph and every subgraph, keyed like ``Result.graph_facts``."""
    from shapeinfer.engine import graph_path
    from shapeinfer.onnxio import subgraph_attrs

    yield path, graph
    for k, n in enumerate(graph.node):
        for attr, g in subgraph_attrs(n):
            yield from _graphs(g, graph_path(path, k, attr))


def _matches(pattern: str, fields: tuple[str, ...]) -> bool:
    from fnmatch import fnmatchcase

    if any(c in pattern for c in "*?["):
        return any(fnmatchcase(f, pattern) for f in fields)
    return any(pattern in f for f in fields)


def _tensor_rows(result, filters: tuple[str, ...]) -> list[dict]:
    """Every tensor of every inferred graph (graph order: inputs, initializers, node outputs)
    with its producer's op type and node name, kept when it matches one of ``filters``."""
    from shapeinfer.modeltext import text

    rows = []
    for path, g in _graphs(result.model.graph):
        facts = result.graph_facts.get(path)
        if facts is None:
            continue
        where: dict[str, tuple[str, str]] = {}
        for vi in g.input:
            where[vi.name] = ("input", "")
        for t in g.initializer:
            where[t.name] = ("initializer", "")
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


def _echo_for(output: str | None):
    """click.echo, to stderr when the model itself goes to stdout (``-o -``)."""
    if output == "-":
        return lambda *a, **k: click.echo(*a, **{**k, "err": True})
    return click.echo


def _report(
    result, model: str, output: str | None, secs: float, as_json: bool, verbose: bool, table: list[dict] | None = None
) -> None:
    from shapeinfer.modeltext import text

    echo = _echo_for(output)
    g = result.model.graph
    facts = result.facts
    summary = summarize(result)
    if as_json:
        if table is None:
            tensors = {text(k): _io_json(k, f) for k, f in facts.items()}
        else:
            tensors = {text(r["name"]): _io_json(r["name"], r["fact"]) for r in table if r["graph"] == "main"}
        doc = {
            "model": show(model),
            "inputs": [_io_json(vi.name, facts.get(vi.name)) for vi in g.input],
            "outputs": [_io_json(vi.name, facts.get(vi.name)) for vi in g.output],
            "tensors": tensors,
            "symbols": {"inputs": sorted(result.input_symbols), "fresh": result.fresh_symbols},
            "equalities": [list(e) for e in result.equalities],
            "guards": [g.to_dict() for g in result.guards()],
            "ranges": {k: list(v) for k, v in result.ranges().items()},
            "diagnostics": [d.to_dict() for d in result.diagnostics],
            "summary": summary,
            "seconds": round(secs, 4),
        }
        if output:
            doc["written"] = output
        echo(json.dumps(doc, indent=1))
        return
    echo(show(model))
    if table is not None:
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
    if output:
        echo("wrote the model to standard output" if output == "-" else f"wrote {output}")
    guards = result.guards()
    if guards:
        echo("holds when: " + "; ".join(g.text for g in guards))


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


def _io_json(name: str, f) -> dict:
    from shapeinfer.modeltext import text

    name = text(name)
    if f is None:
        return {"name": name, "dtype": None, "shape": None}
    d = {
        "name": name,
        "dtype": _dtype_name(f.dtype),
        "shape": None if f.shape is None else [_json_dim(x) for x in f.shape],
    }
    if f.kind != "tensor":
        d["kind"] = f.kind
    return d


# ------------------------------------------------------------------------------------------------
# lint: the rule catalog for CI (implementation in shapeinfer/checks/, catalog in rules/README.md)


@main.command("lint", short_help="Check models against the rule catalog (CI gate).")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--rules", metavar="NAME|FILE", help="Rule profile: default, strict, openvino, onednn, or a TOML file.")
@click.option("--select", multiple=True, metavar="CODES", help="Only these rules (codes or prefixes, comma-separated).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add rules to the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Turn rules off (codes or prefixes).")
@click.option("--target", type=click.Choice(["onnx", "openvino", "onednn"]), help="Also check a runtime's Reshape.")
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
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
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

    Exit codes: 0 no error-level finding, 1 error-level findings, 2 could not run.
    Settings: --rules profile, then [tool.shapeinfer] in the nearest pyproject.toml, then flags.
    Folders are searched for *.onnx, leaving out the *.fixed.onnx files --fix writes.
    Text output is coloured on a terminal unless NO_COLOR is set.
    """
    from shapeinfer.checks import command

    def run() -> int:
        try:
            if explain:
                click.echo(command.explain(explain))
                return 0
            if list_rules:
                click.echo(command.list_rules())
                return 0
            if not paths:
                raise CliError("lint needs at least one model file or folder")
            cfg = command.configure(rules, select, extend_select, ignore, target, config, isolated)
            cfg.timeout = timeout
            return command.run(
                paths, cfg, fmt=fmt, output_file=output_file, fix=fix, in_place=in_place, jobs=jobs, version=__version__
            )
        except command.LintError as e:
            raise CliError(str(e)) from None

    click.get_current_context().exit(_run_guarded(debug, run))


# ------------------------------------------------------------------------------------------------
# shapeinfer verify: inferred shapes against onnxruntime (logic in shapeinfer/verify.py)


@main.command("verify", short_help="Compare inferred shapes with onnxruntime's.")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="One binding of the input symbols; repeat to check several bindings in one run.",
)
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI", help=DIM_RANGE_HELP)
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
    strict: bool,
    seed: int,
    as_json: bool,
    max_memory: str | None,
    debug: bool,
) -> None:
    """Run MODEL in onnxruntime and compare every tensor's actual shape with the inferred one.

    Each --bind gives every input symbol a value (shapeinfer verify m.onnx --bind batch=2,seq=7
    --bind batch=3,seq=11). A binding that violates a guard (a condition the inferred shapes
    need, such as seq <= 512) is named in one line before anything runs. Exit codes: 0 no
    mismatch, 1 mismatches or a violated guard, 2 could not run.
    """
    bindings = [parse_bind((b,)) for b in bind]
    ranges = parse_dim_ranges(dim_range)
    limit = parse_bytes(max_memory, "--max-memory") if max_memory is not None else None

    def run():
        from shapeinfer.verify import DEFAULT_MAX_MEMORY, GuardViolation, VerifyError, verify

        try:
            return verify(
                model,
                bindings,
                strict=strict,
                seed=seed,
                max_memory=limit or DEFAULT_MAX_MEMORY,
                dim_ranges=ranges or None,
            )
        except GuardViolation as e:
            return e
        except VerifyError as e:
            raise CliError(str(e)) from None

    report = _run_guarded(debug, run)
    if isinstance(report, Exception):
        click.echo(f"shapeinfer: {report}", err=True)
        click.get_current_context().exit(1)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1))
    else:
        _verify_text(report)
    click.get_current_context().exit(0 if report.ok else 1)


@main.command("profile", short_help="Valid input ranges, trtexec shapes and memory bounds.")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option("--dim-range", "dim_range", multiple=True, metavar="SYM=LO:HI", help=DIM_RANGE_HELP)
@click.option("--opt", "opt", multiple=True, metavar="SYM=INT[,SYM=INT]", help="The opt shapes' symbol values.")
@click.option("-a", "--all", "show_all", is_flag=True, help="List every tensor's bound, not only the largest.")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def profile_cmd(model: str, dim_range: tuple, opt: tuple, show_all: bool, as_json: bool, debug: bool) -> None:
    """Print the valid range of every graph input's dims under the guards inference found (and
    --dim-range), as trtexec --minShapes/--optShapes/--maxShapes, and each tensor's upper bound
    in elements and bytes at the range maxima with the peak of live activations in graph order.
    A symbol without an upper bound has no max shapes (say one with --dim-range).
    """
    ranges = parse_dim_ranges(dim_range)
    opt_b = parse_bind(opt)

    def run():
        from shapeinfer.api import BindError, check_bind_symbols
        from shapeinfer.engine import infer, model_dir
        from shapeinfer.onnxio import load_model
        from shapeinfer.profile import profile

        result = infer(load_model(model), base_dir=model_dir(model), dim_ranges=ranges or None)
        for flag, given in (("--dim-range", ranges), ("--opt", opt_b)):
            try:
                check_bind_symbols(given, result.input_symbols)
            except BindError as e:
                raise CliError(f"{flag} {e.symbol}: {e}") from None
        return profile(result, opt_b, show(model))

    prof = _run_guarded(debug, run, model)
    if as_json:
        click.echo(json.dumps(prof.to_dict(), indent=1))
        return
    _profile_text(prof, show_all)


def _profile_text(prof, show_all: bool) -> None:
    from shapeinfer.profile import ASSUMES
    from shapeinfer.verify import format_bytes

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
    for k, v in prof.trtexec().items():
        click.echo(f"--{k}={v}" if v is not None else f"--{k}: none (an input dim has no max)")
    rows = sorted(prof.tensors, key=lambda t: (t["bytes"] is not None, t["bytes"] or 0), reverse=True)
    unbounded = [t for t in rows if t["bytes"] is None]
    shown = rows if show_all else rows[:10]
    click.echo(f"tensor bounds at the range maxima ({len(rows)} tensors, {len(unbounded)} without a bound):")
    for t in shown:
        el = "no bound" if t["elements"] is None else f"{t['elements']} elements"
        by = "no bound" if t["bytes"] is None else format_bytes(t["bytes"])
        click.echo(f"  {t['name'][:48]:<48} {t['op']:<16} {el:<22} {by}")
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


def _verify_text(report) -> None:
    from shapeinfer.verify import format_binding

    click.echo(show(report.model))
    for pb in report.per_binding:
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
    click.echo(
        f"{report.checked} tensor checks at {nb} binding{'s' if nb != 1 else ''}: "
        f"{len(report.mismatches)} mismatches, {len(report.unresolved)} unresolved"
    )


# ------------------------------------------------------------------------------------------------
# shapeinfer optimize: rewriting passes (logic in shapeinfer/passes/)


@main.command("optimize", short_help="Fold shape arithmetic, rewrite legacy Reshape.")
@click.argument("model", type=click.Path(dir_okay=True), required=False)
@click.option("-o", "--output", type=click.Path(), help="Write the optimized model here (else only report).")
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
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
    help="Lift the default-domain opset to N (onnx's converter).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--timeout", type=SECONDS, metavar="SECONDS", help="Give up after this long.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def optimize_cmd(
    model: str | None,
    output: str | None,
    in_place: bool,
    bind: tuple,
    passes: str | None,
    list_passes: bool,
    target_opset: int | None,
    as_json: bool,
    timeout: float | None,
    debug: bool,
) -> None:
    """Rewrite MODEL to compute the same values with less shape arithmetic and no Reshape-1.

    Runs inference, then the passes (--list-passes), and writes a model annotated like
    `shapeinfer -o`. Prints what each pass changed and the node counts before and after.
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

    def run():
        from shapeinfer.passes import OptimizeError, optimize_with_report

        try:
            optimized, report = optimize_with_report(
                model,
                passes=names,
                bind=binding or None,
                target_opset=target_opset,
                timeout=timeout,
                keep_alive=_UNTIL_EXIT,
            )
        except OptimizeError as e:
            raise CliError(str(e)) from None
        if output:
            write_model(
                optimized,
                output,
                model,
                in_place,
                node_fields=report.node_fields,
                value_info_fields=report.value_info_fields,
                external=report.external_tensors,
            )
        return report

    report = _run_guarded(debug, run)
    _optimize_report(report, model, output, as_json)


def _optimize_report(report, model: str, output: str | None, as_json: bool) -> None:
    echo = _echo_for(output)
    if as_json:
        doc = {
            "model": show(model),
            "output": output,
            "passes": [
                {"name": p.name, "changes": p.changes, "node_delta": p.node_delta, "seconds": round(p.seconds, 4)}
                for p in report.passes
            ],
            "nodes_before": report.nodes_before,
            "nodes_after": report.nodes_after,
            "opset_before": report.opset_before,
            "opset_after": report.opset_after,
            "rounds": report.rounds,
            "seconds": round(report.seconds, 4),
            "notes": report.notes,
        }
        echo(json.dumps(doc, indent=1))
        return
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    echo(show(model))
    for p in report.passes:
        what = ", ".join(f"{v} {k}" for k, v in p.changes.items() if v) or "no change"
        delta = f" (nodes {p.node_delta:+d})" if p.node_delta else ""
        echo(f"  {p.name:<22} {what}{delta}")
    opset = f"opset {report.opset_before if report.opset_before is not None else '-'}"
    if report.opset_after != report.opset_before:
        opset += f" -> {report.opset_after}"
    echo(
        f"nodes {report.nodes_before} -> {report.nodes_after}, {opset}, "
        f"{report.rounds} round{'s' if report.rounds != 1 else ''} ({report.seconds:.2f}s)"
    )
    if output == "-":
        echo("wrote the model to standard output")
    else:
        echo(f"wrote {output}" if output else "no -o given: nothing written")


#: Set by :func:`entry`, whose process ends without tearing down: large objects a command is
#: done with are put here instead of being freed one by one (see ``optimize_with_report``).
_UNTIL_EXIT: list | None = None


def entry() -> None:
    """The ``shapeinfer`` console script (and ``python -m shapeinfer.cli``): :func:`main`, then
    the process ends as soon as its output is flushed, without tearing the interpreter down.

    Freeing a large model's messages and every module (onnx, numpy) one by one at exit costs
    more CPU than some whole commands; the operating system reclaims the memory at once. Only
    the standard streams are flushed: nothing this process starts registers other exit work
    (worker pools and temporary files are closed by the commands themselves). Calling
    :func:`main` directly (``CliRunner``, embedding) keeps the normal exit.

    Before any command imports numpy, ``OPENBLAS_NUM_THREADS`` defaults to 1 (a value the user
    set is kept): numpy's bundled OpenBLAS otherwise starts one worker thread per core when it
    is imported, which costs more CPU than the whole inference of a small model, and the
    command does no BLAS work. Only the console script does this; ``import shapeinfer`` leaves
    the environment alone.
    """
    global _UNTIL_EXIT
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _UNTIL_EXIT = []
    try:
        main.main(prog_name="shapeinfer")
        code = 0
    except SystemExit as e:
        code = e.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said
        code = code or 1
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
