"""The budget is what the agent receives, on every surface: ``call_tool`` and the real MCP
stdio server (``webshelf mcp serve`` driven by the MCP SDK's own client).

Notes (served from the cache, the stored copy was cut, a sandbox did not get the page) used to
be appended after the content: 2,080 characters at ``char_limit`` 2,000, and 3,201 at 3,000
with the cut note shown twice. Hypothesis varies the limit, the page, the note kinds, the
home's path (length; quotes, backslashes, spaces, ``$``, non-ASCII) and ``web.wrap_untrusted``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import re
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webshelf.core.config import Config
from webshelf.core.surfaces.dispatch import call_tool, run_tool
from webshelf.core.sandbox import open_runtime
from tests.loopback import Response

HINT = re.compile(r'read_file path=("(?:[^"\\]|\\.)*") offset=(\d+) limit=(\d+)$', re.M)
NOTE_MARKS = {"cached": "served from the stored copy fetched", "cut": "Stored copy cut at 10,000 characters",
              "publish": "publish to runtime 'local' failed"}
ODD = ['a "quoted" dir', "back\\slash", "with space", "$HOME", "naïve-日本", "it's"]
_ids = itertools.count()


def make_home(base: Path, odd: bool, length: int) -> Path:
    """A fresh webshelf home whose path has about ``length`` characters (components ≤ 200;
    SQLite cannot open an index whose path passes ~500 bytes, so homes stay below that)."""
    name = (" ".join(ODD) if odd else "home") + f"-{next(_ids)}"
    home = base / name
    while len(str(home)) < length:
        home = home / ("d" * min(200, length - len(str(home)) + 1))
    return home


def page(n_lines: int, width: int) -> str:
    return "".join(f"## Part {i}\n" if i % 37 == 0 else f"line {i} " + "w" * width + "\n" for i in range(n_lines))


def check_agent_text(text: str, limit: int, kinds: set[str], wrapped: bool) -> None:
    """Within the budget; each note once; the hint (if any) names a page read_file can open."""
    assert len(text) <= limit, (len(text), limit)
    for kind, mark in NOTE_MARKS.items():
        assert text.count(mark) == (1 if kind in kinds else 0), (kind, text[-1_500:])
    assert text.startswith("<<<UNTRUSTED WEB CONTENT id=") == wrapped
    hint = HINT.search(text)
    if hint:
        [path] = shlex.split(hint[1])
        assert json.loads(hint[1]) == path and f"Full text: {path}\n" in text and Path(path).is_file()


@pytest.fixture(scope="module")
def homes(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("budget-homes")


settings_surface = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings_surface
@given(limit=st.integers(2_000, 20_000), n_lines=st.integers(1, 400), width=st.integers(10, 120),
       kinds=st.sets(st.sampled_from(sorted(NOTE_MARKS))), odd=st.booleans(), path_len=st.integers(20, 420),
       wrapped=st.booleans())
def test_call_tool_keeps_the_budget_with_every_note(server, homes, limit, n_lines, width, kinds, odd, path_len,
                                                    wrapped):
    home = make_home(homes, odd, path_len)
    config = Config().with_home(home)
    config.web.allow_private, config.web.wrap_untrusted = True, wrapped
    body = page(n_lines, width)
    if "cut" in kinds:
        config.cache.max_file_chars = 10_000
        body = page(max(n_lines, 10_000 // (width + 10) + 20), width)
    url = server.route(f"/budget/{next(_ids)}.md", Response(body.encode(), headers={"Content-Type": "text/markdown"}))
    runtimes = [open_runtime("local", config)] if "publish" in kinds else []  # a real runtime, never started
    args = {"urls": [url], "char_limit": limit}
    if "cached" in kinds:
        first = call_tool("web_extract", args, config=config)
        check_agent_text(first, limit, kinds - {"cached", "publish"}, wrapped)
    text = call_tool("web_extract", args, config=config, runtimes=runtimes)
    check_agent_text(text, limit, kinds, wrapped)
    out = asyncio.run(run_tool("web_extract", args, config=config, runtimes=runtimes))
    [row] = out.data["results"]
    assert len(out.text) <= limit and all(" ".join(n.split())[:300] in out.text for n in row["notes"])


def test_the_reported_cases_now_fit(server, home):
    """The issue's numbers: 2,080 at 2,000 (a cached note after a whole page) and 3,201 at 3,000
    (cached and cut notes, the cut note twice)."""
    config = Config().with_home(home)
    config.web.allow_private, config.cache.max_file_chars = True, 10_000
    short = server.route("/budget/short.md", Response(("x" * 79 + "\n").encode() * 25, headers={"Content-Type": "text/markdown"}))
    long = server.route("/budget/long.md", Response(page(400, 60).encode(), headers={"Content-Type": "text/markdown"}))
    for url, limit in ((short, 2_000), (long, 3_000)):
        call_tool("web_extract", {"urls": [url], "char_limit": limit}, config=config)
        again = call_tool("web_extract", {"urls": [url], "char_limit": limit}, config=config)
        assert len(again) <= limit and again.count(NOTE_MARKS["cached"]) == 1
        assert again.count("Stored copy cut at") == (1 if url == long else 0)


# --- the real MCP stdio surface ---------------------------------------------------------------

class McpClient:
    """One ``webshelf mcp serve`` subprocess and an SDK ClientSession, kept open on a background
    event loop so that a synchronous hypothesis test can make many calls in one session."""

    def __init__(self, home: Path, config: dict[str, Any]) -> None:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from tests.core.test_mcp import WEBSHELF, subprocess_home

        env = subprocess_home(home)
        (home / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
        self.params = StdioServerParameters(command=str(WEBSHELF), args=["mcp", "serve"], env=env)
        self.errlog = open(home.parent / f"mcp-stderr-{next(_ids)}.log", "w")
        self._client, self._session = stdio_client, ClientSession
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready: concurrent.futures.Future = concurrent.futures.Future()
        self.main = asyncio.run_coroutine_threadsafe(self._run(), self.loop)
        self.session = self.ready.result(timeout=120)

    async def _run(self) -> None:
        self.stop = asyncio.Event()
        try:
            async with self._client(self.params, errlog=self.errlog) as (read, write):
                async with self._session(read, write) as session:
                    await session.initialize()
                    self.ready.set_result(session)
                    await self.stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(self.session.call_tool(name, arguments), self.loop).result(timeout=120)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        try:
            self.main.result(timeout=60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=60)
            self.errlog.close()


@pytest.fixture(scope="module", params=[(False, 30), (True, 400)], ids=["plain-home", "odd-long-home-wrapped"])
def mcp_client(request, homes):
    pytest.importorskip("mcp")
    wrapped, length = request.param
    home = make_home(homes, wrapped, length)
    home.mkdir(parents=True)
    client = McpClient(home, {"web": {"allow_private": True, "wrap_untrusted": wrapped},
                              "cache": {"max_file_chars": 10_000}})
    client.wrapped = wrapped
    yield client
    client.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(2_000, 20_000), n_lines=st.integers(1, 400), width=st.integers(10, 120), cached=st.booleans())
def test_mcp_stdio_keeps_the_budget_with_every_note(server, mcp_client, limit, n_lines, width, cached):
    body = page(n_lines, width)
    url = server.route(f"/budget/mcp-{next(_ids)}.md", Response(body.encode(), headers={"Content-Type": "text/markdown"}))
    args = {"urls": [url], "char_limit": limit}
    if cached:
        mcp_client.call("web_extract", args)
    result = mcp_client.call("web_extract", args)
    [block] = result.content
    [row] = result.structured_content["results"]
    kinds = ({"cached"} if cached else set()) | ({"cut"} if len(body) > 10_000 else set())
    assert not result.is_error and row["error"] is None
    check_agent_text(block.text, limit, kinds, mcp_client.wrapped)
    assert row["cached"] if "cached" in row else True


def test_an_error_quoting_a_very_long_url_stays_within_the_budget(server, config):
    url = server.url("/budget/missing-" + "q" * 3_000)
    text = call_tool("web_extract", {"urls": [url], "char_limit": 2_000}, config=config)
    assert text.startswith("error[http_status]: ") and len(text) <= 2_000
    assert "characters left out]" in text  # the echoed URL is clipped (errors.clip) before any budget cut
