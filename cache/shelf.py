"""The shelf: store a page's full text and record it in the index, as one step; find a
recent stored copy to reuse; run eviction passes.

This is the only write path into ``cache/web/``. The file is written atomically first and
indexed second, so a crash between the two leaves at worst an un-indexed file (which
``cache verify`` adopts), never an index row pointing at nothing. Writes and reuse hold the
cache lock shared and eviction holds it exclusively (``cache.lock``), so no pass can remove a
page between the moment a call decides to hand out its path and the moment it is marked used.
Every public method raises ``CacheError`` subclasses only (``cache.faults``): never a raw
``OSError`` or ``sqlite3.Error``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webshelf.cache.caps import cap_text, cap_utf8
from webshelf.cache.faults import faults
from webshelf.cache.index import PageIndex, PageRecord
from webshelf.cache.layout import CacheLayout, page_name
from webshelf.cache.lock import CacheLock
from webshelf.cache.store import open_page, write_bytes_hashed, write_text_hashed
from webshelf.cache.utf8 import Utf8Text
from webshelf.cache.urls import normalize_url
from webshelf.errors import CacheError, CacheUnavailableError, StoreError

if TYPE_CHECKING:  # eviction and verification load when used: a cache hit needs neither (issue 15's start-up)
    from webshelf.cache.evict import EvictionPolicy, PruneReport
    from webshelf.cache.verify import VerifyReport


@dataclass(frozen=True)
class StoredPage:
    path: Path
    record: PageRecord
    written: bool  # False when identical content was already on the shelf
    text: str | Utf8Text  # the text as stored (cut with a marker line when over the cap); Utf8Text if given one
    during: Any = None  # what put's ``during`` callback returned (the window rendered while the file was flushed)

    @property
    def cut(self) -> bool:
        """True when the stored copy was cut at the per-page cap (``cache.max_file_chars``)."""
        return self.record.original_chars is not None


@dataclass(frozen=True)
class CachedPage:
    """A stored copy young enough to reuse, with its text as stored."""

    path: Path
    record: PageRecord
    text: str


def _unusable(home: Path) -> str:
    return f"the cache at {CacheLayout(home).root} is unusable"


def count_lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def lines_from_newlines(text: str, newlines: int) -> int:
    """``count_lines(text)`` from the newline count the write already made (no pass over ``text``)."""
    return newlines + (0 if text.endswith("\n") or not text else 1)


_shared: dict[Path, tuple[int, int, "Shelf"]] = {}  # home -> (pid, index inode, shelf)
_shared_lock = threading.Lock()
SHARED_HOMES = 8  # homes one process keeps a shelf open for (older ones close when unused)


class Shelf:
    """One webshelf home's stored pages; safe to share between threads of one process."""

    @classmethod
    def shared(cls, home: Path) -> "Shelf":
        """This process's long-lived shelf for ``home`` (opened on first use).

        Opening SQLite and closing the last connection (a WAL checkpoint) cost milliseconds,
        more than a whole cache hit should; so calls share one shelf per home and process.
        A forked child, or a cache whose index was deleted or replaced, gets a new one.
        Do not ``close()`` a shared shelf."""
        home = Path(home)
        with _shared_lock, faults(CacheUnavailableError, _unusable(home), CacheLayout(home).root):
            entry = _shared.get(home)
            if entry is not None:
                pid, inode, shelf = entry
                try:
                    current = os.stat(shelf.layout.index_path).st_ino
                    alive = pid == os.getpid() and current == inode and os.path.isdir(shelf.web_dir)
                except OSError:
                    alive = False
                if alive:
                    return shelf
                del _shared[home]  # dropped, not closed: another thread may still be using it
            shelf = cls(home)
            _shared[home] = (os.getpid(), os.stat(shelf.layout.index_path).st_ino, shelf)
            while len(_shared) > SHARED_HOMES:
                del _shared[next(iter(_shared))]
            return shelf

    def __init__(self, home: Path) -> None:
        self.layout = CacheLayout(Path(home))
        with faults(CacheUnavailableError, _unusable(self.layout.home), self.layout.root):
            self.web_dir = self.layout.ensure()
            self.lock = CacheLock(self.layout.root / "lock")
            try:
                self.index = PageIndex(self.layout.index_path)
            except BaseException:
                self.lock.close()
                raise
        self.db_lock = threading.Lock()  # one SQLite connection, used by one thread at a time

    def close(self) -> None:
        self.index.close()
        self.lock.close()

    def __enter__(self) -> "Shelf":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, *, url: str, final_url: str | None, title: str | None, text: str | Utf8Text,
            backend: str | None, content_type: str | None, max_chars: int | None = None,
            original_chars: int | None = None, during: Callable[[StoredPage], Any] | None = None) -> StoredPage:
        """Store ``text`` for ``url`` (cut at ``max_chars`` with a marker line when longer;
        ``original_chars`` is the page's length when ``text`` is only its cleaned prefix).
        A ``Utf8Text`` is written as it is — no encoding, and cut from its bytes (``cap_utf8``).
        ``during(stored page)`` is called once the name is known, while the file is still being
        written and fsynced (for a ``Utf8Text`` over ``store.INLINE_WRITE_BYTES``; after the
        write for a smaller one or a str), and its result is the returned page's ``during``:
        the caller's own work overlaps the disk's where that pays. The page is
        not visible under its name, nor indexed, until ``put`` returns; an exception from
        ``during`` is raised after the page is stored;
        raises ``StoreError`` (disk full, permissions, index failure) with the cache intact."""
        with faults(StoreError, "the full text could not be stored", self.web_dir):
            page, failed = self._put(url=url, final_url=final_url, title=title, text=text, backend=backend,
                                     content_type=content_type, max_chars=max_chars,
                                     original_chars=original_chars, during=during)
        if failed:  # outside ``faults``: the callback's own error, not a store failure
            raise failed[0]
        return page

    def _put(self, *, url: str, final_url: str | None, title: str | None, text: str | Utf8Text,
             backend: str | None, content_type: str | None, max_chars: int | None,
             original_chars: int | None,
             during: Callable[[StoredPage], Any] | None) -> tuple[StoredPage, list[BaseException]]:
        key = normalize_url(url)
        original: int | None = None
        if max_chars is not None:
            cap = cap_utf8 if isinstance(text, Utf8Text) else cap_text
            text, original = cap(text, max_chars, original_chars)
        host = urlsplit(final_url or key).hostname
        with self.lock.shared():
            # one pass: (encode,) hash, write and count newlines chunk by chunk; the name follows from the hash
            name_for = lambda h: page_name(host, key, h)  # noqa: E731
            made: list[StoredPage] = []
            failed: list[BaseException] = []

            def stored_page(path: Path, written: bool, sha: str, size: int, newlines: int) -> None:
                if isinstance(text, Utf8Text):
                    text.note_newlines(newlines)
                    chars, lines = text.chars, text.lines
                else:
                    chars, lines = len(text), lines_from_newlines(text, newlines)
                now = time.time()
                record = PageRecord(
                    name=path.name, url=url, final_url=final_url, title=title, sha256=sha, chars=chars,
                    lines=lines, bytes=size, fetched_at=now, last_access=now, backend=backend,
                    content_type=content_type, url_key=key, original_chars=original,
                )
                page = StoredPage(path, record, written, text)
                if during is not None:  # while the file is still being flushed (write_bytes_hashed)
                    try:
                        page = StoredPage(path, record, written, text, during(page))
                    except Exception as exc:  # not a store failure: raised as it is once the page is stored
                        failed.append(exc)
                made.append(page)

            if isinstance(text, Utf8Text):
                write_bytes_hashed(self.web_dir, text.data, name_for, during=stored_page)
            else:
                stored_page(*write_text_hashed(self.web_dir, text, name_for))
            with self.db_lock:
                self.index.record(made[0].record)
        return made[0], failed

    def reuse(self, url: str, max_age: float, *, count: bool = True) -> CachedPage | None:
        """The newest stored copy of ``url`` fetched within ``max_age`` seconds, marked as used
        (and counted as a hit), or None (counted as a miss). A copy whose file vanished or
        changed size behind webshelf's back is not reused.

        ``count=False``: only look — nothing is counted or marked; a caller that then serves the
        copy calls ``mark_hit`` (under ``lock.shared()`` held across both, so no eviction pass
        runs between), one that does not leaves the counters as they were (the cached CLI path
        in core/surfaces/cli_cached.py falls back to the full path, which counts)."""
        key = normalize_url(url)
        with faults(CacheError, f"looking up a stored copy of {url}", self.web_dir), self.lock.shared():
            with self.db_lock:
                record = self.index.latest_for_key(key, since=time.time() - max_age)
            text = self._read(record) if record else None
            if not count:
                return None if text is None else CachedPage(self.web_dir / record.name, record, text)
            with self.db_lock:
                if text is None:
                    self.index.count("misses")
                    return None
                self.index.count("hits", touch=record.name)
        return CachedPage(self.web_dir / record.name, record, text)

    def mark_hit(self, hit: CachedPage) -> None:
        """Count ``hit`` (from ``reuse(count=False)``) as a hit and mark its page used, as
        ``reuse`` does."""
        with faults(CacheError, f"marking the stored copy of {hit.record.url} used", self.web_dir), \
                self.lock.shared(), self.db_lock:
            self.index.count("hits", touch=hit.record.name)

    def _read(self, record: PageRecord) -> str | None:
        try:
            f = open_page(self.web_dir / record.name)  # never blocks on a FIFO, never follows a symlink
        except OSError:
            return None
        with f:
            if os.fstat(f.fileno()).st_size != record.bytes:
                return None
            return f.read().decode("utf-8", errors="replace")

    def prune(self, policy: EvictionPolicy, *, protect: Collection[str] = (), dry_run: bool = False,
              max_removals: int | None = None, block: bool = True) -> PruneReport:
        """One eviction pass (``cache.evict.prune``)."""
        from webshelf.cache.evict import prune

        with faults(CacheError, "the eviction pass failed", self.layout.root):
            return prune(self, policy, protect=protect, dry_run=dry_run, max_removals=max_removals, block=block)

    def clear(self) -> PruneReport:
        """Remove every stored page (``cache.evict.clear``)."""
        from webshelf.cache.evict import clear

        with faults(CacheError, "clearing the cache failed", self.layout.root):
            return clear(self)

    def verify(self, *, repair: bool = False) -> "VerifyReport":
        """Compare index and directory (``cache.verify.verify``)."""
        from webshelf.cache.verify import verify

        with faults(CacheError, "verifying the cache failed", self.layout.root):
            return verify(self, repair=repair)
