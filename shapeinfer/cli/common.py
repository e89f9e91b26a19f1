"""What the ``shapeinfer`` commands share: :class:`CliError` and exit codes, the
``--bind`` / ``--dim-range`` / ``--input-shape`` parsers (over
:mod:`shapeinfer.inference.bindings`, which the API and the passes use too),
:class:`Number`, :func:`deadline_paused` (around a Document's write), :func:`check_output`,
:func:`_run_guarded`, and the keep-alive list :data:`_UNTIL_EXIT` the console script sets. The command modules
(:mod:`shapeinfer.cli.commands`) import these names from here; :mod:`shapeinfer.cli.main`
imports the commands. Only click is imported at start-up."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import click

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a process ended by SIGINT
#: A run that went past its ``--timeout``: one line, like a failing ``--fail-on`` check.
EXIT_TIMEOUT = 1


class CliError(click.ClickException):
    """A user-facing failure: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"shapeinfer: error: {self.format_message()}", err=True)


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


def show(text: str) -> str:
    """:func:`shapeinfer.io.userfiles.show` (a path or name printable on any terminal), imported
    at the first call: ``shapeinfer --help`` loads neither the io package nor ``tempfile``."""
    from shapeinfer.io.userfiles import show as _show

    return _show(text)


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
    """A :class:`shapeinfer.inference.bindings.BindError` as the one-line usage error naming the flag."""
    return CliError(e.flag_message(flag))


def parse_bind(values: tuple[str, ...], flag: str = "--bind") -> dict[str, int]:
    """``("batch=2,seq=7", ...)`` as ``{"batch": 2, "seq": 7}``; CliError for anything else
    (:func:`shapeinfer.inference.bindings.parse_bind`'s rules: ints of at least 1 within int64, a symbol
    given twice only with one value). ``flag`` names the option in the message."""
    from shapeinfer.inference.bindings import BindError
    from shapeinfer.inference.bindings import parse_bind as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e, flag) from None


def parse_dim_ranges(values: tuple[str, ...]) -> dict[str, tuple[int, int | None]]:
    """``("seq=1:512", "batch=1:8")`` as ``{"seq": (1, 512), ...}``; CliError for anything else
    (:func:`shapeinfer.inference.bindings.parse_dim_ranges`)."""
    from shapeinfer.inference.bindings import BindError
    from shapeinfer.inference.bindings import parse_dim_ranges as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e) from None


DIM_RANGE_HELP = (
    "Give an input symbol an integer range, e.g. seq=1:512 (HI may be empty: no max), and a step after a"
    " second colon: the symbol takes LO, LO+STEP, LO+2*STEP, ... (height=32:1024:32: a multiple of 32,"
    " then FPN and YOLO pyramids resolve without guards). Repeatable."
)


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, list]:
    """``("x=1,3,batch",)`` as ``{"x": [1, 3, Expr(batch)]}``; CliError for anything else
    (:func:`shapeinfer.inference.bindings.parse_input_shapes`: non-negative ints or dims expressions
    within the expression cap, each input once). The model's own checks (input names, ranks,
    symbols) are the Document's (:meth:`shapeinfer.document.Document.check`)."""
    from shapeinfer.inference.bindings import BindError
    from shapeinfer.inference.bindings import parse_input_shapes as parse

    try:
        return parse(values)
    except BindError as e:
        raise _flag_error(e) from None


EXTERNAL_DATA_HELP = (
    "With -o: write the model's external data into one file of this NAME beside the output, the"
    " references rewritten (replacing a file of that name). Without it the data files keep their"
    " names, and a name that is taken in the output's folder is refused."
)


def refusal_line(e) -> str:
    """The line on stderr for a :class:`~shapeinfer.io.userfiles.WriteRefused`: what was not
    written and why, and the flag that writes it anyway."""
    from shapeinfer.io.writer import DATA_EXISTS, MISSING_DATA

    hint = {
        MISSING_DATA: "--force writes it anyway",
        DATA_EXISTS: "--external-data NAME writes the data to NAME instead (replacing a file NAME)",
    }.get(e.kind)
    return f"shapeinfer: {e}" + (f"; {hint}" if hint else "")


def check_output(out: str | None, src: str, in_place: bool) -> None:
    """:func:`shapeinfer.document.check_output` (an output path the write would refuse: a missing
    folder, a folder, the input without ``--in-place``, a symlink leaving its folder, ``-o -``
    when standard output is the input), and ``-o -`` when standard output is a terminal, and
    ``--in-place`` without a file to write, before any work is done, as a usage error."""
    from shapeinfer.document import check_output as check
    from shapeinfer.io.userfiles import UserFileError

    if in_place and out in (None, "-"):
        raise CliError("--in-place lets -o name the input model: give -o MODEL to write over it")
    if out == "-" and _stdout_is_terminal():
        raise CliError("-o - writes the binary model to standard output, which is a terminal: redirect it (> out.onnx)")
    try:
        check(out, src, in_place=in_place)
    except UserFileError as e:
        raise CliError(str(e)) from None


