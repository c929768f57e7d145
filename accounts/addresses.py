"""Where a seamless operator's wallet may be: at a public internet address. A wallet URL whose
host is, or resolves to, a loopback, private, shared, link-local (the cloud metadata service's
169.254.169.254), multicast, reserved or unspecified address would make the platform send signed
calls into its own network; such an address is refused unless it is in one of the networks of
the setting ``WALLET_ALLOWED_NETWORKS`` (the loopback networks of ``make run``'s and the tests'
reference wallet). An IPv4 address carried in an IPv6 one is judged as that IPv4 address: mapped
(``::ffff:127.0.0.1``), IPv4-compatible (``::127.0.0.1``), 6to4 (``2002:a9fe:a9fe::``) and NAT64
(``64:ff9b::a9fe:a9fe``, ``64:ff9b:1::/48``), the IPv4 address in its last 32 bits. A wallet URL
carries no user name or password either (the calls are signed with the operator's wallet secret).

``check_url`` is the check when a URL is set (``Operator.clean``); ``wallets.client`` checks again
at every call, the addresses it connects to (a name may resolve elsewhere later)."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class WalletAddressRefused(Exception):
    """A wallet URL's host is, or resolves to, an address no operator's wallet may have."""


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _carried_ipv4(ip):
    """The IPv4 address an IPv6 address ``ip`` carries (mapped, 6to4, NAT64, IPv4-compatible other
    than ``::`` and ``::1``), or ``None``."""
    if ip.ipv4_mapped or ip.sixtofour:
        return ip.ipv4_mapped or ip.sixtofour
    if any(ip in network for network in _NAT64) or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal(address):
    """Why ``address`` (an IP address, text) may not be a wallet's: a sentence, or ``""`` when it
    may (a public unicast address, or one in ``WALLET_ALLOWED_NETWORKS``). A text that is no IP
    address in its usual form (``127.1``) may not either."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"{address!r} is no IP address in its usual form"
    if ip.version == 6 and (carried := _carried_ipv4(ip)):
        ip = carried
    if any(ip in network for network in settings.WALLET_ALLOWED_NETWORKS):
        return ""
    if ip.is_global and not ip.is_multicast:
        return ""
    kind = next((name for name in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved")
                 if getattr(ip, f"is_{name}")), "non-public").replace("_", "-")
    return (f"{ip} is a {kind} address, where no operator's wallet may be (allow its network with "
            "WALLET_ALLOWED_NETWORKS)")


def check_address(address):
    """Raise ``WalletAddressRefused`` when ``address`` (an IP address, text) may not be a wallet's."""
    if why := refusal(address):
        raise WalletAddressRefused(why)


def _literal(host):
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def check_url(url):
    """Raise ``WalletAddressRefused`` when ``url`` names a user or a password, or when its host is,
    or now resolves to (any of the addresses of ``getaddrinfo``, a blocking lookup), an address a
    wallet may not have. A name that does not resolve passes: it has no address to refuse, and
    every call checks again."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:  # no host to read: the URL's own validation refuses it
        return None
    if "@" in parts.netloc:
        raise WalletAddressRefused("a wallet URL carries no user name or password (the calls are signed with "
                                   "the operator's wallet secret)")
    if (address := _literal(host)) is not None:
        return check_address(address)
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None
    for *_, sockaddr in found:
        check_address(sockaddr[0])
    return None
