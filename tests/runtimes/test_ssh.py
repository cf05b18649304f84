"""The SSH runtime beyond the shared suite: host keys, modes, transfer fall-back, remote errors."""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import warnings
from pathlib import Path

import pytest

from webshelf.core.config import Config, SshRuntimeConfig
from webshelf.errors import ConfigError, MountError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError
from webshelf.core.sandbox import open_runtime
from tests.runtimes.conftest import ssh_config


def remote_ls(server, directory: Path) -> dict[str, tuple[str, int]]:
    """name → (octal mode, size) of everything in ``directory`` on the remote."""
    done = server.remote('cd -- "$1" && for f in * .[!.]*; do [ -e "$f" ] && stat -c "%n %a %s" -- "$f"; done; true',
                         str(directory))
    return {n: (m, int(s)) for n, m, s in (line.rsplit(" ", 2) for line in done.stdout.decode().splitlines())}


def page(directory: Path, name: str, size: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes((secrets.token_hex(size // 2 + 1)[:size - 1] + "\n").encode())
    return path


def test_unknown_host_key_is_refused_with_how_to_add_it(config: Config, sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    name = ssh_config(config, sshd, known_hosts=str(empty))
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime(name, config).start()
    message = str(err.value)
    assert f"127.0.0.1:{sshd.port}" in message and "is not in" in message and "ssh-keyscan -p" in message


def test_insecure_accept_connects_and_warns(config: Config, sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    name = ssh_config(config, sshd, known_hosts=str(empty), insecure_accept_unknown_host_key=True)
    with warnings.catch_warnings(record=True) as caught, open_runtime(name, config) as rt:
        warnings.simplefilter("always")
        assert rt.exec(["echo", "hi"], timeout=30).stdout == b"hi\n"
    assert any("UNVERIFIED host key" in str(w.message) for w in caught)


def test_host_key_mismatch_is_refused(config: Config, sshd, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, key = (other.with_suffix(".pub")).read_text().split()[:2]
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {kind} {key}\n")
    name = ssh_config(config, sshd, known_hosts=str(wrong))
    with pytest.raises(RuntimeUnavailableError) as err:
        open_runtime(name, config).start()
    assert "HOST KEY MISMATCH" in str(err.value) and "ssh-keygen -R" in str(err.value)


def test_an_ssh_host_is_an_instance_opened_by_its_name(config: Config):
    """Issue 13: no ``ssh:<name>`` special case — a host is ``runtimes.<name>`` with type ssh."""
    config.runtimes.a = SshRuntimeConfig(host="127.0.0.1")
    config.runtimes.b = SshRuntimeConfig(host="127.0.0.2", port=2222)
    rt = open_runtime("b", config)
    assert (rt.name, rt.host.host, rt.host.port, rt.kind) == ("b", "127.0.0.2", 2222, "ssh")
    with pytest.raises(ConfigError) as err:
        open_runtime("ssh:a", config)
    assert str(err.value) == ("unknown runtime 'ssh:a': runtime names no longer carry their type; configure "
                              "runtimes.a with type: ssh and use --runtime a; configured runtimes: local (local), "
                              "docker (docker), a (ssh), b (ssh)")
    with pytest.raises(ConfigError) as err:
        open_runtime("c", config)
    assert str(err.value) == ("unknown runtime 'c'; configured runtimes: local (local), docker (docker), a (ssh), "
                              "b (ssh); add it under runtimes: with a type (docker, local, modal, ssh)")


def test_verify_says_which_mode_is_in_force(config: Config, sshd, sshd_perms, agent_user):
    with open_runtime(ssh_config(config, sshd, readonly="bind", agent_user=agent_user), config) as rt:
        lines = rt.verify().lines()
    assert any(line.startswith("mode: readonly: bind") and "bind-mounted read-only" in line for line in lines)
    with open_runtime(ssh_config(config, sshd_perms, readonly="perms", agent_user=agent_user), config) as rt:
        lines = rt.verify().lines()
        mode = remote_ls(sshd_perms, rt.mount.path.parent)["web"][0]
    assert any(line.startswith("mode: readonly: perms") and f"run as {agent_user}" in line for line in lines)
    assert mode == "555"


def test_perms_mode_without_a_separate_agent_user_fails_verify_with_the_fix(config: Config, sshd_perms):
    with open_runtime(ssh_config(config, sshd_perms, readonly="perms"), config) as rt:
        with pytest.raises(MountError) as err:
            rt.verify()
    assert "set agent_user" in str(err.value)


def test_bind_mode_with_root_running_the_commands_fails_verify_with_the_fix(config: Config, sshd):
    """Root inside could remount the read-only mirror read-write (issue 12): verify proves it and says what to do."""
    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt:
        with pytest.raises(MountError) as err:
            rt.verify()
    message = str(err.value)
    assert "mount locked" in message and "remount-rw" in message and "no capabilities" in message
    assert "set agent_user" in message


def test_bind_mode_needs_root(config: Config, sshd, agent_user):
    with pytest.raises(RuntimeUnavailableError, match="sync user must be root"):
        open_runtime(ssh_config(config, sshd, readonly="bind", user=agent_user), config).start()


def test_sftp_fallback_lands_files_atomically_with_the_mode(config: Config, sshd, sshd_perms, agent_user):
    web = config.home / "cache" / "web"
    pages = [page(web, f"sftp-{i}.md", 5_000 + i) for i in range(3)]
    name = ssh_config(config, sshd_perms, readonly="perms", agent_user=agent_user, transfer="sftp")
    with open_runtime(name, config) as rt:
        assert rt.engine.transport.method == "sftp"
        listing = remote_ls(sshd_perms, web)
        assert {n: listing[n] for n in listing} == {p.name: ("444", p.stat().st_size) for p in pages}
        new = page(web, "sftp-new.md", 7_000)
        rt.publish([str(new)])
        assert rt.exec(["cat", str(new)], timeout=30).stdout == new.read_bytes()
        assert rt.exec(["sh", "-c", 'echo x >> "$1"', "sh", str(new)], timeout=30).exit_code != 0


def test_remote_disk_full_is_reported_and_leaves_no_partial_file(config: Config, tmp_path_factory):
    from tests.runtimes.conftest import need
    from tests.sshd import Sshd, sshd_missing

    need(sshd_missing() is None, "a real sshd", sshd_missing() or "")
    server = Sshd(Path("/tmp"), tmpfs_size="256k").start()
    try:
        web = config.home / "cache" / "web"
        with open_runtime(ssh_config(config, server, readonly="bind"), config) as rt:
            small = page(web, "small.md", 10_000)
            rt.publish([str(small)])
            big = page(web, "big.md", 2_000_000)
            with pytest.raises(RuntimeExecError) as err:
                rt.publish([str(big)])
            assert "the remote disk is full (no space left on device)" in str(err.value) and "big.md" in str(err.value)
            listing = remote_ls(server, web)
            assert listing == {"small.md": ("644", small.stat().st_size)}  # no temp file, no partial big.md
            assert rt.exec(["test", "-e", str(big)], timeout=30).exit_code != 0
    finally:
        server.stop()


def test_remote_permission_error_is_reported(config: Config, sshd_perms, agent_user):
    web = config.home / "cache" / "web"
    # the remote directory exists, owned by root 0555: the agent user cannot sync into it
    sshd_perms.remote('mkdir -p -- "$1" && chmod 0555 "$1"', str(web))
    page(web, "p.md", 100)
    with pytest.raises(RuntimeExecError) as err:
        open_runtime(ssh_config(config, sshd_perms, readonly="perms", user=agent_user), config).start()
    assert f"{agent_user}@127.0.0.1" in str(err.value) and "Operation not permitted" in str(err.value)


def test_sync_propagates_deletes_and_ignores_temp_files(config: Config, sshd):
    web = config.home / "cache" / "web"
    keep, doomed = page(web, "keep.md", 3_000), page(web, "doomed.md", 3_000)
    page(web, ".tmp-abc-writing.md", 100)
    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt:
        assert set(remote_ls(sshd, web)) == {"keep.md", "doomed.md"}
        os.unlink(doomed)
        report = rt.sync()
        assert (report.sent, report.deleted) == ([], ["doomed.md"])
        assert set(remote_ls(sshd, web)) == {keep.name}


def test_jump_host_tunnels_the_connection(config: Config, sshd):
    """The same sshd serves as bastion: the target connection runs through its direct-tcpip channel."""
    name = ssh_config(config, sshd, readonly="bind", jump={"host": "127.0.0.1", "port": sshd.port})
    with open_runtime(name, config) as rt:
        assert rt.conn._jump is not None and rt.exec(["echo", "via jump"], timeout=30).stdout == b"via jump\n"
        peer = rt.exec(["sh", "-c", 'echo "$SSH_CLIENT"'], timeout=30).text().split()
        assert peer[0] == "127.0.0.1" and int(peer[2]) == sshd.port


def test_exec_timeout_kills_the_remote_command_and_its_children(config: Config, sshd):
    """Without a pty, closing the channel would leave the command running on the remote."""
    marker = f"sleep {secrets.randbelow(10**6) + 10**6}"

    def running() -> list[str]:
        return [a for a in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if marker in a]  # the remote shares this host's pids (tests/sshd.py: a mount namespace only)

    with open_runtime(ssh_config(config, sshd, readonly="bind"), config) as rt:
        done = rt.exec(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=30)
        assert (done.exit_code, done.stdout, done.stderr) == (3, b"out\n", b"err\n")  # no pid line for the caller
        started = time.monotonic()
        with pytest.raises(RuntimeTimeoutError) as err:
            rt.exec(["sh", "-c", f"{marker} & {marker}; echo done"], timeout=1)
        assert time.monotonic() - started < 10
        assert "did not finish within 1 s and was killed (remote process group" in str(err.value)
        deadline = time.monotonic() + 5
        while running() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running() == []
        assert rt.exec(["echo", "still usable"], timeout=30).stdout == b"still usable\n"


def test_a_big_tar_batch_moves_into_place_within_arg_max(config: Config, monkeypatch):
    """3,000 names of 100 bytes overflow the 256 KiB ARG_MAX of a remote whose stack limit is
    1 MiB (as 100,000 shorter ones, which batch_files allows, overflow the usual 2 MiB): the move
    into place must neither pass every name to one `mv` nor build "$@" one name at a time
    (quadratic in sh)."""
    import tests.sshd
    from tests.runtimes.conftest import need
    from tests.sshd import Sshd, sshd_missing

    need(sshd_missing() is None, "a real sshd", sshd_missing() or "")
    server = Sshd(Path("/tmp"))
    small = server.dir / "sshd-small-stack"  # outside the remote's tmpfs, like the server's keys
    small.write_text(f'#!/bin/sh\nulimit -s 1024 || exit 1\nexec {tests.sshd.SSHD} "$@"\n')
    small.chmod(0o755)
    monkeypatch.setattr(tests.sshd, "SSHD", str(small))
    server.start()
    try:
        web = config.home / "cache" / "web"
        web.mkdir(parents=True, exist_ok=True)
        names = {f"docs.example.com-2453c76ad01e-{i:016x}-{'a-long-page-name-' * 3}.md" for i in range(3_000)}
        for name in names:
            (web / name).write_text(name + "\n")
        with open_runtime(ssh_config(config, server, readonly="bind", batch_files=100_000), config) as rt:
            assert rt.exec(["getconf", "ARG_MAX"], timeout=30).stdout == b"262144\n"
            assert len(rt.last_sync.sent) == 3_000
            done = server.remote('cd -- "$1" && ls -A && cat -- "$2"', str(web), min(names))
            listing = done.stdout.decode().splitlines()
            assert set(listing[:-1]) == names and listing[-1] == min(names)  # and no temp directory left
    finally:
        server.stop()
