"""pytest plugin: run onnx's own shape-inference tests with shapeinfer in place of onnx.

Loaded with ``-p plugin`` by :mod:`tests.onnx_suite.harness` (in a subprocess, over the vendored
test files in ``upstream/``). ``onnx.shape_inference.infer_shapes`` is replaced by a function that

- runs onnx's real ``infer_shapes`` on the same model (kept only as the reference for the
  classification: what the test's expectations were written against),
- runs shapeinfer (``infer`` + ``annotate``) and its linter (``lint_model``): an error-level
  finding becomes ``onnx.shape_inference.InferenceError`` under ``strict_mode``/``check_type``,
  like onnx's strict inference, so each test's own ``pytest.raises`` and asserts judge shapeinfer,
- returns shapeinfer's annotated model.

Every test is then classified (see :func:`classify`) and the results are written as JSON to
``$SHAPEINFER_SUITE_OUT``: ``{test id: {"status": ..., "detail": ...}}``.
"""

from __future__ import annotations

import json
import os
import signal
import traceback

import onnx
import onnx.shape_inference as si
import pytest

#: Seconds one test may take before it counts as a hang.
TEST_TIMEOUT = int(os.environ.get("SHAPEINFER_SUITE_TIMEOUT", "30"))

#: The lint rule that checks input types against the schema (onnx: ``check_type=True``).
TYPE_CHECK = "G008"

#: Findings onnx reports through its checker (ValidationError) even without strict_mode.
CHECKER_CODES = {"G010"}

#: Findings of onnx's checker that its inference never raises (G014: an op of an onnx domain with
#: no schema; inference passes such a node by, for custom ops; the model-structure rules M001-M031:
#: names, declared types, deprecated ops, of which onnx's inference checks nothing): not compared
#: with inference.
CHECKER_ONLY = {"G014"}
CHECKER_ONLY_FAMILY = "M"

_real_infer_shapes = si.infer_shapes
_calls: list[dict] = []
_results: dict[str, dict] = {}


class ShapeinferCrash(Exception):
    """shapeinfer raised (it promises never to): the test fails with this."""


class Hang(BaseException):
    """The test ran past TEST_TIMEOUT."""


def _model_of(model) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        return m
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    raise TypeError(f"infer_shapes of {type(model).__name__}")


def infer_shapes(model, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False):
    """Drop-in for onnx.shape_inference.infer_shapes backed by shapeinfer (see the module doc)."""
    from shapeinfer.inference.engine import infer
    from shapeinfer.io.annotate import annotate
    from shapeinfer.lint import lint_model

    if not isinstance(model, (onnx.ModelProto, bytes, bytearray)):  # onnx's own argument errors
        return _real_infer_shapes(model, check_type, strict_mode, data_prop)
    rec: dict = {"strict": bool(strict_mode or check_type)}
    _calls.append(rec)
    try:
        rec["onnx"] = _real_infer_shapes(model, check_type, strict_mode, data_prop)
    except Exception as e:
        rec["onnx_error"] = f"{type(e).__name__}: {str(e).strip()[:300]}"
    try:
        m = _model_of(model)
    except Exception as e:  # the same input onnx itself cannot take: not shapeinfer's business
        rec["not_a_model"] = str(e)
        raise
    try:
        res = infer(m, timeout=TEST_TIMEOUT)
        ours = annotate(res)
        findings = lint_model(_model_of(model))
    except Exception as e:
        rec["crash"] = "".join(traceback.format_exception_only(type(e), e)).strip()[:500]
        raise ShapeinferCrash(rec["crash"]) from e
    # onnx checks inputs against the schema's type constraints only with check_type: so does G008
    errors = [
        f
        for f in findings
        if f.severity == "error"
        and (check_type or f.code != TYPE_CHECK)
        and f.code not in CHECKER_ONLY
        and not f.code.startswith(CHECKER_ONLY_FAMILY)
    ]
    rec["ours"] = ours
    rec["model"] = _model_of(model)
    rec["errors"] = [f"{f.code} {f.message}"[:200] for f in errors]
    rec["warnings"] = [f"{f.code} {f.message}"[:200] for f in findings if f.severity == "warning"]
    if any(f.code in CHECKER_CODES for f in errors):  # onnx raises these whatever the mode
        raise onnx.checker.ValidationError("[shapeinfer] " + "; ".join(rec["errors"]))
    if errors and (strict_mode or check_type):
        raise si.InferenceError("[shapeinfer] " + "; ".join(rec["errors"]))
    return ours


# ---------------------------------------------------------------------------------- comparison

#: Outcome of one call, worst first: the order a test with several calls is summarised in.
ORDER = ("crash", "false-error", "wrong", "missed-error", "less-precise", "more-precise", "same")


def _dim(d) -> tuple[str, object]:
    if d.HasField("dim_value"):
        return ("value", d.dim_value)
    if d.HasField("dim_param") and not d.dim_param.startswith("unk__"):
        return ("param", d.dim_param)
    return ("unknown", None)


