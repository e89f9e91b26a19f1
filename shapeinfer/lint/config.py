"""Which rules are on, at what severity: rule profiles, ``[tool.shapeinfer]``, command-line flags.

Settings come in layers, applied in this order (a later layer wins):

1. a rule profile: ``--rules NAME|FILE``, else ``rules = ...`` in ``[tool.shapeinfer]``, else
   ``default``. Profiles are TOML files shipped in ``shapeinfer/lint/profiles/`` (``default``, ``strict``,
   ``openvino``, ``onednn``) or any path; ``extends = "NAME"`` layers one profile on another;
2. the ``[tool.shapeinfer]`` table of the nearest ``pyproject.toml`` that has one, searching from
   the current directory upwards (as ruff finds its section), or the file given with ``--config``;
3. the command-line flags.

Every layer may set ``select`` (replaces the selection), ``extend-select`` (adds), ``ignore``
(removes), ``target``, ``severity`` (a table code-or-prefix -> ``error``/``warning``/``info``),
``warnings-as-errors``, ``per-path-ignores`` (a table glob -> codes; globs are relative to the
file that declares them), ``ranges`` (a table symbol -> ``[lo, hi]`` or ``"lo:hi"``: the sizes
an input symbol takes, checked by :mod:`shapeinfer.inference.bindings` like ``--dim-range``; a later
layer replaces a symbol's range) and ``fail-on`` (the severity from which lint exits 1).
Codes accept prefixes (``R``, ``R00``) and ``ALL``.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from shapeinfer.base.diagnostics import SEVERITIES
from shapeinfer.base.suggest import closest, did_you_mean
from shapeinfer.inference.bindings import BindError, check_ranges, parse_dim_ranges
from shapeinfer.io.userfiles import MAX_TEXT_BYTES, UserFileError, read_input, show
from shapeinfer.lint.context import Finding
from shapeinfer.lint.registry import RULES, TARGETS, expand, split_codes

Range = tuple[int, int | None]

PROFILE_DIR = "profiles"
DEFAULT_PROFILE = "default"
SECTION = ("tool", "shapeinfer")

_LIST_KEYS = ("select", "extend-select", "ignore")
_KNOWN_KEYS = {
    *_LIST_KEYS,
    "target",
    "severity",
    "warnings-as-errors",
    "per-path-ignores",
    "ranges",
    "fail-on",
    "rules",
    "extends",
    "description",
}


class ConfigError(Exception):
    """A profile or configuration that cannot be used; the message names the file and the key."""


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ConfigError("reading TOML needs Python 3.11+ or the 'tomli' package") from None
    return tomllib


def read_toml(path: str) -> dict:
    """Parse a TOML file; ConfigError with the file name and reason when it cannot be read."""

    tomllib = _toml()
    try:
        text = read_input(path, what="TOML configuration", max_bytes=MAX_TEXT_BYTES).decode("utf-8")
        return tomllib.loads(text)
    except UserFileError as e:
        raise ConfigError(str(e)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{show(path)}: invalid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{show(path)}: invalid TOML: {e}") from None


def profile_names() -> list[str]:
    """The profiles shipped with the package (``default``, ``strict``...)."""
    d = resources.files("shapeinfer.lint") / PROFILE_DIR
    return sorted(p.name[: -len(".toml")] for p in d.iterdir() if p.name.endswith(".toml"))


def profile_path(ref: str) -> str:
    """The file of profile ``ref``: a shipped profile's name, or a path to a TOML file."""
    if os.sep in ref or "/" in ref or ref.endswith(".toml") or os.path.isfile(ref):
        if not os.path.exists(ref):
            raise ConfigError(f"rule profile {ref}: no such file")
        return ref
    p = resources.files("shapeinfer.lint") / PROFILE_DIR / f"{ref}.toml"
    if not p.is_file():
        names = profile_names()
        raise ConfigError(
            f"unknown rule profile {ref!r}{did_you_mean(ref, names)} (shipped: {', '.join(names)}; or give a path)"
        )
    return str(p)


