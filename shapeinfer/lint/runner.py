"""Linting files: discovery, one file at a time or in a process pool, and ``--fix``.

:func:`lint_path` is the unit of work (picklable arguments and result, so it runs in worker
processes); an unreadable file becomes an ``E900`` finding instead of stopping the others.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from shapeinfer.inference.bindings import input_symbols
from shapeinfer.io.external import ExternalDataError, data_files, external_tensors
from shapeinfer.io.onnxio import StdoutIsModelData
from shapeinfer.io.userfiles import UserFileError
from shapeinfer.lint import lint_model
from shapeinfer.lint.config import LintConfig
from shapeinfer.lint.context import Finding
from shapeinfer.lint.registry import RULES

#: The order fixes are applied in (the optimize pipeline's order).
FIX_ORDER = ("reshape-v1-to-v5", "fold-shapes", "canonicalize-reshape", "remove-noop-reshape", "dedupe-shapes")


class LintUsageError(Exception):
    """A path argument that cannot be linted (missing, or a folder without models)."""


@dataclass
class FileResult:
    """The outcome for one model: its findings, whether it was readable, what --fix did."""

    path: str
    findings: list[Finding]
    unreadable: bool = False
    written: str | None = None  # the model --fix wrote
    fixed: dict[str, int] = field(default_factory=dict)  # code -> findings the fix removed
    notes: list[str] = field(default_factory=list)  # lines for stderr
    #: the files the linted model's external data names: inputs a report must never replace
    data_files: list[str] = field(default_factory=list)
    #: the model's input symbols (which of the configured ranges applied to it)
    symbols: frozenset[str] = frozenset()


def discover(paths: Sequence[str]) -> list[str]:
    """The model files to lint: files as given, folders searched recursively for ``*.onnx``
    (hidden folders and the ``*.fixed.onnx`` files --fix writes skipped), in a stable order,
    each once. LintUsageError for a missing path or a folder with no models."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(os.path.join(root, f) for f in sorted(files) if _is_model_name(f))
            if not found:
                raise LintUsageError(f"no models found: {p} holds no *.onnx file (nothing was linted)")
            out.extend(found)
        elif os.path.exists(p) or p == "-":  # "-": standard input
            out.append(p)
        else:
            raise LintUsageError(f"{p}: no such file or directory")
    seen = set()
    uniq = []
    for p in out:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            uniq.append(p)
    return uniq


def _is_model_name(name: str) -> bool:
    """A file a folder search lints: ``*.onnx`` in any case (``BERT.ONNX``), but not the
    ``*.fixed.onnx`` copies --fix writes."""
    low = name.lower()
    return low.endswith(".onnx") and not low.endswith(".fixed.onnx")


def fixed_path(path: str) -> str:
    """Where ``--fix`` writes without ``--in-place``: ``model.onnx`` -> ``model.fixed.onnx``."""
    stem = path[: -len(".onnx")] if path.lower().endswith(".onnx") else path
    return stem + ".fixed.onnx"


def _unreadable(path: str, reason: str) -> FileResult:
    prefix = f"{path}: "
    msg = reason[len(prefix) :] if reason.startswith(prefix) else reason
    f = Finding.of(path, "E900", "error", f"cannot read the model: {msg}", name=RULES["E900"].name)
    return FileResult(path, [f], unreadable=True)


def lint_path(path: str, config: LintConfig, fix: bool = False, in_place: bool = False) -> FileResult:
    """Lint the model at ``path`` under ``config``; with ``fix``, rewrite fixable findings away.

    Never raises for a bad model (E900). With ``fix`` and fixable findings, the passes named by
    the findings run, the result is written to :func:`fixed_path` (or over ``path`` with
    ``in_place``) and linted again: the returned findings are the written model's, under its path.
    The configured ranges apply to the symbols the model's inputs have (a project's ``seq``
    range is not an error for a model without one).
    """
    from shapeinfer.document import open as open_model

    try:
        doc = open_model(path)
        model = doc.model  # linted as read; --fix optimizes a fresh parse of the same bytes
    except StdoutIsModelData as e:  # the report must not be printed (lint's command refuses it)
        res = _unreadable(path, str(e))
        res.data_files = e.data_files
        return res
    except Exception as e:  # ModelLoadError, or anything protobuf throws at a broken file
        return _unreadable(path, str(e) or type(e).__name__)
    symbols = frozenset(input_symbols(model)) if config.dim_ranges else frozenset()
    ranges = {k: r for k, r in config.dim_ranges.items() if k in symbols}
    findings = config.apply(
        lint_model(model, path, target=config.target, base_dir=doc.folder, timeout=config.timeout, dim_ranges=ranges)
    )
    data = data_files(external_tensors(model), doc.folder)
    fixable = [f for f in findings if f.fix] if fix else []
    if not fixable:
        return FileResult(path, findings, data_files=data, symbols=symbols)
    res = _fix(path, doc, findings, fixable, config, in_place, ranges)
    res.data_files = data
    res.symbols = symbols
    return res


