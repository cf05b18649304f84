"""The docker runtime beyond the shared suite: safe defaults, attach mode, clear errors."""

from __future__ import annotations

import os
import sys

import pytest

from webshelf.core.config import Config
from webshelf.errors import MountError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.core.sandbox import open_runtime
from webshelf.runtimes.docker.runtime import LABEL, DockerRuntime
from tests.loopback import Response


@pytest.fixture
def docker_config(config: Config, docker_image: str) -> Config:
    config.runtimes.docker.image = docker_image
    return config


def test_safe_defaults_reach_the_container(docker_config: Config, docker_client):
    with open_runtime("docker", docker_config) as rt:
        attrs = docker_client.api.inspect_container(rt.container.id)
        host, cfg = attrs["HostConfig"], attrs["Config"]
        assert host["NetworkMode"] == "none" and host["CapDrop"] == ["ALL"] and host["ReadonlyRootfs"] is True
        assert host["SecurityOpt"] == ["no-new-privileges:true"] and "/tmp" in host["Tmpfs"]
        assert host["Memory"] == 1024 ** 3 and host["NanoCpus"] == 10 ** 9 and host["PidsLimit"] == 512
        assert cfg["User"] == "65534:65534" and cfg["Labels"][LABEL] == "docker"
        [mount] = [m for m in attrs["Mounts"] if m["Destination"] == str(rt.mount.path)]
        assert mount["Type"] == "bind" and mount["Source"] == str(rt.mount.path) and mount["RW"] is False
        assert rt.exec(["id", "-u"], timeout=30).stdout == b"65534\n"
        assert rt.exec(["sh", "-c", "echo x > /etc/x"], timeout=30).exit_code != 0  # read-only root
        container_id = rt.container.id
    assert not [c for c in docker_client.containers.list(all=True) if c.id == container_id]  # removed at stop


def test_overrides_from_yaml_keys(docker_config: Config, docker_client, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "f.txt").write_text("extra\n")
    d = docker_config.runtimes.docker
    d.env, d.labels, d.working_dir, d.user = {"GREETING": "hej"}, {"team": "x"}, "/tmp", "1234:1234"
    d.volumes, d.mem_limit, d.pids_limit = [f"{extra}:/extra"], "256m", 64
    with open_runtime("docker", docker_config) as rt:
        done = rt.exec(["sh", "-c", 'echo "$GREETING $(id -u) $(pwd)"; cat /extra/f.txt; touch /extra/g'], timeout=30)
        attrs = docker_client.api.inspect_container(rt.container.id)
    assert done.stdout == b"hej 1234 /tmp\nextra\n" and done.exit_code != 0  # the extra volume is read-only too
    assert attrs["Config"]["Labels"]["team"] == "x" and attrs["HostConfig"]["Memory"] == 256 * 1024 ** 2


def test_unreachable_daemon_names_where_it_looked(docker_config: Config, tmp_path):
    docker_config.runtimes.docker.docker_host = f"unix://{tmp_path}/no-such.sock"
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert f"unix://{tmp_path}/no-such.sock" in str(err.value) and "dockerd" in str(err.value)


def test_missing_image_says_how_to_get_it(docker_config: Config):
    docker_config.runtimes.docker.image = "webshelf-no-such-image:never"
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert "docker pull webshelf-no-such-image:never" in str(err.value)


def test_missing_sdk_names_the_extra(docker_config: Config, monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)  # makes `import docker` raise ImportError
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert "pip install 'webshelf[docker]'" in str(err.value)


def test_container_that_died_is_reported(docker_config: Config):
    with open_runtime("docker", docker_config) as rt:
        rt.container.kill()
        rt.container.wait()
        assert not rt.is_alive()
        with pytest.raises(RuntimeExecError) as err:
            rt.exec(["true"], timeout=30)
    assert "is not running" in str(err.value) and "exit code" in str(err.value)


def _container(docker_client, image: str, web: str, *, with_mount: bool, mode: str = "ro"):
    volumes = {web: {"bind": web, "mode": mode}} if with_mount else {}
    return docker_client.containers.run(image, ["sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"], detach=True,
                                        volumes=volumes, network_mode="none", labels={LABEL: "attach-test"})


