"""``webshelf runtime list|image`` and the old ``sandbox run`` spelling, with real dockerd and bwrap;
and README's ``docker run`` line for attaching a container, run as written."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.runtimes.docker import image as recipe
from tests.loopback import Response

README = Path(__file__).resolve().parents[2] / "README.md"


def _config(home: Path, data: dict) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump({"web": {"allow_private": True}, **data}))
    return path


def test_runtime_list_shows_every_configured_runtime(home):
    _config(home, {"runtimes": {"docker": {"type": "docker", "image": "webshelf-busybox:abc"},
                                "web1": {"type": "ssh", "host": "10.0.0.5", "user": "sync"}}})
    result = CliRunner().invoke(main, ["runtime", "list"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "local   local   bubblewrap sandbox (bwrap), network off (defaults)\n"
        "docker  docker  new container from image webshelf-busybox:abc, network none\n"
        "web1    ssh     sync@10.0.0.5:22, mirror read-only by perms\n")


@pytest.fixture
def built_image(docker_client):
    """``webshelf runtime image`` under a tag of this test's own; removed afterwards."""
    try:
        source = recipe.find_busybox()
    except ValueError as exc:
        pytest.skip(str(exc))
    tag = f"webshelf-test-cli-image:{uuid.uuid4().hex[:8]}"
    yield tag, source
    try:
        docker_client.images.remove(tag, force=True)
    except Exception:  # noqa: BLE001 — the test may have failed before building it
        pass


def test_runtime_image_builds_offline_and_the_docker_runtime_runs_it(built_image, home):
    tag, source = built_image
    first = CliRunner().invoke(main, ["runtime", "image", "--tag", tag])
    assert (first.exit_code, first.stderr) == (0, "")
    assert first.stdout == (f"built: {tag} (docker import of {source}; no registry needed)\n"
                            "use it: add to the config file (webshelf config path):\n"
                            f"runtimes:\n  docker:\n    type: docker\n    image: {tag}\n")
    again = CliRunner().invoke(main, ["runtime", "image", "--tag", tag])
    assert again.stdout.startswith(f"already present: {tag} ")
    config = _config(home, yaml.safe_load(first.stdout.split("path):\n", 1)[1]))  # the printed lines, as given
    checked = CliRunner().invoke(main, ["--config", str(config), "runtime", "check", "docker"])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.endswith("result: ok\n")


def test_runtime_image_refuses_a_dynamic_busybox(home):
    result = CliRunner().invoke(main, ["runtime", "image", "--busybox", "/bin/ls"])
    real = os.path.realpath("/bin/ls")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (f"error[runtime_unavailable]: runtime 'docker': cannot build the sandbox image: {real} is "
                             "dynamically linked and cannot "
                             "run in an empty image; install a static busybox (Debian/Ubuntu: apt-get install "
                             "busybox-static) or pass --busybox PATH\n")


def test_sandbox_run_is_the_old_spelling_of_runtime_run(bwrap_ready, home):
    result = CliRunner().invoke(main, ["sandbox", "run", "--runtime", "local", "--", "sh", "-c", "echo hi"])
    assert (result.exit_code, result.stdout) == (0, "hi\n")
    assert result.stderr == "note: `webshelf sandbox run --runtime NAME` is deprecated; use `webshelf runtime run NAME`\n"


def test_the_readmes_docker_run_line_attaches_a_container(docker_image, docker_client, home, server):
    """The README's lines, run by sh as written (only the image and name are this test's)."""
    [block] = re.findall(r"```sh\n(web=.*?docker run .*?)```", README.read_text(), re.S)
    name = f"webshelf-test-attach-{uuid.uuid4().hex[:8]}"
    script = block.replace("webshelf-busybox:<tag>", docker_image).replace("agent-box", name)
    subprocess.run(["sh", "-c", script], check=True, capture_output=True, timeout=120,
                   env={**os.environ, "WEBSHELF_HOME": str(home)})
    try:
        config = _config(home, {"runtimes": {"docker": {"type": "docker", "container": name}}})
        url = server.route("/attach/page.md", Response(b"# Attached\n", headers={"Content-Type": "text/markdown"}))
        extracted = CliRunner().invoke(main, ["--config", str(config), "extract", "--runtime", "docker", url])
        assert (extracted.exit_code, extracted.stdout, extracted.stderr) == (0, "# Attached\n", "")
        checked = CliRunner().invoke(main, ["--config", str(config), "runtime", "check", "docker"])
        assert checked.exit_code == 0, checked.output
    finally:
        docker_client.containers.get(name).remove(force=True)
