"""The exception of the optimize passes, below the pass manager so that passes raise it
without importing the manager."""

from __future__ import annotations


class OptimizeError(ValueError):
    """Bad arguments or a model the passes cannot handle; the message is one line for users."""