def test_attach_to_a_running_container_and_leave_it_running(docker_config: Config, docker_client, docker_image, server):
    from webshelf.core.extract import web_extract_sync
    from webshelf.core.read import read_file
    from webshelf.core.sandbox import read_file_in
    from webshelf.mounts.spec import cache_mount

    web = str(cache_mount(docker_config.home).path)
    outside = _container(docker_client, docker_image, web, with_mount=True)
    try:
        docker_config.runtimes.docker.container = outside.name
        with open_runtime("docker", docker_config) as rt:
            assert rt.verify().ok
            url = server.route("/attach/page.md", Response(b"# Attached\n" + b"line\n" * 50,
                                                           headers={"Content-Type": "text/markdown"}))
            [result] = web_extract_sync([url], config=docker_config, runtimes=[rt])
            assert result.notes == []
            assert read_file_in(rt, result.path, 1, 3, config=docker_config) == read_file(result.path, 1, 3, config=docker_config)
        outside.reload()
        assert outside.status == "running"
    finally:
        outside.remove(force=True)


@pytest.mark.parametrize("with_mount, mode", [(False, "ro"), (True, "rw")])
def test_attach_to_a_container_without_the_readonly_mount_is_refused(docker_config: Config, docker_client,
                                                                     docker_image, with_mount, mode):
    """Refused at start: accepted, publish would report pages the container cannot see (or could change)."""
    from webshelf.mounts.spec import cache_mount

    web = str(cache_mount(docker_config.home).path)
    bare = _container(docker_client, docker_image, web, with_mount=with_mount, mode=mode)
    try:
        docker_config.runtimes.docker.container = bare.id
        rt = open_runtime("docker", docker_config)
        with pytest.raises(MountError) as err:
            rt.start()
        assert rt.container is None and "same path" in str(err.value) and "runtime 'docker'" in str(err.value)
        assert f"--mount type=bind,source={web},target={web},readonly" in str(err.value)
        rt.stop()
        bare.reload()
        assert bare.status == "running"  # never stopped: it is not ours
    finally:
        bare.remove(force=True)


def test_attach_to_a_missing_container(docker_config: Config):
    docker_config.runtimes.docker.container = "webshelf-no-such-container"
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert "webshelf-no-such-container" in str(err.value) and "runtimes.docker.container" in str(err.value)


def test_container_that_fails_to_start_is_removed(docker_config: Config, docker_client):
    """Created, then the start failed: the container must not be left behind."""
    d = docker_config.runtimes.docker
    d.command, d.labels = ["/no/such/entrypoint"], {"webshelf-test": "start-fails"}
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert "could not start" in str(err.value)
    assert docker_client.containers.list(all=True, filters={"label": "webshelf-test=start-fails"}) == []


def test_large_stdin_does_not_deadlock(docker_config: Config):
    """stdin larger than the pipe buffers while the command already writes output."""
    data = os.urandom(4 << 20)
    with open_runtime("docker", docker_config) as rt:
        done = rt.exec(["cat"], stdin=data, timeout=30)
    assert done.exit_code == 0 and done.stdout == data


@pytest.mark.parametrize("where", ["host", "inside"])
def test_timeout_kills_the_whole_process_tree(docker_config: Config, monkeypatch, where):
    """Children (also in a session of their own) die too; "inside": this host may not signal them."""
    if where == "inside":
        def refuse(pid, sig):
            raise PermissionError(1, "Operation not permitted")
        monkeypatch.setattr("webshelf.runtimes.docker.runtime.os.kill", refuse)
    with open_runtime("docker", docker_config) as rt:
        with pytest.raises(RuntimeTimeoutError) as err:
            rt.exec(["sh", "-c", "sleep 121 & setsid sleep 122 & sleep 123; echo done"], timeout=1)
        assert "was killed" in str(err.value)
        ps = rt.exec(["ps"], timeout=30).text()
    assert not [n for n in ("121", "122", "123") if f"sleep {n}" in ps], ps


def test_timeout_that_cannot_kill_says_so(docker_config: Config, monkeypatch):
    """Never claim "was killed" when the processes could not be signalled."""
    monkeypatch.setattr(DockerRuntime, "_signal_here", lambda self, pid: None)
    monkeypatch.setattr("webshelf.runtimes.docker.runtime.KILL_WAIT_S", 0.3)
    with open_runtime("docker", docker_config) as rt:
        with pytest.raises(RuntimeTimeoutError) as err:
            rt.exec(["sleep", "124"], timeout=0.5)
    assert "may still be running" in str(err.value) and "was killed" not in str(err.value)


