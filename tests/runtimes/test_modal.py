"""The Modal runtime beyond the shared suite: one upload and N reloads for a fleet, reloads
refused while files are open, attach by id, credentials, config errors, the CLI — all through
the seam, against the fake service (``fake_modal.py``; commands really run under bwrap)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.core.config import Config, ModalRuntimeConfig
from webshelf.errors import ConfigError, MountError, RuntimeExecError, RuntimeUnavailableError
from webshelf.core.sandbox import open_runtime
from webshelf.mounts.publish import publish_all, retract_all
from webshelf.mounts.spec import MountSpec, cache_mount
from webshelf.runtimes.modal.runtime import ModalRuntime
from tests.runtimes.fake_modal import FakeModal, fake_runtime


@pytest.fixture
def modal_config(config: Config) -> Config:
    config.runtimes.modal = ModalRuntimeConfig(reload_retry_s=5)  # an instance named modal, of type modal
    return config


@pytest.fixture
def modal_home(home):
    """A home whose config.yaml has a runtime instance ``modal`` of type modal (none exists by default)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("runtimes:\n  modal:\n    type: modal\n")
    return home


def make(fake: FakeModal, config: Config, **settings) -> ModalRuntime:
    base = config.runtimes.instances().get("modal", ModalRuntimeConfig())
    s = ModalRuntimeConfig.model_validate({**base.model_dump(), **settings})
    return fake_runtime(fake, s, cache_mount(config.home))


def page(config: Config, name: str, text: str = "# p\nbody\n") -> str:
    path = cache_mount(config.home).path / name
    path.write_text(text)
    return str(path)


def cat(rt: ModalRuntime, path: str) -> tuple[int, bytes]:
    done = rt.exec(["cat", path], timeout=30)
    return done.exit_code, done.stdout


def test_fleet_publish_is_one_upload_and_one_reload_per_sandbox(bwrap_ready, fake_modal, modal_config):
    fleet = [make(fake_modal, modal_config) for _ in range(5)]
    for rt in fleet:
        rt.start()
    try:
        p = page(modal_config, "fleet.md", "# fleet\nshared\n")
        assert all(cat(rt, p)[0] != 0 for rt in fleet)         # not there before publishing
        assert publish_all(fleet, [p], timeout=30) == []
        assert fake_modal.uploads == 1
        assert [fake_modal.sandboxes[rt.sandbox_id].reloads for rt in fleet] == [1] * 5
        assert all(cat(rt, p) == (0, b"# fleet\nshared\n") for rt in fleet)
        # publishing through one runtime makes every live sandbox of the process see the page
        q = page(modal_config, "one.md", "# one\n")
        fleet[2].publish([q])
        assert fake_modal.uploads == 2 and all(cat(rt, q) == (0, b"# one\n") for rt in fleet)
        # publishing what the Volume already has uploads nothing and reloads nothing
        assert publish_all(fleet, [p, q], timeout=30) == [] and fake_modal.uploads == 2
        assert [fake_modal.sandboxes[rt.sandbox_id].reloads for rt in fleet] == [2] * 5
        # retract: gone from every sandbox
        Path(p).unlink()
        assert retract_all(fleet, [p], timeout=30) == []
        assert all(cat(rt, p)[0] != 0 for rt in fleet) and "fleet.md" not in fake_modal.volumes["webshelf-cache"].files
    finally:
        for rt in fleet:
            rt.stop()
    assert all(fake_modal.sandboxes[rt.sandbox_id].finished for rt in fleet)


def test_a_new_sandbox_sees_pages_stored_before_it_started(bwrap_ready, fake_modal, modal_config):
    old = page(modal_config, "old.md", "# old\n")
    with make(fake_modal, modal_config) as rt:
        assert cat(rt, old) == (0, b"# old\n")          # synced to the Volume when the process first used it
    with make(fake_modal, modal_config) as rt:
        assert cat(rt, old) == (0, b"# old\n") and fake_modal.uploads == 1  # already there: not sent again


def test_pages_evicted_while_no_sandbox_was_attached_leave_the_volume(bwrap_ready, fake_modal, modal_config):
    gone = page(modal_config, "gone.md", "# evicted later\n")
    with make(fake_modal, modal_config) as rt:
        assert cat(rt, gone) == (0, b"# evicted later\n")
    os.unlink(gone)  # evicted by another process (cache prune) while no Modal runtime was attached
    with make(fake_modal, modal_config) as rt:
        assert cat(rt, gone)[0] != 0                      # the Volume matches the host again


def _hold_open(rt: ModalRuntime, path: str, seconds: float) -> threading.Thread:
    holder = threading.Thread(target=rt.exec, args=(["sh", "-c", f'exec 3<"$1"; sleep {seconds}', "sh", path],),
                              kwargs={"timeout": 30})
    holder.start()
    view = FakeModal.open_inodes
    sb = rt._seam.service.sandboxes[rt.sandbox_id]
    deadline = time.monotonic() + 10
    while not view(sb.view):
        assert time.monotonic() < deadline, "the holder never opened the file"
        time.sleep(0.02)
    return holder


