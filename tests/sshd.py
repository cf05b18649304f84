"""A real OpenSSH ``sshd`` on a random loopback port, playing a second machine.

The "remote" is this same host, so it must not share the test's cache directory: a holder
process owns a private mount namespace with an empty tmpfs over each of ``roots`` (``/tmp``,
below which pytest puts every test's webshelf home — so the remote also gets its own ``/tmp``
scratch space, as another machine would), and ``sshd -D -e`` is started inside that namespace with ``nsenter``.
Remote paths are then the same absolute paths with their own files, like another machine.
Because the namespace belongs to the holder, sshd can be killed and restarted (fault tests)
while the remote files survive. Temporary host and user keys; root only.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
AGENT_USER = "webshelf-agent"


def sshd_missing() -> str | None:
    """Why a real sshd cannot run here, or None."""
    if os.geteuid() != 0:
        return "the sshd fixture needs root (private mount namespace + tmpfs)"
    for tool in (SSHD, shutil.which("ssh-keygen"), shutil.which("unshare"), shutil.which("nsenter")):
        if not tool or not os.path.exists(tool):
            return "OpenSSH server tools are missing (apt-get install openssh-server openssh-client util-linux)"
    return None


def ensure_agent_user() -> None:
    """The second local user that plays the agent in readonly: perms (``.ci/run`` creates it too)."""
    if subprocess.run(["id", AGENT_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", "-s", "/bin/sh", AGENT_USER], check=True, capture_output=True)
    # sshd without PAM refuses a locked ('!') account; '*' = no password login, key login allowed
    subprocess.run(["usermod", "-p", "*", AGENT_USER], check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Sshd:
    """``start()``/``stop()``; ``kill()`` drops every connection at once; ``restart()``."""

    def __init__(self, *roots: Path, tmpfs_size: str = "512m") -> None:
        self.roots = [Path(r) for r in roots]
        self.tmpfs_size = tmpfs_size
        # keys and config live outside every root (sshd reads authorized_keys inside its namespace)
        self.dir = Path(tempfile.mkdtemp(prefix="webshelf-sshd-", dir="/run" if os.path.isdir("/run") else "/var/tmp"))
        self.port = _free_port()
        self.holder: subprocess.Popen | None = None
        self.proc: subprocess.Popen | None = None
        self.user_key = self.dir / "user_key"
        self.known_hosts = self.dir / "known_hosts"
        self.log = self.dir / "sshd.log"

    def _keys(self) -> None:
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / name)], check=True)
        (self.dir / "authorized_keys").write_text((self.dir / "user_key.pub").read_text())
        # sshd reads authorized_keys as the logging-in user: the agent user must be able to
        os.chmod(self.dir, 0o755)
        os.chmod(self.dir / "authorized_keys", 0o644)
        host_pub = (self.dir / "host_key.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        (self.dir / "sshd_config").write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.dir / 'host_key'}",
            f"PidFile {self.dir / 'sshd.pid'}", f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
            "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password", "Subsystem sftp internal-sftp",
            "MaxSessions 200", "MaxStartups 200:30:400", "LogLevel ERROR", "",
        ]))

    def start(self) -> "Sshd":
        self._keys()
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation directory
        for root in self.roots:
            root.mkdir(parents=True, exist_ok=True)
        # each root gets an empty tmpfs; so does root's home: the remote's root account starts clean
        # (this host's ~/.bashrc, which bash sources for ssh commands, would cost ~0.3 s per command)
        script = 's=$1; h=$2; shift 2; for r; do mount -t tmpfs -o "size=$s,mode=1777" none "$r" || exit 1; done; ' \
                 'mount -t tmpfs -o "size=16m,mode=0700" none "$h" || exit 1; echo ready && exec sleep 1000000'
        self.holder = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                                        self.tmpfs_size, os.path.expanduser("~root"), *map(str, self.roots)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if self.holder.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"cannot make the remote's private tmpfs: {self.holder.stderr.read().decode()}")
        self._start_sshd()
        return self

    def _start_sshd(self) -> None:
        self.proc = subprocess.Popen(["nsenter", "-t", str(self.holder.pid), "-m", "--", SSHD, "-D", "-e", "-f",
                                      str(self.dir / "sshd_config")], stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "ab"))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited ({self.proc.returncode}): {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen on 127.0.0.1:{self.port}: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL sshd and all its sessions (a dropped link / crashed server)."""
        if self.proc is None:
            return
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.kill()
        self._start_sshd()

    def remote(self, script: str, *args: str) -> subprocess.CompletedProcess:
        """Run ``sh -c script`` as root in the remote's namespace (to inspect what it holds)."""
        return subprocess.run(["nsenter", "-t", str(self.holder.pid), "-m", "--", "sh", "-c", script, "sh", *args],
                              capture_output=True, timeout=60)

    def stop(self) -> None:
        self.kill()
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait(timeout=10)
            self.holder = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def host_config(self, **overrides) -> dict:
        """The options of a ``runtimes.<name>`` block of type ssh for this server."""
        return {"host": "127.0.0.1", "port": self.port, "user": "root", "key_file": str(self.user_key),
                "known_hosts": str(self.known_hosts), "use_agent": False, "connect_timeout_s": 5, **overrides}
