"""Browser backend benchmark: what rendering costs next to the local backend, in the same run.

1. The loopback SPA (text only after JavaScript) and 20 real dev-corpus pages (WCXB): render +
   extract per page through the browser backend vs the local backend, median ms, one backend
   instance each (the browser's launch is measured on its own row).
2. Memory of the Chromium processes (RSS of the browser and its children, from /proc): idle
   after launch, and the peak while rendering at each max_pages.
0. The second call's time to first render: each call with its own browser (before the
   process-wide browser service) vs the second call reusing the first call's browser (after).
3. Pages/s through web_extract(backend="browser") for the 20 pages at web.browser.max_pages
   1, 4 and 8, next to the local backend's pages/s for the same URLs.

Rows 1 and 3 are measured twice in the same run, interleaved: "before" is the render of
``--before`` (default ``main``; bench/old_code.py loads its backend.py from git), which paused
every request of a page in a Playwright route handler (a round trip through the driver and
the service thread for each script, style and XHR), "after" is this tree's, which lets
Chromium pause only images, media, fonts (failed) and documents (checked) through CDP Fetch.

Nothing may leave loopback: corpus pages name external images, fonts and scripts, so the policy
proxy here is given a resolver that knows no names and an address check that refuses every
non-loopback address (bench-only; the product's policy allows public hosts).

Run: .venv/bin/python bench/browser.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.loopback import WCXB, LoopbackServer, Response  # noqa: E402
from tests.core.test_browser_fallback import BUNDLE, JS, SPA  # noqa: E402
from webshelf.core.backends.browser import backend as browser_backend, proxy as proxy_module  # noqa: E402
from webshelf.core.backends.browser.backend import BrowserBackend  # noqa: E402
from webshelf.core.backends.browser.lifecycle import chromium_pids, rss_bytes  # noqa: E402
from webshelf.core.backends.browser.service import shutdown_all  # noqa: E402
from webshelf.core.backends.local import LocalBackend  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.core.extract import web_extract_sync  # noqa: E402
from webshelf.errors import BlockedURLError  # noqa: E402
from bench.old_code import old_module  # noqa: E402

N_PAGES = 20
refused_outside: list[str] = []
_check = proxy_module.check_addresses


def loopback_only(host: str, addresses: list[str], policy: object) -> list[str]:
    """The product's check, then: nothing but 127.0.0.0/8 (this machine has no network)."""
    checked = _check(host, addresses, policy)
    if not all(ipaddress.ip_address(a).is_loopback for a in checked):
        refused_outside.append(host)
        raise BlockedURLError(f"refused: {host} is outside loopback (bench)")
    return checked


async def no_names(host: str, port: int) -> list[str]:
    refused_outside.append(host)
    raise OSError(f"bench: no DNS for {host}")


proxy_module.check_addresses = loopback_only
_original_init = BrowserBackend.__init__


def _init(self, config, *, resolver=None):  # every browser backend of this run, web_extract's too
    _original_init(self, config, resolver=resolver or no_names)


BrowserBackend.__init__ = _init
AFTER = {"_render": BrowserBackend._render, "_second_layer": BrowserBackend._second_layer}
VARIANTS = ("before", "after")


def load_before(rev: str) -> dict:
    """The old render and second layer (``rev``'s backend.py), swapped in for "before" rows."""
    old = old_module("bench_old_browser_backend", rev, "core/backends/browser/backend.py", {})
    return {"_render": old.BrowserBackend._render, "_second_layer": old.BrowserBackend._second_layer}


def use(methods: dict) -> None:
    for name, method in methods.items():
        setattr(BrowserBackend, name, method)


