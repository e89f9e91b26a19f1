"""Dynamic-resolution vision idioms (issue 32): feature pyramids flattened and concatenated, FPN
top-down paths that broadcast an upsampled level against a lateral one. Each model is checked
tensor by tensor against onnxruntime at sizes 1, 2, 3 and odd, non-square ones, and what
``-o`` and ``optimize -o`` write must run wherever the original runs, with the same outputs."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from support.written import size_grid, written_problems

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle


def _init(name: str, v, dt=np.int64) -> onnx.TensorProto:
    return nh.from_array(np.array(v, dt), name)


def _model(nodes, inits, opset: int = 17) -> onnx.ModelProto:
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, "height", "width"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def _pool_levels(n: int) -> list[onnx.NodeProto]:
    """p0..p{n-1}: MaxPool k3 s2 p1 chained from x (strides 2, 4, 8, ...)."""
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(h.make_node("MaxPool", [prev], [f"p{i}"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
        prev = f"p{i}"
    return nodes


def pyramid_concat(levels: int = 5) -> onnx.ModelProto:
    """YOLO's detection head layout: every pyramid level flattened by Reshape(p, [0, 3, -1]) and
    the levels concatenated on the anchor axis."""
    nodes = _pool_levels(levels)
    for i in range(levels):
        nodes.append(h.make_node("Reshape", [f"p{i}", "flat"], [f"r{i}"]))
    nodes.append(h.make_node("Concat", [f"r{i}" for i in range(levels)], ["y"], axis=-1))
    return _model(nodes, [_init("flat", [0, 3, -1])])


def fpn_top_down() -> onnx.ModelProto:
    """An FPN step as PaddleOCR's DB neck writes it: the stride-32 level upsampled 2x (Resize by
    scales) and added to the stride-16 level. At height 1..16 the stride-16 level is 1 high and
    the upsampled one 2: onnxruntime broadcasts the 1 and the sum is 2 high."""
    nodes = _pool_levels(5)
    nodes.append(h.make_node("Resize", ["p4", "", "scales"], ["up"], mode="nearest"))
    nodes.append(h.make_node("Add", ["up", "p3"], ["sum"]))
    nodes.append(h.make_node("Relu", ["sum"], ["y"]))
    return _model(nodes, [_init("scales", [1, 1, 2, 2], np.float32)])


def _ort_runs(m: onnx.ModelProto, binding) -> bool:
    try:
        ort_oracle.run(m, ort_oracle.feeds(m, binding))
    except Exception:
        return False
    return True


def _dims_agree(m: onnx.ModelProto, grid) -> shapeinfer.Result:
    """Every tensor inferred for ``m`` agrees with onnxruntime at each size of ``grid`` where it
    runs (no guard excuses a disagreement: these models' dims hold wherever they run)."""
    return ort_oracle.assert_inferred_dims_hold(m, grid)


GRID = size_grid(["batch", "height", "width"], [{"batch": 2, "height": 64, "width": 96}])


def test_five_pyramid_levels_concatenated_resolve_to_the_sum_of_their_areas():
    m = pyramid_concat(5)
    r = _dims_agree(m, GRID)
    anchors = r.dims("y")[2]
    assert not D.symbols(anchors) - {"height", "width"}  # no fresh symbol, nothing given up
    hh, ww = D.sym("height"), D.sym("width")
    want = sum(D.floordiv(hh + k - 1, k) * D.floordiv(ww + k - 1, k) for k in (2, 4, 8, 16, 32))
    assert anchors == want
    assert D.evaluate(anchors, {"height": 64, "width": 64}) == 32 * 32 + 16 * 16 + 8 * 8 + 4 * 4 + 2 * 2
    assert not r.capped and not [d for d in r.diagnostics if d.code == "G016"]


def test_an_upsampled_level_added_to_a_lateral_one_is_written_as_it_runs_at_every_size():
    m = fpn_top_down()
    r = _dims_agree(m, GRID)
    h2 = 2 * D.floordiv(D.sym("height") + 31, 32)
    assert r.dims("sum")[2] == h2  # the larger side, whatever the lateral level is
    assert any(g.kind == "broadcast" for g in r.guards())
    for written in (shapeinfer.infer_shapes(m), shapeinfer.optimize(m)):
        runs, problems = written_problems(m, written, GRID)
        assert runs >= 3 and not problems, problems


def _c(name: str, v) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, np.int64), name + "_v"))


