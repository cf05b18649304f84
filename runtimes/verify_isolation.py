"""The isolation half of ``verify()``: nothing inside can unlock the mount or reach the host's secrets.

A read-only bind is only as good as the privileges of whoever sits behind it: a process
with CAP_SYS_ADMIN remounts it read-write in a second (issue 12). So, from inside, with
``sh`` and busybox-level tools only (the docker test image is busybox-static; ssh hosts may
be minimal):

* **mount locked** — ``mount -o remount,rw,bind <web>``, ``mount -t tmpfs`` over it,
  ``unshare -m`` (a mount namespace needs CAP_SYS_ADMIN) and ``chmod`` of the mount point all
  fail; so does a remount and a write from a nested user namespace (``unshare -r -m``, which
  unprivileged users may create: the kernel keeps the mount locked read-only there).
* **no capabilities** — ``CapEff`` in ``/proc/self/status`` is 0.
* **host hidden** — the webshelf home shows nothing but ``cache`` (the index and
  ``config.yaml`` are unreadable), the host user's ``~/.ssh`` and the other entries of their
  home directory cannot be read, and no Docker socket can be connected to (write permission
  on the socket file is what ``connect()`` needs).

A runtime whose configuration shows the whole host on purpose (``runtimes.local.binds: ["/"]``)
gets its "host hidden" findings as warnings instead of a failure; the privilege checks
always fail loudly.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from webshelf.runtimes.base import Runtime, VerifyReport

# $1 = the mount point, $2 = a name prefix for probe files. Prints the name of each attempt that worked.
_LOCKED = r"""
d=$1; p=$2; out=""
if mount -o remount,rw,bind "$d" 2>/dev/null; then out="$out remount-rw"; mount -o remount,ro,bind "$d" 2>/dev/null; fi
if mount -t tmpfs webshelf-probe "$d" 2>/dev/null; then out="$out mount"; umount "$d" 2>/dev/null; fi
unshare -m true 2>/dev/null && out="$out unshare"
unshare -r -m sh -c 'mount -o remount,rw,bind "$1" 2>/dev/null && : > "$1/$2userns"' sh "$d" "$p" 2>/dev/null \
  && out="$out unshare-remount-write"
chmod 0777 "$d" 2>/dev/null && out="$out chmod-mount-point"
echo "$out"
"""

_CAPS = "grep '^CapEff:' /proc/self/status"

# Arguments come in pairs "kind path"; each reachable path is printed on a line of its own.
_HIDDEN = r"""
while [ $# -gt 1 ]; do k=$1; t=$2; shift 2
  case $k in
    read) [ -r "$t" ] && echo "$t" ;;
    list) [ -r "$t" ] && [ -x "$t" ] && [ -n "$(ls -A "$t" 2>/dev/null)" ] && echo "$t" ;;
    only) for n in $(ls -A "$t" 2>/dev/null); do [ "$n" = cache ] || echo "$t/$n"; done ;;
    sock) [ -S "$t" ] && [ -w "$t" ] && echo "$t" ;;
  esac
done
exit 0
"""

#: entries every home directory has; another machine's copies say nothing about this one's
_SKELETON = {".bashrc", ".profile", ".bash_logout", ".bash_profile", ".cshrc", ".zshrc", ".kshrc", ".cache"}
_MAX_HOME_ENTRIES = 200


def _docker_sockets() -> list[str]:
    socks = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock"]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        socks.append(host[len("unix://"):])
    uid_run = f"/run/user/{os.getuid()}"
    socks += [f"{uid_run}/docker.sock", f"{uid_run}/podman/podman.sock"]
    return list(dict.fromkeys(socks))


def secret_targets(web: Path) -> list[tuple[str, str]]:
    """(kind, path) pairs that must be unreachable inside: see the module docstring."""
    cache = web.parent
    home = cache.parent
    targets = [("only", str(home)), ("read", str(cache / "index.sqlite")), ("read", str(home / "config.yaml"))]
    explicit = os.environ.get("WEBSHELF_CONFIG")
    if explicit:
        targets.append(("read", os.path.abspath(explicit)))
    user_home = Path(os.path.expanduser("~"))
    targets.append(("list", str(user_home / ".ssh")))
    # the user's home: every entry but skeleton files, and but the way down to cache/web
    on_the_way = web.relative_to(user_home).parts[0] if web.is_relative_to(user_home) else None
    try:  # a service user whose home is / has no home of its own to hide
        names = sorted(os.listdir(user_home))[:_MAX_HOME_ENTRIES] if user_home != Path("/") else []
    except OSError:
        names = []
    targets += [("read", str(user_home / n)) for n in names if n not in _SKELETON and n != on_the_way and n != ".ssh"]
    targets += [("sock", s) for s in _docker_sockets()]
    return targets


def check_isolation(runtime: Runtime, report: VerifyReport, *, timeout: float, prefix: str) -> None:
    """Add the "mount locked", "no capabilities" and "host hidden" checks to ``report``."""
    web = runtime.mount.path
    mode = os.stat(web).st_mode & 0o7777
    try:
        done = runtime.exec(["sh", "-c", _LOCKED, "sh", str(web), prefix], timeout=timeout)
    finally:
        if os.stat(web).st_mode & 0o7777 != mode:  # a chmod got through: put the host's mode back
            os.chmod(web, mode)
    worked = done.stdout.decode(errors="replace").split()
    report.add("mount locked", done.ok and not worked,
               "remount read-write, mount over it, unshare and chmod of the mount point all fail" if not worked else
               f"these succeeded inside: {', '.join(worked)} — the sandbox keeps privileges that undo the read-only "
               f"mount; {runtime.privilege_hint()}")

    done = runtime.exec(["sh", "-c", _CAPS], timeout=timeout)
    match = re.search(rb"CapEff:\s*([0-9a-fA-F]+)", done.stdout)
    caps = int(match.group(1), 16) if match else None
    report.add("no capabilities", caps == 0,
               "CapEff is 0" if caps == 0 else
               f"CapEff is {match.group(1).decode()} — commands inside hold capabilities; {runtime.privilege_hint()}"
               if match else f"cannot read CapEff from /proc/self/status inside (exit {done.exit_code})")

    targets = secret_targets(web)
    args = [part for pair in targets for part in pair]
    done = runtime.exec(["sh", "-c", _HIDDEN, "sh", *args], timeout=timeout)
    seen = [line for line in done.stdout.decode(errors="replace").splitlines() if line.strip()]
    if not done.ok:
        report.add("host hidden", False, f"the reachability probe failed inside (exit {done.exit_code})")
    elif not seen:
        report.add("host hidden", True, "the index, config.yaml, ~/.ssh, the home directory and the Docker "
                                        "socket are unreachable; only cache/web of the home is there")
    else:
        shown = ", ".join(seen[:8]) + (f" and {len(seen) - 8} more" if len(seen) > 8 else "")
        if runtime.exposes_host():
            report.warnings.append(f"reachable inside (the configuration shows the host on purpose): {shown}")
        else:
            report.add("host hidden", False, f"reachable inside: {shown} — {runtime.exposure_hint()}")
