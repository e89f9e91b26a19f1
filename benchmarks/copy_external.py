"""Copying dense external weights to another folder: ``shapeinfer M -o OTHER/out.onnx`` vs ``cp``.

Makes a model whose initializers live in one dense data file of ``--gb`` GB (random bytes) in
``--dir``, then times, in alternating order (paired runs), ``cp DATA OTHER/`` and the whole
``shapeinfer M -o OTHER/out.onnx`` process. Before each timed run: ``sync``, then wait until
the kernel's pending writes (``Dirty`` + ``Writeback`` in ``/proc/meminfo``) stay under
``--quiet-mb`` for two consecutive readings half a second apart (at most ``--quiet-timeout``
seconds), then a pause of ``--settle`` seconds. Both copies land in the page cache and are
written back afterwards; on a shared VM disk the run that comes second in a pair otherwise pays
for the first one's write-back, and other processes' writes (other users of the machine) would
land on whichever run happens to overlap them. ``sync`` flushes this machine's dirty pages; the
wait makes sure nobody else's are pending when the clock starts; the pause leaves the virtual
disk's own cache time to drain, which the guest cannot observe. Even so the run that comes
second in a pair can take several times as long as the first, whichever tool it is, so the
first run of a pair is the steadier figure; both positions are reported. Prints each pair
and the median wall times and their ratio. Deletes everything it made unless ``--keep``.

    python benchmarks/copy_external.py --dir DIR_ON_THE_DISK_TO_MEASURE --gb 2.5 --pairs 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def make_model(folder: str, nbytes: int, parts: int = 5) -> str:
    import onnx
    from onnx import TensorProto, helper

    os.makedirs(folder, exist_ok=True)
    data = os.path.join(folder, "weights.bin")
    per = nbytes // parts // 4
    with open(data, "wb") as f:
        left = per * parts * 4
        while left:
            n = min(left, 64 << 20)
            f.write(os.urandom(n))
            left -= n
    inits, nodes, prev = [], [], "x"
    for i in range(parts):
        t = TensorProto()
        t.name, t.data_type = f"w{i}", TensorProto.FLOAT
        t.dims.extend([per])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(i * per * 4)), ("length", str(per * 4))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        nodes.append(helper.make_node("Add", [prev, f"w{i}"], [f"y{i}"]))
        prev = f"y{i}"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [per])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)],
        inits,
    )
    path = os.path.join(folder, "m.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def pending_write_mb() -> float:
    """Dirty + Writeback memory in MB (pages waiting to be written to disk), from /proc/meminfo."""
    kb = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(("Dirty:", "Writeback:")):
                    kb += int(line.split()[1])
    except OSError:
        return 0.0
    return kb / 1024


def wait_quiet(limit_mb: float, timeout: float) -> float:
    """Wait until pending writes stay under ``limit_mb`` for two readings 0.5 s apart, or
    ``timeout`` seconds; returns the last reading."""
    deadline = time.monotonic() + timeout
    calm = 0
    while True:
        mb = pending_write_mb()
        calm = calm + 1 if mb < limit_mb else 0
        if calm >= 2 or time.monotonic() > deadline:
            return mb
        time.sleep(0.5)


def timed(cmd: list[str], settle: float, quiet_mb: float = 64.0, quiet_timeout: float = 60.0) -> float:
    """Wall time of ``cmd``, started after ``sync``, a wait for pending writes to drain and a
    pause (the previous run's writes settle, so neither tool pays for the other's write-back)."""
    subprocess.run(["sync"], check=True)
    wait_quiet(quiet_mb, quiet_timeout)
    time.sleep(settle)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gb", type=float, default=2.5)
    ap.add_argument("--pairs", type=int, default=6, help="an even number: each tool goes first half the time")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--settle", type=float, default=15.0, help="seconds to wait after sync before each run")
    ap.add_argument("--quiet-mb", type=float, default=64.0, help="pending writes (MB) to wait below before each run")
    ap.add_argument("--quiet-timeout", type=float, default=60.0, help="longest wait for pending writes (s)")
    a = ap.parse_args()
    root = os.path.join(a.dir, "copy_external")
    src, dst_cp, dst_si = (os.path.join(root, d) for d in ("src", "cp", "si"))
    model = os.path.join(src, "m.onnx")
    if not os.path.exists(model):
        make_model(src, int(a.gb * 1e9))
    exe = shutil.which("shapeinfer") or sys.argv[0]
    cps, sis = [], []
    try:
        for k in range(a.pairs):
            for d in (dst_cp, dst_si):
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
            runs = [
                ("cp", ["cp", os.path.join(src, "weights.bin"), dst_cp]),
                ("shapeinfer", [exe, model, "-o", os.path.join(dst_si, "out.onnx")]),
            ]
            if k % 2:
                runs.reverse()
            got = {name: timed(cmd, a.settle, a.quiet_mb, a.quiet_timeout) for name, cmd in runs}
            cps.append(got["cp"])
            sis.append(got["shapeinfer"])
            print(f"pair {k + 1}: cp {got['cp']:.2f}s  shapeinfer -o {got['shapeinfer']:.2f}s", flush=True)
        mc, ms = statistics.median(cps), statistics.median(sis)
        print(f"median: cp {mc:.2f}s  shapeinfer -o {ms:.2f}s  ratio {ms / mc:.2f}")
        # the order matters on a shared disk: compare runs made in the same position of a pair
        for pos, name in ((0, "first"), (1, "second")):
            c = [t for k, t in enumerate(cps) if (k % 2 == 1) == bool(pos)]
            si = [t for k, t in enumerate(sis) if (k % 2 == 0) == bool(pos)]
            if c and si:
                mc, ms = statistics.median(c), statistics.median(si)
                print(f"run {name} in its pair: cp {mc:.2f}s  shapeinfer -o {ms:.2f}s  ratio {ms / mc:.2f}")
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
