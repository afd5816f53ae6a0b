"""Which addresses a cited URL may reach: public ones only, unless the configuration allows
the private network (``trust.fetch_private_hosts``, for an intranet wiki).

A page's text is not the user's choice of where to connect: a note could cite
``http://127.0.0.1:8765/…`` or a cloud metadata address and have `verify --fetch` read it. So a
host is resolved once, every address it resolves to is checked, and the fetcher connects to
the checked address itself (``Resolved.ip``), so a DNS answer that changes between the check
and the connection (rebinding) cannot move it. Numeric forms (``2130706433``, ``0x7f.1``,
``0177.0.0.1``) resolve like any name, through the system's resolver, to the address they
mean; an IPv4 address inside IPv6 (``::ffff:127.0.0.1``, 6to4, Teredo) is judged as IPv4.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

from .base import FetchError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]
ALLOW = "trust.fetch_private_hosts: true"


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the system's resolver: /etc/hosts, DNS)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Resolved:
    """A host and the one checked address to connect to."""

    host: str
    ip: str


def resolve_public(host: str, port: int, resolve: Resolver, allow_private: bool) -> Resolved:
    """Resolve ``host`` and check every address; FetchError names the address and the
    setting when one is loopback, private, link-local, multicast or reserved."""
    try:
        found = resolve(host.strip("[]"), port)
    except (OSError, UnicodeError) as exc:
        raise FetchError(f"network error (cannot resolve {host}: {exc})", transient=True) \
            from None
    if not found:
        raise FetchError(f"network error ({host} resolves to no address)", transient=True)
    if not allow_private:
        for text in found:
            kind = non_public_kind(ipaddress.ip_address(text.split("%", 1)[0]))
            if kind:
                named = f"{host} is" if host.strip("[]") == text else \
                    f"{host} resolves to {text},"
                raise FetchError(f"{named} a {kind} address: verify fetches public addresses "
                                 f"only (set {ALLOW} to allow the private network)")
    return Resolved(host, found[0])


def non_public_kind(ip: Address) -> str:
    """What kind of non-public address ``ip`` is ("loopback", "private", ...), or ""."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:          # ::ffff:a.b.c.d is a.b.c.d
            return non_public_kind(ip.ipv4_mapped)
        inner = ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None and (kind := non_public_kind(inner)):
            return kind
    for kind, test in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
                       ("multicast", ip.is_multicast), ("unspecified", ip.is_unspecified),
                       ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if test:
            return kind
    return "" if ip.is_global else "reserved"


__all__ = ["ALLOW", "Resolved", "Resolver", "non_public_kind", "resolve_public",
           "system_resolver"]
