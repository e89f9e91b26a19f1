"""Score the vision corpus the way the shared eval's peers.py scores, and run written_check over it.

    python tools/generators/make_vision_models.py CORPUS          # build the corpus first (see its doc)
    python benchmarks/score_vision.py --corpus CORPUS [--models GLOB] [--tools ort,osi,shapeinfer,onnx]
        [--timeout 600] [--json OUT] [--detail N] [--eval DIR]
    python benchmarks/score_vision.py --corpus CORPUS --written [--scenarios] [--models GLOB]

``--eval`` (or ``$SHAPEINFER_EVAL_DIR``): the folder holding peers.py and written_check.py; one of
the two is required. Needs onnxruntime (and onnx-shape-inference for ``osi``).

Scoring: peers.py is imported from ``--eval`` (not copied). For each model its sidecar's two bindings
become ``peers.BINDINGS``; the truth is ``peers.ground_truth`` (onnxruntime, every tensor, both
bindings), each tool sees ``peers.stripped(model)`` and its answer is scored by ``peers.score``.
Each tool runs in its own process group (this script with --worker) under --timeout: a hang is
``timeout``, a process that dies without an answer is ``crash``, an exception inside the tool
is ``error`` (scored as peers.py does: nothing inferred). ``best peer`` is the best of ort and osi.

--written: written_check.py over the corpus with ``--bindings`` built from the
sidecars ({model stem: [binding, binding]}; sidecars whose symbols are placeholders such as '?'
are left out: written_check feeds those dims as anonymous axes and cannot key them).

Placeholder input dims (``?``, ``-1``, empty, ``None``) are distinct unknowns: shapeinfer names
each ``<input>_d<axis>``, and the scoring binds those names to the axis's size in the feed.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVAL_ENV = "SHAPEINFER_EVAL_DIR"  # how --eval reaches the worker processes


def eval_script(name: str) -> str:
    """The path of the shared eval's script ``name`` (``--eval`` or ``$SHAPEINFER_EVAL_DIR``)."""
    return str(Path(os.environ[EVAL_ENV]) / name)


PEER_TOOLS = ("ort", "osi")


