"""Optimize inside If branches, measured on optimum's merged decoders (issue 23).

    python benchmarks/merged_decoders.py DIR    (DIR: what tools/generators/make_merged_decoders.py wrote)

For each DIR/NAME/ holding ``decoder_model_merged.onnx``, ``decoder_model.onnx`` and
``decoder_with_past_model.onnx``, prints one row: nodes (every graph counted, If branches
included) of the merged file before and after ``shapeinfer optimize``, of the two unmerged
decoders after it and their sum, the merged result's ratio to that sum (the target: within
10%), whether the written file passes ``onnx.checker.check_model(full_check=True)``, and the
largest difference between the outputs of the original and the optimized merged file in
onnxruntime at ``use_cache_branch`` false (a prompt of 5 tokens) and true (1 token after 4
cached), batch 2. Exit status 1 when a row misses a target (ratio over 1.10, a checker
refusal, an output not equal within 1e-5).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

import shapeinfer

BATCH, PROMPT, PAST, ENCODER = 2, 5, 4, 6


def total_nodes(g: onnx.GraphProto) -> int:
    n = 0
    for node in g.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += total_nodes(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                n += sum(total_nodes(sg) for sg in a.graphs)
    return n


def feeds(model: onnx.ModelProto, cache: bool, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for one decoding step: with ``cache``, one new token after PAST cached ones."""
    rng = np.random.default_rng(seed)
    seq = 1 if cache else PROMPT
    past = PAST if cache else 1
    out = {}
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        name = vi.name
        dims = []
        for d in tt.shape.dim:
            p = d.dim_param
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif p == "batch_size":
                dims.append(BATCH)
            elif "encoder" in p:
                dims.append(ENCODER)
            elif "past" in p:
                dims.append(past)
            else:
                dims.append(seq)
        if name == "use_cache_branch":
            out[name] = np.array([cache])
        elif name == "attention_mask":
            out[name] = np.ones((BATCH, past + seq if cache else seq), dtype=np.int64)
        elif name == "encoder_attention_mask":
            out[name] = np.ones((BATCH, ENCODER), dtype=np.int64)
        elif name == "position_ids":
            start = past if cache else 0
            out[name] = np.tile(np.arange(start, start + seq, dtype=np.int64), (BATCH, 1))
        elif name.startswith("input_ids") or name.startswith("decoder_input_ids"):
            out[name] = rng.integers(4, 64, size=dims, dtype=np.int64)  # within every vocabulary here
        else:
            dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
            out[name] = rng.standard_normal(dims).astype(dt)
    return out


def run(path: str, inputs: dict) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def row(folder: Path, tmp: Path) -> tuple[list, bool]:
    merged = folder / "decoder_model_merged.onnx"
    original = onnx.load(str(merged))
    opt = shapeinfer.optimize(str(merged))
    out = tmp / f"{folder.name}.merged.opt.onnx"
    onnx.save(opt, str(out))
    parts = [
        total_nodes(shapeinfer.optimize(str(folder / f)).graph)
        for f in ("decoder_model.onnx", "decoder_with_past_model.onnx")
    ]
    after = total_nodes(opt.graph)
    ratio = after / sum(parts)
    try:
        onnx.checker.check_model(str(out), full_check=True)
        checker = "ok"
    except Exception as e:  # the table shows it
        checker = f"refused: {str(e).splitlines()[0][:60]}"
    diffs = []
    for cache in (False, True):
        inputs = feeds(original, cache)
        a, b = run(str(merged), inputs), run(str(out), inputs)
        diffs.append(max(float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0 for x, y in zip(a, b)))
    ok = ratio <= 1.10 and checker == "ok" and all(d <= 1e-5 for d in diffs)
    return [
        folder.name,
        total_nodes(original.graph),
        after,
        parts[0],
        parts[1],
        sum(parts),
        f"{ratio:.3f}",
        checker,
        *(f"{d:.1e}" for d in diffs),
    ], ok


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python benchmarks/merged_decoders.py DIR  (the folder make_merged_decoders.py wrote)")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    root = Path(argv[0])
    if not root.is_dir():
        print(f"merged_decoders: {root} is not a folder (make it with tools/generators/make_merged_decoders.py)")
        return 2
    head = [
        "model",
        "merged",
        "merged opt",
        "decoder opt",
        "with_past opt",
        "sum",
        "ratio",
        "full_check",
        "diff no-cache",
        "diff cache",
    ]
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for folder in sorted(p.parent for p in root.glob("*/decoder_model_merged.onnx")):
            r, good = row(folder, Path(tmp))
            rows.append(r)
            ok &= good
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head, *rows]:
        print("  ".join(str(x).rjust(w) for x, w in zip(r, widths)))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
