"""Fuzz the files and values a user or a model names: command lines and external-data entries.

Each case is one ``shapeinfer`` command line over a fresh copy of a small model whose two
initializers (a Reshape target, whose value inference reads, and a weight it never reads) live
in external data. A case mutates any of:

- the external-data entries: location (FIFO, socket, device node, folder, symlinks in and out
  of the folder, ``/dev/zero``, absolute, ``..``, missing, empty), offset and length (negative,
  huge, past the end, not integers, absent), duplicated, unknown and missing keys, an 8 GiB
  sparse data file;
- the model path (FIFO, ``/dev/zero``, a link to it, folder, socket, empty, 3 GiB sparse,
  missing, non-UTF-8 name, ``-`` with the model on stdin);
- the output (missing folder, a folder, the input itself, a symlink leaving its folder, a
  FIFO, ``-``, the model's folder or another folder);
- flag values (``--bind``, ``--input-shape``, ``--timeout``, ``--target-opset``, ``-j``,
  ``--format``, ``--max-memory``, ``--passes``, ``--select``, ``--config``, ``--rules``);
- the subcommand (infer, ``--json``, optimize, lint, lint of the folder with ``-j 2``, ``--fix``,
  verify) and the working directory (one holding a decoy ``data.bin``, the model's folder, ``/``).

Cases run in batches in fresh processes (testkit/cli_driver.py: an audit hook records every file
opened outside the allowed folders, an alarm catches hangs, peak RSS is recorded) under an
address-space limit. A case fails on: a traceback, a hang, an exit code other than 0/1/2, exit
2 with anything but one ``shapeinfer: error:`` line (or an "internal error"), a file opened
outside the model's folder, the output folder and the system, a changed input or outside file,
peak RSS above the limit, or the decoy in the working directory being opened.

    python tools/fuzz/fuzz_io.py --cases 600 --seed 1 [--json results.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DRIVER = os.path.join(ROOT, "testkit", "cli_driver.py")
sys.path.insert(0, ROOT)  # testkit

RSS_LIMIT_MB = 400  # a batch runs ~25 commands in one process, onnxruntime included
AS_LIMIT = 6 << 30

NUMBERS = ["0", "16", "-8", "-1", " 8", "8.0", "+8", "", "0x10", "9" * 30, str(1 << 40), str(2**63), "9999", "1e3"]


def _entry_pairs(rng: random.Random, location: str, offset: int, length: int) -> list[tuple[str, str]]:
    pairs = [("location", location), ("offset", str(offset)), ("length", str(length))]
    roll = rng.random()
    if roll < 0.25:
        pairs[1] = ("offset", rng.choice(NUMBERS))
    elif roll < 0.45:
        pairs[2] = ("length", rng.choice(NUMBERS))
    elif roll < 0.55:
        del pairs[2]  # to the end of the file
    elif roll < 0.62:
        pairs.append(rng.choice([("location", location), ("offset", "0"), ("length", "16")]))
    elif roll < 0.7:
        pairs.append((rng.choice(["basepath", "checksum", "frobnicate", "", "LOCATION"]), "x"))
    elif roll < 0.74:
        del pairs[0]
    if rng.random() < 0.2:
        rng.shuffle(pairs)
    return pairs


LOCATIONS = [
    "data.bin",
    "data.bin",
    "data.bin",
    "fifo.bin",
    "sock.bin",
    "zero.bin",
    "sub",
    "inlink.bin",
    "outlink.bin",
    "devzero.bin",
    "/etc/hostname",
    "../outside/secret.bin",
    "missing.bin",
    "",
    "sparse.bin",
    "sub/../data.bin",
    "./data.bin",
    "a" * 300,
]


class Workspace:
    """A root folder with an ``outside`` folder (files nobody may read or change), a decoy cwd
    and one model folder per case."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.outside = os.path.join(root, "outside")
        self.cwd = os.path.join(root, "cwd")
        os.makedirs(self.outside)
        os.makedirs(self.cwd)
        with open(os.path.join(self.outside, "secret.bin"), "wb") as f:
            f.write(os.urandom(4096))
        import numpy as np

        with open(os.path.join(self.cwd, "data.bin"), "wb") as f:  # the decoy
            f.write(np.array([3, 2], np.int64).tobytes() + b"\0" * 2400)
        self.sockets: list[socket.socket] = []

    def special(self, folder: str, name: str) -> None:
        p = os.path.join(folder, name)
        if os.path.lexists(p):
            return
        if name.startswith("fifo"):
            os.mkfifo(p)
        elif name.startswith("sock"):
            s = socket.socket(socket.AF_UNIX)
            s.bind(p)
            self.sockets.append(s)
        elif name.startswith("zero"):
            try:
                os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 5))
            except OSError:
                os.symlink("/dev/zero", p)
        elif name == "sub":
            os.mkdir(p)
        elif name == "inlink.bin":
            os.symlink("data.bin", p)
        elif name == "outlink.bin":
            os.symlink(os.path.join(self.outside, "secret.bin"), p)
        elif name == "devzero.bin":
            os.symlink("/dev/zero", p)
        elif name.startswith("sparse"):
            with open(p, "wb") as f:
                f.truncate(8 << 30)

    def model_case(self, k: int, rng: random.Random) -> tuple[str, str]:
        """A model folder for case ``k`` with mutated external-data entries; (folder, model path)."""
        from testkit.external_models import WEIGHT, build

        folder = os.path.join(self.root, f"m{k}")
        tloc = rng.choice(LOCATIONS) if rng.random() < 0.6 else "data.bin"
        wloc = rng.choice(LOCATIONS) if rng.random() < 0.3 else "data.bin"
        tpairs = _entry_pairs(rng, tloc, 0, 16) if rng.random() < 0.8 else None
        wpairs = _entry_pairs(rng, wloc, 16, WEIGHT.nbytes) if rng.random() < 0.5 else None
        path = build(folder, tpairs, wpairs)
        for loc in {tloc, wloc}:
            if loc and "/" not in loc and loc not in ("data.bin", "missing.bin") and len(loc) < 100:
                self.special(folder, loc)
        return folder, path

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def model_path_variant(ws: Workspace, folder: str, model: str, rng: random.Random) -> tuple[str, str | None]:
    """The MODEL argument (and a stdin file): usually the model, sometimes something hostile."""
    roll = rng.random()
    if roll < 0.75:
        return model, None
    kind = rng.choice(["fifo", "devzero", "zerolink", "folder", "sock", "empty", "huge", "missing", "nonutf8", "stdin"])
    if kind == "fifo":
        ws.special(folder, "fifo.onnx")
        return os.path.join(folder, "fifo.onnx"), None
    if kind == "devzero":
        return "/dev/zero", None
    if kind == "zerolink":
        p = os.path.join(folder, "zl.onnx")
        if not os.path.lexists(p):
            os.symlink("/dev/zero", p)
        return p, None
    if kind == "folder":
        return folder, None
    if kind == "sock":
        ws.special(folder, "sock.onnx")
        return os.path.join(folder, "sock.onnx"), None
    if kind == "empty":
        p = os.path.join(folder, "empty.onnx")
        open(p, "wb").close()
        return p, None
    if kind == "huge":
        p = os.path.join(folder, "huge.onnx")
        with open(p, "wb") as f:
            f.truncate(3 << 30)
        return p, None
    if kind == "missing":
        return os.path.join(folder, "nope.onnx"), None
    if kind == "nonutf8":
        p = os.fsdecode(os.fsencode(folder) + b"/m\xff\xfe.onnx")
        shutil.copy(model, p)
        return p, None
    return "-", model


