"""The served HTML path's cheaper routes give the text route's answers (issue 14's speed pass):
the pre-check's screens on the page's UTF-8 bytes, ``decode_html``'s bytes, Lexbor parsing those
bytes in ``html_to_markdown``, and html-to-markdown called with options built once."""

from __future__ import annotations

import codecs
import re
from collections import Counter
from itertools import accumulate

import html_to_markdown as h2m
import pytest

from webshelf.core.convert import html_markdown, html_precheck
from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.by_type import decode, decode_html, to_markdown
from webshelf.core.convert.html_hidden import drop_hidden_in
from webshelf.core.convert.html_markdown import html_to_markdown

# Shapes at and around a small depth limit (5), with what could make a byte scan differ from a
# text scan: stray end tags, comments and raw-text elements holding tags, upper/mixed case, CDATA,
# non-ASCII next to tag names (UCS-2, UCS-4, the Kelvin sign that case-folds to "k").
SHAPES = [
    "<div>" * 6 + "x",
    "<div>" * 4 + "x" + "</div>" * 4,
    "<DIV>" * 3 + "<Div>" * 3 + "é",
    "<div></b>" * 6 + "depth hidden by stray end tags",
    "</div>" * 6 + "<div>" * 5 + "中",
    "<span></SPAN>" * 3 + "<span>" * 6,
    "<!-- " + "<div>" * 8 + " -->" + "<p>x" * 9,
    "<script>" + "<div>" * 8 + "</script>" + "<div>" * 3,
    "<style>" + "<section>" * 8 + "</style><textarea>" + "<b>" * 8 + "</textarea>",
    "<svg><![CDATA[" + "<g>" * 8 + "]]></svg>" + "<em>" * 4,
    "<p>" * 9 + "<br>" * 9 + "<li>" * 9 + "<img src=x>" * 9,
    "<link\u212a>" * 7 + "<div😀>" * 7 + "<a-b:c>" * 7,
    "<div>😀" * 7 + "</div >" * 3 + "<DIV\t>" * 3,
    "<x-y>" * 3 + "</x-y>" * 2 + "<x-Y>" * 4 + "</X-y>" * 4,
    "< div>" * 9 + "<\ndiv>" * 9 + "<?php ?>" * 9 + "<!doctype html>",
    "</" + "</1</a:b></br></br></Span><P>" * 3,  # nameless end marks first: the balance starts negative
    "</ div></-x></:a>" * 4 + "<div>" * 4 + "</" * 5,
    "</1" * 9,
]


def _screen_as_before(html: str, max_depth: int) -> bool:
    """``_maybe_deep`` as of 9e207ab (its mark pattern had an optional "/"): the reference."""
    marks = re.findall(r"</?[A-Za-z][A-Za-z0-9:-]*", html)
    if len(marks) <= max_depth:
        return False
    balance = max(accumulate(html_precheck._STEPS[m] for m in marks))
    if balance > max_depth:
        return True
    seen = Counter(marks)
    stray = sum(max(0, n - seen.get("<" + mark[2:], 0)) for mark, n in seen.items() if mark[1] == "/")
    return balance + stray > max_depth


@pytest.mark.parametrize("shape", SHAPES)
def test_the_screens_on_the_pages_bytes_answer_as_on_its_text(shape):
    html = "<html><body>" + shape + "<p>tail</p></body></html>"
    raw = html.encode("utf-8")
    for depth in (0, 1, 3, 5, 8, 512):
        assert html_precheck._maybe_deep(raw, depth) == html_precheck._maybe_deep(html, depth) \
            == _screen_as_before(html, depth)
        assert html_precheck._maybe_deep(shape, depth) == _screen_as_before(shape, depth)
        bounds = Bounds(max_depth=depth)
        assert html_precheck.element_count(raw, bounds) == html_precheck.element_count(html, bounds)
        assert html_precheck.precheck_html(html, bounds, raw) == html_precheck.precheck_html(html, bounds)


def test_the_element_bound_refuses_from_the_bytes_with_the_texts_count():
    html = "<p>x" * 2_000
    with pytest.raises(Exception) as on_text:
        html_precheck.precheck_html(html, Bounds(max_elements=1_000))
    with pytest.raises(Exception) as on_bytes:
        html_precheck.precheck_html(html, Bounds(max_elements=1_000), html.encode())
    assert type(on_bytes.value) is type(on_text.value) and str(on_bytes.value) == str(on_text.value)


@pytest.mark.parametrize(("body", "declared", "exact"), [
    ("<p>plain ascii</p>".encode(), None, True),
    ("<p>déjà vu 中文 😀</p>".encode(), "utf-8", True),
    ("<p>déjà</p>".encode(), "UTF8", True),
    ('<meta charset="utf-8"><p>é</p>'.encode(), None, True),
    (codecs.BOM_UTF8 + "<p>bom</p>".encode(), None, False),  # the BOM is not part of the text
    ("<p>déjà</p>".encode("latin-1"), "iso-8859-1", False),
    (b"<p>broken \xff\xfe utf-8</p>", "utf-8", False),  # replaced: not the bytes' decoding
    (b"<p>broken \xe9 no label</p>", None, False),  # detected
    ('<meta charset="windows-1252"><p>\x93q\x94</p>'.encode("latin-1"), None, False),
    ("<p>utf-16</p>".encode("utf-16"), None, False),
])
def test_decode_html_gives_decodes_text_and_the_bytes_only_when_they_are_its_encoding(body, declared, exact):
    text, raw = decode_html(body, declared)
    assert text == decode(body, declared, html=True)
    assert (raw is body) if exact else (raw is None)
    if raw is not None:
        assert text.encode("utf-8") == raw


