"""Cheap checks on HTML *text*, before any tree is built (issue 16, item 1).

Two hostile shapes cost far more than their size once parsed:

- **many elements** (2.4 million ``<p>`` in 9.6 MB: 2.1 GB as a tree) — counted here with one
  C-speed scan and refused as ``too_complex`` above ``web.max_html_elements``;
- **deep nesting** (100,000 nested ``<div>``, 1.1 MB): Lexbor's tree builder is quadratic in the
  depth (50 s) and html-to-markdown drops text below its own depth limit. Elements deeper than
  ``MAX_DEPTH`` are *unwrapped* here — their tags dropped, their text kept — so the page parses
  in milliseconds and its text reaches the agent.

The depth estimate is a fast pass (``findall``, per-chunk ``Counter`` objects, then ``accumulate`` only
when a bound from the counts cannot clear the page) that over-counts (void and optional-end tags
never close); only a page it flags — or one with stray end tags, which
could hide depth from it — gets the exact per-name scan in Python that rewrites the text.

Why this stays a pass of its own before the parse (issue 14's speed pass looked at folding it
into the Lexbor parse every page gets anyway): the flattening has to happen *before* the tree
is built (building the deep tree is the quadratic cost), and the parsed tree's depth is not the
scan's — the tree builder closes what the scan keeps open (a second ``<a>`` closes the first)
and adds what the scan never sees (implied ``<tbody>``, reopened formatting elements), so
deciding from the tree would change which pages are flattened. The screen costs about one regex ``findall`` of the tag marks plus two C passes over
them (~0.8 ms on a median WCXB page, against ~1.2 ms for the parse). On the served path it runs
on the page's UTF-8 bytes (``precheck_html``'s ``utf8``): the same marks, 1 byte a character
where most decoded pages take 2 or 4. Counts without the list of marks cannot replace it: the
balance needs their order — 943 of the 1,488 WCXB dev + readability pages have more than 512
counted open tags (median balance 18) — and a per-chunk count of ``</p`` or ``</t`` also counts
``</pre``, ``</path``, ``</table``, one C pass per name and case.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import accumulate

import stringzilla

from webshelf.core.convert import native
from webshelf.core.convert.bounds import Bounds
from webshelf.errors import TooComplexError

# One string per tag ("<div", "</div"), no groups: a tuple and two strings per tag was 25% of the scan.
# No optional "/" either (``</?[A-Za-z]…`` backtracks at every end tag: the scan took 1.35× as
# long): "/" is one of the first character's choices, so ``</`` before a non-letter ("</", "</1")
# is a mark too — a mark with no name, which counts for nothing (``_Steps``, ``_maybe_deep``).
_MARK = re.compile(r"<[/A-Za-z][A-Za-z0-9:-]*")
_MARK_BYTES = re.compile(_MARK.pattern.encode())
_TOKEN = re.compile(r"<!--.*?(?:-->|\Z)|<(/?)([A-Za-z][A-Za-z0-9:-]*)[^<>]*>?", re.S)
VOID = frozenset("area base br col embed hr img input link meta param source track wbr keygen frame image".split())
# End tag optional (closed implicitly by the parser): never counted, never dropped.
OPTIONAL_END = frozenset("p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp "
                         "html head body".split())
RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes noscript plaintext".split())


def element_count(html: str | bytes, bounds: Bounds) -> int:
    """Elements (opening tags) in ``html``; ``TooComplexError`` above ``bounds.max_elements``.

    ``html`` may be the page's UTF-8 bytes instead of its text (``precheck_html``'s ``utf8``):
    every ``<`` and tag name is ASCII, and an ASCII byte in UTF-8 is always that character, so
    the counts are the same; the bytes are counted by stringzilla (SIMD, ~3× ``str.count`` on
    the UCS-2/UCS-4 text most pages decode to)."""
    text = stringzilla.Str(html) if isinstance(html, bytes) else html
    upper = text.count("<")
    if upper <= bounds.max_elements:
        return upper
    # Opening tags = every "<" but end tags, comments/doctypes, processing instructions and a "<"
    # before a space: five C passes, no list of matches (findall of 2.4 million: ~200 MB, ~1 s).
    # Over-counts only a bare "<" before another character in text, which valid HTML writes &lt;.
    count = upper - sum(text.count(s) for s in ("</", "<!", "<?", "< ", "<\n"))
    if count > bounds.max_elements:
        raise TooComplexError(f"the page has {count:,} HTML elements, more than web.max_html_elements "
                              f"({bounds.max_elements:,}); converting it would need too much memory — raise "
                              "web.max_html_elements (and web.convert_memory_mb) to read it")
    return count




class _Steps(dict):
    """A tag's mark (``<name`` or ``</name``) → +1 / -1 / 0 for the running balance, filled on first sight."""

    def __missing__(self, key: str) -> int:
        close = key[1] == "/"
        name = key[2 if close else 1:].lower()
        step = 0 if name in VOID or name in OPTIONAL_END or not name[:1].isalpha() else (-1 if close else 1)
        if len(self) < STEPS_MEMO:  # a page of millions of distinct tag names must not grow it for good
            self[key] = step
        return step


