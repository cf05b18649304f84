"""``webshelf runtime run``, ``webshelf runtime check`` and ``webshelf extract --runtime``: exact output."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from tests.loopback import Response


def _write_config(home: Path, data: dict) -> Path:
    """A config file for the CLI; the loopback test server must be reachable (web.allow_private)."""
    data = {"web": {"allow_private": True}, **data}
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_sandbox_run_passes_output_and_exit_code(bwrap_ready, home):
    result = CliRunner().invoke(main, ["runtime", "run", "local", "--", "sh", "-c",
                                       "echo out; echo err >&2; exit 7"])
    assert (result.exit_code, result.stdout, result.stderr) == (7, "out\n", "err\n")


def test_sandbox_run_unknown_runtime(home):
    result = CliRunner().invoke(main, ["runtime", "run", "nope", "--", "true"])
    assert result.exit_code == 2
    assert result.stderr == ("error[config_invalid]: unknown runtime 'nope'; configured runtimes: local (local), "
                             "docker (docker); add it under runtimes: with a type (docker, local, modal, ssh)\n")


def test_sandbox_run_missing_bwrap(home):
    config = _write_config(home, {"runtimes": {"local": {"type": "local", "bwrap": "/nonexistent/bwrap"}}})
    result = CliRunner().invoke(main, ["--config", str(config), "runtime", "run", "local", "--", "true"])
    assert result.exit_code == 125 and result.stderr.startswith("error[runtime_unavailable]: runtime 'local': bubblewrap")


def test_runtime_check_report(bwrap_ready, home):
    result = CliRunner().invoke(main, ["runtime", "check", "local"])
    web = home / "cache" / "web"
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"runtime: local\nmount: {web} (read-only, same path)\n"
        f"ok   same path: {web} exists inside\n"
        "ok   live and readable: a sentinel written on the host just now reads back inside\n"
        "ok   read-only: create, write, append, chmod, mkdir, symlink, rename and delete all fail\n"
        "ok   mount locked: remount read-write, mount over it, unshare and chmod of the mount point all fail\n"
        "ok   no capabilities: CapEff is 0\n"
        "ok   host hidden: the index, config.yaml, ~/.ssh, the home directory and the Docker socket are unreachable; "
        "only cache/web of the home is there\n"
        "ok   sandbox works: an ordinary command runs\nresult: ok\n")


def test_runtime_check_docker_with_docker_image(docker_image, home):
    config = _write_config(home, {"runtimes": {"docker": {"type": "docker", "image": docker_image}}})
    result = CliRunner().invoke(main, ["--config", str(config), "runtime", "check", "docker"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("runtime: docker\n") and result.stdout.endswith("result: ok\n")


def test_extract_publishes_to_the_named_runtime(bwrap_ready, home, server):
    url = server.route("/cli-runtime/page.md", Response(b"# CLI\n\nbody\n", headers={"Content-Type": "text/markdown"}))
    config = _write_config(home, {})
    result = CliRunner().invoke(main, ["--config", str(config), "extract", "--runtime", "local", url])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "# CLI\n\nbody\n", "")


def test_extract_runtime_docker_needs_a_running_container(home, server):
    url = server.route("/cli-runtime/page2.md", Response(b"# CLI\n", headers={"Content-Type": "text/markdown"}))
    result = CliRunner().invoke(main, ["extract", "--runtime", "docker", url])
    assert result.exit_code == 2
    assert result.stderr == ("error[config_invalid]: runtime 'docker' would start a new sandbox; to publish into a "
                             "running one, set runtimes.docker.container to its name or id\n")


def test_extract_reports_a_failed_publish_as_a_note(docker_image, docker_client, home, server):
    """A container that dies after attach: the page still comes back, with the note in its content."""
    from webshelf.mounts.spec import cache_mount

    web = str(cache_mount(home).path)
    box = docker_client.containers.run(docker_image, ["sleep", "600"], detach=True, volumes={web: {"bind": web, "mode": "ro"}},
                                       network_mode="none")
    try:
        config = _write_config(home, {"runtimes": {"docker": {"type": "docker", "container": box.name, "image": docker_image}}})
        url = server.route("/cli-runtime/page3.md", Response(b"# Three\n", headers={"Content-Type": "text/markdown"}))
        from webshelf.core.config import load_config
        from webshelf.core.extract import web_extract_sync
        from webshelf.core.sandbox import open_running

        rt = open_running("docker", load_config(config))
        with rt:
            box.kill()
            box.wait()
            [res] = web_extract_sync([url], config=load_config(config), runtimes=[rt])
        assert res.notes == ["publish to runtime 'docker' failed: runtime 'docker': the sandbox is not running; "
                             "start it before publishing"]
        assert res.ok and res.content == f"# Three\n\n---\n[webshelf] note: {res.notes[0]}\n"  # inside the budget
    finally:
        box.remove(force=True)
