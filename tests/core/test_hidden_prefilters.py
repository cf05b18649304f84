"""The speed pass on hidden-content removal (issue 14) changes no verdict: each cheaper step gives
what the step it replaced gave, on the edge cases where a pre-filter could go wrong (comments,
escapes, ``@media``, ``!important``, upper case, non-ASCII, whitespace that is not HTML's).

- ``html_hidden.may_hide``: substring markers first — a True without a marker changes nothing;
- page keys: ``_class_names`` (``str.split`` where it splits at HTML whitespace only), ``_values``;
- ``_page_keys_needed``: the classes and ids of the compounds left of the rightmost one;
- ``css_hidden._positions`` with ``str.find`` for the literals: the same positions as ``finditer``;
- the comments walk and the removal of the outermost doomed nodes only, and the frame rule's
  first test on the outermost doomed nodes: the same tree as before.
"""

from __future__ import annotations

import re

import pytest
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert import css_hidden, hidden_frame, html_hidden
from webshelf.core.convert.css_hidden import sheet_rules
from webshelf.core.convert.html_hidden import drop_hidden, drop_hidden_in, may_hide

NO_MARKER = ["<p>plain</p>", "<SCRIPTS>no</SCRIPTS><p>x</p>", "<p>a &lt;script&gt; in text</p>",
             "<p data-x='scripted'>x</p>", "<stylesheet>x</stylesheet>"]


@pytest.mark.parametrize("html", NO_MARKER + ["<p>x</p><script>1</script>", "<p>x</p><!-- c -->",
                                              "<P STYLE='display:none'>x</P>", "<DIV HIDDEN>x</DIV>",
                                              "<p>x</p><style>p{}</style>"])
def test_may_hide_is_never_false_where_the_regex_is_true_and_true_changes_nothing(html):
    regex = bool(html_hidden._MAYBE_HIDDEN.search(html))
    assert may_hide(html) or not regex
    tree = LexborHTMLParser(html)
    before = tree.html
    removed = drop_hidden_in(tree)  # (no text given: the walk runs whatever may_hide says)
    if not regex:
        assert not removed and tree.html == before


@pytest.mark.parametrize("classes", ["a b", " A\tB\nc\r\fd ", "x\u00a0y z", "x\x0by z", "x\x1cy", "x\x1fy\x1d z", "İx y",
                                     "Straße STRASSE", "a  b   c", ""])
def test_class_names_split_at_html_whitespace_only(classes):
    assert html_hidden._class_names(classes.lower()) - {""} == \
        set(html_hidden._CLASS_SPLIT.split(classes.lower())) - {""}


def test_attribute_values_are_those_get_gives():
    tree = LexborHTMLParser('<p class="a">x</p><p class>y</p><svg><a xlink:class="q" class="r"/></svg>'
                            '<p CLASS="Up">z</p>')
    nodes = tree.css("[class]")
    assert html_hidden._values(nodes, "class") == [n.attrs.get("class") for n in nodes]


LEFT_COMPOUNDS = [
    # (selector, page, whether it hides the <b>)
    (".menu b", '<div class="menu"><b>x</b></div>', True),
    (".menu b", '<div class="other"><b>x</b></div>', False),
    (".MENU b", '<div class="menu"><b>x</b></div>', True),
    ("#top > b", '<div id="top"><b>x</b></div>', True),
    ("#top + b", '<i id="top"></i><b>x</b>', True),
    (".a ~ b", '<i class="a"></i><b>x</b>', True),
    (".a:first-child b", '<div class="a"><b>x</b></div>', True),
    ("div.a.c b", '<div class="a c"><b>x</b></div>', True),
    ("div.a.c b", '<div class="a"><b>x</b></div>', False),
    ('.a[data-x="b c"] b', '<div class="a" data-x="b c"><b>x</b></div>', True),
    (".a[data-x~=q] b", '<div class="a" data-x="q"><b>x</b></div>', True),
    (":not(.absent) b", "<div><b>x</b></div>", True),
    (":is(.a, .q) b", '<div class="a"><b>x</b></div>', True),
    (".\\61  b", '<div class="a"><b>x</b></div>', True),  # (the escape takes one space)
    (".x\u00a0y b", '<div class="x\u00a0y"><b>x</b></div>', False),  # (lexbor matches neither of these two)
    (".é b", '<div class="É"><b>x</b></div>', False),
    ("* .a b", '<div class="a"><b>x</b></div>', True),
    (".a > > b", '<div class="a"><b>x</b></div>', False),
]


