"""Per-block features for the learned keep/drop classifier (``core.convert.blocks``).

A *block* is a leaf of the block structure inside the chosen container: an element of
``BLOCK_TAGS`` holding no other such element (a paragraph, a list item, a heading, a table
row, a ``<div>`` of plain text), and every ``<pre>`` whole. Features are language-independent
on purpose — the model must work on pages and languages WCXB does not have: text and link
lengths, punctuation and digit densities (Unicode punctuation, so CJK and Cyrillic pages look
like Latin ones), tag, depth and position, repetition among siblings (teaser grids, comment
lists, product cards) and a few generic markup words in class/id (markup is written in English
on sites in every language). No word list of any natural language.

The same code computes features for training (``bench/train_blocks.py``) and at run time, so
there is no train/serve skew. Cost: the container is walked once (``blocks.tree``: no CSS query
per block), then per block one ``text()`` call, its class and id (read by the walk), and the
punctuation counts on the text's bytes in C (regex passes only over non-ASCII characters); ~1 ms
on a median page (docs/benchmarks.md "Block features: the same floats, cheaper", "Block select,
third pass" and "Block features and select, fourth pass"). Each vector is built in one go
(neighbours and branch values appended, not patched in). Speed work here must keep every float:
bench/block_features_check.py compares the features, the scores, the narrowing and what
``model.select`` leaves with an earlier commit's on every corpus page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import compress

import regex
from selectolax.lexbor import LexborNode

from webshelf.core.convert import css_hidden
from webshelf.core.convert.blocks.tree import ROOT_INFO, Tree, Walk, owners

_TAG_GROUPS = (("p",), ("li", "dt", "dd"), ("h1",), ("h2", "h3"), ("h4", "h5", "h6"), ("pre",),
               ("blockquote",), ("tr",), ("figcaption", "caption"),
               ("div", "section", "article", "main", "center"))
_TAG_INDEX = {tag: i for i, group in enumerate(_TAG_GROUPS) for tag in group}
_NO_TAG = (0.0,) * len(_TAG_GROUPS)
# the one-hot tag features of each grouped tag
_TAG_VECTORS = {tag: tuple(1.0 if j == i else 0.0 for j in range(len(_TAG_GROUPS)))
                for tag, i in _TAG_INDEX.items()}

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


@dataclass(slots=True)
class Block:
    node: LexborNode
    chars: int
    features: list[float]
    # mem_ids of the block's ancestors from just below the container down to its parent: the
    # branch it sits in (``model.narrow`` walks down these)
    chain: tuple[int, ...] = ()


_ENDS_CHARS = ".!?。！？।؟…"
_COMMAS_CHARS = ",，、;；،"
_PUNCT = regex.compile(r"\p{P}")
_ENDS = regex.compile(f"[{_ENDS_CHARS}]")
_COMMAS = regex.compile(f"[{_COMMAS_CHARS}]")
_DIGITS = regex.compile(r"\d")
# runs, not single characters: fewer match objects, the same total length
_PUNCT_RUNS = regex.compile(r"\p{P}+")
_DIGIT_RUNS = regex.compile(r"\d+")
# Every sentence end and comma is punctuation, so they can be counted among the punctuation
# characters alone (a short string) instead of over the whole text.
_ENDS_ARE_PUNCT = all(_PUNCT.match(c) for c in _ENDS_CHARS + _COMMAS_CHARS)
# ASCII text is counted on its bytes in C (``bytes.translate`` deletes a class; the length
# difference is its count). The byte sets are taken from the same four patterns, so both paths
# count exactly what the patterns match.
_ASCII = [chr(i) for i in range(128)]
_ASCII_CLASSES = tuple("".join(c for c in _ASCII if pattern.match(c)).encode("ascii")
                       for pattern in (_PUNCT, _ENDS, _COMMAS, _DIGITS))
_ASCII_BYTES = bytes(range(128))  # deleted from UTF-8 text, they leave its other characters


_FEW_WIDE = 24  # up to this many non-ASCII characters, a memo per character beats 4 regex calls
WIDE_MEMO_SIZE = 4096  # distinct non-ASCII characters remembered
_WIDE: dict[str, tuple[int, int, int, int]] = {}  # character -> its (punct, end, comma, digit)
_NO_CLASS = (0, 0, 0, 0)  # (the one object every letter maps to: skipped without adding)


def _wide_counts(char: str) -> tuple[int, int, int, int]:
    """``_punct``'s four counts of the single character ``char``, by the same four patterns
    (each class is a property of one character), memoised in ``_WIDE`` (bounded)."""
    counts = tuple(1 if pattern.match(char) else 0 for pattern in (_PUNCT, _ENDS, _COMMAS, _DIGITS))
    if counts == _NO_CLASS:
        counts = _NO_CLASS
    if len(_WIDE) >= WIDE_MEMO_SIZE:
        _WIDE.clear()
    _WIDE[char] = counts
    return counts


css_hidden.on_clear(_WIDE.clear)  # cold runs forget it with the other memos


def _punct(text: str) -> tuple[int, int, int, int]:
    """(punctuation, sentence ends, commas, digits) by Unicode class, so "。" counts as ".".
    The counts are how many characters of ``text`` ``_PUNCT``, ``_ENDS``, ``_COMMAS`` and
    ``_DIGITS`` match. Each class is a property of single characters, so the counts add up over
    any split of the text: its ASCII characters are counted on the UTF-8 bytes (a byte below
    128 is only ever an ASCII character there), the others (most often a few quotes, dashes
    or accented letters in Latin text) with two regex passes over just them, not four over
    the whole text."""
    data = text.encode("utf-8", "surrogatepass")
    size = len(data)
    punct, ends, commas, digits = _ASCII_CLASSES
    punct, ends, commas, digits = (
        size - len(data.translate(None, punct)), size - len(data.translate(None, ends)),
        size - len(data.translate(None, commas)), size - len(data.translate(None, digits)))
    if size == len(text):  # all ASCII
        return punct, ends, commas, digits
    rest = data.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    if len(rest) <= _FEW_WIDE:  # a few quotes, dashes or accented letters: char by char
        wide, none = _WIDE, _NO_CLASS
        for char in rest:
            counts = wide.get(char) or _wide_counts(char)
            if counts is not none:
                punct += counts[0]
                ends += counts[1]
                commas += counts[2]
                digits += counts[3]
        return punct, ends, commas, digits
    digits += sum(map(len, _DIGIT_RUNS.findall(rest)))
    marks = "".join(_PUNCT_RUNS.findall(rest))
    punct += len(marks)
    pool = marks if _ENDS_ARE_PUNCT else rest
    if pool:
        ends += len(_ENDS.findall(pool))
        commas += len(_COMMAS.findall(pool))
    return punct, ends, commas, digits


def blocks(container: LexborNode, limit: int = 3000) -> list[Block]:
    """The leaf blocks under ``container`` in document order, with their feature vectors.
    At most ``limit`` blocks (a bound for hostile pages; the rest are kept untouched)."""
    tree = Tree(container)
    walk = Walk(container, tree)
    inner, up, memo = walk.inner, tree.up, tree.memo
    text_of = LexborNode.text  # ``node_text``, called without a Python frame of its own
    found: list[tuple[int, LexborNode, str, str, tuple]] = []
    for key, node, tag in walk.candidates:
        if len(found) >= limit:
            break
        if key in inner and tag != "pre":
            continue
        entry = up.get(key)
        if entry is None:
            parent_info = ROOT_INFO
        else:
            parent_info = memo.get(entry[0]) or tree.info(*entry)
        if parent_info[7]:  # inside a <pre>: the <pre> is the block
            continue
        text = text_of(node, True, " ", True)
        if not text:
            continue
        found.append((key, node, text, tag, parent_info))
    if not found:
        return []
    index = {key: i for i, (key, *_) in enumerate(found)}
    n = len(found)
    link_chars = [0] * n
    links = [0] * n
    container_links = 0
    for anchor, i in zip(walk.anchors, owners(walk.anchors, tree, index)):
        size = len(text_of(anchor, True, " ", True))
        container_links += size
        if i >= 0:
            link_chars[i] += size
            links[i] += 1
    has_img = [0.0] * n
    for i in owners(walk.images, tree, index):
        if i >= 0:
            has_img[i] = 1.0
    total = sum(len(text) for _, _, text, _, _ in found) or 1
    container_chars = len(text_of(container, True, " ", True)) or 1
    tail = (math.log1p(container_chars), min(1.0, container_links / container_chars), math.log1p(n))
    punct_bytes, ends_bytes, commas_bytes, digit_bytes = _ASCII_CLASSES
    names, groups = tree.names, tree.groups
    log1p = math.log1p
    # first h1/h2: the blocks before it are "before_heading" (the heading itself is not)
    heading = next((i for i, (_, _, _, tag, _) in enumerate(found) if tag in ("h1", "h2")), n)
    before = 0
    heads: list[list[float]] = []  # each block's own features, up to before_heading
    chars_of: list[int] = []
    densities: list[float] = []
    log_chars: list[float] = []
    # per parent_info (blocks of one parent share it): depth, the ancestor flags, repetition
    ancestry: dict[int, tuple] = {}
    for i, (key, node, text, tag, parent_info) in enumerate(found):
        chars = len(text)
        words = len(text.split()) or 1
        if text.isascii():  # as _punct: the four classes counted on the bytes
            data = text.encode("ascii")
            punct = chars - len(data.translate(None, punct_bytes))
            ends = chars - len(data.translate(None, ends_bytes))
            commas = chars - len(data.translate(None, commas_bytes))
            digits = chars - len(data.translate(None, digit_bytes))
        else:
            punct, ends, commas, digits = _punct(text)
        cls, _, positive, negative = names[key]  # every candidate's, read by the walk
        if cls:
            entry = up.get(key)
            if entry is None:
                same_share = log_same = 0.0
            else:
                same = groups[entry[0]][(tag, cls)]
                same_share, log_same = same / max(1, tree.children(key)), log1p(same)
        else:
            same_share = log_same = 0.0
        if tag == "pre":  # a code block's links are code, not navigation
            block_links = block_link_chars = 0
        else:
            block_links, block_link_chars = links[i], link_chars[i]
        density = block_link_chars / chars
        if density > 1.0:
            density = 1.0
        log_size = log1p(chars)
        above = ancestry.get(id(parent_info))
        if above is None:
            depth = parent_info[0] + 1
            above = ancestry[id(parent_info)] = (
                float(depth if depth < 40 else 40), float(parent_info[1]), float(parent_info[2]),
                float(parent_info[3]), float(parent_info[4]), float(parent_info[5]),
                float(parent_info[6]), log1p(parent_info[8]))
        per_word = chars / words
        heads.append([
            log_size, log1p(words), density, log1p(block_links),
            punct / chars, 100.0 * ends / chars, 100.0 * commas / chars, digits / chars,
            per_word if per_word < 30.0 else 30.0, above[0], i / n, before / total,
            chars / total, *_TAG_VECTORS.get(tag or "", _NO_TAG),
            float(positive), float(negative), above[1], above[2], above[3], above[4], above[5],
            above[6], has_img[i], same_share, log_same, above[7],
            1.0 if i < heading else 0.0,
        ])
        before += chars
        chars_of.append(chars)
        densities.append(density)
        log_chars.append(log_size)
    chains = [info[9] for _, _, _, _, info in found]
    branches = _branch_features(chains, chars_of, densities, total)
    out: list[Block] = []
    last = n - 1
    for i, features in enumerate(heads):
        features += (
            densities[i - 1] if i else -1.0, densities[i + 1] if i < last else -1.0,
            log_chars[i - 1] if i else 0.0, log_chars[i + 1] if i < last else 0.0, *tail,
            *branches[i])
        out.append(Block(found[i][1], chars_of[i], features, chains[i]))
    return out




def _branch_features(chains: list[tuple], chars_of: list[int], densities: list[float],
                     total: int) -> list[tuple]:
    """Where each block sits relative to the page's text mass: the share of the container's
    block text (and the link density) of its ancestors 1, 2 and 3 levels below the container,
    and its tree distance to the longest block (the article is one branch; teasers, comments
    and menus are other branches). The eight values per block, in ``NAMES`` order."""
    # ancestor id -> [block chars, link density sum * chars]; only the three levels below the
    # container are read. The chars are whole numbers, summed in any order: per chain first
    # (the blocks of one parent share their chain tuple), then per ancestor. The link sums are
    # floats, added over the blocks in document order as ever, but only over the blocks with
    # links: adding 0.0 leaves a sum of non-negative numbers as it is, bit for bit
    per_chain: dict[int, list] = {}
    for chain, chars in zip(chains, chars_of):
        entry = per_chain.get(id(chain))
        if entry is None:
            per_chain[id(chain)] = [chain, chars]
        else:
            entry[1] += chars
    sizes: dict[int, list] = {}
    for chain, chars in per_chain.values():
        for anc in chain[:3]:
            entry = sizes.get(anc)
            if entry is None:
                sizes[anc] = [chars, 0.0]
            else:
                entry[0] += chars
    for i in compress(range(len(chains)), densities):
        weighted = densities[i] * chars_of[i]
        for anc in chains[i][:3]:
            sizes[anc][1] += weighted
    longest = chars_of.index(max(chars_of))
    mass_ids = set(chains[longest])
    # blocks of one parent share their chain tuple: what depends on the chain alone is worked
    # out once per parent (all eight values when the chain reaches three levels down)
    placed: dict[int, tuple] = {}
    out = []
    for chain, chars, density in zip(chains, chars_of, densities):
        where = placed.get(id(chain))
        if where is None:
            lca = -1
            for d in range(len(chain) - 1, -1, -1):
                if chain[d] in mass_ids:
                    lca = d
                    break
            tail = (float(min(40, len(chain) - 1 - lca)), float(lca + 1),
                    float(bool(chain) and chain[0] in mass_ids))
            if len(chain) >= 3:
                (c1, l1), (c2, l2), (c3, _) = sizes[chain[0]], sizes[chain[1]], sizes[chain[2]]
                where = (c1 / total, c2 / total, c3 / total, l1 / c1 if c1 else 0.0,
                         l2 / c2 if c2 else 0.0, *tail)
            else:
                where = tail
            placed[id(chain)] = where
        if len(where) == 8:
            out.append(where)
            continue
        shares, ratios = [], []
        for level in range(3):
            if level < len(chain):
                level_chars, level_links = sizes[chain[level]]
                shares.append(level_chars / total)
                if level < 2:
                    ratios.append(level_links / level_chars if level_chars else 0.0)
            else:
                shares.append(chars / total)
                if level < 2:
                    ratios.append(density)
        out.append((*shares, *ratios, *where))
    return out