def output_variant(ws: Workspace, folder: str, model: str, other: str, rng: random.Random) -> str:
    """The -o argument; ``model`` is the MODEL argument of the same command line."""
    roll = rng.random()
    if roll < 0.35:
        return os.path.join(other, "out.onnx")
    if roll < 0.6:
        return os.path.join(folder, "out.onnx")
    kind = rng.choice(["nodir", "dir", "input", "outlink", "fifo", "stdout", "devnull"])
    if kind == "nodir":
        return "/nonexistent/dir/out.onnx"
    if kind == "dir":
        return other
    if kind == "input":
        return model if model != "-" else os.path.join(other, "in.onnx")
    if kind == "outlink":
        p = os.path.join(other, "link.onnx")
        if not os.path.lexists(p):
            os.symlink(os.path.join(ws.outside, "written.onnx"), p)
        return p
    if kind == "fifo":
        p = os.path.join(other, "fifo.onnx")
        if not os.path.lexists(p):
            os.mkfifo(p)
        return p
    if kind == "devnull":
        return "/dev/null"
    return "-"


FLAG_VALUES = {
    "--bind": ["n=2", "n=0", "n=-1", "n=" + "9" * 55, "n=2147483648", "bogus=1", "n", "=3", "n=x", "n=2,n=3", ""],
    "--input-shape": ["x=1,2,3", "x=n,2,3", "x=[1,2]", "x=1x128", "nosuch=1", "x=" + "*".join(["(a+b+c+d)"] * 8)],
    "--timeout": ["0", "-1", "nan", "inf", "1e309", "0.000001", "abc", "5"],
    "--target-opset": ["abc", "-1", "1", "99", "9" * 25, "17"],
    "-j": ["-1", "0", "1", "2", "abc"],
    "--format": ["bogus", "json", "sarif", "github", "text"],
    "--max-memory": ["1", "0", "-5", "lots", "1K", "8G", "9" * 30],
    "--passes": ["bogus", "", "dce", "fold-shapes,fold-shapes", "fold-shapes,dedupe-shapes"],
    "--select": ["ZZZ", "", "E", "R001,bogus"],
    "--config": ["/dev/zero", "FIFO", "/nonexistent.toml", "FOLDER"],
    "--rules": ["bogus", "/dev/zero", "FIFO", "strict"],
}