# (selector, page): rightmost-key cases of the page filter (one compound, or its left parts absent)
RIGHTMOST = [
    (".gone", '<p class="gone">x</p>'), (".absent", '<p class="gone">x</p>'), ("#id1", '<p id="id1">x</p>'),
    ("#ID1", '<p id="id1">x</p>'), ("div .in", '<div><p class="in">x</p></div>'), (".a.b", '<p class="a">x</p>'),
    (".a.b", '<p class="a b">x</p>'), ("p:not(.absent)", "<p>x</p>"), (".in:not(.absent > .q)", '<p class="in">x</p>'),
    ("p[data-x]", '<p data-x="1">x</p>'), (".q[data-x]", '<p data-x="1">x</p>'), ('p[title=".absent"]', '<p title=".absent">x</p>'),
    ("p:nth-child(1)", "<div><p>x</p></div>"), (".c\\6c ass", '<p class="class">x</p>'), (".x\u00a0y", '<p class="x\u00a0y">x</p>'),
    (".x", '<p class="x\u00a0y">x</p>'), (".UP", '<p class="up">x</p>'), (".UP", '<!doctype html><p class="up">x</p>'),
]


@pytest.mark.parametrize(("selector", "page", "hides"), LEFT_COMPOUNDS + [(s, p, None) for s, p in RIGHTMOST])
def test_page_key_filter_never_changes_what_is_hidden(monkeypatch, selector, page, hides):
    """The page filter (``_PageKeys.may_match``: a selector whose keys the page lacks is never queried)
    gives the verdicts of querying every selector; ``hides``, when given, is the verdict itself."""
    html = f"<style>{selector} {{display:none}}</style>{page}<p>visible</p>"
    css_hidden.clear_memo()
    filtered = drop_hidden(html)
    monkeypatch.setattr(html_hidden._PageKeys, "may_match", lambda self, s: True)
    css_hidden.clear_memo()
    assert drop_hidden(html) == filtered
    if hides is not None:
        assert ("<b>x</b>" not in filtered) == hides


def test_page_sets_are_built_only_when_a_rule_needs_them_and_selector_keys_are_forgotten_cold():
    """The class and id sets are built on first need (a rule naming neither never queries the tree
    for them); the per-process memo of a selector's keys is cleared by ``css_hidden.clear_memo``,
    and a selector's keys are the same whether memoised or derived again."""
    tree = LexborHTMLParser('<p class="a" id="b">x</p><template>t</template>')
    keys = html_hidden._PageKeys(tree)
    assert keys.may_match("template") and keys.may_match("[hidden] > p")
    assert "classes" not in vars(keys) and "ids" not in vars(keys)
    assert keys.may_match(".a") and not keys.may_match(".a #c") and keys.may_match("#B")
    assert vars(keys)["classes"] == {"a"} and vars(keys)["ids"] == {"b"}
    for selector in (".menu a", "#x > .Y:first-child", ".a:not(.b)", "p[class~=z] .q"):
        memoised = html_hidden._selector_keys(selector)
        css_hidden.clear_memo()
        assert html_hidden._selector_keys.cache_info().currsize == 0
        own = html_hidden._required_keys(selector)
        assert memoised == (own, html_hidden._page_keys_needed(selector, own))



