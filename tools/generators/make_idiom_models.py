"""Make small ONNX models whose shape arithmetic uses the idioms of issue 22, with the real exporters.

    python tools/generators/make_idiom_models.py OUT_DIR [--only torch,tf,paddle,jax] [--names swin,gru,...]

Each exporter lives in its own environment (none of them is the project's; nothing in the package
or the tests imports this script). Run the script once with each environment's python; a section
whose exporter does not import is skipped with a message, so every run makes what it can:

    python3 -m venv venv-export && venv-export/bin/pip install torch==2.13.0 transformers==4.57.6 onnx onnxscript
        (a CPU build of torch; transformers 4.57 has Swin, wav2vec2, Mamba2 and SAM)
    python3 -m venv venv-tf && venv-tf/bin/pip install tensorflow-cpu tf2onnx
    python3 -m venv venv-paddle && venv-paddle/bin/pip install paddlepaddle paddle2onnx
    python3 -m venv venv-jax && venv-jax/bin/pip install jax2onnx

Nothing is downloaded from a model hub: every network is a tiny random-initialised config (seed 0).
Models go to OUT_DIR/<exporter>/<name>.onnx, each with OUT_DIR/<exporter>/<name>.json beside it:
``{"bindings": [{sym: int}, {sym: int}], "int_feeds": {input: [low, high]}, "idioms": [...]}``,
two bindings of the input symbols at which the model runs in onnxruntime (a symbol that must be a
multiple of something is given as such), the value range of integer inputs, and the idioms of
issue 22 the model is meant to show (1 padding Mod, 2 truncating Div, 3 Mod of a constant by a
symbol, 4 float round trip, 5 loop/scan count, 6 TF dilated conv / frame, 7 repeat_interleave).

Sections:

- ``torch`` (``torch.onnx.export(dynamo=True, dynamic_shapes=...)``): transformers' Swin (shifted
  windows: torch.roll, window padding), wav2vec2 (conv feature extractor on raw samples; once more
  with an attention mask, whose feature-level mask is flipped twice), Mamba2 (chunk padding), SAM's
  vision encoder, and small modules: pad to a multiple of 8, repeat_interleave by a tensor and by
  an int, a conv stack with stride (floor chains), torch.roll, Tensor.unfold frames, F.interpolate
  by float scale factors;
- ``tf`` (tf2onnx from ``tf.function``): a masked Keras LSTM, a GRU, ``tf.while_loop``, a dilated
  Conv2D on dynamic H/W, ``tf.signal.frame``, a Slice-heavy model, a causal dilated Conv1D,
  tf.image.resize to float-scaled sizes, and
  Keras 3's own ``model.export(format="onnx")`` of a masked LSTM + dilated Conv1D;
- ``paddle`` (paddle2onnx from ``paddle.jit.save``): ``//`` on shapes, a strided conv net, padding;
- ``jax`` (jax2onnx with symbolic dims): reshape by ``n // 2`` and strided slices, strided and
  dilated convolutions, ``lax.scan`` (padding by ``(-n) % 8`` and ``fori_loop`` to a symbolic
  bound are refused by jax's own shape polymorphism, so they are not here).
"""

from __future__ import annotations

import json
from pathlib import Path

import generator_sections
from generator_sections import run


def _sidecar(path: Path, bindings: list[dict], idioms: list[int], int_feeds: dict | None = None) -> None:
    """Write the bindings/feeds/idioms description next to the model ``path``."""
    meta = {"bindings": bindings, "int_feeds": int_feeds or {}, "idioms": idioms}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def _rename_input_dims(path: Path, names: list[str]) -> None:
    """Rename the graph inputs' symbolic dims, in order of appearance, to ``names`` everywhere in the graph."""
    import onnx

    m = onnx.load(str(path))
    old: list[str] = []
    for i in m.graph.input:
        for dim in i.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param not in old:
                old.append(dim.dim_param)
    if len(old) != len(names):
        raise ValueError(f"{path.name}: input dims {old} do not match {names}")
    ren = dict(zip(old, names))
    for vi in [*m.graph.input, *m.graph.output, *m.graph.value_info]:
        for dim in vi.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param in ren:
                dim.dim_param = ren[dim.dim_param]
    onnx.save(m, str(path))


