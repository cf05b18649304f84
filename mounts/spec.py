"""``MountSpec``: a host directory that a sandbox sees at the very same absolute path.

The footer of a truncated page names a host path; an agent inside a sandbox must be able to
use that path unchanged. So there is no host→sandbox path translation anywhere in webshelf:
a mount is one absolute path, read-only by default, and "is this path published?" is a
lexical question about that one directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from webshelf.cache.layout import CacheLayout


@dataclass(frozen=True)
class MountSpec:
    """One directory shown inside a sandbox at ``path`` (host path = sandbox path)."""

    path: Path
    read_only: bool = True

    def __post_init__(self) -> None:
        raw = Path(self.path)
        if not raw.is_absolute():
            raise ValueError(f"mount path {str(raw)!r} must be absolute (host path = sandbox path)")
        object.__setattr__(self, "path", Path(os.path.normpath(raw)))

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` names an entry directly inside the mounted directory."""
        p = Path(os.path.normpath(path))
        return p.is_absolute() and p.parent == self.path and p.name not in ("", ".", "..")

    def outside(self, paths: list[str]) -> list[str]:
        return [str(p) for p in paths if not self.contains(p)]


def cache_mount(home: str | os.PathLike[str]) -> MountSpec:
    """The read-only mount of a webshelf home's ``cache/web``, created first if missing.

    The directory must exist before a sandbox starts: a bind mount of a missing directory
    fails (docker would even create it root-owned), and binding the whole directory rather
    than single files is what keeps atomically replaced pages visible.
    """
    web = CacheLayout(Path(home)).ensure()
    return MountSpec(web, read_only=True)
