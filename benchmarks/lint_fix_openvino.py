"""Does ``lint --fix --target openvino`` make the models OpenVINO refuses load, computing the same?

For every ``*.onnx`` under the given folders (found as ``shapeinfer lint`` finds them), with a
fixable finding under ``--target openvino``: the model is copied to a scratch folder, fixed
there (``shapeinfer lint --fix --target openvino``, in process), and

- OpenVINO (``read_model`` + ``compile_model("CPU")``, in a child process) is asked about the
  original and the fixed model;
- onnxruntime runs both at five bindings of the input symbols (all 1; all 3; 2 and 5
  alternating, so no two symbols are equal; 64 and 96 alternating and all 32, for images), at each the
  original runs at, and the outputs are compared
  (``testkit.ort_oracle.outputs_differ``: floats within 1e-4, 1e-2 for 16-bit floats and for
  models that compute in them: the written model carries inferred shapes, with which
  onnxruntime may fuse differently, and a removed Reshape may change a kernel's path).

Prints one line per such model and a summary; exit 1 when a fixed model OpenVINO refused still
fails without lint naming another reason, or computes other outputs than its original.
Models with external data are skipped.
Needs onnxruntime and openvino::

    python benchmarks/lint_fix_openvino.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from shapeinfer.lint.config import resolve  # noqa: E402
from shapeinfer.lint.runner import LintUsageError, discover, lint_path  # noqa: E402
from shapeinfer.symbolic import dims as D  # noqa: E402
from testkit import ort_oracle  # noqa: E402
from testkit.runtime_probe import one_line, probe  # noqa: E402


def _bindings(model: onnx.ModelProto) -> list[dict[str, int]]:
    """Sizes of the input symbols to compare at: all 1, all 3, 2 and 5 alternating (no two
    symbols equal), and for images 64 and 96 alternating (non-square) and all 32; a symbol naming channels
    is 3. A dim named by an
    expression (optimum's ``past_sequence_length + sequence_length``) is the expression's value:
    the model declares that size, so these are the sizes it is meant to run at."""
    syms = sorted({s for d in _named_dims(model) for s in D.symbols(D.parse(d))})
    if not syms:
        return [{}]
    channels = {s: 3 for s in syms if "channel" in s.lower()}  # optimum's num_channels: RGB
    syms = [s for s in syms if s not in channels]
    return [
        {**dict.fromkeys(syms, 1), **channels},
        {**dict.fromkeys(syms, 3), **channels},
        {**{s: (2, 5)[k % 2] for k, s in enumerate(syms)}, **channels},
        {**{s: (64, 96)[k % 2] for k, s in enumerate(syms)}, **channels},
        {**dict.fromkeys(syms, 32), **channels},
    ]


def _named_dims(model: onnx.ModelProto) -> set[str]:
    return {
        d.dim_param
        for vi in model.graph.input
        if vi.type.WhichOneof("value") == "tensor_type"
        for d in vi.type.tensor_type.shape.dim
        if d.HasField("dim_param")
    }


def _feeds(model: onnx.ModelProto, binding: dict[str, int]) -> dict:
    def shape_of(vi: onnx.ValueInfoProto) -> list[int]:
        dims = []
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.dim_param:
                dims.append(D.evaluate(D.parse(d.dim_param), binding))
            else:
                dims.append(1)
        return dims

    # integers in [0, 2): a valid token id, token type and position in every model
    return ort_oracle.feeds(model, binding, 0, ints=(0, 2), shape_of=shape_of)


def _tolerance(model: onnx.ModelProto) -> float | None:
    """16-bit floats' tolerance for a model that computes in them (float16 or bfloat16 weights)
    whatever its outputs' type: another kernel path (a MatMul reading a 2-D instead of a 3-D
    operand once a Reshape is gone) rounds differently by an ulp or two. None otherwise."""
    low = (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
    if any(t.data_type in low for t in model.graph.initializer):
        return ort_oracle.tolerance(np.float16)
    return None


def _compare(original: str, fixed: str) -> tuple[int, str | None]:
    """(bindings compared, None) when onnxruntime gives both models the same outputs at every
    binding the original runs at, else (bindings compared, what differs)."""
    a, b = onnx.load(original), onnx.load(fixed)
    compared = 0
    for binding in _bindings(a):
        try:
            feeds = _feeds(a, binding)
            want = ort_oracle.run(a, feeds)
        except Exception:  # the original does not run at these sizes: nothing to compare
            continue
        compared += 1
        try:
            got = ort_oracle.run(b, feeds)
        except Exception as e:
            return compared, f"fixed model fails at {binding}: {ort_oracle.error_line(e, 160)}"
        tol = _tolerance(a)
        diff = ort_oracle.outputs_differ(want, got, rtol=tol, atol=tol)
        if diff is not None:
            return compared, f"outputs differ at {binding}: {diff}"
    return compared, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="folders (searched recursively) or model files")
    a = ap.parse_args()
    try:
        files = discover(a.folders)  # as `shapeinfer lint` finds them
    except LintUsageError as e:
        raise SystemExit(f"lint_fix_openvino: {e}") from None
    cfg = resolve(target="openvino", isolated=True)  # what `lint --target openvino` resolves
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for k, path in enumerate(files):
            res = lint_path(path, cfg)
            if not any(f.fix for f in res.findings):
                continue
            model = onnx.load(path, load_external_data=False)
            if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
                rows.append((path, "skipped", "external data"))
                continue
            work = os.path.join(td, f"{k}.onnx")
            shutil.copyfile(path, work)
            fixed_res = lint_path(work, cfg, fix=True)
            codes = sorted({f.code for f in res.findings if f.fix})
            before = probe("openvino", path)
            if fixed_res.written is None:
                verdict = "REFUSED, NOT FIXED" if before else "not fixed"
                rows.append((path, verdict, f"fixable {codes}: {'; '.join(fixed_res.notes)[:160]}"))
                continue
            after = probe("openvino", fixed_res.written)
            compared, diff = _compare(path, fixed_res.written)
            left = sorted({f.code for f in fixed_res.findings if f.severity == "error"})
            if diff is not None:
                verdict = "DIFFERENT"
            elif before and after and left:
                verdict = "refused, unfixable left"  # lint still reports why: not the fix's job
            elif before and after:
                verdict = "STILL REFUSED"
            elif before:
                verdict = "fixed"
            else:
                verdict = "loaded before and after"
            detail = f"fixed {codes}, equal at {compared} sizes" + (f", errors left {left}" if left else "")
            detail += f"; openvino after: {one_line(after, 100)}" if after else ""
            rows.append((path, verdict, detail + (f"; {diff}" if diff else "")))
    for path, verdict, detail in rows:
        print(f"{verdict:24s} {os.path.relpath(path)}  {detail}")
    counts: dict[str, int] = {}
    for _, verdict, _ in rows:
        counts[verdict] = counts.get(verdict, 0) + 1
    print(f"{len(files)} models, {len(rows)} with a fixable finding for openvino:", counts)
    no_sizes = [p for p, v, d in rows if ", equal at 0 sizes" in d]
    if no_sizes:
        print(f"{len(no_sizes)} compared at no size (the original ran at none):", *no_sizes, sep="\n  ")
    bad = {"DIFFERENT", "STILL REFUSED", "REFUSED, NOT FIXED"}
    return 1 if bad & counts.keys() else 0


if __name__ == "__main__":
    sys.exit(main())
