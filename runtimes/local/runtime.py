"""The ``local`` runtime: commands run under bubblewrap on this machine.

Each ``exec`` is one ``bwrap`` process: an unprivileged uid in a user namespace with every
capability dropped, a minimal read-only system view (the configured ``binds``; see
``runtimes.local_view``), ``cache/web`` bound read-only at its own path and nothing else of
the webshelf home, a private writable ``/tmp`` that lives as long as the runtime (so files
persist between commands), fresh ``/dev`` and ``/proc``, every namespace unshared (network
too unless ``network: true``), and ``--die-with-parent`` so nothing outlives webshelf. A missing ``bwrap`` is an error with the
install hint — never a silent fall-back; only ``sandbox: none`` runs unsandboxed, and
``verify()`` says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Sequence

from webshelf.runtimes.base import BindRuntime, ExecResult, Offers
from webshelf.errors import RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.runtimes.local.scratch import make_scratch, orphan_dirs, remove_tree
from webshelf.runtimes.local.view import SYSTEM_BINDS, view_args, whole_host
from webshelf.runtimes.stdin import Pump, Stdin, fileno_of, is_stream

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


class LocalRuntime(BindRuntime):
    kind = "local"
    #: binds the directory into a fresh bwrap sandbox per command; there is nothing to attach to
    offers = Offers(bind_mount=True)

    def __init__(self, settings, mount, *, name: str | None = None) -> None:
        super().__init__(settings, mount, name=name)
        self._scratch: str | None = None
        self._bwrap: str | None = None
        self._started = False
        self.write_protected = settings.sandbox != "none"

    # lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self._started:
            return
        if self.settings.sandbox == "bwrap":
            self._bwrap = shutil.which(self.settings.bwrap)
            if self._bwrap is None:
                raise RuntimeUnavailableError(f"bubblewrap ({self.settings.bwrap!r}) is not installed or not on PATH; install it "
                                              f"(Debian/Ubuntu: apt-get install bubblewrap) or set runtimes.{self.name}.bwrap to its path. "
                                              f"To run without a sandbox on purpose, set runtimes.{self.name}.sandbox: none", runtime=self.name)
            for orphan in orphan_dirs():  # left by a local runtime whose process was killed
                orphan.remove()
            self._scratch = make_scratch()
        self._started = True
        try:
            probe = self.exec(["true"], timeout=30)
        except BaseException:  # a signal during the probe too: never leave the scratch directory
            self.stop()
            raise
        if not probe.ok:
            self.stop()
            raise RuntimeUnavailableError(f"bwrap cannot create a sandbox here (exit {probe.exit_code}): "
                                          f"{probe.stderr.decode(errors='replace').strip()[:300]} — user namespaces may be disabled "
                                          "(sysctl kernel.unprivileged_userns_clone=1) or bwrap needs to be setuid", runtime=self.name)

    def stop(self) -> None:
        self._started = False
        if self._scratch:
            remove_tree(self._scratch)
            self._scratch = None

    def is_alive(self) -> bool:
        return self._started

    # commands --------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {"PATH": DEFAULT_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"}
        env.update(self.settings.env)
        return env

    def command(self, argv: Sequence[str]) -> list[str]:
        """The full bwrap command line for ``argv`` (public so ``sandbox run`` can show it).

        Privileges first: a user namespace in which the command is ``uid``/``gid`` (65534 by
        default) with every capability dropped and no further user namespaces, so even when
        webshelf runs as root nothing inside can remount, mount or unshare its way to a
        writable ``cache/web``. Then the filesystem view (``runtimes.local_view``).
        """
        s = self.settings
        cmd = [self._bwrap or s.bwrap, "--die-with-parent", "--new-session", "--unshare-all",
               "--unshare-user", "--uid", str(s.uid), "--gid", str(s.gid), "--disable-userns", "--cap-drop", "ALL"]
        if s.network:
            cmd.append("--share-net")
        web = str(self.mount.path)
        cmd += view_args(s.binds, scratch=self._scratch or "/nonexistent", home=str(self.home),
                         web=web, web_read_only=self.mount.read_only)
        cmd += ["--clearenv"]
        for key, value in self._env().items():
            cmd += ["--setenv", key, value]
        cmd += ["--chdir", s.working_dir, "--", *argv]
        return cmd

    # what verify() reports about the view ------------------------------------------------
    @property
    def home(self):
        """The webshelf home whose ``cache/web`` is mounted (hidden apart from that)."""
        return self.mount.path.parent.parent

    def exposes_host(self) -> bool:
        return self.settings.sandbox == "none" or whole_host(self.settings.binds)

    def privilege_hint(self) -> str:
        return (f"bwrap must run with --unshare-user, an unprivileged --uid/--gid (runtimes.{self.name}.uid/gid) and "
                "--cap-drop ALL; bubblewrap 0.8 or newer is needed")

    def exposure_hint(self) -> str:
        return (f"remove the bind that shows it from runtimes.{self.name}.binds (the default is a minimal system view: "
                + ", ".join(SYSTEM_BINDS) + ")")

    def view_warnings(self) -> list[str]:
        if self.settings.sandbox != "none" and whole_host(self.settings.binds):
            return [f"runtimes.{self.name}.binds includes '/': the whole host filesystem is visible read-only inside "
                    "(home directories, keys, sockets under /run); remove '/' to get the minimal system view"]
        return []

    def exec(self, argv: Sequence[str], *, timeout: float, stdin: Stdin = None) -> ExecResult:
        if not self._started:
            raise RuntimeExecError("the sandbox is not started; call start() or use it as a context manager", runtime=self.name)
        if not argv:
            raise RuntimeExecError("exec needs a command (argv is empty)", runtime=self.name)
        argv = [str(a) for a in argv]
        if self.settings.sandbox == "none":
            cmd, env, cwd = argv, {**os.environ, **self._env()}, self.settings.working_dir
        else:
            cmd, env, cwd = self.command(argv), None, None
        child_stdin, pump, data = self._stdin(stdin)
        proc = None
        try:
            # A session of its own, so a timeout kills the whole process group, grandchildren too
            # (under bwrap the pid namespace dies with it; with sandbox: none this is all there is).
            proc = subprocess.Popen(cmd, stdin=child_stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, cwd=cwd, start_new_session=True)
        except FileNotFoundError as exc:
            if self._bwrap is None and exc.filename in (argv[0], None):  # sandbox: none, like a shell
                return ExecResult(127, b"", f"{argv[0]}: not found\n".encode())
            raise RuntimeExecError(f"cannot run {exc.filename!r}: not found", runtime=self.name) from None
        except PermissionError:
            if self._bwrap is None:
                return ExecResult(126, b"", f"{argv[0]}: permission denied\n".encode())
            raise RuntimeExecError(f"cannot run {argv[0]!r}: permission denied", runtime=self.name) from None
        except OSError as exc:
            raise RuntimeExecError(f"cannot run {argv[0]!r}: {exc.strerror}", runtime=self.name) from None
        finally:
            if pump is not None:  # the child holds its own copy of the pipe's read end now
                os.close(child_stdin)
                if proc is None:
                    pump.stop()
        try:
            if pump is not None:
                pump.start()
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            raise RuntimeTimeoutError(f"{argv[0]!r} did not finish within {timeout:g} s and was killed "
                                      "(with every process it started)", runtime=self.name) from None
        except BaseException:
            self._kill(proc)  # a signal turned into an exception (CLI): the sandbox goes before its /tmp
            raise
        finally:
            if pump is not None:
                pump.stop()  # the command has exited: stop reading its input
        code = _launch_failure(proc.returncode, err) if self._bwrap else proc.returncode
        return ExecResult(code, out, err)

    @staticmethod
    def _stdin(stdin: Stdin) -> tuple[int, Pump | None, bytes | None]:
        """(the child's stdin, a pump to start, bytes for ``communicate``). A stream with a file
        descriptor is handed to the command as it is — it reads our input itself, as it would
        in a shell pipeline, and nothing is copied or held here; a stream without one is pumped
        into a pipe; bytes go through ``communicate``."""
        fd = fileno_of(stdin)
        if fd is not None:
            return fd, None, None
        if is_stream(stdin):
            read_end, write_end = os.pipe()
            wire = os.fdopen(write_end, "wb", buffering=0)
            return read_end, Pump(stdin, wire.write, wire.close, name="webshelf-local-stdin"), None
        return (subprocess.PIPE if stdin is not None else subprocess.DEVNULL), None, stdin  # type: ignore[return-value]

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()


def _launch_failure(code: int, err: bytes) -> int:
    """bwrap exits 1 when it cannot exec the command; give the shell's codes instead (127: not
    found, 126: not executable) so ``sandbox run`` exits the same way on every runtime."""
    if code == 1 and err.startswith(b"bwrap: execvp ") and err.count(b"\n") <= 1:
        return 127 if b"No such file or directory" in err else 126
    return code
