"""Text-less links: a link with no text never comes out with its URL as its text.

Why: html-to-markdown renders a link that holds a block but no text — an image card
``<a href=U><div><img src=S alt=""></div></a>``, a gallery tile, a card's overlay link around an
empty ``<div>``, an image whose only source is a ``srcset`` — as ``[U](U)``: the URL becomes the
link's text. The reader gets a line of URL words that is not on the page (on WCXB dev 788 such
links on 127 pages: image galleries, product grids), where the same link without the block
comes out as ``[![](S)](U)`` or ``[](U)``. Rewriting the link's content as its images (those the
converter can render: with a ``src``) gives that form whatever wraps them. A link with text, or
with an image that has alt text and a source (the converter makes the alt its text), is left
alone.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode


def empty_links(node: LexborNode) -> int:
    """Rewrite every ``<a>`` under ``node`` that has no text but an element inside as just its
    images with a ``src`` (none: an empty link); returns how many."""
    rewritten = 0
    for link in node.css("a"):
        child = link.child
        if child is None or (child.next is None and child.tag in ("img", "-text")):
            continue  # empty, one image or one text: the converter writes it as it is
        if link.text(deep=True, strip=True):
            continue
        images = [i for i in link.css("img") if (i.attributes.get("src") or "").strip()]
        if any((i.attributes.get("alt") or "").strip() for i in images):
            continue
        link.inner_html = "".join(i.html or "" for i in images)
        rewritten += 1
    return rewritten
