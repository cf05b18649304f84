"""Sandboxes never outlive their owner (issue 12, item 4), against real processes, dockerd and bwrap.

``webshelf runtime run`` runs as a real subprocess; SIGTERM/SIGHUP must remove its container or
scratch directory before it exits; a SIGKILLed owner leaves an orphan that ``webshelf runtime
prune`` and the next start remove. Standard input reaches the command on every runtime, and the
exit codes are the documented ones.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.core.sandbox import open_runtime
from webshelf.runtimes.docker.owner import HOME, PID
from webshelf.runtimes.local.scratch import PREFIX

WEBSHELF = str(Path(sys.executable).parent / "webshelf")
#: how long a sandbox may take to appear (a bound for polling, never asserted on)
APPEAR_S = 60


@pytest.fixture
def tmpdir_(tmp_path, monkeypatch) -> Path:
    """A temp directory of this test's own, so scratch dirs of other processes never show up."""
    path = tmp_path / "tmp"
    path.mkdir()
    monkeypatch.setenv("TMPDIR", str(path))
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


@pytest.fixture
def docker_home(home, docker_image) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"docker": {"type": "docker", "image": docker_image}}}))
    return home


def _start(runtime: str, *argv: str) -> subprocess.Popen:
    return subprocess.Popen([WEBSHELF, "runtime", "run", runtime, "--", *argv],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(find, proc: subprocess.Popen):
    """Poll until ``find()`` returns something (the sandbox exists); fail if the command ended first."""
    deadline = time.monotonic() + APPEAR_S
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        if proc.poll() is not None:
            pytest.fail(f"webshelf ended before its sandbox appeared: {proc.communicate()}")
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"no sandbox appeared: {proc.communicate()}")


def _containers(client, pid: int | None = None, home: Path | None = None) -> list[dict]:
    """Containers by owner pid and/or home, as the API lists them (``Id``, ``State``, ``Labels``)."""
    labels = [f"{PID}={pid}"] if pid else [PID]
    labels += [f"{HOME}={home}"] if home else []
    return client.api.containers(all=True, filters={"label": labels})


def _scratch(tmpdir: Path, pid: int) -> list[Path]:
    return sorted(tmpdir.glob(f"{PREFIX}{pid}-*"))


# signals ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_removes_the_docker_container(sig, docker_home, docker_client):
    proc = _start("docker", "sleep", "60")
    [box] = _wait_for(lambda: [c for c in _containers(docker_client, proc.pid) if c["State"] == "running"], proc)
    assert box["Labels"][HOME] == str(docker_home) and box["Labels"]["io.webshelf.owner.host"] == socket.gethostname()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=APPEAR_S)
    assert proc.returncode == 128 + sig
    assert err.decode() == f"error[stopped]: {sig.name} received; the sandbox was stopped and removed\n"
    assert _containers(docker_client, proc.pid) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_removes_the_local_scratch_dir(sig, bwrap_ready, home, tmpdir_):
    proc = _start("local", "sh", "-c", "echo x > /tmp/left; sleep 60")
    [scratch] = _wait_for(lambda: [d for d in _scratch(tmpdir_, proc.pid) if (d / "left").exists()], proc)
    proc.send_signal(sig)
    proc.communicate(timeout=APPEAR_S)
    assert proc.returncode == 128 + sig
    assert not scratch.exists() and list(tmpdir_.iterdir()) == []


# orphans ---------------------------------------------------------------------------------------
def _killed_owner(start, find):
    """Start an owner, wait for its sandbox, SIGKILL it (nothing runs on SIGKILL): the orphan."""
    proc = start()
    found = _wait_for(lambda: find(proc.pid), proc)
    proc.kill()
    proc.communicate()
    return proc.pid, found


def test_runtime_prune_lists_then_removes_an_orphaned_container(docker_home, docker_client, tmpdir_):
    pid, [box] = _killed_owner(lambda: _start("docker", "sleep", "60"), lambda p: _containers(docker_client, p))
    line = (f"docker container {box['Id'][:12]} (owner pid {pid} on {socket.gethostname()} is gone, "
            f"runtime docker, home {docker_home})\n")
    dry = CliRunner().invoke(main, ["runtime", "prune", "--dry-run"])
    assert (dry.exit_code, dry.stdout, dry.stderr) == (0, f"would remove {line}1 orphan found (dry run: nothing removed)\n", "")
    assert len(_containers(docker_client, pid)) == 1
    done = CliRunner().invoke(main, ["runtime", "prune"])
    assert (done.exit_code, done.stdout, done.stderr) == (0, f"removed {line}1 orphan removed\n", "")
    assert _containers(docker_client, pid) == []
    again = CliRunner().invoke(main, ["runtime", "prune"])
    assert (again.exit_code, again.stdout) == (0, "no orphans\n")


