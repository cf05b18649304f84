"""``type: docker`` — the options of a container with cache/web bound read-only (``runtimes.<name>``).

Several instances (``gpu-box``, ``cpu-box``) are several blocks of this type, each with its own
image, daemon or container to attach to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from webshelf.runtimes.settings import Strict


class DockerRuntimeConfig(Strict):
    """``runtimes.<name>`` with ``type: docker``: a container with cache/web bound read-only; safe defaults."""

    type: Literal["docker"] = "docker"
    image: str = Field("debian:bookworm-slim", min_length=1, description="Image to start (needs sh, sed, awk).")
    container: str | None = Field(None, description="Attach to this running container (name or id) instead of starting one.")
    docker_host: str | None = Field(None, description="Daemon address; default DOCKER_HOST or the local socket.")
    network: str = Field("none", min_length=1, description="Docker network mode: none, bridge, host or a network name.")
    cap_drop: list[str] = Field(["ALL"], description="Capabilities dropped.")
    cap_add: list[str] = Field(default_factory=list, description="Capabilities added back.")
    no_new_privileges: bool = Field(True, description="security-opt no-new-privileges.")
    read_only_root: bool = Field(True, description="Read-only root filesystem.")
    tmpfs: dict[str, str] = Field({"/tmp": "rw,nosuid,nodev,size=256m"}, description="tmpfs mounts: path → options.")
    user: str = Field("65534:65534", description="User inside (uid:gid); pages are world-readable, so any uid reads them.")
    mem_limit: str = Field("1g", pattern=r"^[0-9]+[bkmg]?$", description="Memory limit (docker syntax: 512m, 1g).")
    cpus: float = Field(1.0, gt=0, le=1024, description="CPU limit.")
    pids_limit: int = Field(512, ge=16, le=1_000_000, description="Process limit.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra container labels.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables inside.")
    working_dir: str = Field("/tmp", description="Directory commands start in.")
    volumes: list[str] = Field(default_factory=list, description="Extra binds 'host:container[:ro|rw]' (ro by default).")
    command: list[str] = Field(
        ["sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"], min_length=1,
        description="The container's long-running main process.")

    @field_validator("volumes")
    @classmethod
    def _volume_syntax(cls, value: list[str]) -> list[str]:
        for spec in value:
            parts = spec.split(":")
            if not 2 <= len(parts) <= 3 or not all(parts[:2]) or not parts[0].startswith("/") \
                    or not parts[1].startswith("/") or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
                raise ValueError(f"volume {spec!r} must be '/host/path:/container/path[:ro|rw]'")
        return value


__all__ = ["DockerRuntimeConfig"]