def write_notes(doc, external_data: str | None) -> list[str]:
    """What a write of ``doc`` (a Document) did besides writing the model (its ``write_notes``),
    and for ``--external-data NAME`` on a model that stores no tensor as external data, that
    nothing was gathered: no file of that name is made."""
    notes = list(doc.write_notes)
    if external_data is not None and not doc.has_external_data:
        notes.append(
            f"--external-data {external_data}: the model stores no tensor as external data; no data file was written"
        )
    return notes


def _stdout_is_terminal() -> bool:
    try:
        return click.get_binary_stream("stdout").isatty()
    except (AttributeError, ValueError, OSError):
        return False


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.t0


class Interrupted(CliError):
    """Ctrl-C: one line on stderr, exit 130."""

    exit_code = EXIT_INTERRUPTED


class RunTimeout(CliError):
    """A run past its ``--timeout``: one line on stderr, exit 1."""

    exit_code = EXIT_TIMEOUT


class _Deadline:
    """The ``--timeout`` of the command being run, over the whole run: loading, parsing the
    model's dims, inferring, annotating, formatting, the passes. Once it has passed, SIGALRM
    raises :class:`~shapeinfer.inference.engine.InferenceTimeout` in the main thread wherever
    the run is, so a step that never checks the clock (a dim_param that takes long to expand, a
    loop over thousands of declarations) cannot outlast it; the engine's and the passes' own
    checks stay (the Python API has no alarm). A write that has begun is let finish
    (:func:`deadline_paused`)."""

    seconds: float = 0.0  # the command's --timeout, for the message (the deadline is the click
    # context's meta["shapeinfer.deadline"], so it ends with the command)
    writing: bool = False


#: The commands whose ``--timeout`` bounds the whole run (``lint``'s bounds each model: a
#: model past it is an E001 finding, and the others are still checked).
_WHOLE_RUN_TIMEOUT = frozenset({"infer", "optimize"})


def _timeout_now() -> None:
    from shapeinfer.inference.engine import InferenceTimeout

    raise InferenceTimeout(f"gave up after {_Deadline.seconds:g}s")


def _on_alarm(signum, frame) -> None:
    if not _Deadline.writing:
        _timeout_now()


@contextlib.contextmanager
def _deadline_armed():
    """Arm SIGALRM for what is left of the command's ``--timeout`` (read from its ``timeout``
    parameter; the clock starts at the command's first guarded step) around one guarded step."""
    import signal
    import threading

    ctx = click.get_current_context(silent=True)
    whole = ctx is not None and ctx.command.name in _WHOLE_RUN_TIMEOUT
    seconds = ctx.params.get("timeout") if whole else None
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    if ctx.meta.get("shapeinfer.deadline") is None:
        ctx.meta["shapeinfer.deadline"] = time.monotonic() + seconds
    left = ctx.meta["shapeinfer.deadline"] - time.monotonic()
    _Deadline.seconds = float(seconds)
    if left <= 0:
        _timeout_now()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, left)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def deadline_paused():
    """No timeout while a write runs (around :meth:`shapeinfer.document.Document.write`): a run
    past its ``--timeout`` writes nothing; one still within it is not cut short once the write
    has begun (a half-copied set of data files is worse than a late exit)."""
    ctx = click.get_current_context(silent=True)
    at = ctx.meta.get("shapeinfer.deadline") if ctx is not None else None
    if at is not None and time.monotonic() >= at:
        _Deadline.seconds = float(ctx.params.get("timeout") or 0)
        _timeout_now()
    _Deadline.writing = True
    try:
        yield
    finally:
        _Deadline.writing = False


def _run_guarded(debug: bool, fn, path: str | None = None):
    """Run ``fn``; anything it raises becomes one CliError line (exit 2) naming ``path``, a run
    past the command's ``--timeout`` one line and exit 1 (:class:`_Deadline`)."""
    from shapeinfer.inference.engine import InferenceTimeout
    from shapeinfer.io.external import ExternalDataError
    from shapeinfer.io.onnxio import ModelLoadError
    from shapeinfer.io.userfiles import UserFileError

    try:
        with _deadline_armed():
            return fn()
    except click.ClickException:
        raise
    except (ModelLoadError, ExternalDataError, UserFileError) as e:
        if debug:
            raise
        raise CliError(str(e)) from None
    except InferenceTimeout as e:
        # the alarm, the engine's clock or the passes': one message, whichever saw it first
        ctx = click.get_current_context(silent=True)
        seconds = ctx.params.get("timeout") if ctx is not None else None
        msg = f"gave up after {seconds:g}s (--timeout)" if seconds else str(e)
        path = path or (ctx.params.get("model") if ctx is not None else None)
        raise RunTimeout(f"{path}: {msg}" if path else msg) from None
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    except Exception as e:  # never a traceback for users
        if debug or (isinstance(e, BrokenPipeError) and _stdout_gone()):
            raise  # ``-o - | head``: the reader went away, not an error (DefaultGroup.main ends quietly)
        where = f"{path}: " if path else ""
        raise CliError(f"{where}internal error: {type(e).__name__}: {e} (rerun with --debug for a traceback)") from None


def _echo_for(output: str | None):
    """click.echo, to stderr when the model itself goes to stdout (``-o -``)."""
    if output == "-":
        return lambda *a, **k: click.echo(*a, **{**k, "err": True})
    return click.echo


#: done with are put here instead of being freed one by one (see ``optimize_with_report``).
_UNTIL_EXIT: list | None = None
