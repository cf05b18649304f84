"""The one narrow seam between the Modal runtime and Modal's service.

Everything the adapter needs from Modal is the calls below: a writable host-side
handle on a Volume (upload a batch, remove files), and sandboxes (create with the Volume
mounted read-only, attach by id, exec, reload the Volume inside, poll, terminate). The real
implementation (``runtimes.modal_sdk.SdkModalSeam``) turns each into ``modal`` SDK calls;
the tests drive the adapter through a fake with an in-memory Volume and real local commands
(``tests/runtimes/fake_modal.py``). Both raise only ``webshelf.errors`` runtime classes, so no Modal
exception ever reaches the adapter, and both keep Modal's two rules that the design rests on:

* a sandbox sees the Volume as it was when it started or last reloaded — files uploaded
  later are invisible inside until ``reload`` (Modal Volumes v2 are not a network FS);
* a reload is refused while a process inside holds a file of the Volume open
  (``webshelf.errors.ReloadBusyError``); the caller retries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webshelf.runtimes.base import ExecResult

#: Mount points Modal refuses (``modal._utils.mount_utils.validate_mount_points``).
FORBIDDEN_MOUNT_PATHS = ("/", "/root", "/tmp")


@dataclass(frozen=True)
class ImageRecipe:
    """What ``runtimes.modal.image`` asks for, independent of the SDK's ``modal.Image``."""

    base: str = "debian_slim"          # "debian_slim" or a registry tag such as "python:3.12-slim"
    python: str | None = None          # debian_slim's python_version / from_registry's add_python
    apt: tuple[str, ...] = ()
    pip: tuple[str, ...] = ()


@dataclass(frozen=True)
class SandboxRequest:
    """One ``Sandbox.create``: the Volume ``volume`` read-only at ``mount_path`` plus options."""

    app: str
    volume: Any                        # the handle ``open_volume`` returned
    mount_path: str
    image: ImageRecipe
    timeout: int
    cpu: float | None = None
    memory: int | None = None          # MiB
    workdir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()      # names of Modal Secrets
    region: str | tuple[str, ...] | None = None
    options: dict[str, Any] = field(default_factory=dict)   # passed through to Sandbox.create


class ModalSeam(ABC):
    """How the Modal runtime reaches Modal (real SDK or the test fake); errors are ``RuntimeAdapterError``s."""

    name: str = "modal"
    #: which Modal account/service this seam reaches; sandboxes share a Volume fleet only within one
    account: str = "modal"

    # the Volume, from the host (writable handle) -------------------------------------------
    @abstractmethod
    def open_volume(self, name: str, environment: str | None) -> Any:
        """A writable handle on Volume ``name`` (created, version 2, if missing)."""

    @abstractmethod
    def list_files(self, volume: Any) -> dict[str, int]:
        """Regular files at the Volume's top level: name → size."""

    @abstractmethod
    def upload(self, volume: Any, files: Sequence[tuple[Path, str]]) -> None:
        """Upload host files to Volume paths in one batch, overwriting; committed on return."""

    @abstractmethod
    def remove(self, volume: Any, remote_paths: Sequence[str]) -> None:
        """Delete Volume paths; a missing one is fine."""

    # sandboxes --------------------------------------------------------------------------------
    @abstractmethod
    def create_sandbox(self, request: SandboxRequest) -> Any:
        """Start a sandbox (its app created if missing); return its handle."""

    @abstractmethod
    def attach_sandbox(self, sandbox_id: str) -> Any:
        """The handle of a running sandbox by id."""

    @abstractmethod
    def sandbox_id(self, sandbox: Any) -> str:
        """The id a later process can attach to."""

    @abstractmethod
    def exec(self, sandbox: Any, argv: Sequence[str], *, timeout: float, stdin: bytes | None) -> ExecResult:
        """Run ``argv`` inside; ``RuntimeTimeoutError`` when it outlives ``timeout``."""

    @abstractmethod
    def reload(self, sandbox: Any, *, timeout: float) -> None:
        """Make the sandbox see the Volume's latest committed state; ``ReloadBusyError`` if refused."""

    @abstractmethod
    def is_running(self, sandbox: Any) -> bool:
        """True while the sandbox has not finished."""

    @abstractmethod
    def terminate(self, sandbox: Any) -> None:
        """Stop the sandbox (a finished one is fine)."""
