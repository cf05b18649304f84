"""Issue 15: a huge HTML page (over ``web.convert_huge_bytes``) converts slice by slice with
nothing lost — every visible word once, hidden content gone, the same Markdown as converting the
whole body in one tree — and pages under the threshold convert as before."""

from __future__ import annotations

import re

import pytest

from webshelf.core.config import parse_config
from webshelf.core.convert import html_huge, html_markdown
from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.by_type import to_markdown
from webshelf.core.convert.html_hidden import drop_hidden_in
from webshelf.errors import ConfigError

SHEET = "<style>.ad{display:none} .shown{color:red}</style>"


def _section(i: int) -> str:
    """One section with every block kind a cut must not split; words ``w{i}-…`` are visible once,
    ``SECRET`` words are hidden (inline style, hidden attribute, the sheet, a comment, a script)."""
    return (f"<section id='s{i}'><h2>Heading w{i}-h</h2>"
            f"<p>Paragraph w{i}-p1 with <b>bold w{i}-b</b> and <a href='/x{i}'>a link w{i}-a</a>.</p>"
            f"<div class='box'><p>Boxed w{i}-p2</p><div><p>Nested w{i}-p3</p></div></div>"
            f"<ol><li>first w{i}-l1</li><li>second w{i}-l2</li></ol>"
            f"<table><tr><th>head w{i}-th</th><th>Unit</th></tr><tr><td>cell w{i}-td</td><td>m</td></tr>"
            f"<tr><td>more</td><td>s</td></tr></table>"
            f"<pre><code>code w{i}-pre\n  indented w{i}-pre2</code></pre>"
            f"<blockquote><p>quoted w{i}-q1</p><p>quoted w{i}-q2</p></blockquote>"
            f"<p style='display:none'>SECRET inline {i}</p><p hidden>SECRET attribute {i}</p>"
            f"<p class='ad'>SECRET sheet {i}</p><!-- SECRET comment {i} --><script>var SECRET = {i};</script>"
            f"<p>Tail w{i}-p4</p></section>")


def _page(sections: int, *, sheet: str = SHEET, wrapper: bool = True) -> str:
    body = "".join(_section(i) for i in range(sections))
    if wrapper:  # the usual shape: everything inside one container, so cuts must go inside it
        body = f"<div id='page' class='wrap'><main>{body}</main></div>"
    return f"<!doctype html><html><head><title>Huge page</title>{sheet}</head><body>{body}</body></html>"


def _whole(html: str) -> str:
    """The reference: the same huge-mode steps on the whole body in one tree."""
    return html_huge.convert_huge(html, lambda f: html_markdown._convert(f, "https://example.org/"),
                                  html_markdown._polish, html_markdown._title, drop_hidden_in,
                                  chunk_chars=10**12)[0]


@pytest.fixture
def small_slices(monkeypatch):
    monkeypatch.setattr(html_huge, "CHUNK_CHARS", 20_000)


def test_a_huge_page_converts_slice_by_slice_with_nothing_lost_or_repeated(small_slices):
    html = _page(400)  # ~260 KB, over a 100 KB threshold
    plan = html_huge.plan(html, html_huge.CHUNK_CHARS)
    assert plan.why_whole is None and len(plan.slices) > 10
    converted = to_markdown(html.encode(), "text/html", "https://example.org/", bounds=Bounds(huge_bytes=100_000))
    md = converted.markdown
    assert converted.title == "Huge page"
    assert "SECRET" not in md
    words = re.findall(r"w\d+-\w+", md)
    expected = [f"w{i}-{k}" for i in range(400) for k in "h p1 b a p2 p3 l1 l2 th td pre pre2 q1 q2 p4".split()]
    assert sorted(words) == sorted(expected)  # every visible word exactly once
    assert md == _whole(html)  # and the same Markdown as one tree of the whole body
    assert md.count("```") == 2 * 400 and md.count("| head w") == 400  # no code block or table split
    assert "1. first w399-l1\n2. second w399-l2" in md and "> quoted w7-q1\n>\n> quoted w7-q2" in md


def test_slices_are_cut_at_the_top_level_too_and_the_page_sheets_reach_every_slice(small_slices):
    late_sheet = "<style>.late{display:none}</style>"
    html = _page(300, wrapper=False).replace("</body>", f"{late_sheet}<p class='late'>SECRET late</p>"
                                             "<p class='late'>SECRET late again</p></body>")
    html = html.replace("<section id='s1'>", "<p class='late'>SECRET early, hidden by a later sheet</p><section id='s1'>")
    assert len(html_huge.plan(html, html_huge.CHUNK_CHARS).slices) > 5
    md = html_markdown.html_to_markdown(html, "https://example.org/", prepare=drop_hidden_in, huge=True).markdown
    assert "SECRET" not in md and md == _whole(html)
    assert len(re.findall(r"w\d+-p4", md)) == 300


