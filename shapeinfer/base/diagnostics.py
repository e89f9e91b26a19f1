"""Diagnostics: what inference found wrong, assumed, or could not do."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from shapeinfer.base.text import text

#: The severities a diagnostic or a lint finding has, most severe first.
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding, tied to a node when there is one.

    ``code`` is a lint rule code (``R001``...) or an engine code (``E...``); ``graph`` names the
    (sub)graph, ``index`` is the node's position in it.
    """

    severity: str
    code: str
    message: str
    node: str | None = None
    op_type: str | None = None
    index: int | None = None
    graph: str | None = None
    tensor: str | None = None

    def __post_init__(self) -> None:
        # names a model holds that are not valid UTF-8 arrive as bytes: shown escaped
        for k in ("node", "op_type", "graph", "tensor"):
            v = getattr(self, k)
            if type(v) is bytes:
                object.__setattr__(self, k, text(v))

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def __str__(self) -> str:
        where = ""
        if self.op_type is not None:
            at = f"{self.op_type} #{self.index}" if self.index is not None else self.op_type
            # an unnamed node is its op and position (not "?")
            where = f"{self.node} ({at}): " if self.node else f"unnamed {at}: "
        return f"{self.severity} {self.code} {where}{self.message}"


class InferenceError(Exception):
    """Raised by a rule when a node is invalid: becomes an error diagnostic, outputs unknown."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