def test_reload_refused_while_a_file_is_open_is_retried(bwrap_ready, fake_modal, modal_config):
    with make(fake_modal, modal_config) as rt:
        first = page(modal_config, "first.md", "# first\n")
        rt.publish([first])
        holder = _hold_open(rt, first, 1.0)
        second = page(modal_config, "second.md", "# second\n")
        rt.publish([second])                      # refused at least once, retried until the file closed
        holder.join()
        sb = fake_modal.sandboxes[rt.sandbox_id]
        assert sb.refused >= 1 and cat(rt, second) == (0, b"# second\n")


def test_reload_still_refused_after_the_retry_window_is_reported(bwrap_ready, fake_modal, modal_config):
    with make(fake_modal, modal_config, reload_retry_s=0.3) as rt:
        first = page(modal_config, "first.md")
        rt.publish([first])
        holder = _hold_open(rt, first, 3.0)
        second = page(modal_config, "second.md")
        [problem] = publish_all([rt], [second], timeout=30)
        holder.join()
        assert rt.sandbox_id in problem.detail and "files of the Volume are open" in problem.detail
        assert "runtimes.modal.reload_retry_s" in problem.detail
        rt.publish([second])                       # the next publish reloads the sandbox that fell behind
        assert cat(rt, second)[0] == 0


def test_attach_by_id_and_never_terminate_what_we_attached_to(bwrap_ready, fake_modal, modal_config):
    with make(fake_modal, modal_config) as owner:
        with make(fake_modal, modal_config, sandbox_id=owner.sandbox_id) as guest:
            assert guest.sandbox_id == owner.sandbox_id and guest.attached
            p = page(modal_config, "attached.md", "# a\n")
            guest.publish([p])
            assert cat(owner, p) == (0, b"# a\n")
        assert owner.is_alive()                    # the guest's stop left the sandbox running
    with pytest.raises(RuntimeUnavailableError) as err:
        make(fake_modal, modal_config, sandbox_id="sb-nope").start()
    assert "sb-nope" in str(err.value) and "not found on Modal" in str(err.value)
    with pytest.raises(RuntimeExecError) as err:
        make(fake_modal, modal_config, sandbox_id=owner.sandbox_id).start()
    assert "has finished" in str(err.value)


def test_a_finished_sandbox_is_reported_and_dropped_from_the_fleet(bwrap_ready, fake_modal, modal_config):
    with make(fake_modal, modal_config) as a, make(fake_modal, modal_config) as b:
        fake_modal.sandboxes[b.sandbox_id].finished = True   # Modal ended it (runtimes.modal.timeout)
        p = page(modal_config, "after.md")
        a.publish([p])                                       # b is no longer live: not a failure for a
        assert b.sandbox_id not in {sid for _, sid in a.fleet.members.values()}
        assert not b.is_alive()
        with pytest.raises(RuntimeExecError) as err:
            b.publish([p])
        assert "has finished" in str(err.value)


def test_missing_credentials_say_how_to_authenticate(fake_modal, modal_config):
    fake_modal.authenticated = False
    with pytest.raises(RuntimeUnavailableError) as err:
        make(fake_modal, modal_config).start()
    assert "modal token new" in str(err.value) and "MODAL_TOKEN_ID" in str(err.value)


def test_forbidden_mount_paths_are_config_errors(modal_config):
    for path in ("/tmp", "/root"):
        with pytest.raises(ConfigError) as err:
            ModalRuntime(modal_config.runtimes.modal, MountSpec(Path(path)), name="modal")
        assert f"cannot mount a Volume at {path}" in str(err.value) and "WEBSHELF_HOME" in str(err.value)


def test_one_volume_serves_one_home(bwrap_ready, fake_modal, modal_config, tmp_path):
    other = Config().with_home(tmp_path / "other-home")
    with make(fake_modal, modal_config):
        with pytest.raises(ConfigError) as err:
            make(fake_modal, other).start()
    assert "runtimes.modal.volume" in str(err.value)
    with make(fake_modal, other, volume="other-volume") as rt:     # a volume of its own works
        assert rt.is_alive()


def test_publish_checks_host_files_and_started_state(bwrap_ready, fake_modal, modal_config):
    rt = make(fake_modal, modal_config)
    p = page(modal_config, "x.md")
    with pytest.raises(RuntimeExecError):
        rt.publish([p])
    with rt:
        with pytest.raises(MountError) as err:
            rt.publish([str(Path(p).with_name("missing.md"))])
        assert "does not exist on the host" in str(err.value)