def compare_types(ref: onnx.TypeProto, ours: onnx.TypeProto, notes: list[str], name: str) -> set[str]:
    """Per-aspect verdicts of shapeinfer's type against onnx's for one value."""
    out: set[str] = set()
    kr, ko = ref.WhichOneof("value"), ours.WhichOneof("value")
    if kr is None:
        return {"more-precise"} if ko is not None else set()
    if ko is None:
        notes.append(f"{name}: type unknown")
        return {"less-precise"}
    if kr != ko:
        notes.append(f"{name}: {kr} vs {ko}")
        return {"wrong"}
    if kr in ("sequence_type", "optional_type"):
        return compare_types(getattr(ref, kr).elem_type, getattr(ours, kr).elem_type, notes, name)
    if kr == "map_type":
        return compare_types(ref.map_type.value_type, ours.map_type.value_type, notes, name)
    tr, to = getattr(ref, kr), getattr(ours, kr)
    if tr.elem_type != to.elem_type:
        if not tr.elem_type:
            out.add("more-precise")
        elif not to.elem_type:
            out.add("less-precise")
        else:
            out.add("wrong")
        notes.append(f"{name}: elem {tr.elem_type} vs {to.elem_type}")
    hr, ho = tr.HasField("shape"), to.HasField("shape")
    if hr != ho:
        out.add("more-precise" if ho else "less-precise")
        notes.append(f"{name}: rank {'known' if hr else 'unknown'} vs {'known' if ho else 'unknown'}")
        return out
    if not hr:
        return out
    if len(tr.shape.dim) != len(to.shape.dim):
        notes.append(f"{name}: rank {len(tr.shape.dim)} vs {len(to.shape.dim)}")
        return out | {"wrong"}
    for i, (a, b) in enumerate(zip(tr.shape.dim, to.shape.dim)):
        (ka, va), (kb, vb) = _dim(a), _dim(b)
        if (ka, va) == (kb, vb):
            continue
        if kb == "param" and vb.startswith("unk_") and ka == "unknown":
            continue
        if ka == "unknown":
            verdict = "more-precise"
        elif kb == "unknown" or (kb == "param" and vb.startswith("unk_")):
            verdict = "less-precise"
        elif ka == "value" and kb == "value":
            verdict = "wrong"
        else:  # a symbol against a value or another expression: looked at by hand (see the harness)
            verdict = "more-precise" if ka == "param" and kb == "value" else "less-precise"
        out.add(verdict)
        notes.append(f"{name}[{i}]: {va if ka != 'unknown' else '?'} vs {vb if kb != 'unknown' else '?'}")
    return out


def _types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    g = model.graph
    out = {}
    for vi in [*g.value_info, *g.output]:
        out.setdefault(vi.name, vi.type)
    return out


def classify_call(rec: dict) -> tuple[str, list[str]]:
    """The verdict of one infer_shapes call and notes saying why."""
    if "crash" in rec:
        return "crash", [rec["crash"]]
    if "not_a_model" in rec:
        return "same", []
    if "onnx_error" in rec:
        if rec.get("errors"):
            return "same", []
        why = "warning only: " + "; ".join(rec["warnings"][:3]) if rec.get("warnings") else "silent"
        return "missed-error", [rec["onnx_error"], why]
    if rec.get("errors") and rec["strict"]:  # without strict_mode onnx reports nothing either
        return "false-error", rec["errors"][:3]
    if "ours" not in rec:  # interrupted (a hang, or a BaseException out of shapeinfer)
        return "crash", ["shapeinfer did not return"]
    ref, ours = _types(rec["onnx"]), _types(rec["ours"])
    notes: list[str] = []
    verdicts: set[str] = set()
    for name, t in ref.items():
        verdicts |= compare_types(t, ours.get(name, onnx.TypeProto()), notes, name)
    for name in ours.keys() - ref.keys():
        if ours[name].WhichOneof("value") is not None:
            verdicts.add("more-precise")
            notes.append(f"{name}: only shapeinfer infers it")
    for v in ORDER:
        if v in verdicts:
            if v == "less-precise":
                g = rec["model"].graph
                if {t.name for t in g.initializer} & {i.name for i in g.input}:
                    notes.insert(0, "inputs with initializer defaults (values overridable, so not read)")
            if v in ("more-precise", "wrong"):  # onnxruntime judges where shapeinfer and onnx differ
                from oracle import check

                notes.insert(0, "onnxruntime: " + check(rec["model"], ours))
            return v, notes
    return "same", notes


# ---------------------------------------------------------------------------------- pytest hooks


def _on_alarm(signum, frame):
    raise Hang(f"test ran past {TEST_TIMEOUT}s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _calls.clear()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup" and report.skipped:
        _results[item.nodeid] = {"status": "skipped", "detail": []}
        return
    if report.when != "call":
        return
    try:
        _results[item.nodeid] = _status(report, call)
    except Exception as e:  # a bug here must not lose the other tests' results
        _results[item.nodeid] = {"status": "other-failure", "detail": [f"harness: {type(e).__name__}: {e}"]}


def _status(report, call) -> dict:
    calls = [classify_call(r) for r in _calls]
    if report.skipped:
        status, detail = "skipped", []
    elif report.passed:
        status, detail = "pass", []
        # a test that passes although a call differs is still a pass: its expectations hold
    else:
        exc = call.excinfo
        if exc is not None and exc.errisinstance(Hang):
            status, detail = "crash", ["hang: " + str(exc.value)]
        else:
            worst = min(calls, key=lambda c: ORDER.index(c[0]), default=("same", []))
            status, detail = worst
            if status == "same":
                text = str(exc.value).strip() if exc is not None else "?"
                if "Regex pattern did not match" in text and any(r.get("errors") for r in _calls):
                    # the error is reported; the test matches onnx's wording of it
                    status, detail = "error-message", [r for c in _calls for r in c.get("errors", [])][:2]
                else:
                    status, detail = "other-failure", [text.splitlines()[0][:300] if text else "?"]
    return {"status": status, "detail": detail[:6]}


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SHAPEINFER_SUITE_OUT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_results, f, indent=1, sort_keys=True)


def pytest_configure(config):
    si.infer_shapes = infer_shapes
