"""Which network addresses a URL import may connect to: the one rule, in one place.

An address is judged by what it reaches, not by how it is spelled:

- an IPv6 address that stands for an IPv4 one is judged by that IPv4 address — IPv4-mapped
  (``::ffff:a.b.c.d``), IPv4-translated (``::ffff:0:a.b.c.d``, RFC 2765), IPv4-compatible
  (``::a.b.c.d``, deprecated but still routed by some stacks), the well-known NAT64 prefix
  (``64:ff9b::/96``, RFC 6052) and 6to4 (``2002::/16``), in dotted or hex spelling alike;
- tunnels and translators whose IPv4 end cannot be read from the address are refused: Teredo
  (``2001::/32``) and the local-use NAT64 prefix (``64:ff9b:1::/48``, RFC 8215, whose IPv4
  position depends on the operator's prefix length);
- the self-hoster's own networks (:data:`PRIVATE_NETWORKS`) are allowed only with
  ``fetch.allow_private_networks``;
- link-local (cloud metadata at 169.254.169.254 included) and multicast are refused always;
- anything else must be public: an IPv4 address on the public internet, or an IPv6 address
  in global unicast (``2000::/3``) outside the special-purpose and documentation blocks. That
  last rule is an allow-list, so an IPv6 spelling nobody thought of is refused, not fetched.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

PRIVATE_NETWORKS: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("10.0.0.0/8"),
    ipaddress.ip_network("172.16.0.0/12"),
    ipaddress.ip_network("192.168.0.0/16"),
    ipaddress.ip_network("100.64.0.0/10"),
    ipaddress.ip_network("::1/128"),
    ipaddress.ip_network("fc00::/7"),
)
"""Networks of a self-hoster's own machines: refused unless ``fetch.allow_private_networks``."""

IPV4_IN_LOW_32_BITS: tuple[ipaddress.IPv6Network, ...] = (
    ipaddress.IPv6Network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (but :: and ::1 are themselves)
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64, well-known prefix
)
"""IPv6 networks whose addresses carry an IPv4 address in their last 32 bits."""

NOT_IPV4_COMPATIBLE = frozenset({ipaddress.IPv6Address("::"), ipaddress.IPv6Address("::1")})

LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
NOT_PUBLIC_IN_GLOBAL_UNICAST: tuple[ipaddress.IPv6Network, ...] = (
    ipaddress.IPv6Network("2001::/23"),  # IETF special-purpose (Teredo, benchmarking, ORCHID)
    ipaddress.IPv6Network("2001:db8::/32"),  # documentation
    ipaddress.IPv6Network("3fff::/20"),  # documentation (RFC 9637)
)
"""Blocks inside ``2000::/3`` that are not the public internet (whatever Python's
``is_global`` of the day says)."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for, or None when it stands for none."""
    if address in NOT_IPV4_COMPATIBLE:
        return None
    if any(address in network for network in IPV4_IN_LOW_32_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def address_refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why the service may not connect to ``address``, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = embedded_ipv4(address)
        if embedded is not None:
            why = address_refusal(embedded, allow_private=allow_private)
            return None if why is None else f"{why} (it embeds {embedded})"
        if address.teredo is not None:
            return "a Teredo tunnel address"
        if address in LOCAL_NAT64:
            return "a local-use NAT64 address, which could stand for any IPv4 address"
    if any(address in network for network in PRIVATE_NETWORKS):
        return None if allow_private else "a loopback or private-network address"
    if address.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if address.is_multicast:
        return "a multicast address"
    if _is_public(address):
        return None
    return "an address that is not on the public internet"


def _is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address.is_global
    return (
        address in GLOBAL_UNICAST
        and not any(address in network for network in NOT_PUBLIC_IN_GLOBAL_UNICAST)
        and address.is_global
    )
