"""``webshelf mcp serve`` answers ``initialize`` before the MCP SDK is imported (issue 15: ≤ 350 ms).

Why: a client waits for the ``initialize`` answer before it does anything, and importing the
SDK (pydantic models for every protocol version) plus validating the config costs over a
second. The answer itself depends only on the negotiated protocol version and on this
installation, so it can be given from a **frame snapshot**: the SDK's own response bytes, kept
from an earlier full start in ``<home>/cache/mcp-initialize.json`` and keyed by webshelf's,
the SDK's and pydantic's versions and the size and mtime of the modules that build it.

The first line is read raw from fd 0 and answered early only when nothing could make the SDK
answer differently: no ``--runtime``; the config absent (defaults) or matched by a valid
snapshot (core/config_snapshot.py), so its validation cannot fail; the line is a plain
``initialize`` request (``plain_initialize``: a shape the SDK accepts, an id written the same
by ``json`` and pydantic); and a frame for the negotiated version is stored. Then the real
server starts in this process on a stdin that replays every byte read here first, and the
SDK's own response to that id is dropped from stdout (mcp_guard.py) — compared with what was
sent: a difference is reported on stderr and the SDK's frame replaces the snapshot. Anything
else answers nothing here: the bytes are replayed to today's path, which records the SDK's
frame for the next start.

A plain ``tools/list`` (no cursor) that follows within ``NEXT_WAIT_S`` — after
``notifications/initialized`` or not — is answered the same way from the SDK's stored
tools/list frame for that version (its schemas read tools.py, config.py, read.py and
search_page.py, which are in the key); the SDK's own answer is dropped and compared likewise.
Waiting longer would hold up the SDK's import for a client that does something else next.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from webshelf.core.config_paths import default_home

FORMAT = 1
NAME = "mcp-initialize.json"
HEAD = '{"jsonrpc":"2.0","id":'  # how the SDK's stdio transport starts every response frame
MAX_LINE = 64 * 1024  # an initialize line is a few hundred bytes; a longer first line goes the full path
MAX_BRACES = 64  # mcp_guard.MAX_DEPTH: below it the guard passes a line on without a depth scan
DISTS = ("webshelf", "mcp", "mcp_types", "pydantic", "pydantic_core")  # what the frame's bytes depend on
_HERE = Path(__file__).resolve().parent
SOURCES = (_HERE / "mcp_server.py", _HERE / "mcp_early.py", _HERE / "tools.py",  # the tools' schemas read:
           _HERE.parent / "config.py", _HERE.parent / "read.py", _HERE.parent / "search_page.py")
NEXT_WAIT_S = 0.1  # how long to wait for a tools/list after the early initialize before importing the SDK
_SAFE_ID = re.compile(r"[A-Za-z0-9_.:/+=-]{0,64}")  # a string id json and pydantic both write verbatim


@dataclass
class Early:
    """What happened before the SDK: the bytes read (to replay), and the request id that was
    answered (``answered``) or whose SDK response should be recorded (``pending``)."""

    replay: bytes = b""
    probe: Any = None  # the config_snapshot.Probe for the config file (saved after a full validation)
    id_json: str | None = None  # the request's id as the SDK writes it
    requested: str | None = None  # the protocolVersion the client asked for
    sent: str | None = None  # the frame written here, when answered
    done: bool = field(default=False)  # the SDK's response to id_json has been seen
    tools_id_json: str | None = None  # a plain tools/list right after it: its id …
    tools_sent: str | None = None  # … and the frame written here, when answered
    tools_done: bool = False

    @property
    def answered(self) -> bool:
        return self.sent is not None


def frames_file(home: Path | None = None) -> Path:
    return (home or default_home()) / "cache" / NAME


def _dist_versions() -> dict[str, str | None]:
    """The installed versions of ``DISTS``, from the ``*.dist-info`` names on ``sys.path``, as
    ``importlib.metadata`` finds them (first on the path wins) — without its ~30 ms import."""
    found: dict[str, str | None] = dict.fromkeys(DISTS)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name[:-10].partition("-")
                dist = dist.lower().replace("-", "_").replace(".", "_")
                if dist in found and found[dist] is None:
                    found[dist] = version
        if all(found.values()):
            break
    return found


@lru_cache(maxsize=1)
def key() -> str | None:
    """The snapshot key of this installation, or None when a distribution is not found: once
    per process (a scan of ``sys.path`` and a stat per source; the first start asks again when
    it records the SDK's frames)."""
    versions = _dist_versions()
    if not all(versions.values()):
        return None
    from webshelf.core.config_snapshot import source_stamps

    return json.dumps([FORMAT, versions, source_stamps(SOURCES), sys.executable])


def _load() -> dict[str, Any] | None:
    try:
        with open(frames_file(), "rb") as f:
            stored = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if not (isinstance(stored, dict) and isinstance(stored.get("handshake"), list)
            and isinstance(stored.get("latest"), str) and isinstance(stored.get("frames"), dict)):
        return None
    return stored


def negotiated(requested: str, handshake: list[str], latest: str) -> str:
    """The SDK's rule (mcp.server.runner ``_negotiate_initialize``): the client's version when
    the SDK speaks it in the handshake, else the newest handshake version."""
    return requested if requested in handshake else latest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")  # json keeps the last, another parser may not: not plain
    return out


def _empty_objects(value: Any, keys: set[str]) -> bool:
    return isinstance(value, dict) and set(value) <= keys and all(v == {} for v in value.values())


def _plain_capabilities(caps: Any) -> bool:
    if not isinstance(caps, dict):
        return False
    for name, value in caps.items():
        if name == "roots":
            ok = isinstance(value, dict) and set(value) <= {"listChanged"} and all(
                isinstance(v, bool) for v in value.values())
        elif name == "sampling":
            ok = _empty_objects(value, {"context", "tools"})
        elif name == "elicitation":
            ok = _empty_objects(value, {"form", "url"})
        elif name == "experimental":
            ok = isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
        else:
            ok = False
        if not ok:
            return False
    return True


def plain_initialize(line: bytes) -> tuple[str, str] | None:
    """(id as the SDK writes it, requested protocolVersion) when ``line`` is an ``initialize``
    request of a shape the SDK is known to accept (tests/core/test_mcp_early.py checks each with
    the SDK) and the guard passes on; None for anything else, which goes the full path."""
    message = _message(line)
    if not (isinstance(message, dict) and set(message) == {"jsonrpc", "id", "method", "params"}
            and message["jsonrpc"] == "2.0" and message["method"] == "initialize"):
        return None
    params, id_json = message["params"], _id_json(message["id"])
    if id_json is None:
        return None
    if not (isinstance(params, dict) and set(params) == {"protocolVersion", "capabilities", "clientInfo"}):
        return None
    version, info = params["protocolVersion"], params["clientInfo"]
    if not (isinstance(version, str) and len(version) <= 64 and isinstance(info, dict)
            and {"name", "version"} <= set(info) <= {"name", "version", "title"}
            and all(isinstance(v, str) for v in info.values()) and _plain_capabilities(params["capabilities"])):
        return None
    return id_json, version


def _message(line: bytes) -> Any:
    if len(line) > MAX_LINE or line.count(b"{") + line.count(b"[") > MAX_BRACES:
        return None
    try:
        return json.loads(line.decode("utf-8").strip(), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _id_json(id_: Any) -> str | None:
    if type(id_) is int and abs(id_) < 2**53:
        return str(id_)
    if isinstance(id_, str) and _SAFE_ID.fullmatch(id_):
        return f'"{id_}"'
    return None


def plain_tools_list(line: bytes) -> str | None:
    """The id (as the SDK writes it) of a ``tools/list`` request without a cursor, else None."""
    message = _message(line)
    if not (isinstance(message, dict) and set(message) in ({"jsonrpc", "id", "method"},
                                                            {"jsonrpc", "id", "method", "params"})
            and message["jsonrpc"] == "2.0" and message["method"] == "tools/list"
            and message.get("params", {}) == {}):
        return None
    return _id_json(message["id"])


def plain_initialized(line: bytes) -> bool:
    message = _message(line)
    return isinstance(message, dict) and set(message) in ({"jsonrpc", "method"}, {"jsonrpc", "method", "params"}) \
        and message["jsonrpc"] == "2.0" and message["method"] == "notifications/initialized" \
        and message.get("params", {}) == {}


def _opening(fd: int) -> bytes:
    """Bytes from ``fd`` up to the first newline (and whatever came with it), EOF, or ``MAX_LINE``."""
    data = b""
    while b"\n" not in data and len(data) <= MAX_LINE:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def open_session(config_file: str | None, fd_in: int = 0, fd_out: int = 1) -> Early:
    """Read the client's first line; answer it on ``fd_out`` when a stored frame is certain to
    be the SDK's own answer. The returned ``Early`` carries the bytes to replay either way."""
    from webshelf.core.config_snapshot import Probe

    probe = Probe(config_file)
    early = Early(replay=_opening(fd_in), probe=probe)
    plain = plain_initialize(early.replay.split(b"\n", 1)[0])
    if plain is None:
        return early
    early.id_json, early.requested = plain
    config_ok = probe.settings is not None or (probe.data is None and not probe.named)
    stored = _load() if config_ok else None
    if stored is None or stored.get("key") != key():
        return early
    version = negotiated(early.requested, stored["handshake"], stored["latest"])
    tail = stored["frames"].get(version)
    if not isinstance(tail, str):
        return early
    early.sent = _send(fd_out, HEAD + early.id_json + tail)
    tools = stored.get("tools")
    tools = tools.get(version) if isinstance(tools, dict) else None
    if isinstance(tools, str):
        _tools_list(early, fd_in, fd_out, tools)
    return early


def _send(fd: int, frame: str) -> str:
    try:
        _write_all(fd, frame.encode("utf-8"))
    except OSError:  # the client is gone: the SDK finds out the same way
        pass
    return frame


def _next_line(early: Early, fd: int, offset: int) -> tuple[bytes, int] | None:
    """The line of ``early.replay`` starting at ``offset`` (waiting up to ``NEXT_WAIT_S`` for
    more bytes), and the offset after it; None when it has not come (or EOF)."""
    import select

    while b"\n" not in early.replay[offset:]:
        if len(early.replay) - offset > MAX_LINE:
            return None
        try:
            ready, _, _ = select.select([fd], [], [], NEXT_WAIT_S)
            chunk = os.read(fd, 65536) if ready else b""
        except (OSError, ValueError):
            return None
        if not chunk:
            return None
        early.replay += chunk
    end = early.replay.index(b"\n", offset) + 1
    return early.replay[offset:end], end


def _tools_list(early: Early, fd_in: int, fd_out: int, tail: str) -> None:
    """After an early initialize: answer a plain ``tools/list`` too, when it comes next (after
    ``notifications/initialized``, or without it) — the SDK's stored frame, checked as above."""
    offset = early.replay.index(b"\n") + 1
    for _ in range(2):
        got = _next_line(early, fd_in, offset)
        if got is None:
            return
        line, offset = got
        if plain_initialized(line):
            continue
        early.tools_id_json = plain_tools_list(line)
        if early.tools_id_json is not None:
            early.tools_sent = _send(fd_out, HEAD + early.tools_id_json + tail)
        return


def record(early: Early, frame: str, section: str = "frames") -> None:
    """Keep the SDK's response ``frame`` to ``early``'s plain initialize (``section`` "frames")
    or to the plain tools/list after it ("tools") for the next start (the SDK is imported by
    now, so its own version constants are used)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    id_json = early.id_json if section == "frames" else early.tools_id_json
    head = HEAD + (id_json or "")
    current = key()
    if id_json is None or early.requested is None or current is None or not frame.startswith(head + ','):
        return
    version = negotiated(early.requested, list(HANDSHAKE_PROTOCOL_VERSIONS), LATEST_HANDSHAKE_VERSION)
    try:
        result = json.loads(frame)["result"]
    except (ValueError, KeyError, TypeError):
        return  # an error answer is never a snapshot
    if not isinstance(result, dict) or (result.get("protocolVersion") != version if section == "frames"
                                        else not isinstance(result.get("tools"), list) or "nextCursor" in result):
        return
    stored = _load()
    if stored is None or stored.get("key") != current:
        stored = {"key": current, "frames": {}}
    if section == "tools" and not (isinstance(stored["frames"], dict) and version in stored["frames"]):
        return  # a tools/list frame is used only after an early initialize for the same version
    stored["handshake"], stored["latest"] = list(HANDSHAKE_PROTOCOL_VERSIONS), LATEST_HANDSHAKE_VERSION
    if not isinstance(stored.get(section), dict):
        stored[section] = {}
    stored[section][version] = frame[len(head):]
    from webshelf.core.config_snapshot import save_json

    save_json(frames_file(), stored)


def on_sdk_frame(early: Early, frame: str) -> bool:
    """Whether the SDK's ``frame`` goes to the client: its response to a request answered here
    does not (checked against what was sent); a response not answered here is recorded."""
    if not frame.startswith(HEAD):
        return True
    if not early.done and early.id_json is not None and frame.startswith(HEAD + early.id_json + ","):
        early.done = True
        return _settle(early, frame, early.sent, "frames")
    if not early.tools_done and early.tools_id_json is not None and frame.startswith(HEAD + early.tools_id_json + ","):
        early.tools_done = True
        return _settle(early, frame, early.tools_sent, "tools")
    return True


def _settle(early: Early, frame: str, sent: str | None, section: str) -> bool:
    if sent is None:
        record(early, frame, section)
        return True
    if frame != sent:
        sys.stderr.write(f"webshelf: warning: the early {'initialize' if section == 'frames' else 'tools/list'} "
                         "answer differed from the MCP SDK's; the stored frame is replaced\n")
        record(early, frame, section)
    return False


def watch_line(early: Early, line: str, index: int) -> None:
    """Note a plain tools/list among the first lines the SDK reads after a plain initialize, so
    that its response is recorded (the full path, or an early start with no tools frame yet)."""
    if early.tools_id_json is None and early.tools_sent is None and early.id_json is not None and 1 <= index <= 2:
        early.tools_id_json = plain_tools_list(line.encode("utf-8", "replace"))
