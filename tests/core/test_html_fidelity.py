"""Markdown fidelity classes found by bench/markdown_fidelity.py on every corpus page, each on a
real WCXB dev page (tests/core/pages/, CC-BY-4.0) and a minimal snippet of the same markup:
declared languages (``brush: js``, ``<code data-lang>``), code keeping its blank lines, headings
inside links and emphasis, repeated item headings kept when a repeated section is removed."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

from markdown_it import MarkdownIt
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.by_type import to_markdown
from webshelf.core.convert.html_code import squeeze_blanks
from webshelf.core.convert.html_markdown import html_to_markdown
from webshelf.core.truncate import headings

PAGES = Path(__file__).resolve().parent / "pages"
_MD = MarkdownIt("commonmark")


def served(page_id: str) -> tuple[bytes, str]:
    """(the page's bytes, its Markdown as the local backend serves it)."""
    html = gzip.decompress((PAGES / f"{page_id}.html.gz").read_bytes())
    url = json.loads((PAGES / f"{page_id}.json").read_text())["url"]
    return html, to_markdown(html, "text/html; charset=utf-8", url).markdown


def fences(markdown: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced block a CommonMark parser finds."""
    return [(t.info.strip(), t.content) for t in _MD.parse(markdown) if t.type == "fence"]


def md_headings(markdown: str) -> list[tuple[int, str]]:
    tokens = _MD.parse(markdown)
    return [(int(t.tag[1]), tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


# ---------------------------------------------------------------- languages


def test_brush_language_with_a_space_is_kept():
    html, md = served("0671")  # MDN: <pre class="brush: js notranslate">
    declared = html.count(b'class="brush: js')
    assert declared >= 10
    assert Counter(info for info, _ in fences(md))["js"] == declared


def test_data_lang_on_the_code_inside_a_highlight_pre_is_kept():
    _, md = served("0443")  # Asciidoctor/Rouge: <pre class="rouge highlight"><code data-lang="http">
    infos = Counter(info for info, _ in fences(md))
    assert infos["http"] == 2 and infos["csharp"] >= 5 and infos["json"] >= 1
    assert "" not in infos


def test_language_conventions_on_snippets():
    cases = {
        '<pre class="brush: ruby; gutter: false">puts 1</pre>': "ruby",
        '<pre class="rouge highlight"><code data-lang="yaml">a: 1</code></pre>': "yaml",
        '<div class="sourceCode"><pre class="sourceCode haskell"><code>main = pure ()</code></pre></div>': "haskell",
        '<pre data-language="go"><code>package main</code></pre>': "go",
        '<div class="highlight-python notranslate"><div class="highlight"><pre>x = 1</pre></div></div>': "python",
        '<pre><code class="language-text">plain</code></pre>': "",
    }
    for snippet, lang in cases.items():
        md = html_to_markdown(f"<main><p>{'word ' * 50}</p>{snippet}</main>").markdown
        assert [info for info, _ in fences(md)] == [lang], snippet


# ---------------------------------------------------------------- code text


def test_code_keeps_its_blank_lines():
    html, md = served("2999")  # Django docs: two blank lines before a class (PEP 8)
    pre = next(p for p in LexborHTMLParser(html).css("pre") if "class NameForm" in p.text())
    assert "from django import forms\n\n\nclass NameForm" in pre.text()
    bodies = [body for _, body in fences(md)]
    assert any(body.startswith("from django import forms\n\n\nclass NameForm(forms.Form):") for body in bodies)


def test_blank_lines_squeezed_outside_fences_only():
    text = "a\n\n\n\nb\n\n```\nx\n\n\ny\n```\n\n\n- ```\n  p\n\n\n  q\n  ```\n\n\n\nc\n\n```\nunclosed\n\n\nz"
    assert squeeze_blanks(text) == ("a\n\nb\n\n```\nx\n\n\ny\n```\n\n- ```\n  p\n\n\n  q\n  ```\n\nc\n\n"
                                    "```\nunclosed\n\nz")
    md = html_to_markdown("<main><p>" + "word " * 50 + "</p><ul><li><pre>one\n\n\ntwo</pre></li></ul></main>").markdown
    assert [body for _, body in fences(md)] == ["one\n\n\ntwo\n"]


# ---------------------------------------------------------------- headings


def test_headings_inside_card_links_keep_their_level():
    html, md = served("0659")  # a shop: <li><a href><h2>Product</h2>…</a></li>
    tree = LexborHTMLParser(html)
    in_links = [" ".join(h.text(deep=True).split()) for h in tree.css("li.product a h2")]
    assert len(in_links) >= 5
    level2 = [text for level, text in md_headings(md) if level == 2]
    outline = [h.text for h in headings(md) if h.level == 2]
    for name in in_links[:5]:
        assert any(name in text for text in level2), name
        assert any(name in text for text in outline), name  # the footer outline lists it
    assert re.search(r"^  ## \[Joco Cup 4oz\]\(https://jococups\.com/product/4oz-joco-cup/\)$", md, re.M)


def test_headings_inside_inline_wrappers_on_snippets():
    body = "<p>" + "word " * 50 + "</p>"
    cases = {
        '<a href="https://e.com/x"><h3>Card</h3><p>teaser</p></a>': (3, "[Card](https://e.com/x)"),
        "<strong><h2>Bold</h2></strong>": (2, "Bold"),
        "<details><summary><div><h2>Accordion</h2></div></summary><p>x</p></details>": (2, "Accordion"),
        "<b><a href='/y'><h4>Both</h4></a></b>": (4, "[Both](https://e.com/y)"),
    }
    for snippet, heading in cases.items():
        md = html_to_markdown(f"<main>{body}{snippet}</main>", "https://e.com/").markdown
        assert heading in md_headings(md), (snippet, md)
        assert "**#" not in md


def test_repeated_item_headings_stay_when_their_icons_are_deduplicated():
    html, md = served("0056")  # movers list: "### Pros & Cons", a toggle icon twice, "#### Pros" per company
    tree = LexborHTMLParser(html)
    in_page = sum(1 for h in tree.css("h3") if h.text(strip=True) == "Pros & Cons")
    assert in_page >= 8
    kept = sum(1 for level, text in md_headings(md) if (level, text) == (3, "Pros & Cons"))
    assert kept > in_page // 2  # main kept 1: the repeated runs went whole


def test_a_repeated_section_with_prose_still_goes():
    section = "<h2>Plans</h2><p>" + "Every plan includes unlimited projects and support. " * 3 + "</p><h3>Basic</h3>"
    md = html_to_markdown(f"<main><p>{'intro ' * 40}</p><div>{section}</div><div>{section}</div></main>").markdown
    assert md.count("## Plans") == 1 and md.count("### Basic") == 1
