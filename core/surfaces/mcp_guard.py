"""JSON-RPC 2.0 checks in front of the MCP SDK's stdio transport, so every bad message gets an answer.

The SDK drops what it cannot validate: a line that is not JSON, a batch array, ``params`` that
is not an object, an object or boolean ``id``, a missing or wrong ``jsonrpc``, a non-string
``method`` or arguments nested 100,000 deep get no reply at all — and a client waiting on that
id hangs for ever. ``check_line`` judges each line first, as JSON-RPC 2.0 says a server must:

- not JSON → ``-32700`` Parse error, ``id: null``;
- not an object, an invalid ``id`` (object, array, boolean, fraction), ``jsonrpc`` not ``"2.0"``,
  a ``method`` that is not a string, ``params`` that is neither object nor array → ``-32600``
  Invalid Request, with the id when the message carries a valid one;
- ``params`` an array (MCP takes named parameters only), or nesting deeper than ``MAX_DEPTH``
  → ``-32602`` Invalid params, with the id (the depth is counted by a scan before any parser
  recurses, so 100k-deep arguments cannot raise ``RecursionError``);
- a batch array → one ``-32600`` per element that needs an answer (MCP has no batches), as an
  array; an empty batch → one ``-32600``.

A well-formed notification (no ``id``) is never answered, as JSON-RPC requires. Everything else
goes to the SDK unchanged, and the server keeps serving. ``wire_stdio`` wires this in: it
feeds the SDK's ``stdio_server`` a filtered stdin and a stdout whose writes are serialised, so
a guard answer never tears an SDK frame.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
MAX_DEPTH = 64  # far deeper than any tool's arguments; deep enough that parsers never recurse far
_NO_ID = object()


def _depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in a JSON text, counted outside strings (no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _top_level_id(text: str) -> object:
    """The ``id`` member of a top-level object found by scanning (for a text too deep to parse), or _NO_ID."""
    decoder = json.JSONDecoder()
    depth = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            try:
                key, end = decoder.raw_decode(text, i)
            except ValueError:
                return _NO_ID
            if depth == 1 and key == "id":
                j = end
                while j < n and text[j] in " \t\r\n":
                    j += 1
                if j < n and text[j] == ":":
                    j += 1
                    while j < n and text[j] in " \t\r\n":
                        j += 1
                    if j < n and text[j] not in "[{":
                        try:
                            return decoder.raw_decode(text, j)[0]
                        except ValueError:
                            return _NO_ID
            i = end
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        i += 1
    return _NO_ID


def _valid_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error(code: int, message: str, id_: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_ if _valid_id(id_) else None, "error": {"code": code, "message": message}}


def _check_message(message: object) -> dict[str, Any] | None:
    """The error answer for one decoded message, or None when it may go to the SDK (or, for a
    well-formed notification with bad params, be dropped: see ``check_line``)."""
    if not isinstance(message, dict):
        return error(INVALID_REQUEST, f"Invalid Request: a JSON-RPC message must be an object, not {_kind(message)}")
    has_id = "id" in message
    id_ = message.get("id")
    if has_id and not _valid_id(id_):
        return error(INVALID_REQUEST, f"Invalid Request: id must be a string or an integer, not {_kind(id_)}")
    answer_id = id_ if has_id else None
    if message.get("jsonrpc") != "2.0":
        return error(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0"', answer_id)
    if "method" not in message:
        if has_id and ("result" in message or "error" in message):
            return None  # a response from the client (to a server request): the SDK's
        return error(INVALID_REQUEST, 'Invalid Request: "method" is missing', answer_id)
    if not isinstance(message["method"], str):
        return error(INVALID_REQUEST, f'Invalid Request: "method" must be a string, not {_kind(message["method"])}',
                     answer_id)
    if "params" in message:
        params = message["params"]
        if isinstance(params, list):
            return error(INVALID_PARAMS, "Invalid params: MCP takes named parameters (an object), not an array",
                         answer_id)
        if not isinstance(params, dict):
            return error(INVALID_REQUEST, f'Invalid Request: "params" must be an object, not {_kind(params)}',
                         answer_id)
    return None


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def check_line(line: str) -> dict[str, Any] | list[dict[str, Any]] | None | bool:
    """What to do with one line from the client: ``None`` to pass it to the SDK, ``False`` to
    drop it silently, else the JSON-RPC answer (an object, or an array for a batch)."""
    text = line.strip()
    if not text:
        return False
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:  # the count is a cheap bound
        id_ = _top_level_id(text)
        if id_ is _NO_ID:
            return False if text.startswith("{") and '"method"' in text[:4096] else error(
                INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
        return error(INVALID_PARAMS, f"Invalid params: nested deeper than {MAX_DEPTH} levels", id_)
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return error(PARSE_ERROR, f"Parse error: {exc}"[:200])
    if isinstance(message, list):
        if not message:
            return error(INVALID_REQUEST, "Invalid Request: an empty batch")
        answers = []
        for item in message:
            if isinstance(item, dict) and "id" not in item and isinstance(item.get("method"), str):
                continue  # a notification: never answered
            id_ = item.get("id") if isinstance(item, dict) else None
            answers.append(error(INVALID_REQUEST, "Invalid Request: batches are not supported by MCP; send each "
                                 "message on its own line", id_))
        return answers or False
    verdict = _check_message(message)
    if verdict is not None and isinstance(message, dict) and "id" not in message and isinstance(
            message.get("method"), str) and message.get("jsonrpc") == "2.0":
        return False  # a notification gets no answer, even a bad one
    return verdict


class _SerialisedStdout:
    """The wire to the client: each write is one whole frame, written and flushed under a lock."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._lock = anyio.Lock()

    async def write(self, data: str) -> None:
        async with self._lock:
            await self._raw.write(data)
            await self._raw.flush()

    async def flush(self) -> None:
        return None