def test_runtime_prune_removes_an_orphaned_scratch_dir(bwrap_ready, home, tmpdir_):
    pid, [scratch] = _killed_owner(lambda: _start("local", "sleep", "60"), lambda p: _scratch(tmpdir_, p))
    assert scratch.exists()
    (scratch / "locked").mkdir()
    (scratch / "locked" / "f").write_text("x")
    os.chmod(scratch / "locked", 0)  # what an agent may leave behind
    done = CliRunner().invoke(main, ["runtime", "prune"])
    lines = done.stdout.splitlines()
    assert done.exit_code == 0 and lines[-1] == "1 orphan removed"
    assert f"removed local temp dir {scratch} (owner pid {pid} on {socket.gethostname()} is gone)" in lines
    assert not scratch.exists()


def test_the_next_docker_start_removes_orphans_of_its_home(docker_home, docker_client, config, docker_image):
    pid, _ = _killed_owner(lambda: _start("docker", "sleep", "60"), lambda p: _containers(docker_client, p))
    config.runtimes.docker.image = docker_image
    with open_runtime("docker", config) as rt:
        assert _containers(docker_client, pid) == []
        assert [c["Id"] for c in _containers(docker_client, home=docker_home)] == [rt.container.id]
        assert rt.container.labels[PID] == str(os.getpid())


def test_a_container_of_a_live_owner_or_another_home_is_kept(docker_home, docker_client, config, docker_image, tmp_path):
    """Only orphans of this home go: a running owner's container and another home's orphan stay."""
    other = tmp_path / "other-home"
    (other / "cache" / "web").mkdir(parents=True)
    labels = {HOME: str(other), PID: "999999999", "io.webshelf.owner.start": "1",
              "io.webshelf.owner.boot": "", "io.webshelf.owner.host": socket.gethostname()}
    foreign = docker_client.containers.create(docker_image, ["sleep", "60"], labels=labels, network_mode="none")
    try:
        config.runtimes.docker.image = docker_image
        with open_runtime("docker", config) as first, open_runtime("docker", config) as second:
            assert {c["Id"] for c in _containers(docker_client, home=docker_home)} == {first.container.id,
                                                                                      second.container.id}
        foreign.reload()  # still there (raises NotFound otherwise)
    finally:
        foreign.remove(force=True)


def test_the_next_local_start_removes_orphaned_scratch_dirs(bwrap_ready, home, config, tmpdir_):
    pid, [scratch] = _killed_owner(lambda: _start("local", "sleep", "60"), lambda p: _scratch(tmpdir_, p))
    legacy = tmpdir_ / f"{PREFIX}abc123_x"  # an older layout: nobody can tell its owner, so it stays
    legacy.mkdir()
    with open_runtime("local", config) as rt:
        assert not scratch.exists() and legacy.exists()
        assert _scratch(tmpdir_, os.getpid()) == [Path(rt._scratch)]
    assert _scratch(tmpdir_, os.getpid()) == []


# standard input and exit codes -------------------------------------------------------------------
def test_stdin_reaches_the_command_under_local(bwrap_ready, home):
    result = CliRunner().invoke(main, ["runtime", "run", "local", "--", "cat"], input=b"hi\nthere\n")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "hi\nthere\n", "")


def test_stdin_reaches_the_command_under_docker(docker_home):
    result = CliRunner().invoke(main, ["runtime", "run", "docker", "--", "sh", "-c", "wc -l; cat"],
                                input=b"a\nb\n")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "2\n", "")


def test_no_stdin_gives_the_command_an_empty_input(bwrap_ready, home):
    result = CliRunner().invoke(main, ["runtime", "run", "local", "--no-stdin", "--", "cat"], input=b"hi\n")
    assert (result.exit_code, result.stdout) == (0, "")


def test_a_terminal_on_stdin_is_not_waited_for(bwrap_ready, home):
    """With a terminal as stdin, ``cat`` inside sees end-of-input at once instead of blocking."""
    primary, secondary = os.openpty()
    try:
        done = subprocess.run([WEBSHELF, "runtime", "run", "local", "--", "cat"], stdin=secondary,
                              capture_output=True, timeout=APPEAR_S)
    finally:
        os.close(primary)
        os.close(secondary)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_stdin_reaches_the_command_over_ssh(sshd, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"loop": {"type": "ssh", **sshd.host_config()}}}))
    result = CliRunner().invoke(main, ["runtime", "run", "loop", "--", "cat"], input=b"over ssh\n")
    assert (result.exit_code, result.stdout) == (0, "over ssh\n"), result.stderr


