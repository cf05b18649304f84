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


class _ProseModel(model.BlockModel):
    """Keeps sentences, drops link text: the block scores of a clear page, without the
    shipped weights (so these tests pin the narrowing walk, not a trained model)."""

    def keep_probability(self, values):
        names = features.NAMES
        return 0.9 if values[names.index("link_density")] < 0.3 and \
            values[names.index("sentence_ends")] > 0 else 0.05


def _story_page(extra_in_story: str = "", extra_outside: str = "") -> str:
    story = "".join(f"<p>Paragraph {i} of the story tells what happened there. " + "More words. " * 12
                    + "</p>" for i in range(6))
    teasers = "".join(f"<div class='teaser'><p>Other story {i} ran today.</p><a href='/s/{i}'>read "
                      f"the other story number {i}</a></div>" for i in range(10))
    return (f"<html><body><main><div class='page'><h1>The story</h1>"
            f"<div class='story'>{story}{extra_in_story}</div>"
            f"<div class='more'>{teasers}</div>{extra_outside}"
            f"<div class='rail'><p>Short note one.</p><p>Short note two.</p></div>"
            f"</div></main></body></html>")


def _narrowing_model(share: float) -> model.BlockModel:
    return _ProseModel({**json.loads(model.SHIPPED.read_text()), "narrow_share": share})


def test_select_narrows_a_page_sized_container_to_the_story():
    node = container(LexborHTMLParser(_story_page()), OFF)
    assert "Other story 3" in node.text()  # the rules kept the teaser grid beside the story
    picked = model.select(node, _narrowing_model(0.7))
    assert picked.attributes.get("class") == "story"
    assert picked.css_first("h1").text() == "The story"  # the heading above it comes along
    text = picked.text()
    assert "Paragraph 0 of the story" in text and "Paragraph 5 of the story" in text
    assert "Other story" not in text and "Short note" not in text


def test_select_without_narrowing_keeps_the_container():
    node = container(LexborHTMLParser(_story_page()), OFF)
    picked = model.select(node, _narrowing_model(1.0))
    assert picked.mem_id == node.mem_id
    assert "Paragraph 0 of the story" in picked.text()


def test_narrowing_never_leaves_a_code_block_or_the_first_paragraph_behind():
    code = "<pre><code>print('the example at the very end')</code></pre>"
    node = container(LexborHTMLParser(_story_page(extra_outside=code)), OFF)
    picked = model.select(node, _narrowing_model(0.7))
    assert "the example at the very end" in picked.text()
    lead = "<div class='lead'><p>" + "The opening paragraph says what the story is. " * 3 + "</p></div>"
    html = _story_page().replace("<div class='story'>", lead + "<div class='story'>")
    node = container(LexborHTMLParser(html), OFF)
    picked = model.select(node, _narrowing_model(0.7))
    assert "The opening paragraph says" in picked.text()


def test_narrowing_on_a_real_article_drops_the_comment_widget_and_keeps_the_story():
    """tests/core/pages/0464 (WCXB dev): the rules' container is the page's content wrapper,
    with the story, a comment widget ("What do you think?", "Be the first to comment") and
    teasers; the shipped model narrows it to the story."""
    html, truth = _page("0464")
    narrowed = html_to_markdown(html, truth["url"]).markdown
    flat = json.loads(model.SHIPPED.read_text())
    assert flat["narrow_share"] < 1.0  # the shipped model narrows
    plain = _plain(narrowed.replace("*", ""))  # "**Calendar Integration:**" reads as the text
    for snippet in truth["with"]:
        assert _plain(snippet).strip() in plain, snippet
    assert "be the first to comment" not in plain and "what do you think" not in plain
    assert narrowed.startswith(f"# {truth['title']}")  # the title line stays
    first = next(line for line in truth["main_content"].split("\n") if len(line) > 60)
    assert _plain(first).strip()[:60] in plain  # so does the first paragraph


def _reference_narrow(chains, chars, probs, is_pre, is_prose, share):
    """``model.narrow_members`` as first written (main 9e207ab): a sum per branch and level."""
    from collections import defaultdict

    members = list(range(len(chains)))
    if share >= 1.0:
        return 0, members
    weight = [c * p for c, p in zip(chars, probs)]
    first = next((i for i in members if is_prose[i]), None)
    depth = 0
    while depth < 200:
        groups = defaultdict(list)
        for i in members:
            if len(chains[i]) > depth:
                groups[chains[i][depth]].append(i)
        total = sum(weight[i] for i in members)
        if not groups or total <= 0:
            break
        inner = max(groups.values(), key=lambda idx: sum(weight[i] for i in idx))
        if len(inner) < 2 or sum(weight[i] for i in inner) < share * total:
            break
        kept = set(inner)
        if (first is not None and first not in kept) or any(is_pre[i] for i in members if i not in kept):
            break
        members, depth = inner, depth + 1
    return depth, members


def test_narrowing_walk_is_the_reference_walk_on_random_trees():
    import random

    rng = random.Random(14)
    for case in range(400):
        n = rng.randint(0, 40)
        branches = [tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 5))) for _ in range(n)]
        chains = [tuple(hash(branch[:d + 1]) for d in range(len(branch))) for branch in branches]
        chars = [rng.choice((0, 1, 5, 80, 300, 2000)) for _ in range(n)]
        # ties on purpose: equal weights make max() pick the first branch
        probs = [rng.choice((0.0, 0.1, 0.5, 0.9, 1.0, rng.random())) for _ in range(n)]
        is_pre = [rng.random() < 0.05 for _ in range(n)]
        is_prose = [rng.random() < 0.2 for _ in range(n)]
        for share in (0.5, 0.6, 1.0):
            args = (chains, chars, probs, is_pre, is_prose, share)
            assert model.narrow_members(*args) == _reference_narrow(*args), case


def test_scores_in_one_go_are_the_scores_one_by_one():
    html, _ = _page("0341")
    rows = [b.features for b in features.blocks(container(LexborHTMLParser(html)))]
    shipped = model.load()
    assert shipped.keep_probabilities(rows) == [shipped.keep_probability(row) for row in rows]
    assert [repr(p) for p in shipped.keep_probabilities(rows)] == \
        [repr(shipped.keep_probability(row)) for row in rows]

    class Half(model.BlockModel):
        def keep_probability(self, values):
            return 0.5

    assert Half(json.loads(model.SHIPPED.read_text())).keep_probabilities(rows) == [0.5] * len(rows)
