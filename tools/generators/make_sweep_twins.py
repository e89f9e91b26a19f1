"""Static and dynamic twins of more architectures, for benchmarks/make_dynamic_vs_twins.py.

    venv-export/bin/python tools/generators/make_sweep_twins.py OUT_DIR

Needs torch, timm and transformers (not the project's environment); tiny random-initialised
models (seed 0), no model hub. For each model NAME: ``NAME_b1.static.onnx`` and
``NAME_b2.static.onnx`` (``torch.onnx.export`` without dynamic axes at batch 1 and 2; sequence
12 for the text models), ``NAME.dynamic.onnx`` (batch, and sequence, dynamic) and
``table.json`` (each model's inputs and the ``--dim`` axes).
"""

import json
import os
import sys

import timm
import torch
import transformers as T

if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
table = {}


def export(m, args, names, path, dyn):
    torch.onnx.export(
        m,
        args,
        path,
        input_names=names,
        output_names=["output"],
        opset_version=17,
        dynamo=False,
        dynamic_axes=dyn,
        do_constant_folding=True,
    )


torch.manual_seed(0)
for name in [
    "resnet18",
    "vit_tiny_patch16_224",
    "swin_tiny_patch4_window7_224",
    "convnext_atto",
    "mobilenetv3_small_050",
    "efficientnet_b0",
    "deit_tiny_patch16_224",
]:
    try:
        kw = dict(pretrained=False, num_classes=10)
        if "vit" in name or "deit" in name:
            kw.update(img_size=64, depth=2)
        if "swin" in name:
            kw.update(img_size=64, depths=(1, 1, 1, 1), window_size=2, embed_dim=16, num_heads=(1, 1, 2, 2))
        m = timm.create_model(name, **kw).eval()
        for B in (1, 2):
            x = torch.randn(B, 3, 64, 64)
            with torch.no_grad():
                export(m, (x,), ["images"], f"{OUT}/{name}_b{B}.static.onnx", None)
        with torch.no_grad():
            export(m, (torch.randn(2, 3, 64, 64),), ["images"], f"{OUT}/{name}.dynamic.onnx", {"images": {0: "batch"}})
        table[name] = {"inputs": {"images": [None, 3, 64, 64]}, "dims": {"images": {"0": "batch"}}}
        print("ok", name, flush=True)
    except Exception as e:
        print("FAILED", name, type(e).__name__, str(e)[:200], flush=True)


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask, return_dict=True)[0]


small = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    vocab_size=100,
    max_position_embeddings=64,
)
hf = {
    "distilbert": T.DistilBertModel(
        T.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=100, max_position_embeddings=64)
    ),
    "roberta": T.RobertaModel(T.RobertaConfig(**small)),
    "albert": T.AlbertModel(T.AlbertConfig(embedding_size=16, **small)),
    "electra": T.ElectraModel(T.ElectraConfig(embedding_size=16, **small)),
    "qwen2": T.Qwen2ForCausalLM(T.Qwen2Config(num_key_value_heads=2, **small)),
    "mistral": T.MistralForCausalLM(T.MistralConfig(num_key_value_heads=2, **small)),
    "opt": T.OPTForCausalLM(
        T.OPTConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
            vocab_size=100,
            max_position_embeddings=64,
            word_embed_proj_dim=32,
        )
    ),
}
for name, model in hf.items():
    try:
        m = Logits(model.eval())
        for B, S in ((1, 12), (2, 12)):
            ids = torch.randint(0, 100, (B, S))
            mask = torch.ones(B, S, dtype=torch.int64)
            with torch.no_grad():
                export(m, (ids, mask), ["input_ids", "attention_mask"], f"{OUT}/{name}_b{B}.static.onnx", None)
        ids = torch.randint(0, 100, (2, 12))
        mask = torch.ones(2, 12, dtype=torch.int64)
        ax = {0: "batch", 1: "seq"}
        with torch.no_grad():
            export(
                m,
                (ids, mask),
                ["input_ids", "attention_mask"],
                f"{OUT}/{name}.dynamic.onnx",
                {"input_ids": ax, "attention_mask": ax},
            )
        table[name] = {
            "inputs": {"input_ids": [None, 12], "attention_mask": [None, 12]},
            "dims": {n: {"0": "batch", "1": "seq"} for n in ("input_ids", "attention_mask")},
        }
        print("ok", name, flush=True)
    except Exception as e:
        print("FAILED", name, type(e).__name__, str(e)[:200], flush=True)
with open(f"{OUT}/table.json", "w") as fh:
    json.dump(table, fh, indent=1)
