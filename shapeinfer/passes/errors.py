"""The exception of the optimize passes, below the pass manager so that passes raise it
without importing the manager."""

from __future__ import annotations


class OptimizeError(ValueError):
    """Bad arguments or a model the passes cannot handle; the message is one line for users.

    ``str(e)`` names arguments as the Python API spells them (``target_opset=30``);
    :meth:`flag_message` as the command line does (``--target-opset 30``), where they differ."""

    def __init__(self, message: str, flag_message: str | None = None) -> None:
        super().__init__(message)
        self._flag_message = flag_message

    def flag_message(self) -> str:
        """The message with the command-line spelling of the arguments it names."""
        return self._flag_message or str(self)
