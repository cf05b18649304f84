"""Issue 15: one parse per page, and the cheap hidden-CSS path judges exactly as the full one.

- ``to_markdown`` of an HTML page builds one Lexbor tree (hidden-content removal runs in the tree
  that main-content selection uses) and gives the same Markdown as the old two-pass path
  (``drop_hidden`` string → ``html_to_markdown``);
- the selector pre-filter (``_PageKeys``: skip a rule whose rightmost compound needs a class or
  id the page lacks) and the per-process memo never change what is hidden.
"""

from __future__ import annotations

import pytest

from tests import corpus
from webshelf.core.convert import css_hidden, html_hidden, html_markdown
from webshelf.core.convert.by_type import decode, to_markdown
from webshelf.core.convert.html_hidden import drop_hidden, drop_hidden_in
from webshelf.core.convert.html_markdown import html_to_markdown

PAGES = {
    "sheet_and_inline": """<html><head><title>T</title><style>.ad{display:none} .show{display:block}
        p.note:not(.keep){visibility:hidden}</style></head><body><main><h1>Title</h1>
        <p>First paragraph of the article, long enough to be the main content of this page.</p>
        <p class="ad">SECRET one</p><p class="note">SECRET two</p><p class="note keep">kept note</p>
        <p>Text <!-- SECRET comment --> around a comment stays one paragraph.</p>
        <p style="font-size:0">SECRET three</p><p>Closing paragraph with more words in it, so that the
        article is longer than the short-page fallback's threshold and no second parse is needed.</p>
        </main></body></html>""",
    "quirks_case": """<style>.HIDE{display:none}</style><article><p>Visible words of a quirks-mode page
        that has no doctype, so class names match without case.</p><p class="hide">SECRET</p></article>""",
}


def _sample_pages() -> list[tuple[str, str]]:
    ids = sorted(corpus.wcxb_metadata())[:12]
    out = []
    for fid in ids:
        body = corpus.wcxb_html(fid)
        if body is not None:
            out.append((fid, decode(body, "utf-8", html=True)))
    return out + list(PAGES.items())


@pytest.mark.parametrize(("name", "html"), _sample_pages(), ids=lambda v: v if len(v) < 40 else "")
def test_one_parse_gives_the_two_pass_markdown(name, html):
    url = f"https://example.com/{name}"
    css_hidden.clear_memo()
    two_pass = html_to_markdown(drop_hidden(html), url)
    one_parse = html_to_markdown(html, url, prepare=drop_hidden_in)
    assert one_parse == two_pass
    assert "SECRET" not in one_parse.markdown


def test_html_page_is_parsed_once(monkeypatch):
    parses = []
    real = html_markdown.LexborHTMLParser

    def counting(html, *args, **kwargs):  # noqa: ANN001, ANN202
        parses.append(len(html))
        return real(html, *args, **kwargs)

    monkeypatch.setattr(html_markdown, "LexborHTMLParser", counting)
    monkeypatch.setattr(html_hidden, "LexborHTMLParser", counting)
    converted = to_markdown(PAGES["sheet_and_inline"].encode(), "text/html; charset=utf-8", "https://example.com/a")
    assert len(parses) == 1  # (a page whose Markdown is under 200 characters is parsed again, whole)
    assert "First paragraph" in converted.markdown and "SECRET" not in converted.markdown
    assert "Text around a comment stays one paragraph." in converted.markdown


def test_memo_gives_the_same_answer_twice_and_for_other_trees():
    page = PAGES["sheet_and_inline"]
    css_hidden.clear_memo()
    first = drop_hidden(page)
    assert drop_hidden(page) == first  # warm memo: the sheets' rules come from the memo
    other = page.replace('class="note keep"', 'class="note"')  # same sheet, a tree where the rule now hides
    assert "kept note" not in drop_hidden(other) and "kept note" in first


TRICKY_STYLES = ["display:none", "DISPLAY : NONE", "display:/**/none", "display/**/:none", "display:n\\one",
                 "opacity:+0", "opacity:.0", "opacity:0%", "font-size:+0.5px", "font-size:5%", "left:/**/-1000px",
                 "left : -1e4px", "LEFT:-1000PX", "text-indent:-9999px", "transform:scale(0)", "clip:rect(0 0 0 0)",
                 "clip-path:inset(50%)", "color:transparent", "color:#0000", "color:#ff000000", "color:rgba(0,0,0,0)",
                 "width:0;overflow:hidden", "max-height:0;OVERFLOW:clip", "visibility:collapse", "color:red",
                 "margin:0 auto", "font-weight:bold", "position:absolute;left:10px", "v\\isibility:hidden"]


@pytest.mark.parametrize("style", TRICKY_STYLES)
def test_inline_style_prefilter_never_changes_the_verdict(style):
    css_hidden.clear_memo()
    assert css_hidden.style_hides(style) == css_hidden._parse_uncached(style).hides()
