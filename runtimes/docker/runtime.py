"""The ``docker`` runtime: a container (docker SDK) with ``cache/web`` bound read-only at its path.

The cache directory is created first, then the container starts with a read-only bind of the
*whole directory* — a single-file bind would keep showing the old inode after the atomic
replace that stores a page. Defaults are the safe ones (no network, all capabilities
dropped, no-new-privileges, read-only root with a tmpfs ``/tmp``, a non-root user, memory,
CPU and pid limits), each overridable in ``runtimes.docker``. With ``container:`` set, the
runtime attaches to a running container instead and never stops it; ``verify()`` says
whether that container really has the mount. The ``docker`` SDK is imported only here.

Every SDK call is guarded where it is made: ``docker.errors.*``, the ``requests`` errors the SDK
lets through (a daemon that stops answering mid-use raises ``requests.ConnectionError``, which
is no ``DockerException``) and socket errors of an exec's stream all leave as the runtime
classes of ``webshelf.errors`` — a daemon that is gone is ``RuntimeUnavailableError`` naming
where webshelf looked for it.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import time
from collections.abc import Sequence

from webshelf.runtimes.base import BindRuntime, ExecResult, Offers
from webshelf.runtimes.docker.owner import LABEL, orphans, owner_labels
from webshelf.runtimes.docker.stream import STDERR, buffered_reader, frames
from webshelf.errors import MountError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.runtimes.sdk import import_sdk
from webshelf.runtimes.stdin import Pump, Stdin

__all__ = ["LABEL", "DockerRuntime"]
#: how long a timed-out exec's processes may take to disappear after SIGKILL
KILL_WAIT_S = 3.0


def _sdk(runtime: str):
    return import_sdk("docker", runtime, "the docker SDK", "docker", "docker")


def sdk_errors(docker) -> tuple[type[BaseException], ...]:
    """What a docker SDK call can raise: its own errors, ``requests``' (not wrapped by the SDK
    once connected) and socket errors (an exec's hijacked stream)."""
    import requests  # a dependency of the docker SDK

    return docker.errors.DockerException, requests.exceptions.RequestException, OSError


class DockerRuntime(BindRuntime):
    kind = "docker"
    #: binds the directory into a container it creates, or into the running one ``container`` names
    offers = Offers(bind_mount=True, attach_setting="container")

    def __init__(self, settings, mount, *, name: str | None = None) -> None:
        super().__init__(settings, mount, name=name)
        self._docker = None
        self._errors: tuple[type[BaseException], ...] = ()  # sdk_errors(docker), once the SDK is loaded
        self._client = None
        self.container = None

    # connection and errors ---------------------------------------------------------------
    def _where(self) -> str:
        return self.settings.docker_host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"

    def _connect(self):
        docker = self._docker = _sdk(self.name)
        self._errors = sdk_errors(docker)
        try:
            client = docker.DockerClient(base_url=self.settings.docker_host, timeout=60) if self.settings.docker_host \
                else docker.from_env(timeout=60)
            client.ping()
        except self._errors as exc:
            raise self._gone("cannot connect", exc) from None
        return client

    def _gone(self, doing: str, exc: BaseException) -> RuntimeUnavailableError:
        """The error for a daemon that does not answer (never started, stopped, socket gone) or
        that refused a call no branch above expected."""
        if isinstance(exc, self._docker.errors.APIError):
            return RuntimeUnavailableError(f"{doing}: the Docker daemon at {self._where()} refused "
                                           f"({exc.explanation or exc})", runtime=self.name)
        return RuntimeUnavailableError(f"{doing}: the Docker daemon at {self._where()} does not answer "
                                       f"({type(exc).__name__}: {exc}); start dockerd, or point DOCKER_HOST / "
                                       f"runtimes.{self.name}.docker_host at a running daemon", runtime=self.name)

    def _dead(self, what: str) -> RuntimeExecError:
        try:
            self.container.reload()
            state = self.container.attrs.get("State", {})
            tail = self.container.logs(tail=5).decode(errors="replace").strip()
            info = f"status {state.get('Status')}, exit code {state.get('ExitCode')}"
            if state.get("OOMKilled"):
                info += f", killed for memory (raise runtimes.{self.name}.mem_limit)"
            if tail:
                info += f"; last output: {tail[-400:]}"
        except self._docker.errors.NotFound:
            info = "it no longer exists"
        except self._errors as exc:
            info = f"the daemon does not answer: {exc}"
        return RuntimeExecError(f"{what}: container {self.container.short_id} is not running ({info})", runtime=self.name)

    def mount_hint(self) -> str:
        web = self.mount.path
        if self.attached:
            return (f"container {self.settings.container!r} was not started with the cache mounted; recreate it with "
                    f"--mount type=bind,source={web},target={web},readonly (or unset runtimes.{self.name}.container)")
        return super().mount_hint()

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        if self.container is not None:
            return
        self._client = self._connect()
        try:
            self._start()
        except self._errors as exc:  # the daemon went away (or failed oddly) while starting
            if self.container is not None and not self.attached:
                self._remove()
            self.container = None
            raise self._gone("starting the container failed", exc) from None

    def _start(self) -> None:
        errors = self._docker.errors
        if self.attached:
            try:
                self.container = self._client.containers.get(self.settings.container)
            except errors.NotFound:
                raise RuntimeUnavailableError(f"no container named {self.settings.container!r} "
                                              f"(runtimes.{self.name}.container); start it first or unset the key", runtime=self.name) from None
            try:
                if self.container.status != "running":
                    raise self._dead("cannot attach")
                self._check_attached_mount()
            except Exception:
                self.container = None  # a later start() must check again, not return early
                raise
            return
        os.makedirs(self.mount.path, mode=0o755, exist_ok=True)
        self.prune_orphans()
        try:
            self._client.images.get(self.settings.image)
        except errors.ImageNotFound:
            raise RuntimeUnavailableError(f"image {self.settings.image!r} is not on this Docker host; `docker pull "
                                          f"{self.settings.image}` or build/import it, or set runtimes.{self.name}.image", runtime=self.name) from None
        try:
            self.container = self._client.containers.create(self.settings.image, **self._create_options())
        except errors.APIError as exc:
            raise RuntimeUnavailableError(f"the container could not start: {exc.explanation or exc}", runtime=self.name) from None
        try:
            self.container.start()
        except errors.APIError as exc:
            self._remove()  # created but never started: do not leave it behind
            self.container = None
            raise RuntimeUnavailableError(f"the container could not start: {exc.explanation or exc}", runtime=self.name) from None
        self.container.reload()
        if self.container.status != "running":
            err = self._dead("start failed")
            self._remove()
            raise err

    def _check_attached_mount(self) -> None:
        """An attached container must bind the host directory read-only at the same path, or
        publish would report pages the sandbox cannot see."""
        web, host = str(self.mount.path), os.path.realpath(self.mount.path)
        for m in self.container.attrs.get("Mounts") or []:
            if m.get("Type") == "bind" and m.get("Destination") == web and m.get("RW") is False \
                    and os.path.realpath(m.get("Source") or "") == host:
                return
        raise MountError(f"container {self.container.short_id} does not bind {web} read-only at the "
                         f"same path; {self.mount_hint()}", runtime=self.name)

    def _create_options(self) -> dict:
        s = self.settings
        types = self._docker.types
        web = str(self.mount.path)
        mounts = [types.Mount(target=web, source=web, type="bind", read_only=self.mount.read_only)]
        for spec in s.volumes:
            source, target, mode = (spec.split(":") + ["ro"])[:3]
            mounts.append(types.Mount(target=target, source=source, type="bind", read_only=mode != "rw"))
        options = dict(
            command=list(s.command), mounts=mounts, network_mode=s.network, cap_drop=list(s.cap_drop) or None,
            cap_add=list(s.cap_add) or None, read_only=s.read_only_root, tmpfs=dict(s.tmpfs) or None,
            user=s.user or None, mem_limit=s.mem_limit, nano_cpus=int(s.cpus * 1e9) if s.cpus else None,
            pids_limit=s.pids_limit, labels={**s.labels, **owner_labels(self.name, self.mount.path)},
            environment=dict(s.env),
            working_dir=s.working_dir or None, init=False,
        )
        if s.no_new_privileges:
            options["security_opt"] = ["no-new-privileges:true"]
        return options

    def orphans(self) -> list:
        """Containers of this home whose owner process is gone (``runtimes.docker_owner``)."""
        if self._client is None:
            self._client = self._connect()
        try:
            return orphans(self._client, self._docker.errors, self.mount.path, runtime=self.name)
        except self._errors as exc:
            raise RuntimeUnavailableError(f"cannot list containers at {self._where()}: {exc}", runtime=self.name) from None

    def prune_orphans(self) -> None:
        """Remove orphans before starting a new container: a killed webshelf leaves no trace for long."""
        for orphan in self.orphans():
            orphan.remove()

    def _remove(self) -> None:
        try:
            self.container.remove(force=True)
        except self._errors:
            pass  # already gone, or the daemon is; its owner labels let a later prune find it

    def stop(self) -> None:
        if self.container is not None and not self.attached:
            self._remove()
        self.container = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def is_alive(self) -> bool:
        if self.container is None:
            return False
        try:
            self.container.reload()
        except self._errors:
            return False
        return self.container.status == "running"

    # commands --------------------------------------------------------------------------
    def exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin = None) -> ExecResult:
        if self.container is None:
            raise RuntimeExecError("the sandbox is not started; call start() or use it as a context manager", runtime=self.name)
        if not argv:
            raise RuntimeExecError("exec needs a command (argv is empty)", runtime=self.name)
        try:
            return self._exec(argv, timeout=timeout, stdin=stdin)
        except self._errors as exc:
            raise self._gone(f"cannot run {argv[0]!r}", exc) from None

    def _exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin) -> ExecResult:
        api, errors = self._client.api, self._docker.errors
        try:
            exec_id = api.exec_create(self.container.id, [str(a) for a in argv], stdin=stdin is not None,
                                      user=self.settings.user or "")["Id"]  # unprivileged in attached ones too
            sock = api.exec_start(exec_id, socket=True)
        except errors.APIError as exc:
            if exc.status_code in (404, 409):
                raise self._dead(f"cannot run {argv[0]!r}") from None
            raise RuntimeExecError(f"cannot run {argv[0]!r}: {exc.explanation or exc}", runtime=self.name) from None
        pool = concurrent.futures.ThreadPoolExecutor(1)
        try:
            future = pool.submit(self._talk, sock, stdin)
            try:
                stdout, stderr = future.result(timeout=timeout)
            except concurrent.futures.TimeoutError:
                fate = "was killed" if self._kill(exec_id) else "may still be running inside the container"
                raise RuntimeTimeoutError(f"{argv[0]!r} did not finish within {timeout:g} s and {fate}", runtime=self.name) from None
        finally:
            sock.close()
            pool.shutdown(wait=False)
        code = api.exec_inspect(exec_id).get("ExitCode")
        if code is None:
            raise self._dead(f"{argv[0]!r} ended without an exit code")
        if code == 126 and stdout.startswith(b"OCI runtime exec failed") and not stderr:
            # the daemon could not exec the command: its message is no output of the command, and a
            # missing one gets the shell's 127 (as with docker's CLI and every other runtime)
            missing = b"executable file not found" in stdout or b"no such file or directory" in stdout
            return ExecResult(127 if missing else 126, b"", stdout)
        return ExecResult(code, stdout, stderr)

    def _talk(self, sock, stdin: Stdin) -> tuple[bytes, bytes]:
        """Read the multiplexed stdout/stderr frames until the command ends, while a thread sends
        stdin (sending it all first deadlocks once the command's output fills the pipe)."""
        raw = getattr(sock, "_sock", sock)
        pump = None
        if stdin is not None:  # bytes, or a stream copied chunk by chunk while the command runs
            pump = Pump(stdin, raw.sendall, lambda: raw.shutdown(socket.SHUT_WR), name=f"{self.name}-stdin").start()
        out, err = bytearray(), bytearray()
        try:
            reader = buffered_reader(sock)
            if reader is None:  # not the SDK shape this was written for: its own reader
                pairs = self._docker.utils.socket.frames_iter(sock, tty=False)
            else:
                pairs = frames(reader)
            for stream, data in pairs:
                (err if stream == STDERR else out).extend(data)
        finally:
            if pump is not None:
                pump.stop()  # the command has exited (or the wait was given up): stop reading its input
        return bytes(out), bytes(err)

    def _kill(self, exec_id: str) -> bool:
        """Kill a timed-out exec with everything it started (its process group and descendants;
        killing only its top pid leaves children running); True once none of them is left.

        Host pids come from the exec and ``top``; each is signalled from here only when its
        /proc entry shows it is in this container (so the daemon is local), else from inside
        with ``kill`` by its pid in the container's namespace.
        """
        errors = self._docker.errors
        try:
            root = self._client.api.exec_inspect(exec_id).get("Pid")
            if not root:
                return False
            deadline = time.monotonic() + KILL_WAIT_S
            while time.monotonic() < deadline:
                try:
                    listed = self.container.top(ps_args="-eo pid,ppid,pgid,stat")["Processes"]
                except errors.APIError:
                    return not self.is_alive()  # the container stopped: so did the command
                # zombies are dead already (nobody reaps them in a container without an init)
                rows = [[int(v) for v in row[:3]] for row in listed if not row[3].startswith("Z")]
                tree = {root} | {pid for pid, _, pgid in rows if pgid == root}
                while grown := {pid for pid, ppid, _ in rows if ppid in tree and pid not in tree}:
                    tree |= grown
                alive = [pid for pid, _, _ in rows if pid in tree]
                if not alive:
                    return True
                inside = [n for n in map(self._signal_here, alive) if n]
                if inside:
                    done = self._client.api.exec_create(self.container.id, ["kill", "-KILL", *inside])["Id"]
                    self._client.api.exec_start(done)
                time.sleep(0.1)
        except self._errors:
            pass  # the daemon is gone: nothing can be confirmed killed
        return False

    def _signal_here(self, pid: int) -> str | None:
        """SIGKILL host ``pid`` if it is this container's; else its pid inside, to kill it from there."""
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                if self.container.id not in f.read():
                    return None
            os.kill(pid, signal.SIGKILL)
            return None
        except PermissionError:
            pass
        except OSError:
            return None
        try:
            with open(f"/proc/{pid}/status") as f:
                return next((line.split()[-1] for line in f if line.startswith("NSpid:")), None)
        except OSError:
            return None
