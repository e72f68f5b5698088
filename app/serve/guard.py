"""Connections `docdesk serve` will not let starve it: a deadline for each request head, and a cap on
open connections that sends the oldest idle one away when a new one comes.

uvicorn closes a keep-alive connection only when it stays silent for `timeout_keep_alive`, and has
no deadline at all for a connection that opens and never finishes its head. 1,100 such connections
under a 1,024 open-file limit left nothing to accept a real request with ("Too many open files").
Here, uvicorn's own HTTP protocol (h11) is kept and told two things more:

- a request head must be whole within HEAD_TIMEOUT_S of the connection opening, or of the last
  response on it plus uvicorn's keep-alive: counted from then, not from the last byte, so a
  client that trickles a byte at a time is closed as one that sends nothing;
- at most `max_connections` are open (half the open-file limit at most, with room for what
  bursts of accepts take before any is seen); past that, the connection that has waited longest for its
  head, or is slowest to send its body, is closed to make room, so the newest always gets in.

A connection whose request is whole (being answered, or queued by app/serve/admission.py, which
has its own bound) is never closed for room.
"""

from __future__ import annotations

import asyncio
import logging
import resource

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEAD_TIMEOUT_S = 10.0  # a whole request head within this, counted from the connection or the last response
KEEP_ALIVE_S = 30.0  # an idle keep-alive connection is closed after this (uvicorn's timeout_keep_alive)
MAX_HEAD_BYTES = 16 * 1024  # a request head beyond this is a 400 (h11's max_incomplete_event_size)
MAX_CONNECTIONS = 1000
FD_RESERVE = 256  # open files kept at least for the library, the model, logs and bursts of accepts
BACKLOG = 128  # connections asyncio accepts at once (and the kernel's queue of them)


def connection_limit(wanted: int = MAX_CONNECTIONS) -> int:
    """How many connections may be open at once: `wanted`, within the process's open-file limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    # asyncio accepts a batch (up to the backlog) and may accept another before it hands the first
    # to the protocol, so connections may pass the cap by a few batches before any is closed:
    # half the files, or all but FD_RESERVE where that is fewer, are left for those and the rest.
    return min(wanted, max(16, min(soft - FD_RESERVE, soft // 2)))


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a head deadline and a connection cap (the module's docstring)."""

    max_connections = MAX_CONNECTIONS
    head_timeout_s = HEAD_TIMEOUT_S

    _deadline: asyncio.TimerHandle | None = None
    _waiting_since: float = 0.0  # when this connection began to wait for its next request head

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect_head(self.head_timeout_s)
        if len(self.connections) > self.max_connections:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._deadline is not None and self.cycle is not None and not self.cycle.response_complete:
            self._deadline.cancel()  # the head is whole: the request is the app's now
            self._deadline = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._expect_head(self.timeout_keep_alive + self.head_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().connection_lost(exc)

    def _expect_head(self, within_s: float) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._waiting_since = self.loop.time()
        self._deadline = self.loop.call_later(within_s, self._head_too_slow)

    def _head_too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closing a connection that sent no whole request head in time (%s)", self.client)
            self.transport.close()

    def _idle(self) -> bool:
        """Waiting for a head, or still receiving a body nobody has answered yet: free to close."""
        if self.transport is None or self.transport.is_closing():
            return False
        cycle = self.cycle
        if self._deadline is not None:
            return cycle is None or cycle.response_complete
        return cycle is not None and cycle.more_body and not cycle.response_started

    def _make_room(self) -> None:
        """Close the connection that has waited longest; the newest one itself when all are busy."""
        idle = [c for c in self.connections if isinstance(c, GuardedH11) and c._idle()]
        victim = min(idle, key=lambda c: c._waiting_since) if idle else self
        log.info("%d connections open (the limit is %d): closing one", len(self.connections), self.max_connections)
        victim.transport.close()
        self.connections.discard(victim)  # at once: the count must not wait for the loop to close it


def guarded_protocol(max_connections: int, head_timeout_s: float = HEAD_TIMEOUT_S) -> type[GuardedH11]:
    """The protocol class for one server, its connection cap and head deadline set."""
    return type("GuardedH11", (GuardedH11,), {"max_connections": max_connections, "head_timeout_s": head_timeout_s})
