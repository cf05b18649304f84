"""The old shape of ``runtimes:`` (one block per kind, SSH hosts under ``ssh.hosts``) → the new one.

Until issue 13, ``runtimes:`` had a fixed block per kind — ``local``, ``docker``, ``modal`` and
``ssh: {hosts: {web1: …}, batch_files: …}`` opened as ``ssh:web1``. Now every key is a named
instance with a ``type`` (or a shared setting: ``publish_timeout_s``, ``sync``). A file in the old
shape would otherwise fail with "missing key type"; instead the error shows the YAML to write
for each old block, with the user's own values moved to where they go now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webshelf.errors import ConfigError
from webshelf.runtimes.ssh.config import SHARED_BEFORE

OLD_KINDS = ("local", "docker", "modal", "ssh")
SYNC_KEYS = ("debounce_s", "max_wait_s", "rescan_interval_s")


def _old_blocks(runtimes: dict[str, Any]) -> list[str]:
    """The keys of ``runtimes`` that are old-shape blocks: a kind's name without ``type``."""
    old = []
    for name in OLD_KINDS:
        if name not in runtimes:
            continue
        block = runtimes[name]
        if block is None and name in ("local", "docker"):
            continue  # `local:` with nothing under it: the default instance, as in the new shape
        if block is None or (isinstance(block, dict) and "type" not in block):
            old.append(name)
    return old


def new_shape(runtimes: dict[str, Any], old: list[str]) -> dict[str, Any]:
    """The ``runtimes:`` blocks to write instead of the ``old`` ones."""
    out: dict[str, Any] = {}
    for name in old:
        block = dict(runtimes[name] or {})
        if name != "ssh":
            out[name] = {"type": name, **block}
            continue
        sync = {k: block.pop(k) for k in SYNC_KEYS if k in block}
        shared = {k: block.pop(k) for k in SHARED_BEFORE if k in block}
        hosts = block.pop("hosts", None) or {}
        if sync:
            out["sync"] = sync
        for host, settings in (hosts.items() if isinstance(hosts, dict) else []):
            out[str(host)] = {"type": "ssh", **(settings if isinstance(settings, dict) else {}), **shared}
        if not hosts:
            out["web1"] = {"type": "ssh", "host": "web1.example.com", **shared}
    return out


def check_old_shape(data: dict[str, Any], file: Path) -> None:
    """Raise a ConfigError that shows the new shape when ``data['runtimes']`` has old blocks."""
    runtimes = data.get("runtimes")
    if not isinstance(runtimes, dict) or not (old := _old_blocks(runtimes)):
        return
    import yaml  # only for this error message; a config without old blocks never loads it

    shown = yaml.safe_dump({"runtimes": new_shape(runtimes, old)}, sort_keys=False, default_flow_style=False,
                           allow_unicode=True)
    keys = ", ".join(f"runtimes.{name}" for name in old)
    ssh = (" An SSH host is an instance of type ssh, opened by its own name (--runtime web1, not ssh:web1); "
           "webshelf sync's timing is under runtimes.sync." if "ssh" in old else "")
    raise ConfigError(
        f"{file}: {keys}: this is the old shape of runtimes: (a block per kind, without type). runtimes: now holds "
        f"named instances, each with a type (local, docker, ssh, modal) and that type's options, beside the shared "
        f"settings publish_timeout_s and sync.{ssh} Write instead:\n\n{shown}",
        path=str(file), key=f"runtimes.{old[0]}")


__all__ = ["check_old_shape", "new_shape"]