def swin_window_mask() -> onnx.ModelProto:
    """timm Swin's shifted-window mask at a stage of width r = n//4 - n//8: the width padded to
    the window (7), Wp = 7*((r + 6)//7) + max(min(r, 3), 0) - min(r, 3), then Range(0, Wp) and
    Slice(-7, -3) of it (the shifted slice): 0 long for n < 4, 4 from n = 4 on."""
    nodes = [h.make_node("Shape", ["x"], ["sh"]), _c("one", 1), h.make_node("Gather", ["sh", "one"], ["n"])]
    nodes += [_c(f"c{k}", k) for k in (0, 3, 4, 6, 7, 8)]
    nodes += [
        h.make_node("Div", ["n", "c4"], ["n4"]),
        h.make_node("Div", ["n", "c8"], ["n8"]),
        h.make_node("Sub", ["n4", "n8"], ["r"]),
        h.make_node("Min", ["r", "c3"], ["m"]),
        h.make_node("Max", ["m", "c0"], ["mx"]),
        h.make_node("Sub", ["mx", "m"], ["extra"]),
        h.make_node("Add", ["r", "c6"], ["r6"]),
        h.make_node("Div", ["r6", "c7"], ["q"]),
        h.make_node("Mul", ["q", "c7"], ["q7"]),
        h.make_node("Add", ["q7", "extra"], ["wp"]),
        h.make_node("Range", ["c0", "wp", "one"], ["rng"]),
        _c("s", [-7]),
        _c("e", [-3]),
        _c("ax", [0]),
        h.make_node("Slice", ["rng", "s", "e", "ax"], ["y"]),
    ]
    g = h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["b", "n"])], [h.make_tensor_value_info("y", T.INT64, None)]
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_swin_padded_window_slice_is_exact_and_four_where_ranges_say_n_is_at_least_4():
    m = swin_window_mask()
    r = _dims_agree(m, [{"b": 1, "n": n} for n in range(1, 41)])
    (length,) = r.dims("y")
    assert not D.symbols(length) - {"n"}  # exact, not a fresh symbol
    assert [D.evaluate(length, {"n": n}) for n in (1, 2, 3, 4, 5, 40)] == [0, 0, 0, 4, 4, 4]
    # the stage width is never negative, so the padding's max/min cancel: Wp = 7*((r + 6)//7)
    n = D.sym("n")
    assert r.dims("rng") == (7 * ((n // 4 - n // 8 + 6) // 7),)
    ranged = shapeinfer.infer(m, dim_ranges={"n": (4, None)})
    assert ranged.dims("y") == (4,) and not ranged.guards()


def yolo_neck(levels: int = 5) -> onnx.ModelProto:
    """A YOLO/FPN neck: stride-2 levels p0 (stride 2) .. p{levels-1}; from the top, each level is
    upsampled 2x and concatenated (channels) with the level below, down to p0."""
    nodes = _pool_levels(levels)
    top = f"p{levels - 1}"
    for i in range(levels - 2, -1, -1):
        nodes.append(h.make_node("Resize", [top, "", "scales"], [f"u{i}"], mode="nearest"))
        nodes.append(h.make_node("Concat", [f"u{i}", f"p{i}"], [f"n{i}"], axis=1))
        top = f"n{i}"
    nodes.append(h.make_node("Relu", [top], ["y"]))
    return _model(nodes, [_init("scales", [1, 1, 2, 2], np.float32)])


def test_a_yolo_neck_needs_one_residue_of_32_and_resolves_without_guards_under_a_step():
    m = yolo_neck(5)
    r = _dims_agree(m, [{"batch": 1, "height": 64, "width": 96}, {"batch": 2, "height": 32, "width": 160}])
    # four concats, one condition per axis: the stride-2 level a multiple of 16 (h % 32 is 0 or
    # 31: at 31 the k3 s2 p1 levels are 16, 8, 4, 2, 1 and line up too)
    want = [("((height + 1)//2) % 16 == 0", "divisibility"), ("((width + 1)//2) % 16 == 0", "divisibility")]
    assert [(g.text, g.kind) for g in r.guards()] == want
    assert len(r.guards()[0].nodes) == 4
    assert _ort_runs(m, {"batch": 1, "height": 31, "width": 63}) and not _ort_runs(
        m, {"batch": 1, "height": 30, "width": 32}
    )
    stepped = shapeinfer.infer(m, dim_ranges={"height": (32, 1024, 32), "width": (32, None, 32)})
    assert stepped.guards() == [] and not [d for d in stepped.diagnostics if d.code == "G003"]
    hh, ww = D.sym("height"), D.sym("width")
    assert stepped.dims("y") == (D.sym("batch"), 15, hh // 2, ww // 2)
    assert stepped.dims("p4") == (D.sym("batch"), 3, hh // 32, ww // 32)
    # outside the multiples of 32 the neck fails in onnxruntime; inside, the dims are these
    grid = [{"batch": 1, "height": 32 * a, "width": 32 * b} for a, b in ((1, 1), (2, 3), (3, 2))]
    for binding in grid:
        actual = ort_oracle.run_all(m, ort_oracle.feeds(m, binding))
        for name, a in actual.items():
            assert compare(stepped.facts.get(name), a, binding)[0] is None, (binding, name)
    for written in (shapeinfer.infer_shapes(m), shapeinfer.optimize(m)):
        runs, problems = written_problems(m, written, GRID + grid)
        assert runs >= 3 and not problems, problems


def _length_model(nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    """x[b, n]; ``nodes`` compute the scalar ``len`` from ``n``; y = ConstantOfShape([len])."""
    head = [h.make_node("Shape", ["x"], ["sh"]), _c("one", 1), h.make_node("Gather", ["sh", "one"], ["n"])]
    tail = [
        _c("z", [0]),
        h.make_node("Unsqueeze", ["len", "z"], ["len1"]),
        h.make_node("ConstantOfShape", ["len1"], ["y"]),
    ]
    g = h.make_graph(
        head + nodes + tail,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["b", "n"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_an_integer_div_of_unproven_sign_is_written_as_it_truncates():
    """(n - 3)/2 in int64 truncates: at n = 2 it is 0 (the floor is -1) and the model runs. No
    hard guard rules n = 2 out, so the soft guard 3 <= n is not taken: the dim is written as
    the truncation, right at every size the model runs at. At n = 1 the length is -1, which
    ConstantOfShape refuses: the one guard, 2 <= n (said of the truncation, not the floor)."""
    m = _length_model(
        [
            _c("three", 3),
            _c("two", 2),
            h.make_node("Sub", ["n", "three"], ["a"]),
            h.make_node("Div", ["a", "two"], ["len"]),
        ]
    )
    r = _dims_agree(m, [{"b": 1, "n": n} for n in range(1, 12)])
    assert [D.evaluate(r.dims("y")[0], {"n": n}) for n in range(2, 9)] == [0, 0, 0, 1, 1, 2, 2]
    assert [g.text for g in r.guards()] == ["2 <= n"]
    said = [d.message for d in r.diagnostics if d.code == "G012" and d.message.startswith("not assumed")]
    assert len(said) == 1 and said[0].startswith("not assumed: 3 <= n (from Div #6")
    runs, problems = written_problems(m, shapeinfer.infer_shapes(m), [{"b": 1, "n": n} for n in range(1, 12)])
    assert runs >= 8 and not problems, problems


def test_an_integer_div_whose_sign_a_convolution_proves_keeps_the_floor():
    """The same Div where a convolution of the input needs n >= 3 (its window does not fit
    below): the soft guard follows from the hard one, and the floor form stays."""
    conv = [
        h.make_node("Unsqueeze", ["x", "z1"], ["x3"]),
        h.make_node("Conv", ["x3", "w"], ["c"], kernel_shape=[3]),
    ]
    m = _length_model(
        [
            _c("three", 3),
            _c("two", 2),
            h.make_node("Sub", ["n", "three"], ["a"]),
            h.make_node("Div", ["a", "two"], ["len"]),
        ]
    )
    m.graph.node.extend(conv)
    m.graph.initializer.extend([_init("z1", [1]), _init("w", np.ones((1, 1, 3), np.float32), np.float32)])
    m.graph.output.append(h.make_tensor_value_info("c", T.FLOAT, None))
    r = _dims_agree(m, [{"b": 1, "n": n} for n in range(1, 12)])
    assert r.dims("y") == ((D.sym("n") - 3) // 2,)
    assert [g.text for g in r.guards()] == ["3 <= n"]


def test_swin_stage_widths_and_rolled_windows_are_exact():
    """Swin's patch merging pads to even: a stage is h//4 - h//8, which is (h + 4)//8, then
    (h + 12)//16; torch.roll (dynamo) slices at Mod(3, H) = 3 - H*(3//H), which lies in
    [0, H - 1] once H >= 1, so the two slices are Mod(3, H) and H - Mod(3, H) long; and an
    Equal of 7*((h + 24)//28) - 7 with -1 is false (a multiple of 7 is never -1)."""
    hh = D.sym("h")
    stage = hh // 4 - hh // 8
    assert stage == (hh + 4) // 8 and stage - stage // 2 == (hh + 12) // 16
    rolled = D.mod(3, hh // 4)
    assert D.lower_bound(rolled, {"h": (4, None)}) == 0 and D.lower_bound(hh // 4 - rolled, {"h": (4, None)}) == 1
    assert D.never_zero(7 * ((hh + 24) // 28) - 6) and not D.never_zero(7 * ((hh + 24) // 28) - 7)
    clamped = D.dmax(hh // 4 - 3, 0) + D.dmax(hh // 4 - D.dmax(hh // 4 - 3, 0), 0)
    from shapeinfer.symbolic.intervals import holds_eq

    assert holds_eq(clamped, hh // 4) and not holds_eq(clamped, hh // 4 + 1)
