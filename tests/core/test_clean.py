"""Cleaning: base64 images become placeholders, blank runs collapse, no line too long."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.core.clean import drop_invisible, clean_markdown, wrap_line

B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_markdown_data_images_become_placeholders_with_alt():
    text = f"a ![A red dot](data:image/png;base64,{B64}) b ![](data:image/gif;base64,{B64}) c\n"
    assert clean_markdown(text) == "a [IMAGE: A red dot] b [IMAGE] c\n"


def test_html_data_images_and_bare_base64_runs_become_placeholders():
    text = f'<img alt="logo" src="data:image/png;base64,{B64}"> and <img src=\'data:image/png;base64,{B64}\'>\n' \
           f"css: url(data:image/png;base64,{B64})\n"
    assert clean_markdown(text) == "[IMAGE: logo] and [IMAGE]\ncss: url([IMAGE])\n"


def test_normal_image_links_stay():
    text = "![diagram](https://example.com/d.png)\n"
    assert clean_markdown(text) == text


def test_blank_runs_collapse_and_trailing_whitespace_goes():
    assert clean_markdown("\n\n\na  \n\n\n\n\nb\t\r\nc\r\n\n\n") == "a\n\nb\nc\n"


def test_long_lines_wrap_at_whitespace_and_hard_split_without_it():
    words = " ".join(["word"] * 600)  # 2,999 characters
    out = clean_markdown(words + "\n" + "x" * 2_500 + "\n", 1_000)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 1_000
    assert " ".join(lines[:3]) == words  # the breaks replaced single spaces only
    assert "".join(lines[3:]) == "x" * 2_500


def test_wrap_line_never_exceeds_width():
    assert all(len(p) <= 10 for p in wrap_line("aaaa bbbbbbbbbbbbbbbbbbbb cc d", 10))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3_000), st.integers(80, 400))
def test_every_non_space_character_survives_and_no_line_is_too_long(text, width):
    out = clean_markdown(text, width)
    assert all(len(line) <= width for line in out.split("\n"))
    if "data:" not in text:
        # invisible Unicode is dropped on purpose (hostile pages hide text in it); all else survives
        assert "".join(out.split()) == "".join(drop_invisible(text.replace("\r", "\n")).split())


def test_the_fast_invisible_check_agrees_with_the_full_scan_on_every_bmp_character():
    """drop_invisible skips its full-text regex when the UTF-8 bytes show no invisible
    character; that shortcut must never miss one."""
    from webshelf.core.clean import _invisible_pattern, drop_invisible

    for cp in range(0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        text = f"a{chr(cp)}b"
        assert drop_invisible(text) == _invisible_pattern().sub("", text), hex(cp)


def test_a_bare_image_data_uri_ends_at_its_base64_and_other_data_uris_stay():
    """A data: URI in running text must not swallow the words after it (nothing is lost)."""
    text = (f"An inline icon data:image/png;base64,{B64} sits here and these words stay.\n"
            "The string data:text/plain;base64,SGVsbG8= decodes to Hello, and this sentence stays.\n")
    assert clean_markdown(text) == (
        "An inline icon [IMAGE] sits here and these words stay.\n"
        "The string data:text/plain;base64,SGVsbG8= decodes to Hello, and this sentence stays.\n")


# Every line break str.splitlines() knows besides "\n": CR, CRLF, VT, FF, U+001C–U+001E, NEL, U+2028, U+2029.
SPLITLINES_BREAKS = ["\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
text_with_breaks = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(SPLITLINES_BREAKS + ["\n"])),
                            max_size=60).map("".join)


def test_every_line_separator_becomes_a_newline_and_splitlines_agrees():
    """A form feed, U+2028, NEL … used to survive (or be deleted, gluing two words): a
    splitlines() reader then counted other line numbers than the footer."""
    text = "".join(f"line {i}{sep}" for i, sep in enumerate(SPLITLINES_BREAKS)) + "end\n"
    out = clean_markdown(text)
    assert out == "".join(f"line {i}\n" for i in range(len(SPLITLINES_BREAKS))) + "end\n"
    assert out.splitlines() == out.split("\n")[:-1]


@settings(max_examples=300, deadline=None)
@given(text_with_breaks, st.integers(20, 400))
def test_splitlines_and_split_newline_agree_on_any_cleaned_text(text, width):
    out = clean_markdown(text, width)
    assert out.splitlines() == out.split("\n")[:-1]  # out ends with "\n" (or is empty)
    assert out.splitlines(keepends=True) == [line + "\n" for line in out.split("\n")[:-1]]
    assert not any(c in out for c in SPLITLINES_BREAKS if c != "\r\n")


def test_normalising_line_breaks_costs_little_on_a_2_mb_page():
    """The check runs on every page: without any separator it is a few memchr scans."""
    from webshelf.core.clean import normalise_line_breaks

    page = ("Lorem ipsum dolor sit amet, adipiscing élit. " * 20 + "\n") * 2_200
    assert normalise_line_breaks(page) is page  # nothing to do: the very same object back, no copy
    with_breaks = page.replace("\n", "\u2028", 50)
    assert normalise_line_breaks(with_breaks) == page


def test_wrapping_a_long_line_without_spaces_is_linear_and_exact():
    """wrap_line walks offsets (issue 16 §1: re-slicing the rest per piece was quadratic)."""
    line = "".join(chr(0x61 + i % 26) for i in range(3_000_001))
    pieces = wrap_line(line, 1_000)
    assert len(pieces) == 3_001 and all(len(p) == 1_000 for p in pieces[:-1]) and pieces[-1] == line[-1:]
    assert "".join(pieces) == line
    mixed = ("word " * 50 + "x" * 1_500 + " ") * 20
    assert " ".join(wrap_line(mixed.rstrip(), 300)).replace(" ", "") == mixed.replace(" ", "")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["word ", "x" * 700, "\n", "\n\n\n", "  \t", "\r\n", "\u200b",
                                 "![a](data:image/png;base64,AAAAAAAAAAAA)", "# H\n", "é"]), max_size=200),
       st.integers(10_000, 20_000))
def test_cleaning_only_the_storable_prefix_stores_exactly_what_cleaning_everything_stores(parts, cap):
    """clean_for_store cuts the raw page before cleaning; the stored copy must not change."""
    from webshelf.cache.caps import cap_text
    from webshelf.core import clean as clean_module

    raw = "".join(parts) * 40
    old = clean_module.CUT_PAD
    clean_module.CUT_PAD = 0  # small pages: make the pre-cut happen
    try:
        text, raw_chars = clean_module.clean_for_store(raw, 500, cap)
    finally:
        clean_module.CUT_PAD = old
    whole = clean_markdown(raw, 500)
    expected, _ = cap_text(whole, cap)
    got, _ = cap_text(text, cap, raw_chars)
    body = lambda s: s[: s.rfind("[webshelf: the stored copy stops here")]  # noqa: E731 (marker counts differ)
    assert body(got) == body(expected)
    if raw_chars is None:
        assert text == whole


def test_clean_title_makes_one_plain_line():
    from webshelf.core.clean import clean_title

    assert clean_title(" A\u200b\x1b title\r\nwith\u2028breaks\x07 ") == "A title with breaks"
    assert clean_title("\u200b\u202e") is None and clean_title(None) is None
    assert len(clean_title("t" * 1_000)) == 300
