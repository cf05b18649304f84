"""Every runtime against the one suite; adding a runtime is one small class here."""

from __future__ import annotations

import pytest

from core.sandbox import open_runtime
from tests.runtimes.conformance import RuntimeConformance


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
