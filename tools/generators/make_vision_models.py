"""Make issue 32's vision corpus: small random-weight vision models exported with dynamic batch/height/width.

    python tools/generators/make_vision_models.py OUT_DIR [--only ultralytics,timm,...] [--names yolo11_det,...]

Each exporter lives in its own environment (none of them is the project's; nothing in the package or
the tests imports this script). Run the script once with each environment's python; a section whose
exporter does not import is skipped with a message, and one model that fails is reported and skipped:

    python3 -m venv venv-export && venv-export/bin/pip install torch torchvision ultralytics timm \\
        onnx onnxscript onnxruntime onnxslim
        (as made: torch 2.14.1 CPU, torchvision 0.29.1, ultralytics 8.4.190, timm 1.0.31, onnx 1.23.2,
        onnxscript 0.7.2, onnxslim 0.1.98, onnxruntime 1.32.0)
    python3 -m venv venvs/paddle && venvs/paddle/bin/pip install paddlepaddle paddle2onnx onnxruntime
        (as made: paddlepaddle 3.3.1, paddle2onnx 2.1.0)

    venv-export/bin/python tools/generators/make_vision_models.py CORPUS \\
        --only ultralytics,timm,torchvision,extra
    venvs/paddle/bin/python tools/generators/make_vision_models.py CORPUS --only paddle

Nothing is downloaded: every network is a narrowed random-initialised config (seed 0), a few MB a
file; ultralytics runs with ``YOLO_OFFLINE=1`` and its requirement check switched off.
Models go to OUT_DIR/<family>/<name>.onnx (names are unique over the corpus), each with
OUT_DIR/<family>/<name>.json beside it: ``{"bindings": [{sym: int}, {sym: int}], "int_feeds": {},
"notes": "..."}``: two bindings of the input symbols at which the model runs in onnxruntime (checked
here after the export; a model that does not run at both is reported as failed and removed) and
that fit the architecture, and the exporter, its versions and what was done to the file.
The input dims are renamed to ``batch``, ``height``, ``width`` in the graph inputs only; value_info
and output dims keep the exporter's own names (``anchors``, ``s0``, ``Squeezekeep_dim_0``, ...).

Sections:

- ``ultralytics``: YOLO11 detect/seg/pose/obb/cls, YOLOv8 detect and YOLO26 detect (with ``nms=False``
  once more: its end-to-end TopK head)
  built from copies of the package's yaml with one tiny scale and 8 classes, ``model.export(format="onnx",
  dynamic=True)`` with ``simplify=False``, ``simplify=True`` (onnxslim) and ``nms=True`` variants;
- ``timm``: Swin (``dynamic_img_size=True``: the shifted-window mask is built from the input's
  shape), ViT (``dynamic_img_size=True``), ResNet, MobileNetV3 and ConvNeXt, each with the
  TorchScript exporter (``dynamo=False, dynamic_axes``) and the dynamo exporter (``dynamic_shapes``);
- ``torchvision``: Faster R-CNN, Mask R-CNN, Keypoint R-CNN, RetinaNet, FCOS (on a MobileNetV3 at
  width 0.25 with a 32-channel FPN), SSDlite and LR-ASPP segmentation, TorchScript exporter as
  torchvision documents (one image ``[3, height, width]``: the detection models take a list of
  images, so batch is not an axis), and LR-ASPP once more with dynamo (dynamo fails on the
  detectors: torch.export cannot guard on the data-dependent box count in ``batched_nms``);
- ``paddle``: a PaddleOCR-style DB text detector (ResNet-like backbone, FPN with upsample+add, DB
  head; input ``[-1, 3, -1, -1]``), the same with its input dims rewritten to ``[-1, 3, ?, ?]`` as
  older paddle2onnx wrote them, and a CRNN recogniser (input ``[-1, 3, 48, -1]``, height pooled to 1,
  BiLSTM head), ``paddle.jit.save`` + ``paddle2onnx``;
- ``extra``: a UNet (max-pool down, transposed-conv up, Concat of skips) and a DETR-like detector
  (conv backbone, sine position embedding from the feature shape, transformer), both exporters.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import generator_sections
from generator_sections import run

IMAGE_DIMS = {0: "batch", 2: "height", 3: "width"}


def _versions(*mods: str) -> str:
    """'name version' of each importable module, for the notes."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for m in mods:
        with contextlib.suppress(PackageNotFoundError):
            out.append(f"{m} {version(m)}")
    return ", ".join(out)


