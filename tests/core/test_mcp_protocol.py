"""Issue 16 item 7: `webshelf mcp serve` answers malformed JSON-RPC per JSON-RPC 2.0 and keeps
serving. Raw bytes on a real stdio subprocess — no SDK client, which would refuse to send them."""

from __future__ import annotations

import json
import queue
import subprocess
import threading

import pytest

from tests.core.test_mcp import WEBSHELF, subprocess_home

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
DEEP = '{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"read_file","arguments":{"path":' + \
    "[" * 100_000 + "]" * 100_000 + "}}}"


class RawServer:
    """``webshelf mcp serve`` with stdin/stdout as pipes; ``ask`` sends a line, ``answer`` reads one."""

    def __init__(self, home) -> None:
        self.proc = subprocess.Popen([str(WEBSHELF), "mcp", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=subprocess_home(home))
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes | str) -> None:
        self.proc.stdin.write(raw.encode() if isinstance(raw, str) else raw)
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()

    def answer(self):  # noqa: ANN201
        return json.loads(self.lines.get(timeout=30))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def raw(home):
    server = RawServer(home)
    server.send(json.dumps(INIT))
    assert server.answer()["id"] == 0
    server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield server
    server.close()


CASES = [  # (raw line, expected code, expected id)
    (b"{not json", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"', -32700, None),
    (b"\xff\xfe garbage", -32700, None),
    (json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "read_file"}), -32600, 2),
    (json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ["read_file"]}), -32602, 3),
    (json.dumps({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}), -32600, None),
    (json.dumps({"jsonrpc": "2.0", "id": True, "method": "tools/list"}), -32600, None),
    (json.dumps({"id": 4, "method": "tools/list"}), -32600, 4),
    (json.dumps({"jsonrpc": "1.0", "id": 5, "method": "tools/list"}), -32600, 5),
    (json.dumps({"jsonrpc": "2.0", "id": 6, "method": 42}), -32600, 6),
    (json.dumps({"jsonrpc": "2.0", "id": "seven"}), -32600, "seven"),
    (json.dumps(42), -32600, None),
    (json.dumps([]), -32600, None),
    (DEEP, -32602, 77),
]


@pytest.mark.timeout(120)
def test_every_malformed_message_gets_a_jsonrpc_error_and_the_server_keeps_serving(raw):
    for line, code, id_ in CASES:
        raw.send(line)
        got = raw.answer()
        assert got["jsonrpc"] == "2.0" and got["error"]["code"] == code and got["id"] == id_, (line[:80], got)
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 1000, "method": "tools/list"}))  # still serving
        listed = raw.answer()
        assert listed["id"] == 1000 and {t["name"] for t in listed["result"]["tools"]} >= {"read_file"}


@pytest.mark.timeout(60)
def test_a_batch_gets_one_error_per_request_and_notifications_get_none(raw):
    raw.send(json.dumps([{"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
                         {"jsonrpc": "2.0", "method": "notifications/cancelled"},
                         {"jsonrpc": "2.0", "id": "nine", "method": "ping"}]))
    got = raw.answer()
    assert [(e["id"], e["error"]["code"]) for e in got] == [(8, -32600), ("nine", -32600)]
    raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/whatever", "params": ["x"]}))  # never answered
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
    assert raw.answer()["id"] == 10


@pytest.mark.timeout(60)
def test_a_tool_call_with_a_huge_argument_gets_a_clipped_error(raw):
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                         "params": {"name": "read_file", "arguments": {"path": "p" * 5_000_000}}}))
    got = raw.answer()
    assert got["id"] == 11 and got["result"]["isError"] is True
    assert len(json.dumps(got)) < 10_000