class _DaemonProxy:
    """A loopback TCP port forwarding to the daemon's unix socket, that can be cut: to the
    runtime's client the daemon goes away mid-use, as when dockerd stops."""

    def __init__(self, unix_path: str, *, gather_s: float = 0.0) -> None:
        """``gather_s`` > 0: hold each reply of the daemon that long and send it with whatever
        followed in one write (as a slow link or a buffering proxy does)."""
        import socket
        import threading

        self._unix, self._socks, self._lock = unix_path, [], threading.Lock()
        self._gather_s = gather_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"tcp://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            daemon = socket.socket(socket.AF_UNIX)
            daemon.connect(self._unix)
            with self._lock:
                self._socks += [client, daemon]
            for a, b, gather in ((client, daemon, 0.0), (daemon, client, self._gather_s)):
                threading.Thread(target=self._pump, args=(a, b, gather), daemon=True).start()

    @staticmethod
    def _pump(src, dst, gather_s: float) -> None:
        import socket
        import time

        try:
            while data := src.recv(65536):
                if gather_s:
                    time.sleep(gather_s)
                    src.setblocking(False)
                    try:
                        while more := src.recv(65536):
                            data += more
                    except BlockingIOError:
                        pass
                    finally:
                        src.setblocking(True)
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        import socket

        self._listener.close()
        with self._lock:
            for s in self._socks:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


def _daemon_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        pytest.skip(f"the proxy forwards to a unix socket; DOCKER_HOST is {host}")
    return host[len("unix://"):]


def test_output_that_arrives_with_the_upgrade_headers_is_kept(docker_config: Config):
    """The daemon's first frames in the same segment as its ``101 UPGRADED`` headers (a TCP daemon,
    a proxy, a fast command) sit in http.client's buffer: the SDK's own frame reader polls the raw
    socket and returned nothing for them (found as a CI run where ``echo hi`` gave b'')."""
    proxy = _DaemonProxy(_daemon_socket(), gather_s=0.3)
    docker_config.runtimes.docker.docker_host = proxy.url
    try:
        with open_runtime("docker", docker_config) as rt:
            done = rt.exec(["sh", "-c", "echo hi; echo oops >&2; exit 3"], timeout=30)
            fed = rt.exec(["cat"], stdin=b"x" * 100_000, timeout=30)
    finally:
        proxy.close()
    assert (done.exit_code, done.stdout, done.stderr) == (3, b"hi\n", b"oops\n")
    assert fed.stdout == b"x" * 100_000


def test_a_daemon_that_goes_away_mid_use_is_runtime_unavailable(docker_config: Config, docker_client):
    """docker SDK and requests errors (the SDK does not wrap a dropped connection) leave as the
    tree's runtime errors, naming where the daemon was expected."""
    from webshelf.errors import WebshelfError

    proxy = _DaemonProxy(_daemon_socket())
    docker_config.runtimes.docker.docker_host = proxy.url
    rt = open_runtime("docker", docker_config)
    rt.start()
    container_id = rt.container.id
    try:
        assert rt.exec(["echo", "hi"], timeout=30).stdout == b"hi\n"
        proxy.close()
        with pytest.raises(RuntimeUnavailableError) as err:
            rt.exec(["true"], timeout=30)
        assert isinstance(err.value, WebshelfError) and err.value.runtime == "docker"
        assert f"cannot run 'true': the Docker daemon at {proxy.url} does not answer" in str(err.value)
        assert "start dockerd" in str(err.value)
        assert not rt.is_alive()
        with pytest.raises(RuntimeUnavailableError, match="cannot list containers"):
            rt.orphans()
        rt.stop()  # closes the client; the container cannot be removed through a gone daemon, and no error
    finally:
        proxy.close()
        docker_client.api.remove_container(container_id, force=True)  # the one this test created


def test_a_daemon_port_nobody_listens_on_is_runtime_unavailable(docker_config: Config):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    docker_config.runtimes.docker.docker_host = f"tcp://127.0.0.1:{port}"
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("docker", docker_config).start()
    assert f"cannot connect: the Docker daemon at tcp://127.0.0.1:{port} does not answer" in str(err.value)
