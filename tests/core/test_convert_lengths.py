"""The cheap measurements of the served HTML path (issue 14's speed pass) give exactly what the
plain selectolax calls give: ``text_len``, the ``Lengths`` memo, the memoised class/id words and
``_dedupe``'s early return."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.html_density import _BLOCKS as BLOCKS
from webshelf.core.convert.html_density import Lengths, child_lengths, drop_link_blocks, link_len, narrow, text_len
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


_WRAPPERS = [
    "<div><div><div><p>deep</p></div></div></div>",  # lone children a few levels down
    "<div>\n  <section>\n <p> a </p> <p>b</p>\n</section>\n</div>",  # whitespace around the lone child
    "<div>own text <span>and the child's</span> more own</div>",  # own text beside the lone child
    "<div> <span></span> </div>",  # the lone child has no text node
    "<div><span> </span></div>",  # ... or only an empty one
    "<div><!-- only a comment --></div>", "<div> x <!-- c --> </div>",  # a comment is a child without text
    "<div><b>1</b><i>2</i><!-- c --><u> </u></div>",  # several children: each measured
]


@pytest.mark.parametrize("html", _WRAPPERS)
def test_child_lengths_are_the_children_text_len(html):
    tree = LexborHTMLParser(html)
    for node in tree.root.traverse():
        pairs = child_lengths(node, text_len(node))
        assert [c.mem_id for c, _ in pairs] == [c.mem_id for c in node.iter(include_text=False)]
        assert [n for _, n in pairs] == [_plain(c) for c in node.iter(include_text=False)], (html, node.tag)


def test_descend_with_a_memo_is_the_plain_descent():
    from webshelf.core.convert.html_main_content import _descend

    page = ("<body><div><div><div class=x><p>" + "Words of the story. " * 30 + "</p><p>More.</p></div>"
            "</div><aside>a short rail</aside></div><footer>foot</footer></body>")
    plain = _descend(LexborHTMLParser(page).body)
    memo = Lengths()
    tree = LexborHTMLParser(page)
    found = _descend(tree.body, 0.7, memo)
    assert found.html == plain.html and found.tag == "p"
    assert memo.text(found) == text_len(found)  # what it learned on the way is exact


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


def _measured_drops(node, density: float, min_chars: int, page_max: float) -> int:  # noqa: ANN001
    """``drop_link_blocks`` as it was before lone children took their length from the parent:
    every child measured by its own C walk."""
    total = _plain(node)
    if not total or link_len(node) >= page_max * total:
        return 0
    removed, stack = 0, [node]
    while stack:
        for child in stack.pop().iter(include_text=False):
            length = _plain(child)
            if length < min_chars:
                continue
            if (child.tag in BLOCKS and length < 0.5 * total
                    and link_len(child) >= density * length and child.css_first("h1") is None):
                child.remove()
                removed += 1
            else:
                stack.append(child)
    return removed


_TEASERS = "".join(f"<li><a href=/{i}>Another teaser headline {i}</a></li>" for i in range(12))
_STORY = "<p>" + "Prose of the story goes on. " * 20 + "</p>"


@pytest.mark.parametrize("page", [
    # the rail and the story each a dozen lone wrappers down, own text beside some wrappers
    "<div id=m>" + "<div>" * 12 + _STORY + "</div>" * 12 + "<section> note " + "<div>" * 6
    + f"<ul>{_TEASERS}</ul>" + "</div>" * 6 + " end </section></div>",
    # a rail inside a lone wrapper inside a rail: the outer one goes, the inner is never asked
    f"<div id=m>{_STORY}<div><div><nav><ul>{_TEASERS}</ul></nav></div></div><p>Closing words of the page.</p></div>",
    # whitespace and comments around lone children, an empty lone child
    f"<div id=m>\n <div> <!-- c --> <div>\n{_STORY}</div> </div>\n<div><span> </span></div>"
    f"<aside> <div><ul>{_TEASERS}</ul></div> </aside></div>",
])
def test_drop_link_blocks_with_lone_children_drops_what_measuring_each_did(page):
    ours, plain = LexborHTMLParser(page), LexborHTMLParser(page)
    removed = drop_link_blocks(ours.css_first("#m"), 0.6, 40, 0.5)
    assert removed == _measured_drops(plain.css_first("#m"), 0.6, 40, 0.5) and removed >= 1
    assert ours.css_first("#m").html == plain.css_first("#m").html


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


_REMOVALS = (
    "<div id=root><div id=x><a href=#>one <span>in</span></a> text</div>"
    "<a href=#>outer <div id=y><a href=#>nested</a> and <b>bold</b></div> tail</a>"  # anchors around a block
    "<section><p> </p><!-- c --><br><p>caf\u00e9\u00a0 <i>\u3000</i> &amp; &lt;b&gt;</p>"
    "<div id=z><a href=#>two</a></div></section></div>"
)


@pytest.mark.parametrize("target", ["#x", "#y", "#z", "section", "b", "i", "br"])
def test_lengths_remove_forgets_exactly_what_the_removal_changes(target):
    from webshelf.core.convert.html_density import plain_len

    tree = LexborHTMLParser(_REMOVALS)
    root, memo = tree.css_first("#root"), Lengths()
    for node in root.traverse():  # everything remembered, as a long stretch of work leaves it
        memo.text(node), memo.links(node)
    memo.remove(tree.css_first(target))
    for node in root.traverse():  # what is still in the tree: remembered or not, the fresh answer
        assert memo.text(node) == text_len(node), (target, node.tag)
        assert memo.links(node) == link_len(node), (target, node.tag)
        assert plain_len(node, memo) == plain_len(node), (target, node.tag)


def test_lengths_remove_of_an_unmeasured_node():
    tree = LexborHTMLParser("<div id=a><p>one <a href=#>two</a></p><ul><li><a href=#>three</a></li></ul></div>")
    div, memo = tree.css_first("#a"), Lengths()
    memo.links(div)
    memo.remove(tree.css_first("ul"))  # never measured itself: its ancestors are forgotten all the same
    assert memo.text(div) == text_len(div) == len("one two") and memo.links(div) == len("two")


_PRUNE_PAGE = (
    "<head><link rel=x><meta a=b><style>x</style><script>s</script></head><body>"
    "<div role=navigation>r1</div><div role=NAVIGATION>r2</div><div role='navigation '>r3</div>"
    "<p role=menu>r4<nav>n1</nav></p><aside role=note>a1</aside><section role=tooltip>t</section>"
    "<svg><nav>sn</nav><a role=search>s</a></svg><math><nav>mn</nav><mi role=banner>b</mi></math>"
    "<NAV>upper</NAV><nav role=navigation>twice</nav><aside role=menu>twice</aside>"
    "<div role=main><header role=banner>h</header></div>"
    "<template><nav>in template</nav></template><button>b</button><SELECT><option>o</select>"
    "<Dialog open>d</Dialog><div><iframe src=x></iframe><canvas>c</canvas><input value=v>t</div></body>"
)


def test_chrome_query_is_the_twelve_selector_query():
    from webshelf.core.convert.html_main_content import _CHROME, _chrome

    tree = LexborHTMLParser(_PRUNE_PAGE)
    expected = [n.mem_id for n in tree.body.css(_CHROME)]
    assert [n.mem_id for n in _chrome(tree.body)] == expected and len(expected) >= 8


_NESTED_JUNK = ("<body><object><embed src=x><svg><style>s</style><script>x</script></svg></object>"
                "<iframe><iframe>i</iframe></iframe><template><script>t</script></template>"
                "<p>keep<canvas><svg><title>t</title></svg></canvas> me</p><dialog><form><button>b</button>"
                "<input><select><option>o</select><textarea>t</textarea></form></dialog></body>")


@pytest.mark.parametrize("page", [_PRUNE_PAGE, _NESTED_JUNK])
def test_junk_walk_leaves_the_tree_strip_tags_left(page):
    from webshelf.core.convert.html_main_content import _JUNK_TAG_LIST, _drop_junk

    old, new = LexborHTMLParser(page), LexborHTMLParser(page)
    old.strip_tags(_JUNK_TAG_LIST, recursive=True)
    _drop_junk(new)
    assert new.html == old.html and "<script" not in new.html and "<svg" not in new.html
    assert page is _PRUNE_PAGE or ("keep" in new.html and "<object" not in new.html and "<dialog" not in new.html)


def test_class_id_repeats_come_side_by_side():
    # prune's name loop skips a node equal to the one before it, in place of ``unique``
    page = ("<body><div class=a id=b><p id=c>x<span class=d>y</span></p><i class=e id=f>z</i></div>"
            "<nav id=g class=h><ul class=i><li id=j class=k>l</li></ul></nav><b class=''>m</b><b id=''>n</b></body>")
    listed = [n.mem_id for n in LexborHTMLParser(page).body.css("[class], [id]")]
    once = [key for i, key in enumerate(listed) if i == 0 or key != listed[i - 1]]
    assert once == list(dict.fromkeys(listed)) and len(listed) > len(once)


@pytest.mark.parametrize("cls", ["site-footer main", "a  b", "", "x_nav:y", "has-sidebar", "comment-list"])
def test_name_without_an_id_is_the_class_list(cls):
    from webshelf.core.convert.html_main_content import _match

    assert _match(cls) == _match(f"{cls} ")


def test_holders_united_with_known_holders():
    from webshelf.core.convert.html_main_content import _KEEPS, _NAME_KEEPS, _holders

    tree = LexborHTMLParser("<div><h1>a</h1></div><main><section><h1>b</h1></section></main>"
                            "<article><p>x</p></article><aside><div><h1>c</h1></div></aside>")
    body = tree.body
    known = _holders(body, _KEEPS)
    before = set(known)
    assert _holders(body, "h1", known) == _holders(body, _NAME_KEEPS) and known == before
