"""`webshelf mcp serve` answers ``initialize`` before the MCP SDK is imported (core/surfaces/mcp_early.py).

What must hold: the early frame is the SDK's own answer byte for byte, for every protocol version
the installed SDK negotiates and for an unknown one; the session then goes on through the real
SDK (tools listed, stored pages read and searched); and whatever the early path may not answer
(a runtime, a bad config, another first message, bad JSON) reaches the SDK as today, nothing lost
or reordered. Real subprocesses on real pipes; the SDK's own client where it can speak.

Whether a start answered early is seen from outside: a full start records the SDK's frame in
``cache/mcp-initialize.json`` (rewriting it), an early one that matched leaves the file alone.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import mcp.server.stdio
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from webshelf.cache.shelf import Shelf
from webshelf.core.surfaces import mcp_early
from tests.core.test_mcp import WEBSHELF, in_session, subprocess_home, text_of

UNKNOWN = "1999-01-01"
VERSIONS = [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS, UNKNOWN]  # a modern one is negotiated down
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})


def init(version: str = LATEST_HANDSHAKE_VERSION, id_: Any = 1, **params: Any) -> str:
    body = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "early-test", "version": "0"}}
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": {**body, **params}})


def exchange(home: Path, lines: list[str], answers: int, settle: bool = False) -> tuple[list[bytes], str]:
    """Write ``lines`` at once, read ``answers`` response lines, then close stdin (EOF ends the
    server). ``settle``: first a ping, answered once the SDK has seen everything before it."""
    proc = subprocess.Popen([str(WEBSHELF), "mcp", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=subprocess_home(home))
    try:
        proc.stdin.write("".join(line + "\n" for line in lines).encode())
        proc.stdin.flush()
        out = [proc.stdout.readline() for _ in range(answers)]
        if settle:
            proc.stdin.write(b'{"jsonrpc":"2.0","id":"settle","method":"ping"}\n')
            proc.stdin.flush()
            assert b'"settle"' in proc.stdout.readline()
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read().decode()
        proc.stdout.close()
        proc.stderr.close()
    return out, err


def stamp(home: Path) -> int | None:
    path = mcp_early.frames_file(home)
    return path.stat().st_mtime_ns if path.exists() else None


def test_the_sdk_constants_and_frame_format_the_early_path_relies_on():
    assert mcp_early.HEAD == '{"jsonrpc":"2.0","id":'
    # the stdio transport writes each frame as one pydantic dump of the message, so the id comes second
    assert "session_message.message.model_dump_json(by_alias=True, exclude_unset=True)" in inspect.getsource(
        mcp.server.stdio)
    assert mcp_early._dist_versions() == {name: metadata.version(name) for name in mcp_early.DISTS}
    from webshelf.core.surfaces.mcp_guard import MAX_DEPTH

    assert mcp_early.MAX_BRACES == MAX_DEPTH


@pytest.mark.timeout(300)
@pytest.mark.parametrize("id_", [1, "req-7"])
def test_the_early_frame_is_the_sdks_own_for_every_version(tmp_path, id_):
    """For each version: a full start (no frame stored) gives the SDK's frames for initialize and
    the tools/list after it, and stores them; the next start answers both early (the store
    untouched) with exactly the same bytes."""
    for version in VERSIONS:
        home = tmp_path / f"home-{version}"
        [sdk, sdk_tools], err = exchange(home, [init(version, id_), INITIALIZED, TOOLS_LIST], 2)
        assert b'"result"' in sdk and b'"tools"' in sdk_tools, err
        stored = json.loads(mcp_early.frames_file(home).read_text())
        assert (stored["handshake"], stored["latest"]) == (list(HANDSHAKE_PROTOCOL_VERSIONS), LATEST_HANDSHAKE_VERSION)
        before = stamp(home)
        [early, early_tools], err = exchange(home, [init(version, id_), INITIALIZED, TOOLS_LIST], 2, settle=True)
        assert (early, early_tools) == (sdk, sdk_tools), version
        assert stamp(home) == before and "warning" not in err, f"{version}: not answered early"
        expected = version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        assert json.loads(early)["result"]["protocolVersion"] == expected


def test_a_frame_for_one_version_never_answers_another(tmp_path):
    home = tmp_path / "home"
    exchange(home, [init("2025-06-18")], 1)
    before = stamp(home)
    [answer], _ = exchange(home, [init("2024-11-05")], 1)  # not stored yet: the SDK answers and it is recorded
    assert json.loads(answer)["result"]["protocolVersion"] == "2024-11-05"
    assert stamp(home) != before
    assert set(json.loads(mcp_early.frames_file(home).read_text())["frames"]) == {"2025-06-18", "2024-11-05"}


def test_a_stale_key_goes_the_full_path_and_a_wrong_frame_is_caught_and_replaced(tmp_path):
    home = tmp_path / "home"
    [sdk], _ = exchange(home, [init()], 1)
    path = mcp_early.frames_file(home)
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "key": "another installation"}))
    [answer], err = exchange(home, [init()], 1)
    assert answer == sdk and json.loads(path.read_text()) == stored  # the SDK answered and its frame was stored
    wrong = {**stored, "frames": {v: t.replace("webshelf reads", "WRONG reads") for v, t in stored["frames"].items()}}
    path.write_text(json.dumps(wrong))
    [answer], err = exchange(home, [init()], 1)
    assert b"WRONG" in answer  # a frame under a matching key is trusted …
    assert "the early initialize answer differed from the MCP SDK's" in err  # … checked against the SDK's own …
    assert json.loads(path.read_text()) == stored  # … and replaced by it
    [answer], err = exchange(home, [init()], 1)
    assert answer == sdk and "warning" not in err


def test_a_wrong_tools_frame_is_caught_and_replaced(tmp_path):
    home = tmp_path / "home"
    [_, sdk_tools], _ = exchange(home, [init(), INITIALIZED, TOOLS_LIST], 2)
    path = mcp_early.frames_file(home)
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "tools": {v: t.replace("read_file", "WRONG") for v, t in stored["tools"].items()}}))
    [_, answer], err = exchange(home, [init(), TOOLS_LIST], 2, settle=True)  # without the notification: answered too
    assert b"WRONG" in answer and "the early tools/list answer differed from the MCP SDK's" in err
    assert json.loads(path.read_text()) == stored
    [_, answer], err = exchange(home, [init(), INITIALIZED, TOOLS_LIST], 2, settle=True)
    assert answer == sdk_tools and "warning" not in err


def test_an_early_session_lists_tools_and_reads_and_searches_a_stored_page(home):
    """The SDK's own client on the early path: after initialize, everything goes through the SDK."""
    text = "# Stored\n\n" + "".join(f"line {i}: {'the needle' if i == 77 else 'hay'}\n" for i in range(1, 201))
    path = Shelf(home).put(url="https://docs.example.org/early", final_url="https://docs.example.org/early",
                           title="Stored", text=text, backend="local", content_type="text/html").path

    async def body(session: ClientSession) -> Any:
        tools = [t.name for t in (await session.list_tools()).tools]
        read = await session.call_tool("read_file", {"path": str(path), "offset": 79, "limit": 2})
        found = await session.call_tool("search_page", {"path": str(path), "pattern": "NEEDLE"})
        return session.protocol_version, tools, text_of(read), text_of(found)

    first = in_session(home, body)  # a full start: validates the config, stores its snapshot and the frame
    assert (home / "cache" / "config-snapshot.json").exists() and stamp(home) is not None
    before = stamp(home)
    second = in_session(home, body)
    assert stamp(home) == before  # answered early, and the SDK's own answer matched it
    assert second == first
    version, tools, read, found = second
    assert version == LATEST_HANDSHAKE_VERSION and tools == ["web_extract", "read_file", "search_page"]
    assert read == "79|line 77: the needle\n80|line 78: hay\n"
    assert ">79|line 77: the needle" in found


