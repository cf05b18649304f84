"""``search_page``: find lines in a stored page, so an agent can jump instead of paging.

A long page comes back truncated; the outline in the footer names the omitted headings, but
an agent looking for one identifier or phrase wants line numbers. ``search_page`` returns the
matching lines (``N|text``, the same numbering as ``read_file``) with context lines around
them, grouped like grep, plus a ready ``read_file`` call for the first match.

Confinement is ``core.read``'s: only pages stored in ``cache/web/``. The pattern is plain
text unless ``regex=True``. Output is bounded (``max_results`` matching lines, each shown
line clipped around the match) and a regex search has a time budget, because Python regexes
can backtrack catastrophically and pages can be megabytes: the ``regex`` package's
``timeout`` stops such a search with an error that says what to do.

The timeout covers matching only; *compiling* is bounded by ``compile_guard`` before the
``regex`` package sees the pattern. Counted repeats expand in the compiled program, so
``(?:a{65535}){65535}`` — 19 characters — asks for billions of program nodes (1.1 GB for
``(?:a{2000}){2000}``; the larger one OOM-killed a 23 GB machine). The guard estimates the
expanded size (each atom 1, a group the sum of its parts, a ``{m,n}`` repeat times its largest
count, nested repeats multiply) and refuses patterns over ``MAX_PATTERN_COST``, in microseconds.
"""

from __future__ import annotations

import bisect
import mmap
import os
import time

import regex as regex_engine

from webshelf.cache.layout import CacheLayout
from webshelf.core.config import Config, load_config
from webshelf.errors import InputError, clip
from webshelf.core import line_index
from webshelf.core.read import open_page_fd, resolve_page_path
from webshelf.core.truncate import READ_LIMIT

MAX_RESULTS = 200
DEFAULT_RESULTS = 20
MAX_PATTERN_CHARS = 1_000
MAX_CONTEXT = 5
SEARCH_TIMEOUT_S = 1.0  # the regex package overshoots its timeout (≈2× here), so ≈2 s of wall time
SHOWN_LINE_CHARS = 240  # a shown line longer than this is clipped around the match
MAX_REPEAT = 10_000  # the largest count in one {m,n} repeat
MAX_PATTERN_COST = 100_000  # the largest estimated size of the expanded pattern (≈ 30 MB compiled)
_REPEAT = regex_engine.compile(r"\{(\d*)(?:,(\d*))?\}")


def compile_guard(pattern: str) -> None:
    """Refuse a regex whose compiled form would be huge, before compiling it (see the module doc).

    A linear scan: a stack of group sizes; escapes and character classes are one atom; a
    quantifier multiplies the atom or group just before it. An over-estimate is harmless (the
    pattern is refused with the reason), so alternation is summed, not maxed."""
    stack: list[int] = [0]
    last = 0  # the size of the atom or group just before the current position
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            last = 1
            stack[-1] += 1
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            last = 1
            stack[-1] += 1
            continue
        if c == "(":
            stack.append(0)
            i += 1
            if pattern.startswith("?#", i):  # a comment
                end = pattern.find(")", i)
                i = n if end < 0 else end
            continue
        if c == ")":
            inner = stack.pop() if len(stack) > 1 else 0
            last = max(inner, 1)
            stack[-1] += last
            i += 1
            continue
        if c == "{" and (m := _REPEAT.match(pattern, i)) and (m.group(1) or m.group(2)):
            counts = [int(g) for g in m.groups() if g]
            count = max(counts)
            if count > MAX_REPEAT:
                raise InputError(
                    f"the regex repeats {clip(m.group(0))}: at most {MAX_REPEAT:,} repetitions are allowed in one "
                    "{m,n}; use a smaller count, or search for a shorter piece")
            stack[-1] += last * (count - 1)
            last *= count
            i = m.end()
        else:
            if c not in "*+?|^$":
                last = 1
                stack[-1] += 1
            i += 1
        if sum(stack) > MAX_PATTERN_COST:
            raise InputError(
                f"the regex {clip(pattern, quote=True)} expands to more than {MAX_PATTERN_COST:,} steps when compiled "
                "(nested counted repeats such as (?:a{1000}){1000} multiply); use smaller counts or fewer nested "
                "repeats, or pass regex=false to search for plain text")


def _compile(pattern: str, *, use_regex: bool, case_sensitive: bool) -> regex_engine.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        raise InputError("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InputError(f"pattern {clip(pattern, quote=True)} is {len(pattern):,} characters; "
                         f"at most {MAX_PATTERN_CHARS:,} are allowed")
    if "\n" in pattern and not use_regex:
        raise InputError("pattern must not contain a newline: search_page matches within single lines")
    flags = regex_engine.MULTILINE | regex_engine.V0 | (0 if case_sensitive else regex_engine.IGNORECASE)
    if use_regex:
        compile_guard(pattern)
    source = pattern if use_regex else regex_engine.escape(pattern)
    try:
        return regex_engine.compile(source, flags)
    except regex_engine.error as exc:
        raise InputError(
            f"bad regular expression {clip(pattern, quote=True)}: {exc}; fix it, or pass regex=false to search for the text literally"
        ) from None


