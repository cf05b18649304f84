"""Real components (dockerd, sshd, bwrap, root for tmpfs mounts) that some tests need.

Locally a missing component skips its tests with a reason that says how to get it. In CI,
``.ci/run`` installs and starts everything and sets ``WEBSHELF_REQUIRE_REAL=1``, which turns
those skips into failures — so a broken install step can never hide behind a skip.
"""

from __future__ import annotations

import os

import pytest

STRICT = os.environ.get("WEBSHELF_REQUIRE_REAL") == "1"


def need(available: bool, what: str, how: str) -> None:
    """Skip (or, in CI, fail) the calling test unless ``available``."""
    if available:
        return
    message = f"{what} is not available: {how}"
    if STRICT:
        pytest.fail(f"{message} (WEBSHELF_REQUIRE_REAL=1: CI must provide it)")
    pytest.skip(message)


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
