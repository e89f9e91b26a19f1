"""Tiny random models built by onnxruntime-genai's model builder (CPU), for lint vs runtime.

    python tools/generators/make_genai_corpus.py OUT_DIR [ARCH,ARCH...]

Needs onnxruntime-genai 0.18 with onnx_ir, torch and transformers 5 (the exporter environment,
not the project's); phi3 and mistral need sentencepiece for their tokenizers. Each architecture
(llama, qwen2, phi3, mistral, gemma2, whisper) is saved with save_pretrained under OUT_DIR/hf
(no hub) and built at fp32, int4 and fp16 for the CPU.
"""

import os
import subprocess
import sys

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)

import torch
import transformers as T

OUT = sys.argv[1]
ONLY = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
torch.manual_seed(0)
small = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    vocab_size=256,
    max_position_embeddings=128,
)
ARCHS = {
    "llama": (T.LlamaConfig(num_key_value_heads=2, **small), T.LlamaForCausalLM),
    "qwen2": (T.Qwen2Config(num_key_value_heads=2, **small), T.Qwen2ForCausalLM),
    "phi3": (T.Phi3Config(num_key_value_heads=4, pad_token_id=0, **small), T.Phi3ForCausalLM),
    "mistral": (T.MistralConfig(num_key_value_heads=2, **small), T.MistralForCausalLM),
    "gemma2": (T.Gemma2Config(num_key_value_heads=2, head_dim=16, **small), T.Gemma2ForCausalLM),
    "whisper": (
        T.WhisperConfig(
            d_model=64,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=128,
            decoder_ffn_dim=128,
            vocab_size=256,
            num_mel_bins=80,
            max_source_positions=1500,
            max_target_positions=64,
            decoder_start_token_id=1,
            pad_token_id=0,
            eos_token_id=2,
            bos_token_id=1,
        ),
        T.WhisperForConditionalGeneration,
    ),
}
for name, (cfg, cls) in ARCHS.items():
    if ONLY and name not in ONLY:
        continue
    hf = os.path.join(OUT, "hf", name)
    cls(cfg).eval().save_pretrained(hf)
    for prec in ("fp32", "int4", "fp16"):
        dst = os.path.join(OUT, f"{name}_{prec}")
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "onnxruntime_genai.models.builder",
                "-i",
                hf,
                "-o",
                dst,
                "-p",
                prec,
                "-e",
                "cpu",
                "-c",
                os.path.join(OUT, "cache"),
            ],
            capture_output=True,
            text=True,
        )
        tail = (r.stderr.strip().splitlines() or [""])[-1][:200]
        print(
            name,
            prec,
            "ok" if r.returncode == 0 else f"FAILED {tail}",
            sorted(os.listdir(dst)) if os.path.isdir(dst) else "",
            flush=True,
        )
