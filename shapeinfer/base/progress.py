"""A progress line on stderr for commands that take a while: optimize passes, lint over many
files, verify bindings.

Contract: nothing is written unless stderr is a terminal, and nothing before the work has run
for :data:`DELAY` seconds (a quick command prints nothing). After that one line is redrawn in
place (``\\r``, at most every :data:`INTERVAL` seconds) and erased when the work ends, so the
command's own output is unchanged. ``SHAPEINFER_PROGRESS=0`` turns it off, ``=1`` forces it
(tests). Use::

    with Progress("verify", total=len(bindings)) as p:
        for b in bindings:
            p.step(str(b))  # the previous one counts as done
            ...

or ``p.advance()`` from a callback run when each piece ends.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

#: Seconds of work before the line appears.
DELAY = 1.0

#: Seconds between redraws.
INTERVAL = 0.1


def enabled(stream: TextIO | None = None) -> bool:
    """True when a progress line may be drawn on ``stream`` (default stderr)."""
    forced = os.environ.get("SHAPEINFER_PROGRESS")
    if forced is not None:
        return forced not in ("", "0")
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One self-erasing status line: ``label [done/total] what``."""

    def __init__(self, label: str, total: int | None = None, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.stream = sys.stderr if stream is None else stream
        self.on = enabled(self.stream)
        self.done = 0
        self.what = ""
        self.start = time.monotonic()
        self._last = 0.0
        self._width = 0
        self._started = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def step(self, what: str = "") -> None:
        """Start the next piece of work, described by ``what`` (the previous one counts as done)."""
        if self._started:
            self.done += 1
        self._started = True
        self.what = what
        self._draw()

    def advance(self, what: str = "") -> None:
        """Count one more piece of work done (for callbacks run when a piece ends)."""
        self.done += 1
        self.what = what
        self._draw()

    def update(self, what: str) -> None:
        """Describe the current piece of work anew (nothing counted)."""
        self.what = what
        self._draw()

    def _draw(self) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if now - self.start < DELAY or now - self._last < INTERVAL:
            return
        self._last = now
        count = f" [{self.done}/{self.total}]" if self.total else ""
        text = f"{self.label}{count} {self.what} ({now - self.start:.0f}s)"
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            cols = 100
        text = text[: max(10, cols - 1)]
        pad = " " * max(0, self._width - len(text))
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the line (if one was drawn)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
