"""Every runtime against the one suite; adding a runtime is one small class here."""

from __future__ import annotations

import pytest

from webshelf.core.sandbox import open_runtime
from tests.runtimes.conformance import RuntimeConformance
from tests.runtimes.conftest import ssh_config


class TestLocalBubblewrap(RuntimeConformance):
    @pytest.fixture
    def runtime_factory(self, bwrap_ready):
        return lambda config: open_runtime("local", config)


class TestDocker(RuntimeConformance):
    @pytest.fixture
    def runtime_factory(self, docker_image):
        def make(config):
            config.runtimes.docker.image = docker_image
            return open_runtime("docker", config)
        return make


class TestModalFake(RuntimeConformance):
    """The Modal adapter through its seam, against the fake service (tests/runtimes/fake_modal.py)."""

    @pytest.fixture
    def runtime_factory(self, bwrap_ready, fake_modal):
        from webshelf.mounts.spec import cache_mount
        from tests.runtimes.fake_modal import fake_runtime

        from webshelf.runtimes.modal.config import ModalRuntimeConfig

        return lambda config: fake_runtime(fake_modal, ModalRuntimeConfig(), cache_mount(config.home))


class TestSshBind(RuntimeConformance):
    """readonly: bind — root syncs into a staging dir bind-mounted read-only at the path; commands
    run as an unprivileged agent user (a root agent could remount the mirror: verify fails then)."""

    @pytest.fixture
    def runtime_factory(self, sshd, agent_user):
        return lambda config: open_runtime(ssh_config(config, sshd, readonly="bind", agent_user=agent_user), config)


class TestSshPerms(RuntimeConformance):
    """readonly: perms — root syncs 0444/0555 files; commands run as a second user."""

    @pytest.fixture
    def runtime_factory(self, sshd_perms, agent_user):
        return lambda config: open_runtime(ssh_config(config, sshd_perms, readonly="perms", agent_user=agent_user), config)
