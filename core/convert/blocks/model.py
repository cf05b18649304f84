"""The shipped block model: load it, score blocks, narrow the container to the branch that
holds the keep-weighted text mass, drop the blocks it calls boilerplate (``select``).

Pure Python at run time (no numpy, no scikit-learn): the model is a JSON file next to this
module (``model.json``, written by ``bench/train_blocks.py``) holding either logistic-regression
weights or a small gradient-boosted tree ensemble. Evaluating it is a dot product or a few
comparisons per tree per block — a few hundred microseconds on a typical page.
"""

from __future__ import annotations

import json
import math
import operator
from functools import lru_cache
from collections import defaultdict
from pathlib import Path

from selectolax.lexbor import LexborNode

from webshelf.core.convert import native
from webshelf.core.convert.blocks.features import NAMES, Block, blocks

if native.blocks is not None:  # the same blocks and features, read in C (core/convert/native)
    blocks = native.blocks  # noqa: F811

SHIPPED = Path(__file__).with_name("model.json")


class BlockModel:
    """A keep-probability per block. ``kind`` is "logistic" (``coef``, ``intercept``) or
    "trees" (``trees``: lists of nodes ``[feature, threshold, left, right, value]``, a leaf has
    feature -1; ``base`` is the starting log-odds, ``rate`` the learning rate)."""

    def __init__(self, data: dict):
        if list(data.get("features", ())) != list(NAMES):
            raise ValueError("block model was trained on other features than "
                             "core/convert/blocks/features.py computes: retrain it with "
                             "bench/train_blocks.py")
        self.kind = data["kind"]
        self.threshold = float(data["threshold"])
        self.protect_share = float(data.get("protect_share", 0.3))
        self.max_drop_share = float(data.get("max_drop_share", 1.0))
        self.narrow_share = float(data.get("narrow_share", 1.0))  # 1 = no narrowing
        if self.kind == "logistic":
            self.coef = [float(c) for c in data["coef"]]
            self.intercept = float(data["intercept"])
        elif self.kind == "trees":
            self.trees = [[tuple(node) for node in tree] for tree in data["trees"]]
            self.base = float(data["base"])
            self.rate = float(data["rate"])
        else:
            raise ValueError(f"unknown block model kind {self.kind!r}")

    def keep_probability(self, features: list[float]) -> float:
        if self.kind == "logistic":
            # (the same products summed in the same order as a generator over zip, without a
            # Python frame per feature: 51 features × every block of every page)
            z = self.intercept + sum(map(operator.mul, self.coef, features))
        else:
            z = self.base
            for tree in self.trees:
                node = tree[0]
                while node[0] >= 0:
                    node = tree[node[2] if features[node[0]] <= node[1] else node[3]]
                z += self.rate * node[4]
        if z < -30:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def keep_probabilities(self, rows: list[list[float]]) -> list[float]:
        """``keep_probability`` of each row; the logistic model's in one comprehension (the
        same expression, so the same floats), a subclass's override row by row."""
        if self.kind != "logistic" or type(self).keep_probability is not BlockModel.keep_probability:
            return [self.keep_probability(row) for row in rows]
        intercept, coef, mul, exp = self.intercept, self.coef, operator.mul, math.exp
        return [0.0 if z < -30 else 1.0 / (1.0 + exp(-z))
                for z in [intercept + sum(map(mul, coef, row)) for row in rows]]


@lru_cache(maxsize=8)
def load(path: str | None = None) -> BlockModel:
    """The model at ``path`` (default: the shipped one), parsed once per process."""
    source = Path(path) if path else SHIPPED
    return BlockModel(json.loads(source.read_text(encoding="utf-8")))


def drop_blocks(container: LexborNode, model: BlockModel, threshold: float | None = None) -> int:
    """Remove the blocks under ``container`` that ``select`` would drop; returns how many.
    (``select`` also narrows; this keeps ``container`` whole, for callers that hold it.)"""
    limit = model.threshold if threshold is None else threshold
    if limit <= 0:
        return 0
    found: list[Block] = blocks(container)
    if len(found) < 2:
        return 0
    probs = model.keep_probabilities([b.features for b in found])
    return _drop(found, probs, model, limit)


def select(container: LexborNode, model: BlockModel, threshold: float | None = None) -> LexborNode:
    """The content of ``container`` by the block scores: first narrowed to the branch holding
    the page's keep-weighted text mass (``narrow``), then without the blocks scored below the
    threshold (``_drop``). Returns the (possibly inner) node; the tree is changed in place."""
    limit = model.threshold if threshold is None else threshold
    if limit <= 0:
        return container
    found: list[Block] = blocks(container)
    if len(found) < 2:
        return container
    probs = model.keep_probabilities([b.features for b in found])
    node, members = narrow(found, probs, model.narrow_share)
    if node is None:
        node, members = container, list(range(len(found)))
    else:
        _keep_heading(node, found, members)
    _drop([found[i] for i in members], [probs[i] for i in members], model, limit)
    return node


