"""Modal fleet benchmark: what publishing one page costs as the number of sandboxes grows.

    .venv/bin/python bench/modal_fleet.py [--sizes 1,10,50,200] [--page-kb 60]

Runs the real adapter and fleet against the test fake (Modal's service is unreachable here),
so the counts are exact and the times are the adapter's own overhead plus the fake's reload
(a /proc scan + a local copy) — not Modal's network latency. Baseline, computed in the same
run: per-sandbox uploads, i.e. N uploads of the page. Target: uploads stay 1 for any N;
reloads = N; bytes sent = one page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webshelf.core.config import Config, ModalRuntimeConfig  # noqa: E402
from webshelf.mounts.publish import publish_all  # noqa: E402
from webshelf.mounts.spec import cache_mount  # noqa: E402
from tests.runtimes.fake_modal import FakeModal, fake_runtime  # noqa: E402


def run(n: int, page_kb: int) -> dict:
    fake = FakeModal()
    config = Config().with_home(Path(tempfile.mkdtemp(prefix="bench-modal-")) / "home")
    mount = cache_mount(config.home)
    fleet = [fake_runtime(fake, ModalRuntimeConfig(), mount) for _ in range(n)]
    for rt in fleet:
        rt.start()
    try:
        path = mount.path / "bench-page.md"
        path.write_bytes((b"x" * 99 + b"\n") * (page_kb * 10))
        uploads0 = fake.uploads
        t0 = time.perf_counter()
        problems = publish_all(fleet, [str(path)], timeout=600)
        ms = (time.perf_counter() - t0) * 1000
        assert not problems, problems
        reloads = sum(fake.sandboxes[rt.sandbox_id].reloads for rt in fleet)
        return {"n": n, "uploads": fake.uploads - uploads0, "reloads": reloads,
                "sent_kb": (fake.uploads - uploads0) * path.stat().st_size / 1024,
                "baseline_kb": n * path.stat().st_size / 1024, "ms": ms}
    finally:
        for rt in fleet:
            rt.stop()
        fake.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,10,50,200")
    ap.add_argument("--page-kb", type=int, default=60)
    args = ap.parse_args()
    print(f"{'sandboxes':>9} {'uploads':>7} {'reloads':>7} {'sent KiB':>9} {'per-sandbox KiB':>15} {'publish ms':>10}")
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.page_kb)
        print(f"{r['n']:>9} {r['uploads']:>7} {r['reloads']:>7} {r['sent_kb']:>9.0f} {r['baseline_kb']:>15.0f} {r['ms']:>10.1f}")


if __name__ == "__main__":
    main()
