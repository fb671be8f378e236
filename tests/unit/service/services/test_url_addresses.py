"""The address rule of URL imports, one row per spelling: what each address reaches decides.

Rows marked (#24) are the IPv6 spellings of 127.0.0.1 that once passed."""

from __future__ import annotations

import ipaddress

import pytest

from service.services.url_addresses import address_refusal, embedded_ipv4

ALWAYS_REFUSED = [
    "169.254.169.254",  # cloud metadata
    "fe80::1",  # link-local
    "224.0.0.1",  # multicast
    "ff02::1",
    "0.0.0.0",  # unspecified
    "::",
    "240.0.0.1",  # reserved
    "192.0.2.10",  # documentation
    "198.18.0.1",  # benchmarking
    "::ffff:169.254.169.254",  # IPv4-mapped, dotted
    "::ffff:a9fe:a9fe",  # IPv4-mapped, hex: the same address
    "::169.254.169.254",  # IPv4-compatible
    "::ffff:0:a9fe:a9fe",  # IPv4-translated
    "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
    "2002:a9fe:a9fe::1",  # 6to4 of the metadata address
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "64:ff9b:1::7f00:1",  # local-use NAT64 (RFC 8215): its IPv4 end is the network's to say (#24)
    "64:ff9b:1::a9fe:a9fe",
    "64:ff9b:1:7f00:1::",  # the same prefix with the IPv4 address where a /48 puts it
    "2001:db8::1",  # documentation
    "3fff::1",  # documentation (RFC 9637)
    "2001:10::1",  # ORCHID
    "100::1",  # discard-only
    "fec0::1",  # deprecated site-local
    "5f00::1",  # SRv6 SIDs: not global unicast
    "4000::1",  # unassigned, outside 2000::/3
    "::2",  # IPv4-compatible 0.0.0.2
]
PRIVATE = [
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # CGNAT
    "fd12:3456::1",  # unique-local
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::7f00:1",  # IPv4-compatible, hex (#24)
    "::127.0.0.1",  # IPv4-compatible, dotted (#24)
    "::ffff:0:7f00:1",  # IPv4-translated (#24)
    "::ffff:0:127.0.0.1",
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::127.0.0.1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::",  # 6to4 of 192.168.1.1
]
PUBLIC = [
    "93.184.215.14",
    "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    "2a00:1450:4001:82a::200e",
    "::ffff:93.184.215.14",
    "::93.184.215.14",
    "64:ff9b::93.184.215.14",
    "2002:5db8:d70e::1",  # 6to4 of a public address
]


@pytest.mark.parametrize("address", ALWAYS_REFUSED)
def test_link_local_multicast_reserved_and_opaque_addresses_are_refused_even_when_private_is_allowed(
    address: str,
) -> None:
    ip = ipaddress.ip_address(address)
    assert address_refusal(ip, allow_private=False) is not None
    assert address_refusal(ip, allow_private=True) is not None


@pytest.mark.parametrize("address", PRIVATE)
def test_loopback_private_and_cgnat_addresses_in_any_spelling_need_the_setting(
    address: str,
) -> None:
    ip = ipaddress.ip_address(address)
    assert address_refusal(ip, allow_private=False) is not None
    assert address_refusal(ip, allow_private=True) is None


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address), allow_private=False) is None


@pytest.mark.parametrize(
    ("address", "embedded"),
    [
        ("::7f00:1", "127.0.0.1"),
        ("::ffff:0:7f00:1", "127.0.0.1"),
        ("::ffff:a9fe:a9fe", "169.254.169.254"),
        ("64:ff9b::a00:1", "10.0.0.1"),
        ("2002:a9fe:a9fe::1", "169.254.169.254"),
        ("::1", None),
        ("::", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
    ],
)
def test_the_embedded_ipv4_address_is_read_from_every_form_that_carries_one(
    address: str, embedded: str | None
) -> None:
    found = embedded_ipv4(ipaddress.IPv6Address(address))
    assert (None if found is None else str(found)) == embedded


def test_a_refusal_of_an_embedded_address_names_it() -> None:
    why = address_refusal(ipaddress.ip_address("::7f00:1"), allow_private=False)
    assert why is not None and "127.0.0.1" in why
