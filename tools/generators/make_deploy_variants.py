"""Make deployment variants of ONNX exports with onnxruntime's and onnx's real pipelines.

What a pre-deployment pass sees has been through onnxruntime's transformers optimizer, its
offline graph optimizer, quantization, fp16 conversion or onnxsim / onnxslim. This script runs
those pipelines on exports and keeps each variant that onnxruntime loads and runs.

Needs (none of it is a shapeinfer dependency)::

    pip install onnxruntime onnxconverter-common onnxsim onnxslim torch==2.13.0
    # torch only because onnxruntime.transformers imports it; the CPU wheel is enough

Usage::

    # the test fixtures (tests/models/deploy/, listed in its README.md) from examples/models
    python tools/generators/make_deploy_variants.py --fixtures
    # every pipeline on every given export, into OUT (for measurements, not the repo)
    python tools/generators/make_deploy_variants.py MODEL.onnx ... --out /tmp/variants [--pipelines tfopt,qdq]
    python tools/generators/make_deploy_variants.py --list

A variant is written as ``<model stem>.<pipeline>.onnx``; a pipeline chain such as
``tfopt+qdyn`` applies its steps in order. A variant that fails to build, or that onnxruntime
cannot load and run at two bindings of the input symbols, is reported and not written. Runs
are deterministic (fixed seeds for calibration data and run checks).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # testkit
from testkit import ort_oracle  # noqa: E402
from testkit.roundtrip import BINDINGS, feeds  # noqa: E402  (the round trip's bindings and inputs)

# The transformers optimizer's model type, heads and hidden size (0: detect) by export name
# prefix; the exports in examples/models are 4-layer models of hidden size 64 with 4 heads.
FAMILIES = {"bert": ("bert", 4, 64), "gpt2": ("gpt2", 4, 64), "llama": ("gpt2", 4, 64), "vit": ("vit", 4, 64)}


def family(stem: str) -> tuple[str, int, int]:
    """(model type, num_heads, hidden_size) for the transformers optimizer, from the export's name."""
    for prefix, found in FAMILIES.items():
        if stem.startswith(prefix):
            return found
    return ("bert", 0, 0)


def runs_in_ort(path: Path) -> None:
    """Raise unless onnxruntime loads ``path`` and runs it at both bindings."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model = onnx.load(str(path), load_external_data=False)
    for b in BINDINGS:
        sess.run(None, feeds(model, b, seed=0))


# ---- the pipelines: each takes a source path and writes a destination path ----------------


def _tfopt(src: Path, dst: Path, **options) -> None:
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    model_type, num_heads, hidden_size = family(src.name)
    model_type = options.pop("model_type", model_type)
    num_heads = options.pop("num_heads", num_heads)
    hidden_size = options.pop("hidden_size", hidden_size)
    opt_level = options.pop("opt_level", None)  # None: the optimizer's default for the model type
    float16 = options.pop("float16", False)
    fusion = FusionOptions(model_type)
    for k, v in options.items():
        setattr(fusion, k, v)
    optimized = optimize_model(
        str(src),
        model_type=model_type,
        num_heads=num_heads,
        hidden_size=hidden_size,
        opt_level=opt_level,
        optimization_options=fusion,
    )
    if float16:
        optimized.convert_float_to_float16(keep_io_types=True)
    optimized.save_model_to_file(str(dst))


def tfopt(src: Path, dst: Path) -> None:
    """onnxruntime.transformers optimizer at the model type's default level (EmbedLayerNorm, Attention ...)."""
    _tfopt(src, dst)


def tfopt_o0(src: Path, dst: Path) -> None:
    """Transformers optimizer, python fusions only (opt_level 0)."""
    _tfopt(src, dst, opt_level=0)


def tfopt_fp16(src: Path, dst: Path) -> None:
    """Transformers optimizer, then its own float16 conversion (keep_io_types)."""
    _tfopt(src, dst, float16=True)


def tfopt_rope(src: Path, dst: Path) -> None:
    """Transformers optimizer as model type qwen3 (RoPE, GroupQueryAttention, RMSNorm fusions)."""
    _tfopt(src, dst, model_type="qwen3", num_heads=4, hidden_size=512)


def tfopt_mha(src: Path, dst: Path) -> None:
    """Transformers optimizer emitting MultiHeadAttention instead of Attention."""
    _tfopt(src, dst, use_multi_head_attention=True)


def tfopt_fastgelu(src: Path, dst: Path) -> None:
    """Transformers optimizer with Gelu approximation (FastGelu) and GemmFastGelu fusion."""
    _tfopt(src, dst, enable_gelu_approximation=True, enable_gemm_fast_gelu=True)


