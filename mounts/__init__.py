"""Making ``cache/web`` visible in sandboxes: ``MountSpec`` (host path = sandbox path,
read-only), the publish/retract contract, and the transfer seam for sync runtimes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webshelf._lazy import lazy_getattr

# name -> module; imported on first use (PEP 562), so importing one submodule — a runtime's
# config model, which every config load needs — does not import the publish and sync machinery (issue 15)
_LAZY = {
    "PublishProblem": "webshelf.mounts.publish",
    "PublishTarget": "webshelf.mounts.publish",
    "publish_all": "webshelf.mounts.publish",
    "retract_all": "webshelf.mounts.publish",
    "MountSpec": "webshelf.mounts.spec",
    "cache_mount": "webshelf.mounts.spec",
    "RemoteFile": "webshelf.mounts.sync",
    "SyncTransport": "webshelf.mounts.sync",
}

if TYPE_CHECKING:
    from webshelf.mounts.publish import PublishProblem, PublishTarget, publish_all, retract_all
    from webshelf.mounts.spec import MountSpec, cache_mount
    from webshelf.mounts.sync import RemoteFile, SyncTransport

__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
