"""``webshelf mcp serve --runtime NAME`` never leaves its sandbox behind (issue 12 item 4, the gap
left in it): a real ``webshelf mcp serve`` process, a real MCP ``initialize`` over its stdio, then
SIGTERM/SIGHUP/SIGINT by pid — or stdin EOF — and the scratch directory is gone (real bwrap),
while a docker container it only attached to keeps running (real dockerd)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.runtimes.test_lifecycle import APPEAR_S, WEBSHELF, _scratch, tmpdir_  # noqa: F401 — tmpdir_ is a fixture

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "webshelf-tests", "version": "0"}}}


def _serve(home: Path, tmpdir: Path, *runtimes: str) -> subprocess.Popen:
    args = [a for name in runtimes for a in ("--runtime", name)]
    env = {**os.environ, "WEBSHELF_HOME": str(home), "TMPDIR": str(tmpdir)}
    return subprocess.Popen([WEBSHELF, "mcp", "serve", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def _initialize(proc: subprocess.Popen) -> dict:
    """One MCP initialize round trip on the server's stdio (the server is up once it answers)."""
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"the server closed stdout: {proc.communicate()}")
    answer = json.loads(line)
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "webshelf", answer
    return answer


@pytest.fixture
def local_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"local": {"type": "local"}}}))
    return home


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_removes_the_scratch_dir_of_mcp_serve_runtime_local(sig, bwrap_ready, local_home, tmpdir_):
    proc = _serve(local_home, tmpdir_, "local")
    try:
        _initialize(proc)
        [scratch] = _scratch(tmpdir_, proc.pid)  # created by start(), before initialize was answered
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=APPEAR_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig
    assert err.decode().splitlines()[-1] == (f"error[stopped]: {sig.name} received; the MCP server stopped and its "
                                             "sandboxes were stopped and removed")
    assert not scratch.exists() and list(tmpdir_.iterdir()) == []


def test_stdin_eof_removes_the_scratch_dir_and_exits_0(bwrap_ready, local_home, tmpdir_):
    proc = _serve(local_home, tmpdir_, "local")
    try:
        _initialize(proc)
        [scratch] = _scratch(tmpdir_, proc.pid)
        proc.stdin.close()  # the client went away
        proc.wait(timeout=APPEAR_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, proc.stderr.read()
    assert not scratch.exists() and list(tmpdir_.iterdir()) == []


def test_a_signal_while_a_tool_call_runs_still_cleans_up(bwrap_ready, local_home, tmpdir_):
    """SIGTERM cancels the serving task mid-call (a read_file of a missing page is quick, so the
    call is a web_extract of an address that never answers: a loopback port that accepts and stays
    silent) — the scratch dir still goes."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    (local_home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"local": {"type": "local"}},
                                                            "web": {"allow_private": True}}))
    proc = _serve(local_home, tmpdir_, "local")
    try:
        _initialize(proc)
        [scratch] = _scratch(tmpdir_, proc.pid)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "web_extract", "arguments": {"urls": [f"http://127.0.0.1:{silent.getsockname()[1]}/"]}}}
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        conn, _ = silent.accept()  # the fetch is under way
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=APPEAR_S)
        conn.close()
    finally:
        silent.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert not scratch.exists() and list(tmpdir_.iterdir()) == []


def test_a_signal_leaves_an_attached_container_running(docker_client, docker_image, home, tmpdir_):
    """``mcp serve --runtime docker`` only attaches (a container it would create is refused, see
    test_offers.py): on SIGTERM it exits 143 and the container it did not create keeps running."""
    from webshelf.mounts.spec import cache_mount

    web = str(cache_mount(home).path)
    box = docker_client.containers.run(docker_image, ["sleep", "600"], detach=True, network_mode="none",
                                       volumes={web: {"bind": web, "mode": "ro"}})
    try:
        (home / "config.yaml").write_text(yaml.safe_dump(
            {"runtimes": {"docker": {"type": "docker", "container": box.name, "image": docker_image}}}))
        proc = _serve(home, tmpdir_, "docker")
        try:
            _initialize(proc)
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=APPEAR_S)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 128 + signal.SIGTERM
        box.reload()
        assert box.status == "running"
    finally:
        box.remove(force=True)
