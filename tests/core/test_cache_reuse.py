"""The extract pipeline with the cache: reuse without network, fresh, caps, eviction, read_file."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

from webshelf.cache.layout import content_hash, page_name
from webshelf.cache.shelf import Shelf
from webshelf.cache.urls import normalize_url
from webshelf.core.clean import clean_markdown
from webshelf.errors import PageNotFoundError
from webshelf.core.extract import web_extract_sync
from webshelf.core.read import read_file
from webshelf.core.truncate import render
from tests.loopback import Response

MD = {"Content-Type": "text/markdown; charset=utf-8"}


def long_doc(sections: int = 60, tag: str = "") -> str:
    return "".join(f"## Section {i}{tag}\n\n" + "".join(f"text {i}.{j} " + "w" * 70 + "\n" for j in range(12)) + "\n"
                   for i in range(sections))


def serve(server, body: str) -> str:
    return server.route(f"/reuse/{uuid.uuid4().hex}", Response(body.encode(), headers=MD))


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_second_extract_is_served_from_the_cache_without_a_request(server, config):
    url = serve(server, long_doc())
    first = web_extract_sync([url], config=config)[0]
    assert first.ok and not first.cached and server.hits[path_of(url)] == 1
    second = web_extract_sync([url], config=config)[0]
    assert second.cached and server.hits[path_of(url)] == 1
    assert (second.path, second.total_lines) == (first.path, first.total_lines)
    # the same window; only the "served from the stored copy" note is added, inside the budget
    stored, limit = Path(first.path).read_text(), config.web.extract_char_limit
    assert first.content == render(stored, limit, path=first.path).content
    assert second.content == render(stored, limit, path=second.path, notes=second.notes).content
    assert f"Note: {second.notes[0]}\n" in second.content and len(second.content) <= limit


def test_reuse_ignores_url_spelling_and_the_char_limit(server, config):
    url = serve(server, long_doc())
    first = web_extract_sync([url], config=config)[0]
    host_upper = url.replace("http://127.0.0.1", "HTTP://127.0.0.1") + "#section-3"
    again = web_extract_sync([host_upper], config=config, char_limit=5_000)[0]
    assert again.cached and again.path == first.path and server.hits[path_of(url)] == 1
    assert len(again.content) <= 5_000 and again.url == host_upper


def test_fresh_bypasses_the_cache(server, config):
    url = serve(server, long_doc())
    web_extract_sync([url], config=config)
    again = web_extract_sync([url], config=config, fresh=True)[0]
    assert not again.cached and server.hits[path_of(url)] == 2


def test_max_age_zero_disables_reuse(server, config):
    config.cache.max_age = 0
    url = serve(server, "# small\n")
    web_extract_sync([url], config=config)
    assert not web_extract_sync([url], config=config)[0].cached and server.hits[path_of(url)] == 2


def test_a_stored_copy_older_than_max_age_is_fetched_again(server, config):
    url = serve(server, "# small\n")
    first = web_extract_sync([url], config=config)[0]
    shelf = Shelf.shared(config.home)
    with shelf.db_lock:
        shelf.index._db.execute("UPDATE pages SET fetched_at = fetched_at - 901")
    again = web_extract_sync([url], config=config)[0]
    assert not again.cached and again.path == first.path and server.hits[path_of(url)] == 2


def test_stored_copy_over_max_file_chars_is_cut_and_the_footer_says_so(server, config):
    config.cache.max_file_chars = 50_000
    url = serve(server, long_doc(120))
    for attempt in ("fetched", "cached"):
        result = web_extract_sync([url], config=config)[0]
        assert result.cached == (attempt == "cached")
        assert len(result.content) <= config.web.extract_char_limit
        footer = result.content[result.content.index("\n---\n[webshelf]"):]
        assert "Stored copy cut at 50,000 characters (cache.max_file_chars)" in footer
        assert any("cache.max_file_chars" in n for n in result.notes)
        stored = Path(result.path).read_text()
        assert len(stored) <= 50_000 and stored.splitlines()[-1].startswith("[webshelf: the stored copy stops here")
        assert result.total_chars == len(stored)


def test_opportunistic_eviction_keeps_the_cache_under_the_cap_but_never_this_calls_pages(server, config):
    config.cache.max_total_bytes = 1 << 20
    handed_out: list[Path] = []
    urls = [serve(server, long_doc(40, tag=f" v{i}")) for i in range(30)]  # ≈ 40 KB each
    for i in range(0, 30, 5):
        results = web_extract_sync(urls[i:i + 5], config=config)
        assert all(Path(r.path).exists() for r in results)
        handed_out += [Path(r.path) for r in results]
    shelf = Shelf.shared(config.home)
    assert shelf.index.totals().bytes <= 1 << 20
    evicted = [p for p in handed_out if not p.exists()]
    assert evicted
    gone = evicted[0]
    with pytest.raises(PageNotFoundError) as err:
        read_file(gone, config=config)
    assert "re-extract it with web_extract([" in err.value.message and "size cap" in err.value.message
    assert err.value.context["url"] in urls


def test_read_file_marks_a_page_as_used(server, config):
    url = serve(server, long_doc())
    result = web_extract_sync([url], config=config)[0]
    shelf = Shelf.shared(config.home)
    name = Path(result.path).name
    with shelf.db_lock:
        shelf.index._db.execute("UPDATE pages SET last_access = 5 WHERE name = ?", (name,))
    read_file(result.path, 10, 5, config=config)
    with shelf.db_lock:
        assert shelf.index.get(name).last_access > 1_000_000


def test_files_deleted_or_added_behind_our_back_never_crash_extract(server, config):
    url = serve(server, long_doc())
    first = web_extract_sync([url], config=config)[0]
    os.unlink(first.path)
    (Path(first.path).parent / "notes.md").write_text("someone else's file\n")
    os.mkdir(Path(first.path).parent / "a-dir.md")
    again = web_extract_sync([url], config=config)[0]
    assert again.ok and not again.cached and again.path == first.path and Path(again.path).is_file()
    assert web_extract_sync([url], config=config)[0].cached


def test_a_planted_symlink_at_the_next_page_name_is_replaced_not_followed(server, config, tmp_path):
    body = long_doc(tag=" symlink")
    url = serve(server, body)
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch\n")
    web_dir = config.home / "cache" / "web"
    web_dir.mkdir(parents=True, exist_ok=True)
    key = normalize_url(url)
    text = clean_markdown(body, config.web.max_line_chars)
    planted = web_dir / page_name("127.0.0.1", key, content_hash(text))
    planted.symlink_to(victim)
    result = web_extract_sync([url], config=config)[0]
    assert result.ok and result.path == str(planted)
    assert victim.read_text() == "do not touch\n"
    assert not planted.is_symlink() and planted.read_text() == text


def test_cache_hit_output_matches_footer_contract(server, config):
    url = serve(server, long_doc())
    web_extract_sync([url], config=config)
    hit = web_extract_sync([url], config=config, char_limit=4_000)[0]
    call = re.search(r'read_file path="([^"]+)" offset=(\d+)', hit.content)
    assert call and call[1] == hit.path
    assert read_file(call[1], int(call[2]), 1, config=config).startswith(f"{call[2]}|")


def test_a_page_cleaned_only_up_to_the_cap_still_shows_its_real_tail_when_storing_fails(server, config, monkeypatch):
    """clean_for_store cleans only the storable prefix; if the store then fails, nothing is kept
    to read back, so the windows must come from the whole page (its real last lines)."""
    from webshelf.cache.shelf import Shelf
    from webshelf.errors import StoreError

    config.cache.max_file_chars = 10_000
    body = "".join(f"line {i} of the long page\n" for i in range(20_000)) + "THE REAL LAST LINE\n"
    url = server.route("/cap/fails.md", Response(body.encode(), headers={"Content-Type": "text/markdown"}))

    def fail(self, **kw):
        raise StoreError("the full text could not be stored: disk full (test)")

    monkeypatch.setattr(Shelf, "put", fail)
    [r] = web_extract_sync([url], config=config, fresh=True)
    assert r.ok and r.path is None and r.truncated
    assert "THE REAL LAST LINE" in r.content and f"{20_001:,} lines" in r.content
