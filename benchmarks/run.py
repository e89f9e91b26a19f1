"""Shape-inference cost: shapeinfer against onnx's C++ inference and onnxruntime's symbolic inference.

Usage: python benchmarks/run.py [MODELS...] [--reps N] [--layers N] [--no-synthetic] [--no-external]

Per model, the median of N repetitions (default 5) of
  onnx     onnx.shape_inference.infer_shapes(model, data_prop=True)       (the C++ anchor)
  ort      SymbolicShapeInference.infer_shapes(model, auto_merge=True)    (the Python anchor)
  infer    shapeinfer in process: infer + annotate, model already loaded
  process  the whole `shapeinfer MODEL -o OUT` command (start-up, load, infer, write)
with the ratios infer/onnx and infer/ort, nodes per second and peak RSS (each tool once more in
a child process). Without MODELS it uses examples/models/llama_ts.onnx. It also builds a
synthetic model of repeated llama-like layers (~100k nodes by default) to show how cost grows
with size, and a model whose weights live in a multi-GB sparse external-data file, to show
that inference never loads them (peak RSS) and that -o keeps them external.

Optimize rows (``--optimize-models``, ``--optimize-layers``; ``--only-optimize`` skips the rest):
the whole `shapeinfer optimize MODEL -o OUT` process against the whole `shapeinfer MODEL -o OUT`
process on the same model (wall and CPU seconds, median of the repetitions, run in alternating
pairs, at most 3 at every size), their ratio, and
optimize's CPU microseconds per node, on the given models and on synthetic models of
repeated layers from ~7k to ~250k nodes (per-node cost should stay flat).

Whole process (``--whole-process-reps N``, default 9; 0 skips): the command users run,
``shapeinfer MODEL -o OUT``, against the same job done by onnx from the shell,
``python -c "import onnx; onnx.shape_inference.infer_shapes_path(MODEL, OUT, data_prop=True)"``,
in alternating pairs of fresh processes (after one warm-up pair that also writes shapeinfer's
bytecode, as an installed package has it). Per tool the median CPU time (user + system, from
the kernel's accounting of the child) and wall time, and the CPU ratio shapeinfer / onnx
(ratio of medians, and median of the per-pair ratios). On the MODELS and on a synthetic
llama-like stack of ``--whole-process-layers`` layers (540: about 18k nodes, each layer with
its own weights). Two rows per model: the commands as users run them (shapeinfer's console
script sets OPENBLAS_NUM_THREADS=1 for itself unless it is set, which spares numpy's OpenBLAS
thread pool, about 0.09 s CPU at import on 2 cores; onnx's one-liner pays it), and with
OPENBLAS_NUM_THREADS=1 for both (the same environment, neither pays the pool).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- synthetic models


def llama_like_model(
    layers: int, hidden: int = 64, heads: int = 4, external: str | None = None, distinct: bool = False
) -> onnx.ModelProto:
    """Repeated decoder layers in the TorchScript-export style: shape arithmetic feeding Reshapes.

    With ``external``, every layer's weight matrices are external tensors of ``hidden x big``
    floats in that file (written separately as a sparse file), so the model references GBs.
    With ``distinct``, every layer has weights of its own (inline), as an exported model does.
    """
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    nodes, inits = [], []
    head_dim = hidden // heads

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(arr, name))
        return name

    const("axes0", np.array([0], np.int64))
    const("idx0", np.array(0, np.int64))
    const("idx1", np.array(1, np.int64))
    const("heads", np.array([heads], np.int64))
    const("head_dim", np.array([head_dim], np.int64))
    const("hid", np.array([hidden], np.int64))
    const("eps", np.array(1e-6, np.float32))
    const("two", np.array(2.0, np.float32))
    offset = 0
    weights = {}
    for w in ("wq", "wk", "wv", "wo", "w1", "w2"):
        if external is None:
            weights[w] = const(
                w, (np.random.default_rng(0).standard_normal((hidden, hidden)) * 0.05).astype(np.float32)
            )
        else:
            weights[w] = None
    x = "h0"
    nodes.append(helper.make_node("Gather", ["embed", "input_ids"], [x]))
    for i in range(layers):
        p = f"l{i}_"
        ws = {}
        for j, w in enumerate(("wq", "wk", "wv", "wo", "w1", "w2")):
            if external is None and distinct:
                rng = np.random.default_rng(7 * i + j)
                ws[w] = const(p + w, (rng.standard_normal((hidden, hidden)) * 0.05).astype(np.float32))
            elif external is None:
                ws[w] = weights[w]
            else:
                t = TensorProto()
                t.name = p + w
                t.data_type = f32
                t.dims.extend([hidden, hidden])
                t.data_location = TensorProto.EXTERNAL
                nbytes = hidden * hidden * 4
                for k, v in (("location", external), ("offset", str(offset)), ("length", str(nbytes))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                offset += nbytes
                inits.append(t)
                ws[w] = t.name

        def n(op, ins, outs=None, p=p, **kw):
            outs = outs or [p + f"{op.lower()}{len(nodes)}"]
            nodes.append(helper.make_node(op, ins, outs, **kw))
            return outs[0]

        sq = n("Pow", [x, "two"])
        mean = n("ReduceMean", [sq], axes=[-1], keepdims=1)
        var = n("Add", [mean, "eps"])
        rs = n("Sqrt", [var])
        normed = n("Div", [x, rs])
        shp = n("Shape", [normed])
        b = n("Gather", [shp, "idx0"], axis=0)
        s = n("Gather", [shp, "idx1"], axis=0)
        b1 = n("Unsqueeze", [b, "axes0"])
        s1 = n("Unsqueeze", [s, "axes0"])
        tgt = n("Concat", [b1, s1, "heads", "head_dim"], axis=0)
        heads_out = []
        for w in ("wq", "wk", "wv"):
            proj = n("MatMul", [normed, ws[w]])
            r = n("Reshape", [proj, tgt])
            heads_out.append(n("Transpose", [r], perm=[0, 2, 1, 3]))
        q, k, v = heads_out
        kt = n("Transpose", [k], perm=[0, 1, 3, 2])
        att = n("MatMul", [q, kt])
        att = n("Softmax", [att], axis=-1)
        ctx = n("MatMul", [att, v])
        ctx = n("Transpose", [ctx], perm=[0, 2, 1, 3])
        back = n("Concat", [b1, s1, "hid"], axis=0)
        ctx = n("Reshape", [ctx, back])
        o = n("MatMul", [ctx, ws["wo"]])
        x2 = n("Add", [x, o])
        hmid = n("MatMul", [x2, ws["w1"]])
        act = n("Sigmoid", [hmid])
        hmid = n("Mul", [hmid, act])
        down = n("MatMul", [hmid, ws["w2"]])
        x = n("Add", [x2, down], [f"h{i + 1}"])
    const("embed", (np.random.default_rng(1).standard_normal((1000, hidden)) * 0.05).astype(np.float32))
    graph = helper.make_graph(
        nodes,
        "llama_like",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info(x, f32, None)],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    del i64
    return m


def write_external_model(folder: str, layers: int, gigabytes: float) -> tuple[str, int]:
    """A llama-like model whose weights live in a sparse external file of ``gigabytes`` size."""
    hidden = 64
    data = "weights.bin"
    m = llama_like_model(layers, hidden, external=data)
    # Spread the weights' offsets over the whole (sparse) file: each tensor far from the next.
    size = int(gigabytes * 2**30)
    ext = [t for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    stride = size // max(1, len(ext))
    for k, t in enumerate(ext):
        for e in t.external_data:
            if e.key == "offset":
                e.value = str(k * stride)
    path = os.path.join(folder, "model.onnx")
    onnx.save(m, path)
    with open(os.path.join(folder, data), "wb") as f:
        f.truncate(size)
    return path, size


# ----------------------------------------------------------------------------- timing


def median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_tool(tool: str, model: onnx.ModelProto, path: str | None):
    if tool == "onnx":
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    if tool == "ort":
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        return SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    if tool == "infer":
        from shapeinfer.inference.engine import infer
        from shapeinfer.io.annotate import annotate

        return annotate(infer(model, base_dir=os.path.dirname(path) if path else None))
    raise ValueError(tool)


_HWM = (
    "import atexit, sys\n"
    "def _hwm():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('VMHWM ' + line.split()[1] + '\\n')\n"
    "atexit.register(_hwm)\n"
)


def child_peak_rss(tool: str, path: str) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one run of ``tool`` on ``path`` in a fresh child process."""
    code = _HWM + (
        f"sys.path.insert(0, {ROOT!r})\nimport onnx\nfrom benchmarks.run import run_tool\n"
        f"m = onnx.load({path!r}, load_external_data=False)\nrun_tool({tool!r}, m, {path!r})\n"
    )
    return _wait_child([sys.executable, "-c", code])


