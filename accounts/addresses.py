"""Where a seamless operator's wallet may be: at a public internet address. A wallet URL whose
host is, or resolves to, a loopback, private, shared, link-local (the cloud metadata service's
169.254.169.254), multicast, reserved or unspecified address would make the platform send signed
calls into its own network; such an address is refused unless it is in one of the networks of
the setting ``WALLET_ALLOWED_NETWORKS`` (the loopback networks of ``make run``'s and the tests'
reference wallet). An IPv4 address written as IPv6 (``::ffff:127.0.0.1``) is read as the IPv4 one.

``check_url`` is the check when a URL is set (``Operator.clean``); ``wallets.client`` checks again
at every call, the addresses it connects to (a name may resolve elsewhere later)."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class WalletAddressRefused(Exception):
    """A wallet URL's host is, or resolves to, an address no operator's wallet may have."""


def refusal(address):
    """Why ``address`` (an IP address, text) may not be a wallet's: a sentence, or ``""`` when it
    may (a public unicast address, or one in ``WALLET_ALLOWED_NETWORKS``). A text that is no IP
    address in its usual form (``127.1``) may not either."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"{address!r} is no IP address in its usual form"
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
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
    """Raise ``WalletAddressRefused`` when ``url``'s host is, or now resolves to (any of the
    addresses of ``getaddrinfo``, a blocking lookup), an address a wallet may not have. A name
    that does not resolve passes: it has no address to refuse, and every call checks again."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # no host to read: the URL's own validation refuses it
        return None
    if (address := _literal(host)) is not None:
        return check_address(address)
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None
    for *_, sockaddr in found:
        check_address(sockaddr[0])
    return None
