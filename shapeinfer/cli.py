"""The ``shapeinfer`` command: a thin layer over the Python API.

``shapeinfer MODEL`` infers shapes (the default command); ``optimize``, ``lint`` and ``verify``
are subcommands. Bad input gives one line on stderr and exit code 2, never a traceback
(``--debug`` shows one).
"""

from __future__ import annotations

import contextlib
import json
import time

import click

from shapeinfer import __version__
from shapeinfer.userfiles import show

EXIT_USAGE = 2


class CliError(click.ClickException):
    """A user-facing failure: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"shapeinfer: error: {self.format_message()}", err=True)


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, is a model for ``infer``."""

    default_command = "infer"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        elif not args:
            args = []
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("shapeinfer", "MODEL [OPTIONS]  |  shapeinfer COMMAND [ARGS]...")


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


INT64_MAX = 2**63 - 1


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
    """``("batch=2,seq=7", ...)`` as ``{"batch": 2, "seq": 7}``; CliError for anything else."""
    bind = {}
    for k, v in _parse_assignments(values, "bind"):
        n = parse_count(v, f"--bind {k}")
        if n < 0:
            raise CliError(f"--bind {k}={v}: dims cannot be negative")
        bind[k] = n
    return bind


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, list]:
    """``("x=1,3,batch",)`` as ``{"x": [1, 3, Expr(batch)]}``."""

    shapes = {}
    for k, v in _parse_assignments(values, "input-shape"):
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
    d = D.parse(tok)
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
    """Counts for the summary line: tensors, fully resolved share, fresh symbols, diagnostics."""
    from shapeinfer import dims as D

    inputs = result.input_symbols
    total = resolved = 0
    for gf in result.graph_facts.values():
        for f in gf.values():
            if f.kind != "tensor":
                continue
            total += 1
            if f.shape is not None and all(type(d) is int or D.symbols(d) <= inputs for d in f.shape):
                resolved += 1
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


def write_model(model, out: str, src: str | None, in_place: bool = False) -> None:
    """Write atomically next to ``out``; external data files are copied when the folder changes."""
    from shapeinfer.writer import save_model

    save_model(model, out, src, in_place=in_place)


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
    Exit codes: 0 success, 1 findings (lint, verify), 2 bad input or usage.
    A MODEL of - is read from standard input; -o - writes the model to standard output
    (the report then goes to standard error).
    """
    _escape_unprintable_output()


def _escape_unprintable_output() -> None:
    """Names and paths that the terminal's encoding cannot show are escaped, never an error."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")


@main.command("infer")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option("-o", "--output", type=click.Path(), help="Write the model with every tensor's shape in value_info.")
@click.option("--in-place", is_flag=True, help="Allow -o to name the input model itself.")
@click.option(
    "--input-shape",
    "input_shape",
    multiple=True,
    metavar="NAME=D0,D1,...",
    help="Override a graph input's dims (ints or symbol names). Repeatable.",
)
@click.option("--bind", multiple=True, metavar="SYM=INT[,SYM=INT]", help="Specialise a symbol to an int everywhere.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="List every diagnostic, not only errors and warnings.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS", help="Give up after this long."
)
def infer_cmd(
    model: str,
    output: str | None,
    in_place: bool,
    input_shape: tuple,
    bind: tuple,
    as_json: bool,
    verbose: bool,
    debug: bool,
    timeout: float | None,
) -> None:
    """Infer the shape of every tensor in MODEL and print the graph's inputs and outputs."""
    binding = parse_bind(bind)
    shapes = parse_input_shapes(input_shape)
    check_output(output, model, in_place)

    def run():
        from shapeinfer.engine import infer, model_dir
        from shapeinfer.onnxio import load_model
        from shapeinfer.writer import annotate

        timer = Timer()
        m = load_model(model)
        try:
            result = infer(
                m, base_dir=model_dir(model), input_shapes=shapes or None, bind=binding or None, timeout=timeout
            )
        except KeyError as e:
            raise CliError(f"--input-shape: {e.args[0]}") from None
        secs = timer()
        if output:
            annotate(result)
            write_model(result.model, output, model, in_place)
        return result, secs

    result, secs = _run_guarded(debug, run, model)
    _report(result, model, output, secs, as_json, verbose)


def _echo_for(output: str | None):
    """click.echo, to stderr when the model itself goes to stdout (``-o -``)."""
    if output == "-":
        return lambda *a, **k: click.echo(*a, **{**k, "err": True})
    return click.echo


