"""Edge cases of the block features' cheaper helpers (core/convert/blocks/features.py and tree.py): each must
give what its plain definition gives — the counts of the four punctuation patterns, the class/id
words, and a block's links and images as ``css("a")`` / ``css_first("img")`` run from the block
itself (nested anchors, anchors and images in ``<pre>``, anchors wrapping blocks, a container
that is itself an anchor). bench/block_features_check.py checks the whole feature vectors against
the previous code on every corpus page; these pin the shapes that matter by construction."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.blocks import features, tree

NAMES = features.NAMES


@pytest.mark.parametrize("text", [
    "", "plain words", "Hello, world. Is it 2026? Yes; it is!", "a...b…c", "x,,y;;z",
    "一句话。第二句！第三句？逗号，顿号、分号；", "हिन्दी वाक्य। दूसरा", "سؤال؟ فاصلة، نعم",
    "١٢٣ ३४५ ３４５ 123", "«quotes» „und“ ‘so’ — dash – ¿qué? ¡sí!", "tab\tand\x1fcontrol\x85",
    "emoji 🙂, flags 🇫🇷; done.", "(parens) [brackets] {braces} @ # % & * _ / \\ ' \"",
    "$ + < = > ^ ` | ~ are symbols, not punctuation", "é, ü; ß. 0",
])
def test_punct_counts_what_the_four_patterns_match(text):
    expected = (len(features._PUNCT.findall(text)), len(features._ENDS.findall(text)),
                len(features._COMMAS.findall(text)), len(features._DIGITS.findall(text)))
    assert features._punct(text) == expected
    assert features._punct(text * 3) == tuple(3 * n for n in expected)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(max_codepoint=127), st.characters(),
                                  st.sampled_from(features._ENDS_CHARS + features._COMMAS_CHARS + "«»—’٣"))))
def test_punct_counts_what_the_four_patterns_match_on_any_text(text):
    """ASCII characters counted on the UTF-8 bytes, the others by regex: the sums are the
    patterns' counts over the whole text, whatever the mix."""
    expected = (len(features._PUNCT.findall(text)), len(features._ENDS.findall(text)),
                len(features._COMMAS.findall(text)), len(features._DIGITS.findall(text)))
    assert features._punct(text) == expected


def test_class_and_id_words_split_at_separators_and_ignore_case():
    assert tree.tokens("Post-Body  entry_title nav:main --x- \u00a0Side") == {
        "post", "body", "entry", "title", "nav", "main", "x", "side"}
    assert tree.tokens(" ") == set()
    assert tree.flags("article-body") == (True, False)
    assert tree.flags("sidebar widget") == (False, True)
    assert tree.flags("post comments") == (True, True)
    assert tree.flags(" ") == tree.NO_FLAGS == (False, False)


def test_flags_memo_gives_the_plain_words_test_is_bounded_and_cleared(monkeypatch):
    """The memo of class/id flags answers what splitting the string gives, holds at most
    ``FLAGS_MEMO_SIZE`` strings, and ``css_hidden.clear_memo`` (the cold runs) empties it."""
    from webshelf.core.convert import css_hidden

    def plain(value):
        words = tree.tokens(value)
        return not tree.POSITIVE.isdisjoint(words), not tree.NEGATIVE.isdisjoint(words)

    monkeypatch.setattr(tree, "FLAGS_MEMO_SIZE", 50)
    values = [f"card-{i} post_body" if i % 3 else f"x{i} nav" for i in range(400)]
    for value in values + values:
        assert tree.flags(value) == plain(value)
        assert len(tree._FLAGS) <= 50
    node = LexborHTMLParser('<p class="Entry-Text" id="side-nav">x</p>').css_first("p")
    assert tree.read_name(node) == ("Entry-Text", "side-nav", True, True)
    assert tree._FLAGS
    css_hidden.clear_memo()
    assert not tree._FLAGS
    bare = LexborHTMLParser("<p>x</p><p data-x='1'>y</p>").css("p")
    assert [tree.read_name(p) for p in bare] == [(None, None, False, False)] * 2