def tree_ticks() -> dict[int, int]:
    """CPU ticks (user + system) of this process and every descendant (Chromium, Playwright's driver)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                fields = stat[stat.rindex(")") + 2:].split()
                table[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
            except (OSError, ValueError, IndexError):
                pass
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, stack = {}, [os.getpid()]
    while stack:
        pid = stack.pop()
        if pid in table:
            out[pid] = table[pid][1]
        stack.extend(children.get(pid, []))
    return out


class PeakRSS:
    """Samples the Chromium processes' RSS every 100 ms while a block runs, and the CPU time the
    whole process tree used meanwhile (each process's last sample: one that ends between two
    samples loses at most 100 ms). CPU seconds do not depend on how loaded the machine is the way
    wall time does."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = False
        self._before = tree_ticks()
        self._last: dict[int, int] = {}

    @property
    def cpu_s(self) -> float:
        return sum(t - self._before.get(pid, 0) for pid, t in self._last.items()) / os.sysconf("SC_CLK_TCK")

    def _run(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, rss_bytes(chromium_pids()))
            self._last.update(tree_ticks())
            time.sleep(0.1)

    def __enter__(self) -> "PeakRSS":
        import threading

        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join()
        self._last.update(tree_ticks())


def per_page(config: Config, urls: list[str], rounds: int, variants: dict) -> dict:
    async def go():
        out = {}
        async with LocalBackend(config) as local:
            for url in urls:
                times = []
                for _ in range(rounds):
                    t = time.perf_counter()
                    page = await local.fetch(url)
                    times.append(time.perf_counter() - t)
                out.setdefault("local", []).append((statistics.median(times), len(page.markdown)))
        shutdown_all()  # the launch is measured: no browser left from an earlier part
        async with BrowserBackend(config) as browser:
            t = time.perf_counter()
            await browser._browser()
            out["launch"] = time.perf_counter() - t
            out["idle_rss"] = rss_bytes(chromium_pids())
            for url in urls:
                times: dict[str, list[float]] = {v: [] for v in variants}
                for _ in range(rounds):
                    for variant, methods in variants.items():  # interleaved: the same load for both
                        use(methods)
                        t = time.perf_counter()
                        page = await browser.fetch(url)
                        times[variant].append(time.perf_counter() - t)
                        chars = len(page.markdown)
                for variant in variants:
                    out.setdefault(variant, []).append((statistics.median(times[variant]), chars))
            use(variants["after"])
        return out
    return asyncio.run(go())


def second_call(config: Config, url: str, rounds: int) -> dict[str, list[float]]:
    """Wall time of a second one-URL ``web_extract`` call (its time to first render), "before":
    every call launches its own browser and closes it at its end (what webshelf did before the
    process-wide service; reproduced by closing the service around each call), and "after": the
    second call reuses the browser the first call launched. Interleaved per round, same run."""
    config = config.model_copy(deep=True)
    config.web.backend = "browser"
    out: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(rounds):
        for case in ("before", "after"):
            shutdown_all()
            web_extract_sync([url], config=config, fresh=True)  # the first call
            if case == "before":
                shutdown_all()  # a per-call browser ended with its call
            start = time.perf_counter()
            [result] = web_extract_sync([url], config=config, fresh=True)
            out[case].append(time.perf_counter() - start)
            assert result.ok, result.error
    shutdown_all()
    return out


