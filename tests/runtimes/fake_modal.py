"""A fake Modal service behind the real seam interface, for tests (Modal cannot be reached here).

It keeps Modal's rules rather than imitating its API:

* a Volume is an in-memory ``name → bytes`` map, written only through a writable host handle;
* each sandbox has its own throwaway directory standing in for its filesystem; the Volume
  appears there as a *snapshot* taken at creation and refreshed only by ``reload`` — a file
  uploaded afterwards is invisible inside until then, so a publish that forgets to reload
  fails the tests;
* commands run for real, locally, under bubblewrap: the host root read-only, a private
  writable ``/tmp``, and the snapshot bound **read-only** at the mount path — writes fail
  with the kernel's EROFS, exactly the guarantee Modal's read-only mount gives;
* a reload is refused while any process holds a file of the snapshot open (found by
  scanning ``/proc/*/fd``), like Modal's "open files preventing the operation";
* failures are raised as real ``modal.exception`` classes and converted by the same
  ``convert_modal_error`` the SDK seam uses.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import modal.exception as mx

from webshelf.runtimes.base import ExecResult
from webshelf.errors import RuntimeAdapterError, RuntimeExecError, RuntimeTimeoutError
from webshelf.runtimes.modal.sdk import convert_modal_error
from webshelf.runtimes.modal.seam import FORBIDDEN_MOUNT_PATHS, ModalSeam, SandboxRequest

PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
_ids = itertools.count(1)


@dataclass
class FakeVolume:
    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    commits: int = 0


@dataclass(frozen=True)
class VolumeHandle:
    volume: FakeVolume
    writable: bool


@dataclass
class FakeSandbox:
    id: str
    request: SandboxRequest
    volume: FakeVolume
    root: Path                 # the throwaway directory standing in for the sandbox's filesystem
    finished: bool = False
    reloads: int = 0
    refused: int = 0

    @property
    def view(self) -> Path:
        return self.root / "volume"

    @property
    def scratch(self) -> Path:
        return self.root / "tmp"


UNSHARE = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]


class FakeModal:
    """One fake Modal account: Volumes and sandboxes, with counters the tests assert on."""

    def __init__(self, bwrap: str = "bwrap") -> None:
        self.bwrap = bwrap
        self.volumes: dict[str, FakeVolume] = {}
        self.sandboxes: dict[str, FakeSandbox] = {}
        self.authenticated = True
        self.uploads = 0
        self.lock = threading.Lock()

    def seam(self, runtime: str = "modal") -> "FakeModalSeam":
        return FakeModalSeam(self, runtime)

    def close(self) -> None:
        for sb in self.sandboxes.values():
            shutil.rmtree(sb.root, ignore_errors=True)

    # the sandbox's view of the Volume ----------------------------------------------------------
    @staticmethod
    def open_inodes(view: Path) -> set[tuple[int, int]]:
        """(dev, ino) of files in ``view`` that some process has open."""
        wanted = {(st.st_dev, st.st_ino) for st in (os.stat(e.path) for e in os.scandir(view))}
        found = set()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    with contextlib.suppress(OSError):
                        st = os.stat(f"/proc/{pid}/fd/{fd}")
                        if (st.st_dev, st.st_ino) in wanted:
                            found.add((st.st_dev, st.st_ino))
        return found

    def snapshot(self, sb: FakeSandbox) -> None:
        """Make the sandbox's view equal the Volume's committed state (what a reload does)."""
        sb.view.mkdir(mode=0o755, exist_ok=True)
        files = dict(sb.volume.files)
        for entry in os.scandir(sb.view):
            if entry.name not in files:
                os.unlink(entry.path)
        for name, data in files.items():
            target = sb.view / name
            if target.exists() and target.read_bytes() == data:
                continue
            tmp = sb.view / f".fake-{name}"
            tmp.write_bytes(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)


class FakeModalSeam(ModalSeam):
    """``ModalSeam`` over ``FakeModal`` — the adapter cannot tell it from the SDK seam."""

    def __init__(self, service: FakeModal, runtime: str = "modal") -> None:
        self.service, self.name = service, runtime
        self.account = f"fake-{id(service)}"

    @contextlib.contextmanager
    def _calling(self, doing: str) -> Iterator[None]:
        try:
            yield
        except RuntimeAdapterError:
            raise
        except mx.Error as exc:
            raise convert_modal_error(exc, self.name, doing) from None

    def _auth(self) -> None:
        if not self.service.authenticated:
            raise mx.AuthError("Token missing. Could not authenticate client. If you are a new user, register an "
                               "account at modal.com, then run `modal token new`.")

    def _sandbox(self, handle: FakeSandbox) -> FakeSandbox:
        if handle.finished:
            raise mx.SandboxTerminatedError(f"Sandbox {handle.id} has already terminated")
        return handle

    # Volume -------------------------------------------------------------------------------------
    def open_volume(self, name: str, environment: str | None) -> VolumeHandle:
        with self._calling(f"opening Volume {name!r}"):
            self._auth()
            with self.service.lock:
                volume = self.service.volumes.setdefault(name, FakeVolume(name))
            return VolumeHandle(volume, writable=True)

    def list_files(self, volume: VolumeHandle) -> dict[str, int]:
        return {name: len(data) for name, data in volume.volume.files.items()}

    def upload(self, volume: VolumeHandle, files: Sequence[tuple[Path, str]]) -> None:
        with self._calling(f"uploading {len(files)} file(s) to the Volume"):
            if not volume.writable:
                raise mx.InvalidError("Read-only Volume can not be written to")
            batch = {remote.lstrip("/"): Path(local).read_bytes() for local, remote in files}
            with self.service.lock:
                volume.volume.files.update(batch)
                volume.volume.commits += 1
                self.service.uploads += 1

    def remove(self, volume: VolumeHandle, remote_paths: Sequence[str]) -> None:
        with self.service.lock:
            for remote in remote_paths:
                volume.volume.files.pop(remote.lstrip("/"), None)
            volume.volume.commits += 1

    # sandboxes ----------------------------------------------------------------------------------
    def create_sandbox(self, request: SandboxRequest) -> FakeSandbox:
        with self._calling(f"starting a sandbox in app {request.app!r}"):
            self._auth()
            if request.mount_path in FORBIDDEN_MOUNT_PATHS or not os.path.isabs(request.mount_path):
                raise mx.InvalidError(f"Volume {request.mount_path} cannot be mounted there.")
            sb = FakeSandbox(f"sb-fake{next(_ids)}", request, request.volume.volume,
                             Path(tempfile.mkdtemp(prefix="webshelf-fake-modal-")))
            sb.scratch.mkdir(mode=0o1777)
            os.chmod(sb.scratch, 0o1777)
            self.service.snapshot(sb)  # a new sandbox sees the Volume as committed now
            self.service.sandboxes[sb.id] = sb
            return sb

    def attach_sandbox(self, sandbox_id: str) -> FakeSandbox:
        with self._calling(f"attaching to sandbox {sandbox_id!r}"):
            self._auth()
            sb = self.service.sandboxes.get(sandbox_id)
            if sb is None:
                raise mx.NotFoundError(f"Sandbox {sandbox_id} not found")
            return sb

    def sandbox_id(self, sandbox: FakeSandbox) -> str:
        return sandbox.id

    def exec(self, sandbox: FakeSandbox, argv: Sequence[str], *, timeout: float, stdin: bytes | None) -> ExecResult:
        with self._calling(f"running {argv[0]!r}"):
            sb = self._sandbox(sandbox)
            r = sb.request
            # like Modal: root with capabilities and every uid available (no user namespace of its own)
            cmd = [self.service.bwrap, "--die-with-parent", "--new-session", *UNSHARE, "--ro-bind", "/", "/",
                   "--dev", "/dev", "--proc", "/proc", "--bind", str(sb.scratch), "/tmp"]
            # Modal creates the mount point's parents world-traversable, so an unprivileged user reaches it
            parents = [str(p) for p in reversed(Path(r.mount_path).parents) if str(p) not in ("/", "/tmp")]
            for parent in parents:
                cmd += ["--perms", "0755", "--dir", parent]
            cmd += ["--ro-bind", str(sb.view), r.mount_path, "--clearenv", "--setenv", "PATH", PATH,
                   "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8"]
            for key, value in r.env.items():
                cmd += ["--setenv", key, value]
            cmd += ["--chdir", r.workdir or "/", "--", *argv]
            try:
                done = subprocess.run(cmd, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                                      capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RuntimeTimeoutError(f"{argv[0]!r} did not finish within {timeout:g} s and was killed", runtime=self.name) from None
            if done.returncode and b"bwrap:" in done.stderr[:200] and not done.stdout:
                raise RuntimeExecError(f"the fake sandbox could not run: {done.stderr.decode(errors='replace')}", runtime=self.name)
            return ExecResult(done.returncode, done.stdout, done.stderr)

    def reload(self, sandbox: FakeSandbox, *, timeout: float) -> None:
        with self._calling("reloading the Volume inside the sandbox"):
            sb = self._sandbox(sandbox)
            if self.service.open_inodes(sb.view):
                sb.refused += 1
                raise mx.ConflictError("there are open files preventing the operation")
            self.service.snapshot(sb)
            sb.reloads += 1

    def is_running(self, sandbox: FakeSandbox) -> bool:
        return not sandbox.finished

    def terminate(self, sandbox: FakeSandbox) -> None:
        sandbox.finished = True
        shutil.rmtree(sandbox.root, ignore_errors=True)


def fake_runtime(service: FakeModal, settings: Any, mount: Any, name: str = "modal"):
    from webshelf.runtimes.modal.runtime import ModalRuntime

    return ModalRuntime(settings, mount, name=name, seam=service.seam(name))
