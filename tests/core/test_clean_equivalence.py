"""The edit-based ``clean_markdown`` (issue 15) gives byte for byte what the per-line pass gave.

``reference_clean`` is the previous implementation, kept here verbatim: split every line,
rstrip, wrap the long ones, join, collapse blank runs, and the three image regexes run
ungated. The new one touches only the lines that change and skips image regexes that cannot
match; on any text, at any width, both must agree."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.core import clean as C

B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def reference_clean(text: str, max_line_chars: int = 1_000) -> str:
    text, rest = C._unusual(text)
    text = C._normalise_breaks_if(text, rest)
    if "data:" in text:
        text = C._MD_DATA_IMAGE.sub(lambda m: C._placeholder(m.group(1)), text)
        text = C._HTML_DATA_IMAGE.sub(C._html_image, text)
        text = C._BARE_BASE64.sub("[IMAGE]", text)
    text = C._drop_invisible_if(text, rest.translate(C._BREAKS_GONE) if rest else rest)
    lines = [line.rstrip() for line in text.split("\n")]
    if max(map(len, lines)) > max_line_chars:
        for i, line in enumerate(lines):
            if len(line) > max_line_chars:
                lines[i] = "\n".join(C.wrap_line(line, max_line_chars))
    text = "\n".join(lines).strip("\n")
    if "\n\n\n" in text:
        text = C._BLANK_RUN.sub("\n\n", text)
    return text + "\n" if text else ""


# Pieces that exercise every branch: trailing ASCII and Unicode whitespace, whitespace-only
# lines, long lines with and without spaces (and ending in spaces), blank runs, line
# separators, invisible characters, the three data-image forms and look-alikes of them.
PIECES = ["word ", "x" * 150, "y" * 700, " " * 160, "\n", "\n\n\n", "  \t", " \n", "\t\n", "\xa0\n", "\u3000",
          "\u2003\n", "\r\n", "\r", "\u2028", "\x85", "\x0c", "\x1f", "\u200b", "é", "—", "😀",
          f"![a](data:image/png;base64,{B64})", f"![b]( <data:image/gif;base64,{B64}>)", "](data:", "metadata: ",
          f'<img alt="c" src="data:image/png;base64,{B64}">', f"<IMG SRC='DATA:image/png;base64,{B64}'>",
          f"data:image/png;base64,{B64}", "# H\n", "```\n", "- item\n", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=120), st.integers(20, 1_200))
def test_edit_based_cleaning_equals_the_per_line_pass(parts, width):
    text = "".join(parts)
    assert C.clean_markdown(text, width) == reference_clean(text, width)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2_000), st.integers(1, 400))
def test_edit_based_cleaning_equals_the_per_line_pass_on_any_text(text, width):
    assert C.clean_markdown(text, width) == reference_clean(text, width)


def test_long_lines_at_every_offset_against_the_blocks_are_found():
    """A line just over the width, placed at every offset modulo the block size."""
    width = 200
    for lead in range(0, 260, 7):
        for extra in (1, 2, 3, 50):
            text = "a\n" * lead + "z" * (width + extra) + "\n" + "b" * lead + "\n"
            assert C.clean_markdown(text, width) == reference_clean(text, width), (lead, extra)
            tail = "a " * lead + "z" * (width + extra)  # last line, no final newline
            assert C.clean_markdown(tail, width) == reference_clean(tail, width), (lead, extra)


def test_a_page_with_nothing_to_change_comes_back_without_a_copy():
    page = ("Lorem ipsum dolor sit amet, adipiscing élit.\n\n" * 2_000) + "end\n"
    assert C.clean_markdown(page) is page


def test_many_lines_with_trailing_spaces_take_the_per_line_pass_and_agree():
    text = "word  \n" * (C.MAX_EDITS + 10)
    assert C.clean_markdown(text, 300) == reference_clean(text, 300) == "word\n" * (C.MAX_EDITS + 10)


# --- the UTF-8 cleaner (core.clean_utf8): the same text, as the bytes the shelf stores ---

from webshelf.core import clean_utf8 as U  # noqa: E402

# Awkward characters for the byte path: Unicode spaces before "\n" (found by their UTF-8),
# multi-byte characters in long lines (bytes > characters), tabs, fences and headings — and the
# rare ones that send a page to the str path (CRLF, U+2028, zero-width, data images).
AWKWARD = PIECES + ["\xa0", "\u2003 \n", "\u3000\n", "\u202f\n", "\ufeff", "\u2060", "\t", "~~~\n", "```py\n",
                    "  # h\n", "é" * 600, "😀" * 400, "ü " * 700, "x " * 700 + "\n", "\u3000" * 5 + "\n",
                    f'<\u0130MG src="data:image/png;base64,{B64}">', f"<\u0131mg alt=d src=data:image/gif;base64,{B64}>",
                    "<i>data: not an image</i>", "<a href=x>",
                    # the HTML image gate (clean_utf8._html_image_may_hold): case, spacing, ">" placement
                    f"<IMG SRC = 'DATA:image/png;base64,{B64}'>", f"<iMg alt='<' src=DaTa:image/gif;base64,{B64}>",
                    "<img src=x>data:", "<i", "<img alt=x ", "data:", ">", "<input value=data:x>", "<I ",
                    "<İ", "<ımg src=DATA:x>"]
RARE = ("\r", "\u2028", "\x85", "\x0c", "\x1f", "\u200b", "\ufeff", "\u2060", "data:")
COMMON = [p for p in AWKWARD if not any(r in p for r in RARE)]


def _same(text: str, width: int) -> None:
    page, ref = U.clean_utf8(text, width), C.clean_markdown(text, width)
    assert page.data == ref.encode("utf-8") and page.chars == len(ref) and page.text == ref


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(AWKWARD), max_size=150), st.integers(1, 1_200))
def test_utf8_cleaning_gives_clean_markdowns_text_as_bytes(parts, width):
    _same("".join(parts), width)


def _same_on_the_bytes(text: str, width: int) -> None:
    """clean_utf8 gives clean_markdown's result without ever calling the str cleaner."""
    ref = C.clean_markdown(text, width)
    calls = []
    original = U._c.clean_markdown
    U._c.clean_markdown = lambda *a: calls.append(a) or original(*a)
    try:
        page = U.clean_utf8(text, width)
    finally:
        U._c.clean_markdown = original
    assert not calls
    assert page.data == ref.encode("utf-8") and page.chars == len(ref)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(COMMON), max_size=150), st.integers(126, 1_200))
