"""What the text of a name means for symbols: a ``dim_param`` that names no dim (a placeholder),
and the identifier a tensor's name gives the symbols derived from it. ONNX-free: the text is
what a model holds (``bytes`` that are not valid UTF-8 are decoded with escapes)."""

from __future__ import annotations

import re

from shapeinfer.base.text import text as decoded

_IDENT = re.compile(r"\W")

#: ``dim_param`` texts that name no dim (compared stripped and in lower case): how exporters
#: spell "some size" without giving it a name (older paddle2onnx writes ``?``, others ``None``
#: or ``-1`` as text). Text that reads as a negative integer (``-1``) is one too. Each such dim
#: is its own unknown, like a dim with neither value nor param: two placeholders are never the
#: same symbol. Names that are unique per dim (tf2onnx's ``unk__12``) are ordinary names.
PLACEHOLDER_DIM_PARAMS = frozenset({"", "?", "none", "null", "nil", "unk", "unknown", "dynamic"})

_NEGATIVE_INT = re.compile(r"-\s*\d+")


def is_placeholder(text: str | bytes) -> bool:
    """Whether ``dim_param`` text ``text`` is a placeholder (:data:`PLACEHOLDER_DIM_PARAMS`,
    or a negative integer): a dim without a name, not a symbol."""
    t = decoded(text).strip().lower()
    return t in PLACEHOLDER_DIM_PARAMS or _NEGATIVE_INT.fullmatch(t) is not None


def ident(name: str) -> str:
    """``name`` made into an identifier, for symbols derived from tensor names."""
    s = _IDENT.sub("_", decoded(name))
    return s if s and not s[0].isdigit() else f"t_{s}"