def test_pipelined_messages_after_an_early_initialize_are_answered_in_order(tmp_path):
    home = tmp_path / "home"
    exchange(home, [init()], 1)
    before = stamp(home)
    ping, tools = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}), json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    answers, _ = exchange(home, [init(), INITIALIZED, ping, "{bad json", tools], 4)
    assert stamp(home) == before
    decoded = [json.loads(a) for a in answers]
    assert decoded[0]["id"] == 1 and "result" in decoded[0]
    by_id = {d.get("id"): d for d in decoded[1:]}  # the guard answers bad JSON as it reads it; the SDK's come after
    assert by_id[2]["result"] == {} and by_id[None]["error"]["code"] == -32700
    assert [t["name"] for t in by_id[3]["result"]["tools"]] == ["web_extract", "read_file", "search_page"]


def _summary(answer: bytes) -> Any:
    decoded = json.loads(answer)
    if isinstance(decoded, list):
        return [_summary(json.dumps(d).encode()) for d in decoded]
    return decoded.get("id"), decoded["error"]["code"] if "error" in decoded else decoded["result"]


@pytest.mark.parametrize("first, expected", [
    (json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}), (9, {})),
    ("{not json", (None, -32700)),
    (json.dumps([json.loads(init())]), [(1, -32600)]),  # a batch
    (init(id_=1.5), (None, -32600)),  # an id the guard refuses
])
def test_another_first_message_goes_to_the_sdk_and_initialize_still_works(tmp_path, first, expected):
    home = tmp_path / "home"
    [sdk], _ = exchange(home, [init(id_=4)], 1)
    answers, _ = exchange(home, [first, init(id_=4)], 2)
    assert _summary(answers[0]) == expected
    assert answers[1] == sdk  # the SDK's own answer, after the first message's


