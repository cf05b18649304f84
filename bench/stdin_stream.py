"""Standard input through a sandbox: streamed (``exec(stdin=stream)``, what ``runtime run`` does
now) vs buffered (``exec(stdin=stream.read())``, what it did before), in the same run.

Each case is a fresh Python process that opens the runtime and runs ``wc -c`` in it with its own
stdin, fed SIZE bytes through a pipe by this script; its peak RSS (``wait4``, which counts what
it waited for too) and wall time are printed, with the streamed/buffered ratio. Peak RSS is
what streaming is for; the time column shows it costs nothing.

    nice -n 10 .venv/bin/python bench/stdin_stream.py [--mb 50] [--rounds 3] [--runtime local --runtime docker]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.runtimes.test_lifecycle import pipe_through  # noqa: E402

CHILD = """
import sys
from webshelf.core.config import load_config
from webshelf.core.sandbox import open_runtime
mode, name = sys.argv[1], sys.argv[2]
stdin = sys.stdin.buffer if mode == "streamed" else sys.stdin.buffer.read()
with open_runtime(name, load_config()) as box:
    done = box.exec(["wc", "-c"], timeout=600, stdin=stdin)
sys.stdout.buffer.write(done.stdout)
"""


def one(mode: str, runtime: str, size: int) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    out, code, peak = pipe_through([sys.executable, "-c", CHILD, mode, runtime], size)
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"{mode} {runtime}: exit {code}")
    return wall, peak, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtime", action="append")
    args = parser.parse_args()
    size = args.mb * 1024 * 1024
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; input {args.mb} MB; "
          f"median of {args.rounds}")
    print("| runtime | mode | peak RSS MB | wall s | RSS vs buffered | wall vs buffered |")
    print("|---|---|---:|---:|---:|---:|")
    for runtime in args.runtime or ["local", "docker"]:
        rows = {}
        for mode in ("buffered", "streamed"):
            runs = [one(mode, runtime, size) for _ in range(args.rounds)]
            assert all(out.strip() == str(size).encode() for _, _, out in runs), runs[0][2]
            rows[mode] = (statistics.median(w for w, _, _ in runs), statistics.median(r for _, r, _ in runs))
        base_wall, base_rss = rows["buffered"]
        for mode, (wall, rss) in rows.items():
            print(f"| {runtime} | {mode} | {rss} | {wall:.2f} | {rss / base_rss:.2f}× | {wall / base_wall:.2f}× |")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