STEPS_MEMO = 4096  # distinct marks remembered per process (real pages use a few dozen)
_STEPS = _Steps()


class _ByteSteps(dict):
    """``_Steps`` for the marks of the page's UTF-8 bytes (``b"<div"``, ``b"</div"``)."""

    def __missing__(self, key: bytes) -> int:
        step = _STEPS[key.decode("ascii")]  # a mark is ASCII by its pattern
        if len(self) < STEPS_MEMO:
            self[key] = step
        return step


_BYTE_STEPS = _ByteSteps()


def _maybe_deep(html: str | bytes, max_depth: int) -> bool:
    """Could ``html`` nest deeper than ``max_depth``? The running balance of counted open and end
    tags (an over-estimate), plus the end tags that match no open tag of their name — the only way
    to make the balance *under*-estimate the depth the parser builds. Every pass over the marks
    runs in C; Python loops only over the distinct marks of each chunk (``_balance_bound``).

    On the page's UTF-8 bytes (see ``element_count``) the marks are the text's, encoded: the same
    answer, from a scan of 1 byte a character where most decoded pages take 2 or 4."""
    raw = isinstance(html, bytes)
    count, bound, stray = (_mark_bound if raw else _python_mark_bound)(html, _CHUNKS)
    if count <= max_depth:  # balance + stray ≤ opens + end tags ≤ marks
        return False
    if bound + stray <= max_depth:
        return False
    slash = b"/" if raw else "/"
    table = _BYTE_STEPS if raw else _STEPS
    steps = marks = (_MARK_BYTES if raw else _MARK).findall(html)  # (the ordered pass: rare)
    if marks[0][1:2] == slash and not marks[0][2:3].isalpha():  # nameless marks first: the running
        # balance must start at the first tag's step, as on tags alone (it can be negative)
        first = next((i for i, m in enumerate(marks) if m[1:2] != slash or m[2:3].isalpha()), None)
        if first is None:
            return False
        steps = marks[first:]
    balance = max(accumulate(map(table.__getitem__, steps)))
    return balance + stray > max_depth


