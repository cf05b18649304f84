"""Link density: the signal that separates an article from the page chrome around it.

Menus, "more stories" teasers, tag clouds and related-post rails are mostly link text; prose is
mostly not. Two uses, both after ``core.convert.html_main_content`` has picked a container:

- ``narrow``: a ``<main>`` often holds the ``<article>`` *and* its teaser rails; when one inner
  semantic container holds nearly all of the container's non-link text, it is the article.
- ``drop_link_blocks``: inside the chosen container, remove blocks that are mostly links
  (teaser lists, "read next", share bars without class names), outermost first — unless the
  container itself is mostly links (a listing or a collection page, where the links *are* the
  content).

All thresholds live in ``Tuning`` and are chosen by cross-validation (bench/extract_quality.py).

Cost (issue 14's speed goal): every length here is a C text walk over a subtree, so the work is
in how many walks run. ``Lengths`` remembers the lengths of nodes while the tree is not changed, so the container's length and link text measured by
``core.convert.html_main_content`` and ``narrow`` are not measured again by ``drop_link_blocks``,
and an anchor inside nested candidate blocks is measured once — also across removals, which forget
only the removed block's ancestors (``Lengths.remove``). One Python walk measuring every element
bottom-up is exact too, but slower than the C walks it replaces (docs/benchmarks.md, s7-lengths).
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

from webshelf.core.convert import native

# Blocks that may be dropped whole; paragraphs, headings, list items, code and cells never are
# (a sentence full of links is still a sentence).
_BLOCKS = frozenset({"div", "section", "ul", "ol", "dl", "table", "aside", "header", "footer",
                     "nav", "form", "menu"})
_ARTICLE = "article, [itemprop=articleBody], [role=main], main"


def text_len(node: LexborNode) -> int:
    return len(node.text(deep=True, separator=" ", strip=True))


if native.text_len is not None:  # the same number, without building the text (core/convert/native)
    text_len = native.text_len  # noqa: F811


def child_lengths(node: LexborNode, length: int, measure=text_len) -> list[tuple[LexborNode, int]]:
    """``(child, text_len(child))`` for the non-text children of ``node`` (as
    ``node.iter(include_text=False)`` lists them), given ``length = text_len(node)``.

    Why: a wrapper with one child (``<div><div>…</div></div>``, nested a dozen deep) holds the
    child's text plus its own text nodes, so the child's length is the wrapper's minus those —
    no second C walk of the same subtree. Exact: ``text_len`` is the stripped lengths of the text
    nodes under the node plus one separator fewer than their number, so the lone child's is
    ``length`` minus (stripped length + 1) per own text node (0 when that is negative: the child
    has no text node). ``measure``: how the other children are measured (a ``Lengths`` memo)."""
    children = list(node.iter(include_text=False))
    if len(children) != 1:
        return [(child, measure(child)) for child in children]
    own = 0
    for child in node.iter(include_text=True):
        if child.is_text_node:
            data = child.text_content
            if data is not None:  # (a text node without data is no part of the walk)
                own += len(data.strip()) + 1
    return [(children[0], max(0, length - own))]


def link_len(node: LexborNode, lengths: Lengths | None = None) -> int:
    measure = lengths.text if lengths is not None else text_len
    return sum(measure(a) for a in node.css("a"))


if native.link_len is not None:
    def link_len(node: LexborNode, lengths: Lengths | None = None) -> int:  # noqa: F811
        """The same sum, each anchor measured in C as the walk meets it (``lengths`` is no help)."""
        return native.link_len(node)


def plain_len(node: LexborNode, lengths: Lengths | None = None) -> int:
    """Characters of text that are not inside a link."""
    if lengths is None:
        return max(0, text_len(node) - link_len(node))
    return max(0, lengths.text(node) - lengths.links(node))


class Lengths:
    """``text_len`` and ``link_len`` of nodes, remembered by lexbor node identity (``mem_id``:
    selectolax hands out a new wrapper per lookup) for a stretch of work that does not change
    the tree; remove nodes through ``remove()`` (or ``clear()`` after a removal made elsewhere),
    since a removal changes every ancestor's length."""

    __slots__ = ("_text", "_links")

    def __init__(self) -> None:
        self._text: dict[int, int] = {}
        self._links: dict[int, int] = {}

    def text(self, node: LexborNode) -> int:
        key = node.mem_id
        length = self._text.get(key)
        if length is None:
            length = self._text[key] = text_len(node)
        return length

    def links(self, node: LexborNode) -> int:
        key = node.mem_id
        length = self._links.get(key)
        if length is None:
            length = self._links[key] = link_len(node, self)
        return length

    def note(self, node: LexborNode, length: int) -> None:
        """Remember ``text_len(node)`` found another way (``child_lengths``)."""
        self._text[node.mem_id] = length

    def clear(self) -> None:
        self._text.clear()
        self._links.clear()

    def remove(self, node: LexborNode) -> None:
        """``node.remove()``, forgetting only what the removal changes: the lengths of
        ``node``'s ancestors. Any other node's text is unchanged (none of its text nodes went),
        and so is its link text: an anchor whose text changed is itself an ancestor of ``node``,
        so every node holding it is one too. ``node``'s descendants are detached by the removal
        (selectolax unlinks the whole subtree) and are not asked about again."""
        forget_text, forget_links = self._text.pop, self._links.pop
        parent = node.parent
        while parent is not None:
            key = parent.mem_id
            forget_text(key, None)
            forget_links(key, None)
            parent = parent.parent
        node.remove()
        forget_text(node.mem_id, None)
        forget_links(node.mem_id, None)


