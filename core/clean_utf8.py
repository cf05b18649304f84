"""``clean_markdown`` that returns the UTF-8 bytes to store (issue 15: post-fetch ≤ 3× a write).

The page arrives from conversion as a str — UCS-2 as soon as it holds one non-ASCII
character — and the shelf stores UTF-8. Encoding is the most expensive whole-text pass after
the fetch (13 ms per 10 MB here, the plain write+fsync of the bytes is ~30 ms), and the str
cleaner did it twice: once to find the unusual characters, once to store. Here the page is
encoded once; the unusual characters are found on those bytes; the common rules — trailing
whitespace, long lines, blank runs, the final newline — are applied to the bytes, decoding
only the lines that change; and the shelf hashes and writes the result without encoding again
(``cache.utf8.Utf8Text`` carries the bytes with their character count).

Line separators (CR, U+2028, …) and invisible characters are replaced and deleted on the
bytes too, each by its UTF-8 sequence (UTF-8 is self-synchronising: a character's sequence
occurs exactly where the character does). The rules whose regexes are str regexes — data-URI
images — and widths under 126 run on the str, exactly as ``clean.clean_markdown`` runs them:
a page that needs one takes that path whole (one more encode, as before). So the output is
``clean_markdown``'s byte for byte by construction on those pages, and on the others each
rule is the same rule on the same characters and lines
(``tests/core/test_clean_equivalence.py`` checks both paths against it).
"""

from __future__ import annotations

import re

from webshelf.cache.fastbytes import view
from webshelf.cache.utf8 import Utf8Text
from webshelf.core import clean as _c

_BLANK_RUN = re.compile(b"\n\n\n+")


