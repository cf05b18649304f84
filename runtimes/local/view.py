"""What a bubblewrap sandbox sees of the host: the mount half of the ``bwrap`` command line.

The default is a minimal read-only system — what a shell and common tools need (``/usr``,
``/bin``, ``/sbin``, ``/lib*``, ``/etc`` minus its secrets) — with empty ``/home``, ``/root``
and ``/run`` (no host Unix socket such as the Docker API is reachable), a private ``/tmp``,
fresh ``/dev`` and ``/proc``, and ``cache/web`` at its own path. The rest of the webshelf home
(the index, ``config.yaml``) is hidden under an empty tmpfs even when a bind covers it.

Why hide secrets in ``/etc`` by permission as well as by name: when webshelf runs as root,
bwrap maps the sandbox's unprivileged uid to host uid 0, so files *owned* by root stay
readable through their owner bits. Every entry of ``/etc`` that is not world-readable is
therefore covered (files by ``/dev/null``, directories by an empty tmpfs), plus the usual
secret stores by name.

Merged-``/usr`` systems have ``/bin`` → ``usr/bin`` and friends: a bind that is a symlink on
the host whose target is bound too becomes the same symlink (``--symlink``), as on the host.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from functools import lru_cache

#: ``runtimes.local.binds`` by default; missing paths are skipped (``--ro-bind-try``)
SYSTEM_BINDS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
#: empty in the sandbox unless a bind names something below them (never with binds: ["/"])
EMPTY_DIRS = ["/home", "/root", "/run"]
#: hidden whenever /etc is bound, whatever their permissions say
ETC_SECRETS = [
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssl/private", "/etc/docker", "/etc/security/opasswd", "/etc/krb5.keytab", "/etc/wireguard",
    "/etc/NetworkManager/system-connections", "/etc/openvpn", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets", "/etc/libvirt/secrets", "/etc/letsencrypt",
]


def _under(path: str, top: str) -> bool:
    return top == "/" or path == top or path.startswith(top.rstrip("/") + "/")


def _depth(path: str) -> int:
    return len([part for part in path.split("/") if part])


@lru_cache(maxsize=8)
def etc_hidden(etc: str = "/etc") -> tuple[tuple[str, bool], ...]:
    """(path, is_dir) of every secret in ``etc``: by name, and every entry not world-readable
    (a hidden directory's contents are not listed again). Cached: /etc changes rarely and
    each exec builds a command line."""
    found: dict[str, bool] = {}
    for path in ETC_SECRETS:
        path = etc + path[len("/etc"):]
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISLNK(st.st_mode):
            found[path] = stat.S_ISDIR(st.st_mode)
    for root, dirs, files in os.walk(etc, onerror=lambda _: None):
        for name in dirs + files:
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode) or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                continue
            if not st.st_mode & stat.S_IROTH or (stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH):
                found.setdefault(path, stat.S_ISDIR(st.st_mode))
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in found]
    return tuple(sorted(found.items()))


def whole_host(binds: Sequence[str]) -> bool:
    """True when the configured binds show the entire host filesystem (an explicit choice)."""
    return any(os.path.normpath(b) == "/" for b in binds)


def view_args(binds: Sequence[str], *, scratch: str, home: str, web: str, web_read_only: bool = True) -> list[str]:
    """The bwrap mount arguments: ``binds`` read-only, masks, /dev, /proc, /tmp, then ``web``.

    Operations are ordered parents first (a mount on a directory would hide one made below
    it earlier); at equal depth the system's own mounts come before the configured binds, so
    a bind of ``/tmp`` itself still wins over the private one, as before.
    """
    binds = [os.path.normpath(b) for b in binds]
    ops: list[tuple[str, list[str]]] = []
    if not whole_host(binds):
        ops += [(d, ["--tmpfs", d]) for d in EMPTY_DIRS]
    ops += [("/dev", ["--dev", "/dev"]), ("/proc", ["--proc", "/proc"]), ("/tmp", ["--bind", scratch, "/tmp"])]
    for path in binds:
        if os.path.islink(path):
            target = os.readlink(path)
            resolved = os.path.realpath(path)
            if any(_under(resolved, b) for b in binds if b != path):
                ops.append((path, ["--symlink", target, path]))
                continue
        ops.append((path, ["--ro-bind-try", path, path]))
        if _under("/etc", path):
            ops += [(p, ["--tmpfs", p] if is_dir else ["--ro-bind", "/dev/null", p])
                    for p, is_dir in etc_hidden() if _under(p, path)]
    # the webshelf home: empty, whatever covers it, so only cache/web shows
    ops.append((home, ["--tmpfs", home]))
    ordered = sorted(enumerate(ops), key=lambda item: (_depth(item[1][0]), item[0]))
    args = [arg for _, (_, op) in ordered for arg in op]
    return args + ["--ro-bind" if web_read_only else "--bind", web, web]