def _keep_heading(node: LexborNode, found: list[Block], members: list[int]) -> None:
    """The page heading stays with the story: when narrowing left the container's first
    ``<h1>`` outside (a title above the article body, the usual layout), a copy of it goes
    first into ``node``. The title line is never dropped."""
    if node.css_first("h1") is not None:
        return
    inside = set(members)
    heading = next((b.node for i, b in enumerate(found) if i not in inside and b.node.tag == "h1"),
                   None)
    if heading is None:
        return
    first = node.child
    if first is not None:
        first.insert_before(heading)  # Lexbor inserts a copy; the original stays outside
    else:
        node.insert_child(heading)


def _drop(found: list[Block], probs: list[float], model: BlockModel, limit: float) -> int:
    """Never removed: code blocks (``<pre>``), the page heading (``<h1>``) and any block
    holding ≥ ``model.protect_share`` of the text (one block that large *is* the content,
    whatever its features say). When the doomed blocks would take more than
    ``model.max_drop_share`` of the text, nothing is dropped: the model is then most often
    looking at a listing, whose repeated short link-bearing items *are* the content."""
    if len(found) < 2:
        return 0
    total = sum(b.chars for b in found) or 1
    # the score first, the tag only for blocks it dooms. No block other than a <pre> holds a
    # <pre> or <h1>: both are block tags, and a block is a leaf of the block tags (what is
    # inside a <pre> is the <pre>'s), found by tag id as Lexbor's type selectors match — so
    # ``css_first("pre, h1")`` on a doomed block, a query each, always came back empty
    doomed = [b for b, p in zip(found, probs)
              if p < limit and b.chars < model.protect_share * total
              and b.node.tag not in ("pre", "h1")]
    if sum(b.chars for b in doomed) > model.max_drop_share * total:
        return 0
    for b in doomed:
        b.node.remove()
    return len(doomed)


PROSE_PROBABILITY = 0.5  # the first prose block (the article's opening paragraph) ...
PROSE_MIN_CHARS = 80  # ... scores at least this, is this long and ends a sentence
_SENTENCE_ENDS = NAMES.index("sentence_ends")
_PRE = NAMES.index("tag_pre")


def narrow_members(chains: list[tuple], chars: list[int], probs: list[float],
                   is_pre: list[bool], is_prose: list[bool], share: float) -> tuple[int, list[int]]:
    """The walk behind ``narrow`` on plain lists (``bench/train_blocks.py`` replays it on its
    dataset): (depth reached, indices of the blocks inside the chosen branch)."""
    members = list(range(len(chains)))
    if share >= 1.0:
        return 0, members
    weight = [c * p for c, p in zip(chars, probs)]
    first = next((i for i in members if is_prose[i]), None)
    any_pre = any(is_pre)
    at = weight.__getitem__
    depth = 0
    while depth < 200:
        # the branches one level down, in order of first appearance, each with its weight
        # summed over its blocks in document order (the float additions of ``sum`` over them)
        groups: dict = {}
        sums: dict = {}
        for i in members:
            chain = chains[i]
            if len(chain) > depth:
                key = chain[depth]
                group = groups.get(key)
                if group is None:
                    groups[key] = [i]
                    sums[key] = 0 + weight[i]
                else:
                    group.append(i)
                    sums[key] += weight[i]
        total = sum(map(at, members))
        if not groups or total <= 0:
            break
        best = max(sums, key=sums.__getitem__)  # the first of the heaviest, as max() of groups
        inner = groups[best]
        if len(inner) < 2 or sums[best] < share * total:
            break
        if first is not None or any_pre:
            kept = set(inner)
            if (first is not None and first not in kept) or (any_pre and any(
                    is_pre[i] for i in members if i not in kept)):
                break  # never lose the opening paragraph or a code block to narrowing
        members, depth = inner, depth + 1
    return depth, members


def narrow(found: list[Block], probs: list[float], share: float) -> tuple[LexborNode | None, list[int]]:
    """Walk down from the container while one child branch holds ≥ ``share`` of the text
    weighted by keep-probability (characters × p): a story inside a page-sized wrapper of
    menus, teasers, "more stories" and comment widgets, which the classifier scores low one by
    one but which together make the container several times the article. Stops before leaving the opening paragraph (the first block scored ≥ ``PROSE_PROBABILITY``, ≥ ``PROSE_MIN_CHARS``
    long, with a sentence end) or a ``<pre>`` outside, and at branches of fewer than 2 blocks.
    Returns (the inner node, the indices of its blocks), or (None, all) when it stays put."""
    chains = [b.chain for b in found]
    chars = [b.chars for b in found]
    is_pre = [b.features[_PRE] > 0 for b in found]
    is_prose = [p >= PROSE_PROBABILITY and b.chars >= PROSE_MIN_CHARS
                and b.features[_SENTENCE_ENDS] > 0 for b, p in zip(found, probs)]
    depth, members = narrow_members(chains, chars, probs, is_pre, is_prose, share)
    if depth == 0:
        return None, members
    key = found[members[0]].chain[depth - 1]
    node = found[members[0]].node.parent
    while node is not None and node.mem_id != key:
        node = node.parent
    return node, members
