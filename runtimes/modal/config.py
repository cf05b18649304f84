"""``type: modal`` — the options of Modal sandboxes sharing one Volume (``runtimes.<name>``).

Two instances with different resources (``gpu-box`` with ``options: {gpu: A10G}``, ``cpu-box``)
may share one ``volume``: the Volume is opened once per process (runtimes/modal/fleet.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from webshelf.runtimes.settings import AbsolutePath, Strict


class ModalImageConfig(Strict):
    """``runtimes.<name>.image`` as a small recipe the adapter turns into a ``modal.Image``."""

    base: str = Field("debian_slim", min_length=1, description="debian_slim, or a registry image tag.")
    python: str | None = Field(None, description="Python version to add (debian_slim python_version / add_python).")
    apt: list[str] = Field(default_factory=list, description="Debian packages to install.")
    pip: list[str] = Field(default_factory=list, description="Python packages to install.")


class ModalRuntimeConfig(Strict):
    """``runtimes.<name>`` with ``type: modal``: Modal sandboxes sharing one Volume mounted read-only at the cache path."""

    type: Literal["modal"] = "modal"
    app: str = Field("webshelf", min_length=1, description="Modal app the sandboxes belong to (created if missing).")
    volume: str = Field("webshelf-cache", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$",
                        description="Modal Volume holding cache/web (created if missing, version 2).")
    environment: str | None = Field(None, description="Modal environment; default: the profile's.")
    sandbox_id: str | None = Field(None, description="Attach to this running sandbox (sb-…) instead of creating one.")
    image: str | ModalImageConfig = Field("debian_slim", description="debian_slim, a registry tag, or {base, python, apt, pip}.")
    timeout: int = Field(3_600, ge=10, le=86_400, description="Seconds before Modal ends a sandbox we created.")
    cpu: float | None = Field(None, gt=0, le=64, description="CPU cores reserved (Modal default when null).")
    memory: int | None = Field(None, ge=128, le=344_064, description="Memory reserved, in MiB (Modal default when null).")
    workdir: AbsolutePath | None = Field(None, description="Directory commands start in.")
    user: str | None = Field("65534:65534", pattern=r"^[0-9]+:[0-9]+$",
                             description="uid:gid commands run as (setpriv inside; no capabilities); "
                                         "null = the image's user, root on Modal, which verify() fails.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables inside.")
    secrets: list[str] = Field(default_factory=list, description="Names of Modal Secrets exposed as environment variables.")
    region: str | list[str] | None = Field(None, description="Region(s) the sandbox may run in.")
    options: dict[str, Any] = Field(default_factory=dict, description="Other modal.Sandbox.create arguments, passed through.")
    reload_timeout_s: float = Field(55.0, gt=0, le=600, description="Longest wait for one Volume reload inside a sandbox.")
    reload_retry_s: float = Field(30.0, ge=0, le=600, description="How long a reload refused because files are open is retried.")
    reload_concurrency: int = Field(32, ge=1, le=1_024, description="Sandboxes reloaded at once when a page is published.")


__all__ = ["ModalImageConfig", "ModalRuntimeConfig"]
