"""Make ONNX models the way users get them from exporters, annotations kept (issue 21's corpus).

    python tools/generators/make_exporter_models.py OUT_DIR [--only genai,optimum,dynamo]

Needs its own environment (not the project's; nothing in the package or the tests imports this):

    python3 -m venv venv-export
    venv-export/bin/pip install torch==2.13.0 'optimum-onnx[onnxruntime]' onnxruntime-genai==0.15.2 onnx onnxscript

with a CPU build of torch (from PyTorch's CPU wheel index, or a local CPU wheel). optimum-onnx
0.1.0 pins transformers < 4.58, and onnxruntime-genai 0.17 and later import classes that only
transformers 5 has, so 0.15.2 is the newest genai builder that runs beside optimum-onnx.

No model hub is needed: tiny random-initialised models (seed 0) are built from configs and saved
with ``save_pretrained`` under OUT_DIR/hf/, with a word-level tokenizer made locally (the genai
builder copies one), and every exporter reads from those folders. What it writes:

- ``genai/llama-fp32``, ``genai/llama-int4``, ``genai/qwen2-fp32``, ``genai/phi3-int4``:
  ``python -m onnxruntime_genai.models.builder -e cpu`` (``model.onnx`` + ``model.onnx.data``);
- ``optimum/<arch>-merged`` for gpt2, llama and qwen2: ``decoder_model.onnx`` (no past in),
  ``decoder_with_past_model.onnx`` and ``decoder_model_merged.onnx`` (an ``If`` on
  ``use_cache_branch``), made by optimum's own export with the two decoder configs and its
  merge, the layout optimum used to write for decoders and still writes for seq2seq;
- ``optimum/<arch>-with-past/model.onnx`` for gpt2 and llama: optimum's current
  ``text-generation-with-past`` export (one graph, past of length 0 on the first step);
- ``optimum/t5``: ``text2text-generation-with-past``: ``encoder_model.onnx``, ``decoder_model.onnx``,
  ``decoder_with_past_model.onnx`` and their ``decoder_model_merged.onnx``;
- ``optimum/bert/model.onnx``: ``feature-extraction``;
- ``dynamo/*.onnx``: ``torch.onnx.export(..., dynamo=True, dynamic_shapes=...)`` of a tiny BERT,
  llama and GPT-2 (no cache) with symbolic ``batch`` and ``seq``, of the llama with a key/value
  cache (``past`` positions in, ``total`` the mask's length), and of a small conv net with a
  symbolic ``batch``.

Every exporter's own annotations (value_info, declared outputs, dim names) are left as written.
25 models, about 22 MB (and 5 MB of checkpoints); a run takes a few minutes on 2 cores. Weights are the same on
every run; the dynamo files' stack-trace metadata names this script's lines.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

VOCAB = 1000


def _tokenizer(path: Path) -> None:
    """Save a word-level tokenizer of VOCAB tokens to ``path`` (the genai builder copies one)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    vocab.update({f"w{i}": i for i in range(4, VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    fast.save_pretrained(path)


def _configs() -> dict:
    """The tiny configs, by name."""
    from transformers import BertConfig, GPT2Config, LlamaConfig, Phi3Config, Qwen2Config, T5Config

    common = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=3)
    decoder = dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        max_position_embeddings=256,
        **common,
    )
    return {
        "llama": LlamaConfig(**decoder),
        "qwen2": Qwen2Config(**decoder),
        "phi3": Phi3Config(original_max_position_embeddings=256, **decoder),
        "gpt2": GPT2Config(n_embd=64, n_layer=2, n_head=4, n_positions=256, **common),
        "t5": T5Config(
            d_model=64,
            d_ff=128,
            d_kv=16,
            num_layers=2,
            num_heads=4,
            decoder_start_token_id=3,
            **common,
        ),
        "bert": BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, **common),
    }


def _auto_class(name: str):
    import transformers

    if name == "t5":
        return transformers.T5ForConditionalGeneration
    if name == "bert":
        return transformers.BertModel
    return transformers.AutoModelForCausalLM