def test_settings_reach_the_sandbox(bwrap_ready, fake_modal, modal_config):
    with make(fake_modal, modal_config, env={"GREETING": "hej"}, workdir="/usr", cpu=2.0, memory=2048,
              region=["us-east", "eu-west"], secrets=["api-keys"], image={"base": "python:3.12-slim", "apt": ["gawk"]},
              options={"block_network": True}) as rt:
        assert rt.exec(["sh", "-c", 'echo "$GREETING $(pwd)"'], timeout=30).stdout == b"hej /usr\n"
        request = fake_modal.sandboxes[rt.sandbox_id].request
    assert (request.cpu, request.memory, request.region, request.secrets) == (2.0, 2048, ("us-east", "eu-west"), ("api-keys",))
    assert (request.image.base, request.image.apt, request.options) == ("python:3.12-slim", ("gawk",), {"block_network": True})
    assert request.mount_path == str(cache_mount(modal_config.home).path) and request.timeout == 3600


def test_cli_runtime_check_modal(bwrap_ready, fake_modal, modal_home, monkeypatch):
    home = modal_home
    monkeypatch.setattr(ModalRuntime, "seam_factory", staticmethod(fake_modal.seam))
    result = CliRunner().invoke(main, ["runtime", "check", "modal"])
    web = home / "cache" / "web"
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"runtime: modal\nmount: {web} (read-only, same path)\n"
        f"ok   same path: {web} exists inside\n"
        "ok   live and readable: a sentinel written on the host just now reads back inside\n"
        "ok   read-only: create, write, append, chmod, mkdir, symlink, rename and delete all fail\n"
        "ok   mount locked: remount read-write, mount over it, unshare and chmod of the mount point all fail\n"
        "ok   no capabilities: CapEff is 0\n"
        "ok   host hidden: the index, config.yaml, ~/.ssh, the home directory and the Docker socket are unreachable; "
        "only cache/web of the home is there\n"
        "ok   sandbox works: an ordinary command runs\nresult: ok\n")
    assert all(sb.finished for sb in fake_modal.sandboxes.values())
    assert not fake_modal.volumes["webshelf-cache"].files          # the sentinel was retracted


def test_cli_runtime_check_without_credentials(fake_modal, modal_home, monkeypatch):
    fake_modal.authenticated = False
    monkeypatch.setattr(ModalRuntime, "seam_factory", staticmethod(fake_modal.seam))
    result = CliRunner().invoke(main, ["runtime", "check", "modal"])
    assert result.exit_code == 1 and "modal token new" in result.stderr


def test_open_runtime_builds_the_modal_adapter(modal_config):
    rt = open_runtime("modal", modal_config)
    assert isinstance(rt, ModalRuntime) and rt.mount.path == cache_mount(modal_config.home).path and not rt.is_alive()


def test_readme_documents_every_modal_key_with_its_default():
    from webshelf.core.config import ModalRuntimeConfig, parse_config
    from tests.core.test_runtimes_config import README, readme_yaml

    data = readme_yaml()["runtimes"]["modal"]
    assert set(data) == set(ModalRuntimeConfig.model_fields)
    assert parse_config({"runtimes": {"modal": data}}, README).runtimes.modal == ModalRuntimeConfig()
    assert data["type"] == "modal"


@pytest.mark.parametrize("data, named", [
    ({"volme": "x"}, "runtimes.modal.volme: unknown key"),
    ({"timeout": 5}, "runtimes.modal.timeout: 5 is out of range; allowed: ≥ 10"),
    ({"memory": 64}, "runtimes.modal.memory: 64 is out of range; allowed: ≥ 128"),
    ({"workdir": "tmp"}, "workdir 'tmp' must be an absolute path"),
    ({"volume": "a/b"}, "runtimes.modal.volume"),
    ({"image": {"base": "x", "aptt": []}}, "unknown key"),
])
def test_bad_modal_keys_are_named(data, named):
    from webshelf.core.config import parse_config

    with pytest.raises(ConfigError) as err:
        parse_config({"runtimes": {"modal": {"type": "modal", **data}}}, Path("/etc/webshelf.yaml"))
    assert named in str(err.value)


def test_cli_extract_runtime_modal_needs_a_running_sandbox(modal_home):
    result = CliRunner().invoke(main, ["extract", "--runtime", "modal", "http://127.0.0.1:1/x.md"])
    assert result.exit_code == 2 and "runtimes.modal.sandbox_id" in result.stderr


def test_commands_run_unprivileged_and_root_fails_verify(bwrap_ready, fake_modal, modal_config):
    """Modal runs commands as root with capabilities, which could remount the read-only Volume
    (issue 12); runtimes.modal.user (default 65534:65534) drops them, and user: null fails verify."""
    with make(fake_modal, modal_config) as rt:
        done = rt.exec(["sh", "-c", "id -u; grep '^CapEff:' /proc/self/status"], timeout=30)
        assert done.text().split() == ["65534", "CapEff:", "0" * 16]
        assert rt.verify().ok
    with make(fake_modal, modal_config, user=None) as rt:
        with pytest.raises(MountError) as err:
            rt.verify()
    message = str(err.value)
    assert "no capabilities" in message and "mount locked" in message and "runtimes.modal.user" in message