# ----------------------------------------------------------------------------------------- torch


def torch_section(out: Path) -> None:
    """torch.onnx.export(dynamo=True) of transformers' models and small modules."""
    try:
        import torch
    except ImportError as e:
        print(f"torch section skipped: {e}")
        return
    import torch.nn.functional as F
    from torch.export import Dim

    d = out / "torch"
    d.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)

    def export(mod, args, dyn, name, bindings, idioms, input_names=None, int_feeds=None):
        mod.eval()
        torch.manual_seed(0)
        path = d / f"{name}.onnx"
        with torch.no_grad():
            prog = torch.onnx.export(
                mod,
                args,
                dynamic_shapes=dyn,
                dynamo=True,
                input_names=input_names,
                optimize=True,
                verbose=False,
            )
        prog.save(str(path))
        _sidecar(path, bindings, idioms, int_feeds)

    batch = Dim("batch", min=1, max=64)

    class PadMultiple(torch.nn.Module):
        """Pad the sequence to a multiple of 8, then fold it into blocks of 8."""

        def forward(self, x):
            pad = (8 - x.shape[1] % 8) % 8
            y = F.pad(x, (0, 0, 0, pad))
            return y.reshape(x.shape[0], -1, 8, x.shape[2]).sum(2)

    def pad_multiple():
        x = torch.randn(2, 7, 16)
        seq = Dim("seq", min=1, max=1024)
        export(
            PadMultiple(),
            (x,),
            ({0: batch, 1: seq},),
            "pad_multiple8",
            [dict(batch=2, seq=7), dict(batch=3, seq=17)],
            [1],
        )

    class RepeatTensor(torch.nn.Module):
        def forward(self, x, reps):
            return x.repeat_interleave(reps, dim=0) * 2.0

    def repeat_tensor():
        x, r = torch.randn(3, 16), torch.tensor([1, 2, 3])
        n = Dim("n", min=2, max=64)
        export(
            RepeatTensor(),
            (x, r),
            ({0: n}, {0: n}),
            "repeat_interleave_tensor",
            [dict(n=3), dict(n=5)],
            [7],
            int_feeds={"reps": [0, 4]},
        )

    class RepeatInt(torch.nn.Module):
        def forward(self, x):
            return torch.repeat_interleave(x, 3, dim=1).cumsum(1)

    def repeat_int():
        x = torch.randn(2, 5, 4)
        seq = Dim("seq", min=2, max=256)
        export(
            RepeatInt(),
            (x,),
            ({0: batch, 1: seq},),
            "repeat_interleave_int",
            [dict(batch=2, seq=7), dict(batch=3, seq=11)],
            [7],
        )

    class ConvStack(torch.nn.Module):
        """wav2vec2-like: strided 1-D convolutions on raw samples, then a frame-wise projection."""

        def __init__(self):
            super().__init__()
            self.c0 = torch.nn.Conv1d(1, 8, 10, stride=5)
            self.c1 = torch.nn.Conv1d(8, 8, 3, stride=2)
            self.c2 = torch.nn.Conv1d(8, 8, 2, stride=2)
            self.lin = torch.nn.Linear(8, 4)

        def forward(self, x):
            h = self.c2(F.gelu(self.c1(F.gelu(self.c0(x[:, None])))))
            n = h.shape[2]
            # frames regrouped in pairs (torch writes n // 2 with an int Div)
            h = h[:, :, : (n // 2) * 2].reshape(h.shape[0], 8, n // 2, 2).mean(3)
            return self.lin(h.transpose(1, 2))

    def conv_stack():
        x = torch.randn(2, 400)
        s = Dim("samples", min=80, max=16000)
        export(
            ConvStack(),
            (x,),
            ({0: batch, 1: s},),
            "conv_stack",
            [dict(batch=2, samples=400), dict(batch=3, samples=999)],
            [2],
        )

    class Roll(torch.nn.Module):
        def forward(self, x):
            return torch.roll(x, shifts=(-2, 3), dims=(1, 2)) + x

    def roll():
        x = torch.randn(2, 16, 24, 4)
        h, w = Dim("hb", min=1, max=32), Dim("wb", min=1, max=32)
        export(
            Roll(),
            (x,),
            ({0: batch, 1: 8 * h, 2: 8 * w},),
            "roll",
            [dict(batch=2, hb=2, wb=3), dict(batch=3, hb=1, wb=4)],
            [3],
        )

    def swin():
        from transformers import SwinConfig, SwinModel

        cfg = SwinConfig(
            image_size=64, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4, num_channels=3
        )
        torch.manual_seed(0)
        m = SwinModel(cfg)
        x = torch.randn(2, 3, 64, 64)
        h, w = Dim("hb", min=1, max=16), Dim("wb", min=1, max=16)
        export(
            m,
            (x,),
            ({0: batch, 2: 32 * h, 3: 32 * w},),
            "swin",
            [dict(batch=2, hb=2, wb=2), dict(batch=1, hb=3, wb=1)],
            [1, 3],
            input_names=["pixel_values"],
        )

    def wav2vec2():
        from transformers import Wav2Vec2Config, Wav2Vec2Model

        cfg = Wav2Vec2Config(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            conv_dim=(16, 16, 16),
            conv_stride=(5, 2, 2),
            conv_kernel=(10, 3, 3),
            num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=2,
            feat_extract_norm="group",
            do_stable_layer_norm=False,
            mask_time_prob=0.0,
        )
        torch.manual_seed(0)
        m = Wav2Vec2Model(cfg)
        x = torch.randn(2, 800)
        s = Dim("samples", min=400, max=16000)
        export(
            m,
            (x,),
            ({0: batch, 1: s},),
            "wav2vec2",
            [dict(batch=2, samples=800), dict(batch=1, samples=1234)],
            [2],
            input_names=["input_values"],
        )

    def wav2vec2_mask():
        from transformers import Wav2Vec2Config, Wav2Vec2Model

        cfg = Wav2Vec2Config(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            conv_dim=(16, 16, 16, 16),
            conv_stride=(5, 4, 2, 2),
            conv_kernel=(10, 4, 3, 3),
            num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=2,
            feat_extract_norm="layer",
            do_stable_layer_norm=True,
            mask_time_prob=0.0,
        )
        torch.manual_seed(0)
        m = Wav2Vec2Model(cfg)

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = m

            def forward(self, input_values, attention_mask):
                return self.m(input_values, attention_mask=attention_mask).last_hidden_state

        x, mask = torch.randn(2, 1600), torch.ones(2, 1600, dtype=torch.int64)
        s = Dim("samples", min=400, max=16000)
        export(
            Wrap(),
            (x, mask),
            ({0: batch, 1: s}, {0: batch, 1: s}),
            "wav2vec2_mask",
            [dict(batch=2, samples=1600), dict(batch=1, samples=2345)],
            [2],
            input_names=["input_values", "attention_mask"],
            int_feeds={"attention_mask": [1, 2]},
        )

    class Unfold(torch.nn.Module):
        """Frames of 16 samples every 4 (Tensor.unfold), then overlap-add back by a strided conv-transpose."""

        def __init__(self):
            super().__init__()
            self.up = torch.nn.ConvTranspose1d(16, 1, 16, stride=4)

        def forward(self, x):
            f = x.unfold(1, 16, 4)
            return f.mean(2), self.up(f.transpose(1, 2))

    def unfold():
        x = torch.randn(2, 100)
        s = Dim("samples", min=16, max=16000)
        export(
            Unfold(),
            (x,),
            ({0: batch, 1: s},),
            "unfold_frames",
            [dict(batch=2, samples=100), dict(batch=3, samples=257)],
            [6],
        )

    class Interp(torch.nn.Module):
        """Resize by float scale factors on dynamic H/W (sizes floor(h * 1.5), 2 * w)."""

        def forward(self, x):
            a = F.interpolate(x, scale_factor=1.5, mode="nearest")
            b = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
            return a, b[:, :, : b.shape[2] // 3]

    def interp():
        x = torch.randn(2, 3, 9, 12)
        h, w = Dim("h", min=2, max=256), Dim("w", min=2, max=256)
        export(
            Interp(),
            (x,),
            ({0: batch, 2: h, 3: w},),
            "interpolate_scale",
            [dict(batch=2, h=9, w=12), dict(batch=1, h=7, w=5)],
            [4],
        )

    def mamba2():
        from transformers import Mamba2Config, Mamba2Model

        cfg = Mamba2Config(
            vocab_size=100,
            hidden_size=32,
            state_size=8,
            num_hidden_layers=2,
            head_dim=8,
            num_heads=8,
            n_groups=1,
            expand=2,
            chunk_size=8,
            conv_kernel=4,
            use_cache=False,
        )
        torch.manual_seed(0)
        m = Mamba2Model(cfg)

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = m

            def forward(self, input_ids):
                return self.m(input_ids=input_ids, use_cache=False).last_hidden_state

        ids = torch.randint(0, 100, (2, 13))
        seq = Dim("seq", min=2, max=512)
        export(
            Wrap(),
            (ids,),
            ({0: batch, 1: seq},),
            "mamba2",
            [dict(batch=2, seq=7), dict(batch=3, seq=19)],
            [1],
            input_names=["input_ids"],
            int_feeds={"input_ids": [0, 100]},
        )

    def sam():
        from transformers import SamVisionConfig, SamVisionModel

        cfg = SamVisionConfig(
            hidden_size=32,
            output_channels=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=64,
            patch_size=8,
            window_size=3,
            global_attn_indexes=[1],
            mlp_dim=64,
            use_abs_pos=False,
            use_rel_pos=False,
        )
        torch.manual_seed(0)
        m = SamVisionModel(cfg)
        # SAM's patch embedding refuses any size but image_size (torch.export then fixes H and W):
        # the same projection without the check; windowed attention pads H/W to a multiple of 3
        pe = m.vision_encoder.patch_embed if hasattr(m, "vision_encoder") else m.patch_embed
        pe.forward = lambda pv: pe.projection(pv).permute(0, 2, 3, 1)

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = m

            def forward(self, pixel_values):
                return self.m(pixel_values=pixel_values).last_hidden_state

        x = torch.randn(2, 3, 64, 64)
        h, w = Dim("hb", min=1, max=16), Dim("wb", min=1, max=16)
        export(
            Wrap(),
            (x,),
            ({0: batch, 2: 8 * h, 3: 8 * w},),
            "sam_vision",
            [dict(batch=1, hb=8, wb=8), dict(batch=2, hb=5, wb=7)],
            [1],
            input_names=["pixel_values"],
        )

    for name, fn in [
        ("pad_multiple8", pad_multiple),
        ("repeat_interleave_tensor", repeat_tensor),
        ("repeat_interleave_int", repeat_int),
        ("conv_stack", conv_stack),
        ("roll", roll),
        ("swin", swin),
        ("wav2vec2", wav2vec2),
        ("wav2vec2_mask", wav2vec2_mask),
        ("unfold_frames", unfold),
        ("interpolate_scale", interp),
        ("mamba2", mamba2),
        ("sam_vision", sam),
    ]:
        run(f"torch/{name}", fn)


# -------------------------------------------------------------------------------------------- tf


def tf_section(out: Path) -> None:
    """tf2onnx (``tf2onnx.convert.from_function``) of tf.functions built on Keras layers and tf ops."""
    try:
        import tensorflow as tf
        import tf2onnx
    except ImportError as e:
        print(f"tf section skipped: {e}")
        return
    import keras

    d = out / "tf"
    d.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(0)

    def export(fn, sig, name, bindings, idioms, int_feeds=None, opset=17):
        path = d / f"{name}.onnx"
        tf2onnx.convert.from_function(fn, input_signature=sig, opset=opset, output_path=str(path))
        # tf2onnx names every unknown dim unk__N; the input dims get the bindings' names, in order
        _rename_input_dims(path, list(bindings[0]))
        _sidecar(path, bindings, idioms, int_feeds)

    def spec(shape, name, dtype=None):
        return tf.TensorSpec(shape, dtype or tf.float32, name=name)

    bs = [dict(batch=2, seq=7), dict(batch=3, seq=11)]

    def masked_lstm():
        inp = keras.Input((None, 8))
        h = keras.layers.Masking(0.0)(inp)
        h = keras.layers.LSTM(16, return_sequences=True)(h)
        model = keras.Model(inp, keras.layers.Dense(4)(h))
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, 8], "x")], "masked_lstm", bs, [5])

    def gru():
        inp = keras.Input((None, 8))
        h = keras.layers.GRU(16, return_sequences=True)(inp)
        model = keras.Model(inp, h)
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, 8], "x")], "gru", bs, [5])

    def while_loop():
        @tf.function
        def fn(x):
            n = tf.shape(x)[1]
            ta = tf.TensorArray(tf.float32, size=n)

            def body(i, acc, ta):
                acc = acc * 0.5 + x[:, i]
                return i + 1, acc, ta.write(i, acc)

            _, acc, ta = tf.while_loop(lambda i, a, t: i < n, body, (0, tf.zeros_like(x[:, 0]), ta))
            return tf.transpose(ta.stack(), [1, 0, 2]), acc

        export(fn, [spec([None, None, 8], "x")], "while_loop", bs, [5])

    hw = [dict(batch=2, h=9, w=12), dict(batch=1, h=16, w=7)]

    def dilated_conv():
        inp = keras.Input((None, None, 3))
        h = keras.layers.Conv2D(4, 3, dilation_rate=2, padding="same")(inp)
        h = keras.layers.Conv2D(4, 3, dilation_rate=(2, 3), padding="valid")(h)
        model = keras.Model(inp, h)
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, None, 3], "x")], "dilated_conv2d", hw, [6])

    def atrous():
        k = tf.constant(tf.random.stateless_normal([3, 3, 3, 4], seed=[0, 1]))

        @tf.function
        def fn(x):
            return tf.nn.atrous_conv2d(x, k, rate=2, padding="SAME"), tf.nn.atrous_conv2d(x, k, rate=3, padding="VALID")

        export(
            fn,
            [spec([None, None, None, 3], "x")],
            "atrous_conv2d",
            [dict(batch=2, h=9, w=12), dict(batch=1, h=16, w=8)],
            [6],
        )

    sm = [dict(batch=2, samples=100), dict(batch=3, samples=257)]

    def frame():
        @tf.function
        def fn(x):
            return tf.signal.frame(x, 16, 4), tf.signal.frame(x, 16, 8, pad_end=True)

        export(fn, [spec([None, None], "x")], "signal_frame", sm, [6])

    def causal_conv1d():
        inp = keras.Input((None, 4))
        h = keras.layers.Conv1D(8, 3, dilation_rate=2, padding="causal")(inp)
        h = keras.layers.Conv1D(8, 4, strides=2, padding="same")(h)
        model = keras.Model(inp, keras.layers.MaxPooling1D(3, padding="same")(h))
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, 4], "x")], "causal_conv1d", bs, [6])

    def keras_export():
        # Keras 3's own ``model.export(format="onnx")`` (tf2onnx underneath, its own settings)
        import numpy as np

        inp = keras.Input((None, 8))
        h = keras.layers.Masking(0.0)(inp)
        h = keras.layers.LSTM(16, return_sequences=True)(h)
        model = keras.Model(inp, keras.layers.Conv1D(8, 3, dilation_rate=2, padding="same")(h))
        model(np.zeros((2, 5, 8), "float32"))  # export refuses a model never called
        path = d / "keras3_export.onnx"
        model.export(str(path), format="onnx")
        _rename_input_dims(path, ["batch", "seq"])
        _sidecar(path, bs, [5, 6])

    def resize():
        @tf.function
        def fn(x):
            hw = tf.cast(tf.cast(tf.shape(x)[1:3], tf.float32) * 1.5, tf.int32)
            return tf.image.resize(x, hw, method="nearest"), tf.image.resize(x, tf.shape(x)[1:3] * 2)

        export(
            fn,
            [spec([None, None, None, 3], "x")],
            "image_resize",
            [dict(batch=2, h=9, w=12), dict(batch=1, h=7, w=5)],
            [4],
        )

    def slices():
        @tf.function
        def fn(x):
            a = x[:, 1:-1, ::2]
            b = x[:, -3:, 1::3]
            c = x[:, ::-1][:, 2:]
            n = tf.shape(x)[1]
            e = x[:, n // 2 :]
            f = tf.strided_slice(x, [0, 1, 0], [0, -1, 0], [1, 2, 1], begin_mask=5, end_mask=5)
            return a * 2.0, b, c, e, f

        export(fn, [spec([None, None, 12], "x")], "slices", bs, [4])

    def bigru_masked():
        inp = keras.Input((None, 8))
        h = keras.layers.Masking(0.0)(inp)
        h = keras.layers.Bidirectional(keras.layers.GRU(16, return_sequences=True))(h)
        model = keras.Model(inp, h)
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, 8], "x")], "bigru_masked", bs, [5])

    def simple_rnn_last():
        inp = keras.Input((None, 8))
        model = keras.Model(inp, keras.layers.SimpleRNN(16)(inp))  # return_sequences=False
        fn = tf.function(lambda x: model(x))
        export(fn, [spec([None, None, 8], "x")], "simple_rnn_last", bs, [5])

    # Raw while loops writing a TensorArray of rows: tf2onnx makes each a Loop whose scan output
    # is the stacked rows, and whose condition ends it its own way.
    def while_rows(cond, step, start, n_of=lambda x: tf.shape(x)[1], **kw):
        @tf.function
        def fn(x):
            n = n_of(x)
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            body = lambda i, k, ta: (i + step, k + 1, ta.write(k, x[:, 0] * tf.cast(i, tf.float32)))  # noqa: E731
            _, _, ta = tf.while_loop(lambda i, k, t: cond(i, n), body, (start, 0, ta), **kw)
            return ta.stack()

        return fn

    def while_from1(opset=17):
        # i from 1 while i <= n (at opset 11 tf2onnx writes <= as Not(Greater))
        fn = while_rows(lambda i, n: i <= n, 1, 1)
        name = "while_from1" if opset == 17 else f"while_from1_opset{opset}"
        export(fn, [spec([None, None, 8], "x")], name, bs, [5], opset=opset)

    def while_half():
        # n = seq // 2: no iteration at all when seq is 1
        fn = while_rows(lambda i, n: i < n, 1, 0, n_of=lambda x: tf.shape(x)[1] // 2)
        export(fn, [spec([None, None, 8], "x")], "while_half", bs, [5])

    def while_countdown():
        @tf.function
        def fn(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            body = lambda i, k, ta: (i - 1, k + 1, ta.write(k, x[:, i - 1]))  # noqa: E731
            _, _, ta = tf.while_loop(lambda i, k, t: i > 0, body, (tf.shape(x)[1], 0, ta))
            return ta.stack()

        export(fn, [spec([None, None, 8], "x")], "while_countdown", bs, [5])

    def while_max5():
        fn = while_rows(lambda i, n: i < n, 1, 0, maximum_iterations=5)
        export(fn, [spec([None, None, 8], "x")], "while_max5", bs, [5])

    def while_max_n():
        # no condition but the iteration limit: a Loop with M = seq and a constant true in the And
        @tf.function
        def fn(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            body = lambda i, ta: (i + 1, ta.write(i, x[:, 0] * tf.cast(i, tf.float32)))  # noqa: E731
            _, ta = tf.while_loop(lambda i, t: True, body, (0, ta), maximum_iterations=tf.shape(x)[1])
            return ta.stack()

        export(fn, [spec([None, None, 8], "x")], "while_max_n", bs, [5])

    def range_step3():
        @tf.function
        def fn(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            k = 0
            for i in tf.range(1, tf.shape(x)[1], 3):  # autograph: the delta is a carried value
                ta = ta.write(k, x[:, i] + 1.0)
                k += 1  # noqa: SIM113 (autograph turns this into a loop-carried counter)
            return ta.stack()

        export(fn, [spec([None, None, 8], "x")], "range_step3", bs, [5])

    def while_n_input():
        @tf.function
        def fn(x, n):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            body = lambda i, ta: (i + 1, ta.write(i, x[:, i]))  # noqa: E731
            _, ta = tf.while_loop(lambda i, t: i < n, body, (0, ta))
            return ta.stack()

        sig = [spec([None, None, 8], "x"), tf.TensorSpec([], tf.int32, name="n")]
        export(fn, sig, "while_n_input", bs, [5], int_feeds={"n": [-2, 7]})

    for name, fn in [
        ("masked_lstm", masked_lstm),
        ("gru", gru),
        ("bigru_masked", bigru_masked),
        ("simple_rnn_last", simple_rnn_last),
        ("while_loop", while_loop),
        ("while_from1", while_from1),
        ("while_from1_opset11", lambda: while_from1(11)),
        ("while_half", while_half),
        ("while_countdown", while_countdown),
        ("while_max5", while_max5),
        ("while_max_n", while_max_n),
        ("range_step3", range_step3),
        ("while_n_input", while_n_input),
        ("dilated_conv2d", dilated_conv),
        ("atrous_conv2d", atrous),
        ("signal_frame", frame),
        ("slices", slices),
        ("causal_conv1d", causal_conv1d),
        ("keras3_export", keras_export),
        ("image_resize", resize),
    ]:
        run(f"tf/{name}", fn)


# ---------------------------------------------------------------------------------------- paddle


def paddle_section(out: Path) -> None:
    """paddle2onnx of ``paddle.jit.save``'d layers with dynamic dims (``None`` in the InputSpec)."""
    try:
        import paddle
        import paddle2onnx
    except ImportError as e:
        print(f"paddle section skipped: {e}")
        return
    import tempfile

    nn, F = paddle.nn, paddle.nn.functional
    d = out / "paddle"
    d.mkdir(parents=True, exist_ok=True)

    def export(layer, specs, name, bindings, idioms, int_feeds=None):
        paddle.seed(0)
        layer.eval()
        path = d / f"{name}.onnx"
        with tempfile.TemporaryDirectory() as td:
            prefix = str(Path(td) / "m")
            paddle.jit.save(paddle.jit.to_static(layer, input_spec=specs, full_graph=True), prefix)
            model_file = next(p for p in (prefix + ".json", prefix + ".pdmodel") if Path(p).exists())
            paddle2onnx.export(model_file, prefix + ".pdiparams", str(path), opset_version=17)
        # paddle2onnx names the InputSpec's None dims DynamicDimension.N; they get the bindings' names
        _rename_input_dims(path, list(bindings[0]))
        _sidecar(path, bindings, idioms, int_feeds)

    class FloorDiv(nn.Layer):
        """Pairs of positions folded into channels: ``s // 2`` on a shape."""

        def forward(self, x):
            b, s = paddle.shape(x)[0], paddle.shape(x)[1]
            y = x[:, : (s // 2) * 2].reshape([b, s // 2, 32])
            z = x[:, : (s // 3) * 3].reshape([b, -1, 48])
            return y * 2.0, z * 2.0

    class PadMultiple(nn.Layer):
        def forward(self, x):
            b, s = paddle.shape(x)[0], paddle.shape(x)[1]
            pad = (8 - s % 8) % 8
            y = paddle.concat([x, paddle.zeros([b, pad, 16], x.dtype)], axis=1)
            return y.reshape([b, -1, 8, 16]).sum(2)

    class ConvNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2D(3, 8, 3, stride=2, padding=1)
            self.p = nn.MaxPool2D(3, stride=2, ceil_mode=True)
            self.c2 = nn.Conv2D(8, 8, 3, stride=2, padding="SAME")
            self.up = nn.Conv2DTranspose(8, 4, 3, stride=2, padding=1)

        def forward(self, x):
            # (paddle2onnx 2.1 aborts the process on F.interpolate(scale_factor=...) in a PIR program)
            return self.up(self.c2(self.p(F.relu(self.c1(x)))))

    class Lstm(nn.Layer):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(16, 16)

        def forward(self, x):
            y, _ = self.rnn(x)
            return y

    spec = paddle.static.InputSpec
    bs = [dict(batch=2, seq=7), dict(batch=3, seq=11)]
    for name, fn in [
        (
            "floordiv_shape",
            lambda: export(FloorDiv(), [spec([None, None, 16], "float32", "x")], "floordiv_shape", bs, [4]),
        ),
        (
            "pad_multiple8",
            lambda: export(
                PadMultiple(),
                [spec([None, None, 16], "float32", "x")],
                "pad_multiple8",
                [dict(batch=2, seq=7), dict(batch=3, seq=17)],
                [1, 4],
            ),
        ),
        (
            "convnet",
            lambda: export(
                ConvNet(),
                [spec([None, 3, None, None], "float32", "x")],
                "convnet",
                [dict(batch=2, h=17, w=24), dict(batch=1, h=32, w=13)],
                [4],
            ),
        ),
        ("lstm", lambda: export(Lstm(), [spec([None, None, 16], "float32", "x")], "lstm", bs, [5])),
    ]:
        run(f"paddle/{name}", fn)


# ------------------------------------------------------------------------------------------- jax


def jax_section(out: Path) -> None:
    """jax2onnx ``to_onnx`` with symbolic input dims."""
    try:
        import jax
        import jax.numpy as jnp
        from jax2onnx import to_onnx
    except ImportError as e:
        print(f"jax section skipped: {e}")
        return

    d = out / "jax"
    d.mkdir(parents=True, exist_ok=True)
    key = jax.random.PRNGKey(0)
    w16 = jax.random.normal(key, (16, 16)) * 0.1
    k = jax.random.normal(key, (3, 3, 3, 8)) * 0.1

    def export(fn, inputs, name, bindings, idioms):
        path = d / f"{name}.onnx"
        model = to_onnx(fn, inputs, model_name=name, opset=17)
        import onnx

        onnx.save(model, str(path))
        _sidecar(path, bindings, idioms)

    def half(x):
        b, n, c = x.shape
        y = x[:, : (n // 2) * 2].reshape(b, n // 2, 2 * c)
        return jnp.tanh(y), x[:, ::2] * 2.0, x[:, 1::3]

    def conv(x):
        y = jax.lax.conv_general_dilated(x, k, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        z = jax.lax.conv_general_dilated(
            x, k, (1, 1), "VALID", rhs_dilation=(2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return jax.nn.relu(y), z

    def scan(x):
        def step(h, xt):
            h = jnp.tanh(xt @ w16 + h)
            return h, h

        h, ys = jax.lax.scan(step, jnp.zeros_like(x[:, 0]), jnp.swapaxes(x, 0, 1))
        return h, jnp.swapaxes(ys, 0, 1)

    bs = [dict(B=2, N=7), dict(B=3, N=11)]
    for name, fn in [
        ("halve_reshape", lambda: export(half, [("B", "N", 16)], "halve_reshape", bs, [2])),
        ("conv", lambda: export(conv, [("B", "H", "W", 3)], "conv", [dict(B=2, H=9, W=12), dict(B=1, H=16, W=7)], [6])),
        ("scan", lambda: export(scan, [("B", "N", 16)], "scan", bs, [5])),
    ]:
        run(f"jax/{name}", fn)


SECTIONS = {"torch": torch_section, "tf": tf_section, "paddle": paddle_section, "jax": jax_section}


if __name__ == "__main__":
    generator_sections.main(__doc__, SECTIONS)
