"""``webshelf mcp serve``: the three agent tools over the Model Context Protocol (stdio).

A thin adapter on the official MCP Python SDK's low-level ``Server``: the tool list comes
from ``core.tools`` (the same schemas ``webshelf tools`` prints) and every call goes through
``core.dispatch.run_tool`` (the same code as ``call_tool``), so MCP clients and other
frameworks see identical behaviour. The SDK is optional (extra ``webshelf[mcp]``) and is
imported only here; without it the command says which package to install.

A server that cannot start (a ``--runtime`` that does not start, a bad config) must not just
close the pipe — the client would only see "connection closed". ``refuse_stdio`` speaks the
protocol far enough to answer: every request, ``initialize`` first, gets a JSON-RPC error
response whose message is webshelf's ``error[code]: message`` (the SDK's client raises it as
``MCPError`` from ``initialize()``), until the client disconnects.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from webshelf.errors import MissingPackageError, WebshelfError
from webshelf.core.surfaces.tools import TOOLS

if TYPE_CHECKING:
    from webshelf.core.config import Config

SERVER_NAME = "webshelf"
INSTRUCTIONS = (
    "webshelf reads web pages for you as clean Markdown. Call web_extract with URLs. Long pages come "
    "back as a head and a tail window plus a footer naming the stored full text (an absolute path), "
    "the omitted line ranges and the headings inside them; continue with read_file(path, offset, limit) "
    "or jump with search_page(path, pattern). The stored path is also readable with your own file "
    "tools in the sandbox where your code runs."
)
_HINTS = {  # (read_only, open_world): web_extract reaches the web; the others only read the shelf
    "web_extract": (False, True),
    "read_file": (True, False),
    "search_page": (True, False),
}


def require_sdk() -> None:
    """Raise ``MissingPackageError`` now if the SDK is missing (before anything starts)."""
    _sdk()


def _sdk() -> tuple[Any, Any, Any]:
    try:
        import mcp_types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise MissingPackageError(
            "webshelf mcp serve needs the MCP Python SDK (package 'mcp'), which is not installed; "
            "install it with: pip install 'webshelf[mcp]'  (or: pip install mcp)",
            package="mcp",
        ) from None
    return mcp_types, Server, stdio_server


def _version() -> str:
    try:
        return metadata.version("webshelf")
    except metadata.PackageNotFoundError:  # pragma: no cover — running from a plain checkout
        return "0"


def build_server(config: Config, runtimes: Sequence[Any] = ()) -> Any:
    """An MCP ``Server`` exposing web_extract, read_file and search_page under ``config``;
    pages web_extract stores are published to ``runtimes`` before each call returns."""
    types, Server, _ = _sdk()
    tools = [
        types.Tool(
            name=spec.name, description=spec.description, input_schema=spec.input_schema(),
            annotations=types.ToolAnnotations(read_only_hint=_HINTS[spec.name][0],
                                              open_world_hint=_HINTS[spec.name][1]),
        )
        for spec in TOOLS.values()
    ]

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: Any) -> Any:
        # the extract pipeline loads with the first call, not before ``initialize`` is answered:
        # a client waits for start-up, and a session that only reads never needs it (issue 15)
        from webshelf.core.surfaces.dispatch import run_tool

        out = await run_tool(params.name, params.arguments, config=config, runtimes=runtimes)
        return types.CallToolResult(content=[types.TextContent(type="text", text=out.text)],
                                    structured_content=out.data, is_error=out.is_error)

    return Server(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def startup_error(exc: WebshelfError) -> str:
    return f"webshelf could not start: error[{exc.code}]: {exc.message}"


async def refuse_stdio(exc: WebshelfError, early: Any = None) -> None:
    """Answer each request on stdin with a JSON-RPC error carrying ``exc`` until EOF (the
    bytes ``early`` read before the SDK first: core/surfaces/mcp_early.py)."""
    types, _, stdio_server = _sdk()
    from mcp.shared.message import SessionMessage

    error = types.ErrorData(code=types.INTERNAL_ERROR, message=startup_error(exc),
                            data={"code": exc.code, "message": exc.message})
    if early is not None:
        from webshelf.core.surfaces.mcp_guard import wire_stdio

        stdio = wire_stdio(early, guard=False)
    else:
        stdio = stdio_server()
    async with stdio as (read_stream, write_stream):
        async with read_stream, write_stream:
            async for item in read_stream:
                message = getattr(item, "message", None)  # an unparsable line arrives as an Exception
                if isinstance(message, types.JSONRPCRequest):
                    await write_stream.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))


async def serve_stdio(config: Config, runtimes: Sequence[Any] = (), early: Any = None) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects; malformed JSON-RPC is answered
    in front of the SDK (core/surfaces/mcp_guard.py), so no client waits for ever on an id.
    ``early``: what was read (and perhaps answered) before the SDK (core/surfaces/mcp_early.py)."""
    _sdk()
    from webshelf.core.surfaces.mcp_guard import wire_stdio

    server = build_server(config, runtimes)
    async with wire_stdio(early) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
