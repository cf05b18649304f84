"""A page's text held as the UTF-8 bytes that will be stored, with its character count.

Why bytes (issue 15): Python keeps a page with any non-ASCII character as UCS-2, and encoding
it to UTF-8 costs as much as writing and fsyncing the bytes. Cleaning (``core.clean``) encodes
once and edits the bytes; the shelf hashes and writes those same bytes; the window
(``core.truncate``) decodes only its head and tail and the heading lines — so no step encodes
the whole page again, and none decodes it whole unless the page is small.

It lives in ``cache`` because the shelf stores it and ``cache`` may not import ``core``.
"""

from __future__ import annotations

_ISSPACE_ASCII = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # the ASCII characters str.isspace() is true for


class Utf8Text:
    """``data`` (valid UTF-8), its length in characters ``chars`` (= ``len(data.decode())``)
    and, once someone counted them, its newlines. ``str(page)`` / ``page.text`` decode it whole
    (cached); the counts and ends never need that."""

    __slots__ = ("data", "chars", "_newlines", "_text")

    def __init__(self, data: bytes, chars: int, newlines: int | None = None) -> None:
        self.data = data
        self.chars = chars
        self._newlines = newlines
        self._text: str | None = None

    @classmethod
    def of(cls, text: str) -> "Utf8Text":
        """``text`` encoded (lone surrogates are not allowed: clean the text first)."""
        page = cls(text.encode("utf-8"), len(text))
        page._text = text
        return page

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.data.decode("utf-8")
        return self._text

    def __str__(self) -> str:
        return self.text

    def __len__(self) -> int:
        return self.chars

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Utf8Text):
            return self.data == other.data
        if isinstance(other, str):
            return self.chars == len(other) and self.text == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable cache inside; compare by content only

    def __repr__(self) -> str:
        return f"Utf8Text({self.chars:,} chars, {len(self.data):,} bytes)"

    @property
    def newlines(self) -> int:
        if self._newlines is None:
            from webshelf.cache.fastbytes import view

            self._newlines = view(self.data).count(b"\n")
        return self._newlines

    def note_newlines(self, newlines: int) -> None:
        """Record the newline count a pass over the bytes already made (the store's write)."""
        self._newlines = newlines

    @property
    def lines(self) -> int:
        """Lines as ``read_file`` and the footer count them: a last line without "\\n" counts."""
        return self.newlines + (0 if not self.data or self.data.endswith(b"\n") else 1)

    def is_blank(self) -> bool:
        """``not text.strip()`` without decoding the page (unless it starts with non-ASCII
        whitespace after ASCII whitespace, which only a decode can tell)."""
        rest = self.data.lstrip(_ISSPACE_ASCII)
        if not rest:
            return True
        if rest[0] < 0x80:
            return False  # an ASCII character that is not whitespace
        return not self.text.strip()

    def endswith_newline(self) -> bool:
        return self.data.endswith(b"\n")


def char_boundary(data: bytes, pos: int) -> int:
    """The largest offset ≤ ``pos`` that starts a character (not a UTF-8 continuation byte)."""
    pos = max(0, min(pos, len(data)))
    while 0 < pos < len(data) and 0x80 <= data[pos] < 0xC0:
        pos -= 1
    return pos