PAGES = [
    "<html><head><title>T</title></head><body><main><h1>Head</h1>" + "<p>Some text é 中 😀.</p>" * 30
    + "</main></body></html>",
    "<html><body><p>tiny</p></body></html>",  # short: the whole-page fallback parses again
    "<html><body><article><p>nul\x00 inside</p>" + "<p>more words here.</p>" * 20 + "</article></body></html>",
    "<div style='display:none'>hidden</div><p>" + "visible words " * 40 + "</p>",
    "   \n\t ",
    "",
]


@pytest.mark.parametrize("page", PAGES)
def test_html_to_markdown_from_the_bytes_is_the_same_as_from_the_text(page):
    for prepare in (None, drop_hidden_in):
        assert html_to_markdown(page, "https://example.com/a/", prepare=prepare, utf8=page.encode()) == \
            html_to_markdown(page, "https://example.com/a/", prepare=prepare)


def test_whitespace_only_pages_are_empty_as_before():
    for page in ("", " ", "\u3000\n", "\x1c\x1d"):
        assert html_to_markdown(page).markdown == "" and not page.strip()


@pytest.mark.skipif(html_markdown._NATIVE is None, reason="this html-to-markdown lays out its binding differently")
@pytest.mark.parametrize("url", [None, "", "https://example.com/docs/page.html", "http://x/", "ftp://x/", "file:///p"])
def test_the_prebuilt_options_convert_as_the_public_api(url):
    fragment = ('<h2>A <a href="rel/x">link</a></h2><p><img src="/i.png" alt="i"> <abbr title="t">T</abbr></p>'
                '<pre><code class="language-py">x = 1</code></pre><table><tr><th>a</th></tr><tr><td>1</td></tr>'
                '</table><blockquote cite="c">q</blockquote><p hidden>h</p><img src="data:image/png;base64,AA==">')
    assert html_markdown._NATIVE(fragment, url) == (h2m.convert(fragment, html_markdown._options(url)).content or "")


@pytest.mark.skipif(html_markdown._NATIVE is None, reason="this html-to-markdown lays out its binding differently")
@pytest.mark.parametrize("binding", ["converts differently", "takes other arguments"])
def test_a_binding_that_does_not_convert_as_the_public_api_is_not_used(monkeypatch, binding):
    from html_to_markdown import _html_to_markdown as native

    if binding == "takes other arguments":
        def other(**kwargs):  # noqa: ANN003, ANN202
            raise TypeError("convert() got an unexpected keyword argument 'visitor'")

        monkeypatch.setattr(native, "convert", other)
    else:  # the public API goes its own way (it calls the same binding, so it is the one changed here)
        public = h2m.convert
        monkeypatch.setattr(h2m, "convert", lambda html, options: type("R", (), {
            "content": public(html, options).content + "x"})())
    assert html_markdown._native_converter() is None


def test_the_served_path_keeps_nul_and_bom_pages():
    page = "<html><body><main>" + "<p>word\x00s and more words here</p>" * 20 + "</main></body></html>"
    out = to_markdown(page.encode(), "text/html; charset=utf-8", "https://example.com/")
    assert "words and more" in out.markdown and "\x00" not in out.markdown
    bom = to_markdown(codecs.BOM_UTF8 + page.encode(), "text/html", "https://example.com/")
    assert bom.markdown == out.markdown


def test_the_chunked_balance_bound_gives_the_ordered_screens_answer():
    """``_maybe_deep`` clears most pages from per-chunk counts (``_balance_bound``) before the
    ordered pass: on random tag soups (stray, void, optional-end, nameless and mixed-case marks,
    runs that open deep in one chunk and close in the next) its answer is the reference's."""
    import random

    rng = random.Random(14)
    pieces = ["<div>", "</div>", "<DIV>", "</Div>", "<span>", "</span>", "</b>", "<p>", "</p>", "<br>",
              "<li>", "</li>", "</1", "</", "<a-b>", "</a-b>", "<section>", "</section>", "x"]
    for _ in range(400):
        html = "".join(rng.choice(pieces) * rng.choice((1, 1, 1, 5, 20)) for _ in range(rng.randint(1, 120)))
        bound = html_precheck._balance_bound(
            [Counter(re.findall(r"<[/A-Za-z][A-Za-z0-9:-]*", html))], html_precheck._STEPS)
        for depth in (0, 2, 7, 20, 60):
            assert html_precheck._maybe_deep(html, depth) == _screen_as_before(html, depth)
            assert html_precheck._maybe_deep(html.encode(), depth) == _screen_as_before(html, depth)
        marks = re.findall(r"<[/A-Za-z][A-Za-z0-9:-]*", html)
        if marks:
            assert bound >= max(accumulate(html_precheck._STEPS[m] for m in marks))


def test_the_tag_mark_memos_stay_bounded_and_keep_answering(monkeypatch):
    """A page of many distinct tag names must not grow the mark memos for good, and a mark the
    full memo no longer stores still gets its step (the answer is the same, only not remembered)."""
    monkeypatch.setattr(html_precheck, "STEPS_MEMO", len(html_precheck._STEPS) + 10)
    monkeypatch.setattr(html_precheck, "_BYTE_STEPS", html_precheck._ByteSteps())
    names = [f"x{n}" for n in range(300)]
    nested = "".join(f"<{name}>" for name in names) + "".join(f"</{name}>" for name in reversed(names))
    for html in (nested, nested.encode()):
        assert html_precheck._maybe_deep(html, 100) is True
        assert html_precheck._maybe_deep(html, 400) is False
    assert len(html_precheck._STEPS) <= html_precheck.STEPS_MEMO
    assert len(html_precheck._BYTE_STEPS) <= html_precheck.STEPS_MEMO
