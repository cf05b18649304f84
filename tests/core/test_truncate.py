"""Truncation: budget never exceeded, windows verbatim, footer complete, nothing lost."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.core.clean import clean_markdown
from webshelf.core.truncate import agent_notes, headings, render

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


# --- the outline at small budgets, headings in list items ------------------------------------

def one_heading_page(n_lines: int = 300, heading: str = "## The middle heading") -> str:
    lines = [f"line {i} " + "x" * 50 + "\n" for i in range(n_lines)]
    lines[n_lines // 2] = heading + "\n"
    return "".join(lines)


@pytest.mark.parametrize("budget", range(2_000, 4_001, 100))
def test_the_outline_stays_at_small_budgets_when_there_is_room(budget):
    """Its reserve used to forget the 31-character intro line: at 2,500 the heading vanished."""
    w = render(one_heading_page(), budget, path="/c/web/p.md")
    assert len(w.content) <= budget
    assert "Headings in the omitted part:\n  line 151: ## The middle heading\n" in w.content


LIST_HEADINGS = """\
# Title

- ## Install
  text
  ## Configure
   ## Three spaces
1. ## Numbered
   - * ### Nested
1.  item

    ## Deep in the item
  ```
  ## in an indented fence: not a heading
  ```
A paragraph.

    ## indented code, not a heading
"""


def test_headings_indented_or_inside_list_items_are_found():
    assert [(h.line, h.level, h.text) for h in headings(LIST_HEADINGS)] == [
        (1, 1, "Title"), (3, 2, "Install"), (5, 2, "Configure"), (6, 2, "Three spaces"), (7, 2, "Numbered"),
        (8, 3, "Nested"), (11, 2, "Deep in the item")]


def test_list_item_headings_are_listed_and_counted_in_the_outline():
    text = "".join(f"{'  - ' if i % 2 else '   '}## Step {i}\n" + "".join(f"detail {i}.{j} " + "d" * 60 + "\n"
                                                                       for j in range(20)) for i in range(200))
    w = render(text, 15_000, path="/c/web/p.md")
    listed = re.findall(r"  line ([\d,]+): ## (Step \d+)\n", w.content)
    more = re.search(r"… and ([\d,]+) more headings", w.content)
    omitted = [h for h in headings(text) if w.head_lines < h.line < w.tail_start]
    assert listed and len(listed) + int(more[1].replace(",", "") if more else 0) == len(omitted) > 100
    lines = text.splitlines()
    assert all(lines[int(n.replace(",", "")) - 1].endswith(f"## {title}") for n, title in listed)


# --- the read_file hint stays parseable for any path -----------------------------------------

HINT = re.compile(r'read_file path=("(?:[^"\\]|\\.)*") offset=(\d+) limit=(\d+)$', re.M)
odd_path = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"),
                   min_size=1, max_size=80).map(lambda s: "/home/" + s + "/.webshelf/cache/web/p.md")


def parse_hint(content: str) -> tuple[str, int, int]:
    """The documented rule (README): the path between double quotes, \\" and \\\\ escaped."""
    m = HINT.search(content)
    assert m, content[-400:]
    [by_shlex] = shlex.split(m[1])
    assert json.loads(m[1]) == by_shlex  # a JSON string decoder reads it the same way
    return by_shlex, int(m[2]), int(m[3])


@pytest.mark.parametrize("path", ['/home/a "quoted" one/p.md', "/home/back\\slash\\\\/p.md", "/home/with space/p.md",
                                  "/home/$HOME/`x`/p.md", "/home/naïve-日本/p.md", '/h/\\"/p.md', "/h/'single'/p.md"])
def test_the_hint_gives_back_the_exact_path(path):
    w = render(make_text(2_000), 15_000, path=path)
    assert parse_hint(w.content) == (path, w.head_lines + 1, 500)
    assert f"Full text: {path}\n" in w.content


@settings(max_examples=200, deadline=None)
@given(odd_path, st.integers(2_000, 8_000))
def test_the_hint_is_parseable_for_any_home_path(path, budget):
    w = render(make_text(400), budget, path=path)
    assert len(w.content) <= budget
    if path in w.content:
        assert parse_hint(w.content)[0] == path


# --- notes are inside the budget, each shown once --------------------------------------------

NOTE_KINDS = {
    "cached": "served from the stored copy fetched 12 s ago (cache.max_age); pass fresh=True to fetch again",
    "cut": "Stored copy cut at 2,000,000 characters (cache.max_file_chars): the page has 3,100,000; the rest was not stored.",
    "publish": "publish to runtime 'docker' failed: runtime 'docker': the sandbox is not running; start it before publishing",
    "long": "publish to runtime 'ssh:build1' failed: " + "a very long remote error message " * 40,
    "multiline": "a note\nover two lines",
    "empty_page": "no readable text was found on this page",
}


@settings(max_examples=400, deadline=None)
@given(st.lists(line_text, min_size=0, max_size=300), st.integers(2_000, 20_000), st.integers(1, 600),
       st.lists(st.sampled_from(sorted(NOTE_KINDS)), max_size=4), st.booleans(), st.booleans())
def test_notes_are_inside_the_budget_and_shown_once(lines, budget, path_len, kinds, cut, stored):
    text = clean_markdown("\n".join(lines), 1_000)
    path = "/" + "p" * path_len + ".md" if stored else None
    notes = [NOTE_KINDS[k] for k in kinds]
    cut_note = NOTE_KINDS["cut"] if cut else None
    if cut:
        notes.append(cut_note)  # core.extract puts it among the notes too: it must still show once
    w = render(text, budget, path=path, cut_note=cut_note, notes=notes,
               store_note=None if stored else "the full text could not be stored: No space left on device")
    assert len(w.content) <= budget
    if w.truncated and "cannot hold even the footer" not in w.content:
        assert reconstruct_with(text, w) == text
        footer = w.content[w.content.index("\n---\n[webshelf] Truncated page:"):]
        for note in agent_notes(notes, cut_note=cut_note):
            assert footer.count(note) == 1 or not stored and note.startswith("the full text could not")
    elif not w.truncated:
        assert w.content.startswith(text)
        shown = w.content[len(text):]
        for note in agent_notes(notes, cut_note=cut_note):
            assert shown.count(note) <= 1
            assert shown.count(note) == 1 or not stored  # dropped only when nothing could be stored


def test_a_cut_note_is_shown_once_and_the_budget_holds():
    """Before: 3,201 characters at char_limit 3,000, the cut note shown twice."""
    cut = NOTE_KINDS["cut"]
    w = render(make_text(2_000), 3_000, path="/c/web/p.md", cut_note=cut, notes=[NOTE_KINDS["cached"], cut])
    assert len(w.content) <= 3_000 and w.content.count(cut) == 1 and w.content.count(NOTE_KINDS["cached"]) == 1
    whole = render("short page\n", 3_000, path="/c/web/p.md", cut_note=cut, notes=[cut])
    assert whole.content == f"short page\n\n---\n[webshelf] note: {cut}\n" and not whole.truncated
