"""``shapeinfer lint``: the rule catalog, checked over a model and its inferred shapes.

- :func:`lint_model` runs inference on a ModelProto and returns every finding of every rule
  (default severities, all targets' rules for the given target), unfiltered.
- :mod:`~shapeinfer.lint.config` resolves which rules are on and at what severity (rule
  profiles in ``shapeinfer/lint/profiles/*.toml``, ``[tool.shapeinfer]`` in pyproject.toml, flags).
- :mod:`~shapeinfer.lint.runner` lints files and folders (process pool, ``--fix``);
  :mod:`~shapeinfer.lint.report` writes text, JSON, SARIF and GitHub annotations.
- ``RULES`` is the catalog (code -> :class:`~shapeinfer.lint.registry.Rule`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import onnx

from shapeinfer.inference.declarations import declared_types, statically_contradicts
from shapeinfer.lint import engine_codes as _engine_codes  # noqa: F401  (registers E002-E090)
from shapeinfer.lint import runtimes
from shapeinfer.lint.context import Finding, LintContext
from shapeinfer.lint.registry import CHECKS, REMAPS, RULES, Rule, expand
from shapeinfer.lint.rules import graph as _graph  # noqa: F401  (registers G/E rules)
from shapeinfer.lint.rules import model as _model  # noqa: F401  (registers E003, G014)
from shapeinfer.lint.rules import reshape as _reshape  # noqa: F401  (registers R rules)
from shapeinfer.lint.rules import shape as _shape  # noqa: F401  (registers S rules)
from shapeinfer.lint.rules import structure as _structure  # noqa: F401  (registers M rules)
from shapeinfer.lint.rules import targets as _targets  # noqa: F401  (registers P rules)

__all__ = ["RULES", "Finding", "Rule", "declared_types", "expand", "lint_model"]


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
    matches. Findings carry the rule's default severity (the engine's for engine codes);
    selection and severity overrides are :class:`~shapeinfer.lint.config.LintConfig`'s job.
    ``timeout`` (seconds) bounds inference and the checks together: past it, the model gets an
    E001 error finding saying so, with the findings made so far. ``dim_ranges`` gives input
    symbols the sizes they take (``{"seq": (1, 512)}``, checked by the caller): what they prove
    is no longer assumed (G003) or guarded (G012), and a guard they rule out is a G015 error.
    """
    import time

    from shapeinfer.inference.engine import InferenceTimeout, infer

    deadline = None if timeout is None else time.monotonic() + timeout
    declared = declared_types(model)  # before anything can touch the model's annotations
    try:
        result = infer(model, base_dir=base_dir, timeout=timeout, dim_ranges=dim_ranges or None)
    except InferenceTimeout as e:
        return [Finding.of(path, "E001", "error", f"{e} (--timeout)", name=RULES["E001"].name)]
    except Exception as e:  # the engine promises not to raise; report it if it does
        msg = f"inference crashed: {type(e).__name__}: {e}"
        return [Finding.of(path, "E001", "error", msg, name=RULES["E001"].name)]
    ctx = LintContext(model, result, declared, path, target, base_dir)
    _engine_findings(ctx)
    for code, fn in CHECKS:
        if deadline is not None and time.monotonic() > deadline:
            msg = f"checks stopped after {timeout:g}s (--timeout): later rules did not run"
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


#: An engine code's severity where the runtime judging the target treats the model otherwise
#: than the engine's default says (each checked against the runtime in
#: tests/lint/test_lint_runtime.py), keyed by (code, runtime: :func:`runtimes.judging_runtime`).
_RUNTIME_SEVERITY: dict[tuple[str, str], str] = {
    # nodes out of order: onnx's checker refuses them; onnxruntime and OpenVINO sort and run them
    ("G004", "onnx"): "error",
    # a tensor defined twice: onnx's checker and onnxruntime refuse it; OpenVINO loads the model
    ("E004", "openvino"): "warning",
}


def _refused_declaration(ctx: LintContext, d) -> bool:
    """Whether the target's runtime refuses the model for this G006: a graph input whose
    initializer contradicts its declaration (every runtime), or, for onnx's checker, a declared
    type, rank or int dim that contradicts an int one. onnxruntime and OpenVINO load a model
    whose ``value_info`` or outputs are declared wrong (onnxruntime merges leniently and warns),
    and none sees a contradiction only between expressions (``past + seq`` declared, ``seq``
    inferred)."""
    if d.graph in (None, "main") and d.tensor in {i.name for i in ctx.model.graph.input}:
        return True
    if runtimes.judging_runtime(ctx.target) != "onnx":
        return False
    for g, name, _ in ctx.graphs():
        if name == (d.graph or "main"):
            declared = next((v.type for v in (*g.value_info, *g.output) if v.name == d.tensor), None)
            fact = ctx.result.graph_facts.get(name, {}).get(d.tensor)
            return declared is None or statically_contradicts(fact, declared)
    return True  # not found: keep what inference said


def _engine_findings(ctx: LintContext) -> None:
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
        if code in REMAPS:
            code, msg = REMAPS[code](d, ref)
        # every code the engine emits is in the catalog under its own code (engine_codes,
        # graph, model); one that is not still keeps its code rather than another's
        r = RULES.get(code)
        if d.severity == "error" and d.index is not None:
            ctx.error_nodes.add((d.graph, d.index))
        default = r.severity if r is not None else "warning"
        severity = d.severity if d.severity in ("error", "warning", "info") else default
        if code == "G006" and severity == "error" and not _refused_declaration(ctx, d):
            severity = "warning"
        severity = _RUNTIME_SEVERITY.get((code, runtimes.judging_runtime(ctx.target)), severity)
        fix, name = (r.fix, r.name) if r is not None else (None, "")
        ctx.findings.append(Finding(ctx.path, replace(d, code=code, message=msg, severity=severity), fix, name))


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
