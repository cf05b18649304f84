"""``SdkModalSeam``: the Modal seam implemented with the ``modal`` SDK (1.x, checked against 1.6).

The only module that imports ``modal``, and only when the Modal runtime is used. Every call
is wrapped so a Modal exception leaves as a ``webshelf.errors`` runtime class whose message says
what to do — above all a missing or rejected token, which names ``modal token new`` and the
``MODAL_TOKEN_ID``/``MODAL_TOKEN_SECRET`` variables. ``tests/runtimes/test_modal_contract.py``
checks every SDK name and keyword used here against the installed package.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from webshelf.runtimes.base import ExecResult
from webshelf.errors import (
    MountError, ReloadBusyError, RuntimeAdapterError, RuntimeConfigError, RuntimeExecError, RuntimeTimeoutError,
    RuntimeUnavailableError,
)
from webshelf.runtimes.sdk import import_sdk
from webshelf.runtimes.modal.seam import ImageRecipe, ModalSeam, SandboxRequest

AUTH_HINT = ("authenticate with `modal token new` (stores ~/.modal.toml), or export MODAL_TOKEN_ID and "
             "MODAL_TOKEN_SECRET (a token from https://modal.com/settings/tokens)")


def import_modal(runtime: str = "modal"):
    return import_sdk("modal", runtime, "the modal SDK", "modal", "modal", "modal.exception")


def convert_modal_error(exc: BaseException, runtime: str, doing: str) -> RuntimeAdapterError:
    """One Modal exception → the ``webshelf.errors`` class a caller can act on."""
    e = import_modal(runtime).exception
    text = str(exc) or type(exc).__name__
    if isinstance(exc, e.AuthError):
        return RuntimeUnavailableError(f"{doing}: Modal did not accept the credentials ({text}); {AUTH_HINT}", runtime=runtime)
    if isinstance(exc, e.ConnectionError):
        return RuntimeUnavailableError(f"{doing}: cannot reach Modal ({text}); check the network and "
                                       "https://status.modal.com", runtime=runtime)
    if isinstance(exc, (e.ExecTimeoutError, e.SandboxTimeoutError, e.VolumeUploadTimeoutError, e.TimeoutError)):
        return RuntimeTimeoutError(f"{doing}: timed out ({text})", runtime=runtime)
    if isinstance(exc, e.SandboxTerminatedError):
        return RuntimeExecError(f"{doing}: the sandbox has terminated ({text}); start a new one", runtime=runtime)
    if isinstance(exc, e.NotFoundError):
        return RuntimeUnavailableError(f"{doing}: not found on Modal ({text}); check the name or id, "
                                       "and the Modal environment (runtimes.modal.environment)", runtime=runtime)
    if isinstance(exc, (e.PermissionDeniedError, e.ResourceExhaustedError)):
        return RuntimeUnavailableError(f"{doing}: refused by Modal ({text}); check the workspace's "
                                       "permissions and limits", runtime=runtime)
    if isinstance(exc, e.ConflictError) and "open file" in text.lower():
        return ReloadBusyError(f"{doing}: refused because files of the Volume are open inside ({text})", runtime=runtime)
    if isinstance(exc, e.InvalidError):
        return RuntimeConfigError(f"{doing}: Modal rejected the request ({text}); check runtimes.modal", runtime=runtime)
    return RuntimeExecError(f"{doing}: {type(exc).__name__}: {text}", runtime=runtime)


class SdkModalSeam(ModalSeam):
    """The real thing: each seam call is one or two ``modal`` SDK calls."""

    def __init__(self, runtime: str = "modal") -> None:
        self.name = runtime
        self.modal = import_modal(runtime)

    @contextlib.contextmanager
    def _calling(self, doing: str) -> Iterator[None]:
        try:
            yield
        except RuntimeAdapterError:
            raise
        except self.modal.exception.Error as exc:
            raise convert_modal_error(exc, self.name, doing) from None

    # Volume -----------------------------------------------------------------------------------
    def open_volume(self, name: str, environment: str | None) -> Any:
        with self._calling(f"opening Volume {name!r}"):
            volume = self.modal.Volume.from_name(name, environment_name=environment, create_if_missing=True, version=2)
            volume.hydrate()  # fail here (credentials, environment), not at the first upload
            return volume

    def list_files(self, volume: Any) -> dict[str, int]:
        with self._calling("listing the Volume"):
            file = self.modal.volume.FileEntryType.FILE
            return {e.path.lstrip("/"): e.size for e in volume.listdir("/") if e.type == file and "/" not in e.path.strip("/")}

    def upload(self, volume: Any, files: Sequence[tuple[Path, str]]) -> None:
        with self._calling(f"uploading {len(files)} file(s) to the Volume"):
            try:
                with volume.batch_upload(force=True) as batch:
                    for local, remote in files:
                        batch.put_file(local, remote)
            except OSError as exc:
                raise MountError(f"cannot read {exc.filename or 'a page'} on the host to upload it: "
                                 f"{exc.strerror or exc}", runtime=self.name) from None

    def remove(self, volume: Any, remote_paths: Sequence[str]) -> None:
        for remote in remote_paths:
            with self._calling(f"removing {remote} from the Volume"):
                try:
                    volume.remove_file(remote)
                except FileNotFoundError:
                    pass  # already gone: what retract wants

    # sandboxes --------------------------------------------------------------------------------
    def _image(self, recipe: ImageRecipe) -> Any:
        Image = self.modal.Image
        if recipe.base == "debian_slim":
            image = Image.debian_slim(python_version=recipe.python)
        else:
            image = Image.from_registry(recipe.base, add_python=recipe.python)
        if recipe.apt:
            image = image.apt_install(*recipe.apt)
        if recipe.pip:
            image = image.pip_install(*recipe.pip)
        return image

    def create_arguments(self, request: SandboxRequest) -> dict[str, Any]:
        """The keyword arguments for ``Sandbox.create`` (public so tests can inspect them)."""
        modal = self.modal
        kwargs: dict[str, Any] = {
            "app": modal.App.lookup(request.app, create_if_missing=True),
            "image": self._image(request.image),
            "volumes": {request.mount_path: request.volume.with_mount_options(read_only=True)},
            "timeout": request.timeout,
            "cpu": request.cpu, "memory": request.memory, "workdir": request.workdir,
            "region": list(request.region) if isinstance(request.region, tuple) else request.region,
            "env": dict(request.env) or None,
            "secrets": [modal.Secret.from_name(n) for n in request.secrets] or None,
        }
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        accepted = inspect.signature(modal.Sandbox.create).parameters
        for key, value in request.options.items():
            if key in kwargs or key in ("app", "image", "volumes"):
                raise RuntimeConfigError(f"runtimes.modal.options.{key} is set by webshelf itself; "
                                         "use the matching runtimes.modal key", runtime=self.name)
            if key not in accepted or key.startswith("_"):
                public = sorted(k for k in accepted if not k.startswith("_") and k not in kwargs and k != "args")
                raise RuntimeConfigError(f"runtimes.modal.options.{key}: modal.Sandbox.create has no such "
                                         f"argument; it accepts: {', '.join(public)}", runtime=self.name)
            kwargs[key] = value
        return kwargs

    def create_sandbox(self, request: SandboxRequest) -> Any:
        with self._calling(f"starting a sandbox in app {request.app!r}"):
            return self.modal.Sandbox.create(**self.create_arguments(request))

    def attach_sandbox(self, sandbox_id: str) -> Any:
        with self._calling(f"attaching to sandbox {sandbox_id!r}"):
            return self.modal.Sandbox.from_id(sandbox_id)

    def sandbox_id(self, sandbox: Any) -> str:
        return sandbox.object_id

    def exec(self, sandbox: Any, argv: Sequence[str], *, timeout: float, stdin: bytes | None) -> ExecResult:
        seconds = max(1, math.ceil(timeout))
        with self._calling(f"running {argv[0]!r}"):
            try:
                process = sandbox.exec(*argv, timeout=seconds, text=False)
                if stdin:
                    process.stdin.write(stdin)
                process.stdin.write_eof()
                process.stdin.drain()
                stdout, stderr = process.stdout.read(), process.stderr.read()
                code = process.wait()
            except self.modal.exception.ExecTimeoutError:
                code = -1
            if code == -1:  # ContainerProcess.wait() reports an exceeded deadline as -1
                raise RuntimeTimeoutError(f"{argv[0]!r} did not finish within {seconds} s and was killed", runtime=self.name)
            return ExecResult(code, bytes(stdout), bytes(stderr))

    def reload(self, sandbox: Any, *, timeout: float) -> None:
        with self._calling("reloading the Volume inside the sandbox"):
            try:
                sandbox.reload_volumes(timeout=max(1, math.ceil(timeout)))
            except self.modal.exception.ConflictError as exc:  # FAILED_PRECONDITION: files are open
                raise ReloadBusyError(f"Modal refused the reload: {exc}", runtime=self.name) from None

    def is_running(self, sandbox: Any) -> bool:
        with self._calling("checking the sandbox"):
            return sandbox.poll() is None

    def terminate(self, sandbox: Any) -> None:
        with self._calling("terminating the sandbox"):
            sandbox.terminate()
