"""Convolution and pool output sizes exactly as onnxruntime computes them, at every input size
where it runs the node (issue 32, item 6).

onnxruntime's pools truncate toward zero (``trunc((in + pads - eff) / s) + 1``), so a window
that overhangs the padded input by less than a stride still gives one output; its ceil_mode
drops a last window that starts in the right padding; its SAME pools pad for the undilated
kernel; its ConvTranspose SAME pads ``max(0, eff + output_padding - s)``. The grid builds one-node
models with a symbolic spatial dim, infers them once, and compares the inferred dim at every
size 1..40 with what onnxruntime outputs there (an unknown ``unk_`` dim is allowed, a wrong one
never; where onnxruntime refuses the node, anything goes).
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.op_oracle import Runtime, one_node

import shapeinfer
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.scope import FRESH_PREFIX

FLOAT, UINT8 = TensorProto.FLOAT, TensorProto.UINT8
SIZES = range(1, 41)
AUTO_PADS = ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]

#: (op, opset): MaxPool 12 has dilations and ceil_mode, AveragePool 19 and LpPool 18 too.
POOLS = [("MaxPool", 12), ("AveragePool", 19), ("LpPool", 18)]
CONVS = ["Conv", "ConvInteger", "QLinearConv", "ConvTranspose"]


def _is_unknown(d: D.Dim) -> bool:
    """Whether ``d`` is one fresh symbol, a dim inference left open."""
    names = D.symbols(d)
    return len(names) == 1 and next(iter(names)).startswith(FRESH_PREFIX) and d == D.sym(next(iter(names)))


def _pool_attrs(rng: random.Random) -> dict:
    k, s, d = rng.randint(1, 7), rng.randint(1, 4), rng.randint(1, 3)
    attrs = dict(kernel_shape=[k], strides=[s], ceil_mode=rng.randint(0, 1))
    if d > 1:
        attrs["dilations"] = [d]
    auto_pad = rng.choice(AUTO_PADS)
    if auto_pad == "NOTSET":
        # onnxruntime refuses pads of a kernel's size or more: half of them still below it
        hi = k - 1 if rng.random() < 0.8 else k + 1
        attrs["pads"] = [rng.randint(0, hi), rng.randint(0, hi)]
    else:
        attrs["auto_pad"] = auto_pad
    return attrs


def _conv_attrs(rng: random.Random, op: str) -> dict:
    k, s, d = rng.randint(1, 7), rng.randint(1, 4), rng.randint(1, 3)
    attrs = dict(kernel_shape=[k], strides=[s])
    if d > 1:
        attrs["dilations"] = [d]
    auto_pad = rng.choice(AUTO_PADS)
    if auto_pad == "NOTSET":
        attrs["pads"] = [rng.randint(0, k + 2), rng.randint(0, k + 2)]
    else:
        attrs["auto_pad"] = auto_pad
    if op == "ConvTranspose":
        if rng.random() < 0.5:
            attrs["output_padding"] = [rng.randint(0, max(s, d) - 1)]
        if rng.random() < 0.15:
            attrs["output_shape"] = [rng.randint(1, 60)]
    return attrs


def _conv_model(op: str, attrs: dict) -> tuple[onnx.ModelProto, type]:
    k = attrs["kernel_shape"][0]
    if op == "QLinearConv":
        q = dict(xs=np.float32(1), xz=np.uint8(0), w=np.ones((1, 1, k), np.uint8), ws=np.float32(1))
        q.update(wz=np.uint8(0), ys=np.float32(1), yz=np.uint8(0))
        return one_node(op, [("x", UINT8, [1, 1, "n"])], consts=q, attrs=attrs, opset=18), np.uint8
    if op == "ConvInteger":
        return one_node(op, [("x", UINT8, [1, 1, "n"])], {"w": np.ones((1, 1, k), np.uint8)}, attrs, 18), np.uint8
    return one_node(op, [("x", FLOAT, [1, 1, "n"])], {"w": np.ones((1, 1, k), np.float32)}, attrs, 18), np.float32


def _cases(n_pool: int, n_conv: int, seed: int = 32) -> list[tuple[str, int, dict]]:
    rng = random.Random(seed)
    cases = [(op, opset, _pool_attrs(rng)) for _ in range(n_pool) for op, opset in POOLS]
    cases += [(op, 18, _conv_attrs(rng, op)) for _ in range(n_conv) for op in CONVS]
    return cases


def _check(op: str, opset: int, attrs: dict) -> tuple[int, int, list]:
    """(sizes where onnxruntime ran and the dim was exact, sizes left unknown, mismatches)."""
    if op in ("MaxPool", "AveragePool", "LpPool"):
        model, dtype = one_node(op, [("x", FLOAT, [1, 1, "n"])], attrs=attrs, opset=opset), np.float32
    else:
        model, dtype = _conv_model(op, attrs)
    try:
        rt = Runtime(model)
    except Exception:
        return 0, 0, []  # onnxruntime refuses the node outright (pads >= kernel in a pool)
    r = shapeinfer.infer(model)
    f = r.facts.get("y0")
    dim = None if f is None or f.shape is None else f.shape[2]
    exact, unknown, bad = 0, 0, []
    for n in SIZES:
        out = rt.run({"x": np.ones((1, 1, n), dtype)})
        if out is None:
            continue  # onnxruntime refuses this size: anything goes
        want = out[0].shape[2]
        if dim is None or _is_unknown(dim):
            unknown += 1
            continue
        got = D.evaluate(dim, {"n": n})
        if got != want:
            bad.append((n, D.format(dim), got, want))
        else:
            exact += 1
    return exact, unknown, bad


@pytest.mark.parametrize("family", ["pool", "conv"])
def test_grid_against_onnxruntime(family: str) -> None:
    # 3 pools x 60 and 4 convs x 45 sampled attribute sets, each at every size 1..40
    cases = [c for c in _cases(60, 45) if (c[0] in ("MaxPool", "AveragePool", "LpPool")) == (family == "pool")]
    exact = unknown = 0
    failures = []
    for op, opset, attrs in cases:
        e, u, bad = _check(op, opset, attrs)
        exact, unknown = exact + e, unknown + u
        failures += [(op, attrs) + b for b in bad[:2]]
    assert not failures, f"{len(failures)} wrong dims, e.g. {failures[:6]}"
    # the grid checks something: most sizes onnxruntime runs are compared, few left open
    assert exact > 3000 and unknown < exact // 20, (exact, unknown)


def _every_case() -> list[tuple[str, int, dict]]:
    """Every pool attribute set of kernel 1..7, stride 1..4, dilation 1..3, ceil_mode 0/1 with
    each pair of pads below the kernel and each auto_pad; every conv one with seven pad pairs
    (to past the kernel) and each auto_pad, ConvTranspose with each output_padding too."""
    cases = []
    for (op, opset), k, s, d, ceil in itertools.product(POOLS, range(1, 8), range(1, 5), range(1, 4), (0, 1)):
        base = dict(kernel_shape=[k], strides=[s], ceil_mode=ceil) | ({"dilations": [d]} if d > 1 else {})
        cases += [(op, opset, dict(base, pads=[pb, pe])) for pb, pe in itertools.product(range(k), range(k))]
        cases += [(op, opset, dict(base, auto_pad=ap)) for ap in AUTO_PADS[1:]]
    for op, k, s, d in itertools.product(CONVS, range(1, 8), range(1, 5), range(1, 4)):
        base = dict(kernel_shape=[k], strides=[s]) | ({"dilations": [d]} if d > 1 else {})
        adjs = range(max(s, d)) if op == "ConvTranspose" else [0]
        for adj in adjs:
            more = dict(base, output_padding=[adj]) if adj else base
            cases += [
                (op, 18, dict(more, pads=[pb, pe])) for pb, pe in [(0, 0), (1, 0), (2, 1), (k, k + 2), (k + 2, 0)]
            ]
            cases += [(op, 18, dict(more, auto_pad=ap)) for ap in AUTO_PADS[1:]]
    return cases


@pytest.mark.fuzz
def test_every_case_against_onnxruntime() -> None:
    # about 17000 models, a minute: run with -m fuzz
    failures = []
    for op, opset, attrs in _every_case():
        failures += [(op, attrs) + b for b in _check(op, opset, attrs)[2][:1]]
    assert not failures, f"{len(failures)} attribute sets with wrong dims, e.g. {failures[:6]}"


def _chain(rng: random.Random, length: int) -> onnx.ModelProto:
    """A model ``x[1, 1, n]`` through ``length`` random pools and convolutions, every node's
    output a graph output."""
    nodes, inits, prev = [], [], "x"
    for i in range(length):
        op = rng.choice(["MaxPool", "AveragePool", "MaxPool", "AveragePool", "Conv", "ConvTranspose"])
        attrs = _pool_attrs(rng) if op.endswith("Pool") else _conv_attrs(rng, op)
        attrs.pop("output_shape", None)
        ins = [prev]
        if op.startswith("Conv"):
            k = attrs["kernel_shape"][0]
            inits.append(numpy_helper.from_array(np.ones((1, 1, k), np.float32), f"w{i}"))
            ins.append(f"w{i}")
        nodes.append(helper.make_node(op, ins, [f"y{i}"], **attrs))
        prev = f"y{i}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", FLOAT, [1, 1, "n"])],
        [helper.make_empty_tensor_value_info(f"y{i}") for i in range(length)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def test_chains_against_onnxruntime() -> None:
    # a size that is a max (a pool's) is sized per argument: every dim of a chain stays exact
    rng = random.Random(320)
    checked, failures = 0, []
    for _ in range(80):
        model = _chain(rng, rng.randint(2, 4))
        try:
            rt = Runtime(model)
        except Exception:
            continue
        r = shapeinfer.infer(model)
        for n in SIZES:
            outs = rt.run({"x": np.ones((1, 1, n), np.float32)})
            for i, out in enumerate(outs or ()):
                f = r.facts.get(f"y{i}")
                dim = None if f is None or f.shape is None else f.shape[2]
                if dim is None or any(x.startswith(FRESH_PREFIX) for x in D.symbols(dim)):
                    continue  # left open (or past the engine's expression cap), or built on such a dim
                checked += 1
                if D.evaluate(dim, {"n": n}) != out.shape[2]:
                    failures.append((n, i, D.format(dim), out.shape[2], [nd.op_type for nd in model.graph.node]))
    assert not failures, failures[:5]
    assert checked > 3000


def test_pool_after_pool_reads_as_one_pool() -> None:
    attrs = dict(kernel_shape=[2], strides=[2])
    nodes = [helper.make_node("MaxPool", ["x"], ["a"], **attrs), helper.make_node("MaxPool", ["a"], ["b"], **attrs)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", FLOAT, [1, 1, "n"])], [helper.make_empty_tensor_value_info("b")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    r = shapeinfer.infer(model)
    assert [D.format(r.facts[t].shape[2]) for t in "ab"] == ["max(n//2, 1)", "max(n//4, 1)"]
    rt = Runtime(model)
    assert [rt.run({"x": np.ones((1, 1, n), np.float32)})[0].shape[2] for n in range(1, 10)] == [
        D.evaluate(r.facts["b"].shape[2], {"n": n}) for n in range(1, 10)
    ]


def _pool_dim(op: str, attrs: dict, width: int | str, opset: int = 18) -> tuple[D.Dim | None, list]:
    model = one_node(op, [("x", FLOAT, [1, 3, 8, width])], attrs=attrs, opset=opset)
    r = shapeinfer.infer(model)
    f = r.facts.get("y0")
    errors = [d.code for d in r.diagnostics if d.severity == "error"]
    return (None if f is None or f.shape is None else f.shape[3]), errors


def _ort_width(op: str, attrs: dict, width: int, opset: int = 18) -> int | None:
    model = one_node(op, [("x", FLOAT, [1, 3, 8, width])], attrs=attrs, opset=opset)
    out = Runtime(model).run({"x": np.ones((1, 3, 8, width), np.float32)})
    return None if out is None else out[0].shape[3]


def test_window_past_the_input_by_less_than_a_stride_gives_one() -> None:
    # a recogniser's last AveragePool k2 s2 at width 1: onnxruntime outputs 1, the floor formula 0
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    for op in ("AveragePool", "MaxPool"):
        dim, _ = _pool_dim(op, attrs, "w")
        assert [D.evaluate(dim, {"w": w}) for w in range(1, 7)] == [_ort_width(op, attrs, w) for w in range(1, 7)]
        assert D.evaluate(dim, {"w": 1}) == 1


def test_constant_window_past_the_input_runs_in_onnxruntime() -> None:
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    assert _ort_width("MaxPool", attrs, 1) == 1
    assert _pool_dim("MaxPool", attrs, 1) == (1, [])  # was E040 "window larger than the padded input"
    # k3 s2 at width 1 overhangs by a whole stride: onnxruntime gives an empty output
    attrs = dict(kernel_shape=[1, 3], strides=[1, 2])
    assert _ort_width("MaxPool", attrs, 1) == 0
    assert _pool_dim("MaxPool", attrs, 1) == (0, [])


def test_constant_window_past_the_input_by_two_strides_is_an_error() -> None:
    for attrs in (dict(kernel_shape=[1, 5], strides=[1, 2]), dict(kernel_shape=[1, 5], ceil_mode=1)):
        assert _ort_width("MaxPool", attrs, 1) is None  # "Calculated output dimension is negative"
        assert _pool_dim("MaxPool", attrs, 1) == (None, ["E040"])
    # a convolution needs the whole window inside the padded input
    model = one_node("Conv", [("x", FLOAT, [1, 1, 1]), ("w", FLOAT, [1, 1, 2])], attrs=dict(strides=[2]))
    assert Runtime(model).run({"x": np.ones((1, 1, 1), np.float32), "w": np.ones((1, 1, 2), np.float32)}) is None
    assert [d.code for d in shapeinfer.infer(model).diagnostics if d.severity == "error"] == ["E040"]
    model = one_node("Conv", [("x", FLOAT, [1, 1, 1]), ("w", FLOAT, [1, 1, 3])], attrs=dict(auto_pad="VALID"))
    assert [d.code for d in shapeinfer.infer(model).diagnostics if d.severity == "error"] == ["E040"]


@pytest.mark.parametrize(
    "attrs",
    [
        dict(kernel_shape=[1, 2], strides=[1, 2], auto_pad="VALID", ceil_mode=1),  # ceil_mode with VALID
        dict(kernel_shape=[1, 3], dilations=[1, 2], auto_pad="SAME_UPPER"),  # SAME pads the undilated kernel
        dict(kernel_shape=[1, 3], strides=[1, 2], dilations=[1, 3], auto_pad="SAME_LOWER", ceil_mode=1),
    ],
)
def test_pool_auto_pad_as_onnxruntime(attrs: dict) -> None:
    dim, _ = _pool_dim("MaxPool", attrs, "w")
    checked = 0
    for w in range(1, 15):
        want = _ort_width("MaxPool", attrs, w)
        if want is not None:
            assert D.evaluate(dim, {"w": w}) == want, (w, D.format(dim))
            checked += 1
    assert checked >= 10


def test_conv_transpose_same_with_a_stride_past_the_kernel() -> None:
    # SAME pads max(0, eff + output_padding - s): with k1 s2 that is 0, so 2n - 1, not 2n
    attrs = dict(kernel_shape=[1], strides=[2], auto_pad="SAME_UPPER")
    model = one_node("ConvTranspose", [("x", FLOAT, [1, 1, "n"])], {"w": np.ones((1, 1, 1), np.float32)}, attrs)
    dim = shapeinfer.infer(model).facts["y0"].shape[2]
    rt = Runtime(model)
    for n in (1, 2, 5):
        assert D.evaluate(dim, {"n": n}) == rt.run({"x": np.ones((1, 1, n), np.float32)})[0].shape[2] == 2 * n - 1


@pytest.mark.parametrize(
    "attrs,form",
    [
        (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), "(w + 1)//2"),
        (dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), "(w + 1)//2"),
        (dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]), "(w + 1)//2"),
        (dict(kernel_shape=[3, 3], strides=[1, 1]), "w - 2"),
    ],
)
def test_forms_that_were_right_stay_as_they_were(attrs: dict, form: str) -> None:
    dim, _ = _pool_dim("MaxPool", attrs, "w")
    assert D.format(dim) == form


def test_grid_cases_cover_the_attribute_space() -> None:
    cases = _cases(60, 45)
    seen = {(op, a.get("auto_pad", "NOTSET"), a.get("ceil_mode", 0)) for op, _, a in cases}
    assert {(op, ap, c) for op, _ in POOLS for ap, c in itertools.product(AUTO_PADS, (0, 1))} <= seen
    assert {a["strides"][0] for _, _, a in cases} == {1, 2, 3, 4}
    assert {a["kernel_shape"][0] for _, _, a in cases} == set(range(1, 8))
    assert {a.get("dilations", [1])[0] for _, _, a in cases} == {1, 2, 3}
    assert any(p[0] != p[1] and max(p) * 2 > a["kernel_shape"][0] for _, _, a in cases if (p := a.get("pads")))
