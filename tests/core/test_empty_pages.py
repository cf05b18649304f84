"""An empty page is never served silently from the cache (issue 12, item 6).

An SPA shell has no readable text: the first call says so in a note. Its stored copy used to be
reused for ``cache.max_age`` with no note at all, so the agent saw an empty page and no reason.
Now an empty copy is never reused: every call fetches again and carries the same note.
"""

from __future__ import annotations

import pytest

import uuid

from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.core.extract import EMPTY_NOTE, web_extract_sync
from tests.loopback import Response

SPA_SHELL = (b"<!doctype html><html><head><title>App</title><script src=\"/static/app.js\"></script></head>"
             b"<body><div id=\"root\"></div><noscript>You need to enable JavaScript to run this app.</noscript>"
             b"</body></html>")



@pytest.fixture
def config(config):
    """These tests are about the local backend alone: no fallback chain (that is
    tests/core/test_browser_fallback.py), so a timeout, a 403 or a shell stays local."""
    config.web.fallback = ["local"]
    return config


def test_an_spa_shell_gets_its_note_on_every_call_and_is_fetched_again(server, config):
    path = f"/empty/{uuid.uuid4().hex}"
    url = server.route(path, Response(SPA_SHELL))
    first = web_extract_sync([url], config=config)[0]
    assert first.ok and not first.cached and EMPTY_NOTE in first.notes
    assert first.content == f"---\n[webshelf] note: {EMPTY_NOTE}\n"  # the note, inside the budget; no page text
    second = web_extract_sync([url], config=config)[0]
    assert second.ok and not second.cached and EMPTY_NOTE in second.notes and second.content == first.content
    assert server.hits[path] == 2  # fetched again, not served from the empty copy
    assert second.path == first.path  # same (empty) content: the same stored file


def test_a_page_that_gains_text_is_then_reused_normally(server, config):
    path = f"/empty/{uuid.uuid4().hex}"
    url = server.route(path, Response(SPA_SHELL))
    assert EMPTY_NOTE in web_extract_sync([url], config=config)[0].notes
    server.route(path, Response(b"<html><body><main><h1>Ready</h1><p>Rendered text.</p></main></body></html>"))
    second = web_extract_sync([url], config=config)[0]
    third = web_extract_sync([url], config=config)[0]
    assert "Rendered text." in second.content and EMPTY_NOTE not in second.notes and not second.cached
    assert third.cached and third.content.startswith(second.content) and server.hits[path] == 2


def test_the_cli_prints_the_note_on_both_calls(server, home_config_allows_loopback):
    url = server.route(f"/empty/{uuid.uuid4().hex}", Response(SPA_SHELL))
    outputs = [CliRunner().invoke(main, ["extract", url]) for _ in range(2)]
    assert [o.exit_code for o in outputs] == [0, 0]
    assert all(f"note: {EMPTY_NOTE}" in o.output and "served from the stored copy" not in o.output for o in outputs)
