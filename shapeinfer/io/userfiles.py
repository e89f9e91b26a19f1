"""The files a user names on the command line: opening inputs, writing outputs.

Inputs (models, ``--config`` and ``--rules`` files) are read through :func:`read_input`: the
path must be a regular file (``stat``, then opened with ``O_NONBLOCK`` so a FIFO never blocks,
then ``fstat`` on the descriptor), no larger than the caller's cap (a protobuf model cannot
exceed 2 GiB), and ``-`` means standard input. Anything else is one :class:`UserFileError`
line.

Outputs (models, lint reports, ``--fix`` copies) follow one rule, :func:`write_output`: the
target's folder must exist; the target must not be a folder, must not be an input of the same
run (unless the caller allows it: ``--in-place``; never a file an input model's external data
names), and must not be a symlink leaving its
folder; the bytes go to a temporary file in the target's folder that is renamed over the
target, so a reader never sees a half-written file, and they reach the disk before the rename
does (:func:`sync_file`, then :func:`sync_folder`), so a crash of the machine leaves the old
file or the new one, never an empty one in its place. ``-`` means standard output.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable

#: A serialized protobuf message (an ONNX model) cannot exceed 2 GiB.
MAX_MODEL_BYTES = 2**31 - 1

#: Configuration files (TOML) larger than this are refused.
MAX_TEXT_BYTES = 16 << 20

STDIO = "-"


def show(text: str) -> str:
    """``text`` (a path or a name) printable on any terminal: undecodable bytes and control
    characters escaped (``\\xff``), never a UnicodeEncodeError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    s = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO (named pipe)``)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def new_file_mode(path: str) -> int:
    """The permission bits a file written at ``path`` gets: the old file's, or the umask's default."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class UserFileError(Exception):
    """A path named by the user that cannot be used; the message is one line naming it."""


class WriteRefused(UserFileError):
    """A model the write contract does not let this run write (nothing was written): its
    external data would replace a file this run did not create, or it points at external data
    that is missing. ``out`` is the output named, ``reason`` the one line why (naming the file)
    and ``kind`` which rule refused it (:mod:`shapeinfer.io.writer`'s ``MISSING_DATA``,
    ``DATA_EXISTS``: a command says how to write it anyway). ``str()`` is
    ``"OUT not written: REASON"``."""

    def __init__(self, out: str, reason: str, kind: str = "") -> None:
        self.out = out
        self.reason = reason
        self.kind = kind
        super().__init__(f"{'the model is' if out == STDIO else show(out)} not written: {reason}")


def _size_text(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def check_input(path: str, *, what: str = "model", max_bytes: int = MAX_MODEL_BYTES) -> os.stat_result:
    """``stat`` of the regular file ``path`` (symlinks followed); UserFileError otherwise.

    Nothing is opened: safe for FIFOs and devices.
    """
    name = show(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserFileError(f"{name}: no such file") from None
    except OSError as e:
        raise UserFileError(f"{name}: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserFileError(f"{name}: is a folder, not a {what} file")
    if not stat.S_ISREG(st.st_mode):
        raise UserFileError(f"{name}: is {file_kind(st.st_mode)}, not a {what} file")
    if st.st_size > max_bytes:
        extra = " (protobuf's limit; bigger weights belong in external data)" if what == "model" else ""
        raise UserFileError(
            f"{name}: {_size_text(st.st_size)}, above the {_size_text(max_bytes)} a {what} can be{extra}"
        )
    return st


def read_input(path: str, *, what: str = "model", max_bytes: int = MAX_MODEL_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (``-``: standard input), at most ``max_bytes``;
    UserFileError for a file standard output writes into (what the run prints would land in
    it: ``shapeinfer m.onnx >> m.onnx``)."""
    if path == STDIO:
        return _read_stdin(what, max_bytes)
    check_input(path, what=what, max_bytes=max_bytes)
    name = show(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise UserFileError(f"{name}: cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped after the stat above
            raise UserFileError(f"{name}: is {file_kind(st.st_mode)}, not a {what} file")
        out = stdout_file()
        if out is not None and _same_file(out, st):  # (shapeinfer m.onnx >> m.onnx)
            raise UserFileError(f"{name}: standard output is this file: what the run prints would be written into it")
        if st.st_size > max_bytes:
            raise UserFileError(f"{name}: larger than a {what} file can be ({_size_text(max_bytes)})")
        chunks = []
        left = st.st_size
        while left > 0:
            b = os.read(fd, min(left, 1 << 26))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)
    except OSError as e:
        raise UserFileError(f"{name}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _read_stdin(what: str, max_bytes: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UserFileError(f"-: no standard input to read the {what} from")
    if sys.stdin.isatty():
        raise UserFileError(f"-: standard input is a terminal; pipe the {what} in (cat m.onnx | shapeinfer -)")
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UserFileError(f"-: standard input is larger than a {what} file can be ({_size_text(max_bytes)})")
    return data


def file_folder(path: str) -> str:
    """The absolute folder the file ``path`` is in, as the OS resolves it: the symlinks of the
    folder part followed (``b/link/..`` is the parent of the link's target, not ``b``), the
    last component not looked at (a symlinked file is in the folder of the path given)."""
    return os.path.realpath(os.path.dirname(path) or os.curdir)


def stdout_file() -> os.stat_result | None:
    """The stat of the regular file standard output writes into; None when it is none (a
    terminal, a pipe, an in-memory stream)."""
    try:
        out = os.fstat(sys.stdout.buffer.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor (an in-memory stream): no file
        return None
    return out if stat.S_ISREG(out.st_mode) else None


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def output_target(
    out: str,
    *,
    inputs: Iterable[str] = (),
    allow_inputs: bool = False,
    what: str = "output",
    data_inputs: Iterable[str] = (),
) -> str:
    """The path :func:`write_output` replaces for ``out``; UserFileError when the rule forbids it.

    ``inputs`` are the files this run reads (models, configuration); ``allow_inputs`` lets the
    output replace one of them (``--in-place``). ``data_inputs`` are the files the input
    models' external data names (:func:`shapeinfer.io.external.data_files`): inputs too, which
    nothing lets the output replace (the model's weights would be lost). Hard links and
    symlinks to an input count as the input. The path returned is in ``out``'s folder as the
    OS resolves it (:func:`file_folder`): ``PATH/`` (or ``PATH/.``) is in the folder ``PATH``,
    refused as a folder, as missing or as a file that is no folder, never the file ``PATH``.
    """
    name = show(out)
    if not out:
        raise UserFileError("an empty output path")
    folder = file_folder(out)
    if not os.path.isdir(folder):
        why = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise UserFileError(f"{name}: cannot write the {what}: folder {show(folder)} {why}")
    target = os.path.join(folder, os.path.basename(out))
    if os.path.islink(target):
        real = os.path.realpath(target)
        if os.path.dirname(real) != folder:
            raise UserFileError(f"{name}: cannot write the {what}: a symlink to {show(real)}, outside its folder")
        target = real
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as e:
        raise UserFileError(f"{name}: cannot write the {what}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserFileError(f"{name}: cannot write the {what}: it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise UserFileError(f"{name}: cannot write the {what}: it is {file_kind(st.st_mode)}")
    if not allow_inputs:
        for i in inputs:
            if i == STDIO:
                continue
            try:
                if _same_file(st, os.stat(i)):
                    hint = "; pass --in-place (in Python: in_place=True) to overwrite it" if what == "model" else ""
                    raise UserFileError(f"{name}: the {what} would overwrite an input of this run{hint}")
            except OSError:
                continue
    for i in data_inputs:
        try:
            same = _same_file(st, os.stat(i))
        except OSError:
            continue
        if same:
            whose = "the external data of an input model"
            raise UserFileError(f"{name}: the {what} would overwrite an input of this run: {show(i)}, {whose}")
    return target


def check_stdout(inputs: Iterable[str] = (), *, what: str = "output", data_inputs: Iterable[str] = ()) -> None:
    """UserFileError when standard output is a file this run reads (``-o - >> MODEL``): one of
    ``inputs`` (``-``: standard input) or ``data_inputs`` (as in :func:`output_target`). What
    is written to standard output lands in that file, whatever opened it."""
    out = stdout_file()
    if out is None:
        return
    for i, whose in [*((i, "") for i in inputs), *((i, ", the external data of an input model") for i in data_inputs)]:
        try:
            same = _same_file(out, os.fstat(sys.stdin.fileno()) if i == STDIO else os.stat(i))
        except (AttributeError, OSError, ValueError):
            continue
        if same:
            name = "the file on standard input" if i == STDIO else show(i)
            raise UserFileError(
                f"-: the {what} would be written into an input of this run: standard output is {name}{whose}"
            )


def write_output(
    out: str,
    data: bytes | Callable[[int], None],
    *,
    inputs: Iterable[str] = (),
    allow_inputs: bool = False,
    what: str = "output",
    data_inputs: Iterable[str] = (),
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write ``data`` (bytes, or a function writing to a descriptor) to ``out`` atomically.

    ``-`` writes to standard output, refused when that is an input (:func:`check_stdout`). See
    :func:`output_target` for what else is refused.
    ``before_replace`` runs once the bytes are complete in the temporary file, just before it
    replaces the target: what it raises leaves the target as it was and the temporary file
    removed (the writer puts the model's data files in place there).
    """
    if out == STDIO:
        check_stdout(inputs, what=what, data_inputs=data_inputs)
        stream = sys.stdout.buffer
        if callable(data):
            stream.flush()
            try:
                fd = stream.fileno()
            except (AttributeError, OSError, ValueError):  # an in-memory stream (a test harness)
                fd = None
            if fd is not None:
                data(fd)
            else:  # through an anonymous in-memory file
                mfd = os.memfd_create("shapeinfer-out") if hasattr(os, "memfd_create") else None
                with os.fdopen(mfd, "w+b") if mfd is not None else tempfile.TemporaryFile() as f:
                    data(f.fileno())
                    f.seek(0)
                    stream.write(f.read())
        else:
            stream.write(data)
        stream.flush()
        return
    target = output_target(out, inputs=inputs, allow_inputs=allow_inputs, what=what, data_inputs=data_inputs)
    folder = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".shapeinfer-", suffix=".tmp", dir=folder)
    except OSError as e:
        raise UserFileError(f"{show(out)}: cannot write the {what}: {e.strerror or e}") from None
    try:
        try:
            if callable(data):
                data(fd)
            else:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            os.fchmod(fd, new_file_mode(target))
            sync_file(fd)
        finally:
            os.close(fd)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
        sync_folder(folder)
    except OSError as e:
        _unlink(tmp)
        raise UserFileError(f"{show(out)}: cannot write the {what}: {e.strerror or e}") from None
    except BaseException:
        _unlink(tmp)
        raise


def sync_file(fd: int) -> None:
    """Have the file system put the bytes written to ``fd`` on the disk (``fsync``) before a
    rename publishes them; a file system that cannot (EINVAL, ENOTSUP) is let be."""
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in _CANNOT_SYNC:
            raise


def sync_folder(folder: str) -> None:
    """Have the file system put ``folder``'s entries (a rename into it) on the disk; best
    effort: a folder that cannot be opened or synced is let be (the rename is done either way)."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_CANNOT_SYNC = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