def _sidecar(path: Path, bindings: list[dict], notes: str, int_feeds: dict | None = None) -> None:
    """Write the bindings/feeds/notes description next to the model ``path``."""
    meta = {"bindings": bindings, "int_feeds": int_feeds or {}, "notes": notes}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def _name_input_dims(path: Path, axes: dict[int, str] | None = None) -> list[str]:
    """Rename the symbolic dims of the graph inputs by axis (``axes``: axis -> name) in the inputs only.

    Value_info, outputs and subgraphs keep whatever the exporter wrote. Returns the old names that
    were replaced (for the notes). A dim that is an int stays an int.
    """
    import onnx

    axes = IMAGE_DIMS if axes is None else axes
    m = onnx.load(str(path))
    inits = {t.name for t in m.graph.initializer}
    old = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        for ax, dim in enumerate(i.type.tensor_type.shape.dim):
            if ax in axes and not dim.HasField("dim_value"):
                if dim.dim_param != axes[ax]:
                    old.append(dim.dim_param or "<none>")
                dim.dim_param = axes[ax]
    onnx.save(m, str(path))
    return old


def _check_runs(path: Path, bindings: list[dict], int_feeds: dict | None = None) -> None:
    """Raise unless onnxruntime (default session options) runs ``path`` at every binding."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    m = onnx.load(str(path), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for b in bindings:
        feeds = {}
        for i in m.graph.input:
            if i.name in inits:
                continue
            tt = i.type.tensor_type
            shape = [
                d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else b[d.dim_param] for d in tt.shape.dim
            ]
            dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
            if np.issubdtype(dt, np.integer):
                lo, hi = (int_feeds or {}).get(i.name, (0, 50))
                feeds[i.name] = rng.integers(lo, hi, size=shape).astype(dt)
            else:
                feeds[i.name] = rng.standard_normal(shape).astype(dt)
        sess.run(None, feeds)


def _finish(path: Path, bindings: list[dict], notes: str, axes: dict[int, str] | None = None) -> None:
    """Name the input dims, check both bindings run, write the sidecar; remove the model if it does not run."""
    old = _name_input_dims(path, axes)
    if old:
        notes += f" Input dims renamed from {old} (graph inputs only)."
    try:
        _check_runs(path, bindings)
    except Exception:
        path.unlink(missing_ok=True)
        raise
    _sidecar(path, bindings, notes)


def _torch_export(mod, x, path: Path, dynamo: bool, input_name: str = "x", axes: dict[int, str] | None = None) -> str:
    """Export ``mod(x)`` with the TorchScript or dynamo exporter, dims of ``x`` dynamic; the notes' text."""
    import torch

    axes = IMAGE_DIMS if axes is None else axes
    mod.eval()
    with torch.no_grad():
        if dynamo:
            from torch.export import Dim

            dyn = ({ax: Dim.DYNAMIC for ax in axes},)
            prog = torch.onnx.export(
                mod, (x,), dynamo=True, dynamic_shapes=dyn, input_names=[input_name], optimize=True
            )
            prog.save(str(path))
            how = (
                f"torch.onnx.export(dynamo=True, dynamic_shapes={{axis: Dim.DYNAMIC}} on {sorted(axes)}, optimize=True)"
            )
        else:
            torch.onnx.export(
                mod,
                (x,),
                str(path),
                dynamo=False,
                opset_version=17,
                input_names=[input_name],
                dynamic_axes={input_name: dict(axes)},
            )
            how = f"torch.onnx.export(dynamo=False, opset_version=17, dynamic_axes={dict(axes)})"
    return f"{how}; traced at {tuple(x.shape)}; {_versions('torch', 'torchvision', 'timm', 'onnx', 'onnxscript')}."


# ----------------------------------------------------------------------------------- ultralytics


YOLO_BINDINGS = [dict(batch=1, height=64, width=96), dict(batch=2, height=96, width=160)]


