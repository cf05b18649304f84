"""Real components for the runtime tests: bubblewrap and a Docker daemon with a busybox image."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.components import need
from tests.runtimes.busybox_image import busybox_path, ensure_image


def bwrap_works() -> tuple[bool, str]:
    exe = shutil.which("bwrap")
    if not exe:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    done = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
                          capture_output=True, text=True)
    if done.returncode:
        return False, f"bwrap cannot create a sandbox here: {done.stderr.strip()}"
    return True, ""


@pytest.fixture(scope="session")
def bwrap_ready() -> None:
    ok, why = bwrap_works()
    need(ok, "bubblewrap", why)


@pytest.fixture(scope="session")
def docker_client():
    try:
        import docker
    except ImportError:
        need(False, "the docker SDK", "pip install 'webshelf[docker]'")
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except docker.errors.DockerException as exc:
        need(False, "a Docker daemon", f"{exc}; start dockerd (.ci/run does)")
    yield client
    client.close()


@pytest.fixture(scope="session")
def docker_image(docker_client) -> str:
    busybox = busybox_path()
    need(busybox is not None, "a static busybox", "apt-get install busybox-static")
    return ensure_image(docker_client, busybox)


@pytest.fixture
def fake_modal():
    """A fresh fake Modal account (in-memory Volumes, sandboxes run locally under bwrap)."""
    pytest.importorskip("modal", reason="the fake raises modal's own exceptions: pip install 'webshelf[modal]'")
    from tests.runtimes.fake_modal import FakeModal

    service = FakeModal()
    yield service
    service.close()


# SSH (issue 6): a real sshd in its own mount namespace, see tests/sshd.py -----------------------
def _start_sshd(tmp_path_factory):
    from tests.sshd import Sshd, sshd_missing

    why = sshd_missing()
    need(why is None, "a real sshd", why or "")
    # the remote gets its own empty /tmp, which holds every test's tmp_path (so each webshelf
    # home); a --basetemp elsewhere gets its own tmpfs too
    base = tmp_path_factory.getbasetemp()
    roots = [Path("/tmp")] + ([] if Path("/tmp") in base.parents else [base])
    return Sshd(*roots).start()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A remote machine for root-only use (readonly: bind, faults)."""
    server = _start_sshd(tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def sshd_perms(tmp_path_factory):
    """Another remote machine, for readonly: perms: its /tmp was never written by root."""
    server = _start_sshd(tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def agent_user() -> str:
    from tests.sshd import AGENT_USER, ensure_agent_user, sshd_missing

    need(sshd_missing() is None, "a real sshd and root (to create the agent user)", sshd_missing() or "")
    ensure_agent_user()
    return AGENT_USER


def ssh_config(config, server, **host):
    """Point ``config`` at ``server`` as the runtime instance ``loop`` (type ssh); returns its name."""
    from webshelf.runtimes.ssh.config import SshRuntimeConfig

    config.runtimes.loop = SshRuntimeConfig(**server.host_config(**host))
    return "loop"


@pytest.fixture
def fresh_sshd(tmp_path_factory):
    """A remote of its own for one test (faults kill and restart it)."""
    server = _start_sshd(tmp_path_factory)
    yield server
    server.stop()
