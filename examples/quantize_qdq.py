"""Quantize a torch.export (dynamo) model to int8 QDQ with onnxruntime, the shapes inferred by
shapeinfer.

onnxruntime's ``quant_pre_process`` runs onnxruntime's own symbolic shape inference first,
which fails on every torch.export model (``AttributeError: 'NoneType' object has no attribute
'HasField'``) and on many others ("Incomplete symbolic shape inference"). Skipping that step
(``skip_symbolic_shape=True``) leaves the shapes to onnx's inference, which writes ``unk__``
dims wherever a size is computed. shapeinfer writes the symbolic dims instead (``seq``,
``2*seq``), so the pre-processed model keeps a complete, named shape for every tensor::

    python examples/quantize_qdq.py examples/models/llama_dynamo.onnx out/ --bind batch=2,seq=16

writes ``out/shapes.onnx`` (what ``shapeinfer MODEL -o out/shapes.onnx`` writes),
``out/pre.onnx`` (``quant_pre_process(..., skip_symbolic_shape=True)``) and
``out/model.qdq.onnx`` (``quantize_static``, QDQ format, int8 activations and weights), then
compares the quantized model with the float one on inputs it was not calibrated on.

The calibration data here are random inputs at the ``--bind`` sizes: enough to show the
pipeline, not a recipe for accuracy (calibrate on real data). Needs ``onnxruntime``
(``pip install -e '.[verify]'`` in a checkout).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnx

import shapeinfer
from shapeinfer.analysis.verify import make_feeds


def quantize(src: str, out_dir: str, binding: dict[str, int], calibration: int = 4) -> dict:
    """Run the pipeline on ``src``, writing into ``out_dir``; returns the figures printed."""
    import onnxruntime
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    os.makedirs(out_dir, exist_ok=True)
    shapes = os.path.join(out_dir, "shapes.onnx")
    pre = os.path.join(out_dir, "pre.onnx")
    qdq = os.path.join(out_dir, "model.qdq.onnx")

    onnx.save(shapeinfer.infer_shapes(src), shapes)  # = shapeinfer SRC -o shapes.onnx
    quant_pre_process(shapes, pre, skip_symbolic_shape=True)

    graph = onnx.load(src, load_external_data=False).graph
    feeds = [make_feeds(graph, binding, seed) for seed in range(calibration)]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    quantize_static(
        pre, qdq, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8
    )

    cpu = ["CPUExecutionProvider"]
    ref = onnxruntime.InferenceSession(src, providers=cpu)
    got = onnxruntime.InferenceSession(qdq, providers=cpu)
    rel, corr = [], []
    for seed in range(100, 102):  # inputs the calibration did not see
        f = make_feeds(graph, binding, seed)
        a, b = ref.run(None, f)[0].astype(np.float64), got.run(None, f)[0].astype(np.float64)
        rel.append(float(np.linalg.norm(a - b) / np.linalg.norm(a)))
        corr.append(float(np.corrcoef(a.ravel(), b.ravel())[0, 1]))
    q = onnx.load(qdq, load_external_data=False)
    pre_vi = onnx.load(pre, load_external_data=False).graph.value_info
    return {
        "quantize_linear": sum(n.op_type == "QuantizeLinear" for n in q.graph.node),
        "dequantize_linear": sum(n.op_type == "DequantizeLinear" for n in q.graph.node),
        "relative_error": max(rel),
        "correlation": min(corr),
        "typed_tensors": len(pre_vi),
        "unk_dims": sum(d.dim_param.startswith("unk__") for v in pre_vi for d in v.type.tensor_type.shape.dim),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--bind", default="batch=2,seq=16", help="the sizes of the calibration inputs (SYM=N,...)")
    args = ap.parse_args(argv)
    binding = {k: int(v) for k, v in (kv.split("=") for kv in args.bind.split(",") if kv)}
    r = quantize(args.model, args.out_dir, binding)
    print(f"wrote {os.path.join(args.out_dir, 'model.qdq.onnx')}")
    print(f"{r['quantize_linear']} QuantizeLinear, {r['dequantize_linear']} DequantizeLinear nodes")
    print(f"pre-processed model: {r['typed_tensors']} tensors typed, {r['unk_dims']} unk__ dims")
    err, corr = r["relative_error"], r["correlation"]
    print(f"quantized vs float on unseen inputs: relative error {err:.4f}, correlation {corr:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