def _reference_links(block_node) -> tuple[int, int, bool]:
    """The definition: what the block's own queries find."""
    if block_node.tag == "pre":
        anchors = []
    else:
        anchors = block_node.css("a")
    chars = sum(len(a.text(deep=True, separator=" ", strip=True)) for a in anchors)
    return chars, len(anchors), block_node.css_first("img") is not None


def _check(html: str, selector: str = "#c") -> list:
    root = LexborHTMLParser(html).css_first(selector)
    found = features.blocks(root)
    assert found
    for block in found:
        link_chars, links, has_img = _reference_links(block.node)
        values = dict(zip(NAMES, block.features))
        assert values["link_density"] == min(1.0, link_chars / block.chars), block.node.html
        assert values["log_links"] == math.log1p(links), block.node.html
        assert values["has_img"] == float(has_img), block.node.html
    container_links = sum(len(a.text(deep=True, separator=" ", strip=True)) for a in root.css("a"))
    container_chars = len(root.text(deep=True, separator=" ", strip=True))
    assert dict(zip(NAMES, found[0].features))["container_link_density"] == \
        min(1.0, container_links / container_chars)
    return found


def test_nested_anchors_count_as_the_blocks_own_queries_do():
    # an <a> inside <svg> inside an <a> stays nested (foreign content): both anchors' text counts
    found = _check("<div id=c><p>Read <a href=/1>outer <svg><a>inner link</a></svg> tail</a> more "
                   "words here</p><p>Second paragraph without links at all.</p></div>")
    assert dict(zip(NAMES, found[0].features))["log_links"] == math.log1p(2)


def test_anchors_in_pre_do_not_count_but_their_images_do():
    found = _check("<div id=c><pre><code>see <a href=/x>http://x</a> <img src=i.png></code></pre>"
                   "<p>Prose with an <a href=/y>inline link</a> and more words.</p></div>")
    pre = dict(zip(NAMES, found[0].features))
    assert found[0].node.tag == "pre"
    assert pre["link_density"] == 0.0 and pre["log_links"] == 0.0 and pre["has_img"] == 1.0


def test_a_pre_holding_blocks_is_one_block_with_their_links_and_images():
    found = _check("<div id=c><pre><div>line <a href=/a>one</a></div><p><img src=x.png> two</p></pre>"
                   "<p>After the code.</p></div>")
    assert [b.node.tag for b in found] == ["pre", "p"]


def test_anchors_wrapping_blocks_count_for_the_container_only():
    cards = "".join(f"<a href=/s/{i}><div class=card><h3>Story {i}</h3><p>Teaser text {i} here.</p>"
                    f"</div></a>" for i in range(3))
    found = _check(f"<div id=c>{cards}<p>A paragraph with <a href=/z>one link</a>.</p>"
                   f"<p><img src=a.png alt=''> image caption</p><img src=outside.png></div>")
    values = [dict(zip(NAMES, b.features)) for b in found]
    assert [v["log_links"] for v in values[:6]] == [0.0] * 6  # the cards' blocks hold no anchor
    assert values[-1]["has_img"] == 1.0


def test_a_container_that_is_an_anchor():
    _check("<div><a id=c href=/big><p>First block of the link.</p><p>Second <a>x</a> block "
           "<img src=y.png></p></a></div>")


def test_empty_blocks_and_the_block_limit_leave_their_anchors_to_the_container():
    items = "".join(f"<li><a href=/{i}>item {i}</a> note</li>" for i in range(8))
    html = f"<div id=c><p><a href=/e></a></p><ul>{items}</ul></div>"
    root = LexborHTMLParser(html).css_first("#c")
    limited = features.blocks(root, limit=3)
    assert len(limited) == 3
    for block in limited:
        link_chars, links, _ = _reference_links(block.node)
        assert dict(zip(NAMES, block.features))["log_links"] == math.log1p(links)
    _check(html)


