"""html_density.narrow takes each inner article-like element once: Lexbor lists a node once per
selector of a list it matches, and an article listed twice was its own rival."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.html_density import narrow, unique

STORY = "<p>" + "A plain sentence of the story, with nothing linked in it at all. " * 20 + "</p>"
RAIL = "<ul>" + "".join(f"<li><a href='/s/{i}'>Another story {i}</a></li>" for i in range(5)) + "</ul>"


@pytest.mark.parametrize("article", ["<article itemprop='articleBody'>", "<div role='main'>",
                                     "<article role='main'>"])
def test_an_article_matching_two_selectors_is_chosen(article):
    tag = article[1:].split()[0]
    tree = LexborHTMLParser(f"<html><body><main><h1>T</h1>{article}{STORY}</{tag}>{RAIL}</main></body></html>")
    main = tree.css_first("main")
    picked = narrow(main, 0.6)
    assert picked.tag == tag and "plain sentence" in picked.text()


def test_unique_keeps_the_order_and_drops_repeats():
    tree = LexborHTMLParser("<div id=a class=b>x</div><div class=c>y</div>")
    listed = tree.body.css("[class], [id]")
    assert len(listed) == 3  # (the duplicate this guards against)
    assert [n.text() for n in unique(listed)] == ["x", "y"]
