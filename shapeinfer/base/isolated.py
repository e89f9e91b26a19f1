"""Run a function in a forked child process, under a memory and a time limit.

For a call into native code that may take the whole process down with it: onnx's inference
aborts on an assertion (a negative dim reaching Slice's ``std::clamp``) and allocates without
bound on some models (a Split of 2**31 outputs took 16 GB). Where the platform cannot fork
(:data:`ENABLED` False) the caller runs it in process.
"""

from __future__ import annotations

import faulthandler
import os
import select
import signal
import time
from collections.abc import Callable

#: whether :func:`run` can isolate (a test spying on the function in process turns this off)
ENABLED = hasattr(os, "fork")
#: address space a child may use beyond its parent's, and the seconds it may take
MEMORY = 2 << 30
SECONDS = 60.0


def run(fn: Callable[[], tuple[bool, str | None]], what: str, data_size: int = 0) -> tuple[bool, str | None]:
    """``fn()`` in a forked child for :data:`SECONDS`, with :data:`MEMORY` bytes of address space
    beyond its parent's and four times ``data_size`` (the bytes the call copies, a serialised
    model, besides): ``fn``'s ``(finished, text)``, or ``(False, why)`` when the child crashed or
    ran out of time (``what`` names the call in that text). The child's standard error goes
    nowhere (what native code prints as it aborts is not the user's to read). In process where
    :data:`ENABLED` is False."""
    if not ENABLED:
        return fn()

    def encoded() -> bytes:
        finished, text = fn()
        return (b"F" if finished else b"U") + (b"" if text is None else b"E" + text.encode())

    data, why = _in_child(encoded, what, data_size)
    if data is None:
        return False, why
    text = data[2:].decode(errors="replace") if data[1:2] == b"E" else None
    return data[:1] == b"F", text


class Crashed(Exception):
    """What :func:`call` raises when the child crashed or ran out of time; ``str`` says which."""


def call(fn: Callable[[], bytes], what: str, data_size: int = 0) -> bytes:
    """The bytes ``fn()`` returns, computed in a forked child under the limits :func:`run`
    sets; :class:`Crashed` when the child crashed or ran out of time (``what`` names the call in
    the message) or ``fn`` raised (``fn`` should return what it has to say instead). In process
    where :data:`ENABLED` is False."""
    if not ENABLED:
        return fn()
    data, why = _in_child(lambda: b"R" + fn(), what, data_size)
    if data is None:
        raise Crashed(why)
    return data[1:]


def _in_child(fn: Callable[[], bytes], what: str, data_size: int) -> tuple[bytes | None, str | None]:
    """``(fn(), None)`` run in a forked child, else ``(None, why)``: the child crashed, ran out
    of time or wrote nothing (``fn`` raised, or returned no bytes)."""
    memory = MEMORY + 4 * data_size
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(r)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            faulthandler.disable()  # (nor a Python traceback of the abort, where a caller enabled it)
            _limit_memory(memory)
            out = memoryview(fn())
            while out:
                out = out[os.write(w, out) :]
        finally:
            os._exit(0)
    os.close(w)
    chunks: list[bytes] = []
    deadline = time.monotonic() + SECONDS
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, f"{what} did not finish in {SECONDS:g} s"
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    if not data or os.WIFSIGNALED(status):  # (killed while writing: what came is not all)
        why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        return None, f"{what} crashed ({why})"
    return data, None


def _limit_memory(memory: int) -> None:
    """Cap this process's address space at its size now plus ``memory`` bytes (Linux)."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (OSError, ValueError, ImportError):
        pass  # no /proc, or a hard limit below: the parent's limits hold


__all__ = ["ENABLED", "MEMORY", "SECONDS", "Crashed", "call", "run"]