def test_utf8_cleaning_on_the_byte_path_gives_clean_markdowns_text(parts, width):
    """Pages without a rare rule: the edits are made on the bytes (the str cleaner never runs)."""
    _same_on_the_bytes("".join(parts), width)


NO_IMAGES = [p for p in AWKWARD if "data:" not in p] + ["\r\n\r\n\r\n", "\u2029", "\x0b", "\x1c", "\x00",
                                                       "\x9b", "\u00ad", "\U000e0041", "a\u200b \n", " \ufeff\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(NO_IMAGES), max_size=150), st.integers(126, 1_200))
def test_line_separators_and_invisible_characters_are_handled_on_the_bytes(parts, width):
    """CR, CRLF, U+2028/2029, NEL, VT, FF, U+001C–1E → "\\n" and invisible characters dropped,
    on the bytes (the str cleaner never runs), with clean_markdown's result."""
    _same_on_the_bytes("".join(parts), width)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2_000), st.integers(1, 400))
def test_utf8_cleaning_agrees_on_any_text(text, width):
    _same(text, width)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(AWKWARD), max_size=200), st.integers(200, 3_000))
def test_utf8_cleaning_for_store_cleans_the_same_prefix(parts, max_chars):
    text = "".join(parts) * 3
    page, raw = U.clean_utf8_for_store(text, 126, max_chars)
    ref, ref_raw = C.clean_for_store(text, 126, max_chars)
    assert (page.data, page.chars, raw) == (ref.encode("utf-8"), len(ref), ref_raw)


def test_a_surrogate_is_replaced_as_the_str_cleaner_replaces_it():
    _same("a\ud800b \nc\n", 1_000)


def test_long_lines_of_multibyte_characters_at_every_offset_against_the_blocks():
    width = 200
    for lead in range(0, 260, 7):
        for extra in (-1, 0, 1, 2, 50):
            _same("a\n" * lead + "é" * (width + extra) + "\n" + "b" * lead + "\n", width)
            _same("a " * lead + "😀" * (width + extra), width)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(COMMON), max_size=150), st.integers(126, 1_200))
def test_utf8_cleaning_without_simd_search_gives_the_same(parts, width):
    """Without stringzilla (cache.fastbytes falls back to bytes.find), the same text."""
    view = U.view
    U.view = lambda data: data
    try:
        _same("".join(parts), width)
    finally:
        U.view = view


def test_html_images_whose_tag_starts_with_a_dotted_or_dotless_i_are_replaced():
    """(?i)i matches U+0130 and U+0131 too: the byte gate must let the regex see those tags."""
    for tag in ("<\u0130MG", "<\u0131mg", "<IMG", "<img"):
        text = f'prose with data: in it\n{tag} alt="x" src="data:image/png;base64,{B64}">\n'
        assert "[IMAGE: x]" in C.clean_markdown(text)
        _same(text, 1_000)


def test_a_page_with_typographic_quotes_html_and_data_in_prose_stays_on_the_byte_path():
    """The bench's kind of page (pydocs): curly quotes (unusual characters, none rare), "<int>"
    and "metadata:" in prose — the image gates must not send it to the str cleaner."""
    page = ("It’s “quoted” — see <int> and <i>x</i>; metadata: value.  \n" * 500) + "end\n"
    calls = []
    original = U._c.clean_markdown
    U._c.clean_markdown = lambda *a: calls.append(a) or original(*a)
    try:
        got = U.clean_utf8(page)
    finally:
        U._c.clean_markdown = original
    assert not calls and got.text == original(page)


IMAGE_GATE = ["<", ">", "i", "I", "\u0130", "\u0131", "mg", "MG", " src=", " SRC = '", "data:", "DATA:", "DaTa:",
              "image/png;base64,iVBO", "x", " ", "\n", "alt=", "é"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(IMAGE_GATE), max_size=60))
def test_the_html_image_gate_never_says_no_where_the_regex_matches(parts):
    """``_html_image_may_hold`` is a gate: where ``clean._HTML_DATA_IMAGE`` finds a tag, it says yes."""
    text = "".join(parts)
    if U._c._HTML_DATA_IMAGE.search(text) is not None:
        assert U._html_image_may_hold(text.encode("utf-8"))
