"""Fit a stored page into the agent's budget without losing anything.

A page within the budget is returned whole. A longer one becomes a head window (≈ head_ratio
of the budget) and a tail window, both cut at line boundaries and copied verbatim, with a
short notice between them and a footer after: the stored path, totals, the ranges shown and
omitted, an outline of the headings in the omitted range (with line numbers, so the agent can
jump), and a ready ``read_file`` call. Head + omitted lines + tail == the stored text, and the
whole returned content, footer included, never exceeds the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

READ_LIMIT = 500
OUTLINE_INTRO = " Headings in the omitted part:\n"
OUTLINE_SHARE = 0.15  # at most this share of the budget goes to the outline of omitted headings
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARK = r"(?:(?P<hashes>#{1,6})[ \t]+(?P<title>[^\n]*)|(?P<fence>```|~~~)[^\n]*)"
_LINE_START_MARK = re.compile(_MARK)
_NEWLINE_MARK = re.compile("\n" + _MARK)
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


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


def headings(text: str, first_line: int = 1, last_line: int | None = None) -> list[Heading]:
    """ATX headings outside fenced code blocks, with 1-based line numbers, within a range.

    The pattern starts with a literal newline so the regex engine jumps from line start to
    line start; a 2 MB page scans in a few milliseconds."""
    found: list[Heading] = []
    fence: str | None = None
    first = _LINE_START_MARK.match(text)
    marks = ([(0, first)] if first else []) + [(m.start() + 1, m) for m in _NEWLINE_MARK.finditer(text)]
    line, pos = 1, 0
    for start, m in marks:
        line += text.count("\n", pos, start)
        pos = start
        if last_line is not None and line > last_line:
            break
        marker = m.group("fence")
        if marker:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        elif fence is None and line >= first_line:
            title = m.group("title")
            title = (_CLOSING_HASHES.sub("", title) if "#" in title else title).strip()
            if title:
                found.append(Heading(line, len(m.group("hashes")), title))
    return found


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


def _footer(path: str | None, total_chars: int, total_lines: int, head: int, tail_start: int,
            outline_lines: list[str], store_note: str | None, cut_note: str | None = None,
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
    if cut_note:
        parts.append(f"{cut_note}\n")
    parts.append(f"Omitted: lines {first_omitted:,}–{last_omitted:,}.")
    if outline_lines:
        parts.append(OUTLINE_INTRO)
        parts.extend(outline_lines)
    else:
        parts.append("\n")
    if path:
        limit = READ_LIMIT if sizing else min(READ_LIMIT, last_omitted - first_omitted + 1)
        parts.append(f'Continue: read_file path="{path}" offset={first_omitted} limit={limit}\n')
    return "".join(parts)


def render(text: str, budget: int, *, path: str | None, head_ratio: float = 0.75,
           store_note: str | None = None, cut_note: str | None = None) -> Window:
    """Return the whole text when it fits, else head/tail windows, a notice and a footer.

    ``cut_note`` (one line) tells the agent that the stored copy itself was cut at the
    per-page cap; it counts against the budget like the rest of the footer."""
    total_chars = len(text)
    total_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if total_chars <= budget:
        return Window(text, False, total_chars, total_lines)
    # Reserve the notice and the footer without an outline at their largest sizes.
    fixed = len(_notice(total_lines, total_lines, total_chars)) + len(
        _footer(path, total_chars, total_lines, total_lines, total_lines, [], store_note, cut_note, sizing=True))
    room = max(budget - fixed, 0)
    head_end, tail_pos = _fit_windows(text, room, head_ratio)
    # Give the outline up to OUTLINE_SHARE of the budget, taken from the windows.
    every = headings(text)
    head, tail_start = _line_numbers(text, head_end, tail_pos, total_lines)
    outline = [h for h in every if head < h.line < tail_start]
    wanted = min(sum(len(e) for e in _outline_lines(outline, int(budget * OUTLINE_SHARE))), room)
    if wanted:
        head_end, tail_pos = _fit_windows(text, room - wanted, head_ratio)
        head, tail_start = _line_numbers(text, head_end, tail_pos, total_lines)
    first_omitted, last_omitted = head + 1, tail_start - 1
    notice = _notice(first_omitted, last_omitted, tail_pos - head_end)
    bare = _footer(path, total_chars, total_lines, head, tail_start, [], store_note, cut_note)
    spare = budget - head_end - (total_chars - tail_pos) - len(notice) - len(bare)
    outline = [h for h in every if first_omitted <= h.line <= last_omitted]
    outline_lines = _outline_lines(outline, spare - len(OUTLINE_INTRO) + 1)
    footer = _footer(path, total_chars, total_lines, head, tail_start, outline_lines, store_note, cut_note)
    content = text[:head_end] + notice + text[tail_pos:] + footer
    if len(content) > budget:  # only when the footer alone cannot fit (an extreme path length or cut note)
        content = (f"[webshelf] Truncated page: {total_chars:,} characters in {total_lines:,} lines; a budget of "
                   f"{budget:,} characters cannot hold even the footer with its path; ask again with a larger "
                   "char_limit.\n")[:budget]
        return Window(content, True, total_chars, total_lines, 0, total_lines + 1, [])
    return Window(content, True, total_chars, total_lines, head, tail_start, outline)


def _line_numbers(text: str, head_end: int, tail_pos: int, total_lines: int) -> tuple[int, int]:
    """(lines in the head, first line of the tail) for the character offsets of the windows."""
    head = text.count("\n", 0, head_end)
    return head, head + text.count("\n", head_end, tail_pos) + 1


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
