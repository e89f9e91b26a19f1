"""Names a model holds, as text: protobuf gives a ``string`` field whose bytes are not valid
UTF-8 as ``bytes`` (see :mod:`shapeinfer.io.modeltext`)."""

from __future__ import annotations

from typing import Any


def text(v: Any) -> Any:
    """``v`` decoded when it is ``bytes`` (invalid UTF-8 escaped as ``\\xNN``); anything else as is."""
    if type(v) is bytes:
        return v.decode("utf-8", "backslashreplace")
    return v


__all__ = ["text"]
