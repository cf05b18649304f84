"""Cache internals: reuse keys, the per-page cap, TTL and LRU eviction, tombstones, removed paths."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from webshelf.cache.caps import cap_text
from webshelf.cache.evict import EXPIRED, OVER_CAP, EvictionPolicy
from webshelf.cache.shelf import Shelf
from webshelf.cache.store import stale_temp_files
from webshelf.cache.urls import normalize_url

BIG = EvictionPolicy(ttl=7 * 86_400, max_total_bytes=1 << 30)


@pytest.mark.parametrize("raw, key", [
    ("HTTP://Example.COM/a#intro", "http://example.com/a"),
    ("https://example.com:443/a?b=1", "https://example.com/a?b=1"),
    ("http://example.com:80", "http://example.com/"),
    ("http://example.com:8080/A/B?Q=1#x", "http://example.com:8080/A/B?Q=1"),
    ("http://user:pw@Host.example/", "http://user:pw@host.example/"),
    ("http://[::1]:80/x", "http://[::1]/x"),
])
def test_normalize_url_changes_only_what_cannot_change_the_response(raw, key):
    assert normalize_url(raw) == key


def test_cap_text_cuts_at_a_line_boundary_with_a_marker_and_stays_within_the_cap():
    text = "".join(f"line {i:06d} " + "z" * 80 + "\n" for i in range(5_000))
    stored, original = cap_text(text, 100_000)
    assert original == len(text) and len(stored) <= 100_000
    body, marker = stored.rsplit("\n[", 1)[0] + "\n", stored.splitlines()[-1]
    assert text.startswith(body) and body.endswith("\n")
    assert "cut at 100,000 of" in marker and "cache.max_file_chars" in marker
    assert cap_text("short\n", 100_000) == ("short\n", None)


def put(shelf: Shelf, url: str, text: str, **kw):
    return shelf.put(url=url, final_url=url, title=None, text=text, backend="test", content_type="text/plain", **kw)


def age(shelf: Shelf, name: str, *, fetched: float | None = None, used: float | None = None) -> None:
    """Move a page back in time (the index is the clock eviction reads)."""
    with shelf.db_lock:
        if fetched is not None:
            shelf.index._db.execute("UPDATE pages SET fetched_at = ? WHERE name = ?", (fetched, name))
        if used is not None:
            shelf.index._db.execute("UPDATE pages SET last_access = ? WHERE name = ?", (used, name))


def test_reuse_is_keyed_by_normalised_url_and_respects_max_age(home):
    with Shelf(home) as shelf:
        stored = put(shelf, "http://example.com/a", "hello\n")
        hit = shelf.reuse("HTTP://EXAMPLE.com:80/a#top", max_age=60)
        assert hit and hit.path == stored.path and hit.text == "hello\n"
        age(shelf, stored.record.name, fetched=time.time() - 120)
        assert shelf.reuse("http://example.com/a", max_age=60) is None
        counters = shelf.index.counters()
        assert (counters["hits"], counters["misses"]) == (1, 1)


def test_reuse_skips_a_copy_deleted_or_changed_behind_our_back(home):
    with Shelf(home) as shelf:
        stored = put(shelf, "http://example.com/a", "hello\n")
        stored.path.write_text("changed size\n")
        assert shelf.reuse("http://example.com/a", max_age=60) is None
        stored.path.unlink()
        assert shelf.reuse("http://example.com/a", max_age=60) is None


def test_ttl_removes_old_pages_and_leaves_tombstones(home):
    with Shelf(home) as shelf:
        old = put(shelf, "http://example.com/old", "old\n")
        new = put(shelf, "http://example.com/new", "new\n")
        age(shelf, old.record.name, fetched=time.time() - 8 * 86_400)
        report = shelf.prune(BIG)
        assert [(r.name, why) for r, why in report.removed] == [(old.record.name, EXPIRED)]
        assert not old.path.exists() and new.path.exists()
        assert shelf.index.get(old.record.name) is None
        assert shelf.index.tombstone(old.record.name).url == "http://example.com/old"


def test_size_cap_evicts_least_recently_used_until_under_90_percent(home):
    with Shelf(home) as shelf:
        pages = [put(shelf, f"http://example.com/{i}", f"{i}\n" + "x" * 99_997) for i in range(12)]
        now = time.time()
        for i, p in enumerate(pages):  # page 5 was read recently, the rest in order
            age(shelf, p.record.name, used=now - 1000 + (500 if i == 5 else i))
        policy = EvictionPolicy(ttl=0, max_total_bytes=1_000_000)
        report = shelf.prune(policy)
        gone = {r.name for r, why in report.removed if why == OVER_CAP}
        assert gone == {p.record.name for p in pages[:3]}  # 1.2 MB → ≤ 0.9 MB: three oldest uses
        assert shelf.index.totals().bytes <= 900_000
        assert pages[5].path.exists()


def test_protected_pages_survive_even_alone_over_the_cap_until_a_later_pass(home):
    with Shelf(home) as shelf:
        big = put(shelf, "http://example.com/big", "b" * 1_500_000)
        policy = EvictionPolicy(ttl=0, max_total_bytes=1 << 20)
        assert shelf.prune(policy, protect={big.record.name}).removed == []
        assert big.path.exists()
        assert [r.name for r, _ in shelf.prune(policy).removed] == [big.record.name]


def test_a_pass_reports_exactly_the_page_files_it_removed(home):
    """``PruneReport.paths`` is what a caller retracts from its sandboxes (there is no hooks bus)."""
    with Shelf(home) as shelf:
        old = put(shelf, "http://example.com/old", "old\n")
        young = put(shelf, "http://example.com/young", "young\n")
        age(shelf, old.record.name, fetched=0)
        first = shelf.prune(BIG)
        second = shelf.prune(BIG)  # nothing left to remove
    assert first.paths == [old.path] and not old.path.exists() and young.path.exists()
    assert second.paths == []


def test_bounded_pass_stops_early_and_dry_run_removes_nothing(home):
    with Shelf(home) as shelf:
        pages = [put(shelf, f"http://example.com/{i}", f"{i}\n") for i in range(10)]
        for p in pages:
            age(shelf, p.record.name, fetched=0)
        dry = shelf.prune(BIG, dry_run=True)
        assert len(dry.removed) == 10 and all(p.path.exists() for p in pages)
        first = shelf.prune(BIG, max_removals=4)
        assert (len(first.removed), first.complete) == (4, False)
        assert len(shelf.prune(BIG).removed) == 6


def test_a_busy_lock_makes_an_opportunistic_pass_skip_instead_of_waiting(home):
    with Shelf(home) as shelf, Shelf(home) as other:
        with other.lock.exclusive() as held:
            assert held
            assert shelf.prune(BIG, block=False).skipped


def test_stale_temp_files_of_dead_writers_are_found_and_swept(home):
    with Shelf(home) as shelf:
        dead = shelf.web_dir / ".tmp-999999999-abcd-x.md"  # no such pid
        mine = shelf.web_dir / f".tmp-{os.getpid()}-abcd-y.md"  # a live writer: this process
        ancient = shelf.web_dir / f".tmp-{os.getpid()}-abcd-z.md"
        for p in (dead, mine, ancient):
            p.write_text("partial")
        os.utime(ancient, (0, 0))
        assert set(stale_temp_files(shelf.web_dir)) == {dead, ancient}
        report = shelf.prune(BIG)
        assert set(report.temp_removed) == {dead, ancient} and mine.exists()


def test_clear_removes_everything_but_keeps_tombstones(home):
    with Shelf(home) as shelf:
        a = put(shelf, "http://example.com/a", "a\n")
        shelf.reuse("http://example.com/a", 60)
        report = shelf.clear()
        assert report.paths == [a.path] and not a.path.exists()
        assert shelf.index.totals().pages == 0 and shelf.index.counters() == {}
        assert shelf.index.tombstone(a.record.name).url == "http://example.com/a"


def test_writing_again_revives_an_evicted_page(home):
    with Shelf(home) as shelf:
        a = put(shelf, "http://example.com/a", "a\n")
        shelf.clear()
        again = put(shelf, "http://example.com/a", "a\n")
        assert again.path == a.path and again.path.exists() and shelf.index.tombstone(a.record.name) is None


def test_an_index_from_before_these_columns_is_upgraded_in_place(home):
    import sqlite3

    (home / "cache" / "web").mkdir(parents=True)
    db = sqlite3.connect(home / "cache" / "index.sqlite")
    db.execute("CREATE TABLE pages (name TEXT PRIMARY KEY, url TEXT NOT NULL, final_url TEXT, title TEXT, "
               "sha256 TEXT NOT NULL, chars INTEGER NOT NULL, lines INTEGER NOT NULL, bytes INTEGER NOT NULL, "
               "fetched_at REAL NOT NULL, last_access REAL NOT NULL, backend TEXT, content_type TEXT)")
    db.commit()
    db.close()
    with Shelf(home) as shelf:
        stored = put(shelf, "http://example.com/a", "a\n")
        assert shelf.index.get(stored.record.name).url_key == "http://example.com/a"
