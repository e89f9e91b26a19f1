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
``--input-shape`` parsers (over :mod:`shapeinfer.bindings`, which the API and the passes use
too), :func:`write_model`, :func:`check_output`, :func:`_run_guarded`.
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
        if not args and not ctx.resilient_parsing:  # bare ``shapeinfer``: the help, as click >= 8.2 does
            click.echo(ctx.get_help(), err=True)
            ctx.exit(EXIT_USAGE)
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
        except BrokenPipeError:
            if not _stdout_gone():
                raise
            _silence_stdout()  # the reader of standard output went away (``| head``): say nothing
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _stdout_gone() -> bool:
    """True when standard output is a pipe whose reader has closed it (a write would fail)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (AttributeError, ValueError, OSError):  # no real stdout (CliRunner), or no poll
        return False


def _silence_stdout() -> None:
    """Point standard output at the null device: what is still buffered, and the flush at
    exit, go nowhere instead of failing again."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)


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


def _flag_error(e, flag: str | None = None) -> CliError:
    """A :class:`shapeinfer.bindings.BindError` as the one-line usage error naming the flag."""
    return CliError(e.flag_message(flag))


def parse_bind(values: tuple[str, ...], flag: str = "--bind") -> dict[str, int]:
    """``("batch=2,seq=7", ...)`` as ``{"batch": 2, "seq": 7}``; CliError for anything else
    (:func:`shapeinfer.bindings.parse_bind`'s rules: ints of at least 1 within int64, a symbol
    given twice only with one value). ``flag`` names the option in the message."""
    from shapeinfer.bindings import BindError
    from shapeinfer.bindings import parse_bind as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e, flag) from None


def parse_dim_ranges(values: tuple[str, ...]) -> dict[str, tuple[int, int | None]]:
    """``("seq=1:512", "batch=1:8")`` as ``{"seq": (1, 512), ...}``; CliError for anything else
    (:func:`shapeinfer.bindings.parse_dim_ranges`)."""
    from shapeinfer.bindings import BindError
    from shapeinfer.bindings import parse_dim_ranges as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e) from None


DIM_RANGE_HELP = "Give an input symbol an integer range, e.g. seq=1:512 (HI may be empty: no max). Repeatable."


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, list]:
    """``("x=1,3,batch",)`` as ``{"x": [1, 3, Expr(batch)]}``; CliError for anything else
    (:func:`shapeinfer.bindings.parse_input_shapes`: non-negative ints or dims expressions
    within the expression cap, each input once). The model's own checks (input names, ranks,
    symbols) are :func:`check_against_model`'s."""
    from shapeinfer.bindings import BindError
    from shapeinfer.bindings import parse_input_shapes as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e) from None


def check_against_model(model, input_shapes=None, bind=None, dim_ranges=None, bind_flag: str = "--bind") -> None:
    """:func:`shapeinfer.bindings.check_model` for parsed flags: CliError naming the flag for an
    input shape of an input the model lacks or of another rank, or a symbol no graph input has."""
    from shapeinfer.bindings import BIND, BindError, check_model

    try:
        check_model(model, input_shapes or None, bind or None, dim_ranges or None)
    except BindError as e:
        raise _flag_error(e, bind_flag if e.kind == BIND else None) from None


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
    data_inputs: list[str] | tuple = (),
) -> None:
    """Write atomically next to ``out``; external data files are copied when the folder changes.
    ``graph_tail``: serialised main-graph fields written after the model's own; ``loaded``: the
    LoadedModel ``model`` came from, when none of its tensors changed; ``nodes_as_read``: nor
    its main graph's nodes; ``node_fields`` / ``value_info_fields``: its main graph's nodes /
    value_info already serialised; ``external``: its tensors stored as external data, when
    known; ``data_inputs``: the files the input model's external data names, never replaced
    (see save_model)."""
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
        data_inputs=data_inputs,
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
        if debug or (isinstance(e, BrokenPipeError) and _stdout_gone()):
            raise  # ``-o - | head``: the reader went away, not an error (DefaultGroup.main ends quietly)
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