def ultralytics_section(out: Path) -> None:
    """ultralytics ``model.export(format="onnx", dynamic=True)`` of tiny YOLO configs."""
    os.environ["YOLO_OFFLINE"] = "1"
    try:
        import torch
        import ultralytics
        from ultralytics import YOLO
    except ImportError as e:
        print(f"ultralytics section skipped: {e}")
        return
    import re

    import ultralytics.engine.exporter as exporter_mod

    # nothing may be installed or downloaded: the requirement check would pip-install what it misses
    exporter_mod.check_requirements = lambda *a, **k: True
    d = out / "ultralytics"
    d.mkdir(parents=True, exist_ok=True)
    cfg = Path(ultralytics.__file__).parent / "cfg" / "models"
    # one tiny scale: depth 0.33, width 0.125, at most 256 channels (about 0.3 M parameters)
    tiny = "scales:\n  n: [0.33, 0.125, 256]\n\n"

    def export(name, yaml_rel, stem, kw):
        with tempfile.TemporaryDirectory() as td:
            text = re.sub(r"scales:.*?\n\n", tiny, (cfg / yaml_rel).read_text(), flags=re.S)
            # 8 classes: the class branch of the head (and the classifier) stays small
            text = re.sub(r"^nc: \d+", "nc: 8", text, flags=re.M)
            y = Path(td) / f"{stem}.yaml"
            y.write_text(text)
            cwd = os.getcwd()
            os.chdir(td)
            try:
                torch.manual_seed(0)
                model = YOLO(str(y))
                args = dict(format="onnx", dynamic=True, imgsz=64, **kw)
                f = Path(model.export(**args)).resolve()
            finally:
                os.chdir(cwd)
            path = d / f"{name}.onnx"
            shutil.move(str(f), path)
        notes = (
            f"ultralytics {ultralytics.__version__}: YOLO({yaml_rel} with nc: 8 and scale n: [0.33, 0.125, 256]), "
            f"random init (seed 0), model.export({', '.join(f'{k}={v!r}' for k, v in args.items())}) offline "
            f"(YOLO_OFFLINE=1, check_requirements patched out); its TorchScript exporter (torch.onnx.export "
            f"dynamo=False) with dynamic_axes {{0: batch, 2: height, 3: width}}"
            f"{' then onnxslim' if kw.get('simplify', True) else ''}; {_versions('torch', 'onnx', 'onnxslim')}. "
            "Bindings: multiples of 32, non-square."
        )
        _finish(path, YOLO_BINDINGS, notes)

    jobs = [
        ("yolo11_det", "11/yolo11.yaml", "yolo11n", dict(simplify=False)),
        ("yolo11_det_simp", "11/yolo11.yaml", "yolo11n", dict(simplify=True)),
        ("yolo11_det_nms", "11/yolo11.yaml", "yolo11n", dict(nms=True, simplify=True)),
        ("yolo11_det_nms_nosimp", "11/yolo11.yaml", "yolo11n", dict(nms=True, simplify=False)),
        ("yolo11_seg", "11/yolo11-seg.yaml", "yolo11n-seg", dict(simplify=False)),
        ("yolo11_seg_simp", "11/yolo11-seg.yaml", "yolo11n-seg", dict(simplify=True)),
        ("yolo11_seg_nms", "11/yolo11-seg.yaml", "yolo11n-seg", dict(nms=True, simplify=True)),
        ("yolo11_pose_simp", "11/yolo11-pose.yaml", "yolo11n-pose", dict(simplify=True)),
        ("yolo11_pose_nms", "11/yolo11-pose.yaml", "yolo11n-pose", dict(nms=True, simplify=True)),
        ("yolo11_obb_simp", "11/yolo11-obb.yaml", "yolo11n-obb", dict(simplify=True)),
        ("yolo11_obb_nms", "11/yolo11-obb.yaml", "yolo11n-obb", dict(nms=True, simplify=True)),
        ("yolo11_cls_simp", "11/yolo11-cls.yaml", "yolo11n-cls", dict(simplify=True)),
        ("yolov8_det_simp", "v8/yolov8.yaml", "yolov8n", dict(simplify=True)),
        ("yolo26_det_simp", "26/yolo26.yaml", "yolo26n", dict(simplify=True)),
        # nms=False keeps YOLO26's end-to-end (one-to-one, TopK) head; None (the default) drops it
        ("yolo26_det_e2e", "26/yolo26.yaml", "yolo26n", dict(nms=False, simplify=True)),
    ]
    for name, yaml_rel, stem, kw in jobs:
        run(f"ultralytics/{name}", export, name, yaml_rel, stem, kw)


# ------------------------------------------------------------------------------------------ timm