SUBCOMMAND_FLAGS = {
    "infer": ["--bind", "--input-shape", "--timeout"],
    "optimize": ["--bind", "--target-opset", "--passes"],
    "lint": ["-j", "--format", "--select", "--config", "--rules"],
    "verify": ["--bind", "--max-memory"],
}


def make_case(ws: Workspace, k: int, rng: random.Random) -> dict:
    folder, model = ws.model_case(k, rng)
    other = os.path.join(ws.root, f"o{k}")
    os.makedirs(other)
    arg, stdin = model_path_variant(ws, folder, model, rng)
    sub = rng.choice(["infer", "infer", "infer-o", "optimize", "lint", "lint-dir", "lint-fix", "lint-o", "verify"])
    if sub == "infer":
        args = [arg] + (["--json"] if rng.random() < 0.4 else [])
    elif sub == "infer-o":
        args = [arg, "-o", output_variant(ws, folder, arg, other, rng)]
        if rng.random() < 0.15:
            args.append("--in-place")
    elif sub == "optimize":
        args = ["optimize", arg, "-o", output_variant(ws, folder, arg, other, rng)]
    elif sub == "lint":
        args = ["lint", arg]
    elif sub == "lint-dir":
        args = ["lint", "-j", "2", folder]
    elif sub == "lint-fix":
        args = ["lint", "--fix", arg]
    elif sub == "lint-o":
        args = ["lint", arg, "-o", output_variant(ws, folder, arg, other, rng).replace(".onnx", ".txt")]
    else:
        args = ["verify", arg, "--bind", "n=2"]
    kind = sub.split("-")[0]
    for flag in SUBCOMMAND_FLAGS[kind]:
        if rng.random() < 0.25:
            v = rng.choice(FLAG_VALUES[flag])
            if v == "FIFO":
                ws.special(other, "fifo.toml")
                v = os.path.join(other, "fifo.toml")
            elif v == "FOLDER":
                v = other
            if flag == "-j" and kind == "lint":
                args[1:1] = [flag, v]
            else:
                args += [flag, v]
    cwd = rng.choice([ws.cwd, ws.cwd, folder, "/"])
    return {"args": args, "cwd": cwd, "stdin": stdin, "timeout": 20, "folder": folder, "other": other}


