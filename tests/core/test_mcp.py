"""`webshelf mcp serve` spawned as a subprocess and driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from webshelf.core.surfaces.tools import TOOLS
from tests.loopback import Response

WEBSHELF = Path(sys.executable).with_name("webshelf")
PAGE = "# Manual\n\n" + "".join(
    (f"## Chapter {i // 400}\n\n" if i % 400 == 0 else "") + f"entry {i}: " + ("the hidden gem\n" if i == 2_222 else "text\n")
    for i in range(1, 4_001))


def subprocess_home(home: Path) -> dict[str, str]:
    """Environment for a webshelf subprocess: its own home with a config.yaml. Tests fetch
    from loopback addresses, so network-policy keys that tests need belong in this one place."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"allow_private": True}}))
    return {"WEBSHELF_HOME": str(home), "PATH": os.environ.get("PATH", "")}


def in_session(home: Path, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        params = StdioServerParameters(command=str(WEBSHELF), args=["mcp", "serve"], env=subprocess_home(home))
        with open(home.parent / "mcp-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return asyncio.run(run())


def text_of(result: Any) -> str:
    [block] = result.content
    assert block.type == "text"
    return block.text


def test_tools_are_listed_with_the_shared_definitions(home):
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = in_session(home, body)
    assert [t.name for t in tools] == ["web_extract", "read_file", "search_page"]
    for tool in tools:
        spec = TOOLS[tool.name]
        assert (tool.description, tool.input_schema) == (spec.description, spec.input_schema())
    assert [t.annotations.read_only_hint for t in tools] == [False, True, True]


def test_extract_then_read_the_omitted_range_then_search(server, home):
    url = server.route("/mcp/manual.md", Response(PAGE.encode(), headers={"Content-Type": "text/markdown"}))
    gem = PAGE.split("\n").index("entry 2222: the hidden gem") + 1

    async def body(session: ClientSession) -> Any:
        extracted = await session.call_tool("web_extract", {"urls": [url], "char_limit": 5_000})
        [row] = extracted.structured_content["results"]
        read = await session.call_tool("read_file", {"path": row["path"], "offset": gem - 1, "limit": 3})
        found = await session.call_tool("search_page", {"path": row["path"], "pattern": "Hidden Gem"})
        return extracted, row, read, found

    extracted, row, read, found = in_session(home, body)
    window = text_of(extracted)
    assert not extracted.is_error and len(window) <= 5_000
    assert (row["url"], row["truncated"], row["total_lines"], row["error"]) == (url, True, PAGE.count("\n"), None)
    assert row["total_chars"] == len(PAGE) and Path(row["path"]).read_text() == PAGE
    assert f"Full text: {row['path']}\n" in window and "## Chapter 5" in window  # an omitted heading in the outline
    assert f'read_file path="{row["path"]}" offset=' in window
    assert gem > window.count("\n")  # the gem is in the omitted range
    assert text_of(read) == f"{gem - 1}|entry 2221: text\n{gem}|entry 2222: the hidden gem\n{gem + 1}|entry 2223: text\n"
    assert text_of(found).splitlines()[:4] == [
        f"1 matching line for text 'Hidden Gem' (ignoring case) in {row['path']}:",
        f" {gem - 1}|entry 2221: text", f">{gem}|entry 2222: the hidden gem", f" {gem + 1}|entry 2223: text"]


def test_errors_reach_the_client_as_tool_errors(server, home):
    web = home / "cache" / "web"

    async def body(session: ClientSession) -> Any:
        calls = {
            "bad path": ("read_file", {"path": "/etc/passwd"}),
            "bad url": ("web_extract", {"urls": ["not a url"]}),
            "too many": ("web_extract", {"urls": [server.url(f"/mcp/{i}") for i in range(21)]}),
            "bad regex": ("search_page", {"path": "/nowhere.md", "pattern": "(", "regex": True}),
            "bad argument": ("read_file", {"path": "x.md", "offset": 0}),
            "unknown tool": ("browse", {}),
        }
        return {k: await session.call_tool(name, args) for k, (name, args) in calls.items()}

    results = in_session(home, body)
    assert all(r.is_error for r in results.values())
    assert text_of(results["bad path"]) == (
        f"error[path_outside_cache]: /etc/passwd: read_file only reads pages stored in {web}; "
        "use the path from a webshelf footer\n")
    assert text_of(results["bad url"]) == (
        "error[invalid_url]: 'not a url' is not an absolute http(s) URL; write it like https://example.com/page\n")
    assert results["bad url"].structured_content["results"][0]["error"]["code"] == "invalid_url"
    assert text_of(results["too many"]) == (
        "error[invalid_input]: got 21 URLs; one call takes 1 to 20 (web.max_urls) — split the list\n")
    assert text_of(results["bad regex"]).startswith("error[invalid_input]: bad regular expression '(': missing )")
    assert text_of(results["bad argument"]).startswith("error[invalid_input]: read_file: offset: Input should be greater")
    assert text_of(results["unknown tool"]).startswith("error[invalid_input]: unknown tool 'browse'")
    assert server.hits.get("/mcp/0") is None  # a refused call fetched nothing


def test_without_the_sdk_the_command_names_the_package_to_install(home):
    hide_sdk = "import sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; from webshelf.core.surfaces.cli import main; main(['mcp', 'serve'])"
    proc = subprocess.run([sys.executable, "-c", hide_sdk], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **subprocess_home(home)}, stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("error[missing_package]: webshelf mcp serve needs the MCP Python SDK (package 'mcp'), which is not installed; "
                           "install it with: pip install 'webshelf[mcp]'  (or: pip install mcp)\n")


def test_a_server_that_cannot_start_answers_initialize_with_the_reason(home):
    """``mcp serve --runtime local`` with bwrap missing: the client's initialize gets the reason
    as a JSON-RPC error (MCPError), not a closed pipe; stderr has the same error line."""
    from mcp.shared.exceptions import MCPError

    env = subprocess_home(home)
    (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"local": {"type": "local", "bwrap": "/nonexistent/bwrap"}}}))

    async def run() -> MCPError:
        params = StdioServerParameters(command=str(WEBSHELF), args=["mcp", "serve", "--runtime", "local"], env=env)
        with open(home.parent / "mcp-refused.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    try:
                        await session.initialize()
                    except MCPError as exc:
                        return exc
        raise AssertionError("initialize succeeded")

    exc = asyncio.run(run())
    reason = "error[runtime_unavailable]: runtime 'local': bubblewrap ('/nonexistent/bwrap') is not installed or not on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap) or set runtimes.local.bwrap to its path. To run without a sandbox on purpose, set runtimes.local.sandbox: none"
    assert exc.error.message == f"webshelf could not start: {reason}"
    assert exc.error.data["code"] == "runtime_unavailable"
    assert (home.parent / "mcp-refused.log").read_text().startswith(reason + "\n")


def test_the_old_spelling_serves_too_with_a_note(home):
    hide_sdk = "import sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; from webshelf.core.surfaces.cli import main; main(['mcp'])"
    proc = subprocess.run([sys.executable, "-c", hide_sdk], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **subprocess_home(home)}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == "note: `webshelf mcp` is deprecated; use `webshelf mcp serve`"
