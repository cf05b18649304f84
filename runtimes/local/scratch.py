"""The local runtime's private ``/tmp``: a scratch directory that names its owner.

Each local runtime gets ``<tmp>/webshelf-bwrap-tmp-<pid>-<start>-<boot>-<random>``. The owner
is in the *name*, not in a marker file: the directory is the sandbox's writable ``/tmp``, so
anything inside it is the agent's to change, while its name is not. ``stop()`` (also reached
from SIGTERM/SIGHUP in the CLI) removes it; a directory whose owner died without cleaning up
(SIGKILL, OOM) is an orphan, removed by the next local start and by ``webshelf runtime prune``.
Directories of an older layout (no owner in the name) are left alone: nobody can tell whose
they are.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from pathlib import Path

from webshelf.runtimes.owner import Orphan, Owner, current

PREFIX = "webshelf-bwrap-tmp-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-(\d+)-([0-9a-f]*)-.+")


def make_scratch() -> str:
    """A fresh scratch directory owned by this process, world-writable and sticky like /tmp."""
    me = current()
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{me.pid}-{me.start or 0}-{me.boot}-")
    os.chmod(path, 0o1777)
    return path


def owner_of(name: str) -> Owner | None:
    """The owner encoded in a scratch directory's name (None for other names)."""
    m = _NAME.fullmatch(name)
    if not m:
        return None
    return Owner(int(m.group(1)), m.group(2), m.group(3), socket.gethostname())


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` even where the sandbox took permissions away (``chmod 000`` on a subdir)."""
    def fix(func, failed, _exc) -> None:
        try:
            parent = os.path.dirname(failed)
            os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
            func(failed)
        except OSError:
            pass  # not ours to remove (another user's files): leave it

    if os.path.lexists(path):
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=fix)
        else:
            shutil.rmtree(path, onerror=fix)


def orphan_dirs(tmpdir: str | None = None) -> list[Orphan]:
    """Scratch directories in the temp directory whose owning process is gone."""
    base = Path(tmpdir or tempfile.gettempdir())
    found = []
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    for entry in entries:
        owner = owner_of(entry.name)
        if owner is None or owner.alive() or entry.is_symlink() or not entry.is_dir():
            continue
        found.append(Orphan("local temp dir", str(entry), owner, "", lambda e=entry: remove_tree(e)))
    return found
