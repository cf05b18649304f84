"""The address policy without DNS: every spelling of a non-public address, reserved names,
schemes, credentials in URLs, and the opt-ins (core/fetch/netpolicy.py)."""

from __future__ import annotations

import ipaddress

import pytest

from webshelf.core.config import Config, parse_config
from webshelf.errors import BlockedURLError, ConfigError
from webshelf.core.fetch.netpolicy import Policy, address_problem, check_addresses, check_url, parse_ip, redact

DEFAULT = Policy()

BLOCKED_URLS = {
    "loopback": "http://127.0.0.1/",
    "loopback_other": "http://127.8.9.10:8080/x",
    "decimal_ip": "http://2130706433/",
    "hex_ip": "http://0x7f000001/",
    "hex_dotted": "http://0x7f.0.0.1/",
    "octal_ip": "http://0177.0.0.1/",
    "short_ip": "http://127.1/",
    "short_three_part": "http://127.0.1/",
    "ipv4_mapped_ipv6": "http://[::ffff:127.0.0.1]/",
    "ipv4_mapped_ipv6_hex": "http://[::ffff:7f00:1]/",
    "nat64_embedded": "http://[64:ff9b::a9fe:a9fe]/",
    "sixtofour_embedded": "http://[2002:7f00:1::]/",
    "ipv6_loopback": "http://[::1]/",
    "unspecified": "http://0.0.0.0/",
    "unspecified_short": "http://0/",
    "ipv6_unspecified": "http://[::]/",
    "private_10": "http://10.1.2.3/",
    "private_172": "http://172.16.0.1/",
    "private_192": "http://192.168.1.1/",
    "shared_cgnat": "http://100.64.0.1/",
    "link_local_metadata": "http://169.254.169.254/latest/meta-data/",
    "metadata_decimal": "http://2852039166/",
    "ipv6_link_local": "http://[fe80::1]/",
    "unique_local_ipv6": "http://[fd00:ec2::254]/",
    "multicast": "http://224.0.0.1/",
    "ipv6_multicast": "http://[ff02::1]/",
    "reserved_240": "http://240.0.0.1/",
    "broadcast": "http://255.255.255.255/",
    "documentation_range": "http://192.0.2.1/",
    "localhost": "http://localhost/",
    "localhost_upper_dot": "http://LOCALHOST./",
    "sub_localhost": "http://api.localhost:3000/",
    "internal": "http://db.internal/",
    "gcp_metadata_name": "http://metadata.google.internal/computeMetadata/v1/",
    "metadata_bare_name": "http://metadata/",
    "aws_instance_data": "http://instance-data/latest/",
    "mdns_local": "http://printer.local/",
}


@pytest.mark.parametrize("case", sorted(BLOCKED_URLS))
def test_non_public_address_in_any_spelling_is_refused_without_dns(case):
    url = BLOCKED_URLS[case]
    with pytest.raises(BlockedURLError) as info:
        check_url(url, DEFAULT)
    assert info.value.code == "blocked_url"
    assert "web.allow_hosts" in info.value.message  # says how to opt in


