"""Reader comments under an article go; a discussion thread's replies stay
(core/convert/html_main_content.py ``prune``, core/convert/thread_url.py).

Real pages: tests/core/pages/4660 (an article with 109 comments, WCXB dev, CC-BY-4.0) and 0559
(a Vanilla forum thread)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from webshelf.core.convert.html_markdown import html_to_markdown
from webshelf.core.convert.thread_url import is_thread_url

PAGES = Path(__file__).resolve().parent / "pages"


def _page(page_id: str) -> tuple[str, dict]:
    html = gzip.decompress((PAGES / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
    return html, json.loads((PAGES / f"{page_id}.json").read_text())


def _snippet(text: str) -> str:
    """Lower-cased words and punctuation as a reader sees them: emphasis marks go without a trace."""
    return re.sub(r"\s+", " ", re.sub(r"[#`|>]+", " ", text.replace("*", ""))).strip().lower()


def _plain(markdown: str) -> str:
    return _snippet(re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown))


def _article(chars: int) -> str:
    sentence = "The story goes on with one more plain sentence of the article. "
    return "".join(f"<p>{sentence * 4}</p>" for _ in range(chars // (4 * len(sentence)) + 1))


def _comments(chars: int) -> str:
    reply = "I agree with this and here is my long reply to the post above. "
    items = "".join(f"<li class='comment-item'>{reply * 3}</li>" for _ in range(chars // (3 * len(reply)) + 1))
    # both a class and an id: Lexbor lists such a node once for "[class]" and once for "[id]"
    return f"<section id='comments' class='comments-area'><ol>{items}</ol></section>"


def _page_with_comments(article: int, comments: int) -> str:
    return (f"<html><body><main><h1>Title</h1><div class='post'>{_article(article)}</div>"
            f"{_comments(comments)}</main></body></html>")


def test_a_comment_section_with_a_class_and_an_id_counts_once_and_goes():
    # 2,000 characters of story and ~1,600 of comments: the rest of the page is well over
    # COMMENT_MIN_REST, so the comments go. Counted twice (once per selector their element
    # matched), they left less than that and stayed.
    markdown = html_to_markdown(_page_with_comments(2000, 1600), "https://example.com/2024/05/story").markdown
    assert "story goes on" in markdown
    assert "my long reply" not in markdown


def test_a_thread_keeps_its_replies():
    html = _page_with_comments(2000, 1600)
    for url in ("https://forum.example.com/topic/12-title", "https://example.com/t/some-title/123",
                "https://example.com/viewtopic.php?t=5"):
        markdown = html_to_markdown(html, url).markdown
        assert "story goes on" in markdown and "my long reply" in markdown, url


@pytest.mark.parametrize(("url", "thread"), [
    ("https://forum.kerbalspaceprogram.com/topic/225132-if-the-forum-comes-to-an-end-soon/", True),
    ("https://www.warriorforum.com/beginners-area/1488296-will-simple-method-work.html", True),
    ("https://open.vanillaforums.com/discussion/39620/higher-logic", True),
    ("https://www.example.com/showthread.php?t=77", True),
    ("https://meta.discourse.org/t/a-slug/1234", True),
    ("https://www.theprairiehomestead.com/2015/07/organic-pest-control-garden-spray.html", False),
    ("https://news.mit.edu/topic/software", False),  # a topic page, not a thread
    ("https://docs.djangoproject.com/en/5.1/topics/db/models/", False),
    ("https://example.com/formula/forumla", False),
    ("http://[::1", False),  # unparsable: no thread
    (None, False),
])
def test_thread_urls(url, thread):
    assert is_thread_url(url) is thread


def test_real_article_drops_its_109_comments_and_keeps_the_story():
    html, page = _page("4660")
    plain = _plain(html_to_markdown(html, page["url"]).markdown)
    for snippet in page["with"]:
        assert _snippet(snippet) in plain
    assert "109 comments" not in plain
    assert len(plain) < 2 * len(_snippet(page["main_content"]))  # was 7× the story with its comments


def test_real_forum_thread_keeps_the_replies():
    html, page = _page("0559")
    plain = _plain(html_to_markdown(html, page["url"]).markdown)
    for snippet in page["with"]:  # the opening post and the replies
        assert _snippet(snippet) in plain
