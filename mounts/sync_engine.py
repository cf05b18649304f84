"""The sync engine: keep one remote copy of ``cache/web`` equal to the host's, through a
``SyncTransport``.

Two ways in. ``push``/``remove`` send exactly the paths they are given — that is publish and
retract, the hot path (one batch, no listing). ``reconcile`` is the full diff: list both
sides, send what the remote lacks or holds at another size, delete what the host no longer
has — run at start, periodically, and after every reconnect, so anything a dropped link or a
lost inotify event missed is recovered. Pages are content-addressed (the name carries the
content hash), so name + size identifies a page; mtimes are not compared (remote copies are
stamped when they land).

Dot files are never mirrored by ``reconcile`` and never deleted by it: they are temp files
(the cache's ``.tmp-*``, a batch's ``.webshelf-put-*``) or ``verify()``'s sentinel, which is
published and retracted explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from webshelf.mounts.sync import RemoteFile, SyncTransport


def mirrored(name: str) -> bool:
    """Whether a file of this name belongs in the mirror (see the module docstring)."""
    return not name.startswith(".")


@dataclass
class SyncReport:
    """What one reconcile did."""

    sent: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0

    def __str__(self) -> str:
        return f"sent {len(self.sent)}, deleted {len(self.deleted)}, unchanged {self.unchanged}"


def local_files(directory: Path) -> dict[str, int]:
    """Regular mirrored files directly in ``directory``, name → size (symlinks are never followed)."""
    out: dict[str, int] = {}
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return out
    for entry in entries:
        if not mirrored(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                out[entry.name] = entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            continue
    return out


def diff(local: dict[str, int], remote: dict[str, RemoteFile]) -> tuple[list[str], list[str]]:
    """(names to send, names to delete), each sorted."""
    send = sorted(n for n, size in local.items() if n not in remote or remote[n].size != size)
    delete = sorted(n for n in remote if n not in local and mirrored(n))
    return send, delete


class SyncEngine:
    """Mirror ``directory`` (host path = remote path) through ``transport``."""

    def __init__(self, transport: SyncTransport, directory: Path) -> None:
        self.transport = transport
        self.directory = Path(directory)
        self._prepared = False

    def prepare(self) -> None:
        """Make sure the remote directory exists and is read-only for the agent (idempotent)."""
        self.transport.ensure_dir(self.directory)
        self._prepared = True

    def push(self, paths: Sequence[str | Path]) -> None:
        """Send exactly these host files (publish); returns when all are in place remotely."""
        if not self._prepared:
            self.prepare()
        files = [Path(p) for p in paths]
        if files:
            self.transport.put_files(files)

    def remove(self, paths: Sequence[str | Path]) -> None:
        """Delete exactly these files remotely (retract, eviction)."""
        if paths:
            self.transport.remove_files([Path(p) for p in paths])

    def reconcile(self) -> SyncReport:
        """Full diff of host and remote; send and delete until they match."""
        self.prepare()
        remote = self.transport.list_files(self.directory)
        local = local_files(self.directory)
        send, delete = diff(local, remote)
        if send:
            self.transport.put_files([self.directory / n for n in send])
        if delete:
            self.transport.remove_files([self.directory / n for n in delete])
        sweep = getattr(self.transport, "sweep", None)
        if sweep is not None:
            sweep()
        return SyncReport(sent=send, deleted=delete, unchanged=len(local) - len(send))

    def epoch(self) -> int:
        """Changes when the transport reconnected (then a ``reconcile`` is due)."""
        return self.transport.epoch()