def _runtime_home(runtime: str, request, home: Path) -> None:
    """Make ``runtime`` usable from a ``webshelf`` subprocess with this test's home (or skip)."""
    if runtime == "local":
        request.getfixturevalue("bwrap_ready")
    elif runtime == "docker":
        request.getfixturevalue("docker_home")
    else:
        sshd = request.getfixturevalue("sshd")
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"ssh": {"type": "ssh", **sshd.host_config()}}}))


@pytest.mark.parametrize("runtime", ["local", "docker", "ssh"])
def test_stdin_is_streamed_so_an_endless_input_ends_with_the_command(runtime, request, home):
    """``yes | webshelf runtime run NAME -- head -1``: head exits after one line, and so does
    webshelf (stdin used to be read to EOF first, which never comes from ``yes``)."""
    _runtime_home(runtime, request, home)
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = subprocess.run([WEBSHELF, "runtime", "run", runtime, "--", "head", "-1"], stdin=yes.stdout,
                              capture_output=True, timeout=APPEAR_S, env={**os.environ, "WEBSHELF_HOME": str(home)})
    finally:
        yes.kill()
        yes.wait()
    assert (done.returncode, done.stdout) == (0, b"y\n"), done.stderr


def pipe_through(argv: list[str], size: int, env: dict[str, str] | None = None) -> tuple[bytes, int, int]:
    """Feed ``size`` bytes to ``argv``'s stdin through a pipe, in 64 KiB writes; (its stdout, its
    exit code, the peak RSS in MB of it and what it waited for, from ``wait4`` — so this
    process's other children do not count). bench/stdin_stream.py measures with it too."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def feed() -> None:
        chunk, left = b"x" * (1 << 16), size
        try:
            while left > 0:
                proc.stdin.write(chunk[:left])
                left -= len(chunk)
        except BrokenPipeError:
            pass
        proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return out, proc.returncode, usage.ru_maxrss // 1024


def _peak_rss_mb(runtime: str, home: Path, size: int) -> tuple[bytes, int]:
    out, code, peak = pipe_through([WEBSHELF, "runtime", "run", runtime, "--", "wc", "-c"], size,
                                   env={**os.environ, "WEBSHELF_HOME": str(home)})
    assert code == 0
    return out, peak


@pytest.mark.parametrize("runtime", ["local", "docker"])
def test_a_large_stdin_streams_without_being_held_in_memory(runtime, request, home):
    """50 MB through ``wc -c``: every byte arrives, and webshelf's peak RSS grows by far less than
    the input over the same command with an empty input (measured here, in this run; buffering
    the input, as before, added it whole: +50 MB local, +51 MB docker)."""
    _runtime_home(runtime, request, home)
    size = 50 * 1024 * 1024
    empty, baseline = _peak_rss_mb(runtime, home, 0)
    out, peak = _peak_rss_mb(runtime, home, size)
    assert (empty, out) == (b"0\n", f"{size}\n".encode())
    assert peak - baseline < 20, f"peak RSS {peak} MB with 50 MB of input vs {baseline} MB without"


@pytest.mark.parametrize("runtime", ["local", "docker"])
def test_no_stdin_never_reads_the_input(runtime, request, home):
    _runtime_home(runtime, request, home)
    done = subprocess.run([WEBSHELF, "runtime", "run", runtime, "--no-stdin", "--", "cat"], input=b"not read\n",
                          capture_output=True, timeout=APPEAR_S, env={**os.environ, "WEBSHELF_HOME": str(home)})
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


@pytest.mark.parametrize("runtime", ["local", "docker"])
def test_exit_codes_are_the_documented_ones(runtime, request, home, tmp_path):
    if runtime == "local":
        request.getfixturevalue("bwrap_ready")
    else:
        request.getfixturevalue("docker_home")
    run = lambda *argv: CliRunner().invoke(main, ["runtime", "run", runtime, *argv])  # noqa: E731
    assert run("--", "sh", "-c", "exit 3").exit_code == 3
    missing = run("--", "no-such-command")
    assert missing.exit_code == 127 and missing.stdout == "" and "no-such-command" in missing.stderr
    timed_out = run("--timeout", "0.5", "--", "sleep", "30")
    assert timed_out.exit_code == 124 and timed_out.stderr.startswith("error[runtime_timeout]: ")


def test_a_sandbox_that_cannot_start_exits_125(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"runtimes": {"docker": {"type": "docker", "image": "webshelf-no-such:never"}}}))
    result = CliRunner().invoke(main, ["runtime", "run", "docker", "--", "true"])
    assert result.exit_code == 125 and result.stderr.startswith("error[runtime_unavailable]: ")