def tfopt_o2(src: Path, dst: Path) -> None:
    """Transformers optimizer after onnxruntime's own graph optimizer (opt_level 2)."""
    _tfopt(src, dst, opt_level=2)


def _ort_offline(src: Path, dst: Path, level: str) -> None:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    so.optimized_model_filepath = str(dst)
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])


def ortbasic(src: Path, dst: Path) -> None:
    """onnxruntime offline optimizer at ORT_ENABLE_BASIC (constant folding, onnx-domain rewrites)."""
    _ort_offline(src, dst, "ORT_ENABLE_BASIC")


def ortext(src: Path, dst: Path) -> None:
    """onnxruntime offline optimizer at ORT_ENABLE_EXTENDED (FusedMatMul, BiasGelu, SkipLayerNorm ...)."""
    _ort_offline(src, dst, "ORT_ENABLE_EXTENDED")


def ortall(src: Path, dst: Path) -> None:
    """onnxruntime offline optimizer at ORT_ENABLE_ALL (adds nchwc Conv / ReorderInput / ReorderOutput)."""
    _ort_offline(src, dst, "ORT_ENABLE_ALL")


def qdyn(src: Path, dst: Path) -> None:
    """onnxruntime.quantization.quantize_dynamic, int8 weights (DynamicQuantizeLinear, MatMulInteger, Q* ops)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # DefaultTensorType: after the transformers optimizer onnx cannot type the contrib ops' outputs
    quantize_dynamic(
        str(src), str(dst), weight_type=QuantType.QInt8, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}
    )


class _Calibration:
    """Calibration reader for quantize_static: a few runs at the two bindings."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self._items = iter([feeds(model, b, seed=s) for s in range(2) for b in BINDINGS])

    def get_next(self):
        return next(self._items, None)

    def rewind(self) -> None:  # pragma: no cover - quantize_static may call it
        pass


