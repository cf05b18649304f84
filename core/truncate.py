"""Fit a stored page into the agent's budget without losing anything.

A page within the budget is returned whole. A longer one becomes a head window (≈ head_ratio
of the budget) and a tail window, both cut at line boundaries and copied verbatim, with a
short notice between them and a footer after: the stored path, totals, the ranges shown and
omitted, an outline of the headings in the omitted range (with line numbers, so the agent can
jump), and a ready ``read_file`` call (its path quoted so any path parses back: ``quote_path``).
Head + omitted lines + tail == the stored text, and the whole returned content, footer and
notes included, never exceeds the budget: this is what the agent receives, so the notes about
a page (cached copy, cut stored copy, failed publish) are rendered here, inside it, each once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from webshelf.cache.utf8 import Utf8Text

READ_LIMIT = 500
NOTE_MAX = 400  # characters of one note shown to the agent (a publish error can quote a long message)
OUTLINE_INTRO = " Headings in the omitted part:\n"
OUTLINE_SHARE = 0.15  # at most this share of the budget goes to the outline of omitted headings
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# A heading or fence line: indentation, then list markers ("- ", "1. ", nested "- * "), then the
# mark. CommonMark allows a heading indented up to 3 spaces, and a heading inside a list item
# ("- ## Setup", or "   ## Setup" on a continuation line) is a heading too.
_MARK = (r"(?P<indent>[ \t]*)(?P<list>(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*)"
         r"(?:(?P<hashes>#{1,6})[ \t]+(?P<title>[^\n]*)|(?P<fence>```|~~~)[^\n]*)")
_LINE_MARK = re.compile(_MARK)
_PREFIX = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*")
# Where a mark can be: literal patterns, so the regex engine jumps between them at memchr speed
# (an alternation, or one pattern per line start with an optional prefix, is 3–20× slower).
_HASH = re.compile("#[ \t]")
_FENCES = (re.compile("```"), re.compile("~~~"))
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
LIST_LOOKBACK = 200  # lines looked back to tell a deeply indented heading in a list from indented code


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass
class Window:
    """What the agent sees for one page, and where its pieces came from."""

    content: str
    truncated: bool
    total_chars: int
    total_lines: int
    head_lines: int = 0  # lines 1..head_lines are shown
    tail_start: int = 0  # lines tail_start..total_lines are shown (0 when not truncated)
    outline: list[Heading] = field(default_factory=list)


def headings(text: str | Utf8Text, first_line: int = 1, last_line: int | None = None, *, limit: int | None = None,
             end: int | None = None) -> list[Heading]:
    """ATX headings outside fenced code blocks, with 1-based line numbers, within a range —
    also indented ones and ones inside list items, as a Markdown renderer shows them.

    Stops early: only the text up to the end of ``last_line`` (or the character offset
    ``end``, cheaper when the caller knows it) is scanned for candidates, and the scan ends
    once ``limit`` headings are found (the title needs the first one only).

    Two scans, both led by literal patterns so the regex engine jumps between candidates at
    memchr speed: first the fence lines (``_fenced``), then "# " candidates only in the text
    between fenced blocks — a "# " comment in a code block never reaches Python, and neither
    does a line-number count for it. A mark indented 4 columns or more is indented code
    unless it continues a list item (``_in_list_item``)."""
    if not isinstance(text, str):
        return _headings_of_page(text, first_line, last_line, limit=limit, end=end)
    found: list[Heading] = []
    line, pos = 1, 0
    stop = _line_end(text, last_line) if end is None else min(end, _line_end(text, last_line) if last_line else end)
    for start in _heading_lines(text, stop):
        line += text.count("\n", pos, start)
        pos = start
        if last_line is not None and line > last_line:
            break
        if line < first_line:
            continue
        m = _LINE_MARK.match(text, start)
        title = m.group("title")
        title = (_CLOSING_HASHES.sub("", title) if "#" in title else title).strip()
        indent = _columns(m.group("indent"))
        if title and (indent < 4 or _in_list_item(text, start, indent)):
            found.append(Heading(line, len(m.group("hashes")), title))
            if limit is not None and len(found) >= limit:
                break
    return found


def _headings_of_page(page: Utf8Text, first_line: int, last_line: int | None, *, limit: int | None,
                      end: int | None) -> list[Heading]:
    """``headings`` of a ``Utf8Text``: with ``last_line`` (the title: the first 200 lines) only
    those lines are decoded; a whole-page scan (no ``end``, no ``last_line``) runs on the bytes."""
    from webshelf.core.truncate_utf8 import headings_utf8

    if last_line is not None:
        prefix = page.data[:_line_end(page.data, last_line)].decode("utf-8")
        return headings(prefix, first_line, last_line, limit=limit, end=end)
    if end is None and first_line == 1 and limit is None:
        return headings_utf8(page.data, len(page.data))
    return headings(page.text, first_line, last_line, limit=limit, end=end)


def _line_end(text: str | bytes, last_line: int | None) -> int:
    """The offset just past line ``last_line`` (the whole text when None or past the end); on
    bytes (UTF-8) a byte offset."""
    if last_line is None:
        return len(text)
    newline = "\n" if isinstance(text, str) else b"\n"
    pos = 0
    for _ in range(max(last_line, 0)):
        pos = text.find(newline, pos) + 1
        if pos == 0:
            return len(text)
    return pos


def _heading_lines(text: str, end: int):  # noqa: ANN202 — yields line starts in order
    """Starts of the lines before ``end`` that hold a heading mark ("#"…"###### " after the
    allowed prefix, ``_LINE_MARK`` matches as a heading) outside fenced blocks, in order."""
    gap = 0
    for opened, closed in _fenced(text, end):
        yield from _mark_lines(text, gap, opened, _HASH)
        gap = closed
    yield from _mark_lines(text, gap, end, _HASH)


def _fenced(text: str, end: int) -> list[tuple[int, int]]:
    """(start of the opening fence line, start of the closing one — or ``end`` when it never
    closes) of every fenced block whose opening fence starts before ``end``.

    A fence line is the prefix then ``` or ~~~; a block closes at the next fence line with the
    same marker. Fence lines and heading lines are disjoint (the character after the prefix is
    "`"/"~" or "#"), so headings never change the fence state and can be looked for later."""
    # "x" in text is memchr speed (~1 ms per 10 MB), a three-character scan ~7 ms: skip a marker the page lacks
    lines = sorted((start, pattern.pattern) for pattern in _FENCES if pattern.pattern[0] in text
                   for start in _mark_lines(text, 0, end, pattern))
    return pair_fences(lines, end)