def _clip(line: str, start: int | None, end: int | None) -> str:
    """A shown line, at most SHOWN_LINE_CHARS, keeping the match (if any) in view."""
    if len(line) <= SHOWN_LINE_CHARS:
        return line
    if start is None:
        return line[:SHOWN_LINE_CHARS] + "…"
    end = min(max(end or start, start), start + SHOWN_LINE_CHARS // 2)
    left = max(0, min(start - (SHOWN_LINE_CHARS - (end - start)) // 2, len(line) - SHOWN_LINE_CHARS))
    right = left + SHOWN_LINE_CHARS
    return ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")


_COUNT_CHUNK = 1 << 20
BYTES_SEARCH = True  # False: always the decoded search (tests compare the two)
# Non-ASCII characters that match an ASCII letter when case is ignored (the regex package's
# folding: U+0130 ~ i, U+017F ~ s, U+212A ~ k), in UTF-8. An ASCII pattern can be searched as
# bytes, with exactly the str search's result, unless it holds one of these letters and the
# page holds the character folding to it.
_FOLDS_TO_ASCII = (("i", b"\xc4\xb0"), ("s", b"\xc5\xbf"), ("k", b"\xe2\x84\xaa"))


def _bytes_exact(data, pattern: str, *, regex: bool, case_sensitive: bool) -> bool:
    if not BYTES_SEARCH or regex or not pattern.isascii():
        return False
    lower = pattern.lower()
    return case_sensitive or not any(c in lower and data.find(f) >= 0 for c, f in _FOLDS_TO_ASCII)


def _count_newlines(text, start: int, end: int) -> int:
    """Newlines in text[start:end] for a str, bytes or mmap (mmap has no count: 1 MB slices)."""
    if not isinstance(text, mmap.mmap):
        return text.count("\n" if isinstance(text, str) else b"\n", start, end)
    return sum(text[i:min(i + _COUNT_CHUNK, end)].count(b"\n") for i in range(start, end, _COUNT_CHUNK))


def _find(compiled: regex_engine.Pattern, text, wanted: int, shown: str,
          starts: dict[int, int] | None = None, index: line_index.LineIndex | None = None,
          ) -> tuple[list[tuple[int, int, int]], int]:
    """Matching lines as (line number, match start, match end) within the line, the first
    ``wanted`` of them, and how many lines match in all. One match per line is reported;
    ``starts`` (if given) receives each reported line's start offset. ``text`` is a str, or
    the page's bytes (then offsets are byte offsets, and ``index``, the page's newline index,
    turns a match offset into a line number without counting from the previous match)."""
    nl = "\n" if isinstance(text, str) else b"\n"
    hits: list[tuple[int, int, int]] = []
    total = 0
    line, counted_to, pos = 1, 0, 0
    timeout = SEARCH_TIMEOUT_S
    deadline = time.monotonic() + timeout
    size = len(text)
    ends_with_nl = size > 0 and text[size - 1:size] == nl
    while pos <= size:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            m = compiled.search(text, pos, timeout=remaining)
        except TimeoutError:
            raise InputError(
                f"{shown}: the pattern took longer than {timeout:g} s on this {size:,}-character page "
                "(probably catastrophic backtracking, e.g. nested quantifiers like (a+)+); "
                "simplify the pattern, or pass regex=false to search for plain text",
                path=shown,
            ) from None
        if m is None or (m.start() == size and ends_with_nl):
            break  # (an empty match after the final newline is not on any line)
        if index is not None:
            line = 1 + line_index.newlines_before(text, index, m.start())
        else:
            line += _count_newlines(text, counted_to, m.start())
        counted_to = m.start()
        line_start = text.rfind(nl, 0, m.start()) + 1
        total += 1
        if len(hits) < wanted:
            hits.append((line, m.start() - line_start, m.end() - line_start))
            if starts is not None:
                starts[line] = line_start
        next_newline = text.find(nl, m.start())
        if next_newline < 0:
            break
        pos = next_newline + 1  # one report per line: continue on the next line
    return hits, total


class _Lines:
    """The lines of ``text`` (a str, or the page's bytes: lines are decoded) by 1-based number,
    found on demand by walking from the nearest anchor (a matching line's known start) — only
    the lines shown are sliced out (splitting a 50 MB page into a million strings to show
    forty of them was most of a search's time)."""

    def __init__(self, text, anchors: dict[int, int]) -> None:
        self.text = text
        self.nl = "\n" if isinstance(text, str) else b"\n"
        self._anchors = {1: 0, **anchors}  # line number -> offset of its start
        self._keys = sorted(self._anchors)

    def start(self, n: int) -> int | None:
        """Offset where line ``n`` starts, or None when there is no such line."""
        text, nl = self.text, self.nl
        at = bisect.bisect_right(self._keys, n) - 1
        line = self._keys[at]
        if at + 1 < len(self._keys) and self._keys[at + 1] - n < n - line:
            line = self._keys[at + 1]
        pos = self._anchors[line]
        while line < n:
            nxt = text.find(nl, pos)
            if nxt < 0:
                return None
            pos, line = nxt + 1, line + 1
        while line > n:
            pos = text.rfind(nl, 0, pos - 1) + 1 if line > 2 else 0
            line -= 1
        return pos if pos < len(text) else None  # after a final newline there is no line

    def line(self, n: int) -> str:
        pos = self.start(n)
        end = self.text.find(self.nl, pos)
        raw = self.text[pos:] if end < 0 else self.text[pos:end]
        return raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")

    def chars(self, n: int, offset: int) -> int:
        """A byte offset within line ``n`` as a character offset (identity for str text)."""
        if isinstance(self.text, str):
            return offset
        pos = self.start(n)
        return len(self.text[pos:pos + offset].decode("utf-8", errors="replace"))


def _render(lines: _Lines, hits: list[tuple[int, int, int]], context: int) -> list[str]:
    """grep-style groups: '>' marks a matching line, ' ' a context line, '--' separates groups."""
    by_line = {n: (lines.chars(n, s), lines.chars(n, e)) for n, s, e in hits}
    wanted: list[int] = sorted({k for n, _, _ in hits for k in range(n - context, n + context + 1)
                                if k >= 1 and lines.start(k) is not None})
    out: list[str] = []
    previous = None
    for n in wanted:
        if previous is not None and n != previous + 1:
            out.append("--")
        span = by_line.get(n)
        mark = ">" if span else " "
        out.append(f"{mark}{n}|{_clip(lines.line(n), *(span or (None, None)))}")
        previous = n
    return out


def search_page(
    path: str | os.PathLike[str],
    pattern: str,
    max_results: int = DEFAULT_RESULTS,
    *,
    regex: bool = False,  # the name an agent sees in the tool schema
    case_sensitive: bool = False,
    context: int = 1,
    config: Config | None = None,
) -> str:
    """Lines of a stored page that match ``pattern``, with ``context`` lines either side."""
    if isinstance(max_results, bool) or not isinstance(max_results, int) or not 1 <= max_results <= MAX_RESULTS:
        raise InputError(f"max_results must be between 1 and {MAX_RESULTS} (got {max_results!r})")
    if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= MAX_CONTEXT:
        raise InputError(f"context must be between 0 and {MAX_CONTEXT} lines (got {context!r})")
    compiled = _compile(pattern, use_regex=bool(regex), case_sensitive=bool(case_sensitive))
    config = config or load_config()
    layout = CacheLayout(config.home)
    real = resolve_page_path(path, layout)
    shown = clip(path)
    fd = open_page_fd(real, layout, shown)
    try:
        data = line_index.mapped(fd)
        try:
            return _search(data, compiled, pattern, max_results, regex=bool(regex),
                           case_sensitive=bool(case_sensitive), context=context, shown=shown, fd=fd)
        finally:
            if not isinstance(data, bytes):
                data.close()
    finally:
        os.close(fd)


def _search(data, compiled, pattern: str, max_results: int, *, regex: bool, case_sensitive: bool,
            context: int, shown: str, fd: int) -> str:
    """The search over the mapped page: as bytes when that gives the str search's exact result
    (a plain ASCII pattern, and — ignoring case — no character that folds to an ASCII letter
    on the page), which skips decoding 50 MB to find one word; else over the decoded text."""
    if _bytes_exact(data, pattern, regex=regex, case_sensitive=case_sensitive):
        text = data
        flags = regex_engine.MULTILINE | regex_engine.V0 | (0 if case_sensitive else regex_engine.IGNORECASE)
        compiled = regex_engine.compile(regex_engine.escape(pattern.encode("ascii")), flags)
    else:
        text = data[:].decode("utf-8", errors="replace")  # one C decode; str keeps Unicode case rules
    starts: dict[int, int] = {}
    index = line_index.index_for(fd, data) if text is data and len(data) else None  # shared with read_file
    hits, total = _find(compiled, text, max_results, shown, starts, index)
    kind = "regex" if regex else "text"
    case = "case-sensitive" if case_sensitive else "ignoring case"
    if not hits:
        return f"no lines match {kind} {clip(pattern, quote=True)} ({case}) in {shown}\n"
    lines = _Lines(text, starts)  # numbering as read_file: a final newline ends the last line
    header = f"{total:,} matching line{'s' if total != 1 else ''} for {kind} {clip(pattern, quote=True)} ({case}) in {shown}"
    if total > len(hits):
        header += f"; showing the first {len(hits)}"
    body = _render(lines, hits, context)
    first = hits[0][0]
    tail = [f"Read around a match: read_file path=\"{shown}\" offset={max(1, first - 5)} limit={READ_LIMIT}"]
    if total > len(hits):
        more = f"{total - len(hits):,} more matching lines not shown; "
        tail.append(more + (f"raise max_results (up to {MAX_RESULTS}) or narrow the pattern"
                            if len(hits) < MAX_RESULTS else "narrow the pattern"))
    return "\n".join([header + ":", *body, *tail]) + "\n"
