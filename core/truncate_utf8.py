"""``truncate.render`` and ``truncate.headings`` on a page held as UTF-8 (``Utf8Text``).

Why (issue 15): the window shows ~15,000 characters of a page that may be 50 MB. Decoding
the whole page to cut two windows from it costs a whole-text pass; here only the bytes that
can end up in a window are decoded (``Utf8Ends``: a head and a tail of 4 bytes per budget
character, enough for any character mix), and the outline's heading scan runs on the bytes
(``headings_utf8``), decoding only the heading lines it reports.

Sameness with the str code: ``Utf8Ends`` answers the few str calls ``render`` makes
(``len``, ``find``/``rfind``/``count`` of "\\n", slices, ``endswith``) with character offsets,
so ``render`` runs its one body on it; a call outside the decoded ends raises ``OutOfReach``
and ``render`` starts again on the decoded page — never a wrong answer. The heading scan
finds the same candidates (ASCII literals: their occurrences are the same in the bytes) and
checks each with ``truncate``'s own str patterns on the decoded line whenever the line's
prefix is not pure ASCII (``\\d`` and ``str.strip`` know non-ASCII digits and spaces; bytes
patterns do not).
"""

from __future__ import annotations

import re

from webshelf.cache.fastbytes import SIMD, view
from webshelf.cache.utf8 import Utf8Text, char_boundary
from webshelf.core import truncate as _t

_HASH = re.compile(b"#[ \t]")
_FENCES = (re.compile(b"```"), re.compile(b"~~~"))
_PREFIX = re.compile(_t._PREFIX.pattern.encode())
_LINE_MARK = re.compile(_t._MARK.encode())
BYTES_PER_CHAR = 4  # UTF-8's longest character: ``reach`` characters lie within 4 × reach bytes


class OutOfReach(LookupError):
    """A str call asked for text outside the decoded head and tail."""


class Utf8Ends:
    """The head and the tail of a ``Utf8Text``, decoded, answering str calls in character
    offsets of the whole page: ``rfind`` and head slices within the head, ``find``, ``count``
    from an offset and tail slices within the tail. Built for ``render``: ``reach`` is the
    budget, which bounds every window and every offset ``render`` asks about."""

    def __init__(self, page: Utf8Text, reach: int) -> None:
        data = page.data
        self.page = page
        self.chars = page.chars
        span = BYTES_PER_CHAR * (reach + 2)
        self.head = data[:char_boundary(data, span)].decode("utf-8")
        self.tail_byte = char_boundary(data, len(data) - span)
        self.tail = data[self.tail_byte:].decode("utf-8")
        self.tail_at = self.chars - len(self.tail)  # character offset of the tail in the page

    def __len__(self) -> int:
        return self.chars

    def endswith(self, suffix: str) -> bool:
        return self.tail.endswith(suffix)

    def _in_head(self, end: int) -> None:
        if end > len(self.head):
            raise OutOfReach(end)

    def _in_tail(self, start: int) -> int:
        if start < self.tail_at:
            raise OutOfReach(start)
        return start - self.tail_at

    def rfind(self, sub: str, start: int, end: int) -> int:
        self._in_head(end)
        return self.head.rfind(sub, start, end)

    def find(self, sub: str, start: int) -> int:
        at = self.tail.find(sub, self._in_tail(max(start, 0)))
        return at + self.tail_at if at >= 0 else -1

    def count(self, sub: str, start: int = 0, end: int | None = None) -> int:
        if end is None:
            return self.tail.count(sub, self._in_tail(start))
        self._in_head(end)
        return self.head.count(sub, start, end)

    def __getitem__(self, part: slice) -> str:
        if part.step is not None:
            raise OutOfReach(part)
        if part.start in (None, 0) and part.stop is not None:
            self._in_head(part.stop)
            return self.head[:part.stop]
        if part.stop is None and part.start is not None:
            return self.tail[self._in_tail(part.start):]
        raise OutOfReach(part)

    def byte_offset(self, pos: int) -> int:
        """The byte offset of character offset ``pos`` (inside the tail)."""
        return self.tail_byte + len(self.tail[:self._in_tail(pos)].encode("utf-8"))


def headings_utf8(data: bytes, end: int) -> list[_t.Heading]:
    """``truncate.headings(text, end=E)`` for ``data`` = UTF-8 of ``text`` and ``end`` = the
    byte offset of E: the same headings, line numbers and titles."""
    found: list[_t.Heading] = []
    line, pos = 1, 0
    end = min(end, len(data))
    find = data.find
    count, line_mark, closing, heading = view(data).count, _LINE_MARK.match, _t._CLOSING_HASHES.sub, _t.Heading
    for start in _heading_lines(data, end):
        line += count(b"\n", pos, start)
        pos = start
        m = line_mark(data, start)  # groups: 1 indent, 2 list markers, 3 hashes, 4 title
        hashes = m.start(3) if m is not None else -1
        if hashes == start or (hashes > start and data[start:hashes].isascii()):
            title = m.group(4).decode("utf-8")
            indent_bytes = m.group(1)
            indent = len(indent_bytes) if b"\t" not in indent_bytes else len(indent_bytes.expandtabs(4))
            level = m.end(3) - hashes
        else:  # a non-ASCII prefix: truncate's str pattern on the decoded line decides
            stop = find(b"\n", start)
            sm = _t._LINE_MARK.match(data[start:stop if stop >= 0 else len(data)].decode("utf-8"))
            title, indent, level = sm.group("title"), _t._columns(sm.group("indent")), len(sm.group("hashes"))
        if "#" in title:
            title = closing("", title)
        title = title.strip()
        if title and (indent < 4 or _in_list_item(data, start, indent)):
            found.append(heading(line, level, title))
    return found


