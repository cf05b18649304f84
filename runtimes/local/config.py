"""``type: local`` — the options of a bubblewrap sandbox on this machine (``runtimes.<name>``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from webshelf.runtimes.local.view import SYSTEM_BINDS
from webshelf.runtimes.settings import Strict


class LocalRuntimeConfig(Strict):
    """``runtimes.<name>`` with ``type: local``: commands under bubblewrap on this machine."""

    type: Literal["local"] = "local"
    sandbox: Literal["bwrap", "none"] = Field(
        "bwrap", description="bwrap, or none to run unsandboxed on purpose (verify says so).")
    bwrap: str = Field("bwrap", min_length=1, description="The bubblewrap executable (name on PATH or a path).")
    binds: list[str] = Field(
        default_factory=lambda: list(SYSTEM_BINDS),
        description="Host paths visible read-only at the same path (default: a minimal system view; "
                    "['/'] = the whole host, which verify() warns about).")
    uid: int = Field(65534, ge=1, le=4_294_967_294, description="Unprivileged uid commands run as (in a user namespace).")
    gid: int = Field(65534, ge=1, le=4_294_967_294, description="Unprivileged gid commands run as.")
    network: bool = Field(False, description="Share the host network (off: a private, empty network namespace).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables inside.")
    working_dir: str = Field("/tmp", min_length=1, description="Directory commands start in.")

    @field_validator("binds")
    @classmethod
    def _absolute_binds(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/"):
                raise ValueError(f"bind {path!r} must be an absolute path")
        return value


__all__ = ["LocalRuntimeConfig"]
