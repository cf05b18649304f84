"""Links around blocks: their images stay images, never link text.

Why: html-to-markdown renders a link that holds a block — a card
``<a href=U><div><img src=S alt=A></div><div>Title</div></a>``, a gallery tile, an overlay link
around an empty ``<div>`` — without its images, and writes their alt text into the link text
(``[A Title](U)``: "A plate of pasta on a green surface Easy Pork Ragù") or, with no text at all,
the URL (``[U](U)``). Neither is on the page. The same image outside a block comes out as
``![A](S)``. So, before conversion: a link with no text becomes just its images (those the
converter can render: with a ``src``), ``[![A](S)](U)`` or an empty ``[](U)``; a link with text
and a block inside gets its images moved out in front of it (``![A](S)[Title](U)``). On WCXB dev:
788 URL-as-text links on 127 pages and the alt texts of card grids (recipes, products), which
repeated each name or put a photo's description into the title (docs/benchmarks.md,
"s10-precision").
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

_BLOCKS = "div, p, section, figure, ul, ol, li, table, header, footer, article, blockquote, dl, h1, h2, h3, h4, h5, h6"


def images_out_of_links(node: LexborNode) -> int:
    """Apply the two rewrites above to every ``<a>`` under ``node`` that holds more than one
    text or image (a lone image or text the converter writes as it is); returns how many links
    were rewritten."""
    rewritten = 0
    for link in node.css("a"):
        child = link.child
        if child is None or (child.next is None and child.tag in ("img", "-text")):
            continue
        if not link.text(deep=True, strip=True):
            images = [i for i in link.css("img") if (i.attributes.get("src") or "").strip()]
            link.inner_html = "".join(i.html or "" for i in images)
            rewritten += 1
            continue
        images = link.css("img")
        if not images or link.css_first(_BLOCKS) is None:
            continue  # inline content: the converter keeps the images inside the link
        for image in images:
            if (image.attributes.get("src") or "").strip():
                link.insert_before(image)  # Lexbor inserts a copy
            image.remove()
        rewritten += 1
    return rewritten
