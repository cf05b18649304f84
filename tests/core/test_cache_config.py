"""The ``cache:`` config section: human durations and sizes, ranges, and README's reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from webshelf.core.config import parse_config
from webshelf.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_reference_block_parses_and_states_the_cache_defaults():
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL) if "cache:" in b)
    config = parse_config(yaml.safe_load(block), README)
    assert (config.cache.max_age, config.cache.ttl) == (900, 7 * 86_400)
    assert (config.cache.max_total_bytes, config.cache.max_file_chars) == (1 << 30, 2_000_000)
    assert config.cache == parse_config({}, README).cache


@pytest.mark.parametrize("value, seconds", [(0, 0), (90, 90), ("90s", 90), ("15m", 900), ("1h30m", 5400), ("7d", 604_800)])
def test_durations_accept_seconds_or_human_strings(value, seconds):
    assert parse_config({"cache": {"max_age": value}}, Path("c.yaml")).cache.max_age == seconds


@pytest.mark.parametrize("value, size", [(1 << 20, 1 << 20), ("500MB", 500_000_000), ("1GiB", 1 << 30), ("2g", 2 << 30)])
def test_sizes_accept_bytes_or_units(value, size):
    assert parse_config({"cache": {"max_total_bytes": value}}, Path("c.yaml")).cache.max_total_bytes == size


@pytest.mark.parametrize("cache, message", [
    ({"ttl": "7 days"}, "cache.ttl: '7 days' is not a duration"),
    ({"max_age": -1}, "cache.max_age: -1 is out of range; allowed: ≥ 0"),
    ({"max_total_bytes": "10k"}, "cache.max_total_bytes: 10240 is out of range; allowed: ≥ 1048576"),
    ({"max_file_chars": 100}, "cache.max_file_chars: 100 is out of range; allowed: ≥ 10000"),
    ({"maxage": 5}, "cache.maxage: unknown key"),
])
def test_bad_cache_values_name_the_key(cache, message):
    with pytest.raises(ConfigError) as err:
        parse_config({"cache": cache}, Path("c.yaml"))
    assert message in err.value.message
