"""Fuzz every subcommand with mutated models: tracebacks, hangs, peak memory, outside opens.

    python tools/fuzz/fuzz_cli.py --cases 5000 --seed 1 [--timeout 10] [--json results.json]

Each case mutates one of the example models (examples/models, tests/models/deploy; ``--models``
to choose others) at the byte level (flips, truncations, splices) or through its structure
(dims, dim_params, element types, attributes, opsets, huge counts, names and strings that are
not valid UTF-8), or in ways
onnxruntime mostly still loads (:func:`loadable_mutation`), or builds an expression bomb, a huge
Concat of shape values or a Split with a huge num_outputs, and runs one of ``infer``, ``infer
--json``, ``infer -o``, ``optimize -o``, ``lint``, ``verify``, ``lint --target openvino
--fix``, ``profile`` (``--json``, ``--all``, ``--dim-range``), ``explain`` (a tensor the model
names), ``diff`` (against the model before the mutation) and ``make-dynamic`` (a static input
axis) on it (``--commands`` to choose) with ``--timeout`` where
the subcommand has one (the writing commands with random ``--bind``, ``--dim-range``,
``--target-opset`` or ``--passes``, :func:`write_options`), from the model's folder or from a
decoy working directory holding its own ``data.bin``.

A parent process imports shapeinfer once and forks one child per case (cheap, and each child
has its own peak RSS, read with ``os.wait4``); the child installs an audit hook that records
every file opened outside the model's folder, the output folder and the system, and runs the
command through click. The parent kills a child that runs past ``--timeout`` + slack. A case
fails on a traceback or "internal error" on stderr, a kill, an outside open, or peak RSS over
``--max-rss``.

When onnxruntime is importable (and unless ``--no-ort``), every model that ``infer -o``,
``optimize -o``, ``lint --fix`` and ``make-dynamic`` write is checked against its (mutated)
input, in batches of ``--ort-batch`` cases run by one forked checker (which imports onnxruntime
itself, so the CLI children's RSS is theirs alone): when onnxruntime loads the input (default
session options, as deployed), it must load the output (**loads worse** otherwise, also when it
crashes or hangs onnxruntime), and when the input runs on generated inputs at a binding of its
symbolic dims (each symbol its own value in 2, 3, 4, ...; all 2 if the input fails there), the
output must run and give the same outputs, by name, within a tolerance (fp16 1e-2, other floats
1e-4, the rest exactly; **different outputs** otherwise). An input that onnxruntime refuses,
cannot run, or whose outputs differ between two of its own runs (random ops) is not compared.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import io
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)  # testkit

from shapeinfer.base.text import text  # noqa: E402
from testkit import ort_oracle  # noqa: E402  (the tests' generated inputs and comparison of results)

SUBCOMMANDS = [
    "infer",
    "json",
    "out",
    "optimize",
    "lint",
    "verify",
    "lint-fix",
    "profile",
    "explain",
    "diff",
    "make-dynamic",
]
#: the subcommands of the seeds run before profile, explain, diff and make-dynamic joined
#: (``--commands`` takes them to repeat such a seed case for case)
FIRST_SEVEN = SUBCOMMANDS[:7]
#: the subcommands that write a model, checked in onnxruntime against their input
WRITERS = ("out", "optimize", "lint-fix", "make-dynamic")


# ----------------------------------------------------------------------------- mutations


def _bad_text(rng: random.Random) -> bytes:
    return rng.choice([b"\xff\xfe", b"a\x80b", b"\xc3(", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])


def structure_mutation(model, rng: random.Random):
    """One structure-aware mutation of ``model`` (an onnx.ModelProto, changed in place)."""
    from onnx import TensorProto, helper

    g = model.graph
    kind = rng.choice(["dim", "dim_param", "dtype", "attr", "opset", "count", "name", "shape_init", "drop"])
    if kind == "dim" and g.input:
        vi = rng.choice(list(g.input))
        dims = vi.type.tensor_type.shape.dim
        if dims:
            rng.choice(list(dims)).dim_value = rng.choice([0, -1, -5, 1, 2**31, 2**62, 2**63 - 1])
    elif kind == "dim_param" and g.input:
        vi = rng.choice(list(g.input))
        dims = vi.type.tensor_type.shape.dim
        if dims:
            rng.choice(list(dims)).dim_param = rng.choice(
                ["", "a*b*c*d*e*f", "(" * 50 + "x" + ")" * 50, "1e400", "9" * 5000, "x**99999", "batch size"]
            )
    elif kind == "dtype" and g.input:
        rng.choice(list(g.input)).type.tensor_type.elem_type = rng.choice([0, 7, 8, 16, 99, 1])
    elif kind == "attr" and g.node:
        n = rng.choice(list(g.node))
        if n.attribute:
            a = rng.choice(list(n.attribute))
            if a.type == a.INT:
                a.i = rng.choice([-(2**63), -1, 0, 2**31, 2**63 - 1])
            elif a.type == a.INTS:
                a.ints[:] = [rng.choice([-(2**63), -1, 0, 2**62, 5]) for _ in range(rng.choice([0, 1, 3, 9]))]
            elif a.type == a.FLOAT:
                a.f = rng.choice([float("nan"), float("inf"), -1.0, 1e30])
            elif a.type == a.STRING:
                a.s = _bad_text(rng)
        else:
            n.attribute.append(helper.make_attribute(rng.choice(["axis", "num_outputs", "perm", "to"]), 2**62))
    elif kind == "opset":
        for o in model.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = rng.choice([1, 6, 11, 13, 18, 21, 25, 99, 2**62])
    elif kind == "count" and g.node:
        n = rng.choice(list(g.node))
        if n.op_type == "Split" or rng.random() < 0.3:
            n.attribute.append(helper.make_attribute("num_outputs", rng.choice([2**31, 2**62, 10**6])))
        else:
            for a in n.attribute:
                if a.type == a.INTS:
                    a.ints[:] = [1] * rng.choice([2000, 100_000])
    elif kind == "name" and g.node:
        n = rng.choice(list(g.node))
        n.name = "PLACEHOLDER_NAME"
    elif kind == "shape_init":
        import numpy as np
        from onnx import numpy_helper

        for t in g.initializer:
            if t.data_type == TensorProto.INT64 and len(t.dims) == 1 and 0 < t.dims[0] <= 8:
                vals = rng.choice([[2**62] * t.dims[0], [-(2**63)] * t.dims[0], [0] * t.dims[0], [2**31] * t.dims[0]])
                t.CopyFrom(numpy_helper.from_array(np.array(vals, np.int64), t.name))
                break
    elif kind == "drop" and g.node:
        del g.node[rng.randrange(len(g.node))]
    data = model.SerializeToString()
    if kind == "name":
        data = data.replace(b"PLACEHOLDER_NAME", _bad_text(rng))
    return data


def loadable_mutation(model, rng: random.Random) -> bytes:
    """One to three mutations of ``model`` (changed in place) that onnxruntime mostly still
    loads and runs, so that what ``-o`` and ``optimize`` write from it gets compared: input dims
    fixed, renamed apart or left open, input shapes dropped, value_info dropped or made wrong,
    graph outputs re-typed or added, neighbouring opsets and IR versions, Constant nodes and
    initializers swapped, initializers made overridable inputs."""
    from onnx import TensorProto, helper

    g = model.graph
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.choice(
            [
                "fix_dim",
                "split_sym",
                "open_dim",
                "drop_shape",
                "drop_value_info",
                "wrong_value_info",
                "output_type",
                "extra_output",
                "opset",
                "const_to_init",
                "init_to_const",
                "init_as_input",
            ]
        )
        syms = sorted({d.dim_param for vi in g.input for d in vi.type.tensor_type.shape.dim if d.dim_param})
        if kind == "fix_dim" and syms:
            sym, value = rng.choice(syms), rng.choice([0, 1, 1, 2, 3, 7])
            for vi in g.input if rng.random() < 0.8 else [rng.choice(list(g.input))]:
                for d in vi.type.tensor_type.shape.dim:
                    if d.dim_param == sym:
                        d.dim_value = value
        elif kind == "split_sym" and syms and g.input:
            sym = rng.choice(syms)
            for d in rng.choice(list(g.input)).type.tensor_type.shape.dim:
                if d.dim_param == sym:
                    d.dim_param = sym + "_other"
        elif kind == "open_dim" and g.input:
            dims = list(rng.choice(list(g.input)).type.tensor_type.shape.dim)
            if dims:
                rng.choice(dims).Clear()
        elif kind == "drop_shape" and g.input:
            rng.choice(list(g.input)).type.tensor_type.ClearField("shape")
        elif kind == "drop_value_info":
            keep = [vi for vi in g.value_info if rng.random() < 0.5] if rng.random() < 0.5 else []
            del g.value_info[:]
            g.value_info.extend(keep)
        elif kind == "wrong_value_info" and g.value_info:
            dims = list(rng.choice(list(g.value_info)).type.tensor_type.shape.dim)
            if dims:
                d = rng.choice(dims)
                if rng.random() < 0.5:
                    d.dim_value = rng.choice([1, 3, 5, 1000])
                else:
                    d.dim_param = rng.choice(["batch", "seq", "fuzz_sym"])
        elif kind == "output_type" and g.output:
            tt = rng.choice(list(g.output)).type.tensor_type
            how = rng.choice(["clear", "open", "param", "value"])
            if how == "clear":
                tt.ClearField("shape")
            elif tt.shape.dim:
                d = rng.choice(list(tt.shape.dim))
                if how == "open":
                    d.Clear()
                elif how == "param":
                    d.dim_param = rng.choice(["batch", "seq", "fuzz_sym"])
                else:
                    d.dim_value = rng.choice([1, 2, 64, 1000])
        elif kind == "extra_output" and g.node:
            name = next((o for o in rng.choice(list(g.node)).output if o), None)
            if name and name not in {o.name for o in g.output}:
                g.output.append(helper.make_empty_tensor_value_info(name))
        elif kind == "opset":
            for o in model.opset_import:
                if o.domain in ("", "ai.onnx"):
                    o.version = max(13, min(21, o.version + rng.choice([-2, -1, 1, 2])))
                    model.ir_version = max(model.ir_version, 10 if o.version >= 21 else 8)
        elif kind == "const_to_init":
            consts = [n for n in g.node if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"]
            if consts:
                n = rng.choice(consts)
                t = TensorProto()
                t.CopyFrom(n.attribute[0].t)
                t.name = n.output[0]
                g.node.remove(n)
                g.initializer.append(t)
        elif kind == "init_to_const" and g.initializer:
            t = rng.choice(list(g.initializer))
            if t.name not in {i.name for i in g.input}:
                g.initializer.remove(t)
                g.node.insert(0, helper.make_node("Constant", [], [t.name], value=t))
        elif kind == "init_as_input" and g.initializer:
            t = rng.choice(list(g.initializer))
            if t.name not in {i.name for i in g.input}:
                g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return model.SerializeToString()


def generated(rng: random.Random) -> bytes:
    """Models whose cost lies in their values: expression bombs, huge Concats, huge counts."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    vi = h.make_tensor_value_info
    kind = rng.choice(["bomb", "concat", "split", "cos", "tile", "flatten", "col2im"])
    x = vi("x", T.FLOAT, ["a", "b"])
    outs = [vi("y", T.UNDEFINED, None)]
    inits = []
    opset = 18
    if kind == "bomb":
        nodes = [h.make_node("Shape", ["x"], ["s0"])]
        for i in range(rng.choice([20, 40, 80])):
            nodes.append(h.make_node(rng.choice(["Mul", "Add"]), [f"s{i}", f"s{i}"], [f"t{i}"]))
            nodes.append(h.make_node("Mul", [f"t{i}", f"s{i}"], [f"s{i + 1}"]))
        nodes.append(h.make_node("ConstantOfShape", [f"s{i + 1}"], ["y"]))
    elif kind == "concat":
        nodes = [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Concat", ["s"] * rng.choice([1000, 100_000]), ["c"], axis=0),
        ]
        nodes.append(h.make_node("Reshape", ["x", "c"], ["y"]))
    elif kind == "split":
        nodes = [h.make_node("Split", ["x"], ["y"], axis=0, num_outputs=rng.choice([2**31, 2**62, 10**7]))]
    elif kind == "cos":
        x = vi("x", T.INT64, [rng.choice([2**31, 2**62, 5000])])
        nodes = [h.make_node("ConstantOfShape", ["x"], ["y"])]
    elif kind == "tile":
        inits = [nh.from_array(np.array([2**62, rng.choice([2, 2**62])], np.int64), "r")]
        nodes = [h.make_node("Tile", ["x", "r"], ["y"])]
    elif kind == "flatten":
        x = vi("x", T.FLOAT, [2**62] * 40)
        nodes = [h.make_node("Flatten", ["x"], ["y"], axis=20)]
    else:
        nodes = [h.make_node("Col2Im", ["x", "i", "k"], ["y"])]
        x = vi("x", T.FLOAT, [1, 4, 4])
        outs = [vi("y", T.UNDEFINED, None)]
        g = h.make_graph(nodes, "g", [x, vi("i", T.INT64, [2**63 - 1]), vi("k", T.INT64, [2])], outs)
        return h.make_model(g, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()
    g = h.make_graph(nodes, "g", [x], outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def byte_mutation(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.choice(["flip", "truncate", "splice", "bad_utf8"])
    if kind == "flip":
        for _ in range(rng.choice([1, 4, 32])):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == "truncate":
        del b[rng.randrange(1, len(b)) :]
    elif kind == "splice":
        i = rng.randrange(len(b))
        b[i:i] = b[rng.randrange(len(b)) :][: rng.choice([8, 64, 512])]
    else:  # break the UTF-8 of some text the model holds (same length, so the protobuf stays valid)
        for _ in range(8):
            i = rng.randrange(len(b))
            if 0x61 <= b[i] <= 0x7A:
                b[i] = 0xFF
    return bytes(b)


def write_options(sub: str, data: bytes, rng: random.Random) -> tuple[list[str], dict[str, int]]:
    """Options for the commands that write (``out``: ``--bind``, ``--dim-range``; ``optimize``:
    ``--bind``, ``--target-opset``, ``--passes``) and the symbol values the comparison must
    use for the written model to be asked the same question (a bound symbol its value, a ranged
    one a value in its range)."""
    from shapeinfer.passes import PASSES

    m = _parsed(data)
    if m is None:
        return [], {}
    # (a dim_param that is not valid UTF-8 comes back as bytes: never a symbol to bind)
    params = (d.dim_param for vi in m.graph.input for d in vi.type.tensor_type.shape.dim)
    syms = sorted({p for p in params if type(p) is str and p.isidentifier()})
    args: list[str] = []
    pinned: dict[str, int] = {}
    if syms and rng.random() < 0.3:
        sym, v = rng.choice(syms), rng.choice([1, 2, 3])
        args += ["--bind", f"{sym}={v}"]
        pinned[sym] = v
    if sub == "out" and syms and rng.random() < 0.2:
        sym = rng.choice([x for x in syms if x not in pinned] or syms)
        lo, hi = rng.choice([(1, 1), (2, 4), (1, None), (3, 3), (1, 512)])
        args += ["--dim-range", f"{sym}={lo}:{'' if hi is None else hi}"]
        pinned.setdefault(sym, hi if hi is not None and hi <= 4 else max(lo, 2))
    if sub == "optimize" and rng.random() < 0.15:
        args += ["--target-opset", str(rng.choice([18, 19, 20, 21, 22]))]
    if sub == "optimize" and rng.random() < 0.2:
        names = [n for n in PASSES if n != "dce"]
        args += ["--passes", ",".join(rng.sample(names, rng.randint(1, len(names))))]
    return args, pinned


def _parsed(data: bytes):
    from onnx import ModelProto

    m = ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        return None
    return m


def reader_options(sub: str, data: bytes, rng: random.Random) -> list[str]:
    """Options for ``profile`` (``--json``, ``--all``, ``--dim-range``) and the TENSOR of
    ``explain`` (a name the model holds, as a user would type it: escaped when not UTF-8)."""
    m = _parsed(data)
    if sub == "explain":
        names = [] if m is None else [o for n in m.graph.node for o in n.output if o] + [o.name for o in m.graph.output]
        name = rng.choice(names) if names else "x"
        return [text(name)]
    args = [a for a in ("--json", "--all") if rng.random() < 0.4]
    params = [] if m is None else [d.dim_param for vi in m.graph.input for d in vi.type.tensor_type.shape.dim]
    syms = sorted({p for p in params if type(p) is str and p.isidentifier()})
    if syms and rng.random() < 0.4:
        lo, hi = rng.choice([(1, 1), (2, 4), (1, None), (1, 512), (7, 3)])
        args += ["--dim-range", f"{rng.choice(syms)}={lo}:{'' if hi is None else hi}"]
    return args


def make_dynamic_options(data: bytes, rng: random.Random) -> list[str]:
    """``--dim INPUT:AXIS=fz`` for a static axis of a graph input (any axis of the first input
    when there is none: a usage error the command must name)."""
    m = _parsed(data)
    if m is None or not m.graph.input:
        return ["--dim", "x:0=fz"]
    inits = {t.name for t in m.graph.initializer}
    axes = [
        (vi.name, k)
        for vi in m.graph.input
        if vi.name not in inits and type(vi.name) is str
        for k, d in enumerate(vi.type.tensor_type.shape.dim)
        if d.HasField("dim_value") and d.dim_value > 0
    ]
    # (a name that is not UTF-8 escaped, as a user would type it)
    name, axis = rng.choice(axes) if axes else (text(m.graph.input[0].name), 0)
    dims = ["--dim", f"{name}:{axis}=fz"]
    if len(axes) > 1 and rng.random() < 0.3:
        other = rng.choice([a for a in axes if a != (name, axis)])
        dims += ["--dim", f"{other[0]}:{other[1]}=fy"]
    return dims


# ----------------------------------------------------------------------------- onnxruntime check

#: Inputs with more elements than this are not generated (the mutated dims can be 2**62).
MAX_FEED_ELEMENTS = 4_000_000

_NP_TYPES = {
    "float": "float32",
    "float16": "float16",
    "double": "float64",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint64": "uint64",
    "uint32": "uint32",
    "uint16": "uint16",
    "uint8": "uint8",
    "bool": "bool",
    "string": "object",
}


class Skip(Exception):
    """The input itself cannot be compared (refused, not runnable, not deterministic, too big)."""


def _session(path: str):
    return ort_oracle.session(path, optimize=True, threads=1)


def _feeds(sess, uniform: bool, pinned: dict[str, int]) -> dict:
    """Generated inputs for ``sess``: a symbol in ``pinned`` its value there (what ``--bind`` or
    ``--dim-range`` told the command), each other symbolic (or unnamed) dim its own value from 2
    up (all 2 when ``uniform``); values as :func:`ort_oracle.random_input` makes them, integers in
    [0, 2) (safe as indices)."""
    import numpy as np

    rng = np.random.default_rng(0)
    values: dict[str, int] = {}
    feeds = {}
    for k, i in enumerate(sess.get_inputs()):
        t = i.type
        if not t.startswith("tensor(") or t[7:-1] not in _NP_TYPES:
            raise Skip(f"input type not generated: {i.name!r} of type {t}")
        dt = np.dtype(_NP_TYPES[t[7:-1]])
        shape = []
        for axis, d in enumerate(i.shape or []):
            if isinstance(d, int) and d >= 0:
                shape.append(d)
                continue
            name = d if isinstance(d, str) and d else f"{k}:{axis}"
            if name in pinned:
                shape.append(pinned[name])
            else:
                shape.append(2 if uniform else values.setdefault(name, 2 + len(values) % 4))
        if int(np.prod(shape, dtype=np.float64)) > MAX_FEED_ELEMENTS:
            raise Skip(f"input too large: {i.name!r} of shape {shape}")
        feeds[i.name] = ort_oracle.random_input(rng, i.name, dt, shape, ints=(0, 2))
    return feeds


def _outputs(sess, feeds: dict) -> dict:
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


#: onnx's 16-bit float element types (float16, bfloat16)
_HALF = (10, 16)


def _computes_in_half(path: str) -> bool:
    """Whether the model at ``path`` holds a 16-bit float tensor (an input, initializer, typed
    value or Cast target): its float32 outputs then carry float16 rounding, which a model that
    computes the same values in another order (other buffers, kernels or fusions, as
    onnxruntime picks them for a graph with fewer nodes) rounds differently: compared at the
    16-bit tolerance. (fuzz seed 149: a float16 BERT whose Reshapes optimize rewrote gave
    float32 outputs 1 float16 ulp apart at every optimization level; with every tensor made a
    graph output, the two models' values are identical.)"""
    import onnx

    try:
        m = onnx.load(path, load_external_data=False)
    except Exception:
        return False
    g = m.graph
    typed = [*g.input, *g.output, *g.value_info]
    if any(v.type.tensor_type.elem_type in _HALF for v in typed):
        return True
    if any(t.data_type in _HALF for t in g.initializer):
        return True
    return any(n.op_type == "Cast" and any(a.name == "to" and a.i in _HALF for a in n.attribute) for n in g.node)


def ort_compare(model: str, out: str, pinned: dict[str, int], stage) -> tuple[str, str]:
    """Compare input ``model`` and written ``out`` in onnxruntime: ``(status, detail)`` with
    status ``ok``, ``worse`` (the output does not load or run where the input does),
    ``different`` (other outputs) or ``skip`` (the input cannot be compared). ``stage(name)``
    is called before each step, so a crash or hang is blamed on the right model."""
    stage("input")
    try:
        sin = _session(model)
    except Exception as e:
        raise Skip("input refused: " + ort_oracle.error_line(e, 200)) from None
    want = feeds = None
    for uniform in (False, True):
        feeds = _feeds(sin, uniform, pinned)
        try:
            want = _outputs(sin, feeds)
            break
        except Exception:
            continue
    if want is None:
        raise Skip("input does not run")
    stage("output")
    try:
        sout = _session(out)
    except Exception as e:
        return "worse", "output refused: " + ort_oracle.error_line(e, 200)
    names = {i.name for i in sout.get_inputs()}
    if names != set(feeds):
        return "different", f"inputs {sorted(feeds)} became {sorted(names)}"
    try:
        got = _outputs(sout, feeds)
    except Exception as e:
        return "worse", "output does not run: " + ort_oracle.error_line(e, 200)
    if list(got) != list(want):
        return "different", f"outputs {list(want)} became {list(got)}"
    tol = 1e-2 if _computes_in_half(model) else None
    bad = {k: r for k in want if (r := ort_oracle.outputs_differ(want[k], got[k], rtol=tol, atol=tol))}
    if not bad:
        return "ok", ""
    stage("input")
    again = _outputs(sin, feeds)
    if any(ort_oracle.outputs_differ(want[k], again[k]) for k in want):
        raise Skip("input is not deterministic")
    # the input's outputs may rest on onnxruntime's optimizer trusting a declaration that is
    # false (Shape folded from a value_info dim that inference corrects: seed 164, case 2322);
    # the written model that gives what the input gives unoptimized is not compared
    plain = _outputs(ort_oracle.session(model, optimize=False, threads=1), feeds)
    if any(ort_oracle.outputs_differ(want[k], plain[k], rtol=tol, atol=tol) for k in want) and not any(
        ort_oracle.outputs_differ(plain[k], got[k], rtol=tol, atol=tol) for k in want
    ):
        raise Skip("input's outputs change with onnxruntime's optimization level")
    k, r = next(iter(bad.items()))
    return "different", f"output {k!r}: {r}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")


def ort_checker(items: list[tuple[str, str, dict]], log_path: str) -> None:
    """Forked checker: compare each (model, out, pinned) item, one JSON line per stage and result."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    with open(log_path, "a", buffering=1) as log:
        for i, (model, out, pinned) in enumerate(items):

            def stage(name: str, i: int = i) -> None:
                log.write(json.dumps({"i": i, "stage": name}) + "\n")

            try:
                status, detail = ort_compare(model, out, pinned, stage)
            except Skip as e:
                status, detail = "skip", str(e)
            except Exception as e:  # an error past the stages that can fail: worth a look
                status, detail = "skip", f"checker error: {ort_oracle.error_line(e, 200)}"
            log.write(json.dumps({"i": i, "status": status, "detail": detail}) + "\n")


def ort_check_batch(items: list[tuple[str, str, dict]], work: str, limit: float) -> list[tuple[str, str]]:
    """``(status, detail)`` for each (model, out, pinned) item (see :func:`ort_compare`), checked
    by forked checkers; one that crashes or makes no progress for ``limit`` seconds is replaced by
    another for the rest, and the item it was on counts as ``worse`` when the output was at
    fault, ``skip`` otherwise."""
    results: list[tuple[str, str] | None] = [None] * len(items)
    start = 0
    while start < len(items):
        log_path = os.path.join(work, "ort.jsonl")
        open(log_path, "w").close()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                null = os.open(os.devnull, os.O_WRONLY)  # onnxruntime's own messages about bad models
                os.dup2(null, 1)
                os.dup2(null, 2)
                ort_checker(items[start:], log_path)
            except BaseException:
                code = 3
            os._exit(code)
        last, size = time.monotonic(), 0
        status = 0
        while True:
            wpid, status = os.waitpid(pid, os.WNOHANG)
            if wpid:
                break
            now_size = os.path.getsize(log_path)
            if now_size != size:
                last, size = time.monotonic(), now_size
            elif time.monotonic() - last > limit:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status = -1
                break
            time.sleep(0.02)
        stage = {}
        with open(log_path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "status" in rec:
                    results[start + rec["i"]] = (rec["status"], rec["detail"])
                else:
                    stage[rec["i"]] = rec["stage"]
        nxt = next((j for j in range(start, len(items)) if results[j] is None), len(items))
        if nxt < len(items):  # the checker died or hung on item nxt
            how = "hangs" if status == -1 else f"crashes (status {status})"
            if stage.get(nxt - start) == "output":
                results[nxt] = ("worse", f"onnxruntime {how} on the output")
            else:
                results[nxt] = ("skip", f"onnxruntime {how} on the input")
        start = nxt + 1
    return [r or ("skip", "not checked") for r in results]


# ----------------------------------------------------------------------------- running


def child(args: list[str], cwd: str, allowed: list[str], timeout: float) -> None:
    """Run one command line in this (forked) process; writes a JSON line to fd 3's file."""
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    roots = [os.path.realpath(p) for p in allowed]
    outside: list[str] = []

    def hook(event, a):
        if event == "open" and a and isinstance(a[0], (str, bytes)):
            p = os.fsdecode(a[0])
            real = os.path.realpath(p if os.path.isabs(p) else os.path.join(os.getcwd(), p))
            if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots):
                outside.append(real)

    os.chdir(cwd)
    sys.addaudithook(hook)
    r = CliRunner().invoke(main, args, catch_exceptions=True)
    tb = None
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(r.exception))[-2000:]
    err = r.stderr_bytes.decode("utf-8", "replace")
    res = {"rc": r.exit_code, "traceback": tb, "stderr": err[-1500:], "outside": sorted(set(outside))[:5]}
    with open(os.environ["FUZZ_RESULT"], "w") as f:
        json.dump(res, f)