def print_second_call(console: Console, config: Config, spa: str, page: str, rounds: int) -> None:
    table = Table(title=f"Second call's time to first render (one URL per call, median of {rounds}, same run)")
    for col in ("page", "before: browser per call, ms", "after: one browser per process, ms", "after / before"):
        table.add_column(col, justify="right")
    for label, url in (("loopback SPA", spa), ("WCXB dev page", page)):
        times = second_call(config, url, rounds)
        before, after = (statistics.median(times[k]) * 1000 for k in ("before", "after"))
        table.add_row(label, f"{before:.0f}", f"{after:.0f}", f"{after / before:.2f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("second-call", "render"), help="run only this part")
    parser.add_argument("--before", default="main", help="the git revision whose render is the baseline")
    parser.add_argument("--no-second-call", action="store_true", help="leave out part 0 (the second call)")
    args = parser.parse_args()
    variants = {"before": load_before(args.before), "after": AFTER}
    console = Console(width=160)
    ids = sorted(p.name.split(".")[0] for p in (WCXB / "html").glob("*.html.gz"))[:N_PAGES]
    with LoopbackServer() as server, tempfile.TemporaryDirectory() as home:
        server.route("/fallback/bundle.js", Response(BUNDLE, headers=JS))
        spa = server.route("/fallback/spa", Response(SPA))
        urls = [server.url(f"/wcxb/{i}") for i in ids]
        # every page is on 127.0.0.1: per_host_concurrency 8 lets max_pages, not politeness, decide
        config = Config.model_validate({"web": {"allow_hosts": ["127.0.0.1/32"], "max_urls": 50, "per_host_concurrency": 8,
                                                "fallback": ["local"]}}).with_home(Path(home))

        if args.only == "second-call" or (args.only is None and not args.no_second_call):
            print_second_call(console, config, spa, urls[0], max(args.rounds, 5))
        if args.only == "second-call":
            return
        spa_times = per_page(config, [spa], args.rounds, variants)
        corpus = per_page(config, urls, args.rounds, variants)
        t1 = Table(title=f"Render + extract per page, median of {args.rounds} (same run, before/after interleaved; "
                         "the browser launch once)")
        for col in ("pages", "local ms", "browser before ms", "browser after ms", "after / before", "after / local",
                    "local chars", "browser chars"):
            t1.add_column(col, justify="right")
        for label, data in (("loopback SPA", spa_times), (f"{len(urls)} WCXB dev pages (median)", corpus)):
            lt = statistics.median(t for t, _ in data["local"]) * 1000
            bb = statistics.median(t for t, _ in data["before"]) * 1000
            ba = statistics.median(t for t, _ in data["after"]) * 1000
            lc = sum(c for _, c in data["local"]) // len(data["local"])
            bc = sum(c for _, c in data["after"]) // len(data["after"])
            t1.add_row(label, f"{lt:.1f}", f"{bb:.1f}", f"{ba:.1f}", f"{ba / bb:.2f}", f"{ba / lt:.1f}×", f"{lc:,}", f"{bc:,}")
        t1.add_row("browser launch", "", "", f"{corpus['launch'] * 1000:.0f}", "", "", "", "")
        console.print(t1)
        if args.only == "render":
            return

        t2 = Table(title=f"{len(urls)} WCXB pages through web_extract (fresh), pages/s and Chromium memory")
        for col in ("backend", "max_pages", "wall s", "pages/s", "failed", "peak RSS MiB"):
            t2.add_column(col, justify="right")
        t2.add_column("CPU s per page", justify="right")
        t2.add_column("load (1 min)", justify="right")
        start = time.perf_counter()
        results = web_extract_sync(urls, config=config, backend="local", fresh=True)
        wall = time.perf_counter() - start
        t2.add_row("local", "(concurrency 8)", f"{wall:.2f}", f"{len(urls) / wall:.1f}",
                   str(sum(not r.ok for r in results)), "", "", f"{os.getloadavg()[0]:.1f}")
        for max_pages in (1, 4, 8):
            config.web.browser.max_pages = max_pages
            for variant, methods in variants.items():
                use(methods)
                with PeakRSS() as rss:
                    start = time.perf_counter()
                    results = web_extract_sync(urls, config=config, backend="browser", fresh=True)
                    wall = time.perf_counter() - start
                failed = [r.error.code for r in results if not r.ok]
                t2.add_row(f"browser {variant}", str(max_pages), f"{wall:.2f}", f"{len(urls) / wall:.2f}",
                           f"{len(failed)} {' '.join(sorted(set(failed)))}", f"{rss.peak / 2**20:.0f}",
                           f"{rss.cpu_s / len(urls):.2f}", f"{os.getloadavg()[0]:.1f}")
        use(variants["after"])
        console.print(t2)
        console.print(f"Chromium idle after launch: {corpus['idle_rss'] / 2**20:.0f} MiB RSS (browser + children, "
                      f"shared pages counted per process); requests refused for leaving loopback: "
                      f"{len(refused_outside)} ({len(set(refused_outside))} hosts)")


if __name__ == "__main__":
    main()
