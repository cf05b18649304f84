"""The cheap measurements of the served HTML path (issue 14's speed pass) give exactly what the
plain selectolax calls give: ``text_len``, the ``Lengths`` memo, the memoised class/id words and
``_dedupe``'s early return."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.html_density import Lengths, drop_link_blocks, link_len, narrow, text_len
from webshelf.core.convert.html_main_content import _classify
from webshelf.core.convert.html_markdown import _dedupe


def _plain(node) -> int:  # noqa: ANN001 — what text_len stands for
    return len(node.text(deep=True, separator=" ", strip=True))


@pytest.mark.parametrize("html", [
    "<div></div>",  # no text node at all
    "<div><span></span><b></b></div>",
    "<div> </div>",  # one whitespace-only text node: stripped to nothing
    "<div> <i> </i> </div>",  # several: each still adds a separator
    "<div>\u00a0a\u3000<b>\u2003b\u2003</b>\n\tc \u00a0</div>",  # Unicode whitespace, as str.strip
    "<div>a<!-- a comment is no text -->b<template>nor template content</template></div>",
    "<div><p>one</p><p>two <a href=#>three</a></p>   <ul><li> four </li></ul></div>",
    "<div>caf\u00e9 \U0001f600 \u0645\u0631\u062d\u0628\u0627 \u4f60\u597d</div>",  # non-ASCII, astral
    "<div>a\x00b</div>",  # the parser drops U+0000 from text
    "<div>a&#0;b</div>",  # and a reference to it becomes U+FFFD
    "<table>x<tr><td> y </td><td></td></tr></table>",
])
def test_text_len_is_the_stripped_space_joined_length(html):
    tree = LexborHTMLParser(html)
    for node in tree.root.traverse(include_text=True):
        assert text_len(node) == _plain(node), (html, node.tag)


def test_text_len_after_the_tree_changes():
    tree = LexborHTMLParser("<div id=a> x <p>one <br> two</p><span> </span></div>")
    div = tree.css_first("#a")
    tree.css_first("br").replace_with("\n")  # a text node made by the code (html_code does this)
    tree.css_first("span").remove()
    assert text_len(div) == _plain(div)


def test_lengths_memo_matches_and_clear_forgets():
    tree = LexborHTMLParser("<div id=a><p>text <a href=#>link one</a></p><ul><li><a href=#>two</a></li></ul></div>")
    div, memo = tree.css_first("#a"), Lengths()
    assert memo.text(div) == text_len(div) and memo.links(div) == link_len(div) == len("link one") + len("two")
    tree.css_first("ul").remove()
    assert memo.links(div) == len("link one") + len("two")  # remembered: the caller must clear
    memo.clear()
    assert memo.text(div) == text_len(div) and memo.links(div) == len("link one")


def test_a_shared_memo_gives_the_same_narrow_and_drops_as_none():
    page = ("<main id=m><article><h2>Story</h2><p>" + "Prose of the story goes on. " * 20 + "</p></article>"
            "<div class=rail><ul>" + "".join(f"<li><a href=/{i}>Another teaser headline {i}</a></li>" for i in range(12))
            + "</ul></div><div><p>Closing words of the page, not links.</p></div></main>")
    results = []
    for memo in (None, Lengths()):
        tree = LexborHTMLParser(page)
        main = tree.css_first("#m")
        if memo is not None:
            memo.text(main), memo.links(main)  # as the container choice leaves it
        picked = narrow(main, 1.0, memo)  # off: the whole main goes on
        removed = drop_link_blocks(picked, 0.6, 40, 0.5, memo)
        results.append((picked.tag, removed, picked.html))
    assert results[0] == results[1] and results[0][1] == 1


@pytest.mark.parametrize("value", ["site-footer", "main-nav x", "has-sidebar", "comment-list", "Share_Buttons",
                                   "", "  ", "a:menu", "content", "is-ad", "ad"])
def test_classify_memo_is_the_plain_function(value):
    assert _classify(value) == _classify.__wrapped__(value)
    assert _classify(value) == _classify.__wrapped__(value)  # a cache hit too


@pytest.mark.parametrize("markdown", [
    "",
    "a",
    "a\n\nb\n\na\n\nb",  # two repeated blocks: under the run length, nothing can go
    "x\n\n\n\n\n\ny\n\n\n\nz",  # empty blocks repeat, they never count
    "one\n\ntwo\n\nthree\n\nfour\n\none\n\ntwo\n\nthree",  # a section copy: the full path drops it
    "```\ncode\n```\n\none\n\ntwo\n\nthree\n\n```\ncode\n```\n\none\n\ntwo\n\nthree",
    "p\n\np\n\np\n\np",  # one paragraph four times is no section
])
def test_dedupe_early_return_agrees_with_the_full_pass(markdown):
    assert _dedupe(markdown) == _full_dedupe(markdown)


def _full_dedupe(markdown: str) -> str:
    """_dedupe as it was before the early return (main at 40660dc)."""
    blocks = markdown.split("\n\n")
    seen: set[str] = set()
    repeat, fenced = [], False
    for block in blocks:
        key = block.strip()
        fences = sum(1 for line in block.split("\n") if line.lstrip().startswith(("```", "~~~")))
        repeat.append(bool(key) and not fenced and not fences and key in seen)
        if key:
            seen.add(key)
        if fences % 2:
            fenced = not fenced
    out, i = [], 0
    while i < len(blocks):
        j = i
        while j < len(blocks) and repeat[j]:
            j += 1
        if len({blocks[k].strip() for k in range(i, j)}) >= 3:
            i = j
            continue
        out.extend(blocks[i:max(j, i + 1)])
        i = max(j, i + 1)
    return "\n\n".join(out)


@pytest.mark.parametrize("keeps", ["main, article, [role=main]", "main, article, [role=main], h1"])
def test_holders_answer_as_a_subtree_query_would(keeps):
    from webshelf.core.convert.html_main_content import _holders

    tree = LexborHTMLParser(
        "<header><nav><h1>Site</h1></nav></header><div id=w><aside><p>x</p></aside>"
        "<div><div role=main><section><article><h2>A</h2><p>t</p></article><article>B</article></section></div>"
        "</div><footer><div><span>f</span></div></footer></div><main><h1>T</h1></main><p>tail</p>")
    body = tree.body
    holders = _holders(body, keeps)
    for node in body.traverse():
        assert (node.mem_id in holders) == (node.css_first(keeps) is not None), node.tag
    tree.css_first("aside").remove()  # a node holding no keeper: every answer stays right
    for node in body.traverse():
        assert (node.mem_id in holders) == (node.css_first(keeps) is not None), node.tag
