"""search_page: matching lines with context, numbered like read_file, confined and bounded."""

from __future__ import annotations

import os

import pytest

from webshelf.cache.shelf import Shelf
from webshelf.errors import InputError, PageNotFoundError, PathOutsideCacheError
from webshelf.core.read import read_file
from webshelf.core.search_page import MAX_RESULTS, SHOWN_LINE_CHARS, search_page


def store(config, text: str, url: str = "https://example.com/a"):
    with Shelf(config.home) as shelf:
        return shelf.put(url=url, final_url=None, title="A", text=text, backend="local",
                         content_type="text/markdown").path


@pytest.fixture
def stored(config):
    lines = [f"line {i} " + ("Needle (x) here" if i % 100 == 0 else "hay") for i in range(1, 1_001)]
    return store(config, "\n".join(lines) + "\n")


def test_plain_text_matches_ignore_case_and_show_context(stored, config):
    out = search_page(stored, "needle (x)", 2, config=config)
    assert out == (
        f"10 matching lines for text 'needle (x)' (ignoring case) in {stored}; showing the first 2:\n"
        " 99|line 99 hay\n"
        ">100|line 100 Needle (x) here\n"
        " 101|line 101 hay\n"
        "--\n"
        " 199|line 199 hay\n"
        ">200|line 200 Needle (x) here\n"
        " 201|line 201 hay\n"
        f'Read around a match: read_file path="{stored}" offset=95 limit=500\n'
        "8 more matching lines not shown; raise max_results (up to 200) or narrow the pattern\n"
    )


def test_line_numbers_agree_with_read_file(stored, config):
    out = search_page(stored, "line 1000 ", config=config, context=0)
    [match] = [line for line in out.splitlines() if line.startswith(">")]
    assert match[1:] + "\n" == read_file(stored, 1_000, 1, config=config)


def test_regex_and_case_sensitivity(stored, config):
    out = search_page(stored, r"^line 9\d0 ", regex=True, context=0, config=config)
    assert [line for line in out.splitlines() if line.startswith(">")] == [
        f">{n}|line {n} {'Needle (x) here' if n == 900 else 'hay'}" for n in range(900, 1_000, 10)]
    assert search_page(stored, "NEEDLE", case_sensitive=True, config=config).startswith("no lines match text 'NEEDLE'")
    assert search_page(stored, "Needle", case_sensitive=True, config=config).startswith("10 matching lines")


def test_adjacent_matches_share_one_group(config):
    path = store(config, "a\nhit\nhit\nb\nc\nd\nhit\n")
    assert search_page(path, "hit", config=config).splitlines()[1:-1] == [
        " 1|a", ">2|hit", ">3|hit", " 4|b", "--", " 6|d", ">7|hit"]


def test_long_lines_are_clipped_around_the_match(config):
    line = "x" * 700 + " TARGET " + "y" * 250
    path = store(config, f"before\n{line}\nafter\n")
    out = search_page(path, "target", config=config)
    shown = out.splitlines()[2]
    assert shown.startswith(">2|…") and shown.endswith("…") and "TARGET" in shown
    assert len(shown) <= len(">2|") + SHOWN_LINE_CHARS + 2


def test_output_is_bounded_even_when_every_line_matches(config):
    path = store(config, ("z" * 900 + "\n") * 5_000)
    out = search_page(path, "z", MAX_RESULTS, config=config)
    assert out.startswith(f"5,000 matching lines for text 'z' (ignoring case) in {path}; showing the first {MAX_RESULTS}:")
    assert out.count("\n>") == MAX_RESULTS
    assert len(out) < MAX_RESULTS * (SHOWN_LINE_CHARS + 16) + 1_000
    assert out.rstrip().endswith("4,800 more matching lines not shown; narrow the pattern")