def make_checkpoints(out: Path) -> dict[str, Path]:
    """Save each tiny model (random weights, seed 0) and the tokenizer under ``out/hf/NAME``."""
    import torch

    paths = {}
    for name, config in _configs().items():
        path = out / "hf" / name
        torch.manual_seed(0)
        cls = _auto_class(name)
        model = cls.from_config(config) if hasattr(cls, "from_config") else cls(config)
        model.eval()
        model.save_pretrained(path)
        _tokenizer(path)
        paths[name] = path
    return paths


def make_genai(out: Path, hf: dict[str, Path]) -> None:
    """onnxruntime-genai's model builder, CPU execution provider."""
    for name, precision in [("llama", "fp32"), ("llama", "int4"), ("qwen2", "fp32"), ("phi3", "int4")]:
        dest = out / "genai" / f"{name}-{precision}"
        cache = out / "cache" / f"genai-{name}-{precision}"
        cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder"]
        cmd += ["-i", str(hf[name]), "-o", str(dest), "-p", precision, "-e", "cpu", "-c", str(cache)]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        shutil.rmtree(cache, ignore_errors=True)


def _merged_decoder(hf_path: Path, dest: Path) -> None:
    """optimum's legacy decoder layout: decoder without past in (past out), decoder with past in, and
    their merge into ``decoder_model_merged.onnx`` by the decoder config's own post-processing (an
    ``If`` on ``use_cache_branch``), then optimum's validation of both branches of the merged file.
    ``main_export`` takes custom submodels only for architectures it does not know, so the steps it
    runs are called one by one here."""
    from optimum.exporters.onnx.convert import export_models, validate_models_outputs
    from optimum.exporters.tasks import TasksManager
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(hf_path).eval()
    ctor = TasksManager.get_exporter_config_constructor(
        exporter="onnx", model=model, task="text-generation-with-past", library_name="transformers"
    )
    task = "text-generation"  # the configs' task: use_past stands for the "-with-past" suffix
    pair = {
        "decoder_model": (model, ctor(model.config, task=task, use_past=True, use_past_in_inputs=False)),
        "decoder_with_past_model": (model, ctor(model.config, task=task, use_past=True, use_past_in_inputs=True)),
    }
    names = ["decoder_model.onnx", "decoder_with_past_model.onnx"]
    dest.mkdir(parents=True, exist_ok=True)
    _, outputs = export_models(models_and_onnx_configs=pair, output_dir=dest, output_names=names)
    pair, names = pair["decoder_model"][1].post_process_exported_models(dest, pair, names)
    validate_models_outputs(
        models_and_onnx_configs=pair, onnx_named_outputs=outputs, atol=1e-4, output_dir=dest, onnx_files_subpaths=names
    )


def make_optimum(out: Path, hf: dict[str, Path]) -> None:
    """optimum's ONNX exporter: merged decoders, the current single decoder, a seq2seq, an encoder."""
    from optimum.exporters.onnx import main_export

    for name in ("gpt2", "llama", "qwen2"):
        _merged_decoder(hf[name], out / "optimum" / f"{name}-merged")
    for name in ("gpt2", "llama"):
        main_export(
            str(hf[name]),
            out / "optimum" / f"{name}-with-past",
            task="text-generation-with-past",
            library_name="transformers",
        )
    main_export(
        str(hf["t5"]), out / "optimum" / "t5", task="text2text-generation-with-past", library_name="transformers"
    )
    main_export(str(hf["bert"]), out / "optimum" / "bert", task="feature-extraction", library_name="transformers")


class _ConvNet:
    """A small conv net (Conv, BatchNorm, ReLU, pooling, residual add, Linear)."""

    @staticmethod
    def build():
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
                self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
                self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.head = nn.Linear(32, 10)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                h = self.stem(x)
                h = h + self.block(h)
                h = torch.relu(self.down(h))
                return self.head(torch.flatten(self.pool(h), 1))

        return Net().eval()


