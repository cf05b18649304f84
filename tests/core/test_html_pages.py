"""Markdown fidelity on real pages (tests/core/pages/, WCXB dev, CC-BY-4.0): every <pre> is one
valid fenced block (checked with a CommonMark parser), line-number gutters are gone, headings
keep their level, and the title line, the first paragraph and a final code block survive."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.html_markdown import html_to_markdown

PAGES = Path(__file__).resolve().parent / "pages"
IDS = ["0415", "2870", "0668", "0665"]
_PREFIX = re.compile(r"^(?:\s*>)*")


def load(page_id: str) -> tuple[str, dict]:
    html = gzip.decompress((PAGES / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
    return html, json.loads((PAGES / f"{page_id}.json").read_text())


def fences(markdown: str) -> list[tuple[str, bool]]:
    """(info string, closed?) for every fenced block markdown-it-py finds."""
    lines, out = markdown.split("\n"), []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "fence":
            start, end = token.map
            closing = _PREFIX.sub("", lines[end - 1]).strip() if end - start >= 2 else ""
            out.append((token.info, closing.startswith(token.markup) and set(closing) == {token.markup[0]}))
    return out


@pytest.fixture(scope="module", params=IDS)
def converted(request):
    html, truth = load(request.param)
    return request.param, html, truth, html_to_markdown(html, truth["url"]).markdown


def test_every_fence_is_closed(converted):
    page_id, _, _, md = converted
    found = fences(md)
    assert found, f"{page_id}: no code block at all"
    assert all(closed for _, closed in found), f"{page_id}: unclosed fence"
    assert not re.search(r"^\s*[-*+]\s+```", md, re.M), f"{page_id}: a fence inside a list marker line"


def test_first_paragraph_and_last_line_survive(converted):
    page_id, _, truth, md = converted
    flat = " ".join(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", md).replace("`", "").split())
    lines = [line for line in truth["main_content"].split("\n") if line.strip()]
    first = next(line for line in lines if len(line) > 60)
    assert " ".join(first.split())[:60] in flat, f"{page_id}: first paragraph dropped"
    assert " ".join(lines[-1].split())[:50].rstrip(".") in flat, f"{page_id}: last line dropped"


def test_gutter_tables_become_one_fence_each_without_numbers():
    html, truth = load("0415")
    md = html_to_markdown(html, truth["url"]).markdown
    tree = LexborHTMLParser(html)
    gutter_tables = tree.css("table.lntable")
    assert gutter_tables, "the sample must contain Chroma gutter tables"
    found = fences(md)
    assert len(found) >= len(gutter_tables)
    assert ("c", True) in found and ("rust", True) in found  # the declared languages
    assert "#hl-0-1" not in md and "[ 1](" not in md  # gutter anchors are not code
    assert "| ```" not in md and "- ```" not in md


def test_code_in_blockquote_and_at_the_very_end():
    html, truth = load("2870")
    md = html_to_markdown(html, truth["url"]).markdown
    assert not re.search(r"^>\s*```", md, re.M), "an indenting blockquote was kept around code"
    html, truth = load("0668")
    md = html_to_markdown(html, truth["url"]).markdown.rstrip()
    assert md.endswith("GOPRIVATE=*.corp.example.com,*.research.example.com\n```")


def test_title_line_and_heading_levels_kept():
    html, truth = load("0668")
    md = html_to_markdown(html, truth["url"]).markdown
    assert md.startswith("# Managing dependencies\n")
    tree = LexborHTMLParser(html)
    for level in (2, 3):
        for h in tree.css(f"main h{level}")[:3]:
            text = " ".join(h.text(deep=True).split())
            assert re.search(rf"^{'#' * level} .*{re.escape(text[:20])}", md, re.M), (level, text)


def test_code_in_list_items_keeps_its_language():
    html, truth = load("0665")
    md = html_to_markdown(html, truth["url"]).markdown
    infos = [info for info, _ in fences(md)]
    assert "console" in infos
