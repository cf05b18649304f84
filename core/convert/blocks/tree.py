"""The container's tree, walked once for ``features.blocks``: which elements are blocks, their
parents and ancestors, their siblings, and which block holds each anchor and image.

Lexbor answers every question a block asks of the DOM (its links, its images, its parent's
children, its ancestors' class and id) with a C call that builds Python objects, and a CSS query
costs ~5 µs whatever it matches. So the subtree is traversed once (``Walk``: the block-tag
elements, anchors and images in document order — what ``css(...)`` of each returns, matched by
tag id as Lexbor's type selectors are), each parent is fetched once by the walk up from the
leaves (``Tree.up``), which also reads every candidate's class and id once (``Tree.names``) and
counts each parent's classed block-tag children by (tag, class) (``Tree.groups``: a block's
siblings of its own tag are all candidates, so their repetition is counted among them without
reading the parent's other children), facts about ancestors are memoised top-down
(``Tree.info``), and an anchor or image is given to its block by a memoised walk up
(``owners``) instead of a query per block.
Blocks never nest (a leaf holds no block element; what is inside a ``<pre>`` belongs to the
``<pre>``), so this finds exactly what per-block queries found.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from webshelf.core.convert import css_hidden

# td/th are not blocks: a table row is the unit (dropping a cell would break a data table).
BLOCK_TAGS = frozenset({
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "tr", "dt", "dd",
    "figcaption", "caption", "div", "section", "article", "header", "footer", "aside", "nav",
    "form", "ul", "ol", "dl", "table", "tbody", "thead", "main", "figure", "address", "details",
    "summary", "center", "fieldset",
})
# Generic markup words (class/id tokens), not natural language: content vs. furniture.
POSITIVE = frozenset({"content", "article", "post", "entry", "body", "text", "story", "main",
                       "prose", "markdown", "description", "message", "answer", "question",
                       "blog", "page", "paragraph", "richtext", "copy", "doc", "docs"})
NEGATIVE = frozenset({"meta", "author", "byline", "date", "time", "tag", "tags", "category",
                       "categories", "widget", "card", "teaser", "item", "list", "related",
                       "comment", "comments", "reply", "footer", "share", "social", "caption",
                       "credit", "credits", "thumb", "thumbnail", "price", "rating", "review",
                       "reviews", "user", "avatar", "signature", "sig", "button", "btn", "links",
                       "menu", "nav", "sidebar", "promo", "ad", "ads", "badge", "label", "info",
                       "profile", "vote", "votes", "stats", "count", "toc", "breadcrumb",
                       "pagination", "more", "recommended", "newsletter", "subscribe", "title"})


def tokens(value: str) -> set[str]:
    """The words of a class/id string: split at whitespace, "-", "_" and ":", lower case."""
    return set(value.lower().replace("_", " ").replace(":", " ").replace("-", " ").split())


FLAGS_MEMO_SIZE = 8192  # distinct class/id strings remembered (a site's pages share theirs)
_FLAGS: dict[str, tuple[bool, bool]] = {}  # class/id string -> ``flags`` (the bounded memo)


def flags(value: str) -> tuple[bool, bool]:
    """(any positive word, any negative word) in a class/id string: pages repeat their class
    lists, so each distinct string is split once (a bounded memo, shared by pages of one site;
    a plain dict, which ``read_name`` reads inline instead of calling a cache per element)."""
    found = _FLAGS.get(value)
    if found is None:
        words = tokens(value)
        found = (not POSITIVE.isdisjoint(words), not NEGATIVE.isdisjoint(words))
        if len(_FLAGS) >= FLAGS_MEMO_SIZE:
            _FLAGS.clear()
        _FLAGS[value] = found
    return found


css_hidden.on_clear(_FLAGS.clear)  # cold runs forget it with the other memos
_NO_NAME = (None, None, False, False)  # ``read_name`` of an element without attributes


def read_name(node: LexborNode) -> tuple[str | None, str | None, bool, bool]:
    """(class, id, positive, negative) of ``node``, its attributes read once. The flags are
    those of ``"{class} {id}"`` (what the features always read), taken as the flags of the class
    string or of the id string: the words of the joined string are the words of each part (the
    space splits them, and lower-casing does not look across it), and the class strings, which
    a page repeats, then hit ``flags``' memo whatever the id (read inline: nearly all hit)."""
    attrs = node.attributes
    if not attrs:
        return _NO_NAME
    cls, ident = attrs.get("class"), attrs.get("id")
    if cls:
        positive, negative = _FLAGS.get(cls) or flags(cls)
        if ident:
            more = _FLAGS.get(ident) or flags(ident)
            return cls, ident, positive or more[0], negative or more[1]
        return cls, ident, positive, negative
    if ident:
        positive, negative = _FLAGS.get(ident) or flags(ident)
        return cls, ident, positive, negative
    return cls, ident, False, False


