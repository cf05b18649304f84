"""web_extract end to end against a real loopback server serving the test corpora (tests.corpus)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from webshelf.errors import InputError
from webshelf.core.extract import web_extract_sync
from webshelf.core.read import read_file
from tests import corpus
from tests.loopback import Response

FOOTER = "\n---\n[webshelf] Truncated page:"
CALL = re.compile(r'read_file path="(?P<path>[^"]+)" offset=(?P<offset>\d+) limit=(?P<limit>\d+)')
LONG_PAGES = ["library__re.html", "library__os.html", "whatsnew__3.11.html", "c-api__typeobj.html"]


def read_all(path: str, config, first: int, last: int) -> str:
    """Lines first..last via read_file, in 2,000-line pages, with the N| prefixes checked and removed."""
    out = []
    n = first
    while n <= last:
        chunk = read_file(path, n, min(2_000, last - n + 1), config=config)
        for line in chunk.splitlines():
            number, _, text = line.partition("|")
            assert int(number) == n
            out.append(text + "\n")
            n += 1
    return "".join(out)


@pytest.mark.parametrize("page", LONG_PAGES)
def test_long_page_is_truncated_within_budget_and_reconstructs_exactly(server, config, page):
    [r] = web_extract_sync([server.url(f"/pydocs/{page}")], config=config)
    assert r.ok and r.truncated and r.backend == "local"
    assert len(r.content) <= 15_000
    stored = Path(r.path).read_text(encoding="utf-8")
    assert (r.total_chars, r.total_lines) == (len(stored), stored.count("\n"))
    footer = r.content[r.content.index(FOOTER):]
    assert f"Full text: {r.path}\n" in footer
    call = CALL.search(footer)
    assert call["path"] == r.path
    first_omitted = int(call["offset"])
    last_omitted = int(re.search(r"Omitted: lines [\d,]+–([\d,]+)\.", footer).group(1).replace(",", ""))
    lines = stored.splitlines(keepends=True)
    head = "".join(lines[: first_omitted - 1])
    tail = "".join(lines[last_omitted:])
    assert r.content.startswith(head)
    before_footer = r.content[: r.content.index(FOOTER)]
    assert before_footer.endswith(tail)
    # shown head + omitted lines read back with read_file + shown tail == the stored text
    assert head + read_all(r.path, config, first_omitted, last_omitted) + tail == stored


def test_outline_line_numbers_point_at_the_headings(server, config):
    [r] = web_extract_sync([server.url("/pydocs/library__logging.html")], config=config)
    entries = re.findall(r"^  line ([\d,]+): (#+) ", r.content, re.M)
    assert len(entries) >= 3
    for number, hashes in entries:
        n = int(number.replace(",", ""))
        assert read_file(r.path, n, 1, config=config).startswith(f"{n}|{hashes} ")


def test_short_page_is_returned_whole_and_still_stored(server, config):
    url = server.route("/short.md", Response(b"# Short\n\nJust a few words.\n", headers={"Content-Type": "text/markdown"}))
    [r] = web_extract_sync([url], config=config)
    assert (r.content, r.truncated, r.title) == ("# Short\n\nJust a few words.\n", False, "Short")
    assert Path(r.path).read_text(encoding="utf-8") == r.content and oct(__import__("os").stat(r.path).st_mode & 0o777) == "0o644"


def test_same_content_reuses_the_file_and_changed_content_gets_a_new_one(server, config):
    body = {"text": b"version one\n"}
    url = server.route("/changing.txt", lambda _h: Response(body["text"], headers={"Content-Type": "text/plain"}))
    [a] = web_extract_sync([url], config=config)
    [b] = web_extract_sync([url], config=config, fresh=True)
    body["text"] = b"version two\n"
    [c] = web_extract_sync([url], config=config, fresh=True)
    assert not b.cached and a.path == b.path != c.path
    assert Path(a.path).read_text(encoding="utf-8") == "version one\n" and Path(c.path).read_text(encoding="utf-8") == "version two\n"


def test_char_limit_per_call_and_its_range(server, config):
    url = server.url("/pydocs/library__re.html")
    [r] = web_extract_sync([url], char_limit=4_000, config=config)
    assert r.truncated and len(r.content) <= 4_000
    with pytest.raises(InputError, match="allowed: 2,000 to 2,000,000"):
        web_extract_sync([url], char_limit=100, config=config)


def test_many_urls_with_failures_mixed_in_keep_order_and_fetch_duplicates_once(server, config):
    ok1 = server.route("/mixed/a.txt", Response(b"alpha\n", headers={"Content-Type": "text/plain"}))
    ok2 = server.url("/pydocs/library__sys.html")
    missing = server.url("/mixed/missing")
    binary = server.route("/mixed/img.png", Response(b"\x89PNG\r\n\x1a\n" + bytes(100), headers={"Content-Type": "image/png"}))
    refused = "http://127.0.0.1:9/closed"
    urls = [ok1, missing, "not a url", ok2, binary, ok1, refused]
    results = web_extract_sync(urls, config=config)
    assert [r.url for r in results] == urls
    assert [r.error.code if r.error else "ok" for r in results] == [
        "ok", "http_status", "invalid_url", "ok", "unsupported_content_type", "ok", "fetch_failed"]
    assert "HTTP 404" in results[1].error.message and "image/png" in results[4].error.message
    assert results[0].content == results[5].content == "alpha\n"
    assert server.hits["/mixed/a.txt"] == 1


def test_too_many_urls_is_one_clear_error(config):
    with pytest.raises(InputError, match="got 21 URLs; one call takes 1 to 20"):
        web_extract_sync([f"https://example.com/{i}" for i in range(21)], config=config)
    with pytest.raises(InputError, match="1 to 20"):
        web_extract_sync([], config=config)


def test_data_images_become_placeholders_in_the_pipeline(server, config):
    b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    html = (f"<html><head><title>Pics</title></head><body><main><h1>Pictures</h1><p>Some text about a dot, "
            f"long enough to be content.</p><p><img alt='A red dot' src='data:image/png;base64,{b64}'></p>"
            f"<p><img src='https://example.com/real.png' alt='real'></p></main></body></html>").encode()
    [r] = web_extract_sync([server.route("/pics.html", Response(html))], config=config)
    assert "[IMAGE: A red dot]" in r.content and "base64" not in r.content
    assert "https://example.com/real.png" in r.content


def test_json_is_pretty_printed_in_a_fence_and_charsets_are_honoured(server, config):
    j = server.route("/data.json", Response(b'{"k": [1, "\xc3\xa9"]}', headers={"Content-Type": "application/json"}))
    latin = server.route("/latin.txt", Response("café naïve\n".encode("latin-1"), headers={"Content-Type": "text/plain; charset=iso-8859-1"}))
    [rj, rl] = web_extract_sync([j, latin], config=config)
    assert rj.content == '```json\n{\n  "k": [\n    1,\n    "é"\n  ]\n}\n```\n'
    assert rl.content == "café naïve\n"


def test_a_broken_cache_still_returns_the_window_with_a_note_and_no_path(server, tmp_path):
    from webshelf.core.config import Config

    home = tmp_path / "brokenhome"
    home.mkdir()
    (home / "cache").write_text("not a directory")
    config = Config().with_home(home)
    config.web.allow_private = True  # the loopback server
    [r] = web_extract_sync([server.url(f"/pydocs/{LONG_PAGES[0]}")], config=config)
    assert r.ok and r.path is None and r.truncated and len(r.content) <= 15_000
    assert any("could not be stored" in n or "unusable" in n for n in r.notes)
    assert "read_file" not in r.content and "Full text: not stored" in r.content
    assert (home / "cache").read_text() == "not a directory"  # nothing damaged


def test_all_long_pydocs_pages_stay_within_budget(server, config):
    pages = corpus.pydocs_names()[:12]
    results = web_extract_sync([server.url(f"/pydocs/{p}") for p in pages], config=config)
    for r in results:
        assert r.ok, r.error
        assert len(r.content) <= 15_000
        assert max(map(len, Path(r.path).read_text(encoding="utf-8").split("\n"))) <= 1_000


def test_malformed_urls_are_per_url_errors_and_the_others_still_succeed(server, config):
    ok = server.route("/malformed/ok.txt", Response(b"fine\n", headers={"Content-Type": "text/plain"}))
    results = web_extract_sync(["http://[::1", ok, "http://example.com:abc/"], config=config)
    assert [r.error.code if r.error else r.content for r in results] == ["invalid_url", "fine\n", "invalid_url"]


def test_a_meta_charset_of_utf16_in_an_ascii_page_means_utf8(server, config):
    html = ('<html><head><meta charset="utf-16"><title>Docs</title></head><body><main><h1>Install</h1>'
            '<p>Run pip install webshelf — then read.</p></main></body></html>').encode("utf-8")
    [r] = web_extract_sync([server.route("/meta16.html", Response(html, headers={"Content-Type": "text/html"}))],
                           config=config)
    assert "Run pip install webshelf — then read." in r.content


@pytest.mark.parametrize("cap", [60_000_000, 30_000])
def test_the_window_rendered_while_the_page_is_flushed_is_the_one_rendered_after(tmp_path, monkeypatch, cap):
    """_finish renders the window inside Shelf.put (overlapping the fsync) and uses it only
    when its inputs are the final ones: the content equals a render of the stored page, and the
    page is rendered once; a cut page (cap) carries the cut note either way."""
    import time

    from webshelf.cache.shelf import Shelf
    from webshelf.core import extract
    from webshelf.core.config import Config
    from webshelf.core.models import Page

    config = Config.model_validate({"cache": {"max_file_chars": cap}}).with_home(tmp_path)
    body = "".join(f"## Part {i} é\n\n" + "word " * 40 + "\n\n```\n# code\n```\n\n" for i in range(2_000))
    page = Page(url="https://example.com/big", final_url="https://example.com/big", markdown=body)
    calls = []
    real = extract._window
    monkeypatch.setattr(extract, "_window", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    with Shelf(tmp_path) as shelf:
        result = extract._finish(page, shelf, None, 15_000, config, "local", time.perf_counter())
    assert len(calls) == 1 and result.truncated and result.path
    stored = Path(result.path).read_text(encoding="utf-8")
    cut = extract._cut_note(len(body) if len(body) > cap else None, config)
    assert (cut is not None) == (cap < len(body)) and result.notes == ([cut] if cut else [])
    assert result.content == real(stored, 15_000, config, path=result.path, cut_note=cut, notes=result.notes)[1]
