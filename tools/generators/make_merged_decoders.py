"""Make optimum's merged decoders for issue 23 (optimize inside If branches).

    venv-export/bin/python tools/generators/make_merged_decoders.py OUT_DIR [--only gpt2,llama,whisper,t5]

Needs the exporter environment described in ``make_exporter_models.py`` (torch CPU, transformers,
optimum-onnx); nothing in the package or the tests imports this. Tiny random-initialised models
(seed 0) are built from configs in code and saved with ``save_pretrained`` under OUT_DIR/hf/ (no
model hub). For each architecture OUT_DIR/NAME/ gets ``decoder_model.onnx`` (no past in),
``decoder_with_past_model.onnx`` and ``decoder_model_merged.onnx`` (both in one graph, an ``If`` on
``use_cache_branch``), made by optimum's export with its post-processing on (the merge):

- ``gpt2``, ``llama`` (and ``gpt2-tiny``, one layer of width 32 and 64 tokens, for the test
  suite's ``tests/models/exporters/gpt2_tiny_merged.onnx``): the decoder configs exported one by one and merged
  (``make_exporter_models._merged_decoder``: optimum's current causal-LM export writes one graph);
- ``t5`` (``text2text-generation-with-past``) and ``whisper``
  (``automatic-speech-recognition-with-past``): ``main_export``, which still merges seq2seq
  decoders (its ``encoder_model.onnx`` is written too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ARCHS = ("gpt2", "llama", "whisper", "t5", "gpt2-tiny")


def _configs() -> dict:
    from make_exporter_models import VOCAB
    from make_exporter_models import _configs as exporter_configs
    from transformers import GPT2Config, WhisperConfig

    configs = {k: v for k, v in exporter_configs().items() if k in ("gpt2", "llama", "t5")}
    configs["whisper"] = WhisperConfig(
        vocab_size=VOCAB,
        num_mel_bins=80,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=1500,
        max_target_positions=448,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=3,
        decoder_start_token_id=1,
    )
    # for the test suite (tests/models/exporters/gpt2_tiny_merged.onnx): one layer, 32 wide
    configs["gpt2-tiny"] = GPT2Config(
        vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=32, bos_token_id=1, eos_token_id=2, pad_token_id=3
    )
    return configs


def _checkpoint(name: str, config, out: Path) -> Path:
    import torch
    import transformers
    from make_exporter_models import _tokenizer

    cls = {
        "t5": transformers.T5ForConditionalGeneration,
        "whisper": transformers.WhisperForConditionalGeneration,
    }.get(name, transformers.AutoModelForCausalLM)
    torch.manual_seed(0)
    model = cls.from_config(config) if hasattr(cls, "from_config") else cls(config)
    model.eval()
    path = out / "hf" / name
    model.save_pretrained(path)
    _tokenizer(path)
    return path


def make(name: str, out: Path) -> None:
    from make_exporter_models import _merged_decoder
    from optimum.exporters.onnx import main_export

    hf = _checkpoint(name, _configs()[name], out)
    dest = out / name
    if name in ("gpt2", "llama", "gpt2-tiny"):
        _merged_decoder(hf, dest)
    else:
        task = "text2text-generation-with-past" if name == "t5" else "automatic-speech-recognition-with-past"
        main_export(str(hf), dest, task=task, library_name="transformers", no_post_process=False)
    if not (dest / "decoder_model_merged.onnx").exists():
        raise SystemExit(f"{name}: optimum wrote no decoder_model_merged.onnx in {dest}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--only", default=",".join(ARCHS))
    args = ap.parse_args(argv)
    for name in args.only.split(","):
        print(f"== {name}", flush=True)
        make(name, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
