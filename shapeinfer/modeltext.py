"""Text read from a model that may not be valid UTF-8.

Protobuf's Python runtime returns a ``string`` field whose bytes are not valid UTF-8 (a tensor,
node or graph name, an op type, a ``dim_param``, a doc string) as ``bytes``, not ``str``. The
engine keys its tables by whatever the model holds, so such a name still connects the tensors
that share it and is written back byte for byte; everything that shows a name or builds text
from it goes through :func:`text`, which decodes with ``backslashreplace`` (``b"y\\xff"`` is
shown as ``y\\xff``), so it never meets ``bytes`` where it expects ``str``.
"""

from __future__ import annotations

from typing import Any


def text(v: Any) -> Any:
    """``v`` decoded when it is ``bytes`` (invalid UTF-8 escaped as ``\\xNN``); anything else as is."""
    if type(v) is bytes:
        return v.decode("utf-8", "backslashreplace")
    return v