def test_a_sheet_whose_rules_depend_on_siblings_keeps_the_page_in_one_tree(small_slices):
    html = _page(200, sheet="<style>.box + p {display:none} section > p:first-child{color:red}</style>")
    plan = html_huge.plan(html, html_huge.CHUNK_CHARS)
    assert len(plan.slices) == 1 and "siblings or descendants" in plan.why_whole
    md = html_markdown.html_to_markdown(html, "https://example.org/", prepare=drop_hidden_in, huge=True).markdown
    assert "SECRET inline" not in md and len(re.findall(r"w\d+-p1", md)) == 200


@pytest.mark.parametrize("tail", ["<p title='unclosed quote>text", "<script>a = '<!--<script>'</script><p>x</p>"])
def test_a_page_the_scan_cannot_read_safely_is_not_cut(small_slices, tail):
    html = _page(100).replace("</main>", tail + "</main>")
    plan = html_huge.plan(html, html_huge.CHUNK_CHARS)
    assert len(plan.slices) == 1 and plan.why_whole


def test_pages_under_the_threshold_take_the_main_content_path_unchanged():
    html = ("<html><head><title>T</title></head><body><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav><main>"
            + "<p>Article text that is long enough to be the main content of the page, sentence after sentence.</p>" * 30
            + "</main><footer>Footer links and copyright</footer></body></html>")
    body = html.encode()
    normal = html_markdown.html_to_markdown(html, "https://example.org/", prepare=drop_hidden_in)
    assert to_markdown(body, "text/html", "https://example.org/", bounds=Bounds(huge_bytes=len(body))).markdown \
        == normal.markdown
    assert "Footer links" not in normal.markdown
    huge = to_markdown(body, "text/html", "https://example.org/", bounds=Bounds(huge_bytes=len(body) - 1)).markdown
    assert "Footer links" in huge  # over it: the whole body, chrome included


def test_the_threshold_setting_is_validated_with_its_name_and_range(tmp_path):
    assert parse_config({}, tmp_path / "c.yaml").web.convert_huge_bytes == 8_000_000
    assert Bounds.from_config(parse_config({"web": {"convert_huge_bytes": 200_000}}, tmp_path / "c.yaml").web).huge_bytes \
        == 200_000
    with pytest.raises(ConfigError, match=r"web\.convert_huge_bytes: 10 is out of range; allowed: ≥ 100000"):
        parse_config({"web": {"convert_huge_bytes": 10}}, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"web\.convert_huge_bytes"):
        parse_config({"web": {"convert_huge_bytes": "big"}}, tmp_path / "c.yaml")


@pytest.mark.parametrize("charset", ["utf-8", "windows-1252", None])
def test_a_huge_page_as_bytes_is_decoded_slice_by_slice_to_the_same_markdown(small_slices, charset):
    html = _page(150).replace("Tail w", "Tail café – w" if charset != "windows-1252" else "Tail café w")
    body = html.encode(charset or "utf-8")
    header = f"text/html; charset={charset}" if charset else "text/html"
    md = to_markdown(body, header, "https://example.org/", bounds=Bounds(huge_bytes=100_000)).markdown
    assert md == _whole(html) and md.count("Tail café") == 150 and "SECRET" not in md


def test_a_huge_page_in_an_encoding_that_cannot_be_cut_as_bytes_is_decoded_whole(small_slices):
    html = _page(150)
    md = to_markdown(html.encode("utf-16"), "text/html; charset=utf-16", "https://example.org/",
                     bounds=Bounds(huge_bytes=100_000)).markdown
    assert md == _whole(html) and len(re.findall(r"w\d+-p4", md)) == 150


def test_a_huge_page_from_a_worker_comes_back_through_a_spool_file_that_is_then_deleted(tmp_path):
    import asyncio
    import os

    from webshelf.core.convert.pool import ConvertPool

    body = _page(150).encode()
    bounds = Bounds(huge_bytes=100_000)
    in_process = to_markdown(body, "text/html", "https://example.org/", bounds=bounds)
    pool = ConvertPool(2, 1024)
    try:
        got = asyncio.run(pool.convert(body, "text/html", "https://example.org/", bounds))
        small = asyncio.run(pool.convert(b"<p>small page</p>", "text/html", "https://example.org/", bounds))
        assert got.spool is None and got.markdown == in_process.markdown and got.title == "Huge page"
        assert "SECRET" not in got.markdown and "\ud800x".encode("utf-8", "webshelf-fffd") == "\ufffdx".encode()
        assert small.markdown == "small page\n"
        assert pool._spool_dir is not None and os.listdir(pool._spool_dir) == []  # read back, then deleted
    finally:
        spool_dir = pool._spool_dir
        pool.close()
    assert not os.path.exists(spool_dir)
