"""``--timeout`` bounds the whole run, and a dim_param expression bomb cannot run long anyway.

A dim_param is text a model gives; parsing it multiplies out products and powers and expands
nested ``Mod``/``max``, which for hostile text (``(a+...+j)**8`` three times over, a chain of
``%`` that doubles at each level) took minutes. :func:`shapeinfer.symbolic.dims.parse` now leaves
such text one opaque symbol within a bounded amount of work, and ``shapeinfer M --timeout S`` /
``optimize`` stop at S seconds wherever the time goes (one line, exit 1, nothing written)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import shapeinfer
from shapeinfer.inference.engine import InferenceTimeout
from shapeinfer.symbolic import dims as D

_S = "+".join("abcdefghij")


def _sum(prefix: str) -> str:
    return "(" + "+".join(f"{prefix}{i}" for i in range(10)) + ")"


#: name -> dim_param text that took from seconds to minutes to parse before it was bounded
BOMBS = {
    "product-of-ten-sums": "*".join(f"({_S})" for _ in range(10)),
    "product-of-six-distinct-sums": "*".join(_sum(c) for c in "pqrstu"),
    "three-eighth-powers": "*".join(f"({_S})**8" for _ in range(3)),
    "mod-chain": "(" * 150 + "a" + "".join(f"+b{i})%{i + 2}" for i in range(150)),
    "mod-by-symbol-chain": "(" * 100 + "a" + "".join(f"+b{i})%(c{i}+1)" for i in range(100)),
    "nested-max": "max(" * 150 + "a" + "".join(f",b{i}+{i})" for i in range(150)),
    "max-of-300": "max(" + ",".join(f"a{i}+b{i}" for i in range(300)) + ")",
    "power-of-ten": f"({_S})**10",
    "sum-of-10000": "+".join(f"s{i}" for i in range(10000)),
}

#: A dim timm's Swin (torch.export) declares: it must still read as what it is, s77.
SWIN = (Path(__file__).parent / "data" / "swin_dim_param.txt").read_text().strip()


def _alarm(seconds: int):
    def fire(*_):
        raise TimeoutError(f"past {seconds}s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    return old


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_bomb_parses_quickly_to_an_opaque_symbol(name):
    text = BOMBS[name]
    D._PARSED.pop(text, None)
    old = _alarm(10)  # it took 20 s to minutes before
    try:
        t0 = time.monotonic()
        d = D.parse(text)
        took = time.monotonic() - t0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert took < 2.0, took  # well under 0.2 s on an idle machine
    assert D.symbols(d) == {text}  # left as the text it is: an unknown, never a wrong value


def test_a_real_nested_dim_still_reads_as_what_it_is():
    D._PARSED.pop(SWIN, None)
    assert D.format(D.parse(SWIN)) == "s77"


def _relu_chain(dims: list[str]) -> onnx.ModelProto:
    """x[n, 4] through one Relu per dim, each output declared (value_info) with that dim."""
    nodes, vis, prev = [], [], "x"
    for i, d in enumerate(dims):
        nodes.append(h.make_node("Relu", [prev], [f"t{i}"]))
        vis.append(h.make_tensor_value_info(f"t{i}", T.FLOAT, [d, 4]))
        prev = f"t{i}"
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info(prev, T.FLOAT, None)],
        value_info=vis,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _costly(i: int) -> str:
    """A distinct dim near the parser's work bound (about 0.05 s each)."""
    return "+".join(f"(a{i}_{j}+b{j})*(c{j}+d{i}_{j})" for j in range(120))


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """300 declarations each costly to read: about 20 s of parsing in all."""
    p = tmp_path_factory.mktemp("bombs") / "many.onnx"
    onnx.save(_relu_chain([_costly(i) for i in range(300)]), p)
    return p


@pytest.mark.slow
@pytest.mark.parametrize("command", [[], ["optimize"]], ids=["infer", "optimize"])
def test_timeout_bounds_the_whole_run(tmp_path, many, command):
    out = tmp_path / "out.onnx"
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "shapeinfer", *command, str(many), "-o", str(out), "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - t0
    assert took < 6, took  # 2 s, the interpreter's start and the alarm's latency on a busy machine
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == [f"shapeinfer: error: {many}: gave up after 2s (--timeout)"]
    assert not out.exists() and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_the_api_timeout_covers_reading_declarations(many):
    t0 = time.monotonic()
    with pytest.raises(InferenceTimeout):
        shapeinfer.infer(str(many), timeout=1)
    assert time.monotonic() - t0 < 4


@pytest.mark.parametrize("where", ["input", "value_info", "output"])
def test_a_bomb_anywhere_in_the_model_is_an_unknown_quickly(tmp_path, where):
    """The issue's bomb: (a+...+j)**10 (and a product of ten sums) as an input dim, a
    value_info dim or an output dim: inference ends at once; no dim is made up from it."""
    for text in (BOMBS["power-of-ten"], BOMBS["product-of-ten-sums"], BOMBS["three-eighth-powers"]):
        x = h.make_tensor_value_info("x", T.FLOAT, [text if where == "input" else "n", 4])
        vi = [h.make_tensor_value_info("t", T.FLOAT, [text, 4])] if where == "value_info" else []
        y = h.make_tensor_value_info("y", T.FLOAT, [text if where == "output" else None, 4])
        nodes = [h.make_node("Relu", ["x"], ["t"]), h.make_node("Neg", ["t"], ["y"])]
        m = h.make_model(h.make_graph(nodes, "g", [x], [y], value_info=vi), opset_imports=[h.make_opsetid("", 17)])
        D._PARSED.pop(text, None)
        t0 = time.monotonic()
        r = shapeinfer.infer(m)
        assert time.monotonic() - t0 < 5
        expected = text if where == "input" else "n"
        assert D.format(r.dims("y")[0]) == expected


def test_a_run_past_its_timeout_leaves_no_deadline_behind(tmp_path, monkeypatch):
    """A command that gave up at its --timeout between two steps leaves nothing behind that
    stops the next command's write: the deadline belongs to one run."""
    from click.testing import CliRunner

    import shapeinfer.cli.common as common
    from shapeinfer.cli.main import main

    src = str(Path(__file__).parents[2] / "examples" / "models" / "bert_ts.onnx")
    ticks = iter(range(0, 10**6, 100))  # every look at the clock is 100 s later
    monkeypatch.setattr(common.time, "monotonic", lambda: float(next(ticks)))
    r = CliRunner().invoke(main, [src, "--timeout", "5", "-o", str(tmp_path / "a.onnx")])
    assert r.exit_code == 1 and "--timeout" in r.output, r.output
    assert not (tmp_path / "a.onnx").exists()
    monkeypatch.undo()
    r = CliRunner().invoke(main, [src, "-o", str(tmp_path / "b.onnx")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b.onnx").exists()
