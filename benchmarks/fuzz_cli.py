"""Fuzz every subcommand with mutated models: tracebacks, hangs, peak memory, outside opens.

    python benchmarks/fuzz_cli.py --cases 5000 --seed 1 [--timeout 10] [--json results.json]

Each case mutates one of the example models (examples/models, tests/models/deploy) at the byte
level (flips, truncations, splices) or through its structure (dims, dim_params, element types,
attributes, opsets, huge counts, names and strings that are not valid UTF-8), or builds an
expression bomb, a huge Concat of shape values or a Split with a huge num_outputs, and runs one
of ``infer``, ``infer --json``, ``infer -o``, ``optimize -o``, ``lint`` and ``verify`` on it with
``--timeout`` where the subcommand has one, from the model's folder or from a decoy working
directory holding its own ``data.bin``.

A parent process imports shapeinfer once and forks one child per case (cheap, and each child
has its own peak RSS, read with ``os.wait4``); the child installs an audit hook that records
every file opened outside the model's folder, the output folder and the system, and runs the
command through click. The parent kills a child that runs past ``--timeout`` + slack. A case
fails on a traceback or "internal error" on stderr, a kill, an outside open, or peak RSS over
``--max-rss``.
"""

from __future__ import annotations

import argparse
import glob
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
ROOT = os.path.dirname(HERE)

SUBCOMMANDS = ["infer", "json", "out", "optimize", "lint", "verify"]


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


# ----------------------------------------------------------------------------- running


def child(args: list[str], cwd: str, allowed: list[str], timeout: float) -> None:
    """Run one command line in this (forked) process; writes a JSON line to fd 3's file."""
    from click.testing import CliRunner

    from shapeinfer.cli import main

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
    a = ap.parse_args()

    import onnx

    import shapeinfer.cli  # noqa: F401  (imported once, before the forks)
    from shapeinfer import engine, passes  # noqa: F401
    from shapeinfer.checks import command  # noqa: F401

    rng = random.Random(a.seed)
    sources = sorted(glob.glob(os.path.join(ROOT, "examples/models/*.onnx")))
    sources += sorted(glob.glob(os.path.join(ROOT, "tests/models/deploy/*.onnx")))
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
    system += [p for p in sys.path if p and os.path.isdir(p) and not p.startswith("/tmp")]
    stats = {s: {"cases": 0, "tracebacks": 0, "hangs": 0, "outside": 0, "max_rss_mb": 0.0} for s in SUBCOMMANDS}
    failures = []
    t0 = time.time()
    try:
        for k in range(a.cases):
            folder = os.path.join(work, f"m{k}")
            other = os.path.join(work, f"o{k}")
            os.makedirs(folder)
            os.makedirs(other)
            roll = rng.random()
            src = rng.choice(sources)
            if roll < 0.15:
                data = generated(rng)
            elif roll < 0.5:
                data = byte_mutation(blobs[src], rng)
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
            sub = SUBCOMMANDS[k % len(SUBCOMMANDS)]
            t = f"{a.timeout:g}"
            out = os.path.join(rng.choice([folder, other]), "out.onnx")
            args = {
                "infer": [model, "--timeout", t],
                "json": [model, "--json", "--timeout", t],
                "out": [model, "-o", out, "--timeout", t],
                "optimize": ["optimize", model, "-o", out],
                "lint": ["lint", model],
                "verify": ["verify", model, "--bind", "a=2,b=3"],
            }[sub]
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
                keep = os.path.join(work, "failures")
                os.makedirs(keep, exist_ok=True)
                shutil.copy(model, os.path.join(keep, f"case{k}.onnx"))
                failures.append({"case": k, "args": args, "cwd": cwd, "bad": bad, "source": os.path.basename(src)})
                print(f"FAIL case {k} {sub} ({os.path.basename(src)}): {'; '.join(bad)}", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(other, ignore_errors=True)
            if (k + 1) % 100 == 0:
                print(f"{k + 1}/{a.cases} cases, {len(failures)} failing, {time.time() - t0:.0f}s", flush=True)
    finally:
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"stats": stats, "failures": failures}, f, indent=1)
    total = sum(s["cases"] for s in stats.values())
    print(f"{total} cases in {time.time() - t0:.0f}s (--timeout {a.timeout:g}, kill at +{a.slack:g}s)")
    for name, s in stats.items():
        print(
            f"  {name:<9} {s['cases']:>5} cases  tracebacks {s['tracebacks']}  hangs {s['hangs']}  "
            f"outside opens {s['outside']}  max RSS {s['max_rss_mb']:.0f} MB"
        )
    print(f"failing cases: {len(failures)} (models kept in {work}/failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
