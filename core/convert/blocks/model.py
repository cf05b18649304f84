"""The shipped block model: load it, score blocks, drop the ones it calls boilerplate.

Pure Python at run time (no numpy, no scikit-learn): the model is a JSON file next to this
module (``model.json``, written by ``bench/train_blocks.py``) holding either logistic-regression
weights or a small gradient-boosted tree ensemble. Evaluating it is a dot product or a few
comparisons per tree per block — a few hundred microseconds on a typical page.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from selectolax.lexbor import LexborNode

from webshelf.core.convert.blocks.features import NAMES, Block, blocks

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
            z = self.intercept + sum(c * x for c, x in zip(self.coef, features))
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


@lru_cache(maxsize=8)
def load(path: str | None = None) -> BlockModel:
    """The model at ``path`` (default: the shipped one), parsed once per process."""
    source = Path(path) if path else SHIPPED
    return BlockModel(json.loads(source.read_text(encoding="utf-8")))


def drop_blocks(container: LexborNode, model: BlockModel, threshold: float | None = None) -> int:
    """Remove the blocks under ``container`` whose keep-probability is below the threshold;
    returns how many. Never removed: code blocks (``<pre>``), the page heading (``<h1>``) and
    any block holding ≥ ``model.protect_share`` of the container's text (one block that large
    *is* the content, whatever its features say). When the doomed blocks would take more than
    ``model.max_drop_share`` of the text, nothing is dropped: the model is then most often
    looking at a listing, whose repeated short link-bearing items *are* the content."""
    limit = model.threshold if threshold is None else threshold
    if limit <= 0:
        return 0
    found: list[Block] = blocks(container)
    if len(found) < 2:
        return 0
    total = sum(b.chars for b in found) or 1
    doomed = [b for b in found
              if b.node.tag not in ("pre", "h1") and b.chars < model.protect_share * total
              and b.node.css_first("pre, h1") is None
              and model.keep_probability(b.features) < limit]
    if sum(b.chars for b in doomed) > model.max_drop_share * total:
        return 0
    for b in doomed:
        b.node.remove()
    return len(doomed)
