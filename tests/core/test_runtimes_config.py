"""The ``runtimes:`` config section: README's reference is valid and complete, bad keys are named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from webshelf.core.config import Config, DockerRuntimeConfig, LocalRuntimeConfig, parse_config
from webshelf.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_yaml() -> dict:
    block = re.search(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    return yaml.safe_load(block)


def test_readme_documents_every_runtime_key_with_its_default():
    data = readme_yaml()["runtimes"]
    config = parse_config({"runtimes": data}, README)
    assert config.runtimes == Config().runtimes
    assert set(data["local"]) == set(LocalRuntimeConfig.model_fields)
    assert set(data["docker"]) == set(DockerRuntimeConfig.model_fields)


@pytest.mark.parametrize("data, named", [
    ({"runtimes": {"docker": {"imgae": "x"}}}, "runtimes.docker.imgae: unknown key"),
    ({"runtimes": {"local": {"sandbox": "chroot"}}}, "runtimes.local.sandbox"),
    ({"runtimes": {"local": {"binds": ["usr"]}}}, "bind 'usr' must be an absolute path"),
    ({"runtimes": {"docker": {"volumes": ["/a"]}}}, "volume '/a' must be '/host/path:/container/path[:ro|rw]'"),
    ({"runtimes": {"docker": {"cpus": 0}}}, "runtimes.docker.cpus: 0 is out of range; allowed: > 0"),
    ({"runtimes": {"publish_timeout_s": 9999}}, "runtimes.publish_timeout_s: 9999 is out of range; allowed: ≤ 600"),
])
def test_bad_runtime_keys_are_named(data, named):
    with pytest.raises(ConfigError) as err:
        parse_config(data, Path("/etc/webshelf.yaml"))
    assert named in str(err.value)
