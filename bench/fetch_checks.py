"""Cost of the fetch hardening on the 50-URL pipeline: checks on vs off, in the same run.

50 real pages (WCXB HTML) from a loopback server adding 200 ms to every response, through
``web_extract`` at the default concurrency. "on" is the shipped code: address policy (parse,
resolve once, check every address, connect to the checked IP), hand-followed redirects,
capped streaming decode, hidden-HTML removal and invisible-Unicode removal. "off" patches those
steps out (plain connect, no URL check, plain body read, no HTML/Unicode cleaning). Rounds
alternate on/off so drift hits both. Target: on < 5% slower than off.

Run: .venv/bin/python bench/fetch_checks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import webshelf.core.backends.local as local  # noqa: E402
import webshelf.core.clean as clean  # noqa: E402
import webshelf.core.convert.by_type as convert  # noqa: E402
import webshelf.core.fetch.guarded_connect as guarded  # noqa: E402
import webshelf.core.fetch.netpolicy as netpolicy  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.core.extract import web_extract_sync  # noqa: E402
from tests.loopback import WCXB, LoopbackServer  # noqa: E402

LATENCY = 0.2
N_URLS = 50


async def _plain_connect(self, host, port, timeout=None, local_address=None, socket_options=None):
    return await self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                         socket_options=socket_options)


async def _plain_read(raw, content_encoding, cap, url):
    return b"".join([chunk async for chunk in raw])


@contextmanager
def checks_off():
    with mock.patch.object(guarded.GuardedNetworkBackend, "connect_tcp", _plain_connect), \
            mock.patch.object(netpolicy, "check_url", lambda *a, **k: None), \
            mock.patch.object(local, "read_capped", _plain_read), \
            mock.patch.object(convert, "drop_hidden", lambda html: html), \
            mock.patch.object(clean, "drop_invisible", lambda text: text):
        yield


def run(urls: list[str], home: str) -> tuple[float, int]:
    config = Config.model_validate({"web": {"max_urls": N_URLS, "allow_hosts": ["127.0.0.1"]}}).with_home(Path(home))
    start = time.perf_counter()
    results = web_extract_sync(urls, config=config, fresh=True)
    return time.perf_counter() - start, sum(not r.ok for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ids = sorted(p.name.split(".")[0] for p in (WCXB / "html").glob("*.html.gz"))[:N_URLS]
    walls: dict[str, list[float]] = {"off": [], "on": []}
    failed: dict[str, int] = {"off": 0, "on": 0}
    with LoopbackServer(latency=LATENCY) as server:
        urls = [server.url(f"/wcxb/{i}") for i in ids]
        for _ in range(args.rounds):
            for label in ("off", "on"):
                with tempfile.TemporaryDirectory() as home:
                    if label == "off":
                        with checks_off():
                            wall, bad = run(urls, home)
                    else:
                        wall, bad = run(urls, home)
                walls[label].append(wall)
                failed[label] = max(failed[label], bad)
    base = statistics.median(walls["off"])
    table = Table(title=f"{N_URLS} URLs, loopback server with {LATENCY * 1000:.0f} ms latency, "
                        f"median of {args.rounds} alternating rounds")
    for col in ("fetch checks", "median wall s", "min s", "max s", "vs off", "failed URLs"):
        table.add_column(col, justify="right")
    for label in ("off", "on"):
        w = walls[label]
        table.add_row(label, f"{statistics.median(w):.3f}", f"{min(w):.3f}", f"{max(w):.3f}",
                      f"{(statistics.median(w) / base - 1) * 100:+.1f}%", str(failed[label]))
    Console().print(table)


if __name__ == "__main__":
    main()
