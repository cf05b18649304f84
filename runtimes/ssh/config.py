"""``type: ssh`` — one remote host that mirrors cache/web read-only (``runtimes.<name>``).

An SSH host is an instance like any other: ``runtimes.build1: {type: ssh, host: …}`` is opened
with ``--runtime build1``. The transfer settings that used to be shared by every host
(``batch_files``, ``reconnect_attempts``, …) are per host now, with the same defaults, so a
slow link can have its own; ``webshelf sync``'s timing is shared (``runtimes.sync``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from webshelf.runtimes.settings import AbsolutePath, Strict


class SshJumpConfig(Strict):
    """``runtimes.<name>.jump``: a bastion the connection is tunnelled through."""

    host: str = Field(..., min_length=1, description="Jump host name or address.")
    port: int = Field(22, ge=1, le=65_535)
    user: str | None = Field(None, description="Login on the jump host (default: the target's user).")
    key_file: str | None = Field(None, description="Private key for the jump host (default: the target's key).")


class SshRuntimeConfig(Strict):
    """``runtimes.<name>`` with ``type: ssh``: one remote machine that mirrors cache/web read-only."""

    type: Literal["ssh"] = "ssh"
    host: str = Field(..., min_length=1, description="Host name or address to connect to.")
    port: int = Field(22, ge=1, le=65_535)
    user: str = Field("root", min_length=1, description="The sync user (root for readonly: bind).")
    key_file: str | None = Field(None, description="Private key file; unset = ssh-agent and ~/.ssh default keys.")
    use_agent: bool = Field(True, description="Also try keys from a running ssh-agent.")
    known_hosts: str = Field("~/.ssh/known_hosts", min_length=1, description="Known-hosts file checked for the host key.")
    insecure_accept_unknown_host_key: bool = Field(
        False, description="Accept a host key not in known_hosts (throwaway hosts only; warns).")
    connect_timeout_s: float = Field(10.0, gt=0, le=600, description="TCP connect + handshake + auth timeout.")
    keepalive_s: int = Field(15, ge=0, le=3_600, description="Keepalive interval in seconds (0 = off).")
    jump: SshJumpConfig | None = Field(None, description="Optional jump host.")
    readonly: Literal["bind", "perms"] = Field(
        "perms", description="bind: root sync user, staging dir bind-mounted read-only; perms: 0444/0555 files.")
    staging_dir: AbsolutePath | None = Field(None, description="readonly: bind staging directory (default: beside cache/web).")
    agent_user: str | None = Field(None, description="The user commands (exec, verify) run as; default: user.")
    agent_key_file: str | None = Field(None, description="Key for agent_user (default: key_file).")
    transfer: Literal["auto", "tar", "sftp"] = Field("auto", description="tar stream over exec, or SFTP; auto = tar if present.")
    publish_timeout_s: float = Field(10.0, gt=0, le=600, description="How long one transfer to this host may take.")
    batch_files: int = Field(1_000, ge=1, le=100_000, description="Files per transfer batch.")
    batch_bytes: int = Field(64_000_000, ge=1_000, le=10_000_000_000, description="Bytes per transfer batch.")
    reconnect_attempts: int = Field(5, ge=1, le=100, description="Connection attempts before an error.")
    reconnect_backoff_s: float = Field(0.5, ge=0, le=60, description="First backoff; doubles per attempt (max 30 s).")


#: the keys of the old ``runtimes.ssh`` block that every host shared; each host has them now
SHARED_BEFORE = ("publish_timeout_s", "batch_files", "batch_bytes", "reconnect_attempts", "reconnect_backoff_s")

__all__ = ["SHARED_BEFORE", "SshJumpConfig", "SshRuntimeConfig"]
