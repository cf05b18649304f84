"""The shelf: store a page's full text and record it in the index, as one step.

This is the only write path into ``cache/web/``. The file is written atomically first and
indexed second, so a crash between the two leaves at worst an un-indexed file (which
``cache verify`` adopts or removes), never an index row pointing at nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cache.index import PageIndex, PageRecord
from cache.layout import CacheLayout, content_hash, page_name
from cache.store import write_page


@dataclass(frozen=True)
class StoredPage:
    path: Path
    record: PageRecord
    written: bool  # False when identical content was already on the shelf


class Shelf:
    """One webshelf home's stored pages; safe to share between threads of one process."""

    def __init__(self, home: Path) -> None:
        self.layout = CacheLayout(home)
        self.web_dir = self.layout.ensure()
        self.index = PageIndex(self.layout.index_path)
        self._lock = threading.Lock()

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> "Shelf":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, *, url: str, final_url: str | None, title: str | None, text: str,
            backend: str | None, content_type: str | None) -> StoredPage:
        """Store ``text`` for ``url``; raises OSError / sqlite3.Error with the cache intact."""
        data = text.encode("utf-8")
        sha = content_hash(data)
        name = page_name(urlsplit(final_url or url).hostname, url, sha)
        path, written = write_page(self.web_dir, name, data)
        now = time.time()
        record = PageRecord(
            name=name, url=url, final_url=final_url, title=title, sha256=sha, chars=len(text),
            lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1), bytes=len(data),
            fetched_at=now, last_access=now, backend=backend, content_type=content_type,
        )
        with self._lock:
            self.index.record(record)
        return StoredPage(path, record, written)