def unique(nodes: list[LexborNode]) -> list[LexborNode]:
    """``nodes`` in their order, each node once (by its Lexbor address). Lexbor lists a node once
    per selector of a list it matches: ``<main role="main">`` comes twice from
    ``"[role=main], main"``."""
    seen: set[int] = set()
    return [n for n in nodes if not (n.mem_id in seen or seen.add(n.mem_id))]


def narrow(node: LexborNode, share: float, lengths: Lengths | None = None) -> LexborNode:
    """The single inner article-like element that holds ≥ ``share`` of ``node``'s non-link
    text, else ``node``. Several similar articles (a thread, a listing) keep ``node``.
    ``lengths``: a memo shared with the caller (read-only here)."""
    if share >= 1.0:
        return node
    # each once: listed twice, an article would be its own rival and never chosen
    inner = [n for n in unique(node.css(_ARTICLE)) if n.mem_id != node.mem_id]
    if not inner:
        return node
    lengths = lengths if lengths is not None else Lengths()
    total = plain_len(node, lengths)
    if not total:
        return node
    sized = sorted(((plain_len(n, lengths), n) for n in inner), key=lambda p: -p[0])
    best_len, best = sized[0]
    rivals = [n for length, n in sized[1:] if length > 0.1 * best_len and not _inside(n, best)]
    if rivals or best_len < share * total:
        return node
    return best


def _inside(node: LexborNode, outer: LexborNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.mem_id == outer.mem_id:
            return True
        parent = parent.parent
    return False


def drop_link_blocks(node: LexborNode, density: float, min_chars: int, page_max: float,
                     lengths: Lengths | None = None) -> int:
    """Remove link-dense blocks under ``node`` (outermost first); returns how many.

    A block goes when it has ≥ ``min_chars`` of text, links make up ≥ ``density`` of it, it
    holds no ``h1`` and less than half of ``node``'s text. Nothing goes when ``node`` itself is
    ≥ ``page_max`` links (a listing: the links are the content). ``lengths``: a memo of
    ``node``'s lengths from the caller's read-only work; it is cleared at every removal."""
    if density >= 1.0:
        return 0
    lengths = lengths if lengths is not None else Lengths()
    total = lengths.text(node)
    if not total or lengths.links(node) >= page_max * total:
        return 0
    # (node, its text_len): a lone child's length is its parent's minus the parent's own text
    # (``child_lengths``) — wrappers nest a dozen deep, and a C walk of each level's subtree
    # was a third of the characters this loop measured on WCXB dev pages
    removed, stack, visits = 0, [(node, total)], 0
    while stack and visits < 5000:  # bounded: a pathological page costs at most this much
        parent, parent_length = stack.pop()
        # (exact for a lone child: nothing under ``parent`` was removed since it was measured)
        for child, length in child_lengths(parent, parent_length):
            visits += 1
            if length < min_chars:
                continue
            if (child.tag in _BLOCKS and length < 0.5 * total
                    and lengths.links(child) >= density * length and child.css_first("h1") is None):
                lengths.remove(child)  # forgets its ancestors' lengths, which changed
                removed += 1
            else:
                stack.append((child, length))
    return removed
