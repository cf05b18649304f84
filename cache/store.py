"""Atomic, symlink-safe writes of stored pages into ``cache/web/``.

A reader (an agent in a sandbox, another process) must never see a half-written page under
its final name, and a crash or a full disk must never damage what is already there. So a page
is written to a temp file in the same directory (created exclusively, never through a
symlink), made 0644, fsynced, then renamed over the final name with ``os.replace`` — which
replaces a planted symlink rather than following it — and the directory is fsynced.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from cache.layout import TEMP_PREFIX

_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def is_regular_file(directory: Path, name: str) -> bool:
    """True when ``name`` exists in ``directory`` as a regular file (a symlink is not)."""
    try:
        return stat.S_ISREG(os.lstat(directory / name).st_mode)
    except FileNotFoundError:
        return False


def write_page(directory: Path, name: str, data: bytes) -> tuple[Path, bool]:
    """Store ``data`` as ``directory/name`` atomically; return (path, written).

    Names carry the content hash, so an existing regular file with the name already holds
    these bytes and is reused (``written`` is False). Raises OSError (ENOSPC, EACCES, …) with
    no temp file left behind and the final name untouched.
    """
    if "/" in name or name.startswith("."):
        raise ValueError(f"invalid page name {name!r}")
    final = directory / name
    if is_regular_file(directory, name) and os.path.getsize(final) == len(data):
        return final, False
    dir_fd = os.open(directory, _OPEN_DIR)
    tmp = f"{TEMP_PREFIX}{secrets.token_hex(8)}-{name}"
    try:
        fd = os.open(tmp, _CREATE, 0o644, dir_fd=dir_fd)
        try:
            os.fchmod(fd, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
        return final, True
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(dir_fd)
