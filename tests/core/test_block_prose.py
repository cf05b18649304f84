"""The prose-run features (core/convert/blocks/prose.py): where a block sits relative to the
article's body inside the container — the signal for teasers, link lists and widgets that
follow a story. Language-independent: a CJK story is found the same way as a Latin one."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.blocks import features, prose
from webshelf.core.convert.html_main_content import Tuning, container

OFF = Tuning(block_model="off")


def _row(block: features.Block) -> dict[str, float]:
    names = features.NAMES
    start = names.index(prose.NAMES[0])
    return dict(zip(prose.NAMES, block.features[start:]))


def _blocks(body: str) -> list[features.Block]:
    node = container(LexborHTMLParser(f"<html><body><main>{body}</main></body></html>"), OFF)
    return features.blocks(node)


def test_blocks_after_the_story_are_after_the_main_run():
    story = "".join(f"<p>Paragraph {i} says what happened, and why it matters to the town. "
                    + "More words follow here. " * 8 + "</p>" for i in range(5))
    teasers = "".join(f"<div class='x{i}'><p>Another story ran today, read it.</p></div>"
                      for i in range(6))
    found = _blocks(f"<h1>The story</h1>{story}<h2>More</h2>{teasers}")
    assert all(len(b.features) == len(features.NAMES) for b in found)
    rows = [_row(b) for b in found]
    texts = [b.node.text() for b in found]
    first = texts.index(next(t for t in texts if t.startswith("Paragraph 0")))
    assert rows[0]["before_main_run"] == 1.0  # the title sits above the body
    assert all(r["in_main_run"] == 1.0 and r["is_prose"] == 1.0 for r in rows[first:first + 5])
    tail = [r for t, r in zip(texts, rows) if t.startswith("Another story")]
    assert len(tail) == 6
    assert all(r["after_main_run"] == 1.0 and r["prose_after"] == 0.0 for r in tail)
    assert all(r["main_run_share"] > 0.8 for r in rows)  # page-level: the body is most of it
    assert tail[-1]["log_gap_to_run"] > tail[0]["log_gap_to_run"] > 0


def test_cjk_sentences_are_prose_too():
    story = "".join("<p>" + "今日は町で大きな出来事があり、多くの人が集まりました。" * 8 + "</p>"
                    for _ in range(3))
    found = _blocks(f"<h1>見出し</h1>{story}<ul><li><a href='/a'>別の記事</a></li></ul>")
    rows = [_row(b) for b in found]
    assert sum(r["is_prose"] for r in rows) == 3
    assert rows[-1]["after_main_run"] == 1.0


def test_a_page_without_prose_has_no_run():
    rows = prose.prose_features([40, 30, 50], [1.0, 1.0, 0.9], [0.0, 0.0, 0.0], [False] * 3)
    assert all(r[prose.NAMES.index("is_prose")] == 0.0 for r in rows)
    assert all(r[prose.NAMES.index("after_main_run")] == 0.0 for r in rows)
    assert all(r[prose.NAMES.index("main_run_share")] == 0.0 for r in rows)
