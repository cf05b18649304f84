"""The two-scan heading finder (issue 15) finds exactly what the one-scan finder found.

``reference_headings`` is the previous implementation, kept verbatim: every "# ", "```" and
"~~~" candidate, in line order, with the fence state tracked line by line. The new one finds
the fenced blocks first and looks for "# " only between them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.core import truncate as T
from webshelf.core.truncate import Heading, _CLOSING_HASHES, _LINE_MARK, _PREFIX, _columns, _in_list_item, _line_end

_CANDIDATES = (re.compile("#[ \t]"), re.compile("```"), re.compile("~~~"))


def reference_headings(text: str, first_line: int = 1, last_line: int | None = None, *, limit: int | None = None,
                       end: int | None = None) -> list[Heading]:
    """The previous ``headings``, verbatim."""
    found: list[Heading] = []
    fence: str | None = None
    line, pos = 1, 0
    stop = _line_end(text, last_line) if end is None else min(end, _line_end(text, last_line) if last_line else end)
    for start in _mark_lines(text, stop):
        line += text.count("\n", pos, start)
        pos = start
        if last_line is not None and line > last_line:
            break
        m = _LINE_MARK.match(text, start)
        if m is None:
            continue
        marker = m.group("fence")
        if marker:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        elif fence is None and line >= first_line:
            title = m.group("title")
            title = (_CLOSING_HASHES.sub("", title) if "#" in title else title).strip()
            indent = _columns(m.group("indent"))
            if title and (indent < 4 or _in_list_item(text, start, indent)):
                found.append(Heading(line, len(m.group("hashes")), title))
                if limit is not None and len(found) >= limit:
                    break
    return found


def _mark_lines(text: str, end: int | None = None) -> list[int]:
    """The previous ``_mark_lines``, verbatim."""
    starts: set[int] = set()
    end = len(text) if end is None else end
    for pattern in _CANDIDATES:
        for m in pattern.finditer(text, 0, end):
            at = m.start()
            start = text.rfind("\n", 0, at) + 1
            if start in starts:
                continue
            mark = at
            if pattern is _CANDIDATES[0]:
                while mark > start and text[mark - 1] == "#":
                    mark -= 1
            if _PREFIX.fullmatch(text, start, mark):
                starts.add(start)
    return sorted(starts)


LINES = ["# Title", "## Sub ##", "### x", "####### seven", "#no", "#\ttab", "  ## indented", "    # code",
         "        # deep", "- # in list", "1. ## numbered", "- - ### nested", "   - item", "```", "```python",
         "~~~", "  ```", "- ```", "# ```", "``` # not", "text # not", "", "para", "\t# tab-indented",
         "## [link](x) ¶", "#", "# ", "##  spaced  ##", "* + # mixed", "12345678901. # too long a number"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=80), st.integers(1, 40), st.one_of(st.none(), st.integers(0, 60)),
       st.one_of(st.none(), st.integers(1, 5)), st.one_of(st.none(), st.integers(0, 2_000)), st.booleans())
def test_two_scans_find_what_one_scan_found(lines, first, last, limit, end, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    kw = {"limit": limit, "end": end}
    assert T.headings(text, first, last, **kw) == reference_headings(text, first, last, **kw)
    assert T.headings(text) == reference_headings(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="#`~ \t\n-*+1.)ab", max_size=400))
def test_two_scans_agree_on_mark_soup(text):
    assert T.headings(text) == reference_headings(text)
    assert T.headings(text, last_line=5, limit=1) == reference_headings(text, last_line=5, limit=1)


# --- the scan and the window on UTF-8 bytes (core.truncate_utf8) ---

from webshelf.cache.utf8 import Utf8Text  # noqa: E402
from webshelf.core import truncate_utf8 as TU  # noqa: E402

# Prefixes a bytes pattern would read differently: non-ASCII digits and spaces before a mark,
# multi-byte text in titles and long lines, CRLF-free but otherwise awkward lines.
UTF8_LINES = LINES + ["١. # arabic-indic number", "\xa0# after nbsp", "\u3000## ideographic space", "- é ## not",
                      "## café ¶", "### 😀 emoji ###", "  - ## liste à puces", "      ## deep é in list",
                      "é" * 300, "😀" * 120, "\u2003", "x\u00a0", "~~~ é", "``` 😀"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(UTF8_LINES), max_size=120), st.booleans(), st.integers(0, 130))
def test_the_byte_scan_finds_what_the_str_scan_finds(lines, final_newline, stop):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    data = text.encode("utf-8")
    assert TU.headings_utf8(data, len(data)) == T.headings(text)
    end = T._line_end(text, stop)  # a line start, as render's end always is
    assert TU.headings_utf8(data, len(text[:end].encode("utf-8"))) == T.headings(text, end=end)
    page = Utf8Text(data, len(text))
    assert T.headings(page) == T.headings(text)
    assert T.headings(page, last_line=stop, limit=1) == T.headings(text, last_line=stop, limit=1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(UTF8_LINES), min_size=20, max_size=400), st.integers(120, 700),
       st.sampled_from([0.5, 0.75, 0.9]), st.booleans(), st.sampled_from([(), ("served from the cache",)]))
def test_the_window_of_the_bytes_is_the_window_of_the_text(lines, budget, ratio, final_newline, notes):
    """render(Utf8Text) — ends decoded, outline scanned on the bytes — equals render(str),
    window, footer, outline and line numbers; and the ends never ask outside what they decoded."""
    text = "\n".join(lines) * 3 + ("\n" if final_newline else "")
    page = Utf8Text(text.encode("utf-8"), len(text))
    kw = {"path": "/h/cache/web/p.md", "head_ratio": ratio, "notes": notes}
    want = T.render(text, budget, **kw)
    assert T.render(page, budget, **kw) == want
    if len(page.data) > 4 * T.BYTES_PER_BUDGET_CHAR * (budget + 2):  # the byte path: no fallback taken
        assert T._render(TU.Utf8Ends(page, budget), page.newlines, budget, store_note=None, cut_note=None,
                         **kw) == want


def test_the_ends_refuse_what_they_did_not_decode():
    text = ("é" * 50 + "\n") * 400
    page = Utf8Text(text.encode("utf-8"), len(text))
    ends = TU.Utf8Ends(page, 20)
    for call in (lambda: ends.rfind("\n", 0, page.chars // 2), lambda: ends.find("\n", 10),
                 lambda: ends[10:], lambda: ends[:page.chars // 2], lambda: ends.count("\n", 5)):
        try:
            call()
        except TU.OutOfReach:
            continue
        raise AssertionError("answered outside the decoded ends")


def test_fences_past_the_memchr_walk_are_found_by_the_regex(monkeypatch):
    """With SIMD search, and without it (fence characters beyond RARE_MARKS: the regex scans the
    rest): the same blocks either way."""
    text = "".join(f"~ tilde {i} ~~\n~~~~\n# in {i}\n~~~\n# out {i}\n- ~~~x\n## li ~\n~~~\n" for i in range(40))
    data = text.encode()
    want = T.headings(text)
    assert TU.headings_utf8(data, len(data)) == want and want  # SIMD search
    monkeypatch.setattr(TU, "SIMD", False)  # without stringzilla: memchr walk, then the regex
    monkeypatch.setattr(TU, "view", lambda data: data)
    assert TU.headings_utf8(data, len(data)) == want
    monkeypatch.setattr(TU, "RARE_MARKS", 3)
    assert TU.headings_utf8(data, len(data)) == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(UTF8_LINES), max_size=120))
def test_the_byte_scan_without_simd_search_finds_the_same(lines):
    text = "\n".join(lines)
    data = text.encode("utf-8")
    simd, view = TU.SIMD, TU.view
    TU.SIMD, TU.view = False, (lambda data: data)
    try:
        assert TU.headings_utf8(data, len(data)) == T.headings(text)
    finally:
        TU.SIMD, TU.view = simd, view
