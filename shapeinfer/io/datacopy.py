"""Copying a model's external data files beside a model written into another folder.

A write into another folder needs the data files there too: :func:`plan_copy` (each file under
its own name) or :func:`plan_relocation` (gathered into one file, ``--external-data NAME``)
say which, :func:`stage_copies` copies them to temporary names beside their targets with the
kernel (``copy_file_range``, else ``sendfile``), keeping holes sparse, and
:meth:`StagedData.commit` puts them in place with the model (:mod:`shapeinfer.io.writer`).
Every entry is checked by :mod:`shapeinfer.io.external`, the one reader, before anything is
copied; big weights are never read into memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import onnx
from onnx import TensorProto

from shapeinfer.io.external import (
    ExternalDataError,
    ExternalDataInvalid,
    ExternalDataMissing,
    external_tensors,
    open_regular,
    parse_entry,
    resolve,
    safe_location,
)
from shapeinfer.io.userfiles import UserFileError, WriteRefused, new_file_mode, show, sync_file, sync_folder


@dataclass(frozen=True)
class DataCopy:
    """One data file a write creates: ``target`` (an absolute path in the output's folder,
    symlinks resolved; ``location`` as the model names it) made of ``sources``, each
    ``(path, at)``: the whole file at ``path`` copied to offset ``at``, the file ``size`` bytes
    long. ``replace``: the target may exist and is replaced (the user named it); otherwise it
    must not exist."""

    target: str
    location: str
    sources: tuple[tuple[str, int], ...]
    size: int
    replace: bool = False

    def already_at(self, path: str) -> bool:
        """Whether the regular file at ``path`` (not a symlink) already holds exactly what this
        copy would write: one source, byte for byte (a model written before into the same folder
        from the same data). Reads both files until they differ."""
        if len(self.sources) != 1 or self.sources[0][1] != 0:
            return False
        try:
            st = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size != self.size:
            return False
        try:
            a, b = open_regular(self.sources[0][0]), os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except (OSError, ExternalDataError):
            return False
        try:
            chunk = 1 << 20
            return all(os.pread(a, chunk, at) == os.pread(b, chunk, at) for at in range(0, self.size, chunk))
        finally:
            os.close(a)
            os.close(b)

    def existing(self, out_dir: str) -> str | None:
        """The path of the file already at ``location`` in ``out_dir`` (a symlink counts, even a
        dangling one), or None when the name is free."""
        lexical = os.path.join(out_dir, self.location)
        for p in (lexical, self.target):
            if os.path.lexists(p):
                return p
        return None


def _data_target(name: str, out_dir: str, unsafe: str, folder: str) -> str:
    """The path of a data file ``name`` in ``out_dir`` (:func:`~shapeinfer.io.external.safe_location`);
    ExternalDataError for an unsafe name (after ``unsafe``: ...) or a folder there (after
    ``folder``: ...)."""
    try:
        target = safe_location(name, out_dir)
    except ExternalDataError as e:
        raise ExternalDataError(f"{unsafe}: {e}") from None
    if os.path.isdir(target):
        raise ExternalDataError(f"{folder}: {show(target)} is a folder")
    return target


def plan_copy(
    model: onnx.ModelProto,
    src_dir: str | None,
    out_dir: str,
    tensors: list[TensorProto] | None = None,
    *,
    skip_missing: bool = False,
) -> list[DataCopy]:
    """The data files a model written to ``out_dir`` needs, each copied under its own name.

    The references are kept as the model spells them: locations naming one file in
    ``out_dir`` (``b.data`` and ``./b.data``) make one copy, under the first spelling met.

    Every external entry is checked first: any problem raises ExternalDataError with one
    line (``-o`` into another folder refuses to copy what it cannot vouch for); with
    ``skip_missing`` an entry whose file is missing is left as it is (the write was asked to
    point at it anyway). Empty when the model has no external data or ``out_dir`` is its own
    folder. ``tensors``: the model's :func:`external_tensors`, when the caller has them and
    knows they are still current. Whether a target exists already is the caller's question.
    """
    if tensors is None:
        tensors = external_tensors(model)
    if not tensors:
        return []
    if src_dir is None:
        raise ExternalDataError(
            "the model has external data but no folder (read from stdin or memory): give its path instead"
        )
    if os.path.realpath(src_dir) == os.path.realpath(out_dir):
        return []
    plan: dict[str, DataCopy] = {}  # by target: two spellings of one file (b.data, ./b.data) copy it once
    for t in tensors:
        try:
            ref = resolve(t, src_dir)
        except ExternalDataError as e:
            if skip_missing and isinstance(e, ExternalDataMissing):
                continue
            raise ExternalDataError(f"cannot copy external data: {e}") from None
        loc = ref.location
        target = _data_target(
            loc, out_dir, f"cannot copy external data into {show(out_dir)}", "cannot copy external data"
        )
        there = plan.get(target)
        if there is None:
            plan[target] = DataCopy(target, loc, ((ref.path, 0),), ref.file_size)
        elif there.sources[0][0] != ref.path:
            raise ExternalDataError(
                f"cannot copy external data: {show(repr(there.location))} and {show(repr(loc))} are two files"
                f" that would both be copied to {show(target)}"
            )
    return list(plan.values())


#: Where each file starts in a data file gathered from several (:func:`plan_relocation`): a
#: multiple of this, so every alignment the files had (pages, allocation granularity) is kept.
RELOCATION_ALIGN = 1 << 16


@dataclass(frozen=True)
class Relocation:
    """All of a model's external data gathered in one file, ``name`` (``--external-data``):
    ``places`` maps each location the model's entries name to where that file starts in the new
    one and its size."""

    name: str
    places: dict[str, tuple[int, int]]

    def apply(self, t: TensorProto) -> None:
        """Rewrite ``t``'s entry (checked by :func:`plan_relocation`) to point into the new file:
        ``location`` is :attr:`name`, ``offset`` shifted, ``length`` given explicitly ("to the
        end of the file" no longer is); the other keys stay, in place."""
        loc, offset, length = parse_entry(t)
        at, size = self.places[loc]
        new = {
            "location": self.name,
            "offset": str(at + offset),
            "length": str(size - offset if length is None else length),
        }
        pairs = [(e.key, new.pop(e.key, e.value)) for e in t.external_data]
        if new.get("offset") == "0":
            del new["offset"]
        pairs += new.items()
        del t.external_data[:]
        for k, v in pairs:
            e = t.external_data.add()
            e.key, e.value = k, v


def plan_relocation(
    tensors: list[TensorProto], src_dir: str | None, out_dir: str, name: str
) -> tuple[DataCopy, Relocation]:
    """The copy that gathers the external data of ``tensors`` (a model's) into one file named
    ``name`` in ``out_dir``: each data file they name, whole, at an offset that is a multiple of
    :data:`RELOCATION_ALIGN` (every alignment the files had is kept); the target is replaced if
    it exists. Every entry is checked first: ExternalDataError for one that cannot be copied (a
    missing file too), or for a ``name`` that is not a plain file name."""
    if src_dir is None:
        raise ExternalDataError(
            "the model has external data but no folder (read from stdin or memory): give its path instead"
        )
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ExternalDataError(f"--external-data {show(repr(name))}: give a file name, without a folder")
    flag = f"--external-data {show(repr(name))}"
    target = _data_target(name, out_dir, flag, flag)
    starts: dict[str, int] = {}  # source path -> where it starts in the target
    places: dict[str, tuple[int, int]] = {}
    sources: list[tuple[str, int]] = []
    end = 0
    for t in tensors:
        try:
            ref = resolve(t, src_dir)
        except ExternalDataError as e:
            raise ExternalDataError(f"cannot copy external data: {e}") from None
        at = starts.get(ref.path)
        if at is None:
            at = starts[ref.path] = -(-end // RELOCATION_ALIGN) * RELOCATION_ALIGN
            sources.append((ref.path, at))
            end = at + ref.file_size
        places[ref.location] = (at, ref.file_size)
    return DataCopy(target, name, tuple(sources), end, replace=True), Relocation(name, places)


class StagedData:
    """Data files copied to temporary files beside their targets, not yet in place.

    :meth:`commit` puts them in place: a target that may be replaced is renamed over, its old
    file first given a second, hidden name beside it (a hard link; where the file system has
    none, the old file is renamed to it); any other is linked to its name only if that name is
    still free (``link`` fails when it exists: a file that appeared since the check is never
    replaced), then the temporary name goes. Then exactly one of: :meth:`keep`, once the model
    that reads the new files is in place (the old files' hidden names go), or :meth:`discard`,
    which undoes everything this object did, whenever it is called, an interrupted
    :meth:`commit` included: temporary files and targets it created removed, every replaced
    target back to its old file, folders it made removed.

    Every staged file is on the disk (``fsync``) before :meth:`commit` names it, and commit
    syncs the targets' folders, so the data a model's rename publishes is there after a crash
    of the machine too."""

    def __init__(self) -> None:
        self.files: list[tuple[str, DataCopy]] = []  # (temporary path, copy)
        self.created: list[str] = []  # targets created by commit (not replaced ones)
        self.kept: list[tuple[str, str]] = []  # (replaced target, the hidden name of its old file)
        self.dirs: list[str] = []  # folders made for targets, parents first

    def adopt(self, tmp: str, c: DataCopy) -> None:
        """Stage ``tmp``, a complete file on the file system of ``c.target`` that this object
        may remove, as the copy ``c``; the target's folder is made when missing."""
        _make_folders(os.path.dirname(c.target), self.dirs, c.target)
        self.files.append((tmp, c))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            sync_file(fd)
        finally:
            os.close(fd)

    def commit(self) -> None:
        folders = {os.path.dirname(c.target) for _, c in self.files}
        for tmp, c in self.files:
            if c.replace:
                if not _keep_old(c.target, self.kept):
                    self.created.append(c.target)
                os.replace(tmp, c.target)
                continue
            _link_new(tmp, c.target)
            self.created.append(c.target)
        self.files = []
        for folder in sorted(folders):  # the new names on the disk before the model's
            sync_folder(folder)

    def keep(self) -> None:
        for _, old in self.kept:
            with contextlib.suppress(OSError):
                os.unlink(old)
        self.files, self.created, self.kept, self.dirs = [], [], [], []

    def discard(self) -> None:
        for path in [tmp for tmp, _ in self.files] + self.created:
            with contextlib.suppress(OSError):
                os.unlink(path)
        for target, old in reversed(self.kept):
            try:
                os.replace(old, target)
            except OSError:
                continue  # never removed: the old bytes stay under the hidden name
            if os.path.lexists(old):  # the two names were still one file: rename did nothing
                with contextlib.suppress(OSError):
                    os.unlink(old)
        for d in reversed(self.dirs):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        self.files, self.created, self.kept, self.dirs = [], [], [], []


def _keep_old(target: str, kept: list[tuple[str, str]]) -> bool:
    """Give the file at ``target`` a second, hidden name in its folder (a hard link; where the
    file system has none, ``target`` is renamed to it), appended to ``kept`` as ``(target,
    name)`` before it is made; False (nothing appended) when ``target`` does not exist."""
    folder = os.path.dirname(target)
    while True:
        name = os.path.join(folder, f".shapeinfer-{secrets.token_hex(6)}.data.old")
        kept.append((target, name))
        try:
            os.link(target, name, follow_symlinks=False)
            return True
        except FileExistsError:  # the name is taken: another
            kept.pop()
        except FileNotFoundError:
            kept.pop()
            return False
        except OSError:  # no hard links here
            if os.path.lexists(name):
                kept.pop()
                continue
            try:
                os.rename(target, name)
            except FileNotFoundError:
                kept.pop()
                return False
            return True


def _link_new(tmp: str, target: str) -> None:
    """Give ``tmp`` the name ``target``, which must not exist; ``tmp``'s name goes."""

    try:
        os.link(tmp, target)
    except FileExistsError:
        raise WriteRefused(target, f"{show(target)} appeared while the model was written") from None
    except OSError:  # no hard links on this file system: check, then rename
        if os.path.lexists(target):
            raise WriteRefused(target, f"{show(target)} appeared while the model was written") from None
        os.rename(tmp, target)
        return
    os.unlink(tmp)


def stage_copies(plan: list[DataCopy]) -> StagedData:
    """Copy each planned file to a temporary file in its target's folder (made when missing).

    Kernel copy, holes kept sparse. A target that exists keeps its permission bits; a new one
    gets the umask's default limited to what its sources allow (as ``cp`` does: a copy of a
    0600 data file is 0600). On any failure everything staged so far is removed and the error
    raised (what the file system refuses, a full disk or a file-size limit too, as one
    :class:`~shapeinfer.io.userfiles.UserFileError` line naming the data file); no target is
    touched either way until :meth:`StagedData.commit`."""
    staged = StagedData()
    try:
        for c in plan:
            try:
                _stage(c, staged)
            except OSError as e:
                why = e.strerror or e
                raise UserFileError(f"{show(c.target)}: cannot write the external data file: {why}") from None
    except BaseException:
        staged.discard()
        raise
    return staged


def _stage(c: DataCopy, staged: StagedData) -> None:
    folder = os.path.dirname(c.target)
    _make_folders(folder, staged.dirs, c.target)
    fd, tmp = tempfile.mkstemp(prefix=".shapeinfer-", suffix=".data.tmp", dir=folder)
    staged.files.append((tmp, c))
    try:
        readable_by = 0o777  # a new copy is as private as its most private source (as cp)
        for source, at in c.sources:
            src = open_regular(source)
            try:
                readable_by &= os.fstat(src).st_mode
                sparse_copy(src, fd, at)
            finally:
                os.close(src)
        if os.fstat(fd).st_size < c.size:
            os.ftruncate(fd, c.size)
        mode = new_file_mode(c.target)
        os.fchmod(fd, mode if os.path.lexists(c.target) else mode & readable_by)
        sync_file(fd)
    finally:
        os.close(fd)


def _make_folders(folder: str, made: list[str], target: str) -> None:
    """Make ``folder`` and its missing parents, appending each one made to ``made``;
    UserFileError naming ``target`` when a file that is not a folder is in the way."""
    missing = []
    while not os.path.isdir(folder):
        if os.path.lexists(folder):
            raise UserFileError(f"{show(target)}: cannot write the external data file: {show(folder)} is not a folder")
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for d in reversed(missing):
        os.mkdir(d)
        made.append(d)


def sparse_copy(src: int, dst: int, at: int = 0) -> None:
    """Copy the regular file open at descriptor ``src`` into ``dst`` from offset ``at``,
    keeping holes (``dst`` holds nothing there yet).

    Data ranges (``SEEK_DATA``/``SEEK_HOLE``) are copied in the kernel with
    ``os.copy_file_range``, else ``os.sendfile``, else read/write in 8 MiB blocks; ``dst`` is
    extended with ``ftruncate`` to the end of the copy so trailing holes stay holes.
    """
    size = os.fstat(src).st_size
    if hasattr(os, "posix_fadvise"):
        with contextlib.suppress(OSError):
            os.posix_fadvise(src, 0, 0, os.POSIX_FADV_SEQUENTIAL)
    for start, end in _data_ranges(src, size):
        _copy_range(src, dst, start, end - start, at)
    if os.fstat(dst).st_size < at + size:
        os.ftruncate(dst, at + size)


def _data_ranges(fd: int, size: int) -> Iterator[tuple[int, int]]:
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        if size:
            yield 0, size
        return
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, seek_data)
        except OSError as e:
            if e.errno == errno.ENXIO:  # only holes after pos
                return
            yield pos, size  # no hole support on this file system
            return
        if start >= size:
            return
        end = min(os.lseek(fd, start, seek_hole), size)
        yield start, end
        pos = end


def _copy_file_range(src: int, dst: int, pos: int, count: int, at: int | None = None) -> int:
    return os.copy_file_range(src, dst, count, pos, pos if at is None else at)


def _sendfile(src: int, dst: int, pos: int, count: int, at: int | None = None) -> int:
    os.lseek(dst, pos if at is None else at, os.SEEK_SET)
    return os.sendfile(dst, src, pos, count)


#: The kernel copies :func:`_copy_range` tries, best first, where the OS has them:
#: ``copy(src, dst, position, count[, at])`` (copies to ``at`` in ``dst``, the same position
#: when not given; returns the bytes copied, 0 at the end of ``src``) and the errnos after
#: which the next one is tried.
_KERNEL_COPIES: list[tuple[Callable[..., int], tuple[int, ...]]] = []
if hasattr(os, "copy_file_range"):
    _KERNEL_COPIES.append((_copy_file_range, (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL, errno.EPERM)))
if hasattr(os, "sendfile"):
    _KERNEL_COPIES.append((_sendfile, (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)))


def _kernel_copy(
    copy: Callable[..., int], fallback: tuple[int, ...], src: int, dst: int, pos: int, end: int, shift: int = 0
) -> int:
    """Copy ``src`` from ``pos`` to ``dst`` at ``pos + shift`` with ``copy`` in chunks of at
    most 1 GiB, until ``end``, the end of ``src`` or an OSError whose errno is in ``fallback``
    (any other is raised); the position reached in ``src``."""
    try:
        while pos < end:
            count = min(end - pos, 1 << 30)
            n = copy(src, dst, pos, count, pos + shift) if shift else copy(src, dst, pos, count)
            if n == 0:
                break
            pos += n
    except OSError as e:
        if e.errno not in fallback:
            raise
    return pos


def _copy_range(src: int, dst: int, offset: int, count: int, at: int = 0) -> None:
    """Copy ``count`` bytes at ``offset`` of ``src`` to ``offset + at`` of ``dst``: with the
    kernel copies of :data:`_KERNEL_COPIES` in turn, the rest with pread/pwrite in 8 MiB blocks;
    ExternalDataInvalid when ``src`` ends first."""
    end = offset + count
    pos = offset
    for copy, fallback in _KERNEL_COPIES:
        pos = _kernel_copy(copy, fallback, src, dst, pos, end, at)
        if pos >= end:
            return
    while pos < end:
        buf = os.pread(src, min(end - pos, 8 << 20), pos)
        if not buf:
            raise ExternalDataInvalid("a data file shrank while it was copied")
        os.pwrite(dst, buf, pos + at)
        pos += len(buf)
    if pos < end:
        raise ExternalDataInvalid("a data file shrank while it was copied")
