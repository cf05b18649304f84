"""A video's or an audio's fallback content is not served (``core.convert.html_media``): on a
real page, tests/core/pages/4027 (WCXB dev, © 2026 Murrough Foley, CC-BY-4.0), served as the
local backend serves it, and on a small hand-written page."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from webshelf.core.convert.by_type import to_markdown
from webshelf.core.convert.html_markdown import html_to_markdown

PAGES = Path(__file__).resolve().parent / "pages"


def test_a_videos_fallback_caption_is_not_served_again_and_its_link_stays():
    """4027 (NASA SVS visualization page): each ``<video>`` holds its caption again for browsers
    that cannot play it ("Data visualization of predicted wheat and maize yields…");
    html-to-markdown wrote it after the ``[video](…)`` link, so each caption came twice
    (precision 0.88)."""
    body = gzip.decompress((PAGES / "4027.html.gz").read_bytes())
    truth = json.loads((PAGES / "4027.json").read_text())
    markdown = to_markdown(body, "text/html; charset=utf-8", truth["url"]).markdown
    assert markdown.count("Data visualization of predicted wheat and maize") == 1  # was 2
    assert markdown.count("Data visualization of predicted wheat and corn") == 1
    assert "[video](https://svs.gsfc.nasa.gov/vis/a000000/a004900/a004974/AgMapMaize.mp4)" in markdown
    for snippet in truth["with"]:  # (one is a URL: the page links it under other text)
        assert snippet in markdown or snippet.startswith("https://"), snippet


def test_fallback_text_goes_the_media_link_and_the_page_text_stay():
    prose = "<p>" + "This sentence is part of the story and carries its words along. " * 8 + "</p>"
    html = (f"<html><body><article><h1>Title</h1>{prose}"
            '<video controls><source src="/v.mp4" type="video/mp4">Your browser does not support the video tag.'
            ' <a href="/v.mp4">Download</a></video>'
            '<audio src="/a.mp3">No audio support.</audio>'
            f"{prose}</article></body></html>")
    markdown = html_to_markdown(html, "https://example.org/post").markdown
    assert "[video](https://example.org/v.mp4)" in markdown and "[audio](https://example.org/a.mp3)" in markdown
    assert "does not support" not in markdown and "No audio support" not in markdown
    assert markdown.count("carries its words along") == 16