def qdq(src: Path, dst: Path) -> None:
    """onnxruntime.quantization.quantize_static in QDQ format (QuantizeLinear -> DequantizeLinear pairs)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model = onnx.load(str(src))
    quantize_static(
        str(src),
        str(dst),
        _Calibration(model),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )


def _nbits(src: Path, dst: Path, op_types: tuple[str, ...]) -> None:
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    config = DefaultWeightOnlyQuantConfig(
        block_size=32, is_symmetric=True, op_types_to_quantize=op_types, quant_axes=(("Gather", 1),)
    )
    quant = MatMulNBitsQuantizer(onnx.load(str(src)), algo_config=config)
    quant.process()
    quant.model.save_model_to_file(str(dst))


def nbits(src: Path, dst: Path) -> None:
    """MatMulNBitsQuantizer, 4-bit blocks of 32 on MatMul weights (MatMulNBits)."""
    _nbits(src, dst, ("MatMul",))


def nbits_gather(src: Path, dst: Path) -> None:
    """MatMulNBitsQuantizer on MatMul and Gather (GatherBlockQuantized; raises the default opset to 21)."""
    _nbits(src, dst, ("MatMul", "Gather"))


def fp16(src: Path, dst: Path) -> None:
    """onnxconverter_common.float16, keeping float32 graph inputs and outputs."""
    from onnxconverter_common import float16

    onnx.save(float16.convert_float_to_float16(onnx.load(str(src)), keep_io_types=True), str(dst))


def onnxsim(src: Path, dst: Path) -> None:
    """onnxsim.simplify (constant folding, shape-driven simplification)."""
    import onnxsim as sim

    model, ok = sim.simplify(onnx.load(str(src)))
    if not ok:
        raise RuntimeError("onnxsim could not validate the simplified model")
    onnx.save(model, str(dst))


def onnxslim(src: Path, dst: Path) -> None:
    """onnxslim.slim (constant folding, pattern fusion, dead-code removal)."""
    import onnxslim as slim

    onnx.save(slim.slim(onnx.load(str(src))), str(dst))


PIPELINES: dict[str, Callable[[Path, Path], None]] = {
    f.__name__: f
    for f in (
        tfopt,
        tfopt_o0,
        tfopt_mha,
        tfopt_fastgelu,
        tfopt_o2,
        tfopt_fp16,
        tfopt_rope,
        ortbasic,
        ortext,
        ortall,
        qdyn,
        qdq,
        nbits,
        nbits_gather,
        fp16,
        onnxsim,
        onnxslim,
    )
}

# What --all makes of each export: single pipelines and a few real chains.
DEFAULT_CHAINS = (
    "tfopt",
    "tfopt_o0",
    "tfopt_mha",
    "tfopt_fastgelu",
    "tfopt_o2",
    "tfopt_fp16",
    "tfopt_rope",
    "tfopt+qdyn",
    "tfopt+nbits",
    "ortext",
    "ortall",
    "qdyn",
    "qdq",
    "nbits",
    "nbits_gather",
    "fp16",
    "onnxsim",
    "onnxslim",
    "onnxsim+ortall",
)

# The test fixtures: (source in examples/models, chain, the ops it exists to cover).
FIXTURES = (
    ("bert_ts", "tfopt", "EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu"),
    (
        "bert_ts",
        "tfopt_mha+fp16",
        "MultiHeadAttention, EmbedLayerNormalization, SkipLayerNormalization, BiasGelu in fp16",
    ),
    ("bert_ts", "tfopt+qdyn", "QEmbedLayerNormalization, QAttention, DynamicQuantizeLinear, MatMulInteger"),
    ("gpt2_ts", "tfopt+nbits_gather", "MatMulNBits, GatherBlockQuantized, FastGelu, SkipLayerNormalization"),
    ("vit_dynamo", "ortall", "nchwc Conv, ReorderOutput, FusedMatMul, BiasGelu, SkipLayerNormalization"),
    (
        "llama_ts",
        "tfopt+ortext+nbits",
        "SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization (default domain), QuickGelu, FusedMatMul, "
        "MatMulNBits",
    ),
    ("llama_dynamo", "qdq", "QuantizeLinear -> DequantizeLinear on a Range delta, QDQ around every op"),
)


QUANT_OPS = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger")


def contrib_ops(path: Path) -> collections.Counter:
    """Count of node ops outside the default domain, plus the default-domain ops onnx has no schema for."""
    model = onnx.load(str(path), load_external_data=False)
    count: collections.Counter = collections.Counter()
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            count[f"{node.domain}:{node.op_type}"] += 1
        elif not onnx.defs.has(node.op_type) or node.op_type in QUANT_OPS:
            count[node.op_type] += 1
    return count


def make(src: Path, chain: str, dst: Path) -> str | None:
    """Build ``dst`` from ``src`` through ``chain`` ('a+b'); None on success, else why it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        cur = src
        for i, step in enumerate(chain.split("+")):
            nxt = Path(tmp) / f"step{i}.onnx"
            try:
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    PIPELINES[step](cur, nxt)
            except Exception as e:  # a pipeline's own failure is a fact about that variant
                return f"{step} failed: {type(e).__name__}: {ort_oracle.error_line(e)}"
            cur = nxt
        try:
            runs_in_ort(cur)
        except Exception as e:
            return f"onnxruntime cannot run it: {ort_oracle.error_line(e)}"
        model = onnx.load(str(cur))
        onnx.save(model, str(dst))
    return None


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, help="output folder for MODEL variants")
    ap.add_argument("--pipelines", default=",".join(DEFAULT_CHAINS), help="comma-separated chains (a+b)")
    ap.add_argument("--fixtures", action="store_true", help="(re)make tests/models/deploy from examples/models")
    ap.add_argument("--list", action="store_true", help="list the pipelines and fixtures")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if args.list:
        for name, fn in PIPELINES.items():
            print(f"{name:16} {fn.__doc__.splitlines()[0]}")
        for stem, chain, ops in FIXTURES:
            print(f"fixture {stem}.{chain.replace('+', '.')}.onnx: {ops}")
        return 0
    if args.fixtures:
        jobs = [(ROOT / "examples/models" / f"{s}.onnx", c) for s, c, _ in FIXTURES]
        out = ROOT / "tests/models/deploy"
    else:
        if not args.models or args.out is None:
            ap.error("give MODEL.onnx ... and --out, or --fixtures")
        for chain in args.pipelines.split(","):
            bad = [s for s in chain.split("+") if s not in PIPELINES]
            if bad:
                ap.error(f"unknown pipeline {bad[0]!r}; --list shows them")
        jobs = [(m, c) for m in args.models for c in args.pipelines.split(",")]
        out = args.out
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for src, chain in jobs:
        dst = out / f"{src.stem}.{chain.replace('+', '.')}.onnx"
        why = make(src, chain, dst)
        if why:
            failed += 1
            print(f"SKIP {dst.name}: {why}", flush=True)
        else:
            ops = ", ".join(f"{k} x{v}" for k, v in sorted(contrib_ops(dst).items()))
            print(f"ok   {dst.name} ({dst.stat().st_size // 1024} KB): {ops or 'no contrib ops'}", flush=True)
    return 1 if args.fixtures and failed else 0


if __name__ == "__main__":
    sys.exit(main())
