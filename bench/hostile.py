"""Issue 16 item 1: time and peak RSS of converting each hostile page, before and after bounds.

"before" runs the code of ``main`` (extracted with ``git archive`` into a temp dir) in a child
process with an outer timeout; "after" runs this tree's ``to_markdown`` — the function a
conversion worker runs, pre-checks included — in a child process the same way. Peak RSS is the
child's ``ru_maxrss`` from ``os.wait4``, so a child killed at the timeout is measured too — unless that
figure is only the peak Linux carried over fork+exec from this process, then the child's own VmHWM
polled from /proc (bench/speed_common.py ``peak_rss_mb`` says why). On top
of "after", the worker pool's hard bounds hold (``web.convert_timeout_s``, ``convert_memory_mb``).

Run: .venv/bin/python bench/hostile.py [--timeout S] [--ref main]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from speed_common import child_peak_kb, vm_hwm_kb  # bench/ is sys.path[0] when run as a script


REPO = Path(__file__).resolve().parents[1]

CASES = {
    "100,000 nested <div> (1.1 MB)": "body = ('<html><body>' + '<div>'*100000 + 'the only line of text' + '</div>'*100000).encode(); ctype='text/html'",
    "2.4 million <p> (9.6 MB)": "body = b'<html><body>' + b'<p>x' * 2_400_000; ctype='text/html'",
    "5 million <p> (20 MB)": "body = b'<html><body>' + b'<p>x' * 5_000_000; ctype='text/html'",
    "PDF: 200 pages share one stream of 100k operators": "from tests.pdfgen import make_shared_stream_pdf; body = make_shared_stream_pdf(200, 100_000); ctype='application/pdf'",
    "JSON nested 100,000 deep": "body = b'['*100000 + b']'*100000; ctype='application/json'",
}

CHILD = """
import sys, time
sys.path.insert(0, {repo!r})
{case}
from webshelf.core.convert.by_type import to_markdown
t = time.perf_counter()
try:
    out = to_markdown(body, ctype, 'http://bench.example/')
    print('ok', len(out.markdown), ('the only line of text' in out.markdown))
except Exception as exc:
    print('error', type(exc).__name__, getattr(exc, 'code', ''))
print('seconds', time.perf_counter() - t)
"""


def before_tree(ref: str, into: Path) -> Path:
    """``ref``'s sources laid out as the installed package (folders → webshelf.<room>)."""
    archive = into / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), ref], check=True)
    src = into / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data")
    pkg = into / "pkg"
    pkg.mkdir()
    (pkg / "webshelf").symlink_to(src / "webshelf")
    for room in ("core", "cache", "mounts", "runtimes"):
        (src / "webshelf" / room).symlink_to(src / room)
    return pkg


def run(case: str, pythonpath: Path | None, timeout: float) -> tuple[str, float, float]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    code = CHILD.format(repo=str(REPO), case=case)
    if pythonpath:  # the old tree first, tests from this one
        code = code.replace(f"sys.path.insert(0, {str(REPO)!r})", f"sys.path.insert(0, {str(REPO)!r}); sys.path.insert(0, {str(pythonpath)!r})")
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    polled = 0
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=subprocess.DEVNULL, env=env,
                                cwd=tempfile.gettempdir())
        killed = False
        while True:  # reaped by os.wait4 (not Popen.wait) to get the child's rusage, also when killed
            hwm = vm_hwm_kb(proc.pid)  # before wait4: once reaped, the pid is gone
            pid, _status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            polled = max(polled, hwm or 0)
            if not killed and time.perf_counter() - start > timeout:
                proc.kill()
                killed = True
            time.sleep(0.05)
        wall = time.perf_counter() - start
        proc.returncode = 0  # reaped above
        out.seek(0)
        lines = out.read().decode().splitlines()
    peak_mb = child_peak_kb(usage.ru_maxrss, inherited, polled) / 1024  # Linux reports KiB
    if killed:
        return f"killed at the {timeout:g} s outer timeout", wall, peak_mb
    if len(lines) < 2:
        return "crashed (no output)", wall, peak_mb
    return lines[0], float(lines[1].split()[1]), peak_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--ref", default="main")
    args = parser.parse_args()
    print(f"| case | before s | before peak MB | before result | after s | after peak MB | after result |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        old = before_tree(args.ref, Path(tmp))
        for name, case in CASES.items():
            b = run(case, old, args.timeout)
            a = run(case, None, args.timeout)
            print(f"| {name} | {b[1]:.2f} | {b[2]:.0f} | {b[0]} | {a[1]:.2f} | {a[2]:.0f} | {a[0]} |", flush=True)


if __name__ == "__main__":
    main()
