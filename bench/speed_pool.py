"""Issue 15, the worker-pool rows: 500 URLs at 200 ms latency (concurrency 8, 32, 64) vs the network
ideal and bare httpx; CPU per page at concurrency 8 vs bare httpx; peak RSS of one 20 MB HTML page
vs bare httpx GET+decode. ``rows()`` speaks bench/speed_common.py's protocol (plain dicts with the
same keys when that module is absent); ``python bench/speed_pool.py`` prints them.

The loopback server runs in its own process so that its threads never share our GIL; the ideal
is latency × ceil(500 / concurrency). One run per row (each is 500 requests; the machine is
shared) — the same-run baselines make the ratios comparable.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LATENCY, N = 0.2, 500


def _row(what, ours, base, goal, passed, note=""):  # noqa: ANN001, ANN202
    return {"what": what, "ours_ms": ours, "baseline_ms": base, "ratio": (ours / base) if base else None,
            "goal": goal, "passed": passed, "note": note}


def big_page() -> bytes:
    """20 MB of ordinary HTML paragraphs (built in the server process, never in the measured one)."""
    return (b"<html><body>" + b"<p>Some ordinary paragraph text, " * 700_000)[:20_000_000]


def _serve(queue, big: bool) -> None:  # noqa: ANN001
    from tests.loopback import LoopbackServer, Response

    with LoopbackServer(latency=LATENCY) as srv:
        if big:
            big = big_page()
            srv.route("/big", Response(big))
        queue.put(srv.url("/"))
        while True:
            time.sleep(3600)


def _server(big: bool = False):  # noqa: ANN202
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_serve, args=(queue, big), daemon=True)
    proc.start()
    return proc, queue.get(timeout=60).rstrip("/")


def _ids() -> list[str]:
    from tests import corpus

    ids = sorted(corpus.wcxb_metadata())
    return [ids[i % len(ids)] for i in range(N)]


def _cpu_s(pids: list[int]) -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / 100
        except OSError:
            pass
    return total


def _extract(urls, concurrency: int, workers: int, home: str) -> tuple[float, float, int]:  # noqa: ANN001
    from webshelf.core.config import Config
    from webshelf.core.convert import pool
    from webshelf.core.extract import web_extract_sync

    # One loopback server stands for 500 sites: the per-host limit (default 2 in flight, polled
    # through lock files) would otherwise be what this measures, not the pool.
    config = Config.model_validate({"web": {"max_urls": N, "concurrency": concurrency, "allow_private": True,
                                            # the local backend alone: real pages that look like SPA shells would
                                            # otherwise go to the browser, which asks DNS for their CDNs (off loopback)
                                            "fallback": ["local"],
                                            "per_host_concurrency": min(concurrency, 64),
                                            "convert_workers": workers}}).with_home(Path(home))
    if workers > 1:
        pool.shared_pool(workers, config.web.convert_memory_mb)
    pids = pool._shared.worker_pids() if pool._shared else []
    cpu0, t0 = _cpu_s(pids), time.perf_counter()
    results = web_extract_sync(urls, config=config, fresh=True)
    wall = time.perf_counter() - t0
    pids = pool._shared.worker_pids() if pool._shared else []
    return wall, _cpu_s(pids) - cpu0, sum(not r.ok for r in results)


def _bare(urls, concurrency: int) -> tuple[float, float]:  # noqa: ANN001
    import httpx

    async def go() -> None:
        gate = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:
            async def one(u: str) -> None:
                async with gate:
                    (await client.get(u)).text  # noqa: B018 — GET + decode
            await asyncio.gather(*(one(u) for u in urls))

    cpu0, t0 = _cpu_s([]), time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - t0, _cpu_s([]) - cpu0


def rows() -> list[dict]:
    out = []
    proc, base = _server()
    try:
        urls = [f"{base}/wcxb/{i}" for i in _ids()]
        _bare(urls[:50], 32)  # warm-up: page cache, server threads
        with tempfile.TemporaryDirectory() as home:
            _extract(urls[:40], 8, 2, home)  # warm-up: pool started, converters loaded
            for concurrency in (8, 32, 64):
                ideal = LATENCY * math.ceil(N / concurrency)
                bare_wall, bare_cpu = _bare(urls, concurrency)
                wall, cpu, failed = _extract(urls, concurrency, 2, home)
                wall0, cpu0, _ = _extract(urls, concurrency, 0, home)
                note = (f"ideal {ideal:.2f} s; bare httpx {bare_wall:.2f} s; in-process conversion {wall0:.2f} s "
                        f"({wall0 / ideal:.2f}×); {failed} failed")
                out.append(_row(f"{N} URLs, {LATENCY * 1000:.0f} ms latency, concurrency {concurrency} (2 workers)",
                                wall * 1000, ideal * 1000, "≤ 1.1× ideal", wall / ideal <= 1.1, note))
                if concurrency == 8:
                    out.append(_row("CPU per page (conversion + store), concurrency 8", cpu / N * 1000, bare_cpu / N * 1000,
                                    "≤ 3×", cpu / bare_cpu <= 3, f"bare httpx GET+decode; in-process {cpu0 / N * 1000:.1f} ms; "
                                    "ours counts the parent and the workers"))
    finally:
        proc.kill()
    out.append(_rss_row())
    return out


RSS_CHILD = """
import sys, resource, time
sys.path.insert(0, {repo!r})
from bench.speed_pool import _server
proc, base = _server(True)
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
mode = {mode!r}
import httpx
if mode == "bare":
    httpx.get(base + "/big", timeout=120).text
    extra = 0
