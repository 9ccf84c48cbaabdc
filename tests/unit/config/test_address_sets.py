"""Authorized networks are checked by what their ranges admit, not how they are written: IPv4
written as IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is the IPv4 it carries."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.resolve.checks import parse_stack_config
from tests.helpers import deep_merge

BASE = {
    "environment": "dev",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    "tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4"}],
}


def _issues(cidrs: list[str]) -> dict[str, str]:
    networks = [{"cidr": c} for c in cidrs]
    values = deep_merge(BASE, {"cluster": {"authorizedNetworks": networks}})
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values, "test")
    return {issue.key: issue.message for issue in caught.value.issues}


@pytest.mark.parametrize(
    ("cidr", "meaning"),
    [
        ("::ffff:0.0.0.0/96", "0.0.0.0/0, written as IPv6 (IPv4-mapped)"),
        ("::ffff:0:0/96", "0.0.0.0/0, written as IPv6 (IPv4-mapped)"),
        ("::/96", "0.0.0.0/0, written as IPv6 (IPv4-compatible)"),
        ("64:ff9b::/96", "0.0.0.0/0, written as IPv6 (NAT64)"),
        ("2002::/16", "0.0.0.0/0, written as IPv6 (6to4)"),
        ("::/64", "0.0.0.0/0, written as IPv6 (IPv4-mapped)"),
        ("::/1", "0.0.0.0/0, written as IPv6 (IPv4-mapped)"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("::/0", "::/0"),
    ],
)
def test_a_range_that_admits_all_of_ipv4_however_written_is_refused(cidr, meaning):
    from components.config.address_sets import everywhere

    assert everywhere(cidr) == meaning
    message = _issues([cidr])["cluster.authorizedNetworks[0].cidr"]
    assert message.startswith(f"{cidr!r} would open the control plane's IP endpoint to the whole")


@pytest.mark.parametrize(
    "cidrs",
    [
        ["::ffff:0.0.0.0/97", "::ffff:128.0.0.0/97"],
        ["::ffff:0.0.0.0/97", "128.0.0.0/1"],
        ["2002::/17", "2002:8000::/17"],
        ["64:ff9b::/97", "::ffff:128.0.0.0/97"],
    ],
)
def test_ranges_that_together_admit_all_of_ipv4_are_refused(cidrs):
    message = _issues(cidrs)["cluster.authorizedNetworks"]
    assert message.startswith("together these ranges cover 0.0.0.0/0 (")
    assert "whole internet" in message


@pytest.mark.parametrize(
    ("cidrs", "public"),
    [
        # 2**31 less 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10 and 127.0.0.0/8
        (["0.0.0.0/1"], "2,092,957,696"),
        (["::ffff:0:0/97"], "2,092,957,696"),
        (["2002:800::/21"], "117,440,512"),  # 8.0.0.0/5 as 6to4: 2**27 less 10.0.0.0/8
        (["35.0.0.0/8", "34.0.0.0/8"], "33,554,432"),
    ],
)
def test_ranges_that_admit_more_public_ipv4_than_a_slash_8_are_refused(cidrs, public):
    message = _issues(cidrs)["cluster.authorizedNetworks"]
    assert message.startswith(f"together these ranges admit {public} public IPv4 addresses")
    assert "a large part of the internet" in message


@pytest.mark.parametrize(
    "cidrs",
    [
        ["10.0.0.0/8"],
        ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
        ["35.0.0.0/8"],  # exactly a /8: one organisation's block
        ["::ffff:203.0.113.0/120"],  # 203.0.113.0/24 as IPv4-mapped
        ["2001:db8::/32"],
        ["2002:c000:0200::/40"],  # 192.0.2.0/24 as 6to4
    ],
)
def test_ordinary_networks_are_accepted(cidrs):
    from components.config.address_sets import everywhere, exposure

    assert exposure(cidrs) is None
    assert all(everywhere(cidr) is None for cidr in cidrs)


def test_half_the_ipv6_internet_is_refused():
    # 3000::/4, half of 2000::/3 (and clear of 6to4), is 2**8 /12s.
    message = _issues(["3000::/4"])["cluster.authorizedNetworks"]
    assert message.startswith("together these ranges admit 256 times a /12 of global IPv6")
