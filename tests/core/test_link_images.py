"""Links around blocks keep their images as images, never as link text
(``core.convert.html_links``): on real pages, tests/core/pages/4441 and 4264 (WCXB dev, © 2026
Murrough Foley, CC-BY-4.0), served as the local backend serves them, and on small hand-written
pages."""

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


def _plain(markdown: str) -> str:
    """The visible text as the benchmark scores it: images dropped, links reduced to their text."""
    plain = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)


def _prf(markdown: str, reference: str) -> tuple[float, float]:
    """(precision, recall) of the reference's words as multisets (WCXB's scoring)."""
    got, want = Counter(_WORD.findall(_plain(markdown).lower())), Counter(_WORD.findall(reference.lower()))
    overlap = sum((got & want).values())
    return overlap / sum(got.values()), overlap / sum(want.values())


def _served(page_id: str) -> tuple[str, dict]:
    body = gzip.decompress((PAGES / f"{page_id}.html.gz").read_bytes())
    truth = json.loads((PAGES / f"{page_id}.json").read_text())
    return to_markdown(body, "text/html; charset=utf-8", truth["url"]).markdown, truth


def test_image_links_of_a_real_post_keep_their_images_and_no_url_text():
    """4441 (a Substack post): each figure is ``<a href=full-size><div><picture><img alt="">``;
    html-to-markdown wrote each as ``[URL](URL)``, 30-odd URL words per figure that are not on
    the page (precision 0.86; the words of the post all stay)."""
    markdown, truth = _served("4441")
    assert not _URL_AS_TEXT.search(markdown)
    assert markdown.count("[![](https://substackcdn.com/") >= 3  # the figures: image links
    precision, recall = _prf(markdown, truth["main_content"])
    assert precision > 0.95 and recall > 0.95  # precision was 0.86


def test_product_cards_keep_the_image_and_do_not_repeat_its_alt_text_as_the_title():
    """4264 (a shop's category page): each card is ``<a><div><img alt=NAME></div>On Sale!</a>``
    beside a title link with the name; the converter wrote ``[NAME On Sale!](…)``, so every name
    came twice (F1 0.93). The image now comes out as ``![NAME](src)`` before the link."""
    markdown, truth = _served("4264")
    plain = _plain(markdown)
    for snippet in truth["with"]:
        assert snippet in plain, snippet
    assert "![Samsung LSP9T Premiere 4K Ultra Short Throw Laser Projector" in markdown
    assert "[Samsung LSP9T Premiere 4K Ultra Short Throw Laser Projector On Sale!]" not in markdown
    precision, recall = _prf(markdown, truth["main_content"])
    assert precision > 0.97 and recall > 0.97  # precision was 0.87


_PROSE = "<p>" + "This sentence is part of the story and carries its words along. " * 8 + "</p>"


def _convert(link: str) -> str:
    html = f"<html><body><article><h1>Title</h1>{_PROSE}{link}{_PROSE}</article></body></html>"
    return html_to_markdown(html, "https://example.org/post").markdown


def test_a_text_less_link_around_a_block_is_an_image_link_or_an_empty_link():
    assert "[![](https://example.org/a.png)](https://example.org/a)" in _convert(
        '<a href="/a"><div><img src="/a.png" alt=""></div></a>')
    assert "[![A harbour](https://example.org/b.png)](https://example.org/b)" in _convert(
        '<a href="/b"><div><img src="/b.png" alt="A harbour"></div></a>')  # was [A harbour](…)
    # a card's overlay link, an image with only a srcset (the converter cannot render it)
    for link in ('<a href="/card"><div class="overlay"></div></a>',
                 '<a href="/card"><div><img srcset="/c.png 2x" alt="c"></div></a>'):
        markdown = _convert(link)
        assert "[](https://example.org/card)" in markdown and not _URL_AS_TEXT.search(markdown)


def test_a_card_link_with_text_gets_its_image_in_front_of_it():
    markdown = _convert('<a href="/r"><div><img src="/r.jpg" alt="A plate of pasta"></div>'
                        '<div>Easy pork ragu</div></a>')
    assert "![A plate of pasta](https://example.org/r.jpg)" in markdown
    assert "[Easy pork ragu](https://example.org/r)" in markdown  # was [A plate of pasta Easy pork ragu](…)


def test_inline_links_and_links_with_text_are_left_as_they_were():
    assert "[https://example.org/x](https://example.org/x)" in _convert(
        '<p><a href="/x">https://example.org/x</a></p>')  # the page shows the URL: it stays
    assert "[![Logo](https://example.org/l.png) Home](https://example.org/h)" in _convert(
        '<p><a href="/h"><img src="/l.png" alt="Logo"> Home</a></p>')
    assert "[Read the guide](https://example.org/g)" in _convert('<a href="/g"><div>Read the guide</div></a>')
