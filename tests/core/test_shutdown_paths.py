"""One shutdown path (core/shutdown.py): every entry point closes the browser, the conversion
pool and the MCP session on SIGTERM/SIGINT/EOF, exactly once.

Real processes throughout: the ``webshelf`` console script (``extract`` with the browser, with
the local backend and its conversion workers; ``mcp serve``) and a library user's script,
against loopback pages; signals are sent by pid to the process each test started, and what is
left is checked by pid (``/proc``): Chromium, the pool's worker and forkserver processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from tests.core.browser_fixtures import need_browser, spa_page
from tests.core.test_browser_service import alive, wait_gone
from tests.loopback import Response
from webshelf.core import shutdown as process

pytestmark = pytest.mark.timeout(240)
WEBSHELF = Path(sys.executable).with_name("webshelf")
SLOW_S = 40.0  # a page that answers this late: the command is surely mid-fetch when the signal comes
BIG = ("<html><head><title>Big</title></head><body><main><h1>Big</h1>"
       + "".join(f"<p>Paragraph {i} of a long page with enough words to convert.</p>" for i in range(3_000))
       + "</main></body></html>").encode()


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (children, grandchildren, …), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return sorted(found)


def wait_for(predicate, within: float = 90.0, what: str = ""):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {within:.0f} s: {what}")


def cli(home: Path, settings: dict, *args: str) -> subprocess.Popen:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"allow_private": True, **settings}}))
    env = {"WEBSHELF_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return subprocess.Popen([str(WEBSHELF), *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def stop(proc: subprocess.Popen, signum: int = signal.SIGTERM) -> tuple[int, str]:
    proc.send_signal(signum)  # the process this test started, by pid
    try:
        _out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:  # pragma: no cover — only when the test fails
            proc.kill()
            proc.wait(10)
    return proc.returncode, err.decode(errors="replace")


# the registry itself ------------------------------------------------------------------------
def test_the_process_registry_runs_each_clean_up_once_newest_first(capsys):
    ran: list[str] = []
    registry = process.Registry()
    registry.add(lambda: ran.append("first"))
    registry.add(lambda: 1 / 0, "the broken one")
    registry.add(lambda: ran.append("taken back"))()
    registry.add(lambda: registry.add(lambda: ran.append("added while running")))
    registry.run()
    registry.run()  # a second run (exit after a signal's run) finds nothing left
    assert ran == ["added while running", "first"]
    assert capsys.readouterr().err == "note: clean-up of the broken one failed: division by zero\n"


LIBRARY = textwrap.dedent("""
    import os, sys, time
    from webshelf.core import shutdown
    shutdown.register(lambda: open(sys.argv[1], "a").write("closed\\n"), "the test's resource")
    print("ready", flush=True)
    if sys.argv[2] == "wait":
        time.sleep(120)
""")


@pytest.mark.parametrize("mode", ["exit", "wait"])
def test_a_library_process_closes_once_at_exit_and_on_sigterm_and_still_dies_of_it(tmp_path, mode):
    script, log = tmp_path / "lib.py", tmp_path / "log"
    script.write_text(LIBRARY)
    proc = subprocess.Popen([sys.executable, str(script), str(log), mode], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    if mode == "wait":
        proc.send_signal(signal.SIGTERM)  # the child this test started
    proc.wait(60)
    proc.stdout.close()
    assert proc.returncode == (0 if mode == "exit" else -signal.SIGTERM)  # SIGTERM still kills, after the clean-up
    assert log.read_text() == "closed\n"  # exactly once: the signal's run and atexit's do not both run it


def test_a_surface_block_pushes_a_reaction_on_the_one_handler_and_gives_it_back():
    from webshelf.core.surfaces import shutdown as sd

    before = signal.getsignal(signal.SIGINT)
    with sd.stopping_on_signals():
        assert signal.getsignal(signal.SIGTERM) is process.handler()
        assert signal.getsignal(signal.SIGINT) is process.handler()
    assert signal.getsignal(signal.SIGINT) is before


# real commands --------------------------------------------------------------------------------
def test_sigterm_of_a_cli_extract_through_the_browser_closes_chromium_and_exits_143(server, tmp_path):
    need_browser()
    from webshelf.core.backends.browser.lifecycle import chromium_pids

    url = server.route("/shutdown/browser-slow", Response(spa_page("s", "Slow", "Late words."), delay=SLOW_S))
    proc = cli(tmp_path / "home", {"backend": "browser", "fallback": ["browser"]}, "extract", url)
    pids = wait_for(lambda: chromium_pids(proc.pid), what="Chromium started by webshelf extract")
    wait_for(lambda: len(alive(pids)) == len(pids) and pids, what="Chromium running")
    time.sleep(1.0)  # the navigation is under way (the page answers in 40 s)
    code, err = stop(proc)
    assert code == 128 + signal.SIGTERM, err
    assert "error[stopped]: SIGTERM received; the extract stopped" in err
    assert wait_gone(pids) == []  # closed, not orphaned


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_a_cli_extract_stops_the_conversion_workers(server, tmp_path, signum):
    big = server.route("/shutdown/big", Response(BIG))
    slow = server.route("/shutdown/slow", Response(BIG, delay=SLOW_S))
    proc = cli(tmp_path / "home", {"fallback": ["local"], "convert_workers": 2}, "extract", big, slow)
    # two URLs in one call: the fast page goes to the pool (forkserver + 2 workers), the slow one is still on its way
    below = wait_for(lambda: (d := descendants(proc.pid)) and len(d) >= 3 and d, what="the conversion pool's processes")
    code, err = stop(proc, signum)
    assert code == 128 + signum, err
    assert f"error[stopped]: {signal.Signals(signum).name} received" in err
    assert wait_gone(below) == []


def _mcp_call(proc: subprocess.Popen, urls: list[str]) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    for message in (init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "web_extract", "arguments": {"urls": urls}}}):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0  # initialised


@pytest.mark.parametrize("how", ["SIGTERM", "EOF"])
def test_mcp_serve_stops_its_conversion_workers_on_sigterm_and_on_eof(server, tmp_path, how):
    big = server.route(f"/shutdown/mcp-big-{how}", Response(BIG))
    slow = server.route(f"/shutdown/mcp-slow-{how}", Response(BIG, delay=SLOW_S if how == "SIGTERM" else 0))
    proc = cli(tmp_path / "home", {"fallback": ["local"], "convert_workers": 2}, "mcp", "serve")
    try:
        _mcp_call(proc, [big, slow])
        below = wait_for(lambda: (d := descendants(proc.pid)) and len(d) >= 3 and d,
                         what="the conversion pool's processes")
        if how == "SIGTERM":
            code, err = stop(proc)
            assert code == 128 + signal.SIGTERM, err
            assert "error[stopped]: SIGTERM received; the MCP server stopped" in err
        else:
            answer = json.loads(proc.stdout.readline())  # the call completes, then the client goes away
            assert answer["id"] == 1 and not answer["result"].get("isError"), answer
            proc.stdin.close()
            assert proc.wait(90) == 0
        assert wait_gone(below) == []
    finally:
        if proc.poll() is None:  # pragma: no cover — only when the test fails
            proc.kill()
            proc.wait(10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if not pipe.closed:
                pipe.close()
