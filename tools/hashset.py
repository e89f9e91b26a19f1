"""Hash what ``shapeinfer MODEL -o`` and ``shapeinfer optimize MODEL -o`` write, to check that a
refactor changes no byte of any output.

Usage::

    python tools/hashset.py record OUT.json MODEL_OR_DIR...   # hash every output into OUT.json
    python tools/hashset.py check  OLD.json MODEL_OR_DIR...   # exit 1 when any hash differs

A folder stands for every ``*.onnx`` file under it. Each model is run through the installed
``shapeinfer`` command twice (``-o`` and ``optimize -o``); a run that writes nothing records its
exit code instead of a hash, so a change in which models are refused shows too. Two processes
run side by side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

RUNS = {"infer": [], "optimize": ["optimize"]}


def models(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.onnx")) if p.is_dir() else [p])
    return out


def digest(model: Path, run: str, tmp: Path) -> str:
    dst = tmp / f"{abs(hash((str(model), run)))}.onnx"
    r = subprocess.run(["shapeinfer", *RUNS[run], str(model), "-o", str(dst)], capture_output=True, timeout=1200)
    if not dst.exists():
        return f"exit {r.returncode}"
    h = hashlib.sha256(dst.read_bytes()).hexdigest()
    dst.unlink()
    return h


def hashes(paths: list[str]) -> dict[str, str]:
    todo = [(m, run) for m in models(paths) for run in RUNS]
    with tempfile.TemporaryDirectory() as td, ThreadPoolExecutor(2) as pool:
        got = pool.map(lambda mr: digest(mr[0], mr[1], Path(td)), todo)
        return {f"{run} {m}": h for (m, run), h in zip(todo, got)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("file")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    now = hashes(a.paths)
    if a.mode == "record":
        Path(a.file).write_text(json.dumps(now, indent=1, sort_keys=True))
        print(f"{len(now)} outputs hashed into {a.file}")
        return 0
    old = json.loads(Path(a.file).read_text())
    diff = sorted(k for k in now if old.get(k) != now[k])
    for k in diff:
        print(f"differs: {k}")
    print(f"{len(now) - len(diff)}/{len(now)} identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