def pair_fences(lines: list, end: int) -> list[tuple[int, int]]:
    """Fence lines ``(start, marker)`` in order → the ``(open, close)`` of each block; a block
    that never closes ends at ``end`` (str markers here, bytes in core/truncate_utf8.py)."""
    blocks: list[tuple[int, int]] = []
    fence = None
    opened = 0
    for start, marker in lines:  # a line's one mark is its marker: the prefix holds no "`" or "~"
        if fence is None:
            fence, opened = marker, start
        elif marker == fence:
            blocks.append((opened, start))
            fence = None
    if fence is not None:
        blocks.append((opened, end))
    return blocks


def _mark_lines(text: str, begin: int, end: int, pattern: re.Pattern[str]) -> list[int]:
    """Sorted starts of the lines whose mark (``pattern``: "# ", "```" or "~~~") is preceded on
    its line only by indentation, list markers and (for "#") more hashes, for the marks found
    in ``text[begin:end]``; "# " lines are kept only where ``_LINE_MARK`` matches (a run of
    seven hashes is not a heading line; a fence mark after the prefix always matches)."""
    starts: list[int] = []
    last = -1
    rfind, prefix, line_mark = text.rfind, _PREFIX.fullmatch, _LINE_MARK.match
    hashes = pattern is _HASH
    for m in pattern.finditer(text, begin, end):
        at = m.start()
        start = rfind("\n", 0, at) + 1
        if start == last:
            continue
        mark = at
        if hashes:
            while mark > start and text[mark - 1] == "#":
                mark -= 1
        if (mark == start or prefix(text, start, mark)) and (not hashes or line_mark(text, start)):
            starts.append(start)
            last = start
    return starts


def _columns(indent: str) -> int:
    return len(indent.expandtabs(4)) if "\t" in indent else len(indent)