def _python_mark_bound(html: str | bytes, chunks: int) -> tuple[int, int, int]:
    """(the number of tag marks in ``html``, ``_balance_bound`` and ``_stray`` of their counts in
    ``chunks`` consecutive runs of equal size)."""
    raw = isinstance(html, bytes)
    marks = (_MARK_BYTES if raw else _MARK).findall(html)
    if not marks:
        return 0, 0, 0
    size = -(-len(marks) // chunks)
    parts = [Counter(marks[at:at + size]) for at in range(0, len(marks), size)]
    return (len(marks), _balance_bound(parts, _BYTE_STEPS if raw else _STEPS),
            _stray(parts, *((b"<", b"/") if raw else ("<", "/"))))


_mark_bound = _python_mark_bound
_CHECK = b"<html><div><DIV></div></1><//x><a:b-c9>< p></p><br/><!-- <b> --></Div </P></span " * 7 + b"<"
if native.mark_bound is not None:
    native.mark_steps(VOID | OPTIONAL_END)


# Quarters of the marks: the bound below passes on most pages with 4 (0.78 ms against 0.90 for the
# screen on a median WCXB page; 2 and 8 gain less, a pass over more distinct marks each).
_CHUNKS = 4


def _balance_bound(parts: list[Counter], table: dict) -> int:
    """An upper bound of the running balance from the counts of its marks in consecutive chunks:
    within a chunk it is at most the balance the chunk starts at plus the chunk's counted opens.

    Why: a pass over each chunk's distinct marks (a few hundred) instead of the ordered pass over
    every mark (~0.2 ms on a median page); only a page the bound cannot clear gets that pass, and
    the answer is the same (the exact balance is never above the bound)."""
    bound = level = 0
    for counts in parts:
        opens = closes = 0
        for mark, n in counts.items():
            step = table[mark]
            if step > 0:
                opens += n
            elif step < 0:
                closes += n
        bound = max(bound, level + opens)
        level += opens - closes
    return bound


def _stray(parts: list[Counter], lt: str | bytes, slash: str | bytes) -> int:
    """End tags that match no open tag of their name, from the chunks' counts of the marks."""
    seen = parts[0].copy()
    for counts in parts[1:]:
        seen.update(counts)
    return sum(max(0, n - seen.get(lt + mark[2:], 0)) for mark, n in seen.items()
               if mark[1:2] == slash and mark[2:3].isalpha())  # (a nameless "</…" is no end tag)


def flatten_deep(html: str, max_depth: int) -> tuple[str, int]:
    """(``html`` with elements deeper than ``max_depth`` unwrapped, how many were unwrapped)."""
    if not _maybe_deep(html, max_depth):
        return html, 0
    out: list[str] = []
    open_by_name: Counter[str] = Counter()
    dropped_by_name: Counter[str] = Counter()
    depth = dropped = 0
    last = pos = 0
    while (m := _TOKEN.search(html, pos)) is not None:
        pos = m.end()
        name = (m.group(2) or "").lower()
        if not name or name in VOID or name in OPTIONAL_END:
            continue
        if m.group(1):  # an end tag
            if dropped_by_name[name]:
                dropped_by_name[name] -= 1
                out.append(html[last:m.start()])
                out.append(" ")
                last = pos
            elif open_by_name[name]:
                open_by_name[name] -= 1
                depth -= 1
            continue
        if name in RAW_TEXT:  # its content is text, not tags: jump to its end tag
            end = re.compile(rf"</{name}\s*>", re.I).search(html, pos)
            pos = end.end() if end else len(html)
            continue
        if depth >= max_depth:
            dropped_by_name[name] += 1
            dropped += 1
            out.append(html[last:m.start()])
            out.append(" ")
            last = pos
        else:
            open_by_name[name] += 1
            depth += 1
    if not dropped:
        return html, 0
    out.append(html[last:])
    return "".join(out), dropped


def precheck_html(html: str, bounds: Bounds, utf8: bytes | None = None) -> str:
    """The HTML to parse: refused when it has too many elements, flattened when it is too deep.

    ``utf8``: the page's bytes when ``html`` is exactly their UTF-8 decoding (by_type passes
    them): the screens run on them (see ``element_count``); only a flagged page's text is scanned."""
    scan = html if utf8 is None else utf8
    if element_count(scan, bounds) <= bounds.max_depth:
        return html  # fewer tags than the depth limit: cannot be too deep
    if not _maybe_deep(scan, bounds.max_depth):
        return html
    return flatten_deep(html, bounds.max_depth)[0]


# (last: the reference it is checked against needs the helpers above)
if native.mark_bound is not None and all(native.mark_bound(sample, n) == _python_mark_bound(sample, n)
                                         for sample in (_CHECK, _CHECK[:40], _CHECK[::-1], b"", b"x<", b"<a")
                                         for n in (1, 4, 5)):
    _mark_bound = native.mark_bound  # the same three numbers, the marks hashed in C (core/convert/native)