def test_sibling_repetition_counts_comments_among_the_children():
    root = LexborHTMLParser("<div id=c><ul><!-- c --><li class=x>one item here</li>"
                            "<li class=x>two item here</li><li>three item here</li></ul></div>"
                            ).css_first("#c")
    found = features.blocks(root)
    first = dict(zip(NAMES, found[0].features))
    last = dict(zip(NAMES, found[2].features))
    assert first["sibling_same"] == 2 / 4 and first["log_sibling_same"] == math.log1p(2)
    assert last["sibling_same"] == 0.0


def test_the_walk_finds_what_the_css_queries_find_in_foreign_content_and_templates():
    html = ("<div id=c><svg><section>x</section><foreignObject><div>y <a href=/f>f</a></div>"
            "</foreignObject><nav>z</nav><a>svg link</a><image href=i.png></image></svg>"
            "<math><mtext><p>q <img src=m.png></p></mtext></math><my-el><li>a</li></my-el>"
            "<template><p>t <a href=/t>t</a></p></template><!-- <p>comment</p> -->"
            "<table><tr><td><ul><li>cell <a href=/c>c</a></li></ul></td></tr></table></div>")
    root = LexborHTMLParser(html).css_first("#c")
    walk = tree.Walk(root, tree.Tree(root))
    selector = ", ".join(sorted(tree.BLOCK_TAGS))
    assert [key for key, _, _ in walk.candidates] == [n.mem_id for n in root.css(selector)
                                                      if n.mem_id != root.mem_id]
    assert [tag for _, _, tag in walk.candidates] == [n.tag for n in root.css(selector)
                                                      if n.mem_id != root.mem_id]
    assert [n.mem_id for n in walk.anchors] == [n.mem_id for n in root.css("a")]
    assert [n.mem_id for n in walk.images] == [n.mem_id for n in root.css("img")]
    _check(html)


@pytest.mark.parametrize("cls, ident", [
    (None, None), ("", None), (None, ""), ("post-body", None), (None, "sidebar"), ("entry", "comments"),
    ("x", "y"), ("ΑΣ", "Σx"), ("ΑΣ'", "'Σ"), ("A\u00adΣ", "ΣA"), ("İ", "ß"), ("nav:main", "-_:"),
    ("Post\u00a0Body\x1f", "\x85Widget"), ("content", "content"),
])
def test_read_name_flags_are_those_of_the_joined_class_and_id(cls, ident):
    attrs = "".join(f' {name}="{value}"' for name, value in (("class", cls), ("id", ident)) if value is not None)
    node = LexborHTMLParser(f"<div{attrs}>x</div>").css_first("div")
    expected = tree.flags(f"{cls or ''} {ident or ''}") if cls or ident else tree.NO_FLAGS
    assert tree.read_name(node) == (cls, ident, *expected)


def test_block_tags_are_matched_by_their_fixed_tag_ids():
    from selectolax.lexbor import LexborHTMLParser as Parser

    for name in tree.BLOCK_TAGS:
        node = Parser("").create_node(name)
        assert tree.BLOCK_IDS[node.tag_id] == name == node.tag
    assert len(tree.BLOCK_IDS) == len(tree.BLOCK_TAGS)
    assert Parser("<a></a><img>").css_first("a").tag_id == tree._A_ID
    assert Parser("<img>").css_first("img").tag_id == tree._IMG_ID


def test_repetition_among_block_siblings_is_what_reading_every_child_gives():
    """``Tree.repeats`` counts a block tag's siblings among the walk's candidates; the
    definition reads every child of the parent (``_siblings``): same counts for every candidate
    and ancestor, with inline siblings of the same class, comments, classless twins and a
    classed inline ancestor (which takes the reading path)."""
    html = ("<div id=c><div class=card><p class=t>one</p><span class=card>s</span><p class=t>two</p>"
            "<!-- c --><p>three</p><p class='t x'>four</p></div><div class=card><span class=w>"
            "<p class=t>in span</p></span><span class=w><p>twin</p></span></div>"
            "<section class=card><li class=i>a</li><li class=i>b</li><b class=i>c</b></section></div>")
    root = LexborHTMLParser(html).css_first("#c")
    shape = tree.Tree(root)
    walk = tree.Walk(root, shape)
    reference = tree.Tree(root)
    reference.up = shape.up
    checked = 0
    for key in shape.up:
        parent_key, parent = shape.up[key]
        node = next(n for n in parent.iter() if n.mem_id == key)
        cls = node.attributes.get("class")
        if not cls:
            continue
        assert shape.repeats(key, node.tag, cls) == reference._siblings(parent_key, parent)[1].get((node.tag, cls), 0)
        assert shape.children(key) == reference._siblings(parent_key, parent)[0]
        checked += 1
    assert checked >= 10 and walk.candidates
    _check(html)


