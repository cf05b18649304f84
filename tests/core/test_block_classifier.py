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

from webshelf.core.convert.blocks import features, model, page
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


def _article_amid_teasers() -> str:
    prose = "".join(f"<p>Paragraph {i} of the story tells what happened, and why it matters. "
                    "It goes on for a while, as stories do.</p>" for i in range(8))
    teasers = "".join(f"<div class='teaser'><a href='/s/{i}'>Another story {i} headline</a>"
                      f"<span>Teaser {i} text here</span></div>" for i in range(40))
    return f"<main><h1>Story</h1><div>{prose}</div><div>{teasers}</div></main>"


def test_prose_run_tells_an_article_from_a_listing():
    article = container(LexborHTMLParser(_article_amid_teasers()), OFF)
    items = "".join(f"<li><a href='/item/{i}'>Item number {i}</a> short note.</li>" for i in range(40))
    listing = container(LexborHTMLParser(f"<main><h1>Listing</h1><ul>{items}</ul></main>"), OFF)
    assert page.prose_run([b.features for b in features.blocks(article)]) > 600
    assert page.prose_run([b.features for b in features.blocks(listing)]) == 0


def test_an_article_may_lose_most_of_an_oversized_container():
    class Teasers(model.BlockModel):  # drops everything but the prose and the heading
        def keep_probability(self, values):
            return 1.0 if values[features.NAMES.index("tag_p")] else 0.0

    shipped = json.loads(model.SHIPPED.read_text())
    flat = {**shipped, "max_drop_share": 0.4}
    flat.pop("article_run_chars", None)
    node = container(LexborHTMLParser(_article_amid_teasers()), OFF)
    assert model.drop_blocks(node, Teasers(flat)) == 0  # the flat cap protects the teasers
    ruled = {**flat, "article_run_chars": 400, "article_drop_share": 1.0, "article_threshold": 0.5}
    node = container(LexborHTMLParser(_article_amid_teasers()), OFF)
    assert model.drop_blocks(node, Teasers(ruled)) > 0
    assert len(node.css("p")) == 8 and "Another story" not in node.text()