def timm_section(out: Path) -> None:
    """timm models with a dynamic image size, TorchScript and dynamo exporters."""
    try:
        import timm
        import torch
    except ImportError as e:
        print(f"timm section skipped: {e}")
        return
    from timm.models.resnet import BasicBlock

    d = out / "timm"
    d.mkdir(parents=True, exist_ok=True)

    def build(kind):
        torch.manual_seed(0)
        if kind == "swin":
            return (
                timm.create_model(
                    "swin_tiny_patch4_window7_224",
                    pretrained=False,
                    embed_dim=8,
                    depths=(2, 2, 2, 1),
                    num_heads=(1, 1, 2, 2),
                    mlp_ratio=2.0,
                    num_classes=10,
                    dynamic_img_size=True,
                ),
                "swin_tiny_patch4_window7_224(embed_dim=8, depths=(2,2,2,1), num_heads=(1,1,2,2), mlp_ratio=2, "
                "dynamic_img_size=True)",
            )
        if kind == "vit":
            return timm.create_model(
                "vit_tiny_patch16_224",
                pretrained=False,
                embed_dim=64,
                depth=3,
                num_heads=2,
                num_classes=10,
                dynamic_img_size=True,
            ), "vit_tiny_patch16_224(embed_dim=64, depth=3, num_heads=2, dynamic_img_size=True)"
        if kind == "resnet":
            return timm.create_model(
                "resnet18",
                pretrained=False,
                block=BasicBlock,
                layers=(1, 1, 1, 1),
                channels=(16, 32, 64, 128),
                stem_width=16,
                num_classes=10,
            ), "resnet18(layers=(1,1,1,1), channels=(16,32,64,128), stem_width=16)"
        if kind == "mobilenetv3":
            return timm.create_model(
                "mobilenetv3_small_050", pretrained=False, num_classes=10
            ), "mobilenetv3_small_050(num_classes=10)"
        if kind == "convnext":
            return timm.create_model(
                "convnext_atto", pretrained=False, dims=(16, 32, 64, 128), depths=(1, 1, 2, 1), num_classes=10
            ), "convnext_atto(dims=(16,32,64,128), depths=(1,1,2,1))"
        raise ValueError(kind)

    binds = {
        # Swin: patch 4, three 2x merges: any multiple of 32 keeps every stage whole; windows of 7 are padded
        "swin": [dict(batch=1, height=64, width=96), dict(batch=2, height=96, width=128)],
        # ViT: patch 16, position embedding resampled to the grid
        "vit": [dict(batch=1, height=48, width=80), dict(batch=2, height=96, width=64)],
        "resnet": [dict(batch=1, height=64, width=96), dict(batch=2, height=77, width=50)],
        "mobilenetv3": [dict(batch=1, height=64, width=96), dict(batch=2, height=77, width=50)],
        "convnext": [dict(batch=1, height=64, width=96), dict(batch=2, height=96, width=160)],
    }
    for kind in ("swin", "vit", "resnet", "mobilenetv3", "convnext"):
        for dynamo in (False, True):
            name = f"timm_{kind}_{'dynamo' if dynamo else 'ts'}"

            def make(kind=kind, dynamo=dynamo, name=name):
                import functools

                import timm.models.vision_transformer as vt

                model, what = build(kind)
                b0 = binds[kind][1]
                x = torch.randn(2, 3, b0["height"], b0["width"])
                path = d / f"{name}.onnx"
                resample = vt.resample_abs_pos_embed
                if kind == "vit" and not dynamo:
                    # the TorchScript exporter has no aten::_upsample_bicubic2d_aa: resample without antialias
                    vt.resample_abs_pos_embed = functools.partial(resample, antialias=False)
                    what += " with resample_abs_pos_embed(antialias=False) patched in for the TorchScript exporter"
                try:
                    how = _torch_export(model, x, path, dynamo)
                finally:
                    vt.resample_abs_pos_embed = resample
                _finish(path, binds[kind], f"timm {timm.__version__} {what}, random init (seed 0); {how}")

            run(f"timm/{name}", make)


# ----------------------------------------------------------------------------------- torchvision


