"""Tiny random-initialised Hugging Face models exported by optimum (main_export), for lint vs runtime.

    python tools/generators/make_optimum_corpus.py OUT_DIR [--only a,b]

Needs an environment with optimum-onnx 0.1 (which pins transformers 4.57) and torch (the CPU
build): not the project's. Used for issue 35's unseen corpus (docs/benchmarks.md).

Each architecture: a config in code (tiny), save_pretrained under OUT_DIR/hf/NAME (no hub),
optimum's main_export with its default task and post-processing (merged decoders for seq2seq).
"""

import os
import sys

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)

import torch
import transformers as T
from optimum.exporters.onnx import main_export

OUT = sys.argv[1]
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
torch.manual_seed(0)
small = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    vocab_size=128,
    max_position_embeddings=64,
)
#: the encoder-decoders' sizes (BART, Marian, Whisper)
seq2seq = dict(
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    vocab_size=128,
)
ARCHS = {
    "bert": (T.BertConfig(**small), T.BertModel, "feature-extraction", None),
    "distilbert": (
        T.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=128, max_position_embeddings=64),
        T.DistilBertForSequenceClassification,
        "text-classification",
        None,
    ),
    "roberta": (T.RobertaConfig(**small), T.RobertaForMaskedLM, "fill-mask", None),
    "albert": (T.AlbertConfig(embedding_size=16, **small), T.AlbertModel, "feature-extraction", None),
    "electra": (
        T.ElectraConfig(embedding_size=16, **small),
        T.ElectraForTokenClassification,
        "token-classification",
        None,
    ),
    "deberta_v2": (T.DebertaV2Config(**small), T.DebertaV2ForSequenceClassification, "text-classification", None),
    "mobilebert": (
        T.MobileBertConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            vocab_size=128,
            embedding_size=16,
            intra_bottleneck_size=16,
            true_hidden_size=16,
            max_position_embeddings=64,
        ),
        T.MobileBertModel,
        "feature-extraction",
        None,
    ),
    "gpt_neo": (
        T.GPTNeoConfig(
            hidden_size=32,
            num_layers=2,
            num_heads=4,
            attention_types=[[["global", "local"], 1]],
            vocab_size=128,
            max_position_embeddings=64,
            window_size=16,
        ),
        T.GPTNeoForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "opt": (
        T.OPTConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
            vocab_size=128,
            max_position_embeddings=64,
            word_embed_proj_dim=32,
        ),
        T.OPTForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "bloom": (
        T.BloomConfig(hidden_size=32, n_layer=2, n_head=4, vocab_size=128),
        T.BloomForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "qwen2": (T.Qwen2Config(num_key_value_heads=2, **small), T.Qwen2ForCausalLM, "text-generation-with-past", None),
    "mistral": (
        T.MistralConfig(num_key_value_heads=2, **small),
        T.MistralForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "phi3": (
        T.Phi3Config(num_key_value_heads=4, pad_token_id=0, **small),
        T.Phi3ForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "gemma": (
        T.GemmaConfig(num_key_value_heads=2, head_dim=8, **small),
        T.GemmaForCausalLM,
        "text-generation-with-past",
        None,
    ),
    "t5": (
        T.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=128, decoder_start_token_id=0),
        T.T5ForConditionalGeneration,
        "text2text-generation-with-past",
        None,
    ),
    "bart": (
        T.BartConfig(
            **seq2seq,
            max_position_embeddings=64,
        ),
        T.BartForConditionalGeneration,
        "text2text-generation-with-past",
        None,
    ),
    "marian": (
        T.MarianConfig(
            **seq2seq,
            max_position_embeddings=64,
            decoder_start_token_id=0,
            pad_token_id=0,
        ),
        T.MarianMTModel,
        "text2text-generation-with-past",
        None,
    ),
    "whisper": (
        T.WhisperConfig(
            **seq2seq,
            num_mel_bins=16,
            max_source_positions=1500,
            max_target_positions=32,
            decoder_start_token_id=1,
            pad_token_id=0,
            eos_token_id=2,
            bos_token_id=1,
        ),
        T.WhisperForConditionalGeneration,
        "automatic-speech-recognition-with-past",
        "whisper",
    ),
    "vit": (
        T.ViTConfig(
            image_size=32,
            patch_size=8,
            **{k: v for k, v in small.items() if k not in ("vocab_size", "max_position_embeddings")},
        ),
        T.ViTForImageClassification,
        "image-classification",
        "image",
    ),
    "convnext": (
        T.ConvNextConfig(num_channels=3, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32),
        T.ConvNextForImageClassification,
        "image-classification",
        "image",
    ),
    "resnet": (
        T.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1]),
        T.ResNetForImageClassification,
        "image-classification",
        "image",
    ),
    "swin": (
        T.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4),
        T.SwinForImageClassification,
        "image-classification",
        "image",
    ),
    "segformer": (
        T.SegformerConfig(
            hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], decoder_hidden_size=32, num_attention_heads=[1, 1, 2, 4]
        ),
        T.SegformerForSemanticSegmentation,
        "semantic-segmentation",
        "image",
    ),
    "wav2vec2": (
        T.Wav2Vec2Config(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            vocab_size=32,
            conv_dim=(16, 16),
            conv_stride=(5, 2),
            conv_kernel=(10, 3),
            num_feat_extract_layers=2,
            num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=4,
        ),
        T.Wav2Vec2ForCTC,
        "automatic-speech-recognition",
        "audio",
    ),
    "clip": (
        T.CLIPConfig(
            text_config=dict(
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=64,
                vocab_size=128,
                max_position_embeddings=32,
            ),
            vision_config=dict(
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=64,
                image_size=32,
                patch_size=8,
            ),
            projection_dim=16,
        ),
        T.CLIPModel,
        "zero-shot-image-classification",
        "clip",
    ),
}
os.makedirs(OUT, exist_ok=True)
ok = bad = 0
for name, (cfg, cls, task, _kind) in ARCHS.items():
    if ONLY and name not in ONLY:
        continue
    hf = os.path.join(OUT, "hf", name)
    dst = os.path.join(OUT, name)
    try:
        model = cls(cfg).eval()
        model.save_pretrained(hf)
        # processors optimum needs for some tasks are not required when giving the task explicitly
        main_export(
            hf, dst, task=task, opset=None, do_validation=False, no_post_process=False, library_name="transformers"
        )
        ok += 1
        print("exported", name, sorted(os.listdir(dst)), flush=True)
    except Exception as e:
        bad += 1
        print("FAILED", name, type(e).__name__, str(e)[:300], flush=True)
print(ok, "exported,", bad, "failed")