def test_a_bad_config_gets_the_refusal_even_with_a_frame_stored(tmp_path):
    home = tmp_path / "home"
    [sdk], _ = exchange(home, [init()], 1)
    subprocess_home(home)
    (home / "config.yaml").write_text("web: [not, a, mapping\n")
    proc = subprocess.Popen([str(WEBSHELF), "mcp", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"WEBSHELF_HOME": str(home), "PATH": "/usr/bin:/bin"})
    out, err = proc.communicate((init() + "\n").encode(), timeout=60)
    answer = json.loads(out.splitlines()[0])
    assert answer["id"] == 1 and answer["error"]["message"].startswith("webshelf could not start: error[")
    assert proc.returncode == 2 and err.decode().startswith("error[")


def test_a_runtime_goes_the_full_path(tmp_path):
    """``--runtime`` can fail after initialize: never answered early (its refusal: test_mcp.py)."""
    home = tmp_path / "home"
    exchange(home, [init()], 1)
    before = stamp(home)
    subprocess_home(home)
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"allow_private": True}, "runtimes": {
        "local": {"type": "local", "bwrap": "/nonexistent/bwrap"}}}))
    proc = subprocess.Popen([str(WEBSHELF), "mcp", "serve", "--runtime", "local"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"WEBSHELF_HOME": str(home), "PATH": "/usr/bin:/bin"})
    out, _ = proc.communicate((init() + "\n").encode(), timeout=60)
    assert json.loads(out.splitlines()[0])["error"]["data"]["code"] == "runtime_unavailable"
    assert stamp(home) == before


# shapes -------------------------------------------------------------------------------------------
PLAIN = [  # params the early path answers: each must be one the SDK accepts, with the same answer
    {},
    {"clientInfo": {"name": "c", "version": "1", "title": "C"}},
    {"capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}},
    {"capabilities": {"sampling": {"context": {}, "tools": {}}, "elicitation": {"form": {}, "url": {}},
                      "roots": {}, "experimental": {"x": {"deep": [1, {"a": None}]}}}},
]
NOT_PLAIN = [  # anything else is left to the SDK, which may refuse it
    {"clientInfo": None}, {"capabilities": None}, {"capabilities": {"roots": None}},
    {"capabilities": {"tasks": {}}}, {"capabilities": {"roots": {"listChanged": "yes"}}},
    {"clientInfo": {"name": "c"}}, {"clientInfo": {"name": "c", "version": "1", "icons": []}},
    {"protocolVersion": 20250618}, {"_meta": {}},
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("extra", PLAIN)
def test_every_shape_answered_early_is_one_the_sdk_accepts_alike(tmp_path, extra):
    line = init("2025-06-18", **extra)
    assert mcp_early.plain_initialize(line.encode()) == ("1", "2025-06-18")
    home = tmp_path / "home"
    [sdk], _ = exchange(home, [init("2025-06-18")], 1)  # the plain shape stores the frame
    assert b'"result"' in sdk
    [full], _ = exchange(tmp_path / "other", [line], 1)  # the SDK alone on this shape
    before = stamp(home)
    [early], _ = exchange(home, [line], 1)
    assert full == sdk == early and stamp(home) == before


@pytest.mark.parametrize("extra", NOT_PLAIN)
def test_other_shapes_are_not_answered_early(extra):
    assert mcp_early.plain_initialize(init(**extra).encode()) is None


def test_plain_tools_list_and_initialized():
    assert mcp_early.plain_tools_list(TOOLS_LIST.encode()) == "2"
    assert mcp_early.plain_tools_list(b'{"jsonrpc":"2.0","id":"t","method":"tools/list","params":{}}') == '"t"'
    for line in ['{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}}',
                 '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":null}',
                 '{"jsonrpc":"2.0","method":"tools/list"}', '{"jsonrpc":"2.0","id":2,"method":"tools/call"}']:
        assert mcp_early.plain_tools_list(line.encode()) is None, line
    assert mcp_early.plain_initialized(INITIALIZED.encode())
    assert not mcp_early.plain_initialized(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}')


@pytest.mark.parametrize("line", [
    init(id_=True), init(id_=None), init(id_="é"), init(id_='a"b'), init(id_=2**60),
    init()[:-1] + ',"extra":1}', init().replace('"initialize"', '"ping"'),
    init().replace('"2.0"', '"1.0"'), '{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{}}',
    init(clientInfo={"name": "[" * 70, "version": "0"}).replace('"' + "[" * 70, '"' + "{" * 70),
    init() + " " + init(), init().encode() + b"\xff", b" " * (mcp_early.MAX_LINE + 1) + init().encode(),
])
def test_lines_that_are_not_a_plain_initialize(line):
    assert mcp_early.plain_initialize(line if isinstance(line, bytes) else line.encode()) is None
