"""The ``runtimes:`` config section: named instances with a type, README's reference is valid and
complete, bad keys are named, and an old-shape config is answered with the new shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from webshelf.core.config import (Config, DockerRuntimeConfig, LocalRuntimeConfig, ModalRuntimeConfig, SshRuntimeConfig,
                                  SyncConfig, parse_config)
from webshelf.core.sandbox import open_runtime
from webshelf.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"
FILE = Path("/etc/webshelf.yaml")


def readme_yaml() -> dict:
    """The full config reference: README's YAML block that starts with ``web:``."""
    block = re.search(r"```yaml\n(web:\n.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    return yaml.safe_load(block)


def error(data) -> str:
    with pytest.raises(ConfigError) as err:
        parse_config(data, FILE)
    return str(err.value)


def test_readme_documents_every_runtime_type_and_key_with_its_default():
    data = readme_yaml()["runtimes"]
    runtimes = parse_config({"runtimes": data}, README).runtimes
    assert (runtimes.publish_timeout_s, runtimes.sync) == (10, SyncConfig())
    assert runtimes.local == LocalRuntimeConfig() and runtimes.docker == DockerRuntimeConfig()
    assert runtimes.modal == ModalRuntimeConfig() and runtimes.build1 == SshRuntimeConfig(host="build1.example.com")
    for name, model in [("local", LocalRuntimeConfig), ("docker", DockerRuntimeConfig), ("modal", ModalRuntimeConfig),
                        ("build1", SshRuntimeConfig)]:
        assert set(data[name]) == set(model.model_fields), name
    assert set(data["sync"]) == set(SyncConfig.model_fields)


def test_without_config_local_and_docker_exist_with_their_defaults():
    assert Config().runtimes.instances() == {"local": LocalRuntimeConfig(), "docker": DockerRuntimeConfig()}
    assert parse_config({"runtimes": {"local": None, "docker": None}}, FILE).runtimes == Config().runtimes
    mine = parse_config({"runtimes": {"docker": {"type": "docker", "image": "busybox"}}}, FILE).runtimes
    assert mine.docker.image == "busybox" and mine.local == LocalRuntimeConfig()


def test_several_instances_of_one_type_are_several_blocks(config):
    runtimes = parse_config(yaml.safe_load(
        "runtimes:\n  gpu-box: {type: docker, image: cuda:12}\n  cpu-box: {type: docker, cpus: 2}\n"
        "  web1: {type: ssh, host: web1.example.com}\n  web2: {type: ssh, host: web2.example.com}\n"), FILE).runtimes
    assert list(runtimes.instances()) == ["local", "docker", "gpu-box", "cpu-box", "web1", "web2"]
    assert runtimes.of_type("docker") == ["docker", "gpu-box", "cpu-box"] and runtimes.of_type("ssh") == ["web1", "web2"]
    assert runtimes.instances()["gpu-box"].image == "cuda:12" and runtimes.instances()["cpu-box"].cpus == 2
    config.runtimes = runtimes
    box = open_runtime("cpu-box", config)  # the type picks the adapter; nothing is started
    assert (type(box).__name__, box.name, box.settings.cpus) == ("DockerRuntime", "cpu-box", 2)


@pytest.mark.parametrize("data, message", [
    ({"runtimes": {"docker": {"type": "docker", "imgae": "x"}}},
     "runtimes.docker.imgae: unknown key (check the spelling; see README's config reference)"),
    ({"runtimes": {"box": {"type": "docker", "read_only_rot": True}}},  # a safety option misspelt is never ignored
     "runtimes.box.read_only_rot: unknown key (check the spelling; see README's config reference)"),
    ({"runtimes": {"local": {"type": "local", "sandbox": "chroot"}}},
     "runtimes.local.sandbox: 'chroot' is not one of the choices; choose one of: bwrap, none"),
    ({"runtimes": {"local": {"type": "local", "binds": ["usr"]}}}, "runtimes.local.binds: bind 'usr' must be an absolute path"),
    ({"runtimes": {"gpu-box": {"type": "docker", "volumes": ["/a"]}}},
     "runtimes.gpu-box.volumes: volume '/a' must be '/host/path:/container/path[:ro|rw]'"),
    ({"runtimes": {"gpu-box": {"type": "docker", "cpus": 0}}}, "runtimes.gpu-box.cpus: 0 is out of range; allowed: > 0"),
    ({"runtimes": {"publish_timeout_s": 9999}}, "runtimes.publish_timeout_s: 9999 is out of range; allowed: ≤ 600"),
    ({"runtimes": {"gpu-box": {"image": "x"}}},
     "runtimes.gpu-box: missing key type (the kind of runtime); choose one of: local, docker, ssh, modal"),
    ({"runtimes": {"gpu-box": {"type": "dockr"}}},
     "runtimes.gpu-box.type: 'dockr' is not a runtime type; choose one of: local, docker, ssh, modal"),
    ({"runtimes": {"gpu-box": "docker"}}, "runtimes.gpu-box: must be a mapping of settings (got 'docker')"),
    ({"runtimes": {"web1": {"type": "ssh"}}}, "runtimes.web1.host: missing key (it has no default)"),
    ({"runtimes": {"web1": {"type": "ssh", "host": "h", "jump": {"port": "x"}}}},
     "runtimes.web1.jump.host: missing key (it has no default); runtimes.web1.jump.port: must be a whole number (got 'x')"),
    ({"runtimes": {"m": {"type": "modal", "image": 5}}}, "runtimes.m.image: must be a string or a mapping of settings (got 5)"),
    ({"runtimes": {"m": {"type": "modal", "image": {"base": 5}}}}, "runtimes.m.image.base: must be a string (got 5)"),
    ({"runtimes": {"d": {"type": "docker", "env": {"PATH": 5}}}}, "runtimes.d.env.PATH: must be a string (got 5)"),
    ({"runtimes": {"ssh:web1": {"type": "ssh", "host": "h"}}},
     "runtimes: runtime name 'ssh:web1' may only use letters, digits, '.', '_' and '-' (and starts with a letter or digit)"),
    ({"runtimes": {"sync": {"debounce_s": -1}}}, "runtimes.sync.debounce_s: -1 is out of range; allowed: ≥ 0"),
])
def test_bad_runtime_keys_are_named_without_pydantic_wording(data, message):
    assert error(data) == f"{FILE}: {message}"


def test_an_old_shape_config_gets_the_new_shape_to_write():
    old = yaml.safe_load("runtimes:\n  publish_timeout_s: 20\n  docker:\n    image: busybox\n  ssh:\n"
                         "    batch_files: 500\n    debounce_s: 0.1\n    hosts:\n      web1:\n        host: web1.example.com\n"
                         "        readonly: bind\n      web2:\n        host: web2.example.com\n")
    assert error(old) == (
        f"{FILE}: runtimes.docker, runtimes.ssh: this is the old shape of runtimes: (a block per kind, without type). "
        "runtimes: now holds named instances, each with a type (local, docker, ssh, modal) and that type's options, "
        "beside the shared settings publish_timeout_s and sync. An SSH host is an instance of type ssh, opened by its "
        "own name (--runtime web1, not ssh:web1); webshelf sync's timing is under runtimes.sync. Write instead:\n\n"
        "runtimes:\n"
        "  docker:\n    type: docker\n    image: busybox\n"
        "  sync:\n    debounce_s: 0.1\n"
        "  web1:\n    type: ssh\n    host: web1.example.com\n    readonly: bind\n    batch_files: 500\n"
        "  web2:\n    type: ssh\n    host: web2.example.com\n    batch_files: 500\n")
    # what it says to write is valid
    new = yaml.safe_load(error(old).split("Write instead:\n\n", 1)[1])
    new["runtimes"]["publish_timeout_s"] = 20
    runtimes = parse_config(new, FILE).runtimes
    assert runtimes.of_type("ssh") == ["web1", "web2"] and runtimes.web1.batch_files == 500


def test_an_old_modal_block_and_an_empty_one():
    assert error({"runtimes": {"modal": {"app": "a"}}}).endswith("Write instead:\n\nruntimes:\n  modal:\n    type: modal\n"
                                                                 "    app: a\n")
    assert error({"runtimes": {"modal": None}}).endswith("Write instead:\n\nruntimes:\n  modal:\n    type: modal\n")


def test_an_unknown_runtime_name_lists_the_configured_ones(config):
    with pytest.raises(ConfigError) as err:
        open_runtime("gpu-box", config)
    assert str(err.value) == ("unknown runtime 'gpu-box'; configured runtimes: local (local), docker (docker); "
                              "add it under runtimes: with a type (docker, local, modal, ssh)")
    assert err.value.context == {"key": "runtimes.gpu-box"}
