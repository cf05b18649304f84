"""The SQLite index of stored pages, kept outside ``cache/web/``.

The files are the truth for content; the index remembers what a file is (which URL, when,
which backend) so that read_file can name the URL to re-extract after eviction, and so that
reuse and eviction need no directory scan. WAL mode lets many processes share one cache.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    name         TEXT PRIMARY KEY,
    url          TEXT NOT NULL,
    final_url    TEXT,
    title        TEXT,
    sha256       TEXT NOT NULL,
    chars        INTEGER NOT NULL,
    lines        INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    fetched_at   REAL NOT NULL,
    last_access  REAL NOT NULL,
    backend      TEXT,
    content_type TEXT
);
CREATE INDEX IF NOT EXISTS pages_by_url ON pages (url, fetched_at);
"""


@dataclass
class PageRecord:
    """One stored page, as the index knows it."""

    name: str
    url: str
    final_url: str | None
    title: str | None
    sha256: str
    chars: int
    lines: int
    bytes: int
    fetched_at: float
    last_access: float
    backend: str | None
    content_type: str | None


_COLUMNS = [f.name for f in fields(PageRecord)]


class PageIndex:
    """A small DAO over the SQLite file; one connection per instance (not shared across threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "PageIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, page: PageRecord) -> None:
        """Insert or refresh a page's row (same name = same content, so a refresh is safe)."""
        row = asdict(page)
        cols = ", ".join(_COLUMNS)
        marks = ", ".join(f":{c}" for c in _COLUMNS)
        updates = ", ".join(f"{c}=excluded.{c}" for c in _COLUMNS if c != "name")
        self._db.execute(f"INSERT INTO pages ({cols}) VALUES ({marks}) ON CONFLICT(name) DO UPDATE SET {updates}", row)

    def get(self, name: str) -> PageRecord | None:
        cur = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM pages WHERE name = ?", (name,))
        row = cur.fetchone()
        return PageRecord(*row) if row else None

    def latest_for_url(self, url: str) -> PageRecord | None:
        cur = self._db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM pages WHERE url = ? ORDER BY fetched_at DESC LIMIT 1", (url,)
        )
        row = cur.fetchone()
        return PageRecord(*row) if row else None

    def touch(self, name: str, when: float | None = None) -> None:
        """Mark a page as just used (extract or read), for least-recently-used eviction."""
        self._db.execute("UPDATE pages SET last_access = ? WHERE name = ?", (when or time.time(), name))
