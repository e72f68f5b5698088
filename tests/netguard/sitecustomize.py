"""Loaded by every Python process the tests start (PYTHONPATH points here): sockets may only
reach loopback, so a test that tries the network fails loudly instead of passing by luck."""

import socket

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(sock, address):
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", "::1") or str(host).startswith("127."):
        return
    raise RuntimeError(f"DocDesk test tried to reach the network: {address!r}")


def _guarded_connect(self, address):
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
