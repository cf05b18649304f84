"""Per-block features for the learned keep/drop classifier (``core.convert.blocks``).

A *block* is a leaf of the block structure inside the chosen container: an element of
``_BLOCK_TAGS`` holding no other such element (a paragraph, a list item, a heading, a table
row, a ``<div>`` of plain text), and every ``<pre>`` whole. Features are language-independent
on purpose — the model must work on pages and languages WCXB does not have: text and link
lengths, punctuation and digit densities (Unicode punctuation, so CJK and Cyrillic pages look
like Latin ones), tag, depth and position, repetition among siblings (teaser grids, comment
lists, product cards) and a few generic markup words in class/id (markup is written in English
on sites in every language). No word list of any natural language.

The same code computes features for training (``bench/train_blocks.py``) and at run time, so
there is no train/serve skew. Cost: a few C calls per block (text, links) and one memoised walk
per ancestor; ~1–3 ms on a typical page.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import regex
from selectolax.lexbor import LexborNode

# td/th are not blocks: a table row is the unit (dropping a cell would break a data table).
_BLOCK_TAGS = frozenset({
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "tr", "dt", "dd",
    "figcaption", "caption", "div", "section", "article", "header", "footer", "aside", "nav",
    "form", "ul", "ol", "dl", "table", "tbody", "thead", "main", "figure", "address", "details",
    "summary", "center", "fieldset",
})
_BLOCK_SELECTOR = ", ".join(sorted(_BLOCK_TAGS))
_TAG_GROUPS = (("p",), ("li", "dt", "dd"), ("h1",), ("h2", "h3"), ("h4", "h5", "h6"), ("pre",),
               ("blockquote",), ("tr",), ("figcaption", "caption"),
               ("div", "section", "article", "main", "center"))
_TAG_INDEX = {tag: i for i, group in enumerate(_TAG_GROUPS) for tag in group}
# Generic markup words (class/id tokens), not natural language: content vs. furniture.
_POSITIVE = frozenset({"content", "article", "post", "entry", "body", "text", "story", "main",
                       "prose", "markdown", "description", "message", "answer", "question",
                       "blog", "page", "paragraph", "richtext", "copy", "doc", "docs"})
_NEGATIVE = frozenset({"meta", "author", "byline", "date", "time", "tag", "tags", "category",
                       "categories", "widget", "card", "teaser", "item", "list", "related",
                       "comment", "comments", "reply", "footer", "share", "social", "caption",
                       "credit", "credits", "thumb", "thumbnail", "price", "rating", "review",
                       "reviews", "user", "avatar", "signature", "sig", "button", "btn", "links",
                       "menu", "nav", "sidebar", "promo", "ad", "ads", "badge", "label", "info",
                       "profile", "vote", "votes", "stats", "count", "toc", "breadcrumb",
                       "pagination", "more", "recommended", "newsletter", "subscribe", "title"})

NAMES = (
    "log_chars", "log_words", "link_density", "log_links", "punct_density", "sentence_ends",
    "comma_density", "digit_share", "chars_per_word", "depth", "position", "text_position",
    "share", *(f"tag_{group[0]}" for group in _TAG_GROUPS), "own_positive", "own_negative",
    "anc_positive", "anc_negative", "in_li", "in_table", "in_quote", "in_furniture", "has_img",
    "sibling_same", "log_sibling_same", "repeated_ancestor", "before_heading",
    "prev_link_density", "next_link_density", "prev_log_chars", "next_log_chars",
    "container_log_chars", "container_link_density", "container_log_blocks",
    "branch1_share", "branch2_share", "branch3_share", "branch1_link_density",
    "branch2_link_density", "mass_distance", "mass_lca_depth", "in_mass_branch",
)


@dataclass
class Block:
    node: LexborNode
    chars: int
    features: list[float]
    # mem_ids of the block's ancestors from just below the container down to its parent: the
    # branch it sits in (``model.narrow`` walks down these)
    chain: tuple[int, ...] = ()


def _tokens(value: str) -> set[str]:
    out: set[str] = set()
    for name in value.lower().replace("_", "-").replace(":", "-").split():
        out.update(part for part in name.split("-") if part)
    return out


_PUNCT = regex.compile(r"\p{P}")
_ENDS = regex.compile(r"[.!?。！？।؟…]")
_COMMAS = regex.compile(r"[,，、;；،]")
_DIGITS = regex.compile(r"\d")


def _punct(text: str) -> tuple[int, int, int, int]:
    """(punctuation, sentence ends, commas, digits) by Unicode class, so "。" counts as "."."""
    return (len(_PUNCT.findall(text)), len(_ENDS.findall(text)), len(_COMMAS.findall(text)),
            len(_DIGITS.findall(text)))


class _Ancestors:
    """Memoised facts about each ancestor between a block and the container."""

    def __init__(self, container: LexborNode):
        self.container_id = container.mem_id
        self.memo: dict[int, tuple] = {container.mem_id: _ROOT_INFO}
        self.siblings: dict[int, tuple[Counter, int]] = {}

    def info(self, node: LexborNode | None) -> tuple:
        """(depth, positive, negative, in_li, in_table, in_quote, in_furniture, in_pre,
        repeated, chain) for ``node``, counting ``node`` itself; ``chain`` is the ``mem_id``s
        from just below the container down to ``node``."""
        chain = []
        while node is not None:
            key = node.mem_id
            if key in self.memo:
                break
            chain.append((key, node))
            node = node.parent
        base = self.memo[key] if node is not None else _ROOT_INFO
        for key, item in reversed(chain):
            depth, pos, neg, li, table, quote, furniture, pre, repeated, ids = base
            attrs = item.attributes
            words = _tokens(f"{attrs.get('class') or ''} {attrs.get('id') or ''}")
            tag = item.tag
            base = (depth + 1, pos or int(bool(words & _POSITIVE)),
                    neg or int(bool(words & _NEGATIVE)), li or int(tag == "li"),
                    table or int(tag in ("table", "tr")), quote or int(tag == "blockquote"),
                    furniture or int(tag in ("header", "footer", "aside", "nav", "figure", "form")),
                    pre or tag == "pre", max(repeated, _repeats(item, self.siblings)), ids + (key,))
            self.memo[key] = base
        return base


_ROOT_INFO = (0, 0, 0, 0, 0, 0, 0, False, 0, ())


def _signature(node: LexborNode) -> tuple[str, str]:
    return node.tag or "", node.attributes.get("class") or ""


def _repeats(node: LexborNode, memo: dict | None = None, parent: LexborNode | None = None) -> int:
    """How many siblings (including ``node``) share its tag and class — cards, teasers,
    comments and posts come in runs. ``memo`` caches each parent's signature counts."""
    parent = parent if parent is not None else node.parent
    if parent is None or not node.attributes.get("class"):
        return 0
    counts = _sibling_counts(parent, memo)[0]
    return counts[_signature(node)]