def test_no_block_but_a_pre_holds_a_pre_or_an_h1():
    """``model._drop`` protects ``<pre>`` and ``<h1>`` by the block's tag alone: a block is a leaf of
    the block tags (found by tag id, as type selectors match), so only a ``<pre>`` can hold one."""
    html = ("<div id=c><div>intro <span><h1>title in a span</h1></span></div><li>item <b><pre>code"
            "</pre></b></li><pre>outer <div>inner <h1>h</h1></div></pre><svg><foreignObject><div>"
            "x <h1>svg title</h1></div></foreignObject></svg><math><mtext><p>m <pre>p</pre></p>"
            "</mtext></math><template><div>t <h1>template title</h1></div></template>"
            "<section>plain text<h2>sub</h2><p>para</p></section></div>")
    root = LexborHTMLParser(html).css_first("#c")
    found = features.blocks(root)
    assert {b.node.tag for b in found} >= {"h1", "pre", "h2", "p"}
    for block in found:  # (the query matches the node itself too: an <h1> block finds itself)
        if block.node.tag not in ("pre", "h1"):
            assert block.node.css_first("pre, h1") is None, block.node.html


def test_wide_character_memo_is_bounded_and_cleared(monkeypatch):
    """The per-character counts of short non-ASCII runs are those of the four patterns, the
    memo holds at most ``WIDE_MEMO_SIZE`` characters and ``css_hidden.clear_memo`` empties it."""
    from webshelf.core.convert import css_hidden

    monkeypatch.setattr(features, "WIDE_MEMO_SIZE", 20)
    for code in range(0x80, 0x80 + 600, 7):
        text = f"a{chr(code)}b{chr(code + 1)}, «c»."
        expected = (len(features._PUNCT.findall(text)), len(features._ENDS.findall(text)),
                    len(features._COMMAS.findall(text)), len(features._DIGITS.findall(text)))
        assert features._punct(text) == expected
        assert len(features._WIDE) <= 20
    css_hidden.clear_memo()
    assert not features._WIDE


def _reference_sizes(chains, chars_of, densities):
    """The definition: per ancestor of the first three levels, chars and weighted link chars
    summed over its blocks in document order."""
    sizes = {}
    for chain, chars, density in zip(chains, chars_of, densities):
        for anc in chain[:3]:
            entry = sizes.setdefault(anc, [0, None])
            entry[0] += chars
            entry[1] = density * chars if entry[1] is None else entry[1] + density * chars
    return sizes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 400), st.integers(0, 3),
                          st.floats(0.0, 1.0)), min_size=1, max_size=40))
def test_branch_features_sum_only_the_linked_blocks_with_the_same_floats(rows):
    """Skipping the blocks without links leaves every float sum as summing all of them in order."""
    parents = {}
    chains, chars_of, densities = [], [], []
    for parent, chars, depth, density in rows:
        chain = parents.setdefault((parent, depth), tuple(range(100 * parent, 100 * parent + depth + 1)))
        chains.append(chain)
        chars_of.append(chars)
        densities.append(density if parent % 2 else 0.0)
    total = sum(chars_of)
    sizes = _reference_sizes(chains, chars_of, densities)
    for chain, out in zip(chains, features._branch_features(chains, chars_of, densities, total)):
        levels = [sizes[a] for a in chain[:3]]
        for level, (chars, weighted) in enumerate(levels):
            assert repr(out[level]) == repr(chars / total)
            if level < 2:
                assert repr(out[3 + level]) == repr(weighted / chars)
