"""The ``shapeinfer`` command: the click group, the console-script entry and the plumbing the
commands share; a thin layer over the Python API.

``shapeinfer MODEL`` infers shapes (the default command); ``optimize``, ``lint``, ``verify`` and
``profile`` are subcommands. Bad input gives one line on stderr and exit code 2, never a
traceback (``--debug`` shows one); a usage error (an unknown flag, a bad flag value) is one line
too.

Layout: each command, with its text and JSON reports, is a module of :mod:`shapeinfer.commands`
named for it (``infer.py``, ``lint.py``, ``verify.py``, ``profile.py``, ``optimize.py``); the
work itself is in the library (engine, checks, verify, profile, passes). This module holds what
they share: :class:`CliError` and the one-line usage errors, the ``--bind`` / ``--dim-range`` /
``--input-shape`` parsers, :func:`write_model`, :func:`check_output`, :func:`_run_guarded`.
The command modules import those names from here, and this module imports the command modules
at its end, once everything they import is defined, and registers them on :func:`main` with
``main.add_command``. (``shapeinfer.commands`` imports this module first, so importing a command
module on its own works too.)

Only click is imported at start-up: onnx, numpy and the engine are imported by the command
that needs them, so ``--help`` and ``--version`` stay fast.
"""

from __future__ import annotations

import contextlib
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


def _echo_for(output: str | None):
    """click.echo, to stderr when the model itself goes to stdout (``-o -``)."""
    if output == "-":
        return lambda *a, **k: click.echo(*a, **{**k, "err": True})
    return click.echo


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


# ------------------------------------------------------------------------------------------------
# The commands (shapeinfer/commands/) import the plumbing above from this module, so they are
# imported here, at the end, and registered on the group.

from shapeinfer.commands import infer, lint, optimize, profile, verify  # noqa: E402

for _command in (infer.infer_cmd, lint.lint_cmd, verify.verify_cmd, profile.profile_cmd, optimize.optimize_cmd):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    # ``python -m shapeinfer.cli`` runs this file as a second module, __main__; the commands
    # import ``shapeinfer.cli``, so run that module's entry (one group, one _UNTIL_EXIT).
    from shapeinfer.cli import entry as _entry

    _entry()
