"""How a page becomes what the agent sees: the window with its notes, and the notes of a copy
served from the shelf — one body for ``core.extract`` and the cached CLI path.

Why a module of its own (issue 15's start-up row): ``webshelf extract`` on a cached URL
(core/surfaces/cli_cached.py) must print exactly what the full pipeline prints, without
importing the pipeline, the config models or pydantic. Both call these functions, so the
wording and the window cannot drift apart; they take plain values, not a ``Config``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from webshelf.cache.utf8 import Utf8Text
from webshelf.core import untrusted
from webshelf.core.truncate import Window, render


def cut_note(original_chars: int | None, max_file_chars: int) -> str | None:
    """The note of a stored copy cut at ``cache.max_file_chars`` (None when it was not cut)."""
    if original_chars is None:
        return None
    return (f"Stored copy cut at {max_file_chars:,} characters (cache.max_file_chars): "
            f"the page has {original_chars:,}; the rest was not stored.")


def served_note(fetched_at: float, now: float | None = None) -> str:
    """The note of a result served from a stored copy instead of the network."""
    age = max((time.time() if now is None else now) - fetched_at, 0)
    return f"served from the stored copy fetched {age:.0f} s ago (cache.max_age); pass fresh=True to fetch again"


def window(text: str | Utf8Text, budget: int, *, head_ratio: float, wrap_untrusted: bool, path: str | None,
           store_note: str | None = None, cut_note: str | None = None,
           notes: Sequence[str] = ()) -> tuple[Window, str]:
    """The window for one page and the content the agent sees, its notes included (wrapped in
    untrusted-content markers when ``web.wrap_untrusted`` is on, still within the budget)."""
    window = render(text, budget - (untrusted.overhead() if wrap_untrusted else 0), path=path,
                    head_ratio=head_ratio, store_note=store_note, cut_note=cut_note, notes=notes)
    return window, untrusted.wrap(window.content) if wrap_untrusted else window.content
