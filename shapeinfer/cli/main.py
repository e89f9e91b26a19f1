"""The ``shapeinfer`` command: the click group (:func:`main`) and the console-script entry
(:func:`entry`); a thin layer over the Python API.

``shapeinfer MODEL`` infers shapes (the default command); ``optimize``, ``lint``, ``verify`` and
``profile`` are subcommands. Bad input gives one line on stderr and exit code 2, never a
traceback (``--debug`` shows one); a usage error (an unknown flag, a bad flag value) is one line
too.

Layout: each command, with its text and JSON reports, is a module of
:mod:`shapeinfer.cli.commands` named for it (``infer.py``, ``lint.py``, ``verify.py``,
``profile.py``, ``optimize.py``); the work itself is in the library. What the commands share
(:class:`~shapeinfer.cli.common.CliError`, the flag parsers, ``deadline_paused``) is
:mod:`shapeinfer.cli.common`, which they import; this module imports the commands and registers
them on :func:`main`, and only the entry points import it.

Only click is imported at start-up: onnx, numpy and the engine are imported by the command
that needs them, so ``--help`` and ``--version`` stay fast.
"""

from __future__ import annotations

import contextlib
import os
import sys

import click

from shapeinfer import __version__
from shapeinfer.cli import common
from shapeinfer.cli.commands import diff, explain, infer, lint, make_dynamic, optimize, profile, verify
from shapeinfer.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, CliError, _silence_stdout, _stdout_gone


def _usage_line(e: click.UsageError) -> str:
    """A click usage error as one line: what is wrong, naming the flag and the value given."""
    msg = e.message
    if isinstance(e, click.BadParameter) and e.param is not None and not isinstance(e, click.MissingParameter):
        p = e.param
        name = " / ".join(p.opts) if isinstance(p, click.Option) else p.human_readable_name
        msg = f"invalid value for {name}: {msg}"
    elif isinstance(e, click.NoSuchOption):
        import difflib

        # click's guesses, without --help for a misspelt option that is no help (--selct)
        choices = [p for p in (e.possibilities or []) if p not in ("--help", "-h") or e.option_name.startswith("--h")]
        guess = difflib.get_close_matches(e.option_name, choices, n=1, cutoff=0.0)
        msg = f"no such option {e.option_name!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
    elif isinstance(e, click.MissingParameter):
        msg = e.format_message()
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
                from shapeinfer.base.suggest import closest

                guess = closest(first, self.commands)
                if guess is not None:
                    raise click.UsageError(f"unknown command {first!r} (did you mean {guess!r}?)", ctx)
                looks_like_word = first.isidentifier()
                if looks_like_word and any(os.path.lexists(a) for a in args[1:] if not a.startswith("-")):
                    cmds = ", ".join(sorted(self.commands))
                    raise click.UsageError(f"unknown command {first!r} (commands: {cmds})", ctx)
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        """The command; a reader of standard output that went away (``| head``) ends the run
        quietly with exit 0 (click itself would exit 1 without a word)."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            if not _stdout_gone():
                raise
            _silence_stdout()
            ctx.exit(0)

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
        except (click.Abort, KeyboardInterrupt):
            click.echo("shapeinfer: error: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            if not _stdout_gone():
                raise
            _silence_stdout()  # the reader of standard output went away (``| head``): say nothing
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="shapeinfer", message="%(prog)s %(version)s")
def main() -> None:
    """Static symbolic shape inference for ONNX models.

    \b
    shapeinfer MODEL [-o OUT.onnx]   infer every tensor's shape (the default command)
    shapeinfer optimize MODEL -o OUT fold shape arithmetic, rewrite legacy Reshape
    shapeinfer lint PATH...          check models against the rule catalog
    shapeinfer verify MODEL          compare inferred shapes with onnxruntime
    shapeinfer profile MODEL         valid input ranges, trtexec shapes, memory bounds
    shapeinfer diff OLD NEW          did the input/output shape contract change?
    shapeinfer explain MODEL TENSOR  why a tensor's dims are what they are
    shapeinfer make-dynamic MODEL -o OUT --dim INPUT:AXIS=SYM
                                     make a static export's input axes symbolic

    Dims are ints or expressions over the model's symbols (batch, seq, batch*seq,
    (seq + 1)//2). A dim that cannot be determined becomes a fresh symbol unk_<n>.
    A MODEL of - is read from standard input; -o - writes the model to standard output
    (the report then goes to standard error). NO_COLOR set in the environment turns colour off.

    \b
    Exit codes (every command):
      0    success (also when a reader such as | head closes the output early)
      1    findings: lint errors, verify mismatches, infer --fail-on, a changed diff,
           a make-dynamic it cannot prove;
           a run past its --timeout; a write refused (a data file of that name
           exists, the model's data file is missing, no size satisfies the guards)
      2    bad input or usage: a file that is no model, an unknown flag, command
           or tensor, an output path that cannot be written, -o - on a terminal
      130  interrupted (Ctrl-C)
    """
    _escape_unprintable_output()


def _escape_unprintable_output() -> None:
    """Names and paths that the terminal's encoding cannot show are escaped, never an error."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")


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
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    common._UNTIL_EXIT = []
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
    except BrokenPipeError:  # the reader went away (``| head``): not an error, as above
        pass
    except (OSError, ValueError):  # a full disk, a closed stream: the output is incomplete
        code = code or 1
    os._exit(code)


for _command in (
    infer.infer_cmd,
    lint.lint_cmd,
    verify.verify_cmd,
    profile.profile_cmd,
    optimize.optimize_cmd,
    diff.diff_cmd,
    explain.explain_cmd,
    make_dynamic.make_dynamic_cmd,
):
    main.add_command(_command)