def test_only_hiding_rules_are_queried_and_the_verdicts_are_those_of_querying_first(monkeypatch):
    """``_matching`` judges a rule's declarations before its query: a rule that hides nothing
    (a reset's ``font-size:100%``) never reaches lexbor, and the hidden elements are those of
    querying every rule first (the order before)."""
    html = ("<style>p, b, i {font-size:100%} .x {display:none} .y {opacity:0.5} i {opacity:0}</style>"
            '<p class="x">a</p><b class="y">b</b><i>c</i><p>visible</p>')
    tree = LexborHTMLParser(html)
    keys = html_hidden._PageKeys(tree)
    rules = css_hidden.page_sheets([node.text() for node in tree.css("style")]).hiding
    queried = []
    monkeypatch.setattr(html_hidden._PageKeys, "_match", lambda self, s: queried.append(s) or tree.css(s))
    found = html_hidden._matching(tree, rules, keys)
    assert [rule.selector for rule, _ in found] == [".x", "i"] and queried == [".x", "i"]
    every = [(rule, tree.css(rule.selector)) for rule in rules]
    assert [(r.selector, [n.mem_id for n in ns]) for r, ns in every if ns and r.declarations.hides()] == \
        [(r.selector, [n.mem_id for n in ns]) for r, ns in found]


SHEETS = [
    ".a{display:none}.b{DISPLAY:NONE}", ".a{display:block;display:none}.b{display:flex}",
    "@media screen{.a{opacity:0}}@media print{.b{visibility:hidden}}@media (min-width:9px){.c{display:block}}",
    ".a{display:none!important}.b{display:block !important}", ".a{disp\\lay:none}.b{\\64isplay:none}",
    ".a{/* display:none */color:red}.b{display:/**/none}", "/* .a{display:none} */.b{opacity:.5}",
    ".a{color:red;background-color:transparent;border-color:rgba(0,0,0,0)}.b{color:#fff0}",
    ".a{overflow:hidden;width:0}.b{overflow-x:hidden;height:0}.c{OVERFLOW:CLIP;max-height:0}",
    ".a{left:-9999px}.b{margin-left:-10px}.c{top : -1e4px}.d{text-indent:-70em}",
    ".a{transform:scale(0)}.b{transform:translateX(0) scaleY(0)}.c{clip:rect(0 0 0 0)}.d{clip-path:inset(50%)}",
    ".a{font-size:0}.b{font-size:.5px}.c{font-size:5%}.d{font-size:0.875rem}",
    ".İ{display:none}.a{display:none}", ".a{display:displaynone;display:none}.b{opacity:opacity:0}",
    "@supports (display:grid){.a{display:none}}.b{display:none}", ".a{b{display:none}}.c{visibility:hidden}",
    ".a{display:none", "}.a{display:none}{", ".a\\{display:none}",
]


@pytest.mark.parametrize("css", SHEETS + [s.upper() for s in SHEETS])
def test_literal_positions_equal_the_regex_scan(css):
    low = css_hidden._CSS_COMMENT.sub("", css).lower()
    for key in ("hides", "shows"):
        patterns = css_hidden._SCAN_LOW[key]
        by_regex = sorted(m.start() for lit, rx in patterns if lit for m in rx.finditer(low))
        by_find = sorted(css_hidden._positions(tuple(p for p in patterns if p[0]), low, {}))
        assert by_find == by_regex
        assert css_hidden._positions(patterns, low, {}) == css_hidden._positions(patterns, low)


@pytest.mark.parametrize("css", SHEETS)
def test_sheet_rules_with_the_literal_scan_are_those_of_the_regex_scan(monkeypatch, css):
    def key(rules):
        return [[(r.selector, r.body, r.order) for r in side] for side in rules]

    fast = key(sheet_rules([css]))
    monkeypatch.setattr(css_hidden, "_BY_FIND", frozenset())
    assert key(sheet_rules([css])) == fast