def load_peers():
    spec = importlib.util.spec_from_file_location("peers", eval_script("peers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tool_env() -> dict:
    """The environment for tool processes: this python's bin first on PATH (shapeinfer, osi)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def worker(tool: str, bare_path: str, out_json: str) -> None:
    """Run one peers.py tool on the stripped model; write {"inferred": ...} or {"error": ...}."""
    import onnx

    peers = load_peers()
    bare = onnx.load(bare_path)
    try:
        inf = peers.TOOLS[tool](bare, bare_path)
        res = {"inferred": inf}
    except Exception as e:
        res = {"error": str(e).splitlines()[-1][:200] if str(e) else type(e).__name__}
    with open(out_json, "w") as f:
        json.dump(res, f)


def run_tool(tool: str, bare_path: str, timeout: float) -> tuple[dict, str | None, str, float]:
    """(inferred, error text, status ok/error/timeout/crash, seconds) of one tool in its own process group."""
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "r.json")
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, __file__, "--worker", tool, bare_path, out],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=tool_env(),
            start_new_session=True,
        )
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return {}, f"timeout after {timeout:.0f}s", "timeout", time.perf_counter() - t0
        dt = time.perf_counter() - t0
        if not os.path.exists(out):
            last = (err or "").strip().splitlines()[-1:] or [f"exit {p.returncode}"]
            return {}, f"crash (exit {p.returncode}): {last[0][:160]}", "crash", dt
        res = json.loads(Path(out).read_text())
    if "error" in res:
        return {}, res["error"], "error", dt
    inferred = {k: [tuple(x) if isinstance(x, list) else x for x in v] for k, v in res["inferred"].items()}
    return inferred, None, "ok", dt


def corpus_models(root: Path, pattern: str) -> list[Path]:
    out = []
    for p in sorted(root.glob("*/*.onnx")):
        rel = f"{p.parent.name}/{p.name}"
        if not pattern or any(fnmatch.fnmatch(s, pattern) for s in (p.stem, p.name, rel)):
            out.append(p)
    return out


def tensor_resolved(peers, inf: dict, name: str, truths: list, syms: set) -> int:
    """How many dims of tensor ``name`` the answer ``inf`` resolves (peers.score's rule)."""
    d = inf.get(name)
    shapes = [t[name] for t in truths]
    if d is None or len(d) != len(shapes[0]):
        return 0
    n = 0
    for i, dim in enumerate(d):
        vals = [peers.eval_dim(dim, syms, b) for b in peers.BINDINGS]
        n += all(v is not None and v == s[i] for v, s in zip(vals, shapes))
    return n


def detail(peers, model, infs: dict, truths: list, syms: set, limit: int) -> None:
    """The first ``limit`` tensors, in node order, where shapeinfer resolves fewer dims than a peer."""
    producer = {}
    for n in model.graph.node:
        for o in n.output:
            producer[o] = f"{n.op_type} {n.name}"
    shown = 0
    total = 0
    for n in model.graph.node:
        for o in n.output:
            if o not in truths[0]:
                continue
            si = tensor_resolved(peers, infs["shapeinfer"], o, truths, syms)
            best = max((tensor_resolved(peers, infs[t], o, truths, syms) for t in PEER_TOOLS if t in infs), default=0)
            if si < best:
                total += 1
                if shown < limit:
                    shown += 1
                    si_d, ort_d = str(infs["shapeinfer"].get(o))[:100], str(infs.get("ort", {}).get(o))[:100]
                    print(
                        f"{'':<8} si<peer: {o!r} ({producer.get(o)}) si={si_d} ort={ort_d} "
                        f"truth={[t[o] for t in truths]}"
                    )
    if total:
        print(f"{'':<8} ({total} tensors where shapeinfer resolves fewer dims than a peer)")


PLACEHOLDERS = {"?", "-1", "", "None"}


def placeholder_axes(model) -> dict[str, str]:
    """``{<input>_d<axis>: placeholder}`` for every graph-input axis whose dim_param is a
    placeholder (shapeinfer's name for that axis, and the binding name that gives its size)."""
    out = {}
    for i in model.graph.input:
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and d.dim_param.strip() in PLACEHOLDERS:
                out[f"{i.name}_d{k}"] = d.dim_param
    return out


def sidecar_bindings(path: Path) -> list[dict] | None:
    """The bindings ``make_vision_models.py`` writes beside a model (``MODEL.json``), or None
    for a model added to the corpus without them."""
    side = path.with_suffix(".json")
    return json.loads(side.read_text())["bindings"] if side.exists() else None


def score_corpus(a) -> None:
    import onnx

    peers = load_peers()
    tools = a.tools.split(",")
    rows, per_model = [], []
    print(f"{'model':<26} {'tool':<10} {'resolved':>8} {'res/dims':>11} {'unres':>6} {'wrong':>5} {'secs':>7}  status")
    for path in corpus_models(Path(a.corpus), a.models):
        bindings = sidecar_bindings(path)
        if bindings is None:
            print(f"{path.stem:<26} (no {path.with_suffix('.json').name} beside it: no bindings to score at)")
            continue
        peers.BINDINGS = bindings
        model = onnx.load(str(path))
        syms = peers.input_symbols(model)
        axis_names = placeholder_axes(model)
        if axis_names:
            # each placeholder axis (``?``, ``-1``, ...) is its own unknown: shapeinfer names it
            # <input>_d<axis>; its value at a binding is that axis's size in the feed
            peers.BINDINGS = [dict(b, **{n: b[ph] for n, ph in axis_names.items()}) for b in peers.BINDINGS]
            syms = syms | set(axis_names)
        try:
            truths = peers.ground_truth(model)
        except Exception as e:
            print(f"{path.stem:<26} ground truth failed: {str(e).splitlines()[0][:150]}")
            continue
        with tempfile.TemporaryDirectory() as td:
            bare_path = os.path.join(td, path.name)
            onnx.save(peers.stripped(model), bare_path)
            pcts, infs = {}, {}
            for t in tools:
                inf, err, status, dt = run_tool(t, bare_path, a.timeout)
                infs[t] = inf
                c, wex = peers.score(inf, truths, syms)
                pct = round(100 * c["resolved"] / max(1, c["dims"]), 1)
                pcts[t] = pct
                row = dict(
                    model=path.stem,
                    family=path.parent.name,
                    tool=t,
                    secs=round(dt, 2),
                    status=status,
                    err=err,
                    pct_resolved=pct,
                    **c,
                    wrong_examples=[repr(w)[:300] for w in wex],
                )
                rows.append(row)
                print(
                    f"{path.stem:<26} {t:<10} {pct:7.1f}% {c['resolved']:>5}/{c['dims']:<5} {c['unresolved']:>6} "
                    f"{c['wrong']:>5} {dt:7.2f}  {status}{(': ' + err) if err else ''}",
                    flush=True,
                )
                for w in wex[:2]:
                    print(f"{'':<37} wrong: {repr(w)[:200]}")
        if a.detail and "shapeinfer" in infs:
            detail(peers, model, infs, truths, syms, a.detail)
        peer = [pcts[t] for t in PEER_TOOLS if t in pcts]
        if peer and "shapeinfer" in pcts:
            best = max(peer)
            si = pcts["shapeinfer"]
            si_row = next(r for r in rows if r["model"] == path.stem and r["tool"] == "shapeinfer")
            ok = si >= best and si_row["wrong"] == 0
            per_model.append(
                dict(
                    model=path.stem,
                    best_peer=best,
                    shapeinfer=si,
                    si_wrong=si_row["wrong"],
                    shapeinfer_ge_best=si >= best,
                )
            )
            print(
                f"{path.stem:<26} best peer {best:.1f}% shapeinfer {si:.1f}%  "
                f"{'>= best' if si >= best else 'BELOW best'}{'' if ok or si < best else ' (but wrong dims)'}"
            )
    print("\ntotals per tool")
    print(
        f"{'tool':<10} {'resolved':>8} {'res/dims':>15} {'unres':>7} {'wrong':>6} {'errors':>6} {'timeouts':>8} "
        f"{'crashes':>7} {'secs':>8}"
    )
    totals = {}
    for t in tools:
        rs = [r for r in rows if r["tool"] == t]
        tot = dict(
            models=len(rs),
            dims=sum(r["dims"] for r in rs),
            resolved=sum(r["resolved"] for r in rs),
            unresolved=sum(r["unresolved"] for r in rs),
            wrong=sum(r["wrong"] for r in rs),
            errors=sum(r["status"] == "error" for r in rs),
            timeouts=sum(r["status"] == "timeout" for r in rs),
            crashes=sum(r["status"] == "crash" for r in rs),
            secs=round(sum(r["secs"] for r in rs), 1),
        )
        tot["pct_resolved"] = round(100 * tot["resolved"] / max(1, tot["dims"]), 2)
        totals[t] = tot
        print(
            f"{t:<10} {tot['pct_resolved']:7.2f}% {tot['resolved']:>7}/{tot['dims']:<7} {tot['unresolved']:>7} "
            f"{tot['wrong']:>6} {tot['errors']:>6} {tot['timeouts']:>8} {tot['crashes']:>7} {tot['secs']:>8}"
        )
    if per_model:
        below = [m["model"] for m in per_model if not m["shapeinfer_ge_best"]]
        print(
            f"\nshapeinfer >= best peer (ort, osi) on {len(per_model) - len(below)}/{len(per_model)} models"
            + (f"; below on: {', '.join(below)}" if below else "")
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(rows=rows, totals=totals, per_model=per_model, timeout=a.timeout), f, indent=1)


def written(a) -> None:
    paths = corpus_models(Path(a.corpus), a.models)
    binds = {}
    for p in paths:
        b = sidecar_bindings(p)  # (none: written_check's own grid of sizes)
        if b is not None and all(k.isidentifier() for x in b for k in x):
            binds[p.stem] = b
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(binds, f)
    scen = ["--scenarios"] if a.scenarios else []
    cmd = [sys.executable, eval_script("written_check.py"), "--bindings", f.name, *scen, *map(str, paths)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=tool_env())
    os.unlink(f.name)
    print(f"(written_check over {len(paths)} models, {time.perf_counter() - t0:.0f}s, exit {r.returncode})")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="the folder make_vision_models.py wrote")
    ap.add_argument("--models", default="", help="glob on model stem, file name or family/file")
    ap.add_argument("--tools", default="ort,osi,shapeinfer,onnx")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per tool run")
    ap.add_argument("--json", default="", help="write rows and totals to this file")
    ap.add_argument("--detail", type=int, default=0, help="list up to N tensors per model where shapeinfer < a peer")
    ap.add_argument("--written", action="store_true", help="run written_check.py over the corpus instead")
    ap.add_argument("--scenarios", action="store_true", help="with --written: also its file-safety scenarios")
    ap.add_argument("--eval", default="", help="the folder of peers.py and written_check.py")
    a = ap.parse_args()
    if a.eval:
        os.environ[EVAL_ENV] = os.path.abspath(a.eval)
    if not os.path.isfile(os.path.join(os.environ.get(EVAL_ENV, ""), "peers.py")):
        ap.error(f"no peers.py in --eval / ${EVAL_ENV} ({os.environ.get(EVAL_ENV, 'not set')!r})")
    if a.written:
        written(a)
    else:
        score_corpus(a)


if __name__ == "__main__":
    main()
