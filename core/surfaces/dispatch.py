"""``call_tool(name, arguments) -> str``: run one agent tool call and return what the model sees.

Any framework wires webshelf in with ``tool_definitions()`` for the schemas and this for the
calls; the MCP server uses ``run_tool`` (the same thing plus structured fields). Arguments are
checked against the tool's pydantic model (``core.tools``); every failure — unknown tool, bad
arguments, a bad path, a failed URL — comes back as ``error[code]: message`` text the model
can act on, never as an exception into the agent loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from webshelf.core.bridge import run_sync
from webshelf.core.config import Config, load_config
from webshelf.errors import InputError, WebshelfError, clip
from webshelf.core.extract import web_extract
from webshelf.core.models import ExtractResult
from webshelf.core.read import read_file
from webshelf.core.search_page import search_page
from webshelf.core.surfaces.render import render_results
from webshelf.core.surfaces.tools import TOOLS, ReadFileArgs, SearchPageArgs, ToolArgs, WebExtractArgs


log = logging.getLogger("webshelf")


@dataclass
class ToolOutput:
    """The text for the model, optional structured fields, and whether the call failed."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False


def error_text(exc: WebshelfError) -> str:
    return f"error[{exc.code}]: {exc.message}"


def parse_arguments(name: str, arguments: Mapping[str, Any] | str | None) -> ToolArgs:
    """Validated arguments for tool ``name``; accepts a dict or a JSON object string (as
    OpenAI-style APIs deliver them)."""
    spec = TOOLS.get(name)
    if spec is None:
        raise InputError(f"unknown tool {clip(name, quote=True)}; the tools are {', '.join(TOOLS)}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise InputError(f"{clip(name)}: arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InputError(f"{clip(name)}: arguments must be a JSON object, got {type(arguments).__name__}")
    try:
        return spec.args.model_validate(dict(arguments))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {_problem(err)}" for err in exc.errors())
        raise InputError(f"{name}: {problems}") from None


def _problem(err: Mapping[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown argument"
    if err["type"] == "missing":
        return "required argument is missing"
    return f"{err['msg']} (got {clip(err.get('input'), quote=True)})"


async def extract_for_agent(args: WebExtractArgs, config: Config, runtimes: Sequence[Any] = ()) -> list[ExtractResult]:
    """The one place agent tools call the extract pipeline (MCP server and dispatcher alike);
    each stored page is published to ``runtimes`` before the tool returns, as the CLI does."""
    return await web_extract(args.urls, char_limit=args.char_limit, fresh=args.fresh,
                             backend=args.backend, config=config, runtimes=runtimes)


def _extract_output(results: list[ExtractResult], budget: int) -> ToolOutput:
    """The shared rendering (core/surfaces/render.py: one block per URL, each within
    ``budget``) plus the structured fields MCP clients get."""
    fields = ("url", "final_url", "title", "path", "truncated", "total_chars", "total_lines", "backend", "error", "notes")
    data = {"results": [r.model_dump(mode="json", include=set(fields)) for r in results]}
    return ToolOutput(render_results(results, budget, surface="tool"), data, is_error=all(r.error for r in results))


async def run_tool(name: str, arguments: Mapping[str, Any] | str | None, *, config: Config | None = None,
                   runtimes: Sequence[Any] = ()) -> ToolOutput:
    """Run one tool call; failures come back as an error ToolOutput, not an exception."""
    try:
        args = parse_arguments(name, arguments)
        config = config or load_config()
        if isinstance(args, WebExtractArgs):
            budget = args.char_limit or config.web.extract_char_limit
            return _extract_output(await extract_for_agent(args, config, runtimes), budget)
        if isinstance(args, ReadFileArgs):
            text = await asyncio.to_thread(read_file, args.path, args.offset, args.limit, config=config)
            return ToolOutput(text)
        if isinstance(args, SearchPageArgs):
            text = await asyncio.to_thread(
                search_page, args.path, args.pattern, args.max_results, regex=args.regex,
                case_sensitive=args.case_sensitive, context=args.context, config=config)
            return ToolOutput(text)
        raise InputError(f"unknown tool {name!r}")  # pragma: no cover — TOOLS and this function agree
    except WebshelfError as exc:
        return ToolOutput(error_text(exc) + "\n", is_error=True)
    except Exception as exc:  # noqa: BLE001 — a bug must reach the model as text, not crash its loop
        log.exception("tool %s failed unexpectedly", name)
        return ToolOutput(f"error[internal_error]: {clip(name)} failed: {type(exc).__name__}: {clip(exc, 1000)}\n",
                          is_error=True)


def call_tool(name: str, arguments: Mapping[str, Any] | str | None = None, *, config: Config | None = None,
              runtimes: Sequence[Any] = ()) -> str:
    """Run one tool call and return the text to hand back to the model (also inside a
    running event loop: core/bridge.py, the same bridge as ``web_extract_sync``)."""
    return run_sync(run_tool(name, arguments, config=config, runtimes=runtimes)).text