# Sheets scanned as one text (``_sheet_positions``): matches that would cross a boundary (a sheet
# ending in ``display:`` before one starting ``none``), look-behinds and the negative value's
# read-back at a sheet's start, a sheet whose lower-casing changes its length, empty sheets.
BOUNDARIES = [
    ["p{display:", "none}"], [".a{opacity:", "0}"], [".a{clip", ":x}"], ["a{x:1}color", ":transparent}"],
    ["a{b", "color:rgb(0 0 0/0)}"], [".a{x", "left:-9999px}"], ["left", ":-9999px}"], [".a{left:", "-9999px}"],
    ["", ".a{display:none}", ""], [".a{display:none}", ".İ{display:none}", ".b{opacity:0}"],
    [".a{overflow:hidden;width:0}", ".b{display:block}\\"], ["}", "{", ".a{visibility:hidden"],
]


@pytest.mark.parametrize("texts", BOUNDARIES + [SHEETS, [s.upper() for s in SHEETS]])
def test_sheets_scanned_as_one_text_give_each_sheets_own_positions(texts):
    texts = [css_hidden._CSS_COMMENT.sub("", t) for t in texts]
    assert css_hidden._sheet_positions(texts) == [css_hidden._one_sheet_positions(t) for t in texts]


def test_sheet_rules_of_several_sheets_are_each_sheets_rules_in_order():
    def key(rules):
        return [[(r.selector, r.body) for r in side] for side in rules]

    for texts in BOUNDARIES + [SHEETS]:
        alone = [sheet_rules([t]) for t in texts]
        assert key(sheet_rules(texts)) == [sum((key(r)[side] for r in alone), []) for side in (0, 1)]


def test_literal_matches_respect_non_overlap_and_look_behind():
    rx = re.compile(css_hidden._after_break("color") + r"\s*:[^;{}]*(?:transparent|rgb)")
    text = "a{background-color:transparent;color:rgb(0 0 0/0);xcolor:rgb(1)} b{color:transparent color:rgb}"
    out: list[int] = []
    css_hidden._literal_matches(rx, "color", text, {}, out)
    assert out == [m.start() for m in rx.finditer(text)]
    display = re.compile(r"display\s*:[^;{}]*none")
    text = "{display: x display:none}{display:none;display:none}"
    out = []
    css_hidden._literal_matches(display, "display", text, {}, out)
    assert out == [m.start() for m in display.finditer(text)]


NESTED = [
    '<div hidden><p style="display:none">a<span hidden>b</span></p><script>s</script></div><p>seen</p>',
    '<div style="opacity:0"><main>' + "words " * 200 + '<i hidden>in</i></main></div><p>x</p>',
    '<noscript><div hidden>n</div></noscript><p>visible</p><!-- c --><template><p hidden>t</p></template>',
    '<svg><script><p hidden>s</p></script></svg><p>v</p>',
    '<div hidden>' + "<div hidden>" * 30 + "deep" + "</div>" * 31 + "<p>kept</p><!--x-->",
]


def _before(tree, html):  # noqa: ANN001, ANN202 — the removal as it was: every doomed node, reverse document order
    html_hidden.unwrap_noscript_content(tree)
    doomed = {n.mem_id: n for n in html_hidden._sheet_hidden(tree)}
    for node in tree.css(html_hidden.ALWAYS_DROPPED):
        if html_hidden._hides(node):
            doomed[node.mem_id] = node
    for node in tree.css("[style]"):
        if html_hidden.invisible_style(node.attributes.get("style") or ""):
            doomed[node.mem_id] = node
    for node in html_hidden._frame(tree):
        doomed.pop(node.mem_id, None)
    for key in hidden_frame.spared(tree, doomed):
        del doomed[key]
    comments, order = [], {}
    for i, n in enumerate(tree.root.traverse()):
        if n.is_comment_node:
            comments.append(n)
        elif n.mem_id in doomed:
            order[n.mem_id] = i
    for node in comments:
        node.decompose()
    for key in sorted(doomed, key=lambda k: order.get(k, -1), reverse=True):
        doomed[key].decompose()
    tree.merge_text_nodes()


@pytest.mark.parametrize("html", NESTED)
def test_removing_the_outermost_doomed_nodes_gives_the_same_tree(html):
    old, new = LexborHTMLParser(html), LexborHTMLParser(html)
    _before(old, html)
    drop_hidden_in(new, html)
    assert new.html == old.html


