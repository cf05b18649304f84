"""Normalise Markdown before it is stored and shown.

Three goals: spend the agent's budget on text rather than on base64 blobs and blank runs;
make every character reachable by any line-based reader — agents' read_file tools often cut a
line at 2,000 characters, so no stored line may be longer than ``web.max_line_chars``; and
make every line reader count the same lines as the footer — "\n" is the only line break left.

Speed (issue 15): post-fetch work must vanish next to the network at any page size. So
``clean_for_store`` cleans only what can be stored (a prefix a little over
``cache.max_file_chars``), one cheap byte-level scan (``_unusual``) decides which of the rarer
passes (line separators, invisible characters) run at all, and wrapping is linear in the line
length (``wrap_line`` walks offsets instead of re-slicing the rest of the line).
"""

from __future__ import annotations

import re

_MD_DATA_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?data:[^)\s]*\s*(?:\"[^\"]*\")?\)")
_HTML_DATA_IMAGE = re.compile(r"<(?i:img\b[^>]*?\bsrc\s*=\s*[\"']?data:[^>]*>)")  # literal "<" first: fast scan
_HTML_ALT = re.compile(r"\balt\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))", re.IGNORECASE)
# Characters a reader cannot see but a model reads: every Unicode Default_Ignorable_Code_Point
# (zero-width and joiner characters, bidi controls, soft hyphen, variation selectors, Hangul
# fillers, Mongolian free variation selectors, musical formatting, the whole tag block
# U+E0000–U+E0FFF assigned or not — all used to smuggle hidden text), the interlinear
# annotation controls U+FFF9–U+FFFB, and C0/C1 control characters (ESC, BEL, …) except tab and
# newline. The property comes from the ``regex`` package's Unicode tables, not a hand list.
_INVISIBLE_SOURCE = (r"[\p{Default_Ignorable_Code_Point}\U000e0000-\U000e0fff\ufff9-\ufffb"
                     r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_invisible = None  # compiled on first use: the regex package is not needed by pages without them
# Every character other than "\n" that some common line reader ends a line at: str.splitlines()
# splits on all of these (and on "\r", handled first), JavaScript on U+2028/U+2029, Unicode-aware
# tools on NEL; wc -l, awk, sed, head, tail and split("\n") only on "\n". See normalise_line_breaks.
LINE_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{LINE_BREAKS}]")
_PRINTABLE_ASCII = bytes(range(0x20, 0x7f)) + b"\t\n"
_BREAKS_GONE = dict.fromkeys(map(ord, LINE_BREAKS + "\r"))  # already "\n" when the invisible check runs
_GONE = frozenset(LINE_BREAKS + "\r\n\x1f")  # made "\n" or dropped (invisible) before lines are edited
_SURROGATE = re.compile("[\ud800-\udfff]")
_BLANK_RUN = re.compile("\n\n\n+")
# An image data URI outside any markup; the run ends at the first non-base64 character, so the
# page's own words after it are never eaten (and other data: URIs, e.g. text/html, stay as text).
_BARE_BASE64 = re.compile(r"data:image/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=%]{8,}")
CUT_MARGIN = 1 / 8  # clean_for_store cleans max_chars × (1 + this) + PAD first, more only if cleaning shrank it
CUT_PAD = 64 * 1024


def _invisible_pattern():
    global _invisible
    if _invisible is None:
        import regex

        _invisible = regex.compile(_INVISIBLE_SOURCE)
    return _invisible


def _placeholder(alt: str) -> str:
    alt = " ".join(alt.split())
    return f"[IMAGE: {alt}]" if alt else "[IMAGE]"


def _html_image(m: re.Match[str]) -> str:
    alt = _HTML_ALT.search(m.group(0))
    return _placeholder(next((g for g in alt.groups() if g is not None), "") if alt else "")


def replace_data_images(text: str) -> str:
    """``data:`` images → ``[IMAGE: alt]``; ordinary http(s) images are left alone."""
    if "data:" not in text:
        return text
    if _markdown_image_may_hold(text):
        text = _MD_DATA_IMAGE.sub(lambda m: _placeholder(m.group(1)), text)
    text = _HTML_DATA_IMAGE.sub(_html_image, text)  # case-insensitive: no cheap exact gate; a fast scan for "<"
    if "data:image/" in text:
        text = _BARE_BASE64.sub("[IMAGE]", text)
    return text


def _markdown_image_may_hold(text: str) -> bool:
    """Whether some "data:" follows "](", optional whitespace and an optional "<" — which every
    ``_MD_DATA_IMAGE`` match holds. Prose says "data:" ("metadata:") far more often than pages
    embed images, and a ``find`` per occurrence is cheaper than the regex's scan of every "!"."""
    pos = text.find("data:")
    while pos >= 0:
        j = pos - 1 if pos and text[pos - 1] == "<" else pos
        while j and text[j - 1].isspace():
            j -= 1
        if j >= 2 and text.startswith("](", j - 2):
            return True
        pos = text.find("data:", pos + 5)
    return False


