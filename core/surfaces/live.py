"""``webshelf sync``: keep SSH mirrors in step with this host's cache, in the foreground.

By default every runtime instance of type ssh is kept in step (timing: ``runtimes.sync``). Each
is started (connect, prepare the read-only directory, full diff), then a ``mounts.watch.LiveSync``
mirrors every later change until SIGINT, SIGTERM or SIGHUP (a reaction pushed on the process's one
signal handler, core/shutdown.py), after which the pending batch is sent and the connections are
closed. ``once=True`` stops after the full diff.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence

from webshelf.core import shutdown as process
from webshelf.core.config import Config
from webshelf.errors import ConfigError
from webshelf.core.sandbox import open_runtime
from webshelf.mounts.watch import LiveSync


def sync_names(config: Config, names: Sequence[str]) -> list[str]:
    """The runtimes to sync: those named, or every runtime instance of type ssh."""
    if names:
        return list(names)
    hosts = config.runtimes.of_type("ssh")
    if not hosts:
        raise ConfigError("nothing to sync: no runtime of type ssh is configured; add one under runtimes: "
                          "(e.g. runtimes.web1: {type: ssh, host: web1.example.com}) or name one with --runtime",
                          key="runtimes")
    return hosts


def run_sync(config: Config, names: Sequence[str], *, once: bool, echo: Callable[[str], None],
             stop: threading.Event | None = None) -> None:
    """Sync until ``stop`` is set (or SIGINT/SIGTERM/SIGHUP when running in the main thread)."""
    stop = stop or threading.Event()
    runtimes = []
    for name in sync_names(config, names):
        runtime = open_runtime(name, config)
        if not runtime.offers.full_sync:  # declared by the adapter (runtimes/base.py Offers)
            why = ("bind-mounts the cache and needs no sync" if runtime.offers.bind_mount else
                   "gets each page when it is stored and has no full sync")
            raise ConfigError(f"runtime {name!r} {why}; name an ssh runtime", key=f"runtimes.{name}")
        runtimes.append(runtime)
    s = config.runtimes.sync
    live = None if once else LiveSync(runtimes[0].mount.path, runtimes, debounce_s=s.debounce_s,
                                      max_wait_s=s.max_wait_s, rescan_interval_s=s.rescan_interval_s,
                                      report=lambda t, m: echo(f"{t}: {m}"))
    with contextlib.ExitStack() as stack:
        if live is not None:  # watch before the first full diffs: a page written during them is sent after
            live.watch()
            stack.callback(live.stop)
        for runtime in runtimes:
            runtime.start()
            stack.callback(runtime.stop)
            echo(f"{runtime.name}: full sync: {runtime.last_sync}")
        if live is None:
            return
        stack.enter_context(process.reacting(lambda _signum: stop.set()))  # main thread only; else: set ``stop``
        for worker in live.workers:  # start() just did the first full diff
            worker.next_rescan = time.monotonic() + s.rescan_interval_s
        with live:  # its exit sends the pending batch while the connections are still open
            echo(f"watching {runtimes[0].mount.path} (Ctrl-C to stop)")
            stop.wait()
        echo("stopped")