# ``css_hidden._simple_declarations``: the tokens built without tinycss2 are tinycss2's, and every
# shape it does not decide exactly (comments, escapes, strings, functions other than colours, commas, a bare ``!``,
# ``--custom`` names, non-ASCII) goes to tinycss2.
def _tinycss2_values(text):  # noqa: ANN001, ANN202
    import tinycss2

    values = {}
    for item in tinycss2.parse_blocks_contents(text, skip_whitespace=True, skip_comments=True):
        if item.type == "declaration":
            values[item.lower_name] = (css_hidden._tokens(item.value), bool(item.important))
    return values


def _token_key(values):  # noqa: ANN001, ANN202
    """Every field tinycss2 gives a token, function arguments compared recursively."""
    fields = ("type", "value", "int_value", "representation", "unit", "lower_unit", "lower_value", "is_identifier",
              "name", "lower_name")

    def key(tokens):  # noqa: ANN001, ANN202
        return [tuple(getattr(t, f, None) for f in fields) + ((key(t.arguments),) if t.type == "function" else ())
                for t in tokens]

    return {name: (key(tokens), important) for name, (tokens, important) in values.items()}


VALUES = ["none", "NONE", "0", "-0", "+0", ".5", "0.5px", "1e3", "1e3px", "1E-2em", "1ex", "5%", "-9999px", "10PX",
          "#fff", "#FFF0", "#-a", "#--a", "#-1", "#1a", "a_b", "_a", "1px-2px", "0 auto", "auto !important", "-x-",
          "none!important", "none ! IMPORTANT", "0 0 0 0"]
SHAPES = ["display:{}", " DISPLAY : {} ;;", "-webkit-box:{};opacity:0", "left:{}\t\n", "a:b;display:{};display:x"]
FALLBACK = ["display:n\\one", "display:/**/none", "display:none/* c */", "color:rgba(0,0,var(--a),0)", "font-family:'a b'",
            "display:none !", "display:none!importan", "a:5%x", "a:-", "a:--x", "--v:0", "a:5-x", "a:1.", "a:#",
            "a:b:c", "a:b,c", "display:nöne", "1a:b", "a", "a:b{c}", "@media x", "a:<!--", "a:+x"]
# Colour functions take the same path: a ``FunctionBlock`` with tinycss2's own arguments (whitespace
# runs as it normalises them, ``,`` and ``/`` literals); nested functions, ``url(``, other functions
# and a function glued to its neighbour go to tinycss2.
COLOURS = ["rgb(0,0,0)", "rgba(0, 0, 0, 0)", "rgba( 0 ,0 , 0 , 0 )", "rgb(0 0 0 / 0)", "rgb(0 0 0/0%)",
           "RGB(0,0,0)", "RgBa(255,255,255,.5)", "rgba(100%,0%,0%,0.0)", "hsl(120deg 50% 50%)",
           "hsla(120,50%,50%,0)", "HSL(0 0% 0% / 0)", "rgb()", "rgb(0\r\n0\f0\r0)", "rgb(0\t\t0 \n 0)",
           "rgb(none 0 0)", "rgb(#fff)", "rgb(+1e2 -.5 1E-2)", "1px solid rgba(0,0,0,.1)",
           "rgb(0,0,0) rgba(1,1,1,0)", "rgba(0,0,0,0)!important", "rgb(0,,0)", "rgb(/)", "rgb(0 0 0 / 0) auto"]
COLOUR_SHAPES = ["color:{}", " COLOR : {} ;;", "border:{};opacity:0", "background-color:{}\t\n"]
COLOUR_FALLBACK = ["rgb(var(--x))", "rgba(0,0,0,var(--a))", "rgb(calc(1) 0 0)", "url(a)", "calc(1px)",
                   "rgb (0,0,0)", "rgb(0 0 0)red", "1pxrgb(0,0,0)", "rgb(0,0,0", "rgb(0;0)", "0)", "rgb(0 /* c */ 0)",
                   "rgb(0 0 0 !important)", "rgb(1-2)", "rgb(a:b)", "xrgb(0)", "rgbx(0)", "rgb(0) , rgb(1)",
                   "12px/1.5 a", "rgb(0 ! 0)", "rgb(-->)", "rgb(\'a\')"]
