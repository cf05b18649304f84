"""The shared conformance suite against real Modal (``pytest -m modal``).

Runs only when ``MODAL_TOKEN_ID`` and ``MODAL_TOKEN_SECRET`` are set (Modal's service cannot
be reached from CI or the development machine). It creates an app ``webshelf-test`` and a
throwaway Volume per run, deleted at the end.
"""

from __future__ import annotations

import os
import secrets

import pytest

from webshelf.core.sandbox import open_runtime
from webshelf.runtimes.modal.config import ModalRuntimeConfig
from tests.runtimes.conformance import RuntimeConformance

HAVE_TOKEN = bool(os.environ.get("MODAL_TOKEN_ID") and os.environ.get("MODAL_TOKEN_SECRET"))

pytestmark = [
    pytest.mark.modal,
    pytest.mark.skipif(not HAVE_TOKEN, reason="live Modal tests need MODAL_TOKEN_ID and MODAL_TOKEN_SECRET"),
]


@pytest.fixture(scope="module")
def live_volume():
    modal = pytest.importorskip("modal", reason="pip install 'webshelf[modal]'")
    name = f"webshelf-test-{secrets.token_hex(4)}"
    yield name
    modal.Volume.objects.delete(name, allow_missing=True)


class TestModalLive(RuntimeConformance):
    @pytest.fixture
    def runtime_factory(self, live_volume):
        def make(config):
            config.runtimes.modal = ModalRuntimeConfig(app="webshelf-test", volume=live_volume, timeout=600)
            return open_runtime("modal", config)
        return make