@dataclass
class Layer:
    """One source of settings (a profile, a pyproject section, the flags)."""

    source: str
    root: str  # the folder per-path-ignore globs are relative to
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    target: str | None = None
    severity: dict[str, str] = field(default_factory=dict)
    warnings_as_errors: bool | None = None
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    ranges: dict[str, Range] = field(default_factory=dict)
    fail_on: str | None = None

    @classmethod
    def from_table(cls, table: Mapping[str, Any], source: str, root: str) -> Layer:
        """Validate a profile / ``[tool.shapeinfer]`` table; ConfigError names the bad key."""
        for k, v in table.items():
            if k not in _KNOWN_KEYS and not isinstance(v, dict):
                guess = closest(k.replace("_", "-"), _KNOWN_KEYS) or closest(k, _KNOWN_KEYS)
                hint = f"did you mean {guess!r}?" if guess else f"known: {', '.join(sorted(_KNOWN_KEYS))}"
                raise ConfigError(f"{source}: unknown key {k!r} ({hint})")
        layer = cls(source, root)
        if "select" in table:
            layer.select = _codes(table["select"], source, "select")
        layer.extend_select = _codes(table.get("extend-select", []), source, "extend-select")
        layer.ignore = _codes(table.get("ignore", []), source, "ignore")
        if "target" in table:
            t = table["target"]
            if t not in TARGETS:
                raise ConfigError(f"{source}: target must be one of {', '.join(TARGETS)}, got {t!r}")
            layer.target = t
        sev = table.get("severity", {})
        if not isinstance(sev, dict):
            raise ConfigError(f"{source}: severity must be a table of code = level")
        for code, level in sev.items():
            if level not in SEVERITIES:
                raise ConfigError(f"{source}: severity.{code} must be one of {', '.join(SEVERITIES)}, got {level!r}")
            expand_or_fail([code], source, "severity")
            layer.severity[code.upper()] = level
        if "warnings-as-errors" in table:
            w = table["warnings-as-errors"]
            if not isinstance(w, bool):
                raise ConfigError(f"{source}: warnings-as-errors must be true or false")
            layer.warnings_as_errors = w
        ppi = table.get("per-path-ignores", {})
        if not isinstance(ppi, dict):
            raise ConfigError(f"{source}: per-path-ignores must be a table of glob = [codes]")
        for glob, codes in ppi.items():
            layer.per_path_ignores[glob] = _codes(codes, source, f"per-path-ignores.{glob!r}")
        layer.ranges = _ranges(table.get("ranges", {}), source)
        if "fail-on" in table:
            level = table["fail-on"]
            if level not in SEVERITIES:
                raise ConfigError(f"{source}: fail-on must be one of {', '.join(SEVERITIES)}, got {level!r}")
            layer.fail_on = level
        return layer