def _in_list_item(text: str, start: int, indent: int) -> bool:
    """Whether the line at ``start`` (indented ``indent`` columns) continues a list item: the
    nearest earlier non-blank line indented less is a list item. Otherwise it is indented code."""
    end = start - 1  # the "\n" ending the previous line
    for _ in range(LIST_LOOKBACK):
        if end <= 0:
            return False
        begin = text.rfind("\n", 0, end) + 1
        prev = text[begin:end]
        end = begin - 1
        if not prev.strip():
            continue
        width = _columns(prev[: len(prev) - len(prev.lstrip(" \t"))])
        if width < indent:
            return _LIST_ITEM.match(prev) is not None
    return False


def _fit_windows(text: str, room: int, head_ratio: float) -> tuple[int, int]:
    """Character offsets (head_end, tail_start) of the largest line-aligned head within
    ``room * head_ratio`` and the largest line-aligned tail within what is left."""
    room = max(room, 0)  # a negative end would make rfind count from the end of the text
    head_end = text.rfind("\n", 0, int(room * head_ratio)) + 1
    tail_room = room - head_end
    j = text.find("\n", max(len(text) - tail_room - 1, head_end - 1))
    tail_start = j + 1 if j != -1 else len(text)
    return head_end, max(tail_start, head_end)


def _notice(first: int, last: int, omitted_chars: int) -> str:
    return f"\n[… lines {first:,}–{last:,} omitted ({omitted_chars:,} characters); see the note at the end …]\n\n"