def tag_ids(names: frozenset[str]) -> dict[int, str]:
    """Lexbor's tag id of each of ``names``: HTML's tags have fixed ids (the same in every
    document, checked here on two parsers), so the walk can test a node's id against a table
    instead of building its tag name; an element matches by id in any namespace, as Lexbor's
    type selectors do."""
    first, second = LexborHTMLParser(""), LexborHTMLParser("")
    ids = {first.create_node(name).tag_id: name for name in names}
    if len(ids) != len(names) or ids != {second.create_node(name).tag_id: name for name in names}:
        raise RuntimeError("selectolax/Lexbor gives these tags no fixed ids: "
                           f"{sorted(names)}; core/convert/blocks/tree.py needs them")
    return ids


BLOCK_IDS = tag_ids(BLOCK_TAGS)  # tag id -> tag, the block tags
(_A_ID,), (_IMG_ID,) = tag_ids(frozenset({"a"})), tag_ids(frozenset({"img"}))
ROOT_INFO = (0, 0, 0, 0, 0, 0, 0, False, 0, ())
NO_FLAGS = (False, False)  # what ``flags`` gives a node without class and id
_FURNITURE = frozenset({"header", "footer", "aside", "nav", "figure", "form"})
_NO_GROUPS: dict = {}  # a parent without classed block-tag children (never written to)


class Tree:
    """What ``blocks`` learns about the container's subtree, so nothing is asked of the DOM
    twice: each visited node's parent (recorded by the one upward walk that finds the leaves),
    the block-tag children of each parent (the same walk), each node's class and id (read
    once), the facts of each ancestor (memoised top-down), each parent's child count."""

    def __init__(self, container: LexborNode):
        self.top = container.mem_id
        # mem_id -> (parent mem_id, parent node), for the candidates and all their ancestors
        # below the container
        self.up: dict[int, tuple[int, LexborNode]] = {}
        self.memo: dict[int, tuple] = {self.top: ROOT_INFO}
        self.names: dict[int, tuple] = {}  # mem_id -> read_name(node), every candidate's (Walk)
        # parent mem_id -> {(tag, class): count} of its classed block-tag children: every such
        # child is a candidate of the walk, so ``Walk`` counts all of them
        self.groups: dict[int, dict] = {}
        self.counts: dict[int, int] = {}  # parent mem_id -> non-text children
        self.family: dict[int, tuple[int, dict]] = {}  # parent mem_id -> _siblings
        self.owner: dict[int, int] = {}  # mem_id -> index of the block holding it, -1 none (owners)

    def name(self, key: int, node: LexborNode) -> tuple[str | None, str | None, bool, bool]:
        """``read_name`` of the node ``key``, once (each attribute read builds a dict of all
        of them)."""
        value = self.names.get(key)
        if value is None:
            value = self.names[key] = read_name(node)
        return value

    def info(self, key: int, node: LexborNode) -> tuple:
        """(depth, positive, negative, in_li, in_table, in_quote, in_furniture, in_pre,
        repeated, chain) for ``node``, counting ``node`` itself; ``chain`` is the ``mem_id``s
        from just below the container down to ``node``."""
        memo, up, names, groups = self.memo, self.up, self.names, self.groups
        chain = []
        base = memo.get(key)
        while base is None:
            chain.append((key, node))
            entry = up.get(key)
            if entry is None:  # no parent: the tree's top
                base = ROOT_INFO
                break
            key, node = entry
            base = memo.get(key)
        for key, item in reversed(chain):
            depth, pos, neg, li, table, quote, furniture, pre, repeated, ids = base
            named = names.get(key)
            if named is None:
                named = names[key] = read_name(item)
            cls, _, positive, negative = named
            tag = item.tag
            if not cls:
                same = 0
            elif tag in BLOCK_TAGS:  # ``repeats``, inlined for the usual case
                entry = up.get(key)
                same = groups.get(entry[0], _NO_GROUPS).get((tag, cls), 0) if entry else 0
            else:
                same = self.repeats(key, tag, cls)
            base = (depth + 1, pos or int(positive), neg or int(negative), li or int(tag == "li"),
                    table or int(tag in ("table", "tr")), quote or int(tag == "blockquote"),
                    furniture or int(tag in _FURNITURE),
                    pre or tag == "pre", max(repeated, same), ids + (key,))
            memo[key] = base
        return base

    def repeats(self, key: int, tag: str | None, cls: str) -> int:
        """How many siblings (including the node ``key``, whose class ``cls`` is not empty) share
        its tag and class — cards, teasers, comments and posts come in runs. A block tag's
        siblings of that tag are all walk candidates (``groups``): counted among them, without
        reading the other children; any other tag reads the parent's children (``_siblings``)."""
        entry = self.up.get(key)
        if entry is None:
            return 0
        if tag in BLOCK_TAGS:
            return self.groups.get(entry[0], _NO_GROUPS).get((tag, cls), 0)
        return self._siblings(*entry)[1].get((tag or "", cls), 0)

    def children(self, key: int) -> int:
        """The number of non-text children of the parent of the node ``key`` (1 at the top)."""
        entry = self.up.get(key)
        if entry is None:
            return 1
        parent_key, parent = entry
        count = self.counts.get(parent_key)
        if count is None:
            family = self.family.get(parent_key)
            if family is not None:
                count = family[0]
            else:
                count = 0
                for _ in parent.iter(include_text=False):
                    count += 1
            self.counts[parent_key] = count
        return count

    def _siblings(self, parent_key: int, parent: LexborNode) -> tuple[int, dict]:
        """(non-text children, {(tag, class): count} of the classed ones) of ``parent``, once."""
        value = self.family.get(parent_key)
        if value is None:
            count = 0
            signatures: dict[tuple[str, str], int] = {}
            for child in parent.iter(include_text=False):
                count += 1
                cls = child.attributes.get("class")
                if cls:
                    signature = (child.tag or "", cls)
                    signatures[signature] = signatures.get(signature, 0) + 1
            value = self.family[parent_key] = (count, signatures)
        return value


