"""Run onnx-shape-inference's own test suite against its original and through shapeinfer's drop-in.

onnx-shape-inference ships its unit tests inside its package (``onnx_shape_inference/*_test.py``,
``onnx_shape_inference/_ops/*_test.py``: 1,879 tests in 0.4.0), so nothing is vendored: the
installed package's files run (the ``test`` extra installs onnx-shape-inference 0.4.0 and the
``parameterized`` its tests import). :func:`run_suite` runs them with pytest in a subprocess, with
``osi_plugin.py`` loaded: with ``dropin=True`` it puts
:func:`shapeinfer.compat.onnx_shape_inference.infer_symbolic_shapes` in place of the original's
(its entry point, its exceptions, and every per-op rule its registry hands out), so each test's own
expectations judge the drop-in; with ``dropin=False`` the original answers, as a reference.

Each test is ``pass``, ``fail`` or ``skipped``, and is *through the drop-in* when it ran the
drop-in and did not call the original's inference internals itself (its graph walk, its
anchor/constraint pass, its function inliner); the others test the original's internal API (its
expression parser, its context's merge methods, its registry, its constraint solver) and pass
alike either way. A test that fails through the drop-in gets one :func:`category`, decided from
what it recorded (onnxruntime's verdict on the dims the drop-in wrote, the diagnostics shapeinfer
logged, what the drop-in raised).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # tests/, for support
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if str(Path(__file__).resolve().parents[2]) not in sys.path:  # the checkout, for testkit
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from support.suite_runner import run_for_json

SUITE = Path(__file__).resolve().parent

#: The version whose test files the figures below were measured on.
VERSION = "0.4.0"

#: Why a test that fails through the drop-in fails, by category (see :func:`category`).
CATEGORIES: dict[str, str] = {
    "value-unknown": (
        "an element value of a shape tensor (SYM_DATA_KEY) the original knows and shapeinfer does not "
        "(Where of an unknown condition between equal branches), or a value it names where the drop-in "
        "writes none"
    ),
    "verified": (
        "onnxruntime runs the test's model and confirms every dim the drop-in wrote: the test expects "
        "other dims (the original assumes a slice in bounds, a pool window inside the input, leaves a "
        "dim open) or an error for a model that runs"
    ),
    "no-rule": (
        "an op shapeinfer has no rule for (onnxruntime contrib ops of 2026 such as GatedDeltaNet, "
        "SparseAttentionIndexer, CausalConvWithState; ai.onnx.preview): its outputs stay unknown"
    ),
    "known-rank": (
        "the drop-in knows a rank the original leaves unknown (an input of unknown rank whose rank the "
        "op's other inputs or definition fix: Conv from its weight, Tile from its input)"
    ),
    "invalid-node": (
        "the test's node is one onnxruntime refuses to load or run (a required input or attribute "
        "left out, an attribute of another opset, an axis out of range, inputs of another rank): what "
        "the drop-in makes of a model that cannot run differs from what the test expects of the original"
    ),
    "unjudged": (
        "onnxruntime cannot run the test's model as built (an input without an element type or rank, "
        "an unnamed dim): differences in what is inferred for such partial inputs"
    ),
    "serialiser": "onnx_ir's own serialiser refuses the model (a Constant of a sparse tensor)",
    "refuted": "onnxruntime contradicts a dim the drop-in wrote",
}


def installed() -> Path | None:
    """The installed onnx_shape_inference package's folder, or None."""
    try:
        import onnx_shape_inference
    except ImportError:
        return None
    return Path(onnx_shape_inference.__file__).resolve().parent


