"""Who owns a sandbox, and whether that owner still exists.

A sandbox webshelf creates (a docker container, a local scratch directory) must never outlive
the process that created it. Signal handlers cover SIGTERM/SIGHUP/SIGINT, but nothing runs on
SIGKILL, an OOM kill or a power cut — so every sandbox also carries its owner: the pid, the
pid's start time (clock ticks since boot, from ``/proc/<pid>/stat``) so a recycled pid is not
mistaken for the owner, the boot id (start times restart at each boot) and the hostname (a pid
means nothing on another machine). A later start, or ``webshelf runtime prune``, removes
sandboxes whose owner is gone.

An owner on another host is never judged dead: this machine cannot see its processes.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache


def boot_id() -> str:
    """This boot, as the first 8 hex digits of the kernel's boot id ("" when unknown): enough to
    tell boots apart, short enough for a directory name."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip().replace("-", "")[:8]
    except OSError:
        return ""


def start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot) as text; None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # exists but unreadable: known alive, start time unknown
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[19].decode() if len(fields) > 19 else ""


@dataclass(frozen=True)
class Owner:
    """The process a sandbox belongs to."""

    pid: int
    start: str
    boot: str
    host: str

    def alive(self) -> bool:
        """False only when this machine can tell the owner is gone (its pid absent, reused, or a reboot since)."""
        if self.host != socket.gethostname():
            return True
        if self.boot and boot_id() and self.boot != boot_id():
            return False
        now = start_time(self.pid)
        if now is None:
            return False
        if not now or not self.start:  # cannot compare; do not remove what may be in use
            return True
        return now == self.start

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


@lru_cache(maxsize=None)
def _me(pid: int) -> Owner:
    return Owner(pid, start_time(pid) or "", boot_id(), socket.gethostname())


def current() -> Owner:
    """This process as an owner (recomputed after a fork: the pid is part of the key)."""
    return _me(os.getpid())


@dataclass(frozen=True)
class Orphan:
    """A sandbox whose owner is gone, and how to remove it (``webshelf runtime prune`` lists these)."""

    kind: str  # "docker container" | "local temp dir"
    ident: str  # container id (short) or directory path
    owner: Owner
    detail: str  # what else identifies it (runtime name, home)
    remove: Callable[[], None] = field(compare=False, repr=False)

    def describe(self) -> str:
        return f"{self.kind} {self.ident} (owner {self.owner.describe()} is gone{self.detail})"