def _wait_child(cmd: list[str]) -> tuple[float, float]:
    """Wall time and peak RSS (MB, the child's own VmHWM: not inflated by fork) of a command."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["failed"])[-1])
    kb = [int(x.split()[1]) for x in proc.stderr.splitlines() if x.startswith("VMHWM ")]
    return wall, (kb[-1] / 1024.0 if kb else float("nan"))


def shapeinfer_cmd() -> list[str]:
    """The `shapeinfer` command, run through a wrapper that reports its peak RSS at exit."""
    return [sys.executable, "-c", _HWM + "sys.argv[0] = 'shapeinfer'\nfrom shapeinfer.cli.main import main\nmain()\n"]


def process_time(path: str, reps: int) -> tuple[float, float]:
    """Median wall time and peak RSS (MB) of the whole `shapeinfer MODEL -o OUT` process."""
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "out.onnx")
        runs = [_wait_child([*shapeinfer_cmd(), path, "-o", out]) for _ in range(reps)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def bench(path: str, reps: int, tools: list[str], label: str | None = None) -> dict:
    model = onnx.load(path, load_external_data=False)
    n = len(model.graph.node)
    row: dict = {"model": label or os.path.basename(path), "nodes": n}
    for tool in tools:
        copies = [onnx.ModelProto() for _ in range(reps)]
        for c in copies:
            c.CopyFrom(model)
        it = iter(copies)
        try:
            row[tool] = median_time(lambda it=it, tool=tool: run_tool(tool, next(it), path), reps)
            row[f"{tool}_rss_mb"] = child_peak_rss(tool, path)[1]
        except Exception as e:  # a peer failing is a figure, not a benchmark crash
            row[tool] = None
            row[f"{tool}_error"] = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
    row["process"], row["process_rss_mb"] = process_time(path, reps)
    if row.get("infer"):
        row["nodes_per_s"] = n / row["infer"]
        for peer in ("onnx", "ort"):
            if row.get(peer):
                row[f"infer/{peer}"] = row["infer"] / row[peer]
    return row


def fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(columns: list[tuple[str, str, str | Callable[[dict], str], str]], rows: list[dict]) -> None:
    """A text table: a header line, a rule as long, one line a row. Each column is
    ``(title, align and width as in a format spec, key of the row or a function of it, the
    value's format spec)``; a missing or None value prints as ``-``. A row's ``*_error`` entries
    follow it, one line each."""
    head = " ".join(f"{title:{width}}" for title, width, _, _ in columns)
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = (fmt(key(r) if callable(key) else r.get(key), spec) for _, _, key, spec in columns)
        print(" ".join(f"{c:{width}}" for c, (_, width, _, _) in zip(cells, columns)))
        for k, v in r.items():
            if k.endswith("_error"):
                print(f"    {k[:-6]} failed: {v}")


def _rss(r: dict) -> str:
    return "/".join(fmt(r.get(k), ".0f") for k in ("onnx_rss_mb", "ort_rss_mb", "infer_rss_mb", "process_rss_mb"))


ROWS = [
    ("model", "<26", "model", ""),
    ("nodes", ">7", "nodes", ""),
    ("onnx s", ">8", "onnx", ".3f"),
    ("ort s", ">8", "ort", ".3f"),
    ("infer s", ">8", "infer", ".3f"),
    ("process s", ">9", "process", ".3f"),
    ("infer/onnx", ">10", "infer/onnx", ".2f"),
    ("infer/ort", ">9", "infer/ort", ".3f"),
    ("nodes/s", ">9", "nodes_per_s", ",.0f"),
    ("rss MB (onnx/ort/infer/process)", ">32", _rss, ""),
]


def print_rows(rows: list[dict]) -> None:
    print_table(ROWS, rows)


# ----------------------------------------------------------------------------- optimize rows


def _child_cpu(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child and its children) of one command."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["failed"])[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def optimize_row(path: str, reps: int, label: str | None = None) -> dict:
    """Whole-process `shapeinfer optimize -o` against `shapeinfer -o` on one model."""
    n = len(onnx.load(path, load_external_data=False).graph.node)
    cli = [sys.executable, "-m", "shapeinfer.cli"]
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "out.onnx")
        o, opt = [], []
        for _ in range(reps):  # alternating pairs: a load change on the machine hits both alike
            o.append(_child_cpu([*cli, path, "-o", out]))
            opt.append(_child_cpu([*cli, "optimize", path, "-o", out]))
        after = len(onnx.load(out, load_external_data=False).graph.node)
    row = {"model": label or os.path.basename(path), "nodes": n, "nodes_after": after}
    row["o_wall"], row["o_cpu"] = statistics.median(w for w, _ in o), statistics.median(c for _, c in o)
    row["opt_wall"], row["opt_cpu"] = statistics.median(w for w, _ in opt), statistics.median(c for _, c in opt)
    row["ratio_wall"] = row["opt_wall"] / row["o_wall"]
    row["ratio_cpu"] = row["opt_cpu"] / row["o_cpu"]
    row["opt_us_per_node"] = 1e6 * row["opt_cpu"] / n
    return row


def optimize_rows(models: list[str], layers: list[int], reps: int) -> list[dict]:
    rows = [optimize_row(p, reps) for p in models]
    with tempfile.TemporaryDirectory() as td:
        for n_layers in layers:
            path = os.path.join(td, f"synthetic{n_layers}.onnx")
            onnx.save(llama_like_model(n_layers), path)
            rows.append(optimize_row(path, reps, f"synthetic x{n_layers}"))
            os.remove(path)
    return rows


OPTIMIZE_ROWS = [
    ("model", "<22", "model", ""),
    ("nodes", ">7", "nodes", ""),
    ("after", ">7", "nodes_after", ""),
    ("-o wall", ">8", "o_wall", ".2f"),
    ("opt wall", ">9", "opt_wall", ".2f"),
    ("-o cpu", ">8", "o_cpu", ".2f"),
    ("opt cpu", ">8", "opt_cpu", ".2f"),
    ("ratio wall", ">10", "ratio_wall", ".2f"),
    ("ratio cpu", ">9", "ratio_cpu", ".2f"),
    ("opt us/node", ">11", "opt_us_per_node", ".1f"),
]


def print_optimize_rows(rows: list[dict]) -> None:
    print_table(OPTIMIZE_ROWS, rows)
    synth = [r for r in rows if r["model"].startswith("synthetic")]
    if len(synth) > 1:
        print(
            f"\noptimize CPU per node, {synth[-1]['model']} vs {synth[0]['model']}: "
            f"{synth[-1]['opt_us_per_node'] / synth[0]['opt_us_per_node']:.2f}x"
        )


def run_optimize_rows(a) -> None:
    """The optimize rows main() prints (see the module docstring)."""
    models = a.optimize_models
    if models is None:
        models = a.models or [os.path.join(ROOT, "examples", "models", "llama_ts.onnx")]
    layers = [int(x) for x in a.optimize_layers.split(",") if x]
    rows = optimize_rows(models, layers, max(1, min(a.reps, 3)))
    if a.json:
        print(json.dumps({"optimize_rows": rows}, indent=1))
        return
    print()
    print_optimize_rows(rows)


# ----------------------------------------------------------------------------- whole process


def _process_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process: user + system time from wait4."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read()
    proc.stderr.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise RuntimeError((err.decode(errors="replace").strip().splitlines() or ["failed"])[-1])
    return usage.ru_utime + usage.ru_stime, wall


def shapeinfer_script() -> list[str]:
    """The installed ``shapeinfer`` console script (``python -m shapeinfer.cli`` without one)."""
    script = os.path.join(os.path.dirname(sys.executable), "shapeinfer")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "shapeinfer.cli"]


#: The environments of the whole-process rows: as users run the two commands (shapeinfer's
#: console script then defaults OPENBLAS_NUM_THREADS to 1 for itself, onnx's python -c does not),
#: and with OPENBLAS_NUM_THREADS=1 for both, so neither gains from numpy's thread pool.
WHOLE_PROCESS_ENVS = {"as run": {}, "OPENBLAS=1 both": {"OPENBLAS_NUM_THREADS": "1"}}


def whole_process(path: str, reps: int, label: str | None = None) -> list[dict]:
    """Paired fresh-process runs of ``shapeinfer MODEL -o OUT`` and onnx's ``infer_shapes_path``:
    one row per environment of :data:`WHOLE_PROCESS_ENVS`, the four commands of a repetition
    run one after the other so the rows see the same machine load."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")}
    n = len(onnx.load(path, load_external_data=False).graph.node)
    with tempfile.TemporaryDirectory() as td:
        out_onnx, out_si = os.path.join(td, "onnx.onnx"), os.path.join(td, "shapeinfer.onnx")
        code = f"import onnx; onnx.shape_inference.infer_shapes_path({path!r}, {out_onnx!r}, data_prop=True)"
        cmds = {"onnx": [sys.executable, "-c", code], "shapeinfer": [*shapeinfer_script(), path, "-o", out_si]}
        envs = {name: {**base, **extra} for name, extra in WHOLE_PROCESS_ENVS.items()}
        runs = {(e, k): [] for e in envs for k in cmds}
        for c in cmds.values():  # warm-up: page cache, shapeinfer's bytecode
            _process_cpu(c, base)
        for _ in range(reps):
            for e, env in envs.items():
                for k, c in cmds.items():
                    runs[e, k].append(_process_cpu(c, env))
    rows = []
    for e in envs:
        row: dict = {"model": label or os.path.basename(path), "env": e, "nodes": n, "pairs": reps}
        for k in cmds:
            row[f"{k}_cpu"] = statistics.median(r[0] for r in runs[e, k])
            row[f"{k}_wall"] = statistics.median(r[1] for r in runs[e, k])
        row["cpu_ratio"] = row["shapeinfer_cpu"] / row["onnx_cpu"]
        pairs = zip(runs[e, "shapeinfer"], runs[e, "onnx"])
        row["pair_ratio"] = statistics.median(s[0] / o[0] for s, o in pairs)
        row["wall_ratio"] = row["shapeinfer_wall"] / row["onnx_wall"]
        rows.append(row)
    return rows