else:
    from pathlib import Path
    import tempfile
    from webshelf.core.config import Config
    from webshelf.core.convert import pool
    from webshelf.core.extract import web_extract_sync
    httpx.get(base + "/", timeout=60)  # the same imports as bare, before the start figure
    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cfg = Config.model_validate({{"web": {{"allow_private": True, "fallback": ["local"], "max_bytes": 50_000_000, "convert_workers": 2,
                                          "timeout_s": 120, "convert_timeout_s": 120}}}}).with_home(Path(tempfile.mkdtemp()))
    p = pool.shared_pool(2, cfg.web.convert_memory_mb)
    [f.result() for f in [p._pool.schedule(pool.peak_rss_kb) for _ in range(4)]]  # both workers started
    def hwm_kb(pid):  # every worker's own peak, read from /proc: a probe task may land on the idle one
        for line in open(f"/proc/{{pid}}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    pids = p.worker_pids()
    idle = {{pid: hwm_kb(pid) for pid in pids}}
    r = web_extract_sync([base + "/big"], config=cfg, fresh=True)
    assert r[0].ok, r[0].error
    assert p.worker_pids() == pids, "a worker was replaced during the conversion"
    extra = max(hwm_kb(pid) - idle[pid] for pid in pids)
proc.kill()
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start) / 1024, extra / 1024)
"""


def _rss_row_only() -> list[dict]:
    return [_rss_row()]


def _rss_row() -> dict:
    import subprocess

    repo = str(Path(__file__).resolve().parents[1])
    got = {}
    for mode in ("bare", "ours"):
        out = subprocess.run([sys.executable, "-c", RSS_CHILD.format(repo=repo, mode=mode)], capture_output=True,
                             text=True, timeout=600)
        parent, worker = (float(x) for x in out.stdout.split()) if out.returncode == 0 else (float("nan"), 0.0)
        got[mode] = (parent, worker)
    ours = got["ours"][0] + got["ours"][1]
    return _row("peak RSS, one 20 MB HTML page (MB, not ms)", ours, got["bare"][0], "≤ 2.5×",
                ours / got["bare"][0] <= 2.5 if got["bare"][0] else None,
                f"ours: parent +{got['ours'][0]:.0f} MB + busiest worker +{got['ours'][1]:.0f} MB over its idle peak"
                f"; bare httpx GET+decode +{got['bare'][0]:.0f} MB")


def _print(rows_: list[dict]) -> None:
    for r in rows_:
        ratio = f"{r['ratio']:.2f}×" if r["ratio"] else "—"
        print(f"| {r['what']} | {r['ours_ms']:.1f} | {r['baseline_ms']:.1f} | {ratio} | {r['goal']} | "
              f"{'PASS' if r['passed'] else 'FAIL'} | {r['note']} |", flush=True)


if __name__ == "__main__":
    _print(_rss_row_only() if "--rss" in sys.argv else rows())
