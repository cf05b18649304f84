"""Real components for the runtime tests: bubblewrap and a Docker daemon with a busybox image."""

from __future__ import annotations

import shutil
import subprocess

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
