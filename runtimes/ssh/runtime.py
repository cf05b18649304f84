"""The ``ssh`` runtime: a remote host that mirrors ``cache/web`` read-only at the same path.

There is no bind mount across machines, so pages are copied (``mounts.sync_engine`` over
``runtimes.ssh_transport``), and ``publish`` returns only once the copy is in place — a read
right after ``web_extract`` never misses. Read-only for the agent by one of two modes:

* ``readonly: bind`` — the sync user is root; files land in a staging directory that is
  bind-mounted read-only at the path (``mount --bind``, then ``remount,bind,ro``). Even root
  cannot write through the path.
* ``readonly: perms`` — files 0444 and the directory 0555, owned by the sync user; the agent
  runs as another user (``agent_user``), which ``verify()`` uses to prove writes fail.

One runtime instance is one host: ``runtimes.<name>: {type: ssh, host: …}`` (runtimes/ssh/config.py),
opened as ``--runtime <name>``. ``start()`` connects, prepares the directory and runs a full diff;
``stop()`` only disconnects — the mirror stays for the next run. paramiko is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from webshelf.mounts.sync_engine import SyncEngine, SyncReport
from webshelf.runtimes.base import ExecResult, Offers, SyncRuntime, VerifyReport
from webshelf.errors import MountError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.runtimes.ssh.connection import SshConnection
from webshelf.runtimes.ssh.transport import SshTransport
from webshelf.runtimes.stdin import Stdin

MODES = {"bind": (0o644, 0o755), "perms": (0o444, 0o555)}  # file mode, directory mode


class SshRuntime(SyncRuntime):
    kind = "ssh"
    #: copies with a full diff; webshelf never creates the remote machine, only connects to it
    #: (so ``extract --runtime`` may use it)
    offers = Offers(full_sync=True, creates_sandbox=False)

    def __init__(self, settings, mount, *, name: str | None = None) -> None:
        super().__init__(settings, mount, name=name)
        self.host_name, self.host = self.name, settings  # the instance is the host
        self.mode = self.host.readonly
        self.conn: SshConnection | None = None
        self.agent_conn: SshConnection | None = None
        self.engine: SyncEngine | None = None
        self.last_sync: SyncReport | None = None
        self._synced_epoch = -1

    @property
    def staging(self) -> Path:
        return Path(self.host.staging_dir) if self.host.staging_dir else \
            self.mount.path.parent / f".{self.mount.path.name}-ssh-staging"

    @property
    def agent_user(self) -> str:
        return self.host.agent_user or self.host.user

    # lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self.conn is not None:
            return
        s, h = self.settings, self.host
        conn = SshConnection(self.name, h, attempts=s.reconnect_attempts, backoff_s=s.reconnect_backoff_s)
        try:
            conn.ensure()
            self.conn = conn
            self._setup()
            if self.agent_user != h.user:
                self.agent_conn = SshConnection(self.name, h, user=self.agent_user, key_file=h.agent_key_file or h.key_file,
                                                attempts=s.reconnect_attempts, backoff_s=s.reconnect_backoff_s)
                self.agent_conn.ensure()
            self.sync()
        except BaseException:
            self.stop()
            raise

    def _setup(self) -> None:
        h, s = self.host, self.settings
        code, out, _ = self.conn.exec(["sh", "-c", "id -u; command -v tar >/dev/null && echo tar || echo none"], timeout=30)
        uid, tar = (out.decode().split() + ["", ""])[:2]
        if code or not uid.isdigit():
            raise RuntimeUnavailableError(f"{self.conn.where}: the remote shell does not answer `id -u` "
                                          f"(exit {code}); the host needs a POSIX sh", runtime=self.name)
        if self.mode == "bind" and uid != "0":
            raise RuntimeUnavailableError(f"{self.conn.where}: readonly: bind mounts a directory, so the sync user must be root "
                                          f"(it is uid {uid}); set user: root, or use readonly: perms with agent_user", runtime=self.name)
        method = "sftp" if h.transfer == "sftp" or (h.transfer == "auto" and tar != "tar") else "tar"
        if h.transfer == "tar" and tar != "tar":
            raise RuntimeUnavailableError(f"{self.conn.where}: transfer: tar but the remote has no tar; "
                                          "install it there or set transfer: auto", runtime=self.name)
        file_mode, dir_mode = MODES[self.mode]
        transport = SshTransport(self.conn, target=self.staging if self.mode == "bind" else self.mount.path,
                                 bind_at=self.mount.path if self.mode == "bind" else None,
                                 file_mode=file_mode, dir_mode=dir_mode, method=method, batch_files=s.batch_files,
                                 batch_bytes=s.batch_bytes, timeout=s.publish_timeout_s)
        self.engine = SyncEngine(transport, self.mount.path)

    def stop(self) -> None:
        for conn in (self.agent_conn, self.conn):
            if conn is not None:
                conn.close()
        self.conn = self.agent_conn = self.engine = None
        self._synced_epoch = -1

    def is_alive(self) -> bool:
        return self.conn is not None and self.conn.alive()

    # sync ------------------------------------------------------------------------------
    def _engine(self) -> SyncEngine:
        if self.engine is None:
            raise RuntimeExecError("not connected; call start() or use it as a context manager", runtime=self.name)
        return self.engine

    def _retrying(self, action: Callable[[], object]):
        """Run ``action``; when the link broke under it, reconnect once and run it again."""
        try:
            return action()
        except RuntimeTimeoutError:
            raise
        except RuntimeExecError:
            if self.conn is None or self.conn.alive():
                raise
            return action()

    def sync(self) -> SyncReport:
        """Full diff host ↔ remote (send missing, delete evicted); also re-arms the read-only mount."""
        engine = self._engine()
        try:
            self.conn.ensure()  # reconnect first: the epoch this diff covers is the one after it
        except RuntimeUnavailableError:
            pass  # reconcile raises it again with its own context
        epoch = self.conn.epoch
        self.last_sync = self._retrying(engine.reconcile)
        self._synced_epoch = epoch
        return self.last_sync

    def needs_sync(self) -> bool:
        """True when the connection was re-established since the last full diff."""
        return self.conn is not None and self.conn.epoch != self._synced_epoch

    def publish(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        engine = self._engine()
        missing = [p for p in paths if not Path(p).is_file()]
        if missing:
            raise MountError(f"{missing[0]} does not exist on the host, so it cannot be copied", runtime=self.name)
        try:
            self._retrying(lambda: engine.push(paths))
        except RuntimeTimeoutError:
            raise RuntimeTimeoutError(f"{self.conn.where}: copying {len(paths)} page(s) did not finish within "
                                      f"{self.settings.publish_timeout_s:g} s (runtimes.{self.name}.publish_timeout_s); host {self.host_name!r} "
                                      "may lag until the copy or the next sync completes", runtime=self.name) from None

    def retract(self, paths: Sequence[str]) -> None:
        self._check_inside(paths)
        engine = self._engine()
        self._retrying(lambda: engine.remove(paths))

    # commands --------------------------------------------------------------------------
    def exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin = None) -> ExecResult:
        if self.conn is None:
            raise RuntimeExecError("not connected; call start() or use it as a context manager", runtime=self.name)
        if not argv:
            raise RuntimeExecError("exec needs a command (argv is empty)", runtime=self.name)
        conn = self.agent_conn or self.conn
        code, out, err = conn.exec(argv, timeout=timeout, stdin=stdin)
        if code == -1:
            raise RuntimeExecError(f"{conn.where}: {argv[0]!r} ended without an exit status (killed?)", runtime=self.name)
        return ExecResult(code, out, err)

    # verify ----------------------------------------------------------------------------
    def mode_note(self) -> str:
        h = self.host
        if self.mode == "bind":
            return (f"readonly: bind — copies land in {self.staging} on {h.host}, bind-mounted read-only at the path; "
                    f"commands run as {self.agent_user}")
        return (f"readonly: perms — files 0444, directory 0555, owned by {h.user} on {h.host}; "
                f"commands run as {self.agent_user}")

    def privilege_hint(self) -> str:
        return (f"commands run as {self.agent_user!r} on {self.host.host}, which can remount or bypass the read-only "
                f"mirror; set agent_user to an unprivileged user (readonly: {self.mode} keeps {self.host.user!r} "
                "for syncing only)")

    def exposure_hint(self) -> str:
        return (f"agent_user {self.agent_user!r} can read these on {self.host.host}; use an agent_user without access "
                "to them (not root, not in the docker group)")

    def mount_hint(self) -> str:
        return f"the mirror at {self.mount.path} is missing on {self.host.host}; run `webshelf sync --runtime {self.name}`"

    def verify(self, *, timeout: float = 30.0) -> VerifyReport:
        try:
            return super().verify(timeout=timeout)
        except MountError as exc:
            if self.mode == "perms" and self.agent_user == self.host.user and "read-only" in exc.detail:
                raise MountError(f"{exc.detail} — with readonly: perms the agent must be another "
                                 f"user than the sync user {self.host.user!r}; set agent_user (or use "
                                 "readonly: bind)", runtime=self.name) from None
            raise
