"""One Volume, many sandboxes: a page is uploaded once and every live sandbox reloads.

A webshelf process may run hundreds of Modal sandboxes against one Volume. ``VolumeFleet``
is what they share: the host's writable Volume handle, which pages this process has already
uploaded (by size, mtime and inode — a stored page is atomically replaced, never edited in
place, so a new inode means new bytes), a generation counter bumped by every change, and
each member sandbox's last reloaded generation. Publishing uploads only what the Volume
lacks, then reloads every member that is behind, side by side. ``publish_all`` calls every
runtime's ``publish``; the first does the upload and all N reloads, the rest find nothing to
do — one upload, N reloads, whatever the order.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from webshelf.errors import ReloadBusyError, RuntimeAdapterError, RuntimeConfigError
from webshelf.runtimes.modal.seam import ModalSeam

_FLEETS: dict[tuple[str, str | None, str], "VolumeFleet"] = {}
_FLEETS_LOCK = threading.Lock()


def _signature(path: str) -> tuple[int, int, int]:
    st = os.stat(path, follow_symlinks=False)
    return st.st_size, st.st_mtime_ns, st.st_ino


class VolumeFleet:
    """The sandboxes of this process that mount Volume ``volume_name`` at ``mount_path``."""

    def __init__(self, seam: ModalSeam, settings: Any, mount_path: Path) -> None:
        self.seam, self.settings, self.mount_path = seam, settings, mount_path
        self.volume_name = settings.volume
        self.volume = seam.open_volume(settings.volume, settings.environment)
        self.lock = threading.Lock()
        self.generation = 0
        self.uploaded: dict[str, tuple[int, int, int]] = {}
        self.members: dict[int, tuple[Any, str]] = {}     # key → (sandbox handle, sandbox id)
        self.seen: dict[int, int] = {}                     # key → generation it last reloaded
        self.uploads = 0                                   # batches sent (the benchmark reads these)
        self.reloads = 0

    # membership ------------------------------------------------------------------------------
    def join(self, key: int, sandbox: Any, *, fresh: bool, seen: int) -> None:
        """A started sandbox; ``fresh`` = created by us after ``seen`` (else reload it on next publish)."""
        with self.lock:
            self.members[key] = (sandbox, self.seam.sandbox_id(sandbox))
            self.seen[key] = seen if fresh else -1

    def leave(self, key: int) -> bool:
        """Forget a member; True when the fleet is now empty."""
        with self.lock:
            self.members.pop(key, None)
            self.seen.pop(key, None)
            return not self.members

    # the host side ---------------------------------------------------------------------------
    def sync_existing(self) -> None:
        """Make the Volume match the host directory when this process first uses it: upload
        pages stored meanwhile (missing or resized), and delete pages the host evicted while no
        webshelf process had the Volume open — else sandboxes would keep reading them."""
        with self.lock:
            remote = self.seam.list_files(self.volume)
            todo, local = [], set()
            for entry in os.scandir(self.mount_path):
                if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                    continue
                local.add(entry.name)
                if remote.get(entry.name) != entry.stat(follow_symlinks=False).st_size:
                    todo.append(entry.path)
                else:
                    self.uploaded[entry.name] = _signature(entry.path)
            gone = sorted(name for name in remote if not name.startswith(".") and name not in local)
            if gone:
                self.seam.remove(self.volume, ["/" + name for name in gone])
                self.generation += 1
            self._upload(todo)

    def _upload(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        signatures = {p: _signature(p) for p in paths}
        self.seam.upload(self.volume, [(Path(p), "/" + os.path.basename(p)) for p in paths])
        for p, sig in signatures.items():
            self.uploaded[os.path.basename(p)] = sig
        self.uploads += 1
        self.generation += 1

    def publish(self, paths: Sequence[str]) -> dict[str, str]:
        """Upload what the Volume lacks, reload members that are behind; failures by sandbox id."""
        with self.lock:
            self._upload([p for p in paths if self.uploaded.get(os.path.basename(p)) != _signature(p)])
            return self._reload_behind()

    def retract(self, paths: Sequence[str]) -> dict[str, str]:
        """Delete the files from the Volume and reload members; failures by sandbox id."""
        with self.lock:
            self.seam.remove(self.volume, ["/" + os.path.basename(p) for p in paths])
            for p in paths:
                self.uploaded.pop(os.path.basename(p), None)
            self.generation += 1
            return self._reload_behind()

    # the sandbox side --------------------------------------------------------------------------
    def _reload_behind(self) -> dict[str, str]:
        behind = [k for k in self.members if self.seen[k] < self.generation]
        if not behind:
            return {}
        failures: dict[str, str] = {}
        # One reload per sandbox: a runtime attached by id to a sandbox this process also started
        # is a second member for the same sandbox, and two reloads of one sandbox would collide.
        first: dict[str, int] = {}
        for key in behind:
            first.setdefault(self.members[key][1], key)
        workers = min(self.settings.reload_concurrency, len(first))
        with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="webshelf-modal-reload") as pool:
            by_sandbox = dict(zip(first, pool.map(self._reload_one, first.values())))
        outcomes = {key: by_sandbox[self.members[key][1]] for key in behind}
        for key, problem in outcomes.items():
            if problem is None:
                self.seen[key] = self.generation
            elif problem != "gone":
                failures[self.members[key][1]] = problem
        for key in [k for k, p in outcomes.items() if p == "gone"]:
            self.members.pop(key, None)  # finished sandboxes are not live any more
            self.seen.pop(key, None)
        return failures

    def _reload_one(self, key: int) -> str | None:
        """Reload one sandbox, retrying while Modal refuses because files are open inside."""
        sandbox = self.members[key][0]
        deadline = time.monotonic() + self.settings.reload_retry_s
        pause = 0.05
        while True:
            try:
                self.seam.reload(sandbox, timeout=self.settings.reload_timeout_s)
                self.reloads += 1
                return None
            except ReloadBusyError as exc:
                if time.monotonic() + pause > deadline:
                    return (f"{exc.detail} — still refused after {self.settings.reload_retry_s:g} s "
                            "(runtimes.modal.reload_retry_s); close files under the mount inside the sandbox")
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
            except RuntimeAdapterError as exc:
                try:
                    running = self.seam.is_running(sandbox)
                except RuntimeAdapterError:
                    running = False
                return exc.detail if running else "gone"


def fleet_for(seam: ModalSeam, settings: Any, mount_path: Path) -> VolumeFleet:
    """The process-wide fleet of Volume ``settings.volume`` (opened and synced on first use)."""
    key = (seam.account, settings.environment, settings.volume)
    with _FLEETS_LOCK:
        fleet = _FLEETS.get(key)
        if fleet is None:
            fleet = VolumeFleet(seam, settings, mount_path)
            fleet.sync_existing()
            _FLEETS[key] = fleet
    if fleet.mount_path != mount_path:
        raise RuntimeConfigError(f"Volume {settings.volume!r} already serves {fleet.mount_path} in this process; a Volume holds "
                                 f"one webshelf home's cache/web — set a different runtimes.modal.volume for {mount_path}", runtime=seam.name)
    return fleet


def release(fleet: VolumeFleet, key: int) -> None:
    """A member stopped; drop the fleet when it was the last (the next start re-lists the Volume)."""
    with _FLEETS_LOCK:
        if fleet.leave(key):
            for k, f in list(_FLEETS.items()):
                if f is fleet:
                    del _FLEETS[k]