def _heading_lines(data: bytes, end: int) -> list[int]:
    """``truncate._heading_lines`` on bytes: the "# " candidates of the whole range found at
    once (one SIMD scan instead of one per gap between fenced blocks), those inside a block
    dropped by one walk along the blocks. Same lines: a block's bounds are line starts, so no
    line is split between a block and a gap."""
    tabs = b"\t" in data  # memchr, once: most pages have no tab, and then no "#\t" scan
    blocks = _fenced(data, end)
    outside: list[int] = []
    keep = outside.append
    i, n = 0, len(blocks)
    opened, closed = blocks[0] if blocks else (end, end)
    for at in _occurrences(data, 0, end, _HASH, tabs):
        while at >= closed and i < n:
            i += 1
            opened, closed = blocks[i] if i < n else (end, end)
        if at < opened or at >= closed:
            keep(at)
    return _mark_lines(data, 0, end, _HASH, tabs, marks=outside)


def _fenced(data: bytes, end: int) -> list[tuple[int, int]]:
    """``truncate._fenced`` on bytes."""
    lines = sorted((start, pattern.pattern) for pattern in _FENCES if pattern.pattern[:1] in data  # memchr
                   for start in _mark_lines(data, 0, end, pattern))
    return _t.pair_fences(lines, end)


def _mark_lines(data: bytes, begin: int, end: int, pattern: re.Pattern[bytes], tabs: bool = True, *,
                marks: list[int] | None = None) -> list[int]:
    """``truncate._mark_lines`` on bytes (for the marks at the offsets ``marks`` when given); a line
    whose prefix before the mark is not ASCII is checked with the str patterns on its decoded text."""
    starts: list[int] = []
    last = -1
    rfind, prefix, line_mark = data.rfind, _PREFIX.fullmatch, _LINE_MARK.match
    hashes = pattern is _HASH
    for at in _occurrences(data, begin, end, pattern, tabs) if marks is None else marks:
        start = rfind(b"\n", 0, at) + 1
        if start == last:
            continue
        mark = at
        if hashes:
            while mark > start and data[mark - 1] == 0x23:  # "#"
                mark -= 1
        if mark == start or data[start:mark].isascii():
            ok = (mark == start or prefix(data, start, mark)) and (not hashes or line_mark(data, start))
        else:
            ok = _str_mark(data, start, mark, hashes)
        if ok:
            starts.append(start)
            last = start
    return starts


RARE_MARKS = 2_000  # without SIMD search: fence characters walked with memchr before the regex takes over


def _occurrences(data: bytes, begin: int, end: int, pattern: re.Pattern[bytes],  # noqa: ANN202 — yields offsets
                 tabs: bool = True):
    """Starts of ``pattern``'s non-overlapping matches ("```", "~~~", or "#" + space/tab) in
    ``data[begin:end]``, in order, as ``finditer`` gives them; ``tabs`` False: no "#\\t" anywhere.

    With ``cache.fastbytes`` SIMD search, one ``find`` per occurrence (for "#[ \t]" one per
    needle, merged); a regex scan of the bytes is ~10× slower. Without it, a fence is walked with
    a one-byte ``find`` (memchr) while its character is rare, then the regex scans the rest."""
    if SIMD:
        if pattern is _HASH:
            if tabs:  # the page has a tab (the caller looked once)
                yield from sorted(_all(data, b"# ", begin, end) + _all(data, b"#\t", begin, end))
            else:
                yield from _all(data, b"# ", begin, end)
        else:
            yield from _all(data, pattern.pattern, begin, end)
        return
    if pattern is _HASH:
        yield from (m.start() for m in pattern.finditer(data, begin, end))
        return
    marker = pattern.pattern
    first, size, find, startswith = marker[:1], len(marker), data.find, data.startswith
    pos, seen = find(first, begin, end), 0
    while pos >= 0:
        seen += 1
        if seen > RARE_MARKS:
            yield from (m.start() for m in pattern.finditer(data, pos, end))
            return
        if pos + size <= end and startswith(marker, pos):
            yield pos
            pos = find(first, pos + size, end)
        else:
            pos = find(first, pos + 1, end)


def _all(data: bytes, needle: bytes, begin: int, end: int) -> list[int]:
    """Starts of the non-overlapping occurrences of ``needle`` inside ``data[begin:end]``."""
    find, size, out = view(data).find, len(needle), []
    pos = find(needle, begin, end)
    while pos >= 0:
        out.append(pos)
        pos = find(needle, pos + size, end)
    return out


def _str_mark(data: bytes, start: int, mark: int, hashes: bool) -> bool:
    stop = data.find(b"\n", mark)
    line = data[start:stop if stop >= 0 else len(data)].decode("utf-8")
    at = len(data[start:mark].decode("utf-8"))
    return bool(_t._PREFIX.fullmatch(line, 0, at)) and (not hashes or _t._LINE_MARK.match(line) is not None)


def _in_list_item(data: bytes, start: int, indent: int) -> bool:
    """``truncate._in_list_item`` on bytes (each line looked back at is decoded)."""
    end = start - 1
    for _ in range(_t.LIST_LOOKBACK):
        if end <= 0:
            return False
        begin = data.rfind(b"\n", 0, end) + 1
        prev = data[begin:end].decode("utf-8")
        end = begin - 1
        if not prev.strip():
            continue
        width = _t._columns(prev[: len(prev) - len(prev.lstrip(" \t"))])
        if width < indent:
            return _t._LIST_ITEM.match(prev) is not None
    return False
