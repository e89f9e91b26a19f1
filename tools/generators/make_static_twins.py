"""Make static/dynamic twins for ``shapeinfer make-dynamic`` (issue 36 part 1).

    venv-export/bin/python tools/generators/make_static_twins.py [OUT_DIR]

OUT_DIR defaults to ``tests/models/static``. Needs an environment with torch, transformers,
timm and ultralytics (not the project's; nothing in the package imports this). No model hub:
tiny random-initialised models (seed 0) are built from configs.

For each model NAME it writes ``NAME.static.onnx`` (``torch.onnx.export(..., dynamo=False)``
without ``dynamic_axes``: every shape the exporter could fold is a constant) and, from the same
module and weights, ``NAME.dynamic.onnx`` (the same export with ``dynamic_axes``), and
``twins.json``: per model the static input sizes, and which input axes are dynamic in the twin
(the ``--dim`` arguments make-dynamic is given). Models:

- ``bert``: BertModel, batch 2, sequence 16, head size 16 (one 16 is the sequence, the other
  the head size), inputs ``input_ids`` and ``attention_mask``; also ``bert_b1.static.onnx`` at
  batch 1 alone: there the mask's batch offsets fold to a constant 0 that nothing can tell from
  the batch (make-dynamic refuses it);
- ``gpt2``: GPT2LMHeadModel, batch 2, sequence 8, ``input_ids`` and ``attention_mask``;
- ``llama``: LlamaForCausalLM, batch 2, sequence 12, ``input_ids`` and ``attention_mask``;
- ``cnn``: a timm ResNet (one BasicBlock a stage, 8 to 64 channels) at batch 1, 3x64x64 (batch dynamic only);
- ``yolo``: an ultralytics detection model scaled down from ``yolov8n.yaml``, batch 1, 3x64x64
  (batch dynamic only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

OPSET = 17


class _Logits(torch.nn.Module):
    """A transformers model returning one tensor (its first output), without a cache."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, return_dict=True)
        return out[0]


def _hf(name: str):
    import transformers as T

    torch.manual_seed(0)
    if name == "bert":
        cfg = T.BertConfig(
            vocab_size=100,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=64,
        )
        model = T.BertModel(cfg)
    elif name == "gpt2":
        cfg = T.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64)
        model = T.GPT2LMHeadModel(cfg)
    else:
        cfg = T.LlamaConfig(
            vocab_size=100,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
        model = T.LlamaForCausalLM(cfg)
    model.config._attn_implementation = "eager"
    return _Logits(model.eval())


def _yolo() -> torch.nn.Module:
    from ultralytics.nn.tasks import DetectionModel

    torch.manual_seed(0)
    model = DetectionModel("yolov8n.yaml", nc=4, verbose=False)
    # a tiny width: every layer's channels are scaled down
    cfg = dict(model.yaml)
    cfg["scales"] = {"n": [0.33, 0.0625, 1024]}
    cfg["scale"] = "n"
    torch.manual_seed(0)
    model = DetectionModel(cfg, nc=4, verbose=False).eval()
    for m in model.modules():
        if hasattr(m, "export"):
            m.export = True
            m.format = "onnx"
    model.fuse(verbose=False)
    return model


def _cnn() -> torch.nn.Module:

    torch.manual_seed(0)
    from timm.models.resnet import BasicBlock, ResNet

    return ResNet(BasicBlock, [1, 1, 1, 1], channels=(8, 16, 32, 64), stem_width=8, num_classes=10).eval()


def _export(module, args, path: Path, names: list[str], dynamic: dict | None) -> None:
    torch.onnx.export(
        module,
        args,
        str(path),
        input_names=names,
        output_names=["output"],
        opset_version=OPSET,
        dynamo=False,
        dynamic_axes=dynamic,
        do_constant_folding=True,
    )


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict] = {}
    text = {"bert": (2, 16), "gpt2": (2, 8), "llama": (2, 12)}
    for name, (batch, seq) in text.items():
        module = _hf(name)
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, 100, (batch, seq), generator=g)
        mask = torch.ones(batch, seq, dtype=torch.int64)
        names = ["input_ids", "attention_mask"]
        axes = {0: "batch", 1: "seq"}
        with torch.no_grad():
            _export(module, (ids, mask), out / f"{name}.static.onnx", names, None)
            _export(module, (ids, mask), out / f"{name}.dynamic.onnx", names, {n: axes for n in names})
        if name == "bert":
            with torch.no_grad():
                _export(module, (ids[:1], mask[:1]), out / "bert_b1.static.onnx", names, None)
        table[name] = {
            "inputs": {"input_ids": [batch, seq], "attention_mask": [batch, seq]},
            "dims": {n: {"0": "batch", "1": "seq"} for n in names},
        }
    for name, make in (("cnn", _cnn), ("yolo", _yolo)):
        module = make()
        x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            _export(module, (x,), out / f"{name}.static.onnx", ["images"], None)
            _export(module, (x,), out / f"{name}.dynamic.onnx", ["images"], {"images": {0: "batch"}})
        table[name] = {"inputs": {"images": [1, 3, 64, 64]}, "dims": {"images": {"0": "batch"}}}
    (out / "twins.json").write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "tests/models/static")
