"""Writing models: atomically, with weights left where they are.

The model is serialised to a temporary file in the target folder and renamed over the target,
so an interrupted run leaves any old file intact. Tensors stored as external data keep their
references; when the target folder differs from the source's, the referenced data files are
copied alongside in a streaming copy.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile

import onnx

from shapeinfer.external import external_locations, safe_location


def save_model(model: onnx.ModelProto, out: str, src: str | None = None) -> None:
    """Write ``model`` to ``out`` atomically; copy external data files if the folder changes."""
    out_dir = os.path.dirname(os.path.abspath(out)) or "."
    locs = external_locations(model)
    if locs and src is not None:
        src_dir = os.path.dirname(os.path.abspath(src))
        if os.path.realpath(src_dir) != os.path.realpath(out_dir):
            for loc in locs:
                source = safe_location(loc, src_dir)
                target = os.path.join(out_dir, loc)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                _atomic_copy(source, target)
    data = model.SerializeToString()
    fd, tmp = tempfile.mkstemp(prefix=".shapeinfer-", suffix=".onnx.tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _mode_for(out))
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _mode_for(path: str) -> int:
    """The permission bits a written file gets: the old file's, or the umask's default."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _atomic_copy(source: str, target: str) -> None:
    """Copy ``source`` to ``target`` through a temporary file, streaming and keeping holes sparse."""
    fd, tmp = tempfile.mkstemp(prefix=".shapeinfer-", suffix=".data.tmp", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as dst, open(source, "rb") as src:
            _sparse_copy(src, dst)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _sparse_copy(src, dst, chunk: int = 16 * 1024 * 1024) -> None:
    size = os.fstat(src.fileno()).st_size
    try:
        pos = os.lseek(src.fileno(), 0, os.SEEK_DATA)
    except OSError as e:
        if e.errno == errno.ENXIO:  # nothing but holes
            dst.truncate(size)
            return
        pos = None
    except AttributeError:
        pos = None
    if pos is None:  # no hole support: a plain streaming copy
        src.seek(0)
        shutil.copyfileobj(src, dst, chunk)
        return
    while pos < size:
        end = os.lseek(src.fileno(), pos, os.SEEK_HOLE)
        src.seek(pos)
        dst.seek(pos)
        left = end - pos
        while left > 0:
            buf = src.read(min(chunk, left))
            if not buf:
                break
            dst.write(buf)
            left -= len(buf)
        try:
            pos = os.lseek(src.fileno(), end, os.SEEK_DATA)
        except OSError:  # no data after the last hole
            break
    dst.truncate(size)
