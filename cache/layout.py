"""Where things live under ``<home>/cache/`` and how stored pages are named.

Only stored ``.md`` pages go in ``cache/web/`` — that directory is what sandboxes see — so
the index and locks live beside it in ``cache/``. A page's name carries a hash of its URL
and of its content: the same content always maps to the same file, and changed content to a
new file, so a path handed out in an earlier footer stays valid until eviction.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from webshelf.cache.faults import faults
from webshelf.errors import CacheUnavailableError

PAGE_SUFFIX = ".md"
TEMP_PREFIX = ".tmp-"
_SLUG_UNSAFE = re.compile(r"[^a-z0-9.-]+")


def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


def content_hash(data: bytes | str) -> str:
    """sha256 of the stored bytes (text is hashed as UTF-8; pass bytes to skip a re-encode)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def host_slug(host: str | None) -> str:
    """A filesystem- and shell-friendly form of the host (no slashes, no leading dot)."""
    slug = _SLUG_UNSAFE.sub("-", (host or "page").lower()).strip(".-")
    return slug[:60] or "page"


def page_name(host: str | None, url: str, sha256: str) -> str:
    return f"{host_slug(host)}-{url_hash(url)}-{sha256[:16]}{PAGE_SUFFIX}"


@dataclass(frozen=True)
class CacheLayout:
    """The paths of one webshelf home's cache."""

    home: Path

    @property
    def root(self) -> Path:
        return self.home / "cache"

    @property
    def web_dir(self) -> Path:
        return self.root / "web"

    @property
    def index_path(self) -> Path:
        return self.root / "index.sqlite"

    def symlinked_dir(self) -> Path | None:
        """``cache`` or ``cache/web`` when it is a symlink (or not a directory), else None.

        Readers check this before trusting a path inside: a symlinked ``cache/web`` would let
        ``read_file`` read wherever the link points, outside the shelf."""
        for d in (self.root, self.web_dir):
            try:
                st = os.lstat(d)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                return d
        return None

    def ensure(self) -> Path:
        """Create ``cache/web`` (0755) if needed and refuse a symlinked or non-directory one.

        Any OS failure (permissions, a full or read-only disk) is a ``CacheUnavailableError``.
        """
        with faults(CacheUnavailableError, f"the cache directory {self.web_dir} cannot be created", self.root):
            os.makedirs(self.home, 0o755, exist_ok=True)  # parents too; the home itself may be a symlink
            for d in (self.root, self.web_dir):
                try:
                    os.mkdir(d, 0o755)
                except FileExistsError:
                    pass
                st = os.lstat(d)
                if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(f"{d} must be a real directory (found a symlink or a file); move it away")
            os.chmod(self.web_dir, 0o755)
        return self.web_dir