def snapshot(paths: list[str]) -> dict[str, tuple]:
    """Content fingerprints of the regular files under ``paths`` (big sparse ones by size)."""
    out = {}
    for top in paths:
        for root, _dirs, files in os.walk(top):
            for name in files:
                p = os.path.join(root, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    out[p] = ("special", st.st_mode)
                elif st.st_size > (64 << 20):
                    out[p] = ("big", st.st_size, st.st_mtime_ns)
                else:
                    with open(p, "rb") as f:
                        out[p] = ("file", hashlib.sha1(f.read()).hexdigest())
    return out


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_batch(jobs: list[dict], allowed: list[str]) -> list[dict]:
    fd, spec = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    out = spec + ".out"
    with open(spec, "w") as f:
        json.dump({"jobs": jobs, "allowed": allowed}, f)
    try:
        p = subprocess.run(
            [sys.executable, DRIVER, spec, out],
            preexec_fn=_limit,
            timeout=25 * len(jobs) + 60,
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            return [{"driver_failed": p.stderr[-2000:], **j} for j in jobs]
        with open(out) as f:
            return json.load(f)
    finally:
        for x in (spec, out):
            if os.path.exists(x):
                os.unlink(x)


def verdicts(job: dict, r: dict, changed: list[str], decoy: str) -> list[str]:
    bad = []
    if "driver_failed" in r:
        return [f"driver failed: {r['driver_failed'][-300:]}"]
    if r["traceback"]:
        bad.append("traceback: " + r["traceback"].strip().splitlines()[-1])
    if r["timeout"]:
        bad.append("hang")
    if r["rc"] not in (0, 1, 2):
        bad.append(f"exit {r['rc']}")
    if r["rc"] == 2:
        lines = r["stderr"].strip().splitlines()
        errs = [x for x in lines if x.startswith("shapeinfer: error:")]
        if not errs or "internal error" in r["stderr"]:
            bad.append("exit 2 without a clean line: " + (r["stderr"].strip()[-200:] or "(nothing)"))
        elif job["args"][0] != "lint" and len(lines) != 1:
            bad.append(f"exit 2 with {len(lines)} lines: {r['stderr'][-200:]}")
    outside = [p for p in r["opened_outside"] if not p.startswith(("/dev/null", "/dev/urandom", "/dev/shm/"))]
    if outside:
        bad.append(f"opened outside: {outside[:3]}")
    if os.path.realpath(decoy) in r["opened_outside"]:
        bad.append("read the decoy in the cwd")
    if r["maxrss_mb"] > RSS_LIMIT_MB:
        bad.append(f"peak RSS {r['maxrss_mb']:.0f} MB")
    if changed:
        bad.append(f"changed: {changed[:3]}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--json", help="write every case and verdict here")
    ap.add_argument("--dir", default=None, help="where the workspace goes (default: a temp folder)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t0 = time.time()
    records = []
    counts = {"cases": 0, "failures": 0, "rc0": 0, "rc1": 0, "rc2": 0}
    peak = 0.0
    done = 0
    while done < a.cases:
        root = tempfile.mkdtemp(prefix="fuzz_io_", dir=a.dir)
        ws = Workspace(root)
        try:
            n = min(a.batch, a.cases - done)
            jobs = [make_case(ws, done + i, rng) for i in range(n)]
            watched = [ws.outside, ws.cwd] + [j["folder"] for j in jobs]
            before = snapshot(watched)
            allowed = sorted({j["folder"] for j in jobs} | {j["other"] for j in jobs})
            results = run_batch(jobs, allowed)
            after = snapshot(watched)
            changed_all = sorted(p for p in before if after.get(p) != before[p])
            for j, r in zip(jobs, results):
                changed = [p for p in changed_all if p.startswith(j["folder"] + "/") or not p.startswith(root + "/m")]
                if "--in-place" in j["args"]:  # the model may be rewritten, nothing else
                    changed = [p for p in changed if not p.endswith("/m.onnx")]
                bad = verdicts(j, r, changed, os.path.join(ws.cwd, "data.bin"))
                counts["cases"] += 1
                if "rc" in r and r["rc"] in (0, 1, 2):
                    counts[f"rc{r['rc']}"] += 1
                peak = max(peak, r.get("maxrss_mb", 0))
                if bad:
                    counts["failures"] += 1
                    print(f"FAIL {j['args']} cwd={j['cwd']}: {'; '.join(bad)}", flush=True)
                records.append({"args": j["args"], "cwd": j["cwd"], "rc": r.get("rc"), "bad": bad})
            done += n
            print(f"{done}/{a.cases} cases, {counts['failures']} failing, {time.time() - t0:.0f}s", flush=True)
        finally:
            ws.close()
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"{counts['cases']} cases in {time.time() - t0:.0f}s: {counts['failures']} failing; exit codes "
        f"0: {counts['rc0']}, 1: {counts['rc1']}, 2: {counts['rc2']}; peak RSS per batch process {peak:.0f} MB"
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "peak_rss_mb": peak, "records": records}, f, indent=1)
    sys.exit(1 if counts["failures"] else 0)


if __name__ == "__main__":
    main()
