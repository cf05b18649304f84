"""The bubblewrap runtime beyond the shared suite: isolation, clear errors, sandbox: none."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time

import pytest

from webshelf.core.config import Config
from webshelf.errors import MountError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.core.sandbox import open_runtime
from webshelf.mounts.publish import retract_all
from webshelf.mounts.spec import MountSpec, cache_mount
from webshelf.runtimes.local.runtime import LocalRuntime


@pytest.fixture
def local(bwrap_ready, config: Config):
    with open_runtime("local", config) as rt:
        yield rt


def test_missing_bwrap_is_an_error_with_the_install_hint(config: Config):
    config.runtimes.local.bwrap = "/nonexistent/bwrap"
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime("local", config).start()
    message = str(err.value)
    assert "apt-get install bubblewrap" in message and "sandbox: none" in message and err.value.code == "runtime_unavailable"


def test_network_is_off_unless_configured(local, server):
    """/usr is visible read-only, so the host's python3 runs inside."""
    port = int(server.base.rsplit(":", 1)[1])
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    done = local.exec(["python3", "-c", code], timeout=30)
    assert done.exit_code != 0 and b"Connection refused" in done.stderr
    with socket.create_connection(("127.0.0.1", port), timeout=2):  # reachable from the host itself
        pass


def test_network_true_shares_the_host_network(bwrap_ready, config: Config, server):
    config.runtimes.local.network = True
    port = int(server.base.rsplit(":", 1)[1])
    with open_runtime("local", config) as rt:
        done = rt.exec(["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"],
                       timeout=30)
    assert done.exit_code == 0, done.stderr


def test_scratch_tmp_persists_between_commands_and_is_removed_at_stop(bwrap_ready, config: Config):
    rt = open_runtime("local", config)
    with rt:
        assert rt.exec(["sh", "-c", "echo a > /tmp/kept"], timeout=30).ok
        assert rt.exec(["cat", "/tmp/kept"], timeout=30).stdout == b"a\n"
        scratch = rt._scratch
    assert scratch is not None and not __import__("os").path.exists(scratch)


def test_verify_catches_a_writable_mount(bwrap_ready, config: Config):
    writable = MountSpec(cache_mount(config.home).path, read_only=False)
    with LocalRuntime(config.runtimes.local, writable) as rt:
        with pytest.raises(MountError) as err:
            rt.verify()
    assert "read-only" in str(err.value) and "create" in str(err.value) and "runtime 'local'" in str(err.value)
    assert sorted(p.name for p in writable.path.iterdir()) == []  # the probe's leftovers are cleaned up


def test_sandbox_none_runs_unsandboxed_and_verify_says_so(config: Config, tmp_path):
    config.runtimes.local.sandbox = "none"
    config.runtimes.local.bwrap = "/nonexistent/bwrap"  # not needed, not looked for
    with open_runtime("local", config) as rt:
        report = rt.verify()
        assert (tmp_path / "outside").exists() is False
        assert rt.exec(["sh", "-c", f"touch '{tmp_path}/outside'"], timeout=30).ok
    assert (tmp_path / "outside").exists()
    assert report.ok and any("sandbox: none" in w and "unsandboxed" in w for w in report.warnings)
    assert "read-only" not in [name for name, _, _ in report.checks]


def test_retract_of_a_page_still_on_the_host_is_reported(local, config: Config):
    page = local.mount.path / "still-here.md"
    page.write_text("x\n")
    [problem] = retract_all([local], [str(page)], timeout=30)
    assert problem.target == "local" and "still exists on the host" in problem.detail


def test_exec_before_start_is_a_clear_error(config: Config):
    rt = open_runtime("local", config)
    with pytest.raises(Exception) as err:
        rt.exec(["true"], timeout=5)
    assert "not started" in str(err.value)


def test_agent_tools_publish_to_attached_runtimes(local, config: Config, server):
    """The dispatcher (and so the MCP server) publishes like the CLI: the footer path of a
    truncated page reads the same inside the sandbox right after the tool call returns."""
    from webshelf.core.surfaces.dispatch import run_tool
    from webshelf.core.read import read_file
    from webshelf.core.sandbox import read_file_in

    url = server.url("/pydocs/library__re.html")
    out = asyncio.run(run_tool("web_extract", {"urls": [url]}, config=config, runtimes=[local]))
    [row] = out.data["results"]
    assert not out.is_error and row["truncated"] and not row["notes"]
    assert read_file_in(local, row["path"], 200, 50) == read_file(row["path"], 200, 50, config=config)


def test_configured_binds_under_tmp_stay_visible_over_the_private_tmp(bwrap_ready, config: Config, tmp_path):
    """The sandbox's own /tmp must not hide a bind the user asked for below it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.txt").write_text("visible\n")
    config.runtimes.local.binds = ["/", str(project)]
    with open_runtime("local", config) as rt:
        assert rt.exec(["cat", str(project / "data.txt")], timeout=30).stdout == b"visible\n"
        assert rt.exec(["sh", "-c", f"echo x > '{project}/new.txt'"], timeout=30).exit_code != 0  # read-only


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_timeout_kills_every_process_the_command_started(bwrap_ready, config: Config, sandbox):
    config.runtimes.local.sandbox = sandbox
    with open_runtime("local", config) as rt:
        with pytest.raises(RuntimeTimeoutError, match="was killed"):
            rt.exec(["sh", "-c", "sleep 3017 & sleep 3018"], timeout=1)  # a grandchild in the background
    time.sleep(0.3)
    left = subprocess.run(["pgrep", "-f", "sleep 301[78]"], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running after the timeout: {left}"
