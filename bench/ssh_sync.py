"""SSH runtime: single-page publish latency and 500-page sync throughput vs `tar c | ssh host tar x`.

Runs against the tests' loopback sshd (own mount namespace, tmpfs over /tmp; needs root and
openssh-server). Per round: (1) the baseline pipes GNU tar into OpenSSH's `ssh` running
`tar x` in a fresh remote directory; (2) webshelf's full diff (`SshRuntime.sync()`, over an
already open connection, as `webshelf sync` and publish use it) mirrors the same 500 pages
into an empty remote directory. Arms alternate; medians reported. Then N single-page publishes.

    .venv/bin/python bench/ssh_sync.py [--pages 500] [--page-kb 40] [--rounds 5] [--publishes 50]
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webshelf.core.config import Config, SshRuntimeConfig  # noqa: E402
from webshelf.core.sandbox import open_runtime  # noqa: E402
from tests.sshd import Sshd, sshd_missing  # noqa: E402


def make_pages(web: Path, count: int, kb: int) -> int:
    web.mkdir(parents=True, exist_ok=True)
    words = [secrets.token_hex(4) for _ in range(2_000)]
    total = 0
    for i in range(count):
        lines, size = [f"# page {i}\n"], 0
        while size < kb * 1024:
            line = " ".join(words[(i * 7 + size + k) % len(words)] for k in range(12)) + "\n"
            lines.append(line)
            size += len(line)
        data = "".join(lines).encode()
        (web / f"bench-{i:04}.md").write_bytes(data)
        total += len(data)
    return total


def baseline(server: Sshd, web: Path, dest: str) -> float:
    ssh = ["ssh", "-i", str(server.user_key), "-p", str(server.port), "-o", f"UserKnownHostsFile={server.known_hosts}",
           "-o", "BatchMode=yes", "root@127.0.0.1", f"mkdir -p '{dest}' && tar x -C '{dest}'"]
    t = time.perf_counter()
    tar = subprocess.Popen(["tar", "c", "-C", str(web), "."], stdout=subprocess.PIPE)
    done = subprocess.run(ssh, stdin=tar.stdout, capture_output=True)
    tar.stdout.close()
    tar.wait()
    elapsed = time.perf_counter() - t
    if done.returncode or tar.returncode:
        raise SystemExit(f"baseline failed: {done.stderr.decode()}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--page-kb", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--publishes", type=int, default=50)
    args = ap.parse_args()
    why = sshd_missing()
    if why:
        raise SystemExit(why)
    root = Path(tempfile.mkdtemp(prefix="webshelf-bench-ssh-", dir="/tmp"))
    server = Sshd(Path("/tmp"), tmpfs_size="4g").start()
    try:
        config = Config().with_home(root / "home")
        web = config.home / "cache" / "web"
        total = make_pages(web, args.pages, args.page_kb)
        config.runtimes.loop = SshRuntimeConfig(**server.host_config(readonly="bind"), publish_timeout_s=600)
        base, ours = [], []
        rt = open_runtime("loop", config)
        for r in range(args.rounds):
            base.append(baseline(server, web, f"{root}/baseline-{r}"))
            if rt.conn is None:
                rt.start()  # the first full diff runs here; time the next ones from an empty remote
            server.remote('umount "$1" 2>/dev/null; rm -rf -- "$1" "$2"', str(web), str(rt.staging))
            t = time.perf_counter()
            report = rt.sync()
            ours.append(time.perf_counter() - t)
            assert len(report.sent) == args.pages, report
        latencies = []
        for i in range(args.publishes):
            p = web / f"single-{i:03}.md"
            p.write_bytes(os.urandom(8_000).hex().encode())
            t = time.perf_counter()
            rt.publish([str(p)])
            latencies.append((time.perf_counter() - t) * 1000)
        probe = [(time.perf_counter(), rt.exec(["true"], timeout=30), time.perf_counter()) for _ in range(20)]
        rtt = statistics.median((b - a) * 1000 for a, _, b in probe)
        rt.stop()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    mb = total / 1e6
    b, o = statistics.median(base), statistics.median(ours)
    print(f"{args.pages} pages, {mb:.1f} MB, {args.rounds} alternating rounds; loopback sshd (OpenSSH), paramiko client\n")
    print(f"{'arm':42} {'median s':>9} {'min s':>7} {'MB/s':>7} {'vs baseline':>12}")
    print(f"{'baseline: tar c | ssh host tar x':42} {b:9.3f} {min(base):7.3f} {mb / b:7.1f} {'1.00x':>12}")
    print(f"{'webshelf full diff (SshRuntime.sync)':42} {o:9.3f} {min(ours):7.3f} {mb / o:7.1f} {b / o:11.2f}x")
    print(f"\nsingle-page publish (8 KB), {args.publishes} runs: median {statistics.median(latencies):.1f} ms, "
          f"p90 {sorted(latencies)[int(len(latencies) * 0.9) - 1]:.1f} ms; one exec round trip (`true`): {rtt:.1f} ms")


if __name__ == "__main__":
    main()