def run_suite(dropin: bool, select: str | None = None, timeout: int = 900) -> dict[str, dict]:
    """Run the installed package's tests (``select``: a pytest ``-k`` expression) with the drop-in
    in place (``dropin``) or the original, and return ``{test id: record}`` (see ``osi_plugin.py``).
    Raises RuntimeError when the run gives no results."""
    package = installed()
    if package is None:
        raise RuntimeError("onnx-shape-inference is not installed (pip install 'onnx-shape-inference==0.4.0')")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        env = dict(os.environ)
        env["SHAPEINFER_OSI_OUT"] = out
        env["SHAPEINFER_OSI_DROPIN"] = "1" if dropin else "0"
        # SUITE for osi_plugin.py and osi_oracle.py, tests/ for support, the checkout for testkit
        env["PYTHONPATH"] = os.pathsep.join(
            [str(SUITE), env.get("PYTHONPATH", ""), str(SUITE.parent), str(SUITE.parents[1])]
        )
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "osi_plugin", "-p", "no:cacheprovider"]
        cmd += ["--rootdir", str(package), "--confcutdir", str(package), "-c", str(SUITE / "pytest.ini")]
        cmd += ["-o", "addopts=", "--tb=no", "-W", "ignore"]
        if select:
            cmd += ["-k", select]
        cmd.append(str(package))
        return run_for_json(cmd, env=env, cwd=tmp, timeout=timeout, out=out, what="onnx-shape-inference's suite")


def through_dropin(record: dict) -> bool:
    """Whether a test judged the drop-in: it ran it and called none of the original's internals."""
    return record["dropin"] and not record["original"]


def category(record: dict) -> str:
    """Why a test failed through the drop-in: one key of :data:`CATEGORIES`."""
    verdict = record.get("onnxruntime", "")
    detail = record.get("detail", "")
    if verdict.startswith("refuted"):
        return "refuted"
    if "unexpectedly None" in detail and "no shape" not in detail:
        return "value-unknown"
    if verdict.startswith("verified"):
        return "verified"
    if "G007" in record.get("codes", ()):
        return "no-rule"
    if detail.startswith("SerdeError"):
        return "serialiser"
    if (" is not None" in detail and detail.startswith("AssertionError: Shape(")) or (
        "shape=Shape(" in detail.split(" != ")[0] and "shape=None)" in detail.split(" != ")[-1]
    ):
        return "known-rank"
    if verdict.startswith("refused"):
        return "invalid-node"
    return "unjudged"


def figures(results: dict[str, dict]) -> dict[str, Counter]:
    """Outcomes of the tests through the drop-in (``dropin``), of the others (``internal``), and
    the categories of the failures through the drop-in (``categories``)."""
    out = {"dropin": Counter(), "internal": Counter(), "categories": Counter()}
    for r in results.values():
        if through_dropin(r):
            out["dropin"][r["status"]] += 1
            if r["status"] == "fail":
                out["categories"][category(r)] += 1
        else:
            out["internal"][r["status"]] += 1
    return out


def report(results: dict[str, dict], show: tuple[str, ...] = ()) -> str:
    """The figures, then the failing tests of the categories in ``show`` with their details."""
    f = figures(results)
    lines = [f"{len(results)} tests", f"  through the drop-in: {dict(f['dropin'])}"]
    lines.append(f"  internal: {dict(f['internal'])}")
    lines += [f"  {c:13} {f['categories'].get(c, 0)}" for c in CATEGORIES]
    for c in show:
        lines.append(f"\n{c}:")
        for tid, r in sorted(results.items()):
            if r["status"] == "fail" and through_dropin(r) and category(r) == c:
                lines.append(f"  {tid.rsplit('/', 1)[-1]}")
                lines.append(f"      {r['detail'][:200]}")
                lines.append(f"      onnxruntime: {r.get('onnxruntime', '')[:200]}")
    return "\n".join(lines)


if __name__ == "__main__":  # python tests/osi_suite/osi_harness.py [category ...]: the figures and the failures
    original = run_suite(dropin=False)
    print("original:", dict(Counter(r["status"] for r in original.values())))
    print(report(run_suite(dropin=True), show=tuple(sys.argv[1:])))