@pytest.mark.parametrize("spelling", ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1", "127.0.1", "017700000001"])
def test_odd_ipv4_spellings_parse_to_loopback(spelling):
    assert parse_ip(spelling) == ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize("not_ip", ["example.com", "1.2.3.4.5", "256.1.1.1", "1..2", "12a.0.0.1", "4294967296"])
def test_names_and_out_of_range_numbers_are_not_ips(not_ip):
    assert parse_ip(not_ip) is None


@pytest.mark.parametrize("public", ["http://93.184.216.34/", "http://example.com/", "https://[2606:4700::1111]/",
                                    "http://1.1.1.1:8080/path?q=1"])
def test_public_hosts_pass_the_dns_free_check(public):
    check_url(public, DEFAULT)


def test_every_resolved_address_is_checked_one_bad_answer_refuses():
    assert check_addresses("ok.example", ["93.184.216.34", "2606:4700::1111"], DEFAULT)
    with pytest.raises(BlockedURLError, match=r"resolves to 10\.0\.0\.5, a private address"):
        check_addresses("mixed.example", ["93.184.216.34", "10.0.0.5"], DEFAULT)
    with pytest.raises(BlockedURLError, match="did not resolve"):
        check_addresses("none.example", [], DEFAULT)


def test_address_problem_names_the_kind():
    assert address_problem(ipaddress.ip_address("169.254.169.254")).startswith("a link-local")
    assert "embedded in IPv6" in address_problem(ipaddress.ip_address("::ffff:10.0.0.1"))
    assert address_problem(ipaddress.ip_address("fd12::1")) == "a unique-local IPv6 address"
    assert address_problem(ipaddress.ip_address("8.8.8.8")) is None


@pytest.mark.parametrize("scheme_url", ["ftp://example.com/f", "gopher://example.com/", "javascript:alert(1)",
                                        "data:text/html,<p>x</p>", "ws://example.com/"])
def test_only_http_and_https_schemes(scheme_url):
    with pytest.raises(BlockedURLError, match="http and https URLs only"):
        check_url(scheme_url, DEFAULT)


def test_file_urls_need_the_opt_in_and_are_never_a_redirect_target():
    with pytest.raises(BlockedURLError, match="web.allow_file_urls: true"):
        check_url("file:///etc/passwd", DEFAULT)
    check_url("file:///srv/docs/a.md", Policy(allow_file_urls=True, file_dirs=("/srv/docs",)))
    with pytest.raises(BlockedURLError, match="redirect to a file:// URL"):
        check_url("file:///etc/passwd", Policy(allow_file_urls=True), first_hop=False)


@pytest.mark.parametrize("secret_url,where", [
    ("https://user:pw@example.com/", "user name or password"),
    ("https://example.com/?api_key=abc", "'api_key'"),
    ("https://example.com/?q=1&token=abc", "'token'"),
    ("https://example.com/?access_token=abc", "'access_token'"),
    ("https://example.com/?client_secret=abc", "'client_secret'"),
    ("https://example.com/?password=abc", "'password'"),
    ("https://example.com/?sig=abc", "'sig'"),
    ("https://example.com/?X-Amz-Signature=abc", "'X-Amz-Signature'"),
    ("https://example.com/?apikey=abc", "'apikey'"),
])
def test_urls_carrying_credentials_are_refused_with_the_reason(secret_url, where):
    with pytest.raises(BlockedURLError) as info:
        check_url(secret_url, DEFAULT)
    assert where in info.value.message and "web.allow_secret_urls: true" in info.value.message
    assert "abc" not in info.value.message and "pw@" not in info.value.message  # the secret is not repeated
    check_url(secret_url, Policy(allow_secret_urls=True))


def test_innocent_query_parameters_pass():
    check_url("https://example.com/search?q=token+bucket&page=2&tokens_total=5&design=signal", DEFAULT)


def test_redirect_hops_may_carry_signed_urls():
    check_url("https://cdn.example.com/f?X-Amz-Signature=abc", DEFAULT, first_hop=False)


def test_redact_hides_userinfo_and_secret_values():
    assert redact("https://u:p@example.com/a?token=s&q=1") == "https://***@example.com/a?token=***&q=1"


def test_allow_hosts_names_wildcards_ips_and_networks():
    web = Config().web
    web.allow_hosts = ["intranet.example", "*.corp.example", "127.0.0.1", "10.0.0.0/8"]
    policy = Policy.from_config(web)
    for url in ["http://intranet.example/", "http://a.b.corp.example/", "http://127.0.0.1:9/", "http://10.9.8.7/"]:
        check_url(url, policy)
    assert check_addresses("intranet.example", ["192.168.0.9"], policy)  # an allowed name may resolve anywhere
    assert check_addresses("other.example", ["10.1.1.1"], policy)  # an allowed network admits the address
    with pytest.raises(BlockedURLError):
        check_addresses("other.example", ["192.168.0.9"], policy)
    with pytest.raises(BlockedURLError):
        check_url("http://127.0.0.2/", policy)


def test_allow_private_opens_every_private_address_and_local_name():
    policy = Policy(allow_private=True)
    for url in ["http://127.0.0.1/", "http://localhost:8080/", "http://10.0.0.1/", "http://[::1]/"]:
        check_url(url, policy)
    with pytest.raises(BlockedURLError):  # but not the secret rule
        check_url("http://127.0.0.1/?token=x", policy)


def test_bad_allow_hosts_entry_is_a_config_error_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"web\.allow_hosts: .*'not a host!' is not a host name"):
        parse_config({"web": {"allow_hosts": ["not a host!"]}}, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"web\.max_redirects: 99 is out of range"):
        parse_config({"web": {"max_redirects": 99}}, tmp_path / "c.yaml")
