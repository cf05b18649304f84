"""The per-page cap on stored text (``cache.max_file_chars``).

A page longer than the cap is stored cut at a line boundary, followed by one marker line that
says where and why it stops, so an agent paging through the file with read_file learns that
the rest was not kept instead of mistaking the cut for the page's end. The stored text,
marker included, never exceeds the cap.
"""

from __future__ import annotations

from webshelf.cache.utf8 import Utf8Text


def cut_marker(max_chars: int, original_chars: int) -> str:
    return (f"[webshelf: the stored copy stops here — cut at {max_chars:,} of {original_chars:,} characters "
            f"(cache.max_file_chars); the rest of the page was not stored]\n")


def cap_text(text: str, max_chars: int, original_chars: int | None = None) -> tuple[str, int | None]:
    """(text to store, original length if it was cut else None).

    ``original_chars`` is the page's length when ``text`` is already only a prefix of it (the
    caller cleaned only what can be stored); the marker and the result report that length."""
    if len(text) <= max_chars:
        return text, None
    end, newline, marker, original = _cut(text, max_chars, original_chars)
    return text[:end] + ("\n" if newline else "") + marker, original


def cap_utf8(page: Utf8Text, max_chars: int, original_chars: int | None = None) -> tuple[Utf8Text, int | None]:
    """``cap_text`` for a page held as UTF-8: the same text, cut from the bytes. The cut point
    is found on the decoded page (decoding is ~3× cheaper than encoding); the bytes of the kept
    part are ``data`` less the encoding of the small dropped tail — no whole-page encode."""
    if page.chars <= max_chars:
        return page, None
    text = page.text
    end, newline, marker, original = _cut(text, max_chars, original_chars)
    body = page.data[:len(page.data) - len(text[end:].encode("utf-8"))]
    data = body + (b"\n" if newline else b"") + marker.encode("utf-8")
    return Utf8Text(data, end + (1 if newline else 0) + len(marker)), original


def _cut(text: str, max_chars: int, original_chars: int | None) -> tuple[int, bool, str, int]:
    """(characters kept, whether a newline follows them, the marker line, the original length)."""
    original = max(original_chars or 0, len(text))
    marker = cut_marker(max_chars, original)
    room = max_chars - len(marker) - 1  # keep one character for a newline before the marker
    if room <= 0:
        raise ValueError(f"max_chars {max_chars} leaves no room for the cut marker")
    cut = text.rfind("\n", 0, room) + 1  # cut after a whole line …
    end = cut if cut > 0 else room  # … unless the first line alone is longer
    return end, not (end and text[end - 1] == "\n"), marker, original