def _sibling_counts(parent: LexborNode, memo: dict | None) -> tuple[Counter, int]:
    key = parent.mem_id
    if memo is not None and key in memo:
        return memo[key]
    children = [_signature(c) for c in parent.iter(include_text=False)]
    value = (Counter(children), len(children))
    if memo is not None:
        memo[key] = value
    return value


def _text(node: LexborNode) -> str:
    return node.text(deep=True, separator=" ", strip=True)


def blocks(container: LexborNode, limit: int = 3000) -> list[Block]:
    """The leaf blocks under ``container`` in document order, with their feature vectors.
    At most ``limit`` blocks (a bound for hostile pages; the rest are kept untouched)."""
    top = container.mem_id
    candidates = [(n.mem_id, n) for n in container.css(_BLOCK_SELECTOR)]
    candidates = [(key, n) for key, n in candidates if key != top]  # css() includes the node
    inner: set[int] = set()  # elements with a block below them: not leaves
    for _, node in candidates:
        parent = node.parent
        while parent is not None:
            key = parent.mem_id
            if key == top or key in inner:
                break
            inner.add(key)
            parent = parent.parent
    ancestors = _Ancestors(container)
    found: list[tuple[LexborNode, str, tuple, tuple]] = []
    for key, node in candidates:
        if len(found) >= limit:
            break
        if key in inner and node.tag != "pre":
            continue
        parent_info = ancestors.info(node.parent)
        if parent_info[7]:  # inside a <pre>: the <pre> is the block
            continue
        text = _text(node)
        if not text:
            continue
        found.append((node, text, parent_info, (parent_info[0] + 1,)))
    if not found:
        return []
    total = sum(len(text) for _, text, _, _ in found) or 1
    container_links = sum(len(_text(a)) for a in container.css("a"))
    container_chars = len(_text(container)) or 1
    heading_seen = False
    out: list[Block] = []
    before = 0
    n = len(found)
    link_densities, log_chars = [], []
    for i, (node, text, parent_info, own_info) in enumerate(found):
        chars = len(text)
        words = max(1, len(text.split()))
        anchors = node.css("a") if node.tag != "pre" else []
        link_chars = sum(len(_text(a)) for a in anchors)
        links = len(anchors)
        punct, ends, commas, digits = _punct(text)
        attrs = node.attributes
        own = _tokens(f"{attrs.get('class') or ''} {attrs.get('id') or ''}")
        tags = [0.0] * len(_TAG_GROUPS)
        index = _TAG_INDEX.get(node.tag or "")
        if index is not None:
            tags[index] = 1.0
        if node.tag in ("h1", "h2"):
            heading_seen = True
        parent = node.parent
        same = _repeats(node, ancestors.siblings, parent)
        siblings = _sibling_counts(parent, ancestors.siblings)[1] if parent is not None else 1
        density = min(1.0, link_chars / chars)
        link_densities.append(density)
        log_chars.append(math.log1p(chars))
        features = [
            math.log1p(chars), math.log1p(words), density, math.log1p(links),
            punct / chars, 100.0 * ends / chars, 100.0 * commas / chars, digits / chars,
            min(30.0, chars / words), float(min(own_info[0], 40)), i / n, before / total,
            chars / total, *tags,
            float(bool(own & _POSITIVE)), float(bool(own & _NEGATIVE)),
            float(parent_info[1]), float(parent_info[2]), float(parent_info[3]),
            float(parent_info[4]), float(parent_info[5]), float(parent_info[6]),
            float(node.css_first("img") is not None),
            same / max(1, siblings), math.log1p(same), math.log1p(parent_info[8]),
            float(not heading_seen),
            0.0, 0.0, 0.0, 0.0,  # neighbours, filled below
            math.log1p(container_chars), min(1.0, container_links / container_chars),
            math.log1p(n),
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,  # branches, filled below
        ]
        before += chars
        out.append(Block(node, chars, features, parent_info[9]))
    _branch_features(out, [info[9] for _, _, info, _ in found], total)
    k = NAMES.index("prev_link_density")
    for i, block in enumerate(out):
        block.features[k] = link_densities[i - 1] if i else -1.0
        block.features[k + 1] = link_densities[i + 1] if i + 1 < n else -1.0
        block.features[k + 2] = log_chars[i - 1] if i else 0.0
        block.features[k + 3] = log_chars[i + 1] if i + 1 < n else 0.0
    return out


