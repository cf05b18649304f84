"""The ``Runtime`` API every sandbox adapter implements.

Starting a sandbox is kept apart from using it: ``start()``/``stop()``/``is_alive()`` own the
lifecycle, ``exec()`` runs one command, and everything webshelf needs on top (``verify``,
reading a page inside) is written once against ``exec``. Bind-mount runtimes inherit
``BindRuntime``, whose publish is a check rather than a copy; runtimes that copy pages and can
diff the whole mirror inherit ``SyncRuntime``.

What a kind of runtime offers beyond this API is declared once, by its class, in ``offers``
(an ``Offers``), and callers read that declaration — they never probe a runtime for an
attribute ("does it have a ``sync``?", "is ``attached`` there, else assume True"), which
silently answers "no" for a misspelt or renamed attribute.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from webshelf.mounts.spec import MountSpec
from webshelf.runtimes.stdin import Stdin
from webshelf.errors import MountError, RuntimeExecError


@dataclass(frozen=True)
class ExecResult:
    """What one command did inside the sandbox (bytes, undecoded: pages are UTF-8, tools may not be)."""

    exit_code: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")


@dataclass
class VerifyReport:
    """The outcome of ``verify()``: each check with its detail, plus warnings that are not failures."""

    runtime: str
    mount: str
    checks: list[tuple[str, bool, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: how the mount is made read-only, when the runtime has a choice (ssh: bind or perms)
    mode: str | None = None

    @property
    def ok(self) -> bool:
        return all(passed for _, passed, _ in self.checks)

    def add(self, name: str, passed: bool, detail: str) -> bool:
        self.checks.append((name, passed, detail))
        return passed

    def lines(self) -> list[str]:
        out = [f"runtime: {self.runtime}", f"mount: {self.mount} (read-only, same path)"]
        out += [f"mode: {self.mode}"] if self.mode else []
        out += [f"{'ok  ' if passed else 'FAIL'} {name}: {detail}" for name, passed, detail in self.checks]
        out += [f"warning: {w}" for w in self.warnings]
        return out


@dataclass(frozen=True)
class Offers:
    """What a kind of runtime offers beyond the ``Runtime`` API (its class declares it)."""

    #: the whole directory is bind-mounted read-only: publishing is a check, not a copy (``BindRuntime``)
    bind_mount: bool = False
    #: pages are copied and ``sync()`` diffs the whole mirror: ``webshelf sync`` and
    #: ``mounts.watch.LiveSync`` can keep it in step (``SyncRuntime``)
    full_sync: bool = False
    #: ``start()`` creates the sandbox (False: it exists already and is only connected to, e.g. an SSH host)
    creates_sandbox: bool = True
    #: the setting that names an already running sandbox to attach to instead of creating one
    attach_setting: str | None = None


class Runtime(ABC):
    """A sandbox that shows ``mount`` read-only at the same path. Use as a context manager."""

    #: the config section / registry name (``local``, ``docker``, …)
    kind: str = "runtime"
    #: what this kind offers (see ``Offers``), declared by each adapter's class
    offers: ClassVar[Offers] = Offers()

    def __init__(self, settings: Any, mount: MountSpec, *, name: str | None = None) -> None:
        self.settings = settings
        self.mount = mount
        self.name = name or self.kind

    @property
    def attached(self) -> bool:
        """True when this runtime uses a sandbox it did not create — one that exists already
        (``creates_sandbox`` False) or the running one its ``attach_setting`` names — so
        ``stop()`` leaves it running and a one-off command can publish into it."""
        offers = self.offers
        if not offers.creates_sandbox:
            return True
        return bool(offers.attach_setting and getattr(self.settings, offers.attach_setting))

    # lifecycle -------------------------------------------------------------------------
    @abstractmethod
    def start(self) -> None:
        """Create (or attach to) the sandbox with the mount in place; idempotent."""

    @abstractmethod
    def stop(self) -> None:
        """Tear down what ``start`` created (never a sandbox it only attached to); idempotent."""

    @abstractmethod
    def is_alive(self) -> bool:
        """True while commands can run."""

    @abstractmethod
    def exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin = None) -> ExecResult:
        """Run ``argv`` (no shell) inside; raise ``RuntimeTimeoutError`` after ``timeout`` s.
        ``stdin``: bytes, or a binary stream copied while the command runs and no longer read
        once it exits (runtimes/stdin.py; modal reads it to the end first)."""

    def __enter__(self) -> "Runtime":
        try:
            self.start()
        except BaseException:
            # ``with`` never calls __exit__ when __enter__ raises: a start cut short (a failure,
            # or a signal the CLI turned into an exception) must still remove what it created
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # mount contract --------------------------------------------------------------------
    @abstractmethod
    def publish(self, paths: Sequence[str]) -> None:
        """Return only when every path is readable inside."""

    @abstractmethod
    def retract(self, paths: Sequence[str]) -> None:
        """Return only when none of the paths is readable inside any more."""

    def verify(self, *, timeout: float = 30.0) -> VerifyReport:
        """Check the mount from inside; raise ``MountError`` naming what failed."""
        from webshelf.runtimes.verify import verify_mount

        report = verify_mount(self, timeout=timeout)
        if not report.ok:
            failed = "; ".join(f"{n}: {d}" for n, passed, d in report.checks if not passed)
            raise MountError(f"verify failed for {self.mount.path}: {failed}", runtime=self.name)
        return report

    def mode_note(self) -> str | None:
        """How read-only is achieved, when the runtime has a choice (shown by ``verify``)."""
        return None

    def mount_hint(self) -> str:
        """How to give this kind of sandbox the mount (shown when verify finds it missing)."""
        return f"the sandbox must show {self.mount.path} read-only at the same path"

    #: False only for an explicitly unsandboxed runtime (``runtimes.local.sandbox: none``)
    write_protected: bool = True

    def exposes_host(self) -> bool:
        """True when the configuration shows the host's files on purpose (``verify`` then warns
        about what is reachable instead of failing)."""
        return False

    def view_warnings(self) -> list[str]:
        """Warnings about the configured view of the host, added to the ``verify`` report."""
        return []

    def privilege_hint(self) -> str:
        """How to run commands in this kind of sandbox without privileges (shown when verify finds some)."""
        return "run commands as an unprivileged user with every capability dropped"

    def exposure_hint(self) -> str:
        """How to hide the host's files from this kind of sandbox (shown when verify finds some)."""
        return "only cache/web of the webshelf home may be visible; do not mount or copy anything else of the host in"

    def _check_inside(self, paths: Sequence[str]) -> None:
        outside = self.mount.outside(list(paths))
        if outside:
            raise MountError(f"{outside[0]} is not inside the mounted {self.mount.path}; "
                             "only stored pages of this webshelf home can be published", runtime=self.name)