def _fix(path, doc, findings, fixable, config: LintConfig, in_place: bool, ranges: dict) -> FileResult:
    """The fixable findings' passes run on the :class:`~shapeinfer.document.Document` ``doc``
    and the result written through it (the write contract's refusals are notes: nothing
    written), when they remove at least one finding."""

    wanted = {f.fix for f in fixable}
    passes = [p for p in FIX_ORDER if p in wanted] + sorted(wanted - set(FIX_ORDER))
    res = FileResult(path, findings)
    out = path if in_place else fixed_path(path)
    if not in_place and os.path.lexists(out):
        res.notes.append(f"{path}: --fix: {out} already exists and is not overwritten (remove it, or use --in-place)")
        return res
    available, missing = available_passes(passes)
    if missing:
        res.notes.append(f"{path}: --fix: pass(es) not available in this installation: {', '.join(missing)}")
    if not available:
        res.notes.append(f"{path}: --fix: nothing written")
        return res
    try:
        fixed = doc.optimize(passes=available)
    except Exception as e:
        res.notes.append(f"{path}: --fix failed in the optimize passes ({type(e).__name__}: {e}); nothing written")
        return res
    after = config.apply(
        lint_model(
            fixed.model, out, target=config.target, base_dir=doc.folder, timeout=config.timeout, dim_ranges=ranges
        )
    )
    before_counts = Counter(f.code for f in fixable)
    after_counts = Counter(f.code for f in after if f.code in before_counts)
    gone = {c: n - after_counts.get(c, 0) for c, n in before_counts.items() if n - after_counts.get(c, 0) > 0}
    if not gone:
        res.notes.append(f"{path}: --fix: {', '.join(available)} removed none of the findings; nothing written")
        return res

    try:
        fixed.write(out, in_place=in_place)
    except (UserFileError, ExternalDataError) as e:
        res.notes.append(f"{path}: --fix: {e}; nothing written")
        return res
    summary = ", ".join(f"{c} x{n}" for c, n in sorted(gone.items()))
    res.notes.append(
        f"{path}: fixed {sum(gone.values())} finding(s) ({summary}) with {', '.join(available)}; wrote {out}"
    )
    return FileResult(out, after, written=out, fixed=gone, notes=res.notes)


def available_passes(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The passes among ``names`` this installation has, and the ones it lacks."""
    try:
        from shapeinfer.passes import get_pass
    except ImportError:
        return [], list(names)
    have, missing = [], []
    for n in names:
        try:
            get_pass(n)
            have.append(n)
        except Exception:
            missing.append(n)
    return have, missing


def _work(args: tuple) -> FileResult:
    return lint_path(*args)


def lint_paths(
    paths: Sequence[str],
    config: LintConfig,
    *,
    fix: bool = False,
    in_place: bool = False,
    jobs: int = 1,
    on_done: Callable[[FileResult], None] | None = None,
) -> list[FileResult]:
    """Lint every path (in a process pool of ``jobs`` workers when > 1), results in path order.

    ``on_done`` is called as each file finishes (for a progress bar).
    """
    args = [(p, config, fix, in_place) for p in paths]
    results: dict[int, FileResult] = {}
    if jobs > 1 and len(paths) > 1:
        for i, r in _pool(args, jobs):
            results[i] = r
            if on_done:
                on_done(r)
    else:
        for i, a in enumerate(args):
            results[i] = _work(a)
            if on_done:
                on_done(results[i])
    return [results[i] for i in range(len(paths))]


def _pool(args: list[tuple], jobs: int) -> Iterator[tuple[int, FileResult]]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(jobs, len(args))) as ex:
        futures = {ex.submit(_work, a): i for i, a in enumerate(args)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                yield i, fut.result()
            except Exception as e:  # a worker that died (out of memory, killed)
                yield i, _unreadable(args[i][0], f"the lint worker failed: {type(e).__name__}: {e}")


def default_jobs(n_files: int) -> int:
    """Workers to use for ``n_files`` when ``--jobs`` is not given: one per core, at most one per file."""
    return max(1, min(os.cpu_count() or 1, n_files))
