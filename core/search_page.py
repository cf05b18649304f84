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

import os
import time

import regex as regex_engine

from webshelf.cache.layout import CacheLayout
from webshelf.core.config import Config, load_config
from webshelf.errors import InputError, clip
from webshelf.core.read import _open_page, resolve_page_path
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


def _find(compiled: regex_engine.Pattern[str], text: str, wanted: int, shown: str) -> tuple[list[tuple[int, int, int]], int]:
    """Matching lines as (line number, match start, match end) within the line, the first
    ``wanted`` of them, and how many lines match in all. One match per line is reported."""
    hits: list[tuple[int, int, int]] = []
    total = 0
    line, counted_to, pos = 1, 0, 0
    timeout = SEARCH_TIMEOUT_S
    deadline = time.monotonic() + timeout
    while pos <= len(text):
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            m = compiled.search(text, pos, timeout=remaining)
        except TimeoutError:
            raise InputError(
                f"{shown}: the pattern took longer than {timeout:g} s on this {len(text):,}-character page "
                "(probably catastrophic backtracking, e.g. nested quantifiers like (a+)+); "
                "simplify the pattern, or pass regex=false to search for plain text",
                path=shown,
            ) from None
        if m is None or (m.start() == len(text) and text.endswith("\n")):
            break  # (an empty match after the final newline is not on any line)
        line += text.count("\n", counted_to, m.start())
        counted_to = m.start()
        line_start = text.rfind("\n", 0, m.start()) + 1
        total += 1
        if len(hits) < wanted:
            hits.append((line, m.start() - line_start, m.end() - line_start))
        next_newline = text.find("\n", m.start())
        if next_newline < 0:
            break
        pos = next_newline + 1  # one report per line: continue on the next line
    return hits, total


def _render(lines: list[str], hits: list[tuple[int, int, int]], context: int) -> list[str]:
    """grep-style groups: '>' marks a matching line, ' ' a context line, '--' separates groups."""
    by_line = {n: (s, e) for n, s, e in hits}
    wanted: list[int] = sorted({k for n, _, _ in hits for k in range(n - context, n + context + 1) if 1 <= k <= len(lines)})
    out: list[str] = []
    previous = None
    for n in wanted:
        if previous is not None and n != previous + 1:
            out.append("--")
        span = by_line.get(n)
        mark = ">" if span else " "
        out.append(f"{mark}{n}|{_clip(lines[n - 1], *(span or (None, None)))}")
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
    with _open_page(real, layout, shown) as f:
        text = f.read()
    hits, total = _find(compiled, text, max_results, shown)
    kind = "regex" if regex else "text"
    case = "case-sensitive" if case_sensitive else "ignoring case"
    if not hits:
        return f"no lines match {kind} {clip(pattern, quote=True)} ({case}) in {shown}\n"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # numbering as read_file: a final newline ends the last line
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