def quote_path(path: str) -> str:
    r"""``path`` as the read_file hint writes it: between double quotes, with ``\`` and ``"``
    escaped by a backslash and every other character as it is. ``shlex.split`` (POSIX mode) and
    a JSON string decoder both give the exact path back, whatever quotes, backslashes, spaces,
    ``$`` or non-ASCII characters the webshelf home's path holds."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hint(path: str, offset: int, limit: int) -> str:
    """The ready call in the footer: ``read_file path="…" offset=N limit=M``."""
    return f"read_file path={quote_path(path)} offset={offset} limit={limit}"


def agent_notes(notes: Sequence[str], *, cut_note: str | None = None, shown: str | None = None) -> list[str]:
    """The notes to show the agent: each once, in order, on one line of at most NOTE_MAX
    characters; ``cut_note`` among them, and ``shown`` (already in the footer) left out."""
    out: list[str] = []
    for note in ([cut_note] if cut_note else []) + list(notes):
        note = " ".join(note.split())
        if len(note) > NOTE_MAX:
            note = note[: NOTE_MAX - 1] + "…"
        if note and note not in out and note != shown:
            out.append(note)
    return out


def _whole_notes(text: str, notes: list[str]) -> str:
    """What follows a whole page that has notes: a rule and one ``[webshelf] note:`` line each."""
    rule = ("\n" if text.endswith("\n") else "\n\n") + "---\n" if text else "---\n"
    return rule + "".join(f"[webshelf] note: {n}\n" for n in notes)


def _fitting_notes(text: str, notes: list[str], budget: int) -> str:
    """The whole text and the notes that fit after it (the last one clipped), within ``budget``."""
    kept: list[str] = []
    for note in notes:
        over = len(text + _whole_notes(text, kept + [note])) - budget
        if over > 0:
            if len(note) - over > 20:
                kept.append(note[: len(note) - over - 1] + "…")
            break
        kept.append(note)
    return text + _whole_notes(text, kept) if kept else text


def _footer(path: str | None, total_chars: int, total_lines: int, head: int, tail_start: int,
            outline_lines: list[str], store_note: str | None, notes: Sequence[str] = (),
            *, sizing: bool = False) -> str:
    """The footer; with ``sizing`` every number takes its widest form, for reserving room."""
    first_omitted, last_omitted = head + 1, tail_start - 1
    ranges = ([f"1–{head:,}"] if head else []) + ([f"{tail_start:,}–{total_lines:,}"] if tail_start <= total_lines else [])
    shown = "lines " + " and ".join(ranges) if ranges else "no lines"
    parts = [
        "\n---\n",
        f"[webshelf] Truncated page: {total_chars:,} characters in {total_lines:,} lines; showing {shown}.\n",
    ]
    if path:
        parts.append(f"Full text: {path}\n")
    else:
        parts.append(f"Full text: not stored ({store_note or 'storage failed'}); the omitted lines cannot be read back.\n")
    parts.extend(f"Note: {n}\n" for n in notes)
    parts.append(f"Omitted: lines {first_omitted:,}–{last_omitted:,}.")
    if outline_lines:
        parts.append(OUTLINE_INTRO)
        parts.extend(outline_lines)
    else:
        parts.append("\n")
    if path:
        limit = READ_LIMIT if sizing else min(READ_LIMIT, last_omitted - first_omitted + 1)
        parts.append(f"Continue: {hint(path, first_omitted, limit)}\n")
    return "".join(parts)


def render(text: str | Utf8Text, budget: int, *, path: str | None, head_ratio: float = 0.75,
           store_note: str | None = None, cut_note: str | None = None, notes: Sequence[str] = ()) -> Window:
    """Return the whole text when it fits, else head/tail windows, a notice and a footer —
    with the ``notes`` inside the budget, never after it.

    ``notes`` are what the agent must be told besides the page (served from the cache, the
    stored copy was cut, a sandbox did not get the page …); ``cut_note`` (one line) is the
    stored-copy cut note, and may be among ``notes`` too: each note is shown once. A whole
    page with notes is followed by a rule and ``[webshelf] note:`` lines; when page and
    notes do not both fit, the page is cut and the notes go into the footer."""
    if isinstance(text, Utf8Text):  # the stored bytes: decode only the ends when the page is large
        from webshelf.core.truncate_utf8 import OutOfReach, Utf8Ends

        big = text.chars > budget and len(text.data) > 4 * BYTES_PER_BUDGET_CHAR * (budget + 2)
        if big:
            try:
                return _render(Utf8Ends(text, budget), text.newlines, budget, path=path, head_ratio=head_ratio,
                               store_note=store_note, cut_note=cut_note, notes=notes)
            except OutOfReach:  # cannot happen by the sizing; if it does, the decoded page gives the answer
                pass
        text = text.text
    return _render(text, text.count("\n"), budget, path=path, head_ratio=head_ratio, store_note=store_note,
                   cut_note=cut_note, notes=notes)


BYTES_PER_BUDGET_CHAR = 4


def _render(text, newlines: int, budget: int, *, path: str | None, head_ratio: float,  # noqa: ANN001 — str | Utf8Ends
            store_note: str | None, cut_note: str | None, notes: Sequence[str]) -> Window:
    """``render``'s body; ``text`` is the page or its decoded ends (``truncate_utf8.Utf8Ends``)."""
    total_chars = len(text)  # ``newlines``: the one whole-text count; the window line numbers count only the windows
    total_lines = newlines + (0 if text.endswith("\n") or not text else 1)
    whole = agent_notes(notes, cut_note=cut_note)
    if total_chars <= budget:
        content = text + _whole_notes(text, whole) if whole else text
        if len(content) > budget and not path:
            # Cutting the page would lose lines for good (nothing is stored to read them back):
            # the whole page, and of its notes only those that still fit.
            content = _fitting_notes(text, whole, budget)
        if len(content) <= budget:
            return Window(content, False, total_chars, total_lines)
    # In the footer, a store failure is already named on its "Full text: not stored (…)" line.
    noted = agent_notes(notes, cut_note=cut_note, shown=None if path else " ".join((store_note or "").split()))
    # Reserve the notice and the footer without an outline at their largest sizes.
    fixed = len(_notice(total_lines, total_lines, total_chars)) + len(
        _footer(path, total_chars, total_lines, total_lines, total_lines, [], store_note, noted, sizing=True))
    room = max(budget - fixed, 0)
    head_end, tail_pos = _fit_windows(text, room, head_ratio)
    # Give the outline up to OUTLINE_SHARE of the budget, taken from the windows: its entries
    # and the intro line that replaces the bare "\n" after "Omitted: …".
    head, tail_start = _line_numbers(text, head_end, tail_pos, newlines)
    # One heading scan serves both outline passes; it stops where the smallest tail window
    # (room less the largest outline) starts — no heading after that can be omitted.
    _, tail_far = _fit_windows(text, max(room - int(budget * OUTLINE_SHARE), 0), head_ratio)
    every = headings(text, end=tail_far) if isinstance(text, str) else _ends_headings(text, tail_far)
    outline = [h for h in every if head < h.line < tail_start]
    entries = _outline_lines(outline, int(budget * OUTLINE_SHARE) - len(OUTLINE_INTRO) + 1)
    wanted = min(sum(map(len, entries)) + len(OUTLINE_INTRO) - 1, room) if entries else 0
    if wanted:
        head_end, tail_pos = _fit_windows(text, room - wanted, head_ratio)
        head, tail_start = _line_numbers(text, head_end, tail_pos, newlines)
    first_omitted, last_omitted = head + 1, tail_start - 1
    notice = _notice(first_omitted, last_omitted, tail_pos - head_end)
    bare = _footer(path, total_chars, total_lines, head, tail_start, [], store_note, noted)
    spare = budget - head_end - (total_chars - tail_pos) - len(notice) - len(bare)
    outline = [h for h in every if first_omitted <= h.line <= last_omitted]
    outline_lines = _outline_lines(outline, spare - len(OUTLINE_INTRO) + 1)
    footer = _footer(path, total_chars, total_lines, head, tail_start, outline_lines, store_note, noted)
    content = text[:head_end] + notice + text[tail_pos:] + footer
    if len(content) > budget:  # only when the footer alone cannot fit (an extreme path length or cut note)
        content = (f"[webshelf] Truncated page: {total_chars:,} characters in {total_lines:,} lines; a budget of "
                   f"{budget:,} characters cannot hold even the footer with its path; ask again with a larger "
                   "char_limit.\n")[:budget]
        return Window(content, True, total_chars, total_lines, 0, total_lines + 1, [])
    return Window(content, True, total_chars, total_lines, head, tail_start, outline)