def run_case(args, cwd, allowed, timeout, slack, result_path) -> dict:
    os.environ["FUZZ_RESULT"] = result_path
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            sys.stdout = io.StringIO()
            child(args, cwd, allowed, timeout)
        except BaseException:
            code = 3
        os._exit(code)
    killed = False
    deadline = t0 + timeout + slack
    while True:
        wpid, status, ru = os.wait4(pid, os.WNOHANG)
        if wpid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            killed = True
            wpid, status, ru = os.wait4(pid, 0)
            break
        time.sleep(0.01)
    res = {"killed": killed, "seconds": time.monotonic() - t0, "maxrss_mb": ru.ru_maxrss / 1024}
    try:
        with open(result_path) as f:
            res.update(json.load(f))
        os.unlink(result_path)
    except (OSError, ValueError):
        res.setdefault("rc", None)
        res.setdefault("traceback", None if killed else f"child died: status {status}")
        res.setdefault("stderr", "")
        res.setdefault("outside", [])
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--slack", type=float, default=10.0)
    ap.add_argument("--max-rss", type=float, default=1500.0, help="MB per child")
    ap.add_argument("--json", help="write every failing case here")
    ap.add_argument("--no-ort", action="store_true", help="do not check written models in onnxruntime")
    ap.add_argument("--ort-batch", type=int, default=25, help="written models per onnxruntime checker")
    ap.add_argument(
        "--commands",
        default=",".join(SUBCOMMANDS),
        help=f"the subcommands, run in turn (default: all; seeds before session 16 ran {','.join(FIRST_SEVEN)})",
    )
    ap.add_argument(
        "--models",
        nargs="+",
        metavar="GLOB",
        help="the models to mutate (default: examples/models/*.onnx and tests/models/deploy/*.onnx)",
    )
    a = ap.parse_args()
    commands = a.commands.split(",")
    unknown = [c for c in commands if c not in SUBCOMMANDS]
    if unknown or not commands:
        ap.error(f"--commands: {', '.join(unknown) or 'none given'} (choose from {', '.join(SUBCOMMANDS)})")
    ort = not a.no_ort and importlib.util.find_spec("onnxruntime") is not None

    import onnx

    import shapeinfer.cli.main  # noqa: F401  (imported once, before the forks)
    from shapeinfer import passes  # noqa: F401
    from shapeinfer.inference import engine  # noqa: F401
    from shapeinfer.lint import session  # noqa: F401

    rng = random.Random(a.seed)
    default = [os.path.join(ROOT, "examples/models/*.onnx"), os.path.join(ROOT, "tests/models/deploy/*.onnx")]
    patterns = a.models or default
    sources = [p for pat in patterns for p in sorted(glob.glob(pat, recursive=True))]
    if not sources:
        ap.error(f"no model matches {' '.join(patterns)}")
    blobs = {}
    for p in sources:
        with open(p, "rb") as f:
            blobs[p] = f.read()
    work = tempfile.mkdtemp(prefix="fuzz_cli_")
    decoy = os.path.join(work, "cwd")
    os.makedirs(decoy)
    with open(os.path.join(decoy, "data.bin"), "wb") as f:
        f.write(b"\0" * 4096)
    system = [sys.prefix, sys.base_prefix, "/usr", "/etc", "/proc", "/sys", "/dev", ROOT]
    system += [p for p in sys.path if p and os.path.isdir(p) and not p.startswith(tempfile.gettempdir())]
    stats = {
        s: {"cases": 0, "tracebacks": 0, "hangs": 0, "outside": 0, "max_rss_mb": 0.0, "compared": 0, "skipped": 0}
        | ({"loads worse": 0, "different outputs": 0} if s in WRITERS else {})
        for s in commands
    }
    skips: dict[str, int] = {}
    failures = []
    pending: list[dict] = []  # written models waiting for the onnxruntime check
    t0 = time.time()

    def fail(k: int, sub: str, src: str, args, cwd: str, bad: list[str], model: str, out: str | None = None) -> None:
        keep = os.path.join(work, "failures")
        os.makedirs(keep, exist_ok=True)
        shutil.copy(model, os.path.join(keep, f"case{k}.onnx"))
        if out and os.path.exists(out):
            shutil.copy(out, os.path.join(keep, f"case{k}.{sub}.onnx"))
        failures.append({"case": k, "args": args, "cwd": cwd, "bad": bad, "source": os.path.basename(src)})
        print(f"FAIL case {k} {sub} ({os.path.basename(src)}): {'; '.join(bad)}", flush=True)

    def check_pending() -> None:
        """Check the written models waiting in ``pending`` in onnxruntime, then drop their folders."""
        items = [(p["model"], p["out"], p["pinned"]) for p in pending]
        results = ort_check_batch(items, work, a.timeout + a.slack)
        for p, (status, detail) in zip(pending, results):
            s = stats[p["sub"]]
            if status == "skip":
                s["skipped"] += 1
                reason = detail.split(":")[0]
                skips[reason] = skips.get(reason, 0) + 1
            else:
                s["compared"] += 1
            if status in ("worse", "different"):
                s["loads worse" if status == "worse" else "different outputs"] += 1
                label = "loads worse than its input" if status == "worse" else "different outputs"
                fail(p["k"], p["sub"], p["src"], p["args"], p["cwd"], [f"{label}: {detail}"], p["model"], p["out"])
            for d in p["folders"]:
                shutil.rmtree(d, ignore_errors=True)
        pending.clear()

    try:
        for k in range(a.cases):
            folder = os.path.join(work, f"m{k}")
            other = os.path.join(work, f"o{k}")
            os.makedirs(folder)
            os.makedirs(other)
            roll = rng.random()
            src = rng.choice(sources)
            if roll < 0.1:
                data = generated(rng)
            elif roll < 0.3:
                data = byte_mutation(blobs[src], rng)
            elif roll < 0.65:
                m = onnx.ModelProto()
                m.ParseFromString(blobs[src])
                data = loadable_mutation(m, rng)
            else:
                m = onnx.ModelProto()
                m.ParseFromString(blobs[src])
                data = structure_mutation(m, rng)
                if rng.random() < 0.2:
                    data = byte_mutation(data, rng)
            model = os.path.join(folder, "m.onnx")
            with open(model, "wb") as f:
                f.write(data)
            if rng.random() < 0.2:  # external data next to the model that nothing should trust
                with open(os.path.join(folder, "data.bin"), "wb") as f:
                    f.write(os.urandom(256))
            sub = commands[k % len(commands)]
            t = f"{a.timeout:g}"
            out = os.path.join(rng.choice([folder, other]), "out.onnx")
            if sub == "lint-fix":
                out = os.path.join(folder, "m.fixed.onnx")  # where --fix writes
            args = {
                "infer": [model, "--timeout", t],
                "json": [model, "--json", "--timeout", t],
                "out": [model, "-o", out, "--timeout", t],
                "optimize": ["optimize", model, "-o", out],
                "lint": ["lint", model],
                "verify": ["verify", model, "--bind", "a=2,b=3"],
                "lint-fix": ["lint", model, "--target", "openvino", "--fix"],
                "profile": ["profile", model],
                "explain": ["explain", model],
                "diff": ["diff", os.path.join(folder, "orig.onnx"), model],
                "make-dynamic": ["make-dynamic", model, "-o", out],
            }[sub]
            if sub in ("profile", "explain"):
                args += reader_options(sub, data, rng)
            elif sub == "diff":
                shutil.copy(src, args[1])
                args += ["--json"] if rng.random() < 0.5 else []
            elif sub == "make-dynamic":
                args += make_dynamic_options(data, rng)
            pinned: dict[str, int] = {}
            if sub in ("out", "optimize"):
                extra, pinned = write_options(sub, data, rng)
                args += extra
            cwd = rng.choice([folder, decoy])
            res = run_case(args, cwd, [folder, other, *system], a.timeout, a.slack, os.path.join(work, "res.json"))
            s = stats[sub]
            s["cases"] += 1
            s["max_rss_mb"] = max(s["max_rss_mb"], res["maxrss_mb"])
            bad = []
            if (
                res.get("traceback")
                or "Traceback" in res.get("stderr", "")
                or "internal error" in res.get("stderr", "")
            ):
                s["tracebacks"] += 1
                bad.append(
                    "traceback: "
                    + ((res.get("traceback") or res.get("stderr") or "").strip().splitlines() or [""])[-1][:300]
                )
            if res["killed"]:
                s["hangs"] += 1
                bad.append(f"hang ({res['seconds']:.0f}s)")
            if res.get("outside"):
                s["outside"] += 1
                bad.append(f"opened outside: {res['outside'][:2]}")
            if res["maxrss_mb"] > a.max_rss:
                bad.append(f"peak RSS {res['maxrss_mb']:.0f} MB")
            if bad:
                fail(k, sub, src, args, cwd, bad, model)
            if ort and sub in WRITERS and os.path.exists(out) and not res["killed"]:
                entry = {"k": k, "sub": sub, "src": src, "args": args, "cwd": cwd, "model": model, "out": out}
                entry["pinned"] = pinned
                pending.append(entry | {"folders": [folder, other]})
            else:
                shutil.rmtree(folder, ignore_errors=True)
                shutil.rmtree(other, ignore_errors=True)
            if len(pending) >= a.ort_batch:
                check_pending()
            if (k + 1) % 100 == 0:
                print(f"{k + 1}/{a.cases} cases, {len(failures)} failing, {time.time() - t0:.0f}s", flush=True)
        if pending:
            check_pending()
    finally:
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"stats": stats, "failures": failures}, f, indent=1)
    total = sum(s["cases"] for s in stats.values())
    print(f"{total} cases in {time.time() - t0:.0f}s (--timeout {a.timeout:g}, kill at +{a.slack:g}s)")
    for name, s in stats.items():
        ort_cells = ""
        if ort and "loads worse" in s:
            ort_cells = (
                f"  | onnxruntime: compared {s['compared']}, skipped {s['skipped']}, "
                f"loads worse {s['loads worse']}, different outputs {s['different outputs']}"
            )
        print(
            f"  {name:<9} {s['cases']:>5} cases  tracebacks {s['tracebacks']}  hangs {s['hangs']}  "
            f"outside opens {s['outside']}  max RSS {s['max_rss_mb']:.0f} MB{ort_cells}"
        )
    if ort:
        print(
            "  written models not compared (the input could not be): "
            + (", ".join(f"{why} {n}" for why, n in sorted(skips.items(), key=lambda x: -x[1])) or "none")
        )
    else:
        print("  onnxruntime not checked (" + ("--no-ort" if a.no_ort else "not importable") + ")")
    print(f"failing cases: {len(failures)} (models kept in {work}/failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
