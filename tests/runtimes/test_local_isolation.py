"""Issue 12, item 1: the bubblewrap sandbox is unprivileged and shows only a minimal system plus cache/web.

Real bwrap, and as root when the suite runs as root (CI does): that is where the old sandbox
kept CAP_SYS_ADMIN and an agent could remount the cache read-write.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from webshelf.cache.shelf import Shelf
from webshelf.core.config import Config
from webshelf.errors import MountError
from webshelf.core.sandbox import open_runtime
from webshelf.runtimes.local.runtime import LocalRuntime
from webshelf.runtimes.local.view import SYSTEM_BINDS, etc_hidden


def sh(rt, script: str, *args: str):
    return rt.exec(["sh", "-c", script, "sh", *map(str, args)], timeout=30)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def stored(config: Config) -> Path:
    """A page stored the normal way (so the index exists on the host), plus a config.yaml."""
    (config.home / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (config.home / "config.yaml").write_text("web:\n  firecrawl:\n    api_key: fc-secret-key\n")
    with Shelf(config.home) as shelf:
        return Path(shelf.put(url="http://example.test/p", final_url=None, title=None, text="# Stored\nline\n",
                              backend="test", content_type="text/markdown").path)


@pytest.fixture
def local(bwrap_ready, config: Config, stored):
    with open_runtime("local", config) as rt:
        yield rt


def test_commands_run_unprivileged_with_no_capabilities(local):
    done = sh(local, "id -u; id -g; grep '^Cap' /proc/self/status")
    lines = done.text().split("\n")
    assert done.ok and lines[:2] == ["65534", "65534"]
    assert {line.split()[0]: line.split()[1] for line in lines[2:] if line}["CapEff:"] == "0" * 16
    assert "--cap-drop" in local.command(["true"]) and "--unshare-user" in local.command(["true"])


def test_the_cache_cannot_be_remounted_or_rewritten_even_as_root(local, stored):
    web, before = stored.parent, digest(stored)
    attempts = {
        "remount": 'mount -o remount,rw,bind "$2" && echo x > "$1"',
        "mount over": 'mount -t tmpfs none "$2"',
        "unshare": 'unshare -m true',
        "nested user namespace": 'unshare -r -m sh -c \'mount -o remount,rw,bind "$2" && echo x > "$1"\' sh "$1" "$2"',
        "chmod of the mount point": 'chmod 0777 "$2"',
        "write": 'echo x > "$1"',
    }
    for what, script in attempts.items():
        assert sh(local, script, stored, web).exit_code != 0, f"{what} succeeded inside the sandbox"
    assert digest(stored) == before and stat.S_IMODE(os.stat(web).st_mode) == 0o755


def test_host_secrets_are_not_reachable(local, config: Config, stored):
    home = config.home
    index = home / "cache" / "index.sqlite"
    assert index.is_file() and (home / "config.yaml").is_file()  # they exist on the host
    for path in [index, home / "config.yaml", "/etc/shadow", "/etc/gshadow", "/etc/ssh/sshd_config",
                 Path.home() / ".ssh", "/root/.ssh", "/var/run/docker.sock", "/run/docker.sock"]:
        done = sh(local, 'cat "$1" 2>/dev/null; [ -r "$1" ] && [ -s "$1" ]', path)  # empty or unreadable
        assert done.exit_code != 0 and done.stdout == b"", f"{path} is readable inside"
    assert sh(local, 'ls -A "$1"', home).text().split() == ["cache"]
    assert sh(local, 'ls -A "$1"', home / "cache").text().split() == ["web"]
    assert sh(local, "ls -A /root /home /run").text().split() == ["/home:", "/root:", "/run:"]
    assert sh(local, 'cat "$1"', stored).text() == "# Stored\nline\n"  # the page itself still is


def test_no_host_unix_socket_answers(local, tmp_path_factory):
    """Read-only mounts do not stop connect(): the sockets must not be in the sandbox at all."""
    probe = ("import socket, sys\n"
             "for p in sys.argv[1:]:\n"
             "    s = socket.socket(socket.AF_UNIX)\n"
             "    try: s.connect(p); print('connected', p)\n"
             "    except OSError: pass\n")
    sockets = ["/var/run/docker.sock", "/run/docker.sock"] + [str(p) for p in Path("/run").glob("*.sock")]
    done = local.exec(["python3", "-c", probe, *sockets], timeout=30)
    assert done.ok and done.stdout == b"", done.stdout


def test_the_home_stays_hidden_when_a_bind_covers_it(bwrap_ready, config: Config, stored, tmp_path):
    (tmp_path / "project.txt").write_text("shared on purpose\n")
    config.runtimes.local.binds = [*SYSTEM_BINDS, str(tmp_path)]  # the home is tmp_path/home
    with open_runtime("local", config) as rt:
        assert sh(rt, 'cat "$1"', tmp_path / "project.txt").text() == "shared on purpose\n"
        assert sh(rt, 'ls -A "$1"', config.home).text().split() == ["cache"]
        assert sh(rt, 'test -e "$1"', config.home / "config.yaml").exit_code != 0
        assert sh(rt, 'echo x > "$1"', tmp_path / "project.txt").exit_code != 0
        assert rt.verify().ok
    assert (tmp_path / "project.txt").read_text() == "shared on purpose\n"


def test_default_view_verifies_with_no_warnings(local):
    report = local.verify()
    names = [name for name, _, _ in report.checks]
    assert report.ok and {"mount locked", "no capabilities", "host hidden"} <= set(names)
    assert report.warnings == []


def test_binds_slash_is_an_explicit_choice_that_verify_warns_about(bwrap_ready, config: Config, stored):
    config.runtimes.local.binds = ["/"]
    with open_runtime("local", config) as rt:
        report = rt.verify()
        assert sh(rt, 'ls -A "$1"', config.home).text().split() == ["cache"]  # the home stays hidden even so
    assert report.ok  # privileges are still dropped: the mount checks pass
    assert any("binds includes '/'" in w for w in report.warnings), report.warnings
    assert any("reachable inside" in w for w in report.warnings), report.warnings


class PrivilegedLocal(LocalRuntime):
    """The sandbox as it was before issue 12: no user namespace, capabilities kept (as root)."""

    def command(self, argv):
        cmd, out, skip = super().command(argv), [], 0
        for arg in cmd:
            if skip:
                skip -= 1
            elif arg in ("--uid", "--gid", "--cap-drop"):
                skip = 1
            elif arg not in ("--unshare-user", "--disable-userns"):
                out.append(arg)
        return out


@pytest.mark.skipif(os.geteuid() != 0, reason="only root keeps capabilities in a sandbox without a user namespace")
def test_verify_fails_loudly_when_the_sandbox_keeps_root_privileges(bwrap_ready, config: Config, stored):
    with PrivilegedLocal(config.runtimes.local, __import__("mounts.spec").spec.cache_mount(config.home)) as rt:
        with pytest.raises(MountError) as err:
            rt.verify()
    message = str(err.value)
    assert "mount locked" in message and "remount-rw" in message and "no capabilities" in message
    assert "--cap-drop ALL" in message
    assert sorted(os.listdir(stored.parent)) == [stored.name]  # the probes left nothing behind


def test_secrets_in_etc_are_found_by_name_and_by_permission(tmp_path):
    etc = tmp_path / "etc"
    (etc / "ssh").mkdir(parents=True)
    (etc / "ssh" / "ssh_config").write_text("public\n")
    (etc / "shadow").write_text("root:x\n")
    (etc / "private").mkdir(mode=0o700)
    (etc / "private" / "inner").write_text("x\n")
    (etc / "app.key").write_text("k\n")
    os.chmod(etc / "app.key", 0o600)
    (etc / "hostname").write_text("box\n")
    hidden = dict(etc_hidden(str(etc)))
    assert hidden == {str(etc / "ssh"): True, str(etc / "shadow"): False, str(etc / "private"): True,
                      str(etc / "app.key"): False}