def _ranges(value: Any, source: str) -> dict[str, Range]:
    """A ``ranges`` table (``{seq = [1, 512]}``, ``{seq = "1:512"}``, ``{seq = "2:"}``: no upper
    bound) checked by the one validator of ranges, :mod:`shapeinfer.inference.bindings` (the rules and
    wording of ``--dim-range``); a parsed ``(lo, hi)`` tuple (the command line's) passes too."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: ranges must be a table of symbol = [lo, hi] (e.g. ranges = {{seq = [1, 512]}})")
    out: dict[str, Range] = {}
    try:
        for k, v in value.items():
            if isinstance(v, str):
                out.update(parse_dim_ranges([f"{k}={v}"]) if ":" in v else check_ranges({k: v}))
            elif isinstance(v, (list, tuple)) and len(v) == 2:
                out.update(check_ranges({k: tuple(v)}))
            else:
                expected = 'expected [lo, hi] or "lo:hi" ("lo:": no upper bound)'
                raise ConfigError(f"{source}: ranges: {k} = {v!r}: {expected}")
    except BindError as e:
        raise ConfigError(f"{source}: ranges: {e.detail}") from None
    return out


def expand_or_fail(codes: Iterable[str], source: str, key: str) -> set[str]:
    try:
        return expand(codes)
    except ValueError as e:
        raise ConfigError(f"{source}: {key}: {e}") from None


def _codes(value: Any, source: str, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"{source}: {key} must be a list of rule codes")
    codes = split_codes(value)
    expand_or_fail(codes, source, key)
    return codes


@dataclass
class LintConfig:
    """The resolved settings: enabled codes, target, severities, per-path ignores.

    Picklable (it crosses to worker processes). :meth:`apply` filters and re-grades findings.
    """

    enabled: frozenset[str]
    target: str = "onnx"
    severity: dict[str, str] = field(default_factory=dict)  # full code -> level
    warnings_as_errors: bool = False
    per_path_ignores: list[tuple[str, str, frozenset[str]]] = field(default_factory=list)  # (root, glob, codes)
    profile: str = DEFAULT_PROFILE
    sources: list[str] = field(default_factory=list)
    timeout: float | None = None  # seconds per model (inference and checks), from --timeout
    #: the sizes input symbols take (``--dim-range``, ``ranges``): inference decides what they prove
    dim_ranges: dict[str, Range] = field(default_factory=dict)
    #: where each range was set (a file's ``[tool.shapeinfer]``, a profile, ``--dim-range``)
    range_sources: dict[str, str] = field(default_factory=dict)
    #: the least severe finding that makes lint exit 1
    fail_on: str = "error"
    #: where each entry of ``severity`` was set (``profile strict``, a pyproject's section)
    severity_sources: dict[str, str] = field(default_factory=dict)
    #: where ``warnings_as_errors`` was set
    warnings_as_errors_source: str = ""

    def fails(self, severity: str) -> bool:
        """Whether a finding of ``severity`` makes lint exit 1 (at or above ``fail_on``)."""
        return SEVERITIES.index(severity) <= SEVERITIES.index(self.fail_on) if severity in SEVERITIES else True

    def is_active(self, code: str) -> bool:
        """Whether rule ``code`` runs at all (selected, and its target is the one in force)."""
        r = RULES.get(code)
        if r is None:
            return True
        if code == "E900":  # an unreadable file is always reported
            return True
        return code in self.enabled and (r.target is None or r.target == self.target)

    def ignored_for(self, path: str) -> set[str]:
        """The codes per-path ignores switch off for ``path``."""
        out: set[str] = set()
        ap = os.path.abspath(path)
        for root, glob, codes in self.per_path_ignores:
            rel = os.path.relpath(ap, root).replace(os.sep, "/")
            pat = glob[2:] if glob.startswith("./") else glob
            if fnmatch.fnmatch(rel, pat) or ("/" not in pat and fnmatch.fnmatch(os.path.basename(ap), pat)):
                out |= codes
        return out

    def grade(self, code: str, severity: str) -> str:
        """The severity a finding is reported at, after overrides and warnings-as-errors."""
        return self.regrade(code, severity)[0]

    def regrade(self, code: str, severity: str) -> tuple[str, str | None]:
        """``(severity, why)``: the severity a finding is reported at after overrides and
        warnings-as-errors, and what changed it (None: nothing did)."""
        sev, why = severity, None
        level = self.severity.get(code)
        if level is not None and level != sev:
            sev, why = level, f"severity.{code} = {level!r} ({self.severity_sources.get(code, 'configuration')})"
        if self.warnings_as_errors and sev == "warning":
            sev = "error"
            what = f"warnings-as-errors ({self.warnings_as_errors_source or 'configuration'})"
            why = what if why is None else f"{why}; {what}"
        return sev, why

    def apply(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings that are enabled (and not ignored for their path), re-graded."""
        out = []
        ignored_cache: dict[str, set[str]] = {}
        for f in findings:
            if not self.is_active(f.code):
                continue
            ign = ignored_cache.get(f.path)
            if ign is None:
                ign = ignored_cache[f.path] = self.ignored_for(f.path)
            if f.code in ign and f.code != "E900":
                continue
            sev, why = self.regrade(f.code, f.severity)
            if why is not None:
                f.regrade(sev, why)
            out.append(f)
        return out


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` with a ``[tool.shapeinfer]`` table, from ``start`` upwards."""
    d = os.path.abspath(start)
    while True:
        p = os.path.join(d, "pyproject.toml")
        if os.path.isfile(p) and _section(read_toml(p)) is not None:
            return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _section(doc: Mapping | None) -> Mapping | None:
    cur: Any = doc
    for k in SECTION:
        if not isinstance(cur, Mapping) or k not in cur:
            return None
        cur = cur[k]
    return cur if isinstance(cur, Mapping) else None


def _profile_layers(ref: str, seen: tuple[str, ...] = ()) -> list[Layer]:
    path = profile_path(ref)
    key = os.path.abspath(path)
    if key in seen:
        raise ConfigError(f"rule profile {ref}: 'extends' forms a cycle")
    table = read_toml(path)
    layers = []
    base = table.get("extends")
    if base is not None:
        if not isinstance(base, str):
            raise ConfigError(f"{path}: extends must be a profile name or path")
        if not (resources.files("shapeinfer.lint") / PROFILE_DIR / f"{base}.toml").is_file() and not os.path.isabs(
            base
        ):
            base_path = os.path.join(os.path.dirname(path), base)
            base = base_path if os.path.isfile(base_path) else base
        layers = _profile_layers(base, (*seen, key))
    if "rules" in table:
        raise ConfigError(f"{path}: a profile cannot set 'rules'; use 'extends'")
    layers.append(Layer.from_table(table, f"profile {ref}", os.path.dirname(os.path.abspath(path))))
    return layers


def resolve(
    *,
    rules: str | None = None,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    target: str | None = None,
    config: str | None = None,
    isolated: bool = False,
    cwd: str | None = None,
    dim_ranges: Mapping[str, Range] | None = None,
    fail_on: str | None = None,
) -> LintConfig:
    """Resolve the settings from the profile, the project's pyproject.toml and the flags.

    ``config`` is a pyproject.toml (or any TOML file with ``[tool.shapeinfer]``, or a bare
    profile-style table) to use instead of discovery; ``isolated`` ignores project files.
    ``dim_ranges`` (parsed ``--dim-range`` values) and ``fail_on`` are the flags' layer.
    Raises ConfigError for anything invalid.
    """
    sources = []
    project: Layer | None = None
    project_rules = None
    if not isolated:
        path = config if config is not None else find_pyproject(cwd or os.getcwd())
        if path is not None:
            doc = read_toml(path)
            table = _section(doc)
            if table is None:
                if config is None:
                    table = {}
                else:  # a bare table of settings
                    table = {k: v for k, v in doc.items() if k != "tool"}
            src = f"{path} [tool.shapeinfer]"
            project_rules = table.get("rules")
            if project_rules is not None and not isinstance(project_rules, str):
                raise ConfigError(f"{src}: rules must be a profile name or path")
            root = os.path.dirname(os.path.abspath(path))
            if project_rules is not None and not os.path.isabs(project_rules) and "/" in project_rules:
                project_rules = os.path.join(root, project_rules)
            project = Layer.from_table({k: v for k, v in table.items() if k != "rules"}, src, root)
            sources.append(src)
    profile = rules or project_rules or DEFAULT_PROFILE
    layers = _profile_layers(profile)
    if project is not None:
        layers.append(project)
    cli = Layer.from_table(
        {
            **({"select": list(select)} if select else {}),
            "extend-select": list(extend_select),
            "ignore": list(ignore),
            **({"target": target} if target else {}),
            **({"ranges": dict(dim_ranges)} if dim_ranges else {}),
            **({"fail-on": fail_on} if fail_on else {}),
        },
        "command line",
        os.path.abspath(cwd or os.getcwd()),
    )
    layers.append(cli)
    enabled: set[str] = set()
    tgt = "onnx"
    severity: dict[str, str] = {}
    severity_sources: dict[str, str] = {}
    wae = False
    wae_source = ""
    ppi: list[tuple[str, str, frozenset[str]]] = []
    ranges: dict[str, Range] = {}
    range_sources: dict[str, str] = {}
    level = "error"
    for layer in layers:
        if layer.select is not None:
            enabled = expand(layer.select)
        enabled |= expand(layer.extend_select)
        enabled -= expand(layer.ignore)
        tgt = layer.target or tgt
        # broader selectors first so that a full code overrides its prefix
        for sel, grade in sorted(layer.severity.items(), key=lambda kv: (kv[0] != "ALL", len(kv[0]))):
            for code in expand([sel]):
                severity[code] = grade
                severity_sources[code] = layer.source
        if layer.warnings_as_errors is not None:
            wae = layer.warnings_as_errors
            wae_source = layer.source
        for glob, codes in layer.per_path_ignores.items():
            ppi.append((layer.root, glob, frozenset(expand(codes))))
        for sym, r in layer.ranges.items():
            ranges[sym] = r
            range_sources[sym] = "--dim-range" if layer is cli else layer.source
        level = layer.fail_on or level
    return LintConfig(
        frozenset(enabled),
        tgt,
        severity,
        wae,
        ppi,
        profile,
        [*sources, "command line"],
        dim_ranges=ranges,
        range_sources=range_sources,
        fail_on=level,
        severity_sources=severity_sources,
        warnings_as_errors_source=wae_source,
    )