def _ends_headings(ends, end: int) -> list[Heading]:  # noqa: ANN001 — truncate_utf8.Utf8Ends
    from webshelf.core.truncate_utf8 import headings_utf8

    return headings_utf8(ends.page.data, ends.byte_offset(end))


def _line_numbers(text: str, head_end: int, tail_pos: int, newlines: int) -> tuple[int, int]:
    """(lines in the head, first line of the tail) for the character offsets of the windows,
    counting only inside the windows: the omitted middle's newlines are the rest of ``newlines``."""
    head = text.count("\n", 0, head_end)
    return head, newlines - text.count("\n", tail_pos) + 1


def _plain(heading: str) -> str:
    """Heading text without link syntax or permalink marks, for a compact outline."""
    if "[" in heading:
        heading = _LINK.sub(_link_text, heading)
    return heading.replace("¶", "").strip() or heading


def _link_text(m: re.Match[str]) -> str:
    return m.group(1)


def _outline_lines(outline: list[Heading], room: int) -> list[str]:
    """The outline entries that fit in ``room`` characters: all headings if they fit, else
    only the higher levels (## before ###), else the first ones — then a count of the rest.
    Entries are formatted lazily, so a page with thousands of headings costs only what fits."""
    cache: dict[int, str] = {}

    def entry(h: Heading) -> str:
        text = cache.get(h.line)
        if text is None:
            text = cache[h.line] = f"  line {h.line:,}: {'#' * h.level} {_plain(h.text)[:120]}\n"
        return text

    def more(n: int) -> str:
        return f"  … and {n:,} more headings\n" if n else ""

    reserve = len(more(len(outline)))  # room kept for the "… and N more" line (its longest form)

    def fits(chosen: list[Heading]) -> bool:
        used = reserve if len(chosen) < len(outline) else 0
        for h in chosen:
            used += len(entry(h))
            if used > room:
                return False
        return True

    chosen = outline
    for top in sorted({h.level for h in outline}, reverse=True)[1:]:
        if fits(chosen):
            break
        chosen = [h for h in outline if h.level <= top]
    if fits(chosen):
        out = [entry(h) for h in chosen]
    else:
        out, used = [], reserve
        for h in chosen:
            if used + len(entry(h)) > room:
                break
            out.append(entry(h))
            used += len(entry(h))
    rest = len(outline) - len(out)
    if rest and sum(map(len, out)) + len(more(rest)) <= room:
        out.append(more(rest))
    return out
