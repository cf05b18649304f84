"""``default_config()`` (core/config.py) is ``Config()`` without building a validator — what a
command gets with no config file (issue 15's start-up). It must be the same config in every
respect a caller can see, and become a validating one on first use."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from webshelf.core.config import Config, default_config, load_config
from webshelf.errors import ConfigError


def same(a: BaseModel, b: BaseModel, where: str = "config") -> None:
    """Equal values, types, fields_set, private attributes and extras, all the way down."""
    assert type(a) is type(b), where
    assert a.model_fields_set == b.model_fields_set, where
    assert a.__pydantic_private__ == b.__pydantic_private__, where
    for name in type(a).model_fields:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, BaseModel):
            same(x, y, f"{where}.{name}")
        else:
            assert (type(x), x) == (type(y), y), f"{where}.{name}"
    extra_a, extra_b = a.__pydantic_extra__ or {}, b.__pydantic_extra__ or {}
    assert list(extra_a) == list(extra_b), where
    for name, value in extra_a.items():
        same(value, extra_b[name], f"{where}.{name}")


def test_the_default_config_is_config_field_for_field():
    built, validated = default_config(), Config()
    same(built, validated)
    assert built == validated and built.model_dump(mode="json") == validated.model_dump(mode="json")
    assert [(n, s.type) for n, s in built.runtimes.instances().items()] == [("local", "local"), ("docker", "docker")]


def test_no_config_file_gives_the_default_config(home):
    loaded = load_config()
    same(loaded, Config())
    assert loaded.home == home and loaded.source is None


def test_the_default_config_still_validates_what_is_assigned_to_it():
    config = default_config()
    config.web.allow_private = True  # the validator is built now, on first use
    assert config.web.allow_private is True
    with pytest.raises(ValueError, match="extract_char_limit"):
        config.web.extract_char_limit = 1
    with pytest.raises((ConfigError, ValueError)):
        config.runtimes.gpu = {"type": "nonsense"}
