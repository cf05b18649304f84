"""The per-page cap on stored text (``cache.max_file_chars``).

A page longer than the cap is stored cut at a line boundary, followed by one marker line that
says where and why it stops, so an agent paging through the file with read_file learns that
the rest was not kept instead of mistaking the cut for the page's end. The stored text,
marker included, never exceeds the cap.
"""

from __future__ import annotations


def cut_marker(max_chars: int, original_chars: int) -> str:
    return (f"[webshelf: the stored copy stops here — cut at {max_chars:,} of {original_chars:,} characters "
            f"(cache.max_file_chars); the rest of the page was not stored]\n")


def cap_text(text: str, max_chars: int, original_chars: int | None = None) -> tuple[str, int | None]:
    """(text to store, original length if it was cut else None).

    ``original_chars`` is the page's length when ``text`` is already only a prefix of it (the
    caller cleaned only what can be stored); the marker and the result report that length."""
    if len(text) <= max_chars:
        return text, None
    original = max(original_chars or 0, len(text))
    marker = cut_marker(max_chars, original)
    room = max_chars - len(marker) - 1  # keep one character for a newline before the marker
    if room <= 0:
        raise ValueError(f"max_chars {max_chars} leaves no room for the cut marker")
    cut = text.rfind("\n", 0, room) + 1  # cut after a whole line …
    body = text[:cut] if cut > 0 else text[:room]  # … unless the first line alone is longer
    if not body.endswith("\n"):
        body += "\n"
    return body + marker, original