def torchvision_section(out: Path) -> None:
    """torchvision detection and segmentation models on narrowed backbones, TorchScript exporter."""
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"torchvision section skipped: {e}")
        return
    from torchvision.models import mobilenet_v3_large
    from torchvision.models.detection import (
        FCOS,
        FasterRCNN,
        KeypointRCNN,
        MaskRCNN,
        RetinaNet,
        ssdlite320_mobilenet_v3_large,
    )
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.backbone_utils import BackboneWithFPN
    from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
    from torchvision.models.detection.keypoint_rcnn import KeypointRCNNHeads, KeypointRCNNPredictor
    from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7

    d = out / "torchvision"
    d.mkdir(parents=True, exist_ok=True)
    C = 32  # FPN channels

    def mbv3_fpn(levels, extra=None):
        """torchvision's _mobilenet_extractor (fpn=True) on a MobileNetV3-Large at width 0.25, C-channel FPN."""
        torch.manual_seed(0)
        bb = mobilenet_v3_large(weights=None, width_mult=0.25, reduced_tail=True).features
        stage = [0] + [i for i, b in enumerate(bb) if getattr(b, "_is_cn", False)] + [len(bb) - 1]
        ret = list(range(len(stage) - levels, len(stage)))
        return_layers = {f"{stage[k]}": str(v) for v, k in enumerate(ret)}
        in_ch = [bb[stage[i]].out_channels for i in ret]
        return BackboneWithFPN(bb, return_layers, in_ch, C, extra_blocks=extra)

    small = dict(min_size=160, max_size=256)

    def rcnn_anchors():
        return AnchorGenerator(((32, 64, 128, 256, 512),) * 3, ((0.5, 1.0, 2.0),) * 3)

    def build(kind):
        torch.manual_seed(0)
        if kind == "fasterrcnn":
            return FasterRCNN(
                mbv3_fpn(2),
                num_classes=None,
                rpn_anchor_generator=rcnn_anchors(),
                box_head=TwoMLPHead(C * 49, 64),
                box_predictor=FastRCNNPredictor(64, 5),
                **small,
            )
        if kind == "maskrcnn":
            return MaskRCNN(
                mbv3_fpn(2),
                num_classes=None,
                rpn_anchor_generator=rcnn_anchors(),
                box_head=TwoMLPHead(C * 49, 64),
                box_predictor=FastRCNNPredictor(64, 5),
                mask_head=MaskRCNNHeads(C, (C, C), 1),
                mask_predictor=MaskRCNNPredictor(C, C, 5),
                **small,
            )
        if kind == "keypointrcnn":
            return KeypointRCNN(
                mbv3_fpn(2),
                num_classes=None,
                rpn_anchor_generator=rcnn_anchors(),
                box_head=TwoMLPHead(C * 49, 64),
                box_predictor=FastRCNNPredictor(64, 2),
                keypoint_head=KeypointRCNNHeads(C, (C, C)),
                keypoint_predictor=KeypointRCNNPredictor(C, 17),
                **small,
            )
        if kind == "retinanet":
            return RetinaNet(mbv3_fpn(3, LastLevelP6P7(C, C)), num_classes=5, **small)
        if kind == "fcos":
            return FCOS(mbv3_fpn(3, LastLevelP6P7(C, C)), num_classes=5, **small)
        if kind == "ssdlite":
            return ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5, width_mult=0.25)
        if kind == "lraspp":
            from torchvision.models.segmentation.lraspp import _lraspp_mobilenetv3

            return _lraspp_mobilenetv3(mobilenet_v3_large(weights=None, width_mult=0.25, dilated=True), 4)
        raise ValueError(kind)

    what = {
        "fasterrcnn": "FasterRCNN(BackboneWithFPN on mobilenet_v3_large(width_mult=0.25).features, 2 levels + pool, "
        "32-channel FPN, TwoMLPHead(32*49, 64), min_size=160, max_size=256)",
        "maskrcnn": "MaskRCNN(same backbone, MaskRCNNHeads(32, (32, 32)), min_size=160, max_size=256)",
        "keypointrcnn": "KeypointRCNN(same backbone, KeypointRCNNHeads(32, (32, 32)), 17 keypoints)",
        "retinanet": "RetinaNet(mobilenet_v3_large(width_mult=0.25) FPN of 3 levels + LastLevelP6P7, 32 channels)",
        "fcos": "FCOS(mobilenet_v3_large(width_mult=0.25) FPN of 3 levels + LastLevelP6P7, 32 channels)",
        "ssdlite": "ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, width_mult=0.25): "
        "its transform resizes every image to 320x320",
        "lraspp": "LRASPP (_lraspp_mobilenetv3) on mobilenet_v3_large(width_mult=0.25, dilated=True), 4 classes",
    }
    det_binds = [dict(height=120, width=200), dict(height=257, width=190)]
    seg_binds = [dict(batch=1, height=64, width=96), dict(batch=2, height=97, width=130)]
    jobs = [(k, False) for k in ("fasterrcnn", "maskrcnn", "keypointrcnn", "retinanet", "fcos", "ssdlite", "lraspp")]
    # (dynamo on Faster R-CNN fails in torch.export: GuardOnDataDependentSymNode `4*u1 > 4000` in
    # torchvision.ops.batched_nms, the branch on the number of boxes; so only LR-ASPP gets dynamo)
    jobs += [("lraspp", True)]
    for kind, dynamo in jobs:
        name = f"tv_{kind}{'_dynamo' if dynamo else ''}"

        def make(kind=kind, dynamo=dynamo, name=name):
            model = build(kind).eval()
            path = d / f"{name}.onnx"
            if kind == "lraspp":

                class Out(torch.nn.Module):
                    """The 'out' entry of the dict the segmentation models return."""

                    def __init__(self, m):
                        super().__init__()
                        self.m = m

                    def forward(self, x):
                        return self.m(x)["out"]

                how = _torch_export(Out(model), torch.randn(2, 3, 97, 130), path, dynamo)
                binds = seg_binds
            else:
                axes = {1: "height", 2: "width"}
                x = torch.rand(3, 200, 150)
                if dynamo:

                    class One(torch.nn.Module):
                        """One image in, the first detection dict's tensors out."""

                        def __init__(self, m):
                            super().__init__()
                            self.m = m

                        def forward(self, x):
                            r = self.m([x])[0]
                            return r["boxes"], r["scores"], r["labels"]

                    how = _torch_export(One(model), x, path, True, input_name="image", axes=axes)
                else:
                    with torch.no_grad():
                        model([x])  # torchvision's own tests run the model once before export
                        torch.onnx.export(
                            model,
                            ([x],),
                            str(path),
                            dynamo=False,
                            opset_version=17,
                            input_names=["image"],
                            dynamic_axes={"image": {1: "height", 2: "width"}},
                        )
                    how = (
                        "torch.onnx.export(model, ([image],), dynamo=False, opset_version=17, "
                        "dynamic_axes={'image': {1: 'height', 2: 'width'}}) as torchvision documents; traced at "
                        f"(3, 200, 150); {_versions('torch', 'torchvision', 'onnx')}. One image [3, height, width]: "
                        "the model takes a list of images, so there is no batch axis"
                    )
                binds = det_binds
            _finish(
                path,
                binds,
                f"torchvision {torchvision.__version__} {what[kind]}, weights=None, random init (seed 0), eval; {how}.",
                {0: "batch", 2: "height", 3: "width"} if kind == "lraspp" else {1: "height", 2: "width"},
            )

        run(f"torchvision/{name}", make)


