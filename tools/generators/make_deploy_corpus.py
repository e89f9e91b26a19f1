"""Variants of float models as deployment pipelines leave them, for lint-vs-runtime.

    python tools/generators/make_deploy_corpus.py --out DIR MODEL_OR_DIR...

Needs onnxconverter-common and onnxruntime (an environment of its own: onnxconverter-common
pins its own onnx).

For each float model: onnxconverter-common's convert_float_to_float16 (keep_io_types False and
True) and onnxruntime's quantize_dynamic (QInt8 and QUInt8 weights). A transform that fails is
reported and skipped (that is the converter's limit, not a model for the table).
"""

import argparse
import glob
import os
import sys

import onnx


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            yield from sorted(glob.glob(os.path.join(p, "**", "*.onnx"), recursive=True))
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    from onnxconverter_common import float16
    from onnxruntime.quantization import QuantType, quantize_dynamic

    made = failed = 0
    for src in sources(a.models):
        m = onnx.load(src)
        if not any(t.data_type == onnx.TensorProto.FLOAT for t in m.graph.initializer):
            continue
        stem = os.path.basename(os.path.dirname(src)) + "__" + os.path.splitext(os.path.basename(src))[0]
        for keep in (False, True):
            out = os.path.join(a.out, f"{stem}.fp16{'_io' if keep else ''}.onnx")
            try:
                onnx.save(float16.convert_float_to_float16(onnx.load(src), keep_io_types=keep), out)
                made += 1
            except Exception as e:
                failed += 1
                print("fp16 failed:", src, type(e).__name__, str(e)[:120], file=sys.stderr)
        for qt, tag in ((QuantType.QInt8, "qdyn_s8"), (QuantType.QUInt8, "qdyn_u8")):
            out = os.path.join(a.out, f"{stem}.{tag}.onnx")
            try:
                quantize_dynamic(src, out, weight_type=qt)
                made += 1
            except Exception as e:
                failed += 1
                print("quantize failed:", src, type(e).__name__, str(e)[:120], file=sys.stderr)
                if os.path.exists(out):
                    os.remove(out)
    print(f"{made} variants written, {failed} transforms failed")


main()
