""" "Did you mean" hints for names a user mistypes: subcommands, profiles, passes, symbols."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely misspells (None when nothing is close)."""
    import difflib  # only on an error path: not imported at start-up

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest choice, or ``""``."""
    c = closest(word, choices)
    return f" (did you mean {c!r}?)" if c is not None else ""
