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