# ---------------------------------------------------------------------------------------- paddle


def paddle_section(out: Path) -> None:
    """PaddleOCR-style DB detector and CRNN recogniser, ``paddle.jit.save`` + ``paddle2onnx``."""
    try:
        import paddle
        import paddle2onnx
    except ImportError as e:
        print(f"paddle section skipped: {e}")
        return
    import onnx

    paddle.set_device("cpu")
    nn, F = paddle.nn, paddle.nn.functional
    d = out / "paddle"
    d.mkdir(parents=True, exist_ok=True)

    def export(layer, spec, path):
        paddle.seed(0)
        layer.eval()
        with tempfile.TemporaryDirectory() as td:
            prefix = str(Path(td) / "m")
            paddle.jit.save(paddle.jit.to_static(layer, input_spec=[spec], full_graph=True), prefix)
            model_file = next(p for p in (prefix + ".json", prefix + ".pdmodel") if Path(p).exists())
            paddle2onnx.export(model_file, prefix + ".pdiparams", str(path), opset_version=17)
        return (
            f"paddle.jit.save(paddle.jit.to_static(layer, input_spec=[InputSpec({spec.shape})], full_graph=True)) + "
            f"paddle2onnx.export(opset_version=17); {_versions('paddlepaddle', 'paddle2onnx', 'onnx')}"
        )

    def cbr(cin, cout, k=3, s=1):
        return nn.Sequential(nn.Conv2D(cin, cout, k, s, k // 2, bias_attr=False), nn.BatchNorm2D(cout), nn.ReLU())

    class Block(nn.Layer):
        """A ResNet basic block (stride s)."""

        def __init__(self, cin, cout, s):
            super().__init__()
            self.a = cbr(cin, cout, 3, s)
            self.b = nn.Sequential(nn.Conv2D(cout, cout, 3, 1, 1, bias_attr=False), nn.BatchNorm2D(cout))
            self.sc = nn.Sequential(nn.Conv2D(cin, cout, 1, s, bias_attr=False), nn.BatchNorm2D(cout))

        def forward(self, x):
            return F.relu(self.b(self.a(x)) + self.sc(x))

    def up(x, s):
        # paddle2onnx 2.1 refuses F.upsample with a float scale_factor attribute in a PIR program ("the 0th
        # elementwise MUST be ir::FloatAttribute") but takes the same scale as a tensor
        return F.upsample(x, scale_factor=paddle.to_tensor([s, s]), mode="nearest")

    class DBNet(nn.Layer):
        """PP-OCR's DB detector in small: strides 4..32, FPN (upsample x2 + add), DB head (prob map at 1/1)."""

        def __init__(self, c=(16, 24, 32, 48), inner=24):
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 16, 3, 2), nn.MaxPool2D(3, 2, 1))
            self.stages = nn.LayerList([Block(16 if i == 0 else c[i - 1], c[i], 1 if i == 0 else 2) for i in range(4)])
            self.lat = nn.LayerList([nn.Conv2D(ci, inner, 1, bias_attr=False) for ci in c])
            self.smooth = nn.LayerList([nn.Conv2D(inner, inner // 4, 3, 1, 1, bias_attr=False) for _ in c])
            self.head = nn.Sequential(
                cbr(inner, inner // 4),
                nn.Conv2DTranspose(inner // 4, inner // 4, 2, 2),
                nn.BatchNorm2D(inner // 4),
                nn.ReLU(),
                nn.Conv2DTranspose(inner // 4, 1, 2, 2),
                nn.Sigmoid(),
            )

        def forward(self, x):
            f, feats = self.stem(x), []
            for s in self.stages:
                f = s(f)
                feats.append(f)
            c2, c3, c4, c5 = [lat(f) for lat, f in zip(self.lat, feats)]
            # PaddleOCR's DBFPN: upsample by scale 2 and add (the sizes agree only when H, W are multiples of 32)
            p4 = c4 + up(c5, 2.0)
            p3 = c3 + up(p4, 2.0)
            p2 = c2 + up(p3, 2.0)
            p5, p4, p3, p2 = (sm(p) for sm, p in zip(self.smooth[::-1], (c5, p4, p3, p2)))
            p5 = up(p5, 8.0)
            p4 = up(p4, 4.0)
            p3 = up(p3, 2.0)
            return self.head(paddle.concat([p5, p4, p3, p2], axis=1))

    class CRNN(nn.Layer):
        """PP-OCR's CRNN recogniser in small: height 48 pooled to 1, width kept at 1/4, BiLSTM, CTC logits."""

        def __init__(self, classes=37):
            super().__init__()
            self.body = nn.Sequential(
                cbr(3, 16, 3, 1),
                nn.MaxPool2D(2, 2),  # 24 x W/2
                cbr(16, 32),
                nn.MaxPool2D(2, 2),  # 12 x W/4
                cbr(32, 48),
                nn.MaxPool2D((2, 1), (2, 1)),  # 6 x W/4
                cbr(48, 64),
                nn.MaxPool2D((2, 1), (2, 1)),  # 3 x W/4
                cbr(64, 64),
                nn.AvgPool2D((3, 2), (3, 2), ceil_mode=True),  # 1 x W/8, as PP-OCR's neck pools
            )
            self.rnn = nn.LSTM(64, 32, direction="bidirect")
            self.fc = nn.Linear(64, classes)

        def forward(self, x):
            f = self.body(x).squeeze(2).transpose([0, 2, 1])  # [B, T, C]
            y, _ = self.rnn(f)
            return F.softmax(self.fc(y), axis=2)

    spec = paddle.static.InputSpec
    db_binds = [dict(batch=1, height=64, width=96), dict(batch=2, height=96, width=160)]

    def db(name, placeholder):
        path = d / f"{name}.onnx"
        paddle.seed(0)
        how = export(DBNet(), spec([None, 3, None, None], "float32", "x"), path)
        notes = (
            "PaddleOCR-style DB detector (ResNet-like basic blocks c=(16,24,32,48), DBFPN with upsample x2 + add, "
            f"DB head with two transposed convs) built with paddle.nn, random init (seed 0); {how}. "
            "Bindings: multiples of 32 (the FPN adds need H, W multiples of 32)."
        )
        if placeholder:
            m = onnx.load(str(path))
            dims = m.graph.input[0].type.tensor_type.shape.dim
            dims[0].dim_param, dims[2].dim_param, dims[3].dim_param = "-1", "?", "?"
            onnx.save(m, str(path))
            notes += (
                " Input dims then rewritten to dim_param ['-1', 3, '?', '?'] as older paddle2onnx wrote them "
                "(both '?' are the same string; onnxruntime feeds them independently). Bindings are given by "
                "those placeholder names, so they are square."
            )
            binds = [{"-1": 1, "?": 64}, {"-1": 2, "?": 96}]
            _check_runs(path, binds)
            _sidecar(path, binds, notes)
        else:
            _finish(path, db_binds, notes)

    def crnn():
        path = d / "paddle_crnn_rec.onnx"
        paddle.seed(0)
        how = export(CRNN(), spec([None, 3, 48, None], "float32", "x"), path)
        _finish(
            path,
            [dict(batch=1, width=96), dict(batch=2, width=200)],
            "PaddleOCR-style CRNN recogniser (conv + max pools halving height to 3, AvgPool2D((3,2), ceil_mode) to "
            f"height 1, bidirectional LSTM, FC, softmax) built with paddle.nn, random init (seed 0); {how}.",
            {0: "batch", 3: "width"},
        )

    run("paddle/paddle_db_det", db, "paddle_db_det", False)
    run("paddle/paddle_db_det_qmark", db, "paddle_db_det_qmark", True)
    run("paddle/paddle_crnn_rec", crnn)


# ----------------------------------------------------------------------------------------- extra


def extra_section(out: Path) -> None:
    """A UNet and a DETR-like detector, written here in torch, both exporters."""
    try:
        import torch
    except ImportError as e:
        print(f"extra section skipped: {e}")
        return
    import math

    nn = torch.nn
    d = out / "extra"
    d.mkdir(parents=True, exist_ok=True)

    def cbr(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        """Four 2x max-pool downs, transposed-conv ups, skips joined by Concat (H, W multiples of 16)."""

        def __init__(self, c=(8, 16, 32, 48, 64)):
            super().__init__()
            self.down = nn.ModuleList([cbr(3 if i == 0 else c[i - 1], c[i]) for i in range(5)])
            self.up = nn.ModuleList([nn.ConvTranspose2d(c[i + 1], c[i], 2, 2) for i in range(4)])
            self.fuse = nn.ModuleList([cbr(2 * c[i], c[i]) for i in range(4)])
            self.out = nn.Conv2d(c[0], 3, 1)

        def forward(self, x):
            skips = []
            for i, blk in enumerate(self.down):
                x = blk(x if i == 0 else nn.functional.max_pool2d(x, 2))
                skips.append(x)
            for i in reversed(range(4)):
                x = self.fuse[i](torch.cat([self.up[i](x), skips[i]], 1))
            return self.out(x)

    class DETR(nn.Module):
        """DETR in small: stride-16 conv backbone, sine position embedding of the feature grid, transformer."""

        def __init__(self, dm=32, queries=10, classes=5):
            super().__init__()
            self.body = nn.Sequential(
                cbr(3, 16),
                nn.MaxPool2d(2),
                cbr(16, 24),
                nn.MaxPool2d(2),
                cbr(24, 32),
                nn.MaxPool2d(2),
                cbr(32, dm),
                nn.MaxPool2d(2),
            )
            self.tf = nn.Transformer(dm, 2, 1, 1, 64, dropout=0.0, batch_first=True)
            self.query = nn.Parameter(torch.randn(queries, dm))
            self.cls = nn.Linear(dm, classes + 1)
            self.box = nn.Linear(dm, 4)

        def pos(self, f):
            _, c, h, w = f.shape
            y = torch.arange(h, dtype=torch.float32).reshape(h, 1).expand(h, w) / h
            x = torch.arange(w, dtype=torch.float32).reshape(1, w).expand(h, w) / w
            k = torch.arange(c // 4, dtype=torch.float32)
            t = 10000 ** (k / (c // 4))
            e = [
                torch.sin(2 * math.pi * y[..., None] / t),
                torch.cos(2 * math.pi * y[..., None] / t),
                torch.sin(2 * math.pi * x[..., None] / t),
                torch.cos(2 * math.pi * x[..., None] / t),
            ]
            return torch.cat(e, -1).reshape(1, h * w, c)

        def forward(self, img):
            f = self.body(img)
            b = f.shape[0]
            src = f.flatten(2).transpose(1, 2) + self.pos(f)
            q = self.query.unsqueeze(0).expand(b, -1, -1)
            h = self.tf(src, q)
            return self.cls(h), self.box(h).sigmoid()

    specs = {
        "unet": (
            UNet,
            [dict(batch=1, height=64, width=96), dict(batch=2, height=48, width=160)],
            "UNet (5 levels c=(8,16,32,48,64), max-pool down, ConvTranspose2d up, Concat skips). "
            "Bindings: multiples of 16 (the skip Concat needs them)",
        ),
        "detr": (
            DETR,
            [dict(batch=1, height=64, width=96), dict(batch=2, height=100, width=75)],
            "DETR-like (4 conv+maxpool stages to stride 16, sine position embedding built from the feature "
            "shape, nn.Transformer(32, 2 heads, 1+1 layers), 10 queries)",
        ),
    }
    for kind, (cls, binds, what) in specs.items():
        for dynamo in (False, True):
            name = f"x_{kind}_{'dynamo' if dynamo else 'ts'}"

            def make(cls=cls, binds=binds, what=what, dynamo=dynamo, name=name, kind=kind):
                torch.manual_seed(0)
                path = d / f"{name}.onnx"
                # the TorchScript exporter has no aten::_transformer_encoder_layer_fwd: no MHA fast path
                torch.backends.mha.set_fastpath_enabled(False)
                try:
                    how = _torch_export(cls(), torch.randn(2, 3, 64, 96), path, dynamo)
                finally:
                    torch.backends.mha.set_fastpath_enabled(True)
                extra = " (MHA fast path disabled for the export)" if kind == "detr" else ""
                _finish(path, binds, f"{what}, written here in torch, random init (seed 0){extra}; {how}")

            run(f"extra/{name}", make)


SECTIONS = {
    "ultralytics": ultralytics_section,
    "timm": timm_section,
    "torchvision": torchvision_section,
    "paddle": paddle_section,
    "extra": extra_section,
}


if __name__ == "__main__":
    generator_sections.main(__doc__, SECTIONS)