class BindRuntime(Runtime):
    """A runtime that bind-mounts the whole directory: the kernel shows host changes at once.

    The whole directory is bound (never single files: a file bind keeps the old inode after
    the atomic replace that stores a page), so a page renamed into place on the host is
    visible inside the moment the rename returns. Publishing therefore only checks that the
    sandbox is running and the file is really there — no exec round-trip on the hot path;
    ``verify()`` proves the mount itself from inside.
    """

    offers: ClassVar[Offers] = Offers(bind_mount=True)

    def publish(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        if not self.is_alive():
            raise RuntimeExecError("the sandbox is not running; start it before publishing", runtime=self.name)
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            raise MountError(f"{missing[0]} does not exist on the host, so the sandbox cannot see it", runtime=self.name)

    def retract(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        present = [p for p in paths if os.path.lexists(p)]
        if present:
            raise MountError(f"{present[0]} still exists on the host; a bind mount shows host files, "
                             "so delete (evict) it on the host to retract it", runtime=self.name)


class SyncRuntime(Runtime):
    """A runtime that copies pages into the sandbox and can diff the whole mirror against the
    host directory — what ``webshelf sync`` and ``mounts.watch.LiveSync`` drive."""

    offers: ClassVar[Offers] = Offers(full_sync=True)
    #: the outcome of the last full diff (None before the first)
    last_sync: object | None = None

    @abstractmethod
    def sync(self) -> object:
        """Full diff host ↔ sandbox: send what is missing or changed, delete what was evicted."""

    @abstractmethod
    def needs_sync(self) -> bool:
        """True when changes may have been missed since the last full diff (e.g. after a reconnect)."""
