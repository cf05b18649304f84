"""The SQLite index of stored pages, kept outside ``cache/web/``.

The files are the truth for content; the index remembers what a file is (which URL, when,
which backend) so that reuse and eviction need no directory scan, and keeps a tombstone per
evicted page so that read_file can name the URL to re-extract. WAL mode lets many processes
share one cache; every multi-row change is one transaction. Every SQLite (or OS) failure
leaves a method as ``webshelf.errors.CacheIndexError`` naming the index file (``cache.faults``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path

from webshelf.cache.faults import faults, index_faults
from webshelf.errors import CacheIndexError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    name           TEXT PRIMARY KEY,
    url            TEXT NOT NULL,
    final_url      TEXT,
    title          TEXT,
    sha256         TEXT NOT NULL,
    chars          INTEGER NOT NULL,
    lines          INTEGER NOT NULL,
    bytes          INTEGER NOT NULL,
    fetched_at     REAL NOT NULL,
    last_access    REAL NOT NULL,
    backend        TEXT,
    content_type   TEXT,
    url_key        TEXT NOT NULL DEFAULT '',
    original_chars INTEGER
);
CREATE TABLE IF NOT EXISTS evicted (
    name       TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    evicted_at REAL NOT NULL,
    reason     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    name  TEXT PRIMARY KEY,
    value REAL NOT NULL
);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS pages_by_key ON pages (url_key, fetched_at);
CREATE INDEX IF NOT EXISTS pages_by_fetched ON pages (fetched_at);
CREATE INDEX IF NOT EXISTS pages_by_access ON pages (last_access);
CREATE INDEX IF NOT EXISTS evicted_by_time ON evicted (evicted_at);
"""
_ADDED_COLUMNS = {"url_key": "TEXT NOT NULL DEFAULT ''", "original_chars": "INTEGER"}
TOMBSTONE_LIMIT = 100_000  # evicted-page rows kept for read_file's "re-extract <url>" hint


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
    url_key: str = ""
    original_chars: int | None = None  # set when the stored copy was cut at cache.max_file_chars


@dataclass(frozen=True)
class Tombstone:
    name: str
    url: str
    evicted_at: float
    reason: str


@dataclass(frozen=True)
class Totals:
    pages: int
    bytes: int
    oldest: float | None
    newest: float | None


_COLUMNS = [f.name for f in fields(PageRecord)]
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM pages"
# built once: a page's row is written with one prepared statement (SQLite caches it by its text)
_UPSERT = (f"INSERT INTO pages ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
           f"ON CONFLICT(name) DO UPDATE SET {', '.join(f'{c}=excluded.{c}' for c in _COLUMNS if c != 'name')}")