SIMPLE = [shape.format(value) for value in VALUES for shape in SHAPES] + \
    [shape.format(value) for value in COLOURS for shape in COLOUR_SHAPES]


@pytest.mark.parametrize("text", SIMPLE)
def test_simple_declarations_are_tinycss2s(text):
    simple = css_hidden._simple_declarations(text)
    assert simple is not None
    assert _token_key(simple) == _token_key(_tinycss2_values(text))
    assert _token_key(css_hidden._declaration_values(text)) == _token_key(_tinycss2_values(text))


@pytest.mark.parametrize("text", FALLBACK + [f"color:{value}" for value in COLOUR_FALLBACK])
def test_other_declaration_shapes_go_to_tinycss2(text):
    assert css_hidden._simple_declarations(text) is None
    assert _token_key(css_hidden._declaration_values(text)) == _token_key(_tinycss2_values(text))


@pytest.mark.parametrize("style", ["color:rgba(0,0,0,0)", "color:rgb(0 0 0 / 0)", "color:RGBA(0, 0, 0, 0%)",
                                   "color:hsla(0,0%,0%,0)", "color:rgba(0,0,0,.5)", "color:rgb(0,0,0)"])
def test_colour_verdicts_are_tinycss2s(style):
    values = {name: (css_hidden._tokens(tokens), important) for name, (tokens, important) in
              _tinycss2_values(style).items()}
    assert css_hidden._simple_declarations(style) is not None
    assert css_hidden._parse_uncached(style).hides() == css_hidden.Declarations(values).hides()


@pytest.mark.parametrize("style", ["DISPLAY:NONE", "Display : None", "color:#FFF0", "color:#ABCDEF00", "Opacity:0",
                                   "left:-9999PX", "CLIP:rect(0 0 0 0)", "x:\\\\64", "a/*c*/b", "margin:0 auto",
                                   "color:red", "", "FONT-SIZE:0", "color:#abcdef01"])
def test_inline_style_quick_test_on_lower_cased_ascii_is_the_case_blind_regex(style):
    assert style.isascii()
    assert bool(css_hidden._MAY_HIDE_QUICK_LOW.search(style.lower())) == bool(css_hidden._MAY_HIDE_QUICK.search(style))


@pytest.mark.parametrize("html", ["<p>unhidden</p>", "<p data-xstyle=1>x</p>", "<p>HIDDEN</p>", "<p STYLE = 'x'>x</p>"])
def test_may_hide_substring_markers_only_add_walks_that_find_nothing(html):
    tree = LexborHTMLParser(html)
    before = tree.html
    regex = bool(html_hidden._MAYBE_HIDDEN.search(html))
    assert may_hide(html) or not regex
    if not regex:
        assert not drop_hidden_in(tree, html) and tree.html == before


def test_showing_rule_index_is_kept_with_the_sites_sheets_and_changes_no_verdict():
    sheet = ("<style>.x{display:none}.y{display:none}.show .x{display:block}#k.y{display:block}"
             "div.y{opacity:1}</style>")
    pages = [sheet + '<div class="show"><p class="x">a</p></div><p class="x">b</p><div id="k" class="y">c</div>',
             sheet + '<p class="x">d</p><div class="show"><span class="x">e</span></div><p class="y">f</p>']
    css_hidden.clear_memo()
    cold = []
    for page in pages:
        css_hidden.clear_memo()
        cold.append(drop_hidden(page))
    css_hidden.clear_memo()
    warm = [drop_hidden(page) for page in pages]
    assert warm == cold
    showers = css_hidden.page_sheets([sheet[len("<style>"):-len("</style>")]]).showers
    assert "display" in showers.node_index  # (filled by the first page, reused by the second)
    assert ">a</p>" in cold[0] and ">b</p>" not in cold[0] and ">c</div>" in cold[0]
