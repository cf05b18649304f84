"""The transfer seam for sandboxes that cannot bind-mount the host (ssh, modal).

Only an interface here; ``mounts.sync_engine`` drives it and ``runtimes.ssh_transport`` implements
it for SSH. The bind-mount runtimes (local, docker) need none: their
publish is a check, not a copy. The SSH and Modal adapters implement ``SyncTransport``;
the sync engine in ``mounts`` (diff, batch transfer, delete propagation, watcher) drives it
and is the only caller. Keeping the seam this small means a new remote kind needs four
primitives, and the hard parts — what to send, ordering, atomicity across a batch — are
written and tested once in the engine.

Rules every implementation keeps:

* Paths are absolute and identical on both sides (``MountSpec``): no translation.
* A file appears under its final name only when complete (write a temp name in the same
  remote directory, then rename), so a reader inside never sees half a page.
* The remote directory ends up read-only for the sandbox's agent user (0755 directory owned
  by another user, or a read-only mount); ``verify()`` checks this from inside.
* Errors are raised as ``webshelf.errors.RuntimeAdapterError`` subclasses naming the runtime.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RemoteFile:
    """What the remote side reports about one file, enough to diff against the host."""

    name: str
    size: int
    mtime: float


class SyncTransport(ABC):
    """Four primitives a sync runtime offers the sync engine (see the module docstring)."""

    @abstractmethod
    def ensure_dir(self, path: Path) -> None:
        """Create ``path`` (and parents) remotely if missing, read-only for the agent user."""

    @abstractmethod
    def list_files(self, path: Path) -> dict[str, RemoteFile]:
        """Regular files directly inside ``path`` remotely, by name (temp files excluded)."""

    @abstractmethod
    def put_files(self, files: Sequence[Path]) -> None:
        """Copy host files to the same paths remotely, in one batch where the kind allows,
        each made visible by an atomic rename; return only when all are readable there."""

    @abstractmethod
    def remove_files(self, paths: Sequence[Path]) -> None:
        """Delete these remote files (missing ones are fine); return when they are gone."""

    def epoch(self) -> int:
        """A counter that changes on every (re)connect; the engine runs a full diff when it does,
        because changes made while the link was down were never sent. Constant by default."""
        return 0
