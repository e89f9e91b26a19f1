"""Run onnx's own shape-inference test suite against shapeinfer and count the outcomes.

The four test files of onnx (``shape_inference_test.py``, ``data_propagation_test.py``,
``symbolic_shape_test.py``, ``model_inference_test.py``; 1,066 tests) are vendored unchanged in
``upstream/`` (Apache-2.0, see ``NOTICE``). :func:`run_suite` runs them with pytest in a
subprocess (memory capped, a time limit per test) with ``plugin.py`` replacing onnx's
``infer_shapes`` by shapeinfer's inference and lint, so each test's own expectations judge
shapeinfer. Every test gets one status:

- ``pass``: the test passed (an error the test expects was reported as an error finding);
- ``more-precise`` / ``less-precise``: it failed because shapeinfer knows more (a dim, a type
  or a rank onnx leaves open) or less than onnx;
- ``wrong``: a type, rank or dim value that differs from onnx's;

(for ``more-precise`` and ``wrong`` the model is also run in onnxruntime, ``oracle.py``, and
the first detail says whether onnxruntime's shapes confirm every dim shapeinfer inferred:
``verified``, ``refuted`` or ``not runnable`` with the reason);
- ``missed-error``: onnx's strict inference rejects the model, shapeinfer reports no error;
- ``false-error``: shapeinfer reports an error where onnx finds none;
- ``crash``: shapeinfer raised, or the test hung or ran out of memory;
- ``error-message``: the test expects an error and shapeinfer reports one, but the test also
  matches onnx's wording of the message;
- ``other-failure``: the test failed for another reason (see its detail);
- ``skipped``: skipped by the test itself (an onnx build option, a known onnx issue).

:data:`EXPLAINED` lists the tests whose failure was looked at and why it is acceptable.
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
UPSTREAM = SUITE / "upstream"
FILES = ("shape_inference_test.py", "data_propagation_test.py", "symbolic_shape_test.py", "model_inference_test.py")
STATUSES = (
    "pass",
    "more-precise",
    "less-precise",
    "wrong",
    "missed-error",
    "false-error",
    "crash",
    "error-message",
    "other-failure",
    "skipped",
)


def run_suite(select: str | None = None, per_test_timeout: int = 30, total_timeout: int = 1800) -> dict[str, dict]:
    """Run the vendored suite (``select``: a pytest ``-k`` expression) and return
    ``{test id: {"status": ..., "detail": [...]}}``. A suite that dies without results (a
    crash of the interpreter, the total timeout) raises RuntimeError with its output."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        env = dict(os.environ)
        env["SHAPEINFER_SUITE_OUT"] = out
        env["SHAPEINFER_SUITE_TIMEOUT"] = str(per_test_timeout)
        # SUITE for plugin.py and oracle.py, tests/ for support, the checkout for testkit (ort_oracle)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(SUITE), env.get("PYTHONPATH", ""), str(SUITE.parent), str(SUITE.parents[1])]
        )
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "plugin",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(UPSTREAM),
            "--confcutdir",
            str(UPSTREAM),
            "-c",
            str(SUITE / "pytest.ini"),
            "-o",
            "addopts=",
            "--tb=no",
            "-W",
            "ignore",
        ]
        if select:
            cmd += ["-k", select]
        cmd += [str(UPSTREAM / f) for f in FILES]
        return run_for_json(cmd, env=env, cwd=tmp, timeout=total_timeout, out=out, what="the onnx suite")


def figures(results: dict[str, dict]) -> Counter:
    """Tests per status."""
    return Counter(r["status"] for r in results.values())


def report(results: dict[str, dict], show: tuple[str, ...] = ()) -> str:
    """A summary line per status, then the tests of the statuses in ``show`` with their details."""
    c = figures(results)
    lines = [f"{len(results)} tests"]
    lines += [f"  {s:14} {c.get(s, 0)}" for s in STATUSES]
    for s in show:
        lines.append(f"\n{s}:")
        for tid, r in sorted(results.items()):
            if r["status"] == s:
                note = EXPLAINED.get(_short(tid))
                lines.append(f"  {_short(tid)}" + (f"  [{note}]" if note else ""))
                lines += [f"      {d}" for d in r["detail"]]
    return "\n".join(lines)


def _short(test_id: str) -> str:
    """``shape_inference_test.py::TestShapeInference::test_x[1]`` -> ``test_x[1]``."""
    return test_id.rsplit("::", 1)[-1]


_SAME_DILATED_POOL = (
    "wrong on onnx's side: onnxruntime's SAME pools pad for the kernel without its dilation "
    "(pool_attributes.h), so k2 s2 with dilations [2, 3] give 1x1 from 4x4 (4x4 from 9x9) where onnx "
    "gives 2x2 (5x5); onnxruntime verifies shapeinfer's dims (tests/inference/test_pool_edges.py)"
)

_SHORT_FOR_OUTPUT_SHAPE = (
    "the error is right: onnxruntime refuses a ConvTranspose of 16 with stride 2 and kernel 3 to an "
    "output_shape of 36 ('Expected input size 17 but got 16'); onnx's inference takes the output_shape "
    "as given (tests/inference/ops/test_ops_size_guards.py has onnxruntime's rule)"
)

_SAME_POOL_NEGATIVE_PAD = (
    "the error is right: onnxruntime pads a SAME MaxPool by (ceil(in/s) - 1)*s + k - in, -2 for a "
    "kernel of 2 and a stride of 4 over 4, and refuses it ('padding values must be non-negative'); "
    "onnx's reference clamps (tests/inference/ops/test_ops_size_guards.py has onnxruntime's rule)"
)

#: Tests whose non-pass status was checked by hand, and why it is acceptable (test name -> why).
EXPLAINED: dict[str, str] = {
    "test_average_pool_with_same_upper_padding_and_stride_and_dilation": _SAME_DILATED_POOL,
    "test_lppool_with_same_upper_padding_and_stride_and_dilation": _SAME_DILATED_POOL,
    "test_maxpool_with_same_upper_padding_and_stride_and_dilation": _SAME_DILATED_POOL,
    "test_maxpool_with_same_lower_padding_and_stride_and_dilation": _SAME_DILATED_POOL,
    "test_stft_reals": (
        "wrong on onnx's side: STFT's onesided defaults to 1, so 5-sample frames have 5//2 + 1 = 3 "
        "bins as shapeinfer says (onnxruntime agrees: tests/inference/test_onnx_suite.py); onnx gives 5"
    ),
    "test_conv_transpose_with_output_shape": _SHORT_FOR_OUTPUT_SHAPE,
    "test_maxpool_with_same_lower_padding_and_big_stride": _SAME_POOL_NEGATIVE_PAD,
    "test_conv_transpose_with_group_and_output_shape": _SHORT_FOR_OUTPUT_SHAPE,
    "test_duplicate_symbolic_shape": (
        "G006 is right: the graph declares output [2, unk__0] where it is [2, unk__0 + unk__1 + 3] for "
        "every input; onnx's inference replaces a contradicted declared symbol silently"
    ),
    "test_array_feature_extractor": (
        "expects onnx's own name for a fresh dim ('unk__0'); shapeinfer names it unk_<n>: same meaning"
    ),
    "test_get_symbolic_input_returns_tensor_shape_proto": (
        "tests onnx's C++ InferenceContext API through a custom schema's Python callback; shapeinfer calls "
        "that schema per node (no onnx data propagation), and the test reads what the callback saw last"
    ),
}
