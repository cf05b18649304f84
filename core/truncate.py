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
_LINE_START_MARK = re.compile(r"\n(?=[#`~])")
_HEADING_OR_FENCE = re.compile(r"^(?:(#{1,6})[ \t]+(.+?)[ \t#]*|(```|~~~).*)$", re.MULTILINE)


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
    """ATX headings outside fenced code blocks, with 1-based line numbers, within a range."""
    found: list[Heading] = []
    fence: str | None = None
    line, pos = 1, 0
    for m in _candidates(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if last_line is not None and line > last_line:
            break
        marker = m.group(3)
        if marker:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        elif fence is None and line >= first_line:
            found.append(Heading(line, len(m.group(1)), m.group(2)))
    return found


def _candidates(text: str):
    """Matches of _HEADING_OR_FENCE, found by jumping to lines that start with # ` or ~
    (a literal-led search) instead of trying the anchored pattern at every position."""
    if text[:1] in ("#", "`", "~"):
        m = _HEADING_OR_FENCE.match(text, 0)
        if m:
            yield m
    for c in _LINE_START_MARK.finditer(text):
        m = _HEADING_OR_FENCE.match(text, c.end())
        if m:
            yield m


def _fit_windows(lines: list[str], room: int, head_ratio: float) -> tuple[int, int, int, int]:
    head, head_used = _fit_head(lines, int(room * head_ratio))
    tail, tail_used = _fit_tail(lines, room - head_used, head + 1)
    return head, head_used, tail, tail_used


def _fit_head(lines: list[str], budget: int) -> tuple[int, int]:
    used = count = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        used += len(line) + 1
        count += 1
    return count, used


def _fit_tail(lines: list[str], budget: int, floor: int) -> tuple[int, int]:
    used = count = 0
    for i in range(len(lines) - 1, floor - 1, -1):
        if used + len(lines[i]) + 1 > budget:
            break
        used += len(lines[i]) + 1
        count += 1
    return count, used


def _notice(first: int, last: int, omitted_chars: int) -> str:
    return f"\n[… lines {first:,}–{last:,} omitted ({omitted_chars:,} characters); see the note at the end …]\n\n"


def _footer(path: str | None, total_chars: int, total_lines: int, head: int, tail_start: int,
            outline_lines: list[str], store_note: str | None, cut_note: str | None = None) -> str:
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
        limit = min(READ_LIMIT, last_omitted - first_omitted + 1)
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
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # Reserve the notice and the footer without an outline at their largest sizes.
    fixed = len(_notice(total_lines, total_lines, total_chars)) + len(
        _footer(path, total_chars, total_lines, total_lines, total_lines, [], store_note, cut_note))
    room = max(budget - fixed, 0)
    head, head_used, tail, tail_used = _fit_windows(lines, room, head_ratio)
    # Give the outline up to OUTLINE_SHARE of the budget, taken from the windows.
    every = headings(text)
    outline = [h for h in every if head < h.line <= len(lines) - tail]
    wanted = sum(len(e) for e in _outline_lines(outline, budget))
    if outline and wanted:
        room -= min(wanted, int(budget * OUTLINE_SHARE))
        head, head_used, tail, tail_used = _fit_windows(lines, room, head_ratio)
    tail_start = len(lines) - tail + 1
    first_omitted, last_omitted = head + 1, tail_start - 1
    omitted_chars = total_chars - head_used - tail_used
    notice = _notice(first_omitted, last_omitted, omitted_chars)
    bare = _footer(path, total_chars, total_lines, head, tail_start, [], store_note, cut_note)
    spare = budget - head_used - tail_used - len(notice) - len(bare)
    outline = [h for h in every if first_omitted <= h.line <= last_omitted]
    outline_lines = _outline_lines(outline, spare - len(OUTLINE_INTRO) + 1)
    footer = _footer(path, total_chars, total_lines, head, tail_start, outline_lines, store_note, cut_note)
    head_text = "\n".join(lines[:head]) + ("\n" if head else "")
    tail_text = "\n".join(lines[len(lines) - tail:]) + ("\n" if tail else "")
    content = head_text + notice + tail_text + footer
    return Window(content, True, total_chars, total_lines, head, tail_start, outline)


def _plain(heading: str) -> str:
    """Heading text without link syntax or permalink marks, for a compact outline."""
    plain = _LINK.sub(r"\1", heading) if "](" in heading else heading  # skip the regex when no link
    return plain.replace("¶", "").strip() or heading


def _outline_lines(outline: list[Heading], room: int) -> list[str]:
    """The outline entries that fit in ``room`` characters: all headings if they fit, else
    only the higher levels (## before ###), else the first ones — then a count of the rest."""
    made: dict[int, str] = {}  # entries are asked for repeatedly while fitting; build each once

    def entry(h: Heading) -> str:
        text = made.get(h.line)
        if text is None:
            text = made[h.line] = f"  line {h.line:,}: {'#' * h.level} {_plain(h.text)[:120]}\n"
        return text

    def more(n: int) -> str:
        return f"  … and {n:,} more headings\n" if n else ""

    levels = sorted({h.level for h in outline}, reverse=True)
    chosen = outline
    while len(levels) > 1 and sum(len(entry(h)) for h in chosen) + len(more(len(outline) - len(chosen))) > room:
        levels.pop(0)
        chosen = [h for h in outline if h.level <= levels[0]]
    out: list[str] = []
    used = 0
    for i, h in enumerate(chosen):
        rest = len(outline) - i - 1
        if used + len(entry(h)) + len(more(rest)) > room:
            if used + len(more(rest + 1)) <= room:
                out.append(more(rest + 1))
            return out
        out.append(entry(h))
        used += len(entry(h))
    hidden = len(outline) - len(chosen)
    if hidden:
        out.append(more(hidden))
    return out
