"""Truncation: budget never exceeded, windows verbatim, footer complete, nothing lost."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.clean import clean_markdown
from core.truncate import headings, render

FOOTER_CALL = re.compile(r'read_file path="(?P<path>[^"]+)" offset=(?P<offset>\d+) limit=(?P<limit>\d+)')


def make_text(n_lines: int, width: int = 60) -> str:
    return "".join(f"line {i:05d} " + "x" * (width - 11) + "\n" for i in range(1, n_lines + 1))


def test_text_within_budget_is_returned_whole():
    text = make_text(10)
    w = render(text, 15_000, path="/c/web/p.md")
    assert (w.content, w.truncated, w.total_lines, w.total_chars) == (text, False, 10, len(text))


def test_long_text_is_cut_into_verbatim_head_and_tail_within_budget():
    text = make_text(2_000)
    w = render(text, 15_000, path="/c/web/p.md")
    lines = text.splitlines(keepends=True)
    assert w.truncated and len(w.content) <= 15_000
    assert w.content.startswith("".join(lines[: w.head_lines]))
    tail = "".join(lines[w.tail_start - 1 :])
    footer_at = w.content.index("\n---\n[webshelf]")
    assert w.content[:footer_at].endswith(tail)
    # head gets about 75% of what the windows use
    head_chars = sum(map(len, lines[: w.head_lines]))
    assert 0.7 < head_chars / (head_chars + len(tail)) < 0.8


def test_footer_names_path_totals_ranges_and_a_ready_call():
    text = make_text(2_000)
    w = render(text, 15_000, path="/c/web/p.md")
    footer = w.content[w.content.index("\n---\n[webshelf]") :]
    assert f"{len(text):,} characters in 2,000 lines" in footer
    assert f"showing lines 1–{w.head_lines:,} and {w.tail_start:,}–2,000" in footer
    assert "Full text: /c/web/p.md" in footer
    assert f"Omitted: lines {w.head_lines + 1:,}–{w.tail_start - 1:,}." in footer
    call = FOOTER_CALL.search(footer)
    assert call and call["path"] == "/c/web/p.md" and int(call["offset"]) == w.head_lines + 1
    assert int(call["limit"]) == 500


def test_outline_lists_headings_of_the_omitted_range_with_their_line_numbers():
    body = []
    for i in range(40):
        body.append(f"## Section {i}\n")
        body.extend(f"text {i}.{j} " + "y" * 80 + "\n" for j in range(30))
    text = "# Title\n" + "".join(body)
    w = render(text, 8_000, path="/c/web/p.md")
    lines = text.splitlines()
    listed = re.findall(r"  line ([\d,]+): (#+ .+)\n", w.content)
    assert listed, "outline missing"
    for number, heading in listed:
        n = int(number.replace(",", ""))
        assert w.head_lines < n < w.tail_start
        assert lines[n - 1] == heading
    assert len(w.content) <= 8_000


def test_outline_is_trimmed_with_a_count_when_it_does_not_fit():
    text = "".join(f"## H{i}\nbody {i}\n" for i in range(5_000))
    w = render(text, 4_000, path="/c/web/p.md")
    assert len(w.content) <= 4_000
    assert re.search(r"… and [\d,]+ more headings", w.content)


def test_headings_inside_code_fences_are_not_outline_entries():
    text = "# Real\n```python\n# comment, not a heading\n```\n## Also real\n"
    assert [(h.line, h.text) for h in headings(text)] == [(1, "Real"), (5, "Also real")]


def test_without_a_stored_path_the_footer_says_so_and_offers_no_call():
    w = render(make_text(2_000), 15_000, path=None, store_note="the full text could not be stored: No space left on device")
    assert "Full text: not stored (the full text could not be stored: No space left on device)" in w.content
    assert "read_file" not in w.content and len(w.content) <= 15_000


def reconstruct(text: str, budget: int, split=lambda t: t.splitlines(keepends=True)) -> str:
    """Head + omitted lines (as read_file would give them) + tail, with lines as ``split`` cuts them."""
    w = render(text, budget, path="/p.md")
    if not w.truncated:
        return w.content
    lines = split(text)
    head = w.content[: sum(map(len, lines[: w.head_lines]))]
    omitted = "".join(lines[w.head_lines : w.tail_start - 1])
    footer_at = w.content.index("\n---\n[webshelf]")
    tail_len = sum(map(len, lines[w.tail_start - 1 :]))
    tail = w.content[footer_at - tail_len : footer_at]
    assert len(w.content) <= budget
    return head + omitted + tail


def split_newline(text: str) -> list[str]:
    """Lines as split("\\n") — wc -l, awk, sed, head and tail — cut them, newlines kept."""
    *ended, last = text.split("\n")
    return [line + "\n" for line in ended] + ([last] if last else [])


# Line text may hold any separator str.splitlines() knows (cleaning must turn it into "\n").
SEPARATORS = st.sampled_from(["\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
line_text = st.lists(st.one_of(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                                       max_size=100), SEPARATORS), max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(line_text, min_size=1, max_size=400), st.integers(2_000, 20_000))
def test_reconstruction_invariant_on_generated_texts(lines, budget):
    """Head + omitted + tail == the stored text whether lines are counted by splitlines() (what
    Python tools do) or by "\\n" (what read_file, the footer and shell tools do)."""
    text = clean_markdown("\n".join(lines), 1_000)
    assert text.splitlines(keepends=True) == split_newline(text)
    assert reconstruct(text, budget) == text
    assert reconstruct(text, budget, split_newline) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(line_text, min_size=50, max_size=400), st.integers(2_000, 6_000), st.integers(1, 1_500),
       st.booleans())
def test_the_budget_holds_for_any_path_length_and_cut_note(lines, budget, path_len, cut):
    """Even a very long stored path (or a cut note) never pushes the content past the budget."""
    text = clean_markdown("\n".join(lines), 1_000)
    path = "/" + "p" * path_len + ".md"
    w = render(text, budget, path=path, cut_note="Stored copy cut at 2,000,000 characters." if cut else None)
    assert len(w.content) <= budget
    if w.truncated and path in w.content:
        assert reconstruct_with(text, w) == text


def reconstruct_with(text: str, w) -> str:
    lines = text.splitlines(keepends=True)
    head = "".join(lines[: w.head_lines])
    tail = "".join(lines[w.tail_start - 1 :])
    assert w.content.startswith(head)
    assert w.content[: w.content.index("\n---\n[webshelf]")].endswith(tail)
    return head + "".join(lines[w.head_lines : w.tail_start - 1]) + tail
