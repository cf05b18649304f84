"""``prune``'s hidden step counts each hidden element once: Lexbor lists a node once per selector
of ``_HIDDEN`` it matches, so ``<div hidden aria-hidden=true>`` came twice and its text counted
twice toward the 60% of the page that keeps every hidden element (a streamed SSR page whose
content waits in hidden placeholders). Counted once, a widget under a third of the page goes."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.html_main_content import prune

STORY = "<p>" + "A visible sentence of the story. " * 20 + "</p>"
WIDGET = "<p>" + "Hidden widget text. " * 20 + "</p>"


def _pruned(markers: str) -> str:
    tree = LexborHTMLParser(f"<html><body>{STORY}<div {markers}>{WIDGET}</div></body></html>")
    prune(tree, tree.body)
    return tree.body.html


def test_a_node_with_two_hidden_markers_is_counted_once():
    # the widget is ~38% of the page: once it is under 60% and goes; twice (~76%) it stayed
    assert "Hidden widget" not in _pruned("hidden aria-hidden=true")
    assert "Hidden widget" not in _pruned("hidden")


def test_hidden_text_over_the_share_stays():
    html = f"<html><body>{STORY}<div hidden>{WIDGET * 3}</div></body></html>"
    tree = LexborHTMLParser(html)
    prune(tree, tree.body)
    assert "Hidden widget" in tree.body.html and "visible sentence" in tree.body.html