WHOLE_PROCESS_ROWS = [
    ("whole process (median of pairs)", "<26", "model", ""),
    ("environment", "<15", "env", ""),
    ("nodes", ">6", "nodes", ""),
    ("pairs", ">5", "pairs", ""),
    ("onnx cpu", ">8", "onnx_cpu", ".3f"),
    ("si cpu", ">7", "shapeinfer_cpu", ".3f"),
    ("onnx wall", ">9", "onnx_wall", ".3f"),
    ("si wall", ">7", "shapeinfer_wall", ".3f"),
    ("cpu si/onnx", ">11", "cpu_ratio", ".2f"),
    ("per-pair", ">8", "pair_ratio", ".2f"),
    ("wall si/onnx", ">12", "wall_ratio", ".2f"),
]


def print_whole_process(rows: list[dict]) -> None:
    print_table(WHOLE_PROCESS_ROWS, rows)
    print(
        "environment 'as run': the commands as users type them (shapeinfer's script defaults "
        "OPENBLAS_NUM_THREADS to 1 for itself); 'OPENBLAS=1 both': the variable set for onnx too"
    )


def whole_process_rows(models: list[str], reps: int, layers: int) -> list[dict]:
    """The whole-process comparison on ``models`` and on a synthetic stack of ``layers`` layers."""
    rows = [row for p in models for row in whole_process(p, reps)]
    if layers:
        with tempfile.TemporaryDirectory() as td:
            path = os.path.join(td, f"llama_like_x{layers}.onnx")
            onnx.save(llama_like_model(layers, distinct=True), path)
            rows.extend(whole_process(path, reps, f"synthetic llama x{layers}"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--layers", type=int, default=3300, help="layers of the synthetic model (~30 nodes each)")
    ap.add_argument("--gigabytes", type=float, default=8.0, help="size of the sparse external weights file")
    ap.add_argument("--tools", default="onnx,ort,infer")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--no-external", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--optimize-models", nargs="*", default=None, help="models for the optimize rows")
    ap.add_argument("--optimize-layers", default="240,1200,7350", help="synthetic sizes for the optimize rows")
    ap.add_argument("--only-optimize", action="store_true", help="only the optimize rows")
    ap.add_argument("--whole-process-reps", type=int, default=9, help="pairs of fresh processes (0: skip)")
    ap.add_argument("--whole-process-layers", type=int, default=540, help="layers of its synthetic model (0: none)")
    ap.add_argument("--whole-process-only", action="store_true", help="only the whole-process comparison")
    a = ap.parse_args()
    if a.only_optimize:
        run_optimize_rows(a)
        return
    tools = a.tools.split(",")
    models = a.models or [os.path.join(ROOT, "examples", "models", "llama_ts.onnx")]
    whole = whole_process_rows(models, a.whole_process_reps, a.whole_process_layers) if a.whole_process_reps else []
    if a.whole_process_only:
        if a.json:
            print(json.dumps({"whole_process": whole}, indent=1))
        else:
            print_whole_process(whole)
        return
    rows = [bench(p, a.reps, tools) for p in models]
    with tempfile.TemporaryDirectory() as td:
        if not a.no_synthetic:
            path = os.path.join(td, "synthetic.onnx")
            onnx.save(llama_like_model(a.layers), path)
            peers = [t for t in tools if t != "ort"]  # ORT's symbolic inference takes minutes here
            rows.append(bench(path, max(3, a.reps // 2), peers, f"synthetic x{a.layers}"))
            if rows[0].get("infer") and rows[-1].get("infer"):
                per_small = rows[0]["infer"] / rows[0]["nodes"]
                per_big = rows[-1]["infer"] / rows[-1]["nodes"]
                rows[-1]["per_node_vs_first"] = per_big / per_small
        ext = None
        if not a.no_external:
            folder = os.path.join(td, "ext")
            os.makedirs(folder)
            path, size = write_external_model(folder, 200, a.gigabytes)
            wall, rss = process_time(path, 1)
            outdir = os.path.join(td, "elsewhere")
            os.makedirs(outdir)
            out = os.path.join(outdir, "out.onnx")
            wall2, rss2 = _wait_child([*shapeinfer_cmd(), path, "-o", out])
            copied = os.path.getsize(os.path.join(outdir, "weights.bin")) if os.path.exists(out) else None
            m = onnx.load(out, load_external_data=False) if os.path.exists(out) else None
            still_external = m is not None and all(
                t.data_location == TensorProto.EXTERNAL for t in m.graph.initializer if t.name.startswith("l")
            )
            ext = dict(
                weights_gb=size / 2**30,
                same_folder_s=wall,
                same_folder_rss_mb=rss,
                other_folder_s=wall2,
                other_folder_rss_mb=rss2,
                data_copied_bytes=copied,
                weights_still_external=still_external,
            )
    if a.json:
        print(json.dumps({"rows": rows, "external": ext, "whole_process": whole}, indent=1))
        return
    print_rows(rows)
    if whole:
        print()
        print_whole_process(whole)
    if len(rows) > 1 and rows[-1].get("per_node_vs_first"):
        print(f"\ntime per node, {rows[-1]['model']} vs {rows[0]['model']}: {rows[-1]['per_node_vs_first']:.2f}x")
    if ext:
        print(
            f"\nexternal data ({ext['weights_gb']:.1f} GB sparse weights file): -o same folder "
            f"{ext['same_folder_s']:.2f}s peak RSS {ext['same_folder_rss_mb']:.0f} MB; -o other folder "
            f"{ext['other_folder_s']:.2f}s peak RSS {ext['other_folder_rss_mb']:.0f} MB, data copied "
            f"{(ext['data_copied_bytes'] or 0) / 2**30:.1f} GB, weights still external: {ext['weights_still_external']}"
        )
    run_optimize_rows(a)


if __name__ == "__main__":
    main()
