"""The driver the fixture generators share (make_idiom_models.py, make_vision_models.py): one
builder per model, run by section, a failure reported and the next model made.

    python tools/generators/make_X.py OUT [--only SECTION,...] [--names NAME,...] [-v]
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

#: the model names ``--names`` asked for (empty: every model)
NAMES: set[str] = set()


def run(name: str, fn: Callable, *args) -> bool:
    """Call one model's builder (``name`` is ``section/model``; skipped unless ``--names`` has
    the model); report a failure and go on with the next one."""
    if NAMES and name.split("/")[-1] not in NAMES:
        return False
    try:
        fn(*args)
        print(f"  made {name}", flush=True)
        return True
    except Exception as e:
        print(f"  FAILED {name}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}", flush=True)
        if "-v" in sys.argv:
            traceback.print_exc()
        return False


def main(doc: str, sections: dict[str, Callable[[Path], None]]) -> None:
    """Parse the command line and run each section asked for on the output folder (absolute)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("out", type=Path, help="output directory")
    ap.add_argument("--only", default=",".join(sections), help="comma-separated sections: " + ",".join(sections))
    ap.add_argument("--names", default="", help="comma-separated model names to make (default: all)")
    ap.add_argument("-v", action="store_true", help="print tracebacks of failed models")
    a = ap.parse_args()
    NAMES.update(n for n in a.names.split(",") if n)
    out = a.out.resolve()
    for s in a.only.split(","):
        if s not in sections:
            ap.error(f"unknown section {s!r}")
        print(f"{s}:", flush=True)
        sections[s](out)
