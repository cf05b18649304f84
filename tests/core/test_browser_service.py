"""One browser per process (core/backends/browser/service.py), against real Chromium.

Calls reuse one browser (each call runs its own asyncio loop, the browser lives on the service's);
``web.browser.max_pages`` holds across calls at once; settings that matter get their own browser;
``web.browser.idle_s`` closes it; and neither a normal exit nor SIGTERM leaves a Chromium
behind — checked by pid, the pids Chromium itself reports (CDP), in a child process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests.core.browser_fixtures import fresh_browser_services, run, spa_page  # noqa: F401 — a fixture
from tests.loopback import LoopbackServer, Response
from webshelf.core.backends.browser import service as browser_service
from webshelf.core.backends.browser.backend import BrowserBackend
from webshelf.core.extract import web_extract_sync

pytestmark = pytest.mark.timeout(180)

PAGE = spa_page("t", "Rendered", "Words from script.")
pytestmark = [pytestmark, pytest.mark.usefixtures("fresh_browser_services")]


def alive(pids: list[int]) -> list[int]:
    """The pids still running (zombies count as gone: their process has ended)."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(pid)
        except OSError:
            pass
    return out


def wait_gone(pids: list[int], within: float = 20) -> list[int]:
    deadline = time.monotonic() + within
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def browser_pids(config, *, helpers: bool = False) -> list[int]:
    """The browser process itself, or with ``helpers`` also its renderer/GPU/utility processes
    (Chromium starts and ends those as it likes, so they are no identity for "the same browser")."""
    async def go():
        async with BrowserBackend(config) as backend:
            kinds = await backend.pids()
            return sorted(p for kind, group in kinds.items() if helpers or kind == "browser" for p in group)
    return run(go())


def test_calls_share_one_browser_each_with_its_own_loop(server, config):
    config.web.backend = "browser"
    urls = [server.route(f"/svc/{i}", Response(PAGE)) for i in range(3)]
    results = [web_extract_sync([url], config=config)[0] for url in urls]  # three calls, three asyncio loops
    assert [r.error for r in results] == [None] * 3 and all("# Rendered" in r.content for r in results)
    [service] = browser_service.running_services()
    assert service.shared.launches == 1 and service.users == 0  # launched once, held by no call now


