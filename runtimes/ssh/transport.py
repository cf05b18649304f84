"""``SyncTransport`` over SSH: a tar stream into ``tar -x`` on one exec channel, SFTP as fall-back.

A batch is one tar stream unpacked into a hidden temp directory beside the pages; ``mv``
then renames each file onto its final name (``rename(2)`` on one filesystem), so a reader
there never sees half a page under a real name, and a broken batch removes its temp
directory on exit (or, if the link died, on the next batch). Without ``tar`` on the remote (or ``transfer: sftp``), each file goes by SFTP to
a temp name, is chmodded, then ``posix_rename``d. Listing uses SFTP ``listdir_attr``.

The transport writes into ``target`` — the mount path itself (``readonly: perms``), or the
staging directory that is bind-mounted read-only at the mount path (``readonly: bind``).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tarfile
import threading
from collections.abc import Sequence
from pathlib import Path

from webshelf.mounts.sync import RemoteFile, SyncTransport
from webshelf.errors import RuntimeExecError
from webshelf.runtimes.ssh.connection import SshConnection, chunks

TEMP_PREFIX = ".webshelf-put-"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# $1 target dir, $2 its mode, $3 where to bind it read-only ('' = nowhere).
_PREPARE = r"""
t=$1 m=$2 b=$3
mkdir -p -- "$t" && chmod "$m" "$t" || exit 2
[ -n "$b" ] || exit 0
mkdir -p -- "$b" || exit 2
mountpoint -q "$b" || mount --bind "$t" "$b" || exit 5
mount -o remount,bind,ro "$b" || exit 6
"""
# $1 dir, $2 this batch's temp directory name, $3 the directory's mode afterwards. The batch
# unpacks into a hidden temp directory beside the pages, then `mv` renames every file into
# place (rename(2) within one filesystem: atomic per file). `find -exec … {} +` hands the names
# to as few `mv` processes as ARG_MAX allows: linear in the batch, whatever its size (POSIX find).
_TAR_PUT = r"""
d=$1 t=$2 m=$3
cd -- "$d" || exit 2
chmod u+w . 2>/dev/null
trap 'cd -- "$d" && rm -rf -- "$t"; chmod "$m" . 2>/dev/null' EXIT
mkdir -- "$t" && cd -- "$t" || exit 2
tar -x -m -f - --no-same-owner || exit 4
find . ! -name . -prune -exec sh -c 'mv -f -- "$@" ..' sh {} + || exit 3
"""
# $1 dir, $2 mode afterwards, then the names to delete.
_REMOVE = r"""
d=$1 m=$2; shift 2
cd -- "$d" || exit 2
chmod u+w . 2>/dev/null
rm -f -- "$@"; s=$?
chmod "$m" . 2>/dev/null
exit $s
"""
# Remove batches' temp files left by a killed connection (older than an hour: never a live batch).
_SWEEP = r"""cd -- "$1" 2>/dev/null || exit 0; find . -maxdepth 1 -name '.webshelf-put-*' -mmin +60 -exec rm -rf {} + 2>/dev/null; exit 0"""


class _ChannelWriter:
    """The file-like ``tarfile`` streams into: every write goes straight down the channel."""

    def __init__(self, chan) -> None:
        self.chan = chan

    def write(self, data: bytes) -> int:
        self.chan.sendall(data)
        return len(data)


class SshTransport(SyncTransport):
    """Mirror files into ``target`` on one host (see the module docstring)."""

    def __init__(self, conn: SshConnection, *, target: Path, file_mode: int, dir_mode: int, method: str,
                 batch_files: int, batch_bytes: int, timeout: float, bind_at: Path | None = None) -> None:
        self.conn, self.target, self.bind_at = conn, target, bind_at
        self.file_mode, self.dir_mode = file_mode, dir_mode
        self.method = method  # "tar" or "sftp" (auto is resolved by the runtime)
        self.batch_files, self.batch_bytes, self.timeout = batch_files, batch_bytes, timeout
        self._lock = threading.Lock()  # one batch at a time: the directory's mode is toggled around it
        self._orphans: set[str] = set()  # temp prefixes of batches whose link broke (their files may remain)

    def epoch(self) -> int:
        return self.conn.epoch

    # SyncTransport -----------------------------------------------------------------------
    def ensure_dir(self, path: Path) -> None:
        """Create ``target``; with ``bind_at``, (re)bind it there read-only (idempotent: a reboot
        or a lost mount is repaired at the next full diff)."""
        argv = ["sh", "-c", _PREPARE, "sh", str(self.target), oct(self.dir_mode)[2:], str(self.bind_at or "")]
        code, _, err = self.conn.exec(argv, timeout=self.timeout)
        if code:
            what = {2: f"cannot create {self.target}", 5: f"cannot bind-mount {self.target} at {self.bind_at}",
                    6: f"cannot make the bind mount at {self.bind_at} read-only"}.get(code, f"preparing failed (exit {code})")
            raise RuntimeExecError(f"{self.conn.where}: {what}: "
                                   f"{err.decode(errors='replace').strip()[:300]}", runtime=self.conn.runtime)

    def list_files(self, path: Path) -> dict[str, RemoteFile]:
        sftp = self.conn.sftp()
        try:
            entries = sftp.listdir_attr(str(self.target))
        except OSError as exc:
            if getattr(exc, "errno", None) == errno.ENOENT:
                return {}
            raise RuntimeExecError(f"{self.conn.where}: cannot list {self.target}: {exc}", runtime=self.conn.runtime) from None
        except EOFError:
            raise RuntimeExecError(f"{self.conn.where}: the connection broke while listing", runtime=self.conn.runtime) from None
        return {e.filename: RemoteFile(e.filename, e.st_size or 0, float(e.st_mtime or 0))
                for e in entries if e.st_mode is not None and stat.S_ISREG(e.st_mode)
                and not e.filename.startswith(TEMP_PREFIX)}

    def temp_files(self) -> list[str]:
        """Temp files of batches in ``target`` (a live batch's, or one a dropped link left behind)."""
        try:
            return [n for n in self.conn.sftp().listdir(str(self.target)) if n.startswith(TEMP_PREFIX)]
        except (OSError, EOFError):
            return []

    def sweep(self) -> None:
        self.conn.exec(["sh", "-c", _SWEEP, "sh", str(self.target)], timeout=self.timeout)

    def put_files(self, files: Sequence[Path]) -> None:
        with self._lock:
            self._clear_orphans()
            for batch in self._batches(files):
                (self._put_tar if self.method == "tar" else self._put_sftp)(batch)

    def remove_files(self, paths: Sequence[Path]) -> None:
        names = [Path(p).name for p in paths]
        with self._lock:
            for batch in chunks(names, 500):
                code, _, err = self.conn.exec(["sh", "-c", _REMOVE, "sh", str(self.target), oct(self.dir_mode)[2:],
                                               *batch], timeout=self.timeout)
                if code:
                    raise RuntimeExecError(f"{self.conn.where}: deleting from {self.target} failed "
                                           f"(exit {code}): {err.decode(errors='replace').strip()[:300]}", runtime=self.conn.runtime)

    # batching ---------------------------------------------------------------------------
    def _batches(self, files: Sequence[Path]):
        batch, size = [], 0
        for f in files:
            try:
                n = os.stat(f).st_size
            except FileNotFoundError:
                continue  # evicted since it was queued; the delete pass handles it
            if batch and (len(batch) >= self.batch_files or size + n > self.batch_bytes):
                yield batch
                batch, size = [], 0
            batch.append(Path(f))
            size += n
        if batch:
            yield batch

    # tar over exec ----------------------------------------------------------------------
    def _put_tar(self, batch: Sequence[Path]) -> None:
        prefix = f"{TEMP_PREFIX}{secrets.token_hex(6)}"

        def feed(chan) -> None:
            with tarfile.open(fileobj=_ChannelWriter(chan), mode="w|", format=tarfile.PAX_FORMAT,
                              bufsize=1 << 18) as tar:
                for path in batch:
                    try:
                        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
                    except FileNotFoundError:
                        continue
                    with os.fdopen(fd, "rb") as fh:
                        st = os.fstat(fh.fileno())
                        info = tarfile.TarInfo(path.name)
                        info.size, info.mtime, info.mode = st.st_size, int(st.st_mtime), self.file_mode
                        tar.addfile(info, fh)

        self._orphans.add(prefix)  # until the remote script has run its clean-up
        code, _, err = self.conn.exec(["sh", "-c", _TAR_PUT, "sh", str(self.target), prefix, oct(self.dir_mode)[2:]],
                                      timeout=self.timeout, feed=feed)
        self._orphans.discard(prefix)
        if code:
            self._raise_put(code, err, len(batch))

    def _raise_put(self, code: int, err: bytes, count: int) -> None:
        text = err.decode(errors="replace").strip()
        what = {2: "the directory is missing or not accessible", 3: "renaming into place failed",
                4: "unpacking failed"}.get(code, f"exit {code}")
        hint = ""
        if "No space left" in text or "Wrote only" in text:  # GNU tar reports a short write on a full disk
            hint = " — the remote disk is full (no space left on device); free space there"
        elif "Permission denied" in text or "Read-only file system" in text:
            hint = f" — the sync user {self.conn.user!r} cannot write {self.target}; fix its ownership or use root"
        raise RuntimeExecError(f"{self.conn.where}: copying {count} file(s) to {self.target} "
                               f"failed ({what}): {text[:400]}{hint}", runtime=self.conn.runtime)

    def _clear_orphans(self) -> None:
        """Delete temp files of batches cut off by a dropped link (the remote trap never ran)."""
        if self._orphans:
            script = 'cd -- "$1" || exit 0; shift; rm -rf -- "$@"'
            self.conn.exec(["sh", "-c", script, "sh", str(self.target), *sorted(self._orphans)], timeout=self.timeout)
            self._orphans.clear()

    # SFTP fall-back ---------------------------------------------------------------------
    def _put_sftp(self, batch: Sequence[Path]) -> None:
        sftp = self.conn.sftp()
        target = str(self.target)
        try:
            sftp.chmod(target, self.dir_mode | stat.S_IWUSR)
            for path in batch:
                tmp = f"{target}/{TEMP_PREFIX}{secrets.token_hex(6)}-{path.name}"
                try:
                    fh = open(path, "rb")
                except FileNotFoundError:
                    continue
                try:
                    with fh:
                        sftp.putfo(fh, tmp, confirm=True)
                    sftp.chmod(tmp, self.file_mode)
                    sftp.posix_rename(tmp, f"{target}/{path.name}")
                except BaseException:
                    try:
                        sftp.remove(tmp)
                    except (OSError, EOFError):
                        pass
                    raise
        except OSError as exc:
            raise RuntimeExecError(f"{self.conn.where}: SFTP copy into {target} failed: {exc}"
                                   + (" — the remote disk is full" if getattr(exc, "errno", None) == errno.ENOSPC else ""), runtime=self.conn.runtime) from None
        except EOFError:
            raise RuntimeExecError(f"{self.conn.where}: the connection broke during an SFTP copy", runtime=self.conn.runtime) from None
        finally:
            try:
                sftp.chmod(target, self.dir_mode)
            except (OSError, EOFError):
                pass