def make_dynamo(out: Path, hf: dict[str, Path]) -> None:
    """torch.onnx.export(dynamo=True) with symbolic batch and seq."""
    import torch
    from torch.export import Dim
    from transformers import AutoModelForCausalLM, BertModel
    from transformers.cache_utils import DynamicCache

    dest = out / "dynamo"
    dest.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    batch, seq = Dim("batch", min=1, max=64), Dim("seq", min=2, max=128)
    ids = torch.randint(4, VOCAB, (2, 9))
    mask = torch.ones(2, 9, dtype=torch.int64)
    text = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    text_names = list(text)

    class NoCache(torch.nn.Module):
        """A causal LM called without a cache, returning the logits only."""

        def __init__(self, lm) -> None:
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    class Hidden(torch.nn.Module):
        """An encoder returning its last hidden state and pooled output."""

        def __init__(self, enc) -> None:
            super().__init__()
            self.enc = enc

        def forward(self, input_ids, attention_mask):
            o = self.enc(input_ids=input_ids, attention_mask=attention_mask)
            return o.last_hidden_state, o.pooler_output

    class WithPast(torch.nn.Module):
        """A causal LM called with a key/value cache of ``past`` positions, returning logits and the cache."""

        def __init__(self, lm) -> None:
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask, past_keys, past_values):
            cache = DynamicCache()
            for i, (k, v) in enumerate(zip(past_keys, past_values)):
                cache.update(k, v, i)
            o = self.lm(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
            layers = o.past_key_values.layers
            return o.logits, [x.keys for x in layers], [x.values for x in layers]

    llama = AutoModelForCausalLM.from_pretrained(hf["llama"])
    layers, kv_heads = llama.config.num_hidden_layers, llama.config.num_key_value_heads
    head = llama.config.hidden_size // llama.config.num_attention_heads
    past_len, total = 5, Dim("total", min=3, max=256)
    past = [torch.randn(2, kv_heads, past_len, head) for _ in range(layers)]
    cached = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: total},
        "past_keys": [{0: batch, 2: Dim("past", min=1, max=128)}] * layers,
        "past_values": [{0: batch, 2: Dim("past", min=1, max=128)}] * layers,
    }
    cached_mask = torch.ones(2, 9 + past_len, dtype=torch.int64)
    torch.manual_seed(0)
    convnet = _ConvNet.build()
    jobs = [
        ("llama_kv", WithPast(llama), (ids, cached_mask, past, [p.clone() for p in past]), cached, None),
        ("bert", Hidden(BertModel.from_pretrained(hf["bert"])), (ids, mask), text, text_names),
        ("llama", NoCache(llama), (ids, mask), text, text_names),
        ("gpt2", NoCache(AutoModelForCausalLM.from_pretrained(hf["gpt2"])), (ids, mask), text, text_names),
        ("convnet", convnet, (torch.randn(2, 3, 32, 32),), {"x": {0: batch}}, ["x"]),
    ]
    for name, module, args, shapes, names in jobs:
        module.eval()
        torch.manual_seed(0)
        print(f"+ torch.onnx.export(dynamo=True) {name}", flush=True)
        with torch.no_grad():
            torch.onnx.export(
                module,
                args,
                str(dest / f"{name}.onnx"),
                dynamo=True,
                dynamic_shapes=shapes,
                input_names=names,
                external_data=False,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("out", type=Path, help="output folder (made if missing)")
    parser.add_argument("--only", default="genai,optimum,dynamo", help="comma-separated stages: genai, optimum, dynamo")
    args = parser.parse_args(argv)
    stages = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = stages - {"genai", "optimum", "dynamo"}
    if unknown:
        parser.error(f"unknown stage(s): {', '.join(sorted(unknown))}")
    out = args.out.resolve()
    hf = make_checkpoints(out)
    if "genai" in stages:
        make_genai(out, hf)
    if "optimum" in stages:
        make_optimum(out, hf)
    if "dynamo" in stages:
        make_dynamo(out, hf)
    shutil.rmtree(out / "cache", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