@pytest.mark.timeout(60)  # without the time budget this search would run for hours
def test_catastrophic_regex_is_stopped_with_an_error_that_says_what_to_do(config):
    path = store(config, ("a" * 60 + "!\n") * 200)
    with pytest.raises(InputError, match=r"took longer than 1 s .*catastrophic backtracking.*regex=false"):
        search_page(path, r"(a|aa)+$", regex=True, config=config)


def test_bad_regex_and_bad_arguments_name_the_problem(stored, config):
    with pytest.raises(InputError, match=r"bad regular expression 'x\(': missing \).*regex=false"):
        search_page(stored, "x(", regex=True, config=config)
    assert search_page(stored, "x(", config=config).startswith("no lines match text 'x('")  # plain text: literal
    for kwargs, message in [({"pattern": ""}, "pattern must be a non-empty string"),
                            ({"pattern": "a", "max_results": 0}, "max_results must be between 1 and 200"),
                            ({"pattern": "a", "max_results": 201}, "max_results must be between 1 and 200"),
                            ({"pattern": "a", "context": 6}, "context must be between 0 and 5"),
                            ({"pattern": "q" * 1_001}, "at most 1,000 are allowed")]:
        with pytest.raises(InputError, match=message):
            search_page(stored, config=config, **kwargs)


def test_search_is_confined_to_the_cache_like_read_file(stored, config, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("secret\n")
    link = stored.parent / "link.md"
    os.symlink(outside, link)
    for path in (outside, link, f"{stored.parent}/../../../secret.md", "/etc/passwd"):
        with pytest.raises(PathOutsideCacheError, match="only reads pages stored in"):
            search_page(path, "secret", config=config)


def test_an_evicted_page_names_the_url_to_extract_again(stored, config):
    stored.unlink()
    with pytest.raises(PageNotFoundError, match=r"re-extract it with web_extract\(\['https://example.com/a'\]\)"):
        search_page(stored, "hay", config=config)


def test_a_page_without_final_newline_and_an_end_anchor(config):
    path = store(config, "one\ntwo")
    assert search_page(path, "$", regex=True, context=0, config=config).splitlines()[1:3] == [">1|one", ">2|two"]


@pytest.mark.parametrize("page_text", [
    "alpha\nbéta Needle one\n\xff\xfe bad bytes\nneedle ſ two\nKelvin \u212a\nlast needle",
    "needle\n" * 30 + "end\n",
    "x\ncafé needle é\n\nNEEDLE\n",
])
@pytest.mark.parametrize("pattern", ["needle", "k", "s", "é needle", "NEEDLE"])
@pytest.mark.parametrize("case_sensitive", [False, True])
def test_the_bytes_search_gives_the_decoded_search_exactly(config, page_text, pattern, case_sensitive):
    """search_page searches an ASCII literal on the page's bytes when that is exact; the output
    must equal the search over the decoded text (folding characters, invalid bytes, clipping)."""
    import mmap as _mmap

    from webshelf.core import search_page as sp

    raw = page_text.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf\xc3\xbe", b"\xff\xfe")
    web = config.home / "cache" / "web"
    web.mkdir(parents=True, exist_ok=True)
    path = web / "bytes-page.md"
    path.write_bytes(raw)
    got = sp.search_page(path, pattern, case_sensitive=case_sensitive, context=2, config=config)
    compiled = sp._compile(pattern, use_regex=False, case_sensitive=case_sensitive)
    with open(path, "rb") as f:
        data = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
        decoded = data[:].decode("utf-8", errors="replace")
        expected_hits = sp._find(compiled, decoded, 20, str(path))
        data.close()
    assert got.startswith(f"{expected_hits[1]:,} matching line") or (expected_hits[1] == 0 and got.startswith("no lines"))
    # the same search forced through the str path
    sp.BYTES_SEARCH = False
    try:
        forced = sp.search_page(path, pattern, case_sensitive=case_sensitive, context=2, config=config)
    finally:
        sp.BYTES_SEARCH = True
    assert got == forced