class _Replayed(io.RawIOBase):
    """The wire as a raw file: the bytes already read from it first, then ``fd`` (never closed)."""

    def __init__(self, replay: bytes, fd: int) -> None:
        self._replay = replay
        self._fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._replay:
            n = min(len(buffer), len(self._replay))
            buffer[:n], self._replay = self._replay[:n], self._replay[n:]
            return n
        data = os.read(self._fd, len(buffer))
        buffer[:len(data)] = data
        return len(data)


class _DaemonLines:
    """The client's lines, read from ``fd`` by a daemon thread.

    anyio's ``wrap_file`` reads in its worker threads, which are not daemons and cannot be
    interrupted: a server cancelled on SIGTERM (core/surfaces/shutdown.py) then waited for the
    client's next line before it could unwind, and the interpreter's exit waited for that
    thread. A daemon thread handing lines over a small memory stream lets the task be cancelled
    at once and never holds up the exit; at EOF the stream ends, as the file's would."""

    def __init__(self, fd: int, replay: bytes = b"") -> None:
        self._fd = fd
        self._replay = replay  # bytes read from the wire before the SDK (mcp_early.py): first, in order

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        from anyio import from_thread, lowlevel

        send, receive = anyio.create_memory_object_stream[str](16)
        token = lowlevel.current_token()

        def read() -> None:
            try:
                with io.TextIOWrapper(io.BufferedReader(_Replayed(self._replay, self._fd)), encoding="utf-8",
                                      errors="replace") as wire:
                    for line in iter(wire.readline, ""):
                        from_thread.run(send.send, line, token=token)
            except Exception:  # noqa: BLE001 — the server is gone (stream closed, loop finished): stop reading
                pass
            finally:
                try:
                    from_thread.run_sync(send.close, token=token)
                except Exception:  # noqa: BLE001 — the loop has finished already
                    pass

        threading.Thread(target=read, name="webshelf-mcp-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line


class _GuardedStdin:
    """Lines from the client; bad ones are answered on stdout here and never reach the SDK."""

    def __init__(self, raw: Any, stdout: _SerialisedStdout) -> None:
        self._raw = raw
        self._stdout = stdout

    def __aiter__(self) -> AsyncIterator[str]:  # an async generator is the iterator
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._raw:
            verdict = check_line(line)
            if verdict is None:
                yield line
            elif verdict is not False:
                await self._stdout.write(json.dumps(verdict, separators=(",", ":")) + "\n")


class _Watched:
    """The client's lines, each shown to ``mcp_early.watch_line`` on its way (to record the
    SDK's tools/list frame)."""

    def __init__(self, lines: Any, early: Any) -> None:
        self._lines_in = lines
        self._early = early

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        from webshelf.core.surfaces.mcp_early import watch_line

        index = 0
        async for line in self._lines_in:
            watch_line(self._early, line, index)
            index += 1
            yield line


class _SdkStdout:
    """The SDK's frames on their way to the wire, past ``mcp_early.on_sdk_frame``: its response
    to an ``initialize`` answered before it was imported is dropped (and recorded when not)."""

    def __init__(self, wire: _SerialisedStdout, early: Any) -> None:
        self._wire = wire
        self._early = early

    async def write(self, data: str) -> None:
        from webshelf.core.surfaces.mcp_early import on_sdk_frame

        if on_sdk_frame(self._early, data):
            await self._wire.write(data)

    async def flush(self) -> None:
        return None


@asynccontextmanager
async def wire_stdio(early: Any = None, guard: bool = True) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's ``stdio_server`` streams on the wire, ``check_line`` in front of it (``guard``),
    the bytes ``early`` read before the SDK replayed first (core/surfaces/mcp_early.py).

    Like the SDK, the wire is moved to private descriptors while serving — fd 0 reads the null
    device and fd 1 goes to stderr — so a handler's stray ``print`` never corrupts a frame."""
    from mcp.server.stdio import stdio_server

    wire_in, wire_out = os.dup(0), os.dup(1)
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    stdin: Any = _DaemonLines(wire_in, early.replay if early is not None else b"")
    if early is not None:
        stdin = _Watched(stdin, early)
    stdout = _SerialisedStdout(anyio.wrap_file(open(wire_out, "w", encoding="utf-8", closefd=False)))
    sdk_out = stdout if early is None else _SdkStdout(stdout, early)
    lines = _GuardedStdin(stdin, stdout) if guard else stdin
    try:
        async with stdio_server(stdin=lines, stdout=sdk_out) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

