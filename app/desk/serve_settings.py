"""The [serve] section of config.toml, and the one rule about where DocDesk may listen."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass


@dataclass
class ServeSettings:
    enabled: bool = False  # the window starts the server when it opens
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None  # clients send `Authorization: Bearer <token>`; None: no token asked
    queue: int = 8  # requests that may wait for the model beyond what it runs at once; more get 429
    max_body_bytes: int = 1_000_000  # a request body beyond this gets 413


class ServeRefused(Exception):
    """The server must not start with these settings; the message is the one-line reason."""

    exit_code = 2


def is_loopback_literal(host: str) -> bool:
    """ "localhost" or a loopback address, without looking any name up."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    """Whether `host` only ever reaches this machine ("localhost", 127.0.0.0/8, ::1, or a name
    every address of which is one of those)."""
    if is_loopback_literal(host):
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
        return False  # an address, and not a loopback one
    except ValueError:  # a name: loopback only if every address it resolves to is
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError:
            return False
        return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def check_serve_settings(settings: ServeSettings) -> None:
    """Raise ServeRefused for settings that would expose the library or cannot work."""
    if not 0 <= settings.port < 65536:  # 0: any free port (the address is printed)
        raise ServeRefused(f"port {settings.port} is not a TCP port (1-65535, or 0 for any free one)")
    if settings.queue < 0:
        raise ServeRefused(f"queue {settings.queue} is negative: 0 turns waiting off")
    if not settings.token and not is_loopback(settings.host):
        raise ServeRefused(
            f"refusing to serve the library on {settings.host} without a token: anyone who can reach it could "
            "read your documents; set --token (or DOCDESK_TOKEN), or keep the default 127.0.0.1"
        )
