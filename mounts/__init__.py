"""Making ``cache/web`` visible in sandboxes: ``MountSpec`` (host path = sandbox path,
read-only), the publish/retract contract, and the transfer seam for sync runtimes."""

from webshelf.mounts.publish import PublishProblem, PublishTarget, publish_all, retract_all
from webshelf.mounts.spec import MountSpec, cache_mount
from webshelf.mounts.sync import RemoteFile, SyncTransport

__all__ = ["MountSpec", "PublishProblem", "PublishTarget", "RemoteFile", "SyncTransport",
           "cache_mount", "publish_all", "retract_all"]
