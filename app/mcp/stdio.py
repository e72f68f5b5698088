"""`docdesk mcp`'s stdin, read in bounded pieces: a JSON-RPC message is one line, and a line over
MAX_MESSAGE_BYTES is refused with a JSON-RPC error instead of being held whole.

The SDK's stdio transport reads stdin with `readline()`, which keeps however long a line comes, and
then validates it as a whole: one 50 MB line took 5.9 GB and kept 3.5 GB afterwards. Here stdin is
read 64 kB at a time; a line that grows past the limit is dropped as it comes (its start and end
are kept to find its `id`), and the client gets an error for that id. The SDK's transport is used
as it is, given this reader as its stdin; fd 0 points at the null device while serving, as the SDK
does it, so a child process cannot read the client's messages.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
from collections.abc import Awaitable, Callable, Iterator

import anyio.to_thread

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 1_000_000  # as `docdesk serve`'s max_body_bytes
CHUNK = 64 * 1024
KEPT_ENDS = 512  # bytes kept of a dropped line's start and end, to find its id
INVALID_REQUEST = -32600  # JSON-RPC's code

# The top-level "id" of a request: first in the object (as the SDKs write it), or last.
_ID_FIRST = re.compile(
    rb'^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]{0,200}"\s*,)*\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")'
)
_ID_LAST = re.compile(rb'[,{]\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")\s*}\s*$')


def request_id(head: bytes, tail: bytes) -> int | str | None:
    """The id of a message of which only the start and the end are known; None when not found."""
    found = _ID_FIRST.match(head) or _ID_LAST.search(tail)
    if found is None:
        return None
    raw = found.group(1).decode("utf-8", "replace")
    return raw[1:-1] if raw.startswith('"') else int(raw)


class BoundedLines:
    """An async iterator of stdin's lines (str), none longer than `limit` bytes; `refuse(id, size)`
    is awaited for each line dropped for its length (set it before serving)."""

    def __init__(self, fd: int, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.fd, self.limit = fd, limit
        self.refuse: Callable[[int | str | None, int], Awaitable[None]] | None = None
        self._buffer = bytearray()
        self._eof = False

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end > self.limit:  # whole, but too long all the same
                await self._refused(bytes(self._buffer[:KEPT_ENDS]), bytes(self._buffer[end - KEPT_ENDS : end]), end)
                del self._buffer[: end + 1]
                continue
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace")
            if len(self._buffer) > self.limit:
                await self._drop_line()
                continue
            if self._eof:
                if self._buffer:  # a last line without its newline
                    line, self._buffer = bytes(self._buffer), bytearray()
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            await self._read()

    async def _read(self) -> bytes:
        chunk = await anyio.to_thread.run_sync(os.read, self.fd, CHUNK, abandon_on_cancel=True)
        if not chunk:
            self._eof = True
        self._buffer += chunk
        return chunk

    async def _drop_line(self) -> None:
        """The line in the buffer is too long: read on to its end keeping only its ends, refuse it."""
        head = bytes(self._buffer[:KEPT_ENDS])
        size = len(self._buffer)
        tail = bytes(self._buffer[-KEPT_ENDS:])
        self._buffer = bytearray()
        while True:
            chunk = await self._read()
            end = self._buffer.find(b"\n")
            if end >= 0 or not chunk:
                cut = end if end >= 0 else len(self._buffer)
                tail = (tail + bytes(self._buffer[:cut]))[-KEPT_ENDS:]
                size += cut
                del self._buffer[: cut + 1]
                break
            tail = (tail + bytes(self._buffer))[-KEPT_ENDS:]
            size += len(self._buffer)
            self._buffer = bytearray()
        await self._refused(head, tail, size)

    async def _refused(self, head: bytes, tail: bytes, size: int) -> None:
        log.warning("refused a %d-byte MCP message (the limit is %d bytes)", size, self.limit)
        if self.refuse is not None:
            await self.refuse(request_id(head, tail), size)


def too_large(limit: int, size: int) -> str:
    return f"the message is {size:,} bytes: DocDesk takes at most {limit:,} bytes a message"


@contextlib.contextmanager
def stdin_claimed() -> Iterator[int]:
    """A private descriptor of the client's pipe (stdin); fd 0 points at the null device meanwhile,
    and at the pipe again afterwards. The private descriptor is never closed: a reading thread may
    still be blocked on it when serving ends."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield wire
    finally:
        os.dup2(wire, 0)
