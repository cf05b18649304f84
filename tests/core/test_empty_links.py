"""A link with no text never comes out with its URL as its text (``core.convert.html_links``):
on a real page, tests/core/pages/4441 (WCXB dev, © 2026 Murrough Foley, CC-BY-4.0), served as
the local backend serves it, and on small hand-written pages."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

from webshelf.core.convert.by_type import to_markdown
from webshelf.core.convert.html_markdown import html_to_markdown

PAGES = Path(__file__).resolve().parent / "pages"
_WORD = re.compile(r"\w+")
_URL_AS_TEXT = re.compile(r"\[(https?://[^\]\s]+)\]\(\1\)")


def _prf(markdown: str, reference: str) -> tuple[float, float]:
    """(precision, recall) of the reference's words as multisets (WCXB's scoring), link and
    image syntax reduced to the visible text as the benchmark does."""
    plain = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
    got, want = Counter(_WORD.findall(plain.lower())), Counter(_WORD.findall(reference.lower()))
    overlap = sum((got & want).values())
    return overlap / sum(got.values()), overlap / sum(want.values())


def test_image_links_of_a_real_post_keep_their_images_and_no_url_text():
    """4441 (a Substack post): each figure is ``<a href=full-size><div><picture><img alt="">``;
    html-to-markdown wrote each as ``[URL](URL)``, 30-odd URL words per figure that are not on
    the page (precision 0.86; the words of the post all stay)."""
    body = gzip.decompress((PAGES / "4441.html.gz").read_bytes())
    truth = json.loads((PAGES / "4441.json").read_text())
    markdown = to_markdown(body, "text/html; charset=utf-8", truth["url"]).markdown
    assert not _URL_AS_TEXT.search(markdown)
    assert markdown.count("[![](https://substackcdn.com/") >= 3  # the figures: image links
    precision, recall = _prf(markdown, truth["main_content"])
    assert precision > 0.95 and recall > 0.95  # precision was 0.86


_PROSE = "<p>" + "This sentence is part of the story and carries its words along. " * 8 + "</p>"


def _convert(link: str) -> str:
    html = f"<html><body><article><h1>Title</h1>{_PROSE}{link}{_PROSE}</article></body></html>"
    return html_to_markdown(html, "https://example.org/post").markdown


def test_a_text_less_link_around_a_block_is_an_image_link_or_an_empty_link():
    assert "[![](https://example.org/a.png)](https://example.org/a)" in _convert(
        '<a href="/a"><div><img src="/a.png" alt=""></div></a>')
    # a card's overlay link, an image with only a srcset (the converter cannot render it)
    for link in ('<a href="/card"><div class="overlay"></div></a>',
                 '<a href="/card"><div><img srcset="/c.png 2x" alt="c"></div></a>'):
        markdown = _convert(link)
        assert "[](https://example.org/card)" in markdown and not _URL_AS_TEXT.search(markdown)


def test_links_with_text_or_an_alt_text_are_left_as_they_were():
    assert "[https://example.org/x](https://example.org/x)" in _convert(
        '<p><a href="/x">https://example.org/x</a></p>')  # the page shows the URL: it stays
    assert "[Photo of the harbour](https://example.org/b)" in _convert(
        '<a href="/b"><div><img src="/b.png" alt="Photo of the harbour"></div></a>')
    assert "[Read the guide](https://example.org/g)" in _convert('<a href="/g"><div>Read the guide</div></a>')
