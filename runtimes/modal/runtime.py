"""The ``modal`` runtime: a Modal sandbox with a shared Volume read-only at the cache path.

``cache/web`` lives in a Modal Volume (``runtimes.modal.volume``, version 2) whose root is
mounted in every sandbox at the host's own absolute path with Modal's read-only mount option;
the host keeps a writable handle and uploads pages into it. Modal Volumes are not a network
filesystem: a running sandbox sees new files only after a reload, so ``publish`` uploads and
then reloads every live sandbox of this process (``runtimes.modal_fleet``) before returning.
With ``sandbox_id`` set the runtime attaches to a running sandbox and never terminates it.
Modal is reached only through ``runtimes.modal_seam.ModalSeam`` (the SDK is imported on use).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Callable

from webshelf.mounts.spec import MountSpec
from webshelf.runtimes.stdin import Stdin, read_all
from webshelf.runtimes.base import ExecResult, Offers, Runtime
from webshelf.errors import MountError, RuntimeAdapterError, RuntimeConfigError, RuntimeExecError
from webshelf.runtimes.modal.fleet import VolumeFleet, fleet_for, release
from webshelf.runtimes.modal.seam import FORBIDDEN_MOUNT_PATHS, ImageRecipe, ModalSeam, SandboxRequest


def _sdk_seam(runtime: str) -> ModalSeam:
    from webshelf.runtimes.modal.sdk import SdkModalSeam

    return SdkModalSeam(runtime)


def image_recipe(image: Any) -> ImageRecipe:
    """``runtimes.modal.image``: a registry tag / ``debian_slim``, or {base, python, apt, pip}."""
    if isinstance(image, str):
        return ImageRecipe(base=image)
    return ImageRecipe(base=image.base, python=image.python, apt=tuple(image.apt), pip=tuple(image.pip))


class ModalRuntime(Runtime):
    kind = "modal"
    #: how a runtime reaches Modal; tests put their fake here
    seam_factory: Callable[[str], ModalSeam] = staticmethod(_sdk_seam)
    #: copies pages into a Volume (no full diff); creates a sandbox, or attaches to the one ``sandbox_id`` names
    offers = Offers(attach_setting="sandbox_id")

    def __init__(self, settings, mount: MountSpec, *, name: str | None = None, seam: ModalSeam | None = None) -> None:
        super().__init__(settings, mount, name=name)
        if str(mount.path) in FORBIDDEN_MOUNT_PATHS:
            raise RuntimeConfigError(f"Modal cannot mount a Volume at {mount.path} (it refuses "
                                     f"{', '.join(FORBIDDEN_MOUNT_PATHS)}); move WEBSHELF_HOME so cache/web is elsewhere", runtime=self.name)
        self._seam = seam
        self.sandbox: Any = None
        self.sandbox_id: str | None = None
        self.fleet: VolumeFleet | None = None

    # lifecycle ----------------------------------------------------------------------------
    def _request(self) -> SandboxRequest:
        s = self.settings
        region = tuple(s.region) if isinstance(s.region, list) else s.region
        return SandboxRequest(app=s.app, volume=self.fleet.volume, mount_path=str(self.mount.path),
                              image=image_recipe(s.image), timeout=s.timeout, cpu=s.cpu, memory=s.memory,
                              workdir=s.workdir, env=dict(s.env), secrets=tuple(s.secrets), region=region,
                              options=dict(s.options))

    def start(self) -> None:
        if self.sandbox is not None:
            return
        seam = self._seam = self._seam or type(self).seam_factory(self.name)
        self.fleet = fleet_for(seam, self.settings, self.mount.path)
        try:
            seen = self.fleet.generation
            if self.attached:
                sandbox = seam.attach_sandbox(self.settings.sandbox_id)
                if not seam.is_running(sandbox):
                    raise RuntimeExecError(f"sandbox {self.settings.sandbox_id!r} has finished; "
                                           f"start a new one or unset runtimes.{self.name}.sandbox_id", runtime=self.name)
            else:
                sandbox = seam.create_sandbox(self._request())
        except BaseException:
            release(self.fleet, id(self))
            self.fleet = None
            raise
        self.sandbox, self.sandbox_id = sandbox, seam.sandbox_id(sandbox)
        self.fleet.join(id(self), sandbox, fresh=not self.attached, seen=seen)

    def stop(self) -> None:
        sandbox, fleet = self.sandbox, self.fleet
        self.sandbox, self.fleet = None, None
        if fleet is not None:
            release(fleet, id(self))
        if sandbox is not None and not self.attached:
            try:
                self._seam.terminate(sandbox)
            except RuntimeAdapterError:
                pass  # already gone; Modal ends it at runtimes.modal.timeout anyway

    def is_alive(self) -> bool:
        if self.sandbox is None:
            return False
        try:
            return self._seam.is_running(self.sandbox)
        except RuntimeAdapterError:
            return False

    def mount_hint(self) -> str:
        if self.attached:
            return (f"sandbox {self.settings.sandbox_id!r} was not created with Volume {self.settings.volume!r} at "
                    f"{self.mount.path}; create it with volumes={{{str(self.mount.path)!r}: modal.Volume.from_name("
                    f"{self.settings.volume!r}).with_mount_options(read_only=True)}} (or unset runtimes.{self.name}.sandbox_id)")
        return super().mount_hint()

    # commands --------------------------------------------------------------------------------
    def _require_started(self) -> None:
        if self.sandbox is None:
            raise RuntimeExecError("the sandbox is not started; call start() or use it as a context manager", runtime=self.name)

    def exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin = None) -> ExecResult:
        """Run ``argv``; a stream as ``stdin`` is read to its end first (the seam writes the whole
        input before it waits for the command: interleaving writes with the SDK's output streams
        is untested against real Modal), so ``yes | … head -1`` does not end on this runtime."""
        self._require_started()
        if not argv:
            raise RuntimeExecError("exec needs a command (argv is empty)", runtime=self.name)
        return self._seam.exec(self.sandbox, self._as_user([str(a) for a in argv]), timeout=timeout,
                               stdin=read_all(stdin))

    def _as_user(self, argv: list[str]) -> list[str]:
        """Modal runs commands as root with capabilities, which could remount the read-only Volume;
        setpriv (util-linux, in every Debian-based image) switches to ``runtimes.modal.user``
        first, and changing every uid away from 0 clears all capabilities."""
        if not self.settings.user:
            return argv
        uid, gid = self.settings.user.split(":")
        return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *argv]

    def privilege_hint(self) -> str:
        if not self.settings.user:
            return f"set runtimes.{self.name}.user (default 65534:65534) so commands run unprivileged"
        return f"runtimes.{self.name}.user is {self.settings.user}: use a non-zero uid, and an image with setpriv (util-linux)"

    # mount contract ----------------------------------------------------------------------------
    def _confirm(self, action: str, failures: dict[str, str]) -> None:
        if id(self) not in self.fleet.members:
            raise RuntimeExecError(f"{action}: sandbox {self.sandbox_id} has finished (runtimes.{self.name}.timeout "
                                   "ends it); start a new one", runtime=self.name)
        if failures:
            detail = "; ".join(f"sandbox {sid}: {why}" for sid, why in sorted(failures.items()))
            raise MountError(f"{action}: the Volume is updated but {len(failures)} sandbox(es) "
                             f"could not reload it: {detail}", runtime=self.name)

    def publish(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        self._require_started()
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            raise MountError(f"{missing[0]} does not exist on the host, so it cannot be uploaded", runtime=self.name)
        self._confirm("publish", self.fleet.publish(list(paths)))

    def retract(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        self._require_started()
        self._confirm("retract", self.fleet.retract(list(paths)))
