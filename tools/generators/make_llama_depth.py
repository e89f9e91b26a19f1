"""A randomly initialised LLaMA of N layers exported with torch's TorchScript exporter, the
shape of the shared ``llama32_ts.onnx`` at another depth (``llama80_ts.onnx`` for the
``optimize`` timing of docs/benchmarks.md).

Config as llama32_ts: hidden 64, 8 heads of 64, 4 key/value heads, MLP 128, vocabulary 1000;
inputs ``input_ids`` and ``attention_mask`` [batch, seq]; output ``out`` (the logits); opset 17.
Needs torch and transformers (no download: the weights are random), e.g. /work/venv-export's::

    python tools/generators/make_llama_depth.py --layers 80 -o llama80_ts.onnx
"""

from __future__ import annotations

import argparse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=a.layers,
        num_attention_heads=8,
        num_key_value_heads=4,
        head_dim=64,
        max_position_embeddings=256,
    )

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = LlamaForCausalLM(cfg).eval()
            self.m.config._attn_implementation = "eager"

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    ids = torch.randint(0, 1000, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "out": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(
            Wrapper(),
            (ids, mask),
            a.output,
            input_names=["input_ids", "attention_mask"],
            output_names=["out"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    print("wrote", a.output)


if __name__ == "__main__":
    main()
