"""Is a URL a discussion thread's? (forum software names its pages so.)

On an article, the reader comments under the story are not the page's content; on a forum thread
the replies *are* the content, and forum software puts them in elements named like comments
(``comment``, ``post-comment``). The text alone cannot tell the two apart: a thread's first post
with its sidebar can hold as much of the page as an article does beside its comments (WCXB dev:
forum threads at 10–47 % of the page outside the replies, articles at 15–22 %). The URL can: forum
software puts its own words into its paths and host names (phpBB ``viewtopic.php``, vBulletin
``showthread.php``, ``forum.example.com``, Discourse ``/t/slug/123``).

The words are forum software's conventions, written down beforehand, not learned: a URL word
that merely mentions a topic ("topics", "community") is not one. On WCXB dev (1,358 pages, where
the list was checked) it marks 81 of the 112 forum pages and none of the other 1,246.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_WORDS = frozenset(("forum", "forums", "foro", "foros", "fórum", "forumdisplay", "showthread", "viewtopic",
                    "viewthread", "thread", "threads", "boards", "discussion", "discussions", "discuss"))
_SPLIT = re.compile(r"[/.\-_?=&+]+")
_DISCOURSE = re.compile(r"/t/[^/]+/\d+")  # Discourse: /t/<slug>/<topic id>


def is_thread_url(url: str | None) -> bool:
    """True when a host label or a path word of ``url`` is a forum software word (module docstring)."""
    if not url:
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    path = parts.path.lower()
    if any("forum" in label for label in host.split(".")):  # warriorforum.com, forums.example.org
        return True
    return any(word in _WORDS for word in _SPLIT.split(f"{host}/{path}")) or bool(_DISCOURSE.search(path))
