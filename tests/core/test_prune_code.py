"""Class names inside code are a syntax highlighter's, not page chrome: ``prune`` never removes a
code block's comment tokens or tokens whose class reads like a boilerplate word
(core/convert/html_main_content.py ``_in_code``; WCXB dev 0437 lost every comment of its git
examples to the reader-comment rule)."""

from __future__ import annotations

import pytest

from webshelf.core.convert.html_markdown import html_to_markdown

STORY = "<p>" + "A plain sentence of the tutorial, explaining the commands below. " * 20 + "</p>"


@pytest.mark.parametrize("code", [
    '<code class="language-bash hljs"><span class="hljs-comment"># stage every file</span>\ngit add -A</code>',
    '<code class="language-js"><span class="token comment">// stage every file</span>\nrun();</code>',
    '<div class="highlight"><pre><span class="c1"># stage every file</span>\n'
    '<span class="n">re</span><span class="o">.</span><span class="n">sub</span>(<span class="sr">/x+/</span>)</pre></div>',
])
def test_highlighted_comments_and_tokens_stay_in_the_code_block(code):
    block = code if code.startswith("<div") else f"<pre>{code}</pre>"
    html = f"<html><body><article><h1>Git</h1>{STORY}{block}{STORY}</article></body></html>"
    markdown = html_to_markdown(html, "https://example.com/posts/git").markdown
    assert "stage every file" in markdown
    if "sr" in code:
        assert "/x+/" in markdown  # Pygments' String.Regex token: "sr" is also a screen-reader class
