"""Atomic, symlink-safe writes of stored pages into ``cache/web/``.

A reader (an agent in a sandbox, another process) must never see a half-written page under
its final name, and a crash or a full disk must never damage what is already there. So a page
is written to a temp file in the same directory (created exclusively, never through a
symlink), made 0644, fsynced, then renamed over the final name with ``os.replace`` — which
replaces a planted symlink rather than following it — and the directory is fsynced.

Reading is as careful (``open_page``): ``cache/web`` is shared with sandboxes and other
processes, so a name ending in ``.md`` may be a symlink, a FIFO or a device. A page is opened
with ``O_NOFOLLOW | O_NONBLOCK`` (opening a FIFO with no writer would otherwise block for ever)
and must be a regular file *on the opened descriptor* (no swap between a check and the open).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from webshelf.cache import fastbytes, write_threads
from webshelf.cache.layout import TEMP_PREFIX

STALE_TEMP_AGE = 3_600.0  # seconds; a temp file of a live writer this old is abandoned anyway

_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


_OPEN_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class NotAPageError(OSError):
    """The name exists in ``cache/web`` but is not a regular file (a symlink, FIFO, device, directory)."""


def open_page(path: Path | str, *, dir_fd: int | None = None):  # noqa: ANN201 — a binary file object
    """The stored page at ``path`` opened for binary reading, never blocking and never through a
    symlink. Raises ``FileNotFoundError``, ``NotAPageError`` (not a regular file) or another OSError."""
    try:
        fd = os.open(path, _OPEN_READ, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1) or exc.errno == getattr(os, "ENXIO", -1):  # a symlink; a socket
            raise NotAPageError(exc.errno, "not a regular file (a symlink or a special file)", str(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAPageError(0, "not a regular file (a FIFO, device or directory)", str(path))
        os.set_blocking(fd, True)  # a regular file: plain reads from here on
        return open(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _stored_size(dir_fd: int, name: str) -> int | None:
    """The size of the regular file ``name`` in the directory ``dir_fd``, or None when there is
    none (absent, or a symlink, FIFO, directory …) — one ``lstat`` relative to the open
    directory, where a path join, an ``lstat`` and a ``stat`` were three steps per stored page."""
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return found.st_size if stat.S_ISREG(found.st_mode) else None


WRITE_CHUNK_CHARS = 1 << 18  # characters encoded, hashed and written at a time (≤ 1 MB of UTF-8: stays in cache)
# Pages up to this size are written by the calling thread (write_bytes_hashed): measured on the
# 500 WCXB pages (median 11 KB), a writer thread cost ~0.15–0.3 ms more CPU per page than it saved.
INLINE_WRITE_BYTES = 1 << 17


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_text_hashed(directory: Path, text: str, name_for: Callable[[str], str]) -> tuple[Path, bool, str, int, int]:
    """Store ``text`` as UTF-8 under the name ``name_for(sha256 hex)`` atomically, encoding,
    hashing, writing and counting the newlines of it in one pass of ``WRITE_CHUNK_CHARS``
    chunks (no whole-page bytes copy, each chunk hashed and counted while it is still in
    cache); return (path, written, sha256, bytes, newlines) — the index's line count comes
    from the chunks, with no pass over the text of its own.

    Why not hash and write in a worker thread while the next chunk encodes (sha256 and
    ``os.write`` release the GIL): measured on the 2-core machine under the load it shares
    (docs/benchmarks.md, "Speed after the fetch"), the thread bought nothing — the second core
    was busy — and it adds a failure path; encoding (UCS-2 → UTF-8) is the larger half anyway.

    The name depends on the hash, so the temp file gets a neutral name and the final name is
    chosen after the last chunk. When a regular file of that name and size already exists
    (identical content), the temp file is dropped unsynced and ``written`` is False. Raises
    OSError / UnicodeEncodeError with no temp file left behind and the final name untouched.
    """
    def chunks():  # noqa: ANN202 — yields (UTF-8 chunk, its newlines)
        for i in range(0, len(text), WRITE_CHUNK_CHARS):
            chunk = text[i:i + WRITE_CHUNK_CHARS].encode("utf-8")
            yield chunk, chunk.count(b"\n")

    return _write_hashed(directory, chunks(), name_for)


def write_bytes_hashed(directory: Path, data: bytes, name_for: Callable[[str], str],
                       during: Callable[[Path, bool, str, int, int], None] | None = None
                       ) -> tuple[Path, bool, str, int, int]:
    """``write_text_hashed`` for text that is already UTF-8 (``cache.utf8.Utf8Text.data``):
    the same atomic write, hash and newline count, with no encoding at all — and the waits
    overlapped with work: a thread writes the bytes to the temp file, fsyncs it and, once this
    thread has named the page from the hash, renames it into place and fsyncs the directory
    (sha256, ``os.write`` and both fsyncs release the GIL); meanwhile this thread hashes and
    counts the bytes, then calls ``during(final path, written, sha256, bytes, newlines)`` (the
    shelf renders the agent's window there: it needs the name, not the flushed file).

    Why the rename in the thread (issue 15, the 1 MB post-fetch row): the directory fsync that
    makes the rename durable costs as much as the file's own on this disk, and nothing else was
    left to overlap it with. The order that matters is kept — the file is complete and fsynced
    before its name exists, so no reader ever sees a partial page under a final name; the name
    may appear while ``during`` runs (before the index row, as it always did). A failure
    anywhere leaves no temp file and the final name untouched (a failed directory fsync after
    the rename is reported; the complete page stays).

    Identical content already stored (a regular file of that name and size): the thread is
    told to skip its fsync and the rename, the temp file is dropped and ``written`` is False.

    A page of at most ``INLINE_WRITE_BYTES`` is written in this thread instead, the same steps
    in the same order (``_write_hashed``), and ``during`` runs after it: handing a small page to
    a writer thread cost more CPU than its overlap saves (issue 15, CPU per page).
    """
    if len(data) <= INLINE_WRITE_BYTES:
        return _write_inline(directory, data, name_for, during)
    dir_fd = os.open(directory, _OPEN_DIR)
    tmp = f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}-page.md"
    renamed = False
    try:
        fd = os.open(tmp, _CREATE, 0o644, dir_fd=dir_fd)
        try:
            os.fchmod(fd, 0o644)
            writer = _Writer(fd, data, tmp, dir_fd)
            try:
                sha = hashlib.sha256(data).hexdigest()
                size, newlines = len(data), fastbytes.view(data).count(b"\n")
                name = name_for(sha)
                if "/" in name or name.startswith("."):
                    raise ValueError(f"invalid page name {name!r}")
                final = directory / name
                written = _stored_size(dir_fd, name) != size
                writer.decide(name if written else None)
                if during is not None:
                    during(final, written, sha, size, newlines)
            finally:
                writer.decide(None)  # an error before the decision: no rename (a no-op once decided)
                writer.join()
                renamed = writer.renamed
        finally:
            os.close(fd)
        return final, written, sha, size, newlines  # not written: the finally below removes the temp file
    finally:
        _clean_up(tmp, dir_fd, renamed)


def _write_inline(directory: Path, data: bytes, name_for: Callable[[str], str],
                  during: Callable[[Path, bool, str, int, int], None] | None) -> tuple[Path, bool, str, int, int]:
    """``write_bytes_hashed`` without the writer thread: write, fsync, rename, fsync the directory, then ``during``."""
    stored = _write_hashed(directory, [(data, fastbytes.view(data).count(b"\n"))], name_for)
    if during is not None:
        during(*stored)
    return stored


class _Writer:
    """Writes ``data`` to ``fd`` and fsyncs it (unless already told there is no name); then, as
    decided (``decide``), renames ``tmp`` to the page's name and fsyncs the directory
    (``_publish``) — or, for no name, stops. Runs in one of this process's writer threads
    (cache/write_threads.py: no thread started per page). ``join`` re-raises its error;
    ``renamed`` says whether the temp name is gone."""

    def __init__(self, fd: int, data: bytes, tmp: str, dir_fd: int) -> None:
        self.fd, self.data, self.tmp, self.dir_fd = fd, data, tmp, dir_fd
        self._decided = threading.Event()
        self._name: str | None = None
        self.renamed = False
        self._done = write_threads.submit(self.run)

    def decide(self, name: str | None) -> None:
        """Publish under ``name`` once flushed, or (None) keep nothing; only the first call counts."""
        if not self._decided.is_set():
            self._name = name
            self._decided.set()

    def run(self) -> None:
        _write_all(self.fd, self.data)
        if self._decided.is_set() and self._name is None:
            return  # identical content is stored already (or an error): nothing to flush
        os.fsync(self.fd)  # at once: the name is usually decided while this waits for the disk
        self._decided.wait()
        if self._name is not None:
            self.renamed = _publish(self.tmp, self._name, self.dir_fd)

    def join(self) -> None:
        """Wait for the write (decide first: the task waits for the decision); raise its error."""
        self._done.result()


def _write_hashed(directory: Path, chunks: Iterable[tuple[bytes | memoryview, int]],
                  name_for: Callable[[str], str]) -> tuple[Path, bool, str, int, int]:
    """The atomic write behind both: temp file, chunks hashed and written, name from the hash."""
    dir_fd = os.open(directory, _OPEN_DIR)
    tmp = f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}-page.md"
    digest, size, newlines, keep = hashlib.sha256(), 0, 0, False
    try:
        fd = os.open(tmp, _CREATE, 0o644, dir_fd=dir_fd)
        try:
            os.fchmod(fd, 0o644)
            for chunk, count in chunks:
                digest.update(chunk)
                _write_all(fd, chunk)
                size += len(chunk)
                newlines += count
            sha = digest.hexdigest()
            name = name_for(sha)
            if "/" in name or name.startswith("."):
                raise ValueError(f"invalid page name {name!r}")
            final = directory / name
            if _stored_size(dir_fd, name) == size:
                return final, False, sha, size, newlines  # the finally below removes the temp file
            os.fsync(fd)
        finally:
            os.close(fd)
        keep = _publish(tmp, name, dir_fd)
        return final, True, sha, size, newlines
    finally:
        _clean_up(tmp, dir_fd, keep)


def _publish(tmp: str, name: str, dir_fd: int) -> bool:
    """Rename the complete, flushed temp file into place and make the rename durable; True
    (the temp name is gone: nothing to remove)."""
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)
    return True


def _clean_up(tmp: str, dir_fd: int, kept: bool) -> None:
    """Remove the temp file unless it was renamed into place; close the directory."""
    if not kept:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
    os.close(dir_fd)


def _writer_pid(name: str) -> int | None:
    """The pid in a temp name ``.tmp-<pid>-<random>-<page>``, or None for a foreign name."""
    pid, _, _rest = name[len(TEMP_PREFIX):].partition("-")
    return int(pid) if pid.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_temp_files(directory: Path, *, max_age: float = STALE_TEMP_AGE, now: float | None = None) -> list[Path]:
    """Temp files left by writers that died (their pid is gone) or that are older than ``max_age``.

    A killed writer leaves its temp file behind but never a partial file under a final name;
    this finds those leftovers so eviction passes and ``cache verify --repair`` can remove them."""
    import time

    now = time.time() if now is None else now
    found: list[Path] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.startswith(TEMP_PREFIX):
                continue
            try:
                age = now - entry.stat(follow_symlinks=False).st_mtime
            except FileNotFoundError:
                continue  # its writer just renamed it into place
            pid = _writer_pid(entry.name)
            if age > max_age or (pid is not None and pid != os.getpid() and not _alive(pid)):
                found.append(Path(entry.path))
    return found


def remove_files(directory: Path, names: list[str]) -> tuple[list[Path], list[tuple[Path, OSError]]]:
    """Unlink entries of ``directory`` by name (a symlink itself, never its target).

    Returns (removed, failed); an entry already gone counts as removed."""
    removed: list[Path] = []
    failed: list[tuple[Path, OSError]] = []
    dir_fd = os.open(directory, _OPEN_DIR)
    try:
        for name in names:
            try:
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                failed.append((directory / name, exc))
                continue
            removed.append(directory / name)
    finally:
        os.close(dir_fd)
    return removed, failed