def _encoded(text: str) -> tuple[str, bytes, str]:
    """(text with lone surrogates made U+FFFD, its UTF-8, its unusual characters — see
    ``clean._unusual``: everything but printable ASCII, tab and newline)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        text = _c._SURROGATE.sub("\ufffd", text)
        data = text.encode("utf-8")
    return text, data, data.translate(None, _c._PRINTABLE_ASCII).decode("utf-8")


def _normalised(text: str, data: bytes, rest: str) -> tuple[bytes, int] | None:
    """(``data`` with the line-separator and invisible-character rules applied, its length in
    characters) — or None when a rule only the str cleaner applies may have work: a data image
    (its regexes are str regexes) or, by the caller, a narrow width.

    ``clean.clean_markdown``'s order on the bytes: CRLF and CR, then every other separator as
    "\\n" (each character's UTF-8 sequence replaced: UTF-8 is self-synchronising, so a sequence
    occurs exactly where its character does), then the image check on that text, then each
    invisible character that occurs (``rest`` says which) deleted."""
    chars = len(text)
    rare = set(rest)  # each unusual character once
    broken = "\r" in rare or any(brk in rare for brk in _c.LINE_BREAKS)
    if broken:
        if "\r" in rare:
            chars -= view(data).count(b"\r\n")
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        for brk in _c.LINE_BREAKS:
            if brk in rare:
                data = data.replace(brk.encode("utf-8"), b"\n")
    if view(data).find(b"data:") >= 0:
        if broken:  # no str of the normalised text to run the HTML regex on: the gates decide
            if _images_may_change_bytes(data):
                return None  # the str cleaner runs the image regexes (it normalises first too)
        elif _images_may_change(text, data) and _c.replace_data_images(text) != text:
            return None
    if not rare:
        return data, chars
    gone = _c.LINE_BREAKS + "\r"
    invisible = _c._invisible_pattern()
    for char in sorted(c for c in rare if c not in gone and invisible.match(c)):
        seq = char.encode("utf-8")
        chars -= view(data).count(seq)
        data = data.replace(seq, b"")
    return data, chars


def _images_may_change_bytes(data: bytes) -> bool:
    """``_images_may_change`` without the str: the gates alone (a page with line separators
    or invisible characters has no str of its normalised text to run the HTML regex on)."""
    return view(data).find(b"data:image/") >= 0 or _markdown_image_may_hold(data) or _html_image_may_hold(data)


def _images_may_change(text: str, data: bytes) -> bool:
    """Whether one of ``clean.replace_data_images``' three regexes can match: its own gates,
    taken on the bytes where that is cheaper (a bytes ``find`` of "data:" is ~10× a str one)."""
    return (view(data).find(b"data:image/") >= 0 or _markdown_image_may_hold(data)
            or (_html_image_may_hold(data) and _c._HTML_DATA_IMAGE.search(text) is not None))


# Every ``clean._HTML_DATA_IMAGE`` match starts with "<" and a character that (?i)i matches:
# I, i, U+0130 or U+0131 (both UTF-8 lead byte 0xC4), and holds "data:" (any case) before the
# first ">" after that "<". SIMD finds of the three starts, then that tag's bytes looked at,
# instead of the str regex's scan of every "<" in the page (0.8 ms per MB of pydocs text).
_IMG_STARTS = (b"<i", b"<I", b"<\xc4")


def _html_image_may_hold(data: bytes) -> bool:
    """Whether ``clean._HTML_DATA_IMAGE`` can match: some "<" + an i-like character whose tag,
    up to the next ">", holds "data:" in any case ("DATA:" folds only from ASCII letters).
    A start inside an already looked-at tag is skipped: its tag ends at the same ">" (linear)."""
    find = view(data).find
    for start in _IMG_STARTS:
        pos = find(start)
        while pos >= 0:
            end = data.find(b">", pos)
            if end < 0:
                break  # no ">" after it: no tag of this start can close
            if b"data:" in data[pos:end].lower():
                return True
            pos = find(start, end)
    return False


_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")  # str.isspace() among ASCII


def _markdown_image_may_hold(data: bytes) -> bool:
    """``clean._markdown_image_may_hold`` on the bytes: some "data:" after "](", optional
    whitespace and an optional "<"; a non-ASCII byte where whitespace may be counts as a yes."""
    find = view(data).find
    pos = find(b"data:")
    while pos >= 0:
        j = pos - 1 if pos and data[pos - 1] == 0x3C else pos  # "<"
        while j and data[j - 1] in _ASCII_SPACE:
            j -= 1
        if (j and data[j - 1] >= 0x80) or (j >= 2 and data.startswith(b"](", j - 2)):
            return True
        pos = find(b"data:", pos + 5)
    return False


def clean_utf8(text: str, max_line_chars: int = 1_000) -> Utf8Text:
    """``clean.clean_markdown(text, max_line_chars)`` as UTF-8 bytes with its length in characters."""
    text, data, rest = _encoded(text)
    original = data
    normalised = _normalised(text, data, rest) if (max_line_chars + 2) // 2 >= _c.MIN_BLOCK else None
    if normalised is None:  # a data image, or a width too narrow for the block scan
        return Utf8Text.of(_c.clean_markdown(text, max_line_chars))
    data, chars = normalised
    spaces = [b" "] + ([b"\t"] if b"\t" in data else [])
    if rest:
        spaces += sorted({c.encode() for c in set(rest) if c.isspace() and c not in _c._GONE})
    edits = _line_edits(data, max_line_chars, spaces)
    if edits is None:  # very many lines to change: the per-line pass is as cheap
        return Utf8Text.of(_c.clean_markdown(text, max_line_chars))
    if edits:
        data, delta = _apply(data, edits, max_line_chars)
        chars += delta
    if view(data).find(b"\n\n\n") >= 0:
        before = len(data)
        data = _BLANK_RUN.sub(b"\n\n", data)
        chars -= before - len(data)  # only "\n" removed: bytes are characters
    if not (data.endswith(b"\n") and not data.endswith(b"\n\n") and not data.startswith(b"\n")):
        stripped = data.strip(b"\n")
        chars -= len(data) - len(stripped)
        data = stripped + b"\n" if stripped else b""
        chars = chars + 1 if stripped else 0
    page = Utf8Text(data, chars)
    if data is original:
        page._text = text  # nothing changed: the str is the decoded page (small pages render from it)
    return page


def _line_edits(data: bytes, width: int, spaces: list[bytes]) -> dict[int, int] | None:
    """{line start: line end} (byte offsets) of the lines with trailing whitespace or longer
    than ``width`` characters after rstrip; None past ``clean.MAX_EDITS`` trailing-space lines.
    ``clean._line_edits`` on the bytes: one SIMD ``find`` (``cache.fastbytes``) of each space's
    UTF-8 + b"\\n" — 0.8 ms per 10 MB where ``bytes.find`` of b" \\n" takes 12."""
    edits: dict[int, int] = {}
    find, rfind = view(data).find, data.rfind  # a two-byte probe is a SIMD scan; rfind of b"\n" is memrchr
    for space in spaces:
        probe = space + b"\n"
        pos = find(probe)
        while pos >= 0:
            edits[rfind(b"\n", 0, pos) + 1] = pos + len(space)
            if len(edits) > _c.MAX_EDITS:
                return None
            pos = find(probe, pos + len(probe))
    if any(data.endswith(space) for space in spaces):
        edits[rfind(b"\n") + 1] = len(data)
    for start, end in _long_lines(data, width, (width + 2) // 2):
        edits[start] = end
    return edits


def _long_lines(data: bytes, width: int, step: int):  # noqa: ANN202 — yields (start, end)
    """(start, end) of the lines longer than ``width`` characters after rstrip.

    ``clean._long_lines`` with blocks of ``step`` bytes: a line of more than ``width``
    characters has more than ``width`` bytes, so it passes through a whole block without a
    newline; the few lines found that way are decoded and measured in characters."""
    find, rfind, n = data.find, data.rfind, len(data)
    pos = 0
    while pos < n:
        if find(b"\n", pos, pos + step) >= 0:
            pos += step
            continue
        start = rfind(b"\n", 0, pos) + 1
        end = find(b"\n", pos + step)
        end = n if end < 0 else end
        if end - start > width and len(data[start:end].decode("utf-8").rstrip()) > width:
            yield start, end
        pos = (end // step + 1) * step


def _apply(data: bytes, edits: dict[int, int], width: int) -> tuple[bytes, int]:
    """(``data`` with each edited line rstripped and wrapped, the change in characters)."""
    pieces: list[bytes] = []
    prev = delta = 0
    for start in sorted(edits):
        end = edits[start]
        old = data[start:end].decode("utf-8")
        line = old.rstrip()
        if len(line) > width:
            line = "\n".join(_c.wrap_line(line, width))
        pieces.append(data[prev:start])
        pieces.append(line.encode("utf-8"))
        delta += len(line) - len(old)
        prev = end
    pieces.append(data[prev:])
    return b"".join(pieces), delta


def clean_utf8_for_store(text: str, max_line_chars: int = 1_000,
                         max_chars: int | None = None) -> tuple[Utf8Text, int | None]:
    """``clean.clean_for_store`` returning ``Utf8Text``: (cleaned page, length of the raw page
    when only a prefix was cleaned, else None) — the same prefix rule, so the same text."""
    if max_chars is None:
        return clean_utf8(text, max_line_chars), None
    want = max_chars + max_line_chars + 2
    limit = int(max_chars * (1 + _c.CUT_MARGIN)) + _c.CUT_PAD
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit) + 1 or limit
        cleaned = clean_utf8(text[:cut], max_line_chars)
        if cleaned.chars > want:
            return cleaned, len(text)
        limit *= 2
    return clean_utf8(text, max_line_chars), None
