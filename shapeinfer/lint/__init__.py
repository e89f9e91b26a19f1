"""``shapeinfer lint``: the rule catalog, checked over a model and its inferred shapes.

- :func:`lint_model` runs inference on a ModelProto and returns every finding of every rule
  (default severities, all targets' rules for the given target), unfiltered.
- :mod:`~shapeinfer.lint.config` resolves which rules are on and at what severity (rule
  profiles in ``shapeinfer/lint/profiles/*.toml``, ``[tool.shapeinfer]`` in pyproject.toml, flags).
- :mod:`~shapeinfer.lint.runner` lints files and folders (process pool, ``--fix``);
  :mod:`~shapeinfer.lint.report` writes text, JSON, SARIF and GitHub annotations.
- ``RULES`` is the catalog of codes (code -> :class:`~shapeinfer.base.codes.Code`), every
  code lint reports, the engine's included.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

import onnx

from shapeinfer.base import runtimes
from shapeinfer.base.codes import Code
from shapeinfer.inference.declarations import REFUSED_BY, declared_types, static_kind
from shapeinfer.inference.engine import InferenceTimeout, infer
from shapeinfer.lint.context import Finding, LintContext, target_reason
from shapeinfer.lint.registry import CHECKS, ENGINE_MESSAGES, RULES, expand
from shapeinfer.lint.rules import attributes as _attributes  # noqa: F401  (checks G017, E007, E030)
from shapeinfer.lint.rules import graph as _graph  # noqa: F401  (checks G001, G008)
from shapeinfer.lint.rules import model as _model  # noqa: F401  (checks E003, G014)
from shapeinfer.lint.rules import reshape as _reshape  # noqa: F401  (checks R rules)
from shapeinfer.lint.rules import shape as _shape  # noqa: F401  (checks S004)
from shapeinfer.lint.rules import structure as _structure  # noqa: F401  (checks M rules)
from shapeinfer.lint.rules import targets as _targets  # noqa: F401  (checks P rules)

__all__ = ["RULES", "Code", "Finding", "declared_types", "expand", "lint_model"]


def lint_model(
    model: onnx.ModelProto,
    path: str = "<model>",
    *,
    target: str = "onnx",
    base_dir: str | None = None,
    timeout: float | None = None,
    dim_ranges: Mapping[str, tuple[int, int | None]] | None = None,
) -> list[Finding]:
    """Every finding for ``model`` (not modified), sorted by graph, node index and code.

    Runs inference, turns its diagnostics into findings under their own codes (R001-R005,
    S001-S003, G002-G005, G007, the E codes), then every check function; target rules (P...) run only when ``target``
    matches. Findings carry the severity ``infer`` and the API report (the engine's for engine
    codes, the rule's for checks), re-graded visibly (``Finding.regraded``) where ``target``'s
    runtime judges the model otherwise than onnx's checker; selection and severity overrides
    are :class:`~shapeinfer.lint.config.LintConfig`'s job (visibly too).
    ``timeout`` (seconds) bounds inference and the checks together: past it, the model gets an
    E001 error finding saying so, with the findings made so far. ``dim_ranges`` gives input
    symbols the sizes they take (``{"seq": (1, 512)}``, checked by the caller): what they prove
    is no longer assumed (G003) or guarded (G012), and a guard they rule out is a G015 error.
    """

    deadline = None if timeout is None else time.monotonic() + timeout
    declared = declared_types(model)  # before anything can touch the model's annotations
    try:
        result = infer(model, base_dir=base_dir, timeout=timeout, dim_ranges=dim_ranges or None)
    except InferenceTimeout as e:
        msg = f"gave up after {timeout:g}s (--timeout)" if timeout is not None else str(e)
        return [Finding.of(path, "E001", "error", msg, name=RULES["E001"].name)]
    except Exception as e:  # the engine promises not to raise; report it if it does
        msg = f"inference crashed: {type(e).__name__}: {e}"
        return [Finding.of(path, "E001", "error", msg, name=RULES["E001"].name)]
    ctx = LintContext(model, result, declared, path, target, base_dir)
    _engine_findings(ctx)
    for code, fn in CHECKS:
        if deadline is not None and time.monotonic() > deadline:
            msg = f"gave up after {timeout:g}s (--timeout): later rules did not run"
            ctx.findings.append(Finding.of(path, "E001", "error", msg, name=RULES["E001"].name))
            break
        r = RULES[code]
        if r.target is not None and r.target != target:
            continue
        try:
            fn(ctx)
        except Exception as e:  # a bug in one check must not hide the others' findings
            ctx.findings.append(
                Finding.of(
                    path,
                    "E001",
                    "warning",
                    f"check {code} failed on this model: {type(e).__name__}: {e}",
                    name=RULES["E001"].name,
                )
            )
    return _dedupe(ctx.findings)


def _target_regrade(ctx: LintContext, d) -> tuple[str, str] | None:
    """``(severity, why)`` for an engine diagnostic whose severity the runtime judging
    ``ctx.target`` sees otherwise than onnx's checker, which judges the engine's severity (the
    one ``infer`` and the API report, and lint's under its default ``onnx`` target); None where
    it agrees. Each case is measured against the runtimes (tests/lint/test_lint_runtime.py):

    - G004, a main graph's nodes out of order (no cycle): onnxruntime and OpenVINO sort them and
      load the model; nodes out of order in an ``If`` branch or a function, all three refuse;
    - E004, a tensor defined twice: OpenVINO loads the model;
    - G006, an error (a declared type, rank or int dim onnx's checker refuses): per the kind of
      contradiction, :data:`~shapeinfer.inference.declarations.REFUSED_BY` (onnxruntime refuses
      a declared element type or a graph input that contradicts its initializer, OpenVINO none).
    """
    runtime = runtimes.judging_runtime(ctx.target)
    if runtime == "onnx" or d.severity != "error":
        return None
    if d.code == "G004" and d.graph in (None, "main") and "cycle" not in d.message:
        refused = False
    elif d.code == "E004":
        refused = runtime != "openvino"
    elif d.code == "G006":
        refused = runtime in REFUSED_BY[_declaration_kind(ctx, d) or "type"]
    else:
        return None
    return None if refused else ("warning", target_reason(ctx.target, False))


def _declaration_kind(ctx: LintContext, d) -> str | None:
    """The kind of a G006 (a key of :data:`~shapeinfer.inference.declarations.REFUSED_BY`): a
    graph input against its initializer, or what the declaration contradicts statically."""
    if d.message.startswith("graph input"):
        return "initializer"
    for g, name, _ in ctx.graphs():
        if name == (d.graph or "main"):
            declared = next((v.type for v in (*g.value_info, *g.output) if v.name == d.tensor), None)
            return static_kind(ctx.result.graph_facts.get(name, {}).get(d.tensor), declared) if declared else None
    return None


def _engine_findings(ctx: LintContext) -> None:
    """The engine's diagnostics as findings, each at the engine's severity (the one ``infer``
    and the API report), re-graded visibly where the target's runtime judges otherwise."""
    refs = {}
    for ref in ctx.nodes():
        refs.setdefault((ref.graph, ref.index), ref)
    ctx.error_nodes = set()
    for d in ctx.result.diagnostics:
        ref = refs.get((d.graph, d.index)) if d.index is not None else None
        if ref is not None and (ref.node.name or None) != d.node:
            ref = None
        code, msg = d.code, d.message
        if code == "E003" and ctx.base_dir is not None:
            continue  # the E003 check reports every external tensor (the engine only those it reads)
        if code in ENGINE_MESSAGES:
            msg = ENGINE_MESSAGES[code](d, ref)
        # every code the engine emits is in the catalog (base/codes.py); one that is not
        # still keeps its own code rather than another's
        r = RULES.get(code)
        if d.severity == "error" and d.index is not None:
            ctx.error_nodes.add((d.graph, d.index))
        default = r.severity if r is not None else "warning"
        severity = d.severity if d.severity in ("error", "warning", "info") else default
        fix, name = (r.fix, r.name) if r is not None else (None, "")
        finding = Finding(ctx.path, replace(d, code=code, message=msg, severity=severity), fix, name)
        regrade = _target_regrade(ctx, d)
        if regrade is not None:
            finding.regrade(*regrade)
        ctx.findings.append(finding)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in findings:
        key = (f.code, f.graph, f.index, f.node, f.tensor, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    out.sort(key=Finding.sort_key)
    return out
