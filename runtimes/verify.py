"""``verify()``: prove from inside a sandbox that the cache mount is what the footer promises.

Each check is reported on its own line: the directory exists at the same absolute path, a
sentinel written on the host just now is readable there (so it is the *same* directory,
live, not a stale copy), every kind of change to it fails (create, write, append, chmod,
mkdir, symlink, rename, delete), nothing inside can undo that or reach the host's secrets
(``runtimes.verify_isolation``: mount locked, no capabilities, host hidden), and an
ordinary command still runs. Only ``sh`` and busybox-level tools are needed inside, so any
image with a POSIX shell passes.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from webshelf.runtimes.base import Runtime, VerifyReport
from webshelf.errors import RuntimeAdapterError
from webshelf.runtimes.verify_isolation import check_isolation

SENTINEL_PREFIX = ".webshelf-verify-"
PROBE_PREFIX = ".webshelf-probe-"

# Each attempted change prints its name when it succeeds; a correct mount prints nothing.
_PROBE = r"""
d=$1; f=$2; p=$3; out=""
( : > "$d/${p}create" ) 2>/dev/null && out="$out create"
( echo x >> "$f" ) 2>/dev/null && out="$out append"
( echo x > "$f" ) 2>/dev/null && out="$out write"
chmod 0600 "$f" 2>/dev/null && out="$out chmod"
mkdir "$d/${p}dir" 2>/dev/null && out="$out mkdir"
ln -s "$f" "$d/${p}link" 2>/dev/null && out="$out symlink"
mv "$f" "$f.moved" 2>/dev/null && { out="$out rename"; mv "$f.moved" "$f" 2>/dev/null; }
rm "$f" 2>/dev/null && out="$out delete"
echo "$out"
"""


def _write_sentinel(directory: Path) -> tuple[Path, str]:
    token = secrets.token_hex(16)
    path = directory / f"{SENTINEL_PREFIX}{token}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.fchmod(fd, 0o644)
        os.write(fd, token.encode())
    finally:
        os.close(fd)
    return path, token


def _clean_host(directory: Path, sentinel: Path) -> None:
    """Remove the sentinel and anything a (wrongly) writable mount let the probe create."""
    doomed = [e for e in os.scandir(directory)
              if e.name.startswith(PROBE_PREFIX) or e.name in (sentinel.name, sentinel.name + ".moved")]
    for entry in doomed:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass


def verify_mount(runtime: Runtime, *, timeout: float) -> VerifyReport:
    """Run the checks inside ``runtime`` and report each; raises only if the sandbox is unusable."""
    directory = runtime.mount.path
    report = VerifyReport(runtime=runtime.name, mount=str(directory), mode=runtime.mode_note())
    if not directory.is_dir():
        report.add("host directory", False, f"{directory} does not exist on the host")
        return report
    result = runtime.exec(["test", "-d", str(directory)], timeout=timeout)
    detail = f"{directory} exists inside" if result.ok else f"{directory} is missing inside; {runtime.mount_hint()}"
    if not report.add("same path", result.ok, detail):
        return report
    sentinel, token = _write_sentinel(directory)
    try:
        runtime.publish([str(sentinel)])
        result = runtime.exec(["cat", str(sentinel)], timeout=timeout)
        readable = result.ok and result.stdout.decode(errors="replace") == token
        detail = "a sentinel written on the host just now reads back inside" if readable else \
            f"cannot read the sentinel {sentinel.name} inside (exit {result.exit_code}: " \
            f"{result.stderr.decode(errors='replace').strip()[:200]}) — the directory inside is not the host's"
        if not report.add("live and readable", readable, detail):
            return report
        if runtime.write_protected:
            result = runtime.exec(["sh", "-c", _PROBE, "sh", str(directory), str(sentinel), PROBE_PREFIX],
                                  timeout=timeout)
            allowed = result.stdout.decode(errors="replace").split()
            report.add("read-only", result.ok and not allowed,
                       "create, write, append, chmod, mkdir, symlink, rename and delete all fail" if not allowed
                       else f"these changes succeeded inside: {', '.join(allowed)} — mount it read-only")
            check_isolation(runtime, report, timeout=timeout, prefix=PROBE_PREFIX)
            report.warnings += runtime.view_warnings()
        else:
            report.warnings.append("sandbox: none — commands run unsandboxed on the host and can write the cache; "
                                   "read-only and isolation checks skipped")
    finally:
        _clean_host(directory, sentinel)
        try:
            runtime.retract([str(sentinel)])
        except RuntimeAdapterError as exc:
            report.warnings.append(f"retracting the sentinel failed: {exc}")
    result = runtime.exec(["sh", "-c", "echo ok"], timeout=timeout)
    report.add("sandbox works", result.ok and result.stdout.strip() == b"ok",
               "an ordinary command runs" if result.ok else f"`sh -c 'echo ok'` exited {result.exit_code}")
    return report
