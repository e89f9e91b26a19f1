"""Optional dependencies: import one, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str, distribution: str, needed_by: str) -> ModuleType:
    """Import ``module``, or raise ModuleNotFoundError (``name`` = ``module``) whose one line says
    that ``needed_by`` needs the ``extra`` of shapeinfer (the ``distribution`` on PyPI)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module and not (e.name or "").startswith(module + "."):
            raise  # the package is there; something it imports is not
        raise ModuleNotFoundError(
            f"{needed_by} needs {distribution}, which is not installed: pip install {distribution}"
            f" (or pip install -e '.[{extra}]' in a checkout of shapeinfer)",
            name=module,
        ) from None
