"""Live sync and faults against a real sshd: other writers, lost events, a killed server."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from webshelf.cache.shelf import Shelf
from webshelf.core.config import Config
from webshelf.core.surfaces.live import run_sync
from webshelf.core.sandbox import open_runtime
from webshelf.errors import RuntimeExecError
from webshelf.mounts.watch import LiveSync
from tests.runtimes.conftest import ssh_config
from tests.runtimes.test_ssh import page, remote_ls


def wait_for(condition, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def host_view(web: Path) -> dict[str, int]:
    return {e.name: e.stat().st_size for e in os.scandir(web) if not e.name.startswith(".")}


def remote_view(server, web: Path) -> dict[str, int]:
    return {n: size for n, (_, size) in remote_ls(server, web).items() if not n.startswith(".")}


def remote_digests(server, web: Path) -> dict[str, str]:
    done = server.remote('cd -- "$1" && sha256sum -- [!.]*', str(web))
    return {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in done.stdout.decode().splitlines()}


def test_live_sync_mirrors_other_writers_and_deletes(config: Config, sshd):
    web = config.home / "cache" / "web"
    before = page(web, "before.md", 2_000)
    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt, \
            LiveSync(web, [rt], debounce_s=0.02, max_wait_s=0.2, rescan_interval_s=3600) as live:
        wait_for(lambda: live.idle() and "before.md" in remote_view(sshd, web), "the first full diff")
        with Shelf(config.home) as shelf:  # the cache's atomic store: temp file, then rename
            stored = shelf.put(url="http://example.org/a", final_url=None, title=None, text="# a\n" + "x\n" * 500,
                               backend="test", content_type="text/markdown").path
        direct = web / "direct.md"
        with open(direct, "w") as fh:  # a plain write: ready when closed
            fh.write("direct\n" * 100)
        wait_for(lambda: {stored.name, "direct.md"} <= set(remote_view(sshd, web)), "new pages on the remote")
        os.unlink(before)
        wait_for(lambda: "before.md" not in remote_view(sshd, web), "the delete on the remote")
        assert remote_view(sshd, web) == host_view(web)
        assert rt.exec(["cat", str(direct)], timeout=30).stdout == direct.read_bytes()


def test_periodic_rescan_recovers_changes_no_event_announced(config: Config, sshd):
    """A hard link raises no close or rename event — like an event lost to a queue overflow."""
    web = config.home / "cache" / "web"
    source = page(config.home, "outside.md", 4_000)
    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt, \
            LiveSync(web, [rt], debounce_s=0.02, max_wait_s=0.2, rescan_interval_s=0.5):
        os.link(source, web / "linked.md")
        wait_for(lambda: "linked.md" in remote_view(sshd, web), "the rescan to send the unannounced file")


def test_sshd_killed_mid_sync_resumes_converges_and_never_shows_a_partial_file(config: Config, fresh_sshd):
    web = config.home / "cache" / "web"
    with open_runtime(ssh_config(config, fresh_sshd, readonly="bind"), config) as rt:
        for i in range(300):
            page(web, f"big-{i:03}.md", 150_000)
        sizes = host_view(web)
        partial, stop = [], threading.Event()

        def watch() -> None:  # every final-named remote file must be complete, at every moment
            while not stop.is_set():
                for name, size in remote_view(fresh_sshd, web).items():
                    if size != sizes.get(name):
                        partial.append((name, size))

        watcher = threading.Thread(target=watch)
        watcher.start()
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["report"] = rt.sync()
            except Exception as exc:  # recorded, asserted below
                outcome["error"] = exc

        syncing = threading.Thread(target=run)
        syncing.start()
        try:
            wait_for(lambda: any(n.startswith(".webshelf-put-") for n in remote_ls(fresh_sshd, rt.staging)),
                     "the batch to be in flight")
            epoch = rt.conn.epoch
            fresh_sshd.kill()
            time.sleep(0.3)
            fresh_sshd.restart()
            syncing.join(timeout=120)
        finally:
            stop.set()
            watcher.join()
        assert "error" not in outcome, outcome.get("error")
        assert rt.conn.epoch == epoch + 1  # it reconnected once
        assert remote_view(fresh_sshd, web) == sizes
        assert remote_digests(fresh_sshd, web) == {n: hashlib.sha256((web / n).read_bytes()).hexdigest() for n in sizes}
        assert partial == []
        rt.publish([str(page(web, "after.md", 1_000))])  # no temp files left behind by the broken batch
        assert not [n for n in remote_ls(fresh_sshd, rt.staging) if n.startswith(".")]


def test_live_sync_catches_up_after_the_link_comes_back(config: Config, fresh_sshd):
    web = config.home / "cache" / "web"
    doomed = page(web, "doomed.md", 1_000)
    with open_runtime(ssh_config(config, fresh_sshd, readonly="bind", reconnect_backoff_s=0.1), config) as rt, \
            LiveSync(web, [rt], debounce_s=0.02, max_wait_s=0.2, rescan_interval_s=3600) as live:
        wait_for(lambda: live.idle() and "doomed.md" in remote_view(fresh_sshd, web), "the first full diff")
        fresh_sshd.kill()
        made = [page(web, f"while-down-{i}.md", 3_000) for i in range(5)]
        os.unlink(doomed)
        time.sleep(0.5)  # let the watcher fail against the dead link at least once
        fresh_sshd.restart()
        wait_for(lambda: remote_view(fresh_sshd, web) == host_view(web), "the remote to converge", timeout=60)
        assert {p.name for p in made} <= set(remote_view(fresh_sshd, web))


def test_a_command_whose_link_drops_fails_as_a_broken_link_not_a_timeout(config: Config, fresh_sshd):
    """The cause of the catch-up test's CI flake: paramiko closes the channels of a dead transport
    without an EOF, and exec's drain loop waited for one until the deadline (spinning on the
    closed channel) — so a drop cost every in-flight command its whole timeout (10 s publish,
    30 s listing) before the sync could reconnect. It must fail as a broken link instead."""
    with open_runtime(ssh_config(config, fresh_sshd, readonly="bind", reconnect_attempts=1), config) as rt:
        outcome: list[BaseException] = []

        def run() -> None:
            try:
                rt.exec(["sh", "-c", "sleep 300"], timeout=300)
            except BaseException as exc:  # noqa: BLE001 — the test inspects it
                outcome.append(exc)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        wait_for(lambda: b"sleep 300" in fresh_sshd.remote("ps -eo args").stdout, "the remote command to start")
        fresh_sshd.kill()
        worker.join(timeout=120)
        fresh_sshd.restart()
    assert not worker.is_alive(), "exec still waiting after its link dropped"
    [exc] = outcome
    assert type(exc) is RuntimeExecError, exc
    assert "the connection broke (the link dropped while the command ran)" in exc.message


def _write_config(home: Path, server, **host) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump({"runtimes": {"loop": {"type": "ssh", **server.host_config(**host)},
                                                 "sync": {"debounce_s": 0.02, "max_wait_s": 0.2}}}))
    return path


def test_cli_sync_once_prints_what_it_did(home: Path, sshd):
    _write_config(home, sshd, readonly="bind")
    web = home / "cache" / "web"
    page(web, "one.md", 100), page(web, "two.md", 200)
    done = subprocess.run([sys.executable, "-m", "webshelf", "sync", "--once"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "WEBSHELF_HOME": str(home)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "loop: full sync: sent 2, deleted 0, unchanged 0\n", "")
    assert remote_view(sshd, web) == host_view(web)


def test_cli_sync_runs_until_sigterm_and_stops_cleanly(home: Path, sshd):
    _write_config(home, sshd, readonly="bind")
    web = home / "cache" / "web"
    web.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "webshelf", "sync", "--runtime", "loop"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "WEBSHELF_HOME": str(home)})
    try:
        assert proc.stdout.readline() == "loop: full sync: sent 0, deleted 0, unchanged 0\n"
        assert proc.stdout.readline().startswith("watching ")
        page(web, "live.md", 500)
        wait_for(lambda: "live.md" in remote_view(sshd, web), "the live change on the remote")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == "stopped" and "loop: sent 1, deleted 0" in out


def test_stopping_live_sync_sends_the_pending_batch(config: Config, sshd):
    """Ctrl-C / SIGTERM in `webshelf sync` stops the LiveSync: a batch still waiting out its debounce goes out."""
    web = config.home / "cache" / "web"
    web.mkdir(parents=True, exist_ok=True)
    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt:
        live = LiveSync(web, [rt], debounce_s=60, max_wait_s=60, rescan_interval_s=3600)
        for worker in live.workers:  # start() did the first full diff
            worker.next_rescan = time.monotonic() + 3600
        with live:
            late = page(web, "late.md", 500)
            wait_for(lambda: not live.idle(), "the watcher to note the page")
        assert live.idle()
        assert remote_view(sshd, web) == {"late.md": late.stat().st_size}


def test_sync_sends_a_page_written_during_the_first_full_diff(config: Config, sshd, monkeypatch: pytest.MonkeyPatch):
    """The watcher runs before the first full diffs: a page stored while they run does not wait
    for the next rescan (an hour here)."""
    from webshelf.core.surfaces import live

    web = config.home / "cache" / "web"
    web.mkdir(parents=True, exist_ok=True)
    ssh_config(config, sshd, readonly="bind")
    s = config.runtimes.sync
    s.debounce_s, s.max_wait_s, s.rescan_interval_s = 0.02, 0.2, 3600
    opened = live.open_runtime

    def open_and_write_during_start(name, cfg):
        runtime = opened(name, cfg)
        start = runtime.start

        def start_then_write() -> None:
            start()  # its full diff has listed the host: this page comes too late for it
            page(web, "during-start.md", 700)

        runtime.start = start_then_write
        return runtime

    monkeypatch.setattr(live, "open_runtime", open_and_write_during_start)
    stop, lines = threading.Event(), []
    syncing = threading.Thread(target=run_sync, args=(config, ["loop"]),
                               kwargs={"once": False, "echo": lines.append, "stop": stop})
    syncing.start()
    try:
        wait_for(lambda: "during-start.md" in remote_view(sshd, web), "the page written during the first diff",
                 timeout=10)
    finally:
        stop.set()
        syncing.join(timeout=30)
    assert lines[0] == "loop: full sync: sent 0, deleted 0, unchanged 0" and lines[-1] == "stopped"


def test_retries_while_the_host_is_unreachable_wait_at_most_a_few_seconds():
    """After a long outage the doubling backoff would have reached 30 s, so a link that came
    back waited up to that long before anything was sent; while the host cannot be reached at
    all (each try already runs the connection's reconnect ladder) it is capped at 5 s. Other
    failures (a remote disk full) keep the 30 s cap."""
    from webshelf.errors import RuntimeUnavailableError
    from webshelf.mounts.watch import LINK_DOWN_RETRY_S, MAX_RETRY_S, retry_cap

    assert retry_cap(RuntimeUnavailableError("down", runtime="loop")) == LINK_DOWN_RETRY_S == 5.0
    assert retry_cap(RuntimeExecError("disk full", runtime="loop")) == MAX_RETRY_S == 30.0


def test_a_worker_long_in_failure_retries_an_unreachable_host_after_the_short_cap(tmp_path):
    """A worker that has failed many times (its doubling backoff is far past 30 s) reports the
    5 s cap for an unreachable host — and sends the batch on that retry."""
    from webshelf.errors import RuntimeUnavailableError

    class Target:
        name = "loop"

        def __init__(self) -> None:
            self.calls, self.sent = 0, []

        def publish(self, paths):
            self.calls += 1
            if self.calls == 1:
                raise RuntimeUnavailableError("cannot connect", runtime="loop")
            self.sent += paths

        def retract(self, paths):
            pass

        def sync(self):
            return "full"

        def needs_sync(self):
            return False

    reports: list[str] = []
    target = Target()
    live = LiveSync(tmp_path, [target], debounce_s=0.01, max_wait_s=0.05, rescan_interval_s=3600,
                    report=lambda _t, m: reports.append(m))
    [worker] = live.workers
    worker.next_rescan = time.monotonic() + 3600
    worker.errors = 10  # 0.5 · 2^10 s uncapped
    (tmp_path / "page.md").write_text("x")
    worker.note("page.md", True)
    with live:
        wait_for(lambda: target.sent, "the retry to send the page", timeout=60)
    assert reports[0] == "error: runtime 'loop': cannot connect (retrying in 5 s)"
    assert target.sent == [str(tmp_path / "page.md")]
