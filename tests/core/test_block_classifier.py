"""The learned block classifier (core/convert/blocks): the shipped model loads and is small,
scoring is deterministic, and on a real page (tests/core/pages/0341, WCXB dev, CC-BY-4.0) it
drops the footer blocks the rules kept without losing any must-keep snippet."""

from __future__ import annotations

import gzip
import json
import re
import tomllib
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.blocks import features, model
from webshelf.core.convert.html_main_content import Tuning, container
from webshelf.core.convert.html_markdown import html_to_markdown

PAGES = Path(__file__).resolve().parent / "pages"
ROOT = Path(__file__).resolve().parents[2]
OFF = Tuning(block_model="off")


def _page(page_id: str) -> tuple[str, dict]:
    html = gzip.decompress((PAGES / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
    return html, json.loads((PAGES / f"{page_id}.json").read_text())


def _plain(markdown: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"\s+", " ", re.sub(r"[#*`|>-]+", " ", text)).lower()


def test_shipped_model_loads_is_small_and_matches_the_features():
    assert model.SHIPPED.stat().st_size < 5 * 1024 * 1024
    shipped = model.load()
    assert shipped is model.load()  # parsed once per process
    assert 0 < shipped.threshold < 1
    assert json.loads(model.SHIPPED.read_text())["features"] == list(features.NAMES)


def test_model_ships_as_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "webshelf.core.convert.blocks" in config["packages"]
    assert "model.json" in config["package-data"]["webshelf.core.convert.blocks"]


def test_a_model_for_other_features_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="retrain it with bench/train_blocks.py"):
        model.BlockModel({"kind": "logistic", "features": ["log_chars"], "coef": [1.0],
                          "intercept": 0.0, "threshold": 0.5})


def test_features_and_scores_are_deterministic():
    html, _ = _page("0341")
    runs = []
    for _ in range(2):
        node = container(LexborHTMLParser(html))
        found = features.blocks(node)
        runs.append([(b.chars, b.features, model.load().keep_probability(b.features)) for b in found])
    assert runs[0] == runs[1]
    assert len(runs[0]) > 10 and all(len(f) == len(features.NAMES) for _, f, _ in runs[0])
    assert html_to_markdown(html).markdown == html_to_markdown(html).markdown


def test_classifier_drops_footer_blocks_and_keeps_the_content():
    html, truth = _page("0341")
    with_model = html_to_markdown(html, truth["url"]).markdown
    rules_only = html_to_markdown(html, truth["url"], tuning=OFF).markdown
    # the rules kept the site footer's link block inside the container; the classifier drops it
    assert "site index" in _plain(rules_only)
    assert "site index" not in _plain(with_model)
    assert len(with_model) < len(rules_only)
    for snippet in truth["with"]:
        assert snippet.lower() in _plain(with_model), snippet
    assert with_model.startswith("# ")  # the title line stays


def test_code_blocks_and_the_page_heading_are_never_dropped():
    class DropAll(model.BlockModel):
        def keep_probability(self, values):
            return 0.0

    shipped = json.loads(model.SHIPPED.read_text())
    html = ("<main><h1>Title</h1><p>" + "Prose that goes. " * 8 + "</p><div>menu menu</div>"
            "<pre><code>print('kept')</code></pre></main>")
    node = container(LexborHTMLParser(html), OFF)
    model.drop_blocks(node, DropAll(shipped))
    assert node.css_first("h1") is not None and node.css_first("pre") is not None
    assert "menu" not in node.text()


def test_nothing_is_dropped_when_the_model_would_take_most_of_the_container():
    class DropAll(model.BlockModel):
        def keep_probability(self, values):
            return 0.0

    shipped = json.loads(model.SHIPPED.read_text())
    assert shipped["max_drop_share"] < 1.0
    items = "".join(f"<li><a href='/item/{i}'>Item number {i}</a> short note</li>" for i in range(12))
    node = container(LexborHTMLParser(f"<main><h1>Listing</h1><ul>{items}</ul></main>"), OFF)
    assert model.drop_blocks(node, DropAll(shipped)) == 0  # a listing: the items are the content
    assert len(node.css("li")) == 12