def _unusual(text: str) -> tuple[str, str]:
    """(text with lone surrogates made U+FFFD, every character of it that is not printable
    ASCII, tab or newline) — usually a few KB, found in two C passes (encode, byte translate).

    Deleting the printable ASCII bytes from the UTF-8 leaves only control bytes and whole
    multi-byte characters, so the rest decodes; what it holds decides which rare passes run."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
        data = text.encode("utf-8")
    return text, data.translate(None, _PRINTABLE_ASCII).decode("utf-8")


def drop_invisible(text: str) -> str:
    """Remove invisible Unicode (see ``_INVISIBLE_SOURCE``); lone surrogates become U+FFFD so
    the text is always valid UTF-8. Fast path: the full-text pass runs only when the few
    unusual characters (``_unusual``) hold an invisible one."""
    text, rest = _unusual(text)
    return _drop_invisible_if(text, rest)


def _drop_invisible_if(text: str, rest: str) -> str:
    if rest and _invisible_pattern().search(rest):
        return _invisible_pattern().sub("", text)
    return text


def normalise_line_breaks(text: str) -> str:
    """CRLF, CR and every other line separator (vertical tab, form feed, U+001C–U+001E, NEL,
    U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR) become "\n".

    Why "\n" and not a space: whoever wrote the page meant a break there (a form feed between
    the pages of an RFC, U+2028 from a JavaScript string, NEL from a mainframe), and
    ``str.splitlines()`` already reads one; a space would glue lines that one reader shows apart.
    Why at all: the footer counts lines by "\n", and an agent's tools count with
    ``splitlines()``, ``split("\n")``, ``wc -l``, awk, sed, head or tail — with any other
    separator left in, they disagree on every line number after it (and dropping it as an
    invisible character, as before, glued the words on either side together).
    Fast path: a few ``in`` scans (memchr speed); one regex pass only when one is present."""
    return _normalise_breaks_if(text, None)


def _normalise_breaks_if(text: str, rest: str | None) -> str:
    """``normalise_line_breaks``, skipping every scan of ``text`` that ``rest`` (its unusual
    characters, or None if unknown) shows is not needed."""
    probe = text if rest is None else rest
    if "\r" in probe:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if any(c in probe for c in LINE_BREAKS):
        text = _LINE_BREAK.sub("\n", text)
    return text


def wrap_line(line: str, width: int) -> list[str]:
    """Split a long line at whitespace (the break replaces one space), or hard when there is none.

    Linear in the line's length: each piece looks back at most ``width`` characters from an
    offset into the one line (re-slicing the rest of the line per piece was quadratic: a 10 MB
    line without spaces took seconds)."""
    out: list[str] = []
    pos, n = 0, len(line)
    while n - pos > width:
        end = pos + width
        cut = max(line.rfind(" ", pos, end + 1), line.rfind("\t", pos, end + 1))
        if cut > pos:
            out.append(line[pos:cut].rstrip())
            pos = cut + 1
        else:
            out.append(line[pos:end])
            pos = end
    out.append(line[pos:])
    return out


def clean_markdown(text: str, max_line_chars: int = 1_000) -> str:
    """Return the text as it will be stored: "\n" the only line break (``normalise_line_breaks``),
    no data-URI blobs, no invisible characters, no trailing whitespace, at most one blank line
    in a row, no line over ``max_line_chars``, and a single final newline (empty text stays empty).

    Passes over the whole text, all in C: encode + translate (``_unusual``), one ``find`` for
    "data:", one ``find`` per whitespace character that occurs followed by "\n", a ``find`` per
    block of ~``max_line_chars / 2`` characters (``_long_lines``), one join of the edited
    lines, one blank-run scan. Only the lines that change (trailing whitespace, too long) are
    touched in Python; splitting every line and joining them again cost 2–4× as much.
    Line-separator, invisible-character and image passes run only when the first scans show
    they have work."""
    text, rest = _unusual(text)
    text = _normalise_breaks_if(text, rest)
    text = _drop_invisible_if(replace_data_images(text), rest.translate(_BREAKS_GONE) if rest else rest)
    edits = _line_edits(text, max_line_chars, rest)
    if edits is None:  # narrow width or very many edits: the per-line pass is cheaper
        text = _rstrip_and_wrap_every_line(text, max_line_chars)
    elif edits:
        text = _apply(text, edits, max_line_chars)
    if "\n\n\n" in text:
        text = _BLANK_RUN.sub("\n\n", text)
    if text.endswith("\n") and not text.endswith("\n\n") and not text.startswith("\n"):
        return text  # already one final newline: no copy
    text = text.strip("\n")
    return text + "\n" if text else ""


MAX_EDITS = 20_000  # more lines to change than this: rewriting every line is as cheap
MIN_BLOCK = 64  # widths below 2 × this scan too many blocks: rewrite every line instead


def _rstrip_and_wrap_every_line(text: str, width: int) -> str:
    """The per-line pass: split, rstrip, wrap the long lines, join."""
    lines = [line.rstrip() for line in text.split("\n")]
    if max(map(len, lines)) > width:  # rewrite only the long lines
        for i, line in enumerate(lines):
            if len(line) > width:
                lines[i] = "\n".join(wrap_line(line, width))
    return "\n".join(lines)


def _line_edits(text: str, width: int, rest: str) -> dict[int, int] | None:
    """{line start: line end} of every line that has trailing whitespace or is longer than
    ``width`` after rstrip — or None when the per-line pass is the cheaper way.

    Trailing whitespace: a line ends in whitespace only if some whitespace character is
    followed by "\n" (or ends the text). The text holds only printable ASCII, tab, newline
    and the characters in ``rest``, so the whitespace characters to look for are " ", "\t"
    (when the page has one) and those of ``rest`` (``str.isspace``, what ``str.rstrip`` strips)."""
    step = (width + 2) // 2
    if step < MIN_BLOCK:
        return None
    edits: dict[int, int] = {}
    spaces = {" "} | ({"\t"} if "\t" in text else set())  # a memchr-speed "in" spares the slower "\t\n" scan
    if rest:
        spaces |= {c for c in rest if c.isspace() and c not in _GONE}
    find, rfind = text.find, text.rfind
    for space in spaces:
        probe = space + "\n"
        pos = find(probe)
        while pos >= 0:
            edits[rfind("\n", 0, pos) + 1] = pos + 1
            if len(edits) > MAX_EDITS:
                return None
            pos = find(probe, pos + 2)
    if text and text[-1] in spaces:
        edits[rfind("\n") + 1] = len(text)
    for start, end in _long_lines(text, width, step):
        edits[start] = end
    return edits


def _long_lines(text: str, width: int, step: int):  # noqa: ANN202 — yields (start, end)
    """(start, end) of the lines longer than ``width`` after rstrip.

    Any run of at least ``2 * step - 1`` characters without "\n" holds a whole aligned block
    of ``step`` characters, and ``2 * step - 1 <= width + 1``: so a line longer than ``width``
    passes through a block without a newline (one C ``find`` per block), and only the lines
    through such blocks — a few — are measured."""
    find, rfind, n = text.find, text.rfind, len(text)
    pos = 0
    while pos < n:
        if find("\n", pos, pos + step) >= 0:
            pos += step
            continue
        start = rfind("\n", 0, pos) + 1
        end = find("\n", pos + step)
        end = n if end < 0 else end
        if end - start > width and len(text[start:end].rstrip()) > width:
            yield start, end
        pos = (end // step + 1) * step


def _apply(text: str, edits: dict[int, int], width: int) -> str:
    """``text`` with each edited line (start → end, no "\n") rstripped and wrapped: one join."""
    pieces: list[str] = []
    prev = 0
    for start in sorted(edits):
        end = edits[start]
        line = text[start:end].rstrip()
        if len(line) > width:
            line = "\n".join(wrap_line(line, width))
        pieces.append(text[prev:start])
        pieces.append(line)
        prev = end
    pieces.append(text[prev:])
    return "".join(pieces)


def clean_for_store(text: str, max_line_chars: int = 1_000, max_chars: int | None = None) -> tuple[str, int | None]:
    """(cleaned text, length of the raw page when only a prefix was cleaned, else None).

    A page longer than the stored-copy cap (``cache.max_file_chars``) is cleaned only as far
    as can be stored: the raw prefix up to a line break a margin past the cap, doubled while
    its cleaned form (cleaning can shrink a page: base64 images, blank runs) is not clearly
    longer than the cap. Cleaning a line-aligned prefix gives the same text as cleaning the
    whole page up to that point, so the stored copy (cut at the cap) is unchanged; the cost is
    bounded by what is stored, not by the page size."""
    if max_chars is None:
        return clean_markdown(text, max_line_chars), None
    want = max_chars + max_line_chars + 2  # clearly past the cap, whatever the last line's wrap
    limit = int(max_chars * (1 + CUT_MARGIN)) + CUT_PAD
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit) + 1 or limit
        cleaned = clean_markdown(text[:cut], max_line_chars)
        if len(cleaned) > want:
            return cleaned, len(text)
        limit *= 2
    return clean_markdown(text, max_line_chars), None


def clean_title(title: str | None, max_chars: int = 300) -> str | None:
    """A page title as one plain line: no invisible or control characters (ESC, BEL, bidi
    overrides, zero-width and tag characters), line breaks and whitespace runs as one space,
    clipped to ``max_chars``; None when nothing visible is left.

    Titles reach the agent outside the page body (MCP structured content, ``--json``, the
    index, the cache listing), so they get the same invisible-character rule as the body."""
    if not title:
        return None
    title = " ".join(drop_invisible(normalise_line_breaks(title)).split())
    if len(title) > max_chars:
        title = title[: max_chars - 1] + "…"
    return title or None