def _report(result, model: str, output: str | None, secs: float, as_json: bool, verbose: bool) -> None:
    echo = _echo_for(output)
    g = result.model.graph
    facts = result.facts
    summary = summarize(result)
    if as_json:
        doc = {
            "model": show(model),
            "inputs": [_io_json(vi.name, facts.get(vi.name)) for vi in g.input],
            "outputs": [_io_json(vi.name, facts.get(vi.name)) for vi in g.output],
            "tensors": {k: _io_json(k, f) for k, f in facts.items()},
            "symbols": {"inputs": sorted(result.input_symbols), "fresh": result.fresh_symbols},
            "equalities": [list(e) for e in result.equalities],
            "diagnostics": [d.to_dict() for d in result.diagnostics],
            "summary": summary,
            "seconds": round(secs, 4),
        }
        if output:
            doc["written"] = output
        echo(json.dumps(doc, indent=1))
        return
    init = {t.name for t in g.initializer}
    echo(show(model))
    echo("inputs:")
    for vi in g.input:
        if vi.name in init:
            continue
        f = facts.get(vi.name)
        echo(f"  {vi.name:<24} {_dtype_name(f.dtype if f else 0):<8} {_fmt_shape(f)}")
    echo("outputs:")
    for vi in g.output:
        f = facts.get(vi.name)
        echo(f"  {vi.name:<24} {_dtype_name(f.dtype if f else 0):<8} {_fmt_shape(f)}")
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


def _io_json(name: str, f) -> dict:
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


@main.command("lint")
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
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes (0: one per core).")
@click.option("--config", type=click.Path(dir_okay=False), help="TOML file with [tool.shapeinfer] (default: nearest).")
@click.option("--isolated", is_flag=True, help="Ignore [tool.shapeinfer] in pyproject.toml.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.option("--list-rules", is_flag=True, help="List every rule and exit.")
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
    debug: bool,
) -> None:
    """Check models (files, or folders searched for *.onnx) against the rule catalog.

    Exit codes: 0 no error-level finding, 1 error-level findings, 2 could not run.
    Settings: --rules profile, then [tool.shapeinfer] in the nearest pyproject.toml, then flags.
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
            return command.run(
                paths, cfg, fmt=fmt, output_file=output_file, fix=fix, in_place=in_place, jobs=jobs, version=__version__
            )
        except command.LintError as e:
            raise CliError(str(e)) from None

    click.get_current_context().exit(_run_guarded(debug, run))


# ------------------------------------------------------------------------------------------------
# shapeinfer verify: inferred shapes against onnxruntime (logic in shapeinfer/verify.py)


@main.command("verify")
@click.argument("model", type=click.Path(dir_okay=True))
@click.option(
    "--bind",
    multiple=True,
    metavar="SYM=INT[,SYM=INT]",
    help="One binding of the input symbols; repeat to check several bindings in one run.",
)
@click.option("--strict", is_flag=True, help="Count dims inference left unresolved (fresh symbols) as mismatches.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated inputs.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.option(
    "--max-memory",
    metavar="SIZE",
    help="Refuse a binding whose estimated memory is above SIZE (8G, 512M; default 4G).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def verify_cmd(
    model: str, bind: tuple, strict: bool, seed: int, as_json: bool, max_memory: str | None, debug: bool
) -> None:
    """Run MODEL in onnxruntime and compare every tensor's actual shape with the inferred one.

    Each --bind gives every input symbol a value (shapeinfer verify m.onnx --bind batch=2,seq=7
    --bind batch=3,seq=11). Exit codes: 0 no mismatch, 1 mismatches, 2 could not run.
    """
    bindings = [parse_bind((b,)) for b in bind]
    limit = parse_bytes(max_memory, "--max-memory") if max_memory is not None else None

    def run():
        from shapeinfer.verify import DEFAULT_MAX_MEMORY, VerifyError, verify

        try:
            return verify(model, bindings, strict=strict, seed=seed, max_memory=limit or DEFAULT_MAX_MEMORY)
        except VerifyError as e:
            raise CliError(str(e)) from None

    report = _run_guarded(debug, run)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1))
    else:
        _verify_text(report)
    click.get_current_context().exit(0 if report.ok else 1)


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


@main.command("optimize")
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
@click.option("--target-opset", type=int, metavar="N", help="Lift the default-domain opset to N (onnx's converter).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
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
                model, passes=names, bind=binding or None, target_opset=target_opset
            )
        except OptimizeError as e:
            raise CliError(str(e)) from None
        if output:
            write_model(optimized, output, model, in_place)
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
        }
        echo(json.dumps(doc, indent=1))
        return
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


if __name__ == "__main__":  # pragma: no cover
    main()