class PageIndex:
    """A small DAO over the SQLite file; one connection per instance (not shared across threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with faults(CacheIndexError, f"the cache index {path} cannot be opened", path):
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self._prepare()

    def _prepare(self) -> None:
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            have = {row[1] for row in self._db.execute("PRAGMA table_info(pages)")}
            for column, decl in _ADDED_COLUMNS.items():  # an index written before these columns existed
                if column not in have:
                    self._db.execute(f"ALTER TABLE pages ADD COLUMN {column} {decl}")
            self._db.executescript(_INDEXES)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "PageIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @index_faults
    def _one(self, sql: str, args: tuple = ()) -> PageRecord | None:
        row = self._db.execute(sql, args).fetchone()
        return PageRecord(*row) if row else None

    @index_faults
    def record(self, page: PageRecord) -> None:
        """Insert or refresh a page's row (same name = same content, so a refresh is safe)."""
        row = [getattr(page, c) for c in _COLUMNS]  # the field values as they are (asdict deep-copies each)
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(_UPSERT, row)
            self._db.execute("DELETE FROM evicted WHERE name = ?", (page.name,))

    @index_faults
    def get(self, name: str) -> PageRecord | None:
        return self._one(f"{_SELECT} WHERE name = ?", (name,))

    @index_faults
    def latest_for_key(self, url_key: str, since: float | None = None) -> PageRecord | None:
        """The newest stored copy of a URL (by reuse key), optionally fetched at or after ``since``."""
        return self._one(f"{_SELECT} WHERE url_key = ? AND fetched_at >= ? ORDER BY fetched_at DESC LIMIT 1",
                         (url_key, since if since is not None else float("-inf")))

    @index_faults
    def touch(self, name: str, when: float | None = None) -> None:
        """Mark a page as just used (extract or read), for least-recently-used eviction."""
        self._db.execute("UPDATE pages SET last_access = ? WHERE name = ?", (when or time.time(), name))

    @index_faults
    def count(self, counter: str, by: float = 1, *, touch: str | None = None) -> None:
        """Add to a named counter (cache hits and misses), starting the clock on first use;
        ``touch`` also marks that page as used, in the same transaction."""
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            if touch is not None:
                self._db.execute("UPDATE pages SET last_access = ? WHERE name = ?", (now, touch))
            self._db.execute("INSERT OR IGNORE INTO counters (name, value) VALUES ('since', ?)", (now,))
            self._db.execute("INSERT INTO counters (name, value) VALUES (?, ?) "
                             "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", (counter, by))

    @index_faults
    def counters(self) -> dict[str, float]:
        return dict(self._db.execute("SELECT name, value FROM counters"))

    @index_faults
    def reset_counters(self) -> None:
        self._db.execute("DELETE FROM counters")

    @index_faults
    def totals(self) -> Totals:
        pages, size, oldest, newest = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0), MIN(fetched_at), MAX(fetched_at) FROM pages").fetchone()
        return Totals(pages, size, oldest, newest)

    @index_faults
    def all(self) -> list[PageRecord]:
        return [PageRecord(*row) for row in self._db.execute(f"{_SELECT} ORDER BY fetched_at")]

    @index_faults
    def fetched_before(self, when: float, limit: int | None = None) -> list[PageRecord]:
        """Pages fetched before ``when``, oldest first (TTL expiry)."""
        sql = f"{_SELECT} WHERE fetched_at < ? ORDER BY fetched_at LIMIT ?"
        return [PageRecord(*row) for row in self._db.execute(sql, (when, -1 if limit is None else limit))]

    def least_recently_used(self) -> Iterator[PageRecord]:
        """Every page, least recently used first, read lazily (eviction stops early)."""
        with faults(CacheIndexError, f"the cache index {self.path}", self.path):
            for row in self._db.execute(f"{_SELECT} ORDER BY last_access, fetched_at"):
                yield PageRecord(*row)

    @index_faults
    def remove(self, records: Iterable[PageRecord], reason: str) -> list[PageRecord]:
        """Drop rows and leave tombstones, in one transaction; returns the rows actually dropped.

        A row whose ``last_access`` moved since it was read (another process just used it)
        is kept: eviction must not take a page out from under a fresh extract."""
        removed: list[PageRecord] = []
        now = time.time()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for rec in records:
                cur = self._db.execute("DELETE FROM pages WHERE name = ? AND last_access <= ?", (rec.name, rec.last_access))
                if cur.rowcount:
                    removed.append(rec)
                    self._db.execute("INSERT OR REPLACE INTO evicted (name, url, evicted_at, reason) VALUES (?, ?, ?, ?)",
                                     (rec.name, rec.url, now, reason))
            self._db.execute("DELETE FROM evicted WHERE name IN (SELECT name FROM evicted ORDER BY evicted_at DESC "
                             "LIMIT -1 OFFSET ?)", (TOMBSTONE_LIMIT,))
        return removed

    @index_faults
    def tombstone(self, name: str) -> Tombstone | None:
        row = self._db.execute("SELECT name, url, evicted_at, reason FROM evicted WHERE name = ?", (name,)).fetchone()
        return Tombstone(*row) if row else None