def test_max_pages_holds_across_concurrent_calls(server, config):
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def counted(req):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.8)
        with lock:
            state["now"] -= 1
        return Response(b"<html><body><h1>counted</h1></body></html>")

    urls = [server.route(f"/svc/count{i}", counted) for i in range(6)]
    config.web.backend = "browser"
    config.web.browser.max_pages = 2
    threads = [threading.Thread(target=web_extract_sync, args=(urls[i::3],), kwargs={"config": config}) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert state["max"] == 2  # three calls at once, one budget: two renders overlapped, never a third
    assert len(browser_service.running_services()) == 1


def test_contexts_stay_fresh_across_calls(server, config):
    config.web.backend = "browser"
    first = server.route("/svc/set", Response(b"<html><body><h1>set</h1><script>document.cookie='seen=1; max-age=3600';"
                                              b"localStorage.setItem('seen','1');</script></body></html>"))
    second = server.route("/svc/get", Response(b"<html><body><h1 id=o>get</h1><script>document.getElementById('o')"
                                               b".textContent='cookie=[' + document.cookie + '] storage=[' + "
                                               b"localStorage.getItem('seen') + ']';</script></body></html>"))
    web_extract_sync([first], config=config)
    [got] = web_extract_sync([second], config=config)
    assert "cookie=[] storage=[null]" in got.content
    assert browser_service.running_services()[0].shared.launches == 1


def test_settings_that_matter_get_their_own_browser(server, config):
    one = browser_pids(config)
    assert len(one) == 1  # the browser process (not an empty list that would make the checks below vacuous)
    assert browser_pids(config) == one  # the same settings: the same browser
    config.web.browser.user_agent = "OtherAgent/1.0"
    other = browser_pids(config)
    assert set(other).isdisjoint(one) and len(browser_service.running_services()) == 2
    config.web.browser.user_agent = None
    config.web.headers = {"X-Team": "b"}
    assert set(browser_pids(config)).isdisjoint(one + other)


def test_the_browser_closes_after_idle_s_and_the_next_call_launches_again(server, config):
    config.web.browser.idle_s = 0.5
    first = browser_pids(config, helpers=True)
    assert alive(first)
    assert wait_gone(first) == []  # idle for 0.5 s: browser, Playwright and the thread are gone
    assert browser_service.running_services() == []
    second = browser_pids(config)
    assert set(second).isdisjoint(first) and alive(second)


def test_a_call_in_use_keeps_the_browser_past_idle_s(server, config):
    config.web.browser.idle_s = 0.2

    async def go():
        async with BrowserBackend(config) as backend:
            kinds = await backend.pids()
            await asyncio.sleep(1.0)  # held by this backend: no idle close while it is open
            return [p for group in kinds.values() for p in group], await backend.pids()
    before, after = run(go())
    assert after["browser"] == [p for p in before if p in after["browser"]] and alive(after["browser"])


def test_a_crash_fails_the_pages_in_flight_of_every_call_and_the_next_call_relaunches(server, config):
    config.web.backend = "browser"
    arrived = threading.Semaphore(0)

    def slow(req):
        arrived.release()
        time.sleep(4)
        return Response(b"<html><body><h1>never</h1></body></html>")

    done = server.route("/svc/before-crash", Response(PAGE))
    [before] = web_extract_sync([done], config=config)
    assert before.error is None
    slows = [server.route(f"/svc/slow{i}", slow) for i in range(2)]
    results: dict[int, object] = {}
    threads = [threading.Thread(target=lambda i=i: results.setdefault(i, web_extract_sync([slows[i]], config=config)[0]))
               for i in range(2)]
    for t in threads:
        t.start()
    assert arrived.acquire(timeout=60) and arrived.acquire(timeout=60)  # both calls are rendering now
    [service] = browser_service.running_services()
    [main] = service.submit(service.pids()).result(30)["browser"]
    os.kill(main, signal.SIGKILL)  # the browser this test's calls share
    for t in threads:
        t.join(60)
    assert [results[i].error.code for i in range(2)] == ["backend_error", "backend_error"]
    assert all("crashed" in results[i].error.message for i in range(2))
    [after] = web_extract_sync([server.route("/svc/after-crash", Response(PAGE))], config=config)
    assert after.error is None and "# Rendered" in after.content
    assert service.shared.launches == 2 and browser_service.running_services() == [service]


CHILD = textwrap.dedent("""
    import sys, time
    from webshelf.core.config import Config
    from webshelf.core.extract import web_extract_sync
    from webshelf.core.backends.browser import service
    config = Config().with_home(sys.argv[1])
    config.web.allow_private = True
    config.web.backend = "browser"
    [r] = web_extract_sync([sys.argv[2]], config=config)
    assert r.error is None, r.error
    [svc] = service.running_services()
    kinds = svc.submit(svc.pids()).result(30)
    print(" ".join(str(p) for group in kinds.values() for p in group), flush=True)
    args = open(f"/proc/{kinds['browser'][0]}/cmdline", "rb").read().decode().split("\\0")
    print(next(a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir=")), flush=True)
    if sys.argv[3] == "wait":
        time.sleep(120)
""")


def child(home, tmp_path, url: str, mode: str) -> subprocess.Popen:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen([sys.executable, str(script), str(home), url, mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_no_chromium_outlives_a_normal_exit(server, home, tmp_path):
    proc = child(home, tmp_path, server.route("/svc/exit", Response(PAGE)), "exit")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    pids_line, profile = out.splitlines()[:2]
    pids = [int(p) for p in pids_line.split()]
    assert pids and wait_gone(pids) == []  # closed by atexit, though web.browser.idle_s (60 s) had not passed
    assert not os.path.exists(profile)  # closed, not killed: Playwright removed the temporary profile


def profile_dir(pid: int) -> str:
    """The temporary profile Playwright made for the browser (``--user-data-dir=``), from its command line."""
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        args = handle.read().decode().split("\0")
    return next(a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir="))


def test_no_chromium_outlives_sigterm(server, home, tmp_path):
    proc = child(home, tmp_path, server.route("/svc/term", Response(PAGE)), "wait")
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids and alive(pids)
    profile = proc.stdout.readline().strip()
    assert profile == profile_dir(pids[0]) and os.path.isdir(profile)
    os.kill(proc.pid, signal.SIGTERM)  # the child this test started
    proc.wait(60)
    assert proc.returncode == -signal.SIGTERM  # still "killed by SIGTERM", after closing the browser
    assert wait_gone(pids) == []
    assert not os.path.exists(profile)  # closed, not killed: Playwright removed the temporary profile
    proc.stdout.close()
    proc.stderr.close()


def test_sigterm_of_mcp_serve_leaves_no_chromium(server, home):
    """The real ``webshelf mcp serve`` over stdio: a web_extract through the browser, then SIGTERM."""
    import json

    import yaml

    from tests.core.test_mcp_protocol import INIT, RawServer
    from webshelf.core.backends.browser.lifecycle import chromium_pids

    url = server.route("/svc/mcp", Response(PAGE))
    mcp = RawServer(home)  # writes home/config.yaml; ours replaces it before the server reads it on first call
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"allow_private": True, "backend": "browser"}}))
    try:
        mcp.send(json.dumps(INIT))
        assert mcp.answer()["id"] == 0
        mcp.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        mcp.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "web_extract", "arguments": {"urls": [url]}}}))
        answer = mcp.lines.get(timeout=90)
        assert b"Rendered" in answer, answer[:500]
        pids = chromium_pids(mcp.proc.pid)  # the Chromium processes under this server, the browser first
        assert pids and alive(pids)
        profile = profile_dir(pids[0])
        os.kill(mcp.proc.pid, signal.SIGTERM)  # the server this test started
        mcp.proc.wait(60)
        assert mcp.proc.returncode == 128 + signal.SIGTERM  # mcp serve stops like `runtime run`: 128+N and error[stopped]
        assert wait_gone(pids) == [] and not os.path.exists(profile)
    finally:
        if mcp.proc.poll() is None:
            mcp.proc.kill()
            mcp.proc.wait(10)


def test_chromium_s_own_requests_are_refused_without_a_dns_lookup(home, monkeypatch, fresh_browser_services):
    """Pages go through their own policy proxies; the browser-wide one only sees Chromium's own
    traffic (update.googleapis.com, accounts.google.com, clients2.google.com were looked up through
    it while a loopback page rendered): it refuses without asking DNS, so nothing leaves the machine."""
    import socket
    import time

    from webshelf.core.config import Config

    real, looked_up = socket.getaddrinfo, []

    def recording(host, *args, **kwargs):
        looked_up.append(host)
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise socket.gaierror(f"{host}: not looked up in this test (nothing leaves loopback)")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    config = Config.model_validate({"web": {"allow_private": True, "backend": "browser", "fallback": None}}).with_home(home)
    with LoopbackServer() as srv:
        url = srv.route("/own", Response(b"<html><body><h1>Own</h1><p>" + b"word " * 100 + b"</p></body></html>"))
        [result] = web_extract_sync([url], config=config)
        time.sleep(5)  # Chromium's start-up requests come within seconds of the launch
    assert result.ok, result.error
    assert set(looked_up) <= {"127.0.0.1", "localhost", "::1"}, looked_up
