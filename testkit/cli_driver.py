"""Run many ``shapeinfer`` command lines in one fresh process and report what each did.

Used by the file and external-data tests and by ``tools/fuzz/fuzz_io.py``: starting Python and
importing onnx once per batch instead of once per command keeps hundreds of runs cheap, while
the process boundary still gives each batch its own peak RSS, a hard timeout and a clean state.

Each job is ``{"args": [...], "cwd": DIR, "stdin": "path or null", "timeout": seconds}``.
The result of each job: exit code, stdout/stderr text, ``traceback`` (an exception that escaped
the command, which must never happen), ``timeout`` (the alarm fired), peak RSS so far in MB,
and ``opened``: files opened (Python's ``open`` audit event, which ``os.open`` raises too)
outside ``allowed`` roots.

    python testkit/cli_driver.py jobs.json results.json
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import tempfile
import traceback


class JobTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise JobTimeout


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB: VmHWM, which starts afresh at exec (the
    getrusage figure keeps the high-water mark of the process that forked us, e.g. pytest)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_jobs(jobs: list[dict], allowed: list[str]) -> list[dict]:
    from click.testing import CliRunner

    import shapeinfer
    from shapeinfer.cli.main import main

    opened: list[str] = []
    system = [sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/etc", "/proc", "/sys", "/dev/null"]
    system.append(os.path.dirname(os.path.dirname(os.path.abspath(shapeinfer.__file__))))
    system.extend(
        p
        for p in sys.path
        if p and os.path.isdir(p) and not os.path.realpath(p).startswith(os.path.realpath(tempfile.gettempdir()))
    )
    roots = [os.path.realpath(p) for p in [*allowed, *system]]

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            p = os.fsdecode(args[0])
            real = os.path.realpath(p) if os.path.isabs(p) else os.path.realpath(os.path.join(os.getcwd(), p))
            if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots):
                opened.append(real)

    signal.signal(signal.SIGALRM, _alarm)
    results = []
    for job in jobs:
        os.chdir(job["cwd"])
        stdin = None
        if job.get("stdin"):
            with open(job["stdin"], "rb") as f:
                stdin = f.read()
        del opened[:]
        if not hasattr(run_jobs, "_hooked"):
            sys.addaudithook(hook)
            run_jobs._hooked = True  # type: ignore[attr-defined]
        res = {"args": job["args"], "cwd": job["cwd"], "traceback": None, "timeout": False}
        signal.setitimer(signal.ITIMER_REAL, float(job.get("timeout", 20)))
        try:
            r = CliRunner().invoke(main, job["args"], input=stdin, catch_exceptions=True)
            signal.setitimer(signal.ITIMER_REAL, 0)
            res["rc"] = r.exit_code
            res["stdout"] = r.stdout_bytes.decode("utf-8", "replace")[-4000:]
            res["stderr"] = r.stderr_bytes.decode("utf-8", "replace")[-4000:]
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                if isinstance(r.exception, JobTimeout):
                    res["timeout"] = True
                else:
                    res["traceback"] = "".join(traceback.format_exception(r.exception))[-3000:]
        except JobTimeout:
            res["timeout"] = True
            res["rc"] = None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        res["opened_outside"] = sorted(set(opened))
        res["maxrss_mb"] = peak_rss_mb()
        results.append(res)
    return results


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    results = run_jobs(spec["jobs"], spec.get("allowed", []))
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
