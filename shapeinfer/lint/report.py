"""Writing findings: text, JSON, SARIF 2.1.0 and GitHub Actions workflow commands.

Every format carries the same facts per finding: the model path, the node (name, op type,
index, graph), the code, rule name, severity and message.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import quote

from shapeinfer.io.userfiles import show
from shapeinfer.lint.context import Finding
from shapeinfer.lint.registry import RULES

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def display_path(path: str) -> str:
    """The path as given, with forward slashes and no leading ``./``."""
    p = path.replace(os.sep, "/")
    while p.startswith("./"):
        p = p[2:]
    return p


# ---------------------------------------------------------------------- text


def text_lines(findings: Sequence[Finding], style: Callable[..., str] | None = None) -> list[str]:
    """``path:node: CODE [severity] message`` per finding, one line each (control characters in
    a path or a name escaped). ``style`` (click's ``style`` signature: text, ``fg=``, ``bold=``,
    ``dim=``) colours the parts; None: plain text."""
    out = []
    for f in findings:
        where = show(f"{display_path(f.path)}:{f.location}:")
        code = f.code
        sev = f"[{f.severity}]"
        fix = " (fixable)" if f.fix else ""
        if style is not None:
            where = style(where, bold=True)
            code = style(code, fg=_COLOURS.get(f.severity), bold=True)
            sev = style(sev, fg=_COLOURS.get(f.severity))
            fix = style(fix, dim=True) if fix else ""
        out.append(f"{where} {code} {sev} {show(f.message)}{fix}{f.severity_note}")
    return out


def summary_line(findings: Sequence[Finding], n_files: int) -> str:
    """``Found 3 findings (1 error, 2 warning, 0 info) in 2 of 6 files.`` or the all-clear."""
    if not findings:
        return f"All checks passed ({n_files} file{'s' if n_files != 1 else ''})."
    sev = Counter(f.severity for f in findings)
    files = len({f.path for f in findings})
    fixable = sum(1 for f in findings if f.fix)
    tail = f" {fixable} fixable with --fix." if fixable else ""
    plural = "s" if len(findings) != 1 else ""
    of = f"{files} of {n_files} file{'s' if n_files != 1 else ''}"
    return (
        f"Found {len(findings)} finding{plural} ({sev['error']} error, {sev['warning']} warning, "
        f"{sev['info']} info) in {of}.{tail}"
    )


# ---------------------------------------------------------------------- json


def to_json(findings: Sequence[Finding]) -> str:
    """A JSON list of findings with every field (path, code, name, severity, message, node,
    op_type, index, graph, tensor, fix), each with ``"schema": 1``, the version of
    ``shapeinfer/schemas/lint.schema.json`` (the list itself is kept for existing readers)."""
    return json.dumps([{"schema": 1, **f.to_dict()} for f in findings], indent=1)


# ---------------------------------------------------------------------- sarif


def _artifact_uri(path: str) -> str:
    """The SARIF URI of ``path``; bytes that are not UTF-8 (a surrogate-escaped name) are
    percent-encoded as the file system's bytes."""
    p = display_path(path)
    if os.path.isabs(path):
        return "file://" + quote(os.fsencode(os.path.abspath(path).replace(os.sep, "/")))
    return quote(os.fsencode(p))


def _rule_descriptor(code: str) -> dict:
    r = RULES.get(code)
    if r is None:  # a code outside the catalog (none is emitted today): described by its code only
        return {"id": code, "shortDescription": {"text": code}, "defaultConfiguration": {"level": "warning"}}
    help_text = r.doc
    if r.fix:
        help_text += f"\n\nFixable: `shapeinfer lint --fix` applies the {r.fix} pass."
    d = {
        "id": code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.doc},
        "help": {"text": help_text, "markdown": f"**{code} {r.name}** ({r.severity})\n\n{help_text}"},
        "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]},
        "properties": {"family": r.family, "fixable": r.fixable},
    }
    if r.target:
        d["properties"]["target"] = r.target
    return d


def to_sarif(findings: Sequence[Finding], version: str, rule_codes: Iterable[str] = ()) -> dict:
    """A SARIF 2.1.0 log: one run, the rules in force (plus any code reported) with help text, and
    one result per finding with its level, message, the model as physical location (region line
    1: a model is one binary artifact) and the node as logical location."""
    codes = sorted(set(rule_codes) | {f.code for f in findings})
    index = {c: i for i, c in enumerate(codes)}
    results = []
    artifacts: dict[str, int] = {}
    for f in findings:
        uri = _artifact_uri(f.path)
        artifacts.setdefault(uri, len(artifacts))
        logical = {
            "name": f.node or f.tensor or f.graph or "model",
            "fullyQualifiedName": f"{f.graph or 'main'}/{f.node or f.tensor or ''}".rstrip("/"),
            "kind": "function" if f.op_type is not None else "variable" if f.tensor is not None else "module",
        }
        fp = hashlib.sha256(
            "\0".join([f.code, display_path(f.path), f.graph or "", str(f.index), f.node or "", f.tensor or ""]).encode(
                "utf-8", "surrogateescape"
            )
        ).hexdigest()[:32]
        res = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": SARIF_LEVEL.get(f.severity, "warning"),
            "message": {"text": f"{f.location}: {f.message}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri, "index": artifacts[uri]},
                        "region": {"startLine": 1},
                    },
                    "logicalLocations": [logical],
                }
            ],
            "partialFingerprints": {"shapeinferNode/v1": fp},
            "properties": {
                k: v
                for k, v in {
                    "severity": f.severity,
                    "defaultSeverity": f.default_severity,
                    "regraded": f.regraded,
                    "node": f.node,
                    "opType": f.op_type,
                    "index": f.index,
                    "graph": f.graph,
                    "tensor": f.tensor,
                    "fix": f.fix,
                }.items()
                if v is not None
            },
        }
        results.append(res)
    return {
        "version": "2.1.0",
        "$schema": SARIF_SCHEMA,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shapeinfer",
                        "version": version,
                        "semanticVersion": version,
                        "rules": [_rule_descriptor(c) for c in codes],
                    }
                },
                "artifacts": [{"location": {"uri": u}} for u in artifacts],
                "results": results,
            }
        ],
    }


# ---------------------------------------------------------------------- github


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def github_lines(findings: Sequence[Finding]) -> list[str]:
    """GitHub Actions workflow commands: ``::error file=PATH,title=CODE name::node: message``
    (``::warning`` / ``::notice`` for warnings and info), escaped as the runner expects."""
    out = []
    for f in findings:
        cmd = GITHUB_COMMAND.get(f.severity, "warning")
        title = f"{f.code} {f.name or RULES[f.code].name}" if f.code in RULES else f.code
        out.append(
            f"::{cmd} file={_gh_prop(display_path(f.path))},title={_gh_prop(title)}::"
            f"{_gh_data(f.location + ': ' + f.message + f.severity_note)}"
        )
    return out
