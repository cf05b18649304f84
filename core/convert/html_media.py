"""Video and audio: the element's fallback content is not page text.

Why: what sits inside ``<video>``/``<audio>`` besides ``<source>`` and ``<track>`` is shown only by
a browser that cannot play the media ("Your browser does not support the video tag."), and
html-to-markdown writes it out after the ``[video](src)`` link it makes of the element. On WCXB
dev that sentence is served on 5 of the 110 pages with such elements. The link to the media stays.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

_KEEP = frozenset({"source", "track"})


def drop_media_fallback(node: LexborNode) -> int:
    """Remove every child of each ``<video>``/``<audio>`` under ``node`` but its sources and
    tracks; returns how many were removed."""
    removed = 0
    for media in node.css("video, audio"):
        child = media.child
        while child is not None:
            following = child.next
            if child.tag not in _KEEP:
                child.remove()
                removed += 1
            child = following
    return removed