def node_text(node: LexborNode) -> str:
    return node.text(deep=True, separator=" ", strip=True)


class Walk:
    """One pass over the container's elements in document order (``traverse``): the block-tag
    elements (candidates, with their tag), the anchors and the images — what a selector of all
    ``BLOCK_TAGS``, ``css("a")`` and ``css("img")`` return (by tag id, as Lexbor's type
    selectors match: by tag, in any namespace), for one walk instead of three queries."""

    def __init__(self, container: LexborNode, tree: Tree):
        top = tree.top
        self.candidates: list[tuple[int, LexborNode, str]] = []
        self.anchors: list[LexborNode] = []
        self.images: list[LexborNode] = []
        candidates, anchors, images = self.candidates, self.anchors, self.images
        block_ids, a_id, img_id = BLOCK_IDS, _A_ID, _IMG_ID
        # with each candidate, as the traversal meets it: the elements with a candidate below
        # them (not leaves), and every candidate's and ancestor's parent, from one walk up that
        # stops where an earlier one passed (the parents a walk passes are the same in any
        # order of the candidates); each candidate's class and id (``Tree.names``: nearly every
        # candidate is asked for them later, as a block, an ancestor or a sibling) and each
        # parent's (tag, class) counts of its classed block-tag children (``Tree.groups``) —
        # one loop over the elements instead of a second one over the candidates
        self.inner = inner = set()
        up, names, groups = tree.up, tree.names, tree.groups
        for node in container.traverse(include_text=False):
            tag_id = node.tag_id
            if tag_id in block_ids:
                key = node.mem_id
                if key == top:  # the container itself is not one of its blocks
                    continue
                tag = block_ids[tag_id]
                candidates.append((key, node, tag))
                parent = node.parent
                if parent is None:
                    continue
                parent_key = parent.mem_id
                named = names[key] = read_name(node)  # each candidate once
                cls = named[0]
                if cls:
                    counts = groups.get(parent_key)
                    signature = (tag, cls)
                    if counts is None:
                        groups[parent_key] = {signature: 1}
                    else:
                        counts[signature] = counts.get(signature, 0) + 1
                while True:
                    up[key] = (parent_key, parent)
                    if parent_key == top or parent_key in inner:
                        break
                    inner.add(parent_key)
                    key, parent = parent_key, parent.parent
                    if parent is None:
                        break
                    parent_key = parent.mem_id
            elif tag_id == a_id:
                anchors.append(node)
            elif tag_id == img_id:
                images.append(node)


def owners(matches: list[LexborNode], tree: Tree, index: dict[int, int]) -> list[int]:
    """For each of ``matches`` (elements under the container), the index of the block holding
    it (-1: none), by a memoised walk up from each — the same as a query run from each block,
    since blocks never nest."""
    up, top = tree.up, tree.top
    owner = tree.owner
    out = []
    for match in matches:
        path = []
        key = match.mem_id
        node: LexborNode | None = match
        found = owner.get(key)
        while found is None:
            if key in index:
                found = index[key]
                break
            if key == top:
                found = -1
                break
            path.append(key)
            entry = up.get(key)
            if entry is not None:
                key, node = entry
            else:
                node = node.parent
                if node is None:
                    found = -1
                    break
                key = node.mem_id
            found = owner.get(key)
        for step in path:
            owner[step] = found
        out.append(found)
    return out
