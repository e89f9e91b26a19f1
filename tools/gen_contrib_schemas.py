"""Generate shapeinfer/inference/ops/contrib/schemas.json from onnxruntime's docs/ContribOperators.md.

onnxruntime documents its contrib operators (``com.microsoft``) in ``docs/ContribOperators.md``,
a file it generates from its registered schemas. This script turns that document into the
data file shapeinfer reads (:mod:`shapeinfer.inference.ops.contrib.schemas`), so no schema is written
by hand and inference never needs onnxruntime installed. ``tests/inference/ops/test_contrib_schemas.py``
checks the table against the schemas an installed onnxruntime registers.

Usage::

    python tools/gen_contrib_schemas.py ContribOperators.md --source "onnxruntime 1.24.0 (commit ...)"
    # or straight from a git directory of the onnxruntime repository:
    python tools/gen_contrib_schemas.py --git-dir /path/to/onnxruntime/.git [--rev HEAD]

Per (domain, op, since_version) the table holds: inputs and outputs (name, type string,
optional, variadic, heterogeneous) with their min/max counts (null: unbounded), attributes
(name, AttributeProto type name, required) and type constraints (type parameter -> allowed type
strings). Descriptions are left out, and so are attribute defaults: the document states them
only in prose ("Default value is 1/sqrt(head_size)"), and most registered schemas declare none.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "shapeinfer" / "inference" / "ops" / "contrib" / "schemas.json"

ATTR_TYPES = {
    "float": "FLOAT",
    "int": "INT",
    "string": "STRING",
    "tensor": "TENSOR",
    "graph": "GRAPH",
    "sparse tensor": "SPARSE_TENSOR",
    "type proto": "TYPE_PROTO",
    "list of floats": "FLOATS",
    "list of ints": "INTS",
    "list of strings": "STRINGS",
    "list of tensors": "TENSORS",
    "list of graphs": "GRAPHS",
    "list of sparse tensors": "SPARSE_TENSORS",
    "list of type protos": "TYPE_PROTOS",
}

_HEADING = re.compile(r"^### .*?\*\*([A-Za-z0-9_.]+)\.([A-Za-z0-9_]+?)(?:-(\d+))?\*\*")
_SINCE = re.compile(r"available since version (\d+) of the '([^']*)' operator set")
_SECTION = re.compile(r"^#### (Attributes|Inputs|Outputs|Type Constraints)(?: \((\d+) - ([^)]+)\))?\s*$")
_ENTRY = re.compile(r"^<dt><tt>([^<]+)</tt>(?: \(([^)]*)\))?(?: : (.*?))?</dt>\s*$")


def parse(markdown: str) -> list[dict]:
    """Every operator section of the document as a table entry (see the module docstring)."""
    ops: list[dict] = []
    op: dict | None = None
    section = None
    for line in markdown.splitlines():
        m = _HEADING.match(line)
        if m:
            op = {
                "domain": m.group(1),
                "op": m.group(2),
                "since_version": int(m.group(3) or 1),
                "experimental": "<sub>experimental</sub>" in line,
                "inputs": [],
                "outputs": [],
                "attributes": {},
                "type_constraints": {},
            }
            ops.append(op)
            section = None
            continue
        if op is None:
            continue
        m = _SINCE.search(line)
        if m:
            op["since_version"] = int(m.group(1))
            if m.group(2) != op["domain"]:
                raise ValueError(f"{op['op']}: heading domain {op['domain']} but version domain {m.group(2)}")
            continue
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            if section in ("Inputs", "Outputs") and m.group(2):
                key = section.lower()[:-1]
                hi = html.unescape(m.group(3))
                op[f"min_{key}"] = int(m.group(2))
                op[f"max_{key}"] = None if hi == "\u221e" else int(hi)
            continue
        if line.startswith("### ") or line.startswith("## "):
            section = None
            continue
        m = _ENTRY.match(line)
        if not m or section is None:
            continue
        name, flags, kind = html.unescape(m.group(1)), m.group(2) or "", html.unescape(m.group(3) or "")
        if section == "Attributes":
            required = kind.endswith(" (required)")
            base = kind[: -len(" (required)")] if required else kind
            if base not in ATTR_TYPES:
                raise ValueError(f"{op['op']}: unknown attribute type {kind!r} for {name}")
            op["attributes"][name] = {"type": ATTR_TYPES[base], "required": required}
        elif section in ("Inputs", "Outputs"):
            flag_set = {f.strip() for f in flags.split(",") if f.strip()}
            op[section.lower()].append(
                {
                    "name": name,
                    "type": kind,
                    "optional": "optional" in flag_set,
                    "variadic": "variadic" in flag_set,
                    "heterogeneous": "heterogeneous" in flag_set,
                }
            )
        else:
            op["type_constraints"][name] = [t.strip() for t in re.split(r",\s*(?=[a-z_]+\()", kind)]
    for op in ops:
        for key in ("input", "output"):
            params = op[f"{key}s"]
            if f"min_{key}" not in op:  # no range given: every formal parameter is required, once
                op[f"min_{key}"] = op[f"max_{key}"] = len(params)
    return sorted(ops, key=lambda o: (o["domain"], o["op"], o["since_version"]))


def write(ops: list[dict], source: str, path: Path = OUT) -> None:
    """Write the table: a header, then one operator per line (stable, reviewable diffs)."""
    lines = [json.dumps(op, sort_keys=True) for op in ops]
    text = '{"source": ' + json.dumps(source) + ',\n "ops": [\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)  # the file is valid JSON
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("markdown", nargs="?", type=Path, help="a copy of docs/ContribOperators.md")
    ap.add_argument("--git-dir", help="read docs/ContribOperators.md from this onnxruntime git directory")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--source", help="where the document came from (stored in the table)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.git_dir:
        git = ["git", "--git-dir", args.git_dir]
        text = subprocess.run([*git, "show", f"{args.rev}:docs/ContribOperators.md"], check=True, capture_output=True)
        markdown = text.stdout.decode()
        commit = subprocess.run([*git, "rev-parse", args.rev], check=True, capture_output=True, text=True).stdout
        version = subprocess.run([*git, "show", f"{args.rev}:VERSION_NUMBER"], capture_output=True, text=True).stdout
        source = args.source or (
            f"onnxruntime docs/ContribOperators.md, version {version.strip()}, commit {commit.strip()}"
        )
    elif args.markdown:
        markdown = args.markdown.read_text()
        source = args.source or f"onnxruntime docs/ContribOperators.md ({args.markdown.name})"
    else:
        ap.error("give the document or --git-dir")
    ops = parse(markdown)
    write(ops, source, args.out)
    print(f"{len(ops)} operator schemas -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