def _branch_features(out: list[Block], chains: list[tuple[int, ...]], total: int) -> None:
    """Where the block sits relative to the page's text mass: the share of the container's
    block text (and the link density) of its ancestors 1, 2 and 3 levels below the container,
    and its tree distance to the longest block (the article is one branch; teasers, comments
    and menus are other branches)."""
    sizes: dict[int, list] = {}  # ancestor id -> [block chars, link density sum * chars]
    for block, chain in zip(out, chains):
        density = block.features[2]
        for anc in chain:
            entry = sizes.setdefault(anc, [0, 0.0])
            entry[0] += block.chars
            entry[1] += density * block.chars
    longest = max(range(len(out)), key=lambda i: out[i].chars)
    mass_ids = set(chains[longest])
    base = NAMES.index("branch1_share")
    for block, chain in zip(out, chains):
        f = block.features
        for level in range(3):
            if level < len(chain):
                chars, links = sizes[chain[level]]
                f[base + level] = chars / total
                if level < 2:
                    f[base + 3 + level] = links / chars if chars else 0.0
            else:
                f[base + level] = block.chars / total
                if level < 2:
                    f[base + 3 + level] = f[2]
        lca = -1
        for d in range(len(chain) - 1, -1, -1):
            if chain[d] in mass_ids:
                lca = d
                break
        f[base + 5] = float(min(40, len(chain) - 1 - lca))
        f[base + 6] = float(lca + 1)
        f[base + 7] = float(bool(chain) and chain[0] in mass_ids)
