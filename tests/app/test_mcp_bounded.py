"""app/mcp/stdio.py on a real pipe: lines within the limit come through whole, a longer one is
dropped as it comes and refused for its id (found at its start or its end), in bounded memory.
`docdesk mcp` itself refusing a 50 MB line is tests/reliability/attacks_service.py's attack."""

from __future__ import annotations

import json
import os
import threading

import anyio
import pytest

from app.mcp.stdio import BoundedLines, request_id


def _read_all(chunks: list[bytes], limit: int) -> tuple[list[str], list[tuple], int]:
    """What BoundedLines yields and refuses for `chunks` written to a pipe, and the largest its buffer got."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            for chunk in chunks:
                pipe.write(chunk)

    writer = threading.Thread(target=write)
    writer.start()
    lines: list[str] = []
    refused: list[tuple] = []
    largest = 0

    async def main() -> None:
        nonlocal largest
        reader = BoundedLines(read_end, limit)

        async def refuse(message_id, size) -> None:
            refused.append((message_id, size))

        reader.refuse = refuse
        async for line in reader:
            largest = max(largest, len(reader._buffer))
            lines.append(line)

    anyio.run(main)
    writer.join()
    os.close(read_end)
    return lines, refused, largest


def _message(message_id, size: int, id_first: bool = True) -> bytes:
    params = {"name": "search_documents", "arguments": {"query": "word " * (size // 5)}}
    body = {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params}
    if not id_first:
        body = {"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": message_id}
    return json.dumps(body).encode() + b"\n"


def test_long_lines_are_refused_for_their_id_and_the_rest_come_through():
    small = _message(1, 100)
    chunks = [small, _message(2, 3_000_000), _message("x-3", 3_000_000, id_first=False), small[:20], small[20:]]
    chunks.append(b'{"no id": "' + b"z" * 2_000_000 + b'"}\n')
    lines, refused, largest = _read_all(chunks, limit=1_000_000)
    assert lines == [small.decode(), small.decode()]
    assert [r[0] for r in refused] == [2, "x-3", None]
    assert all(size > 1_000_000 for _, size in refused)
    assert largest < 1_200_000  # never more than the limit and a read's worth


def test_a_line_just_past_the_limit_in_one_read_is_refused_too():
    lines, refused, _ = _read_all([_message(5, 1_010), _message(6, 10)], limit=1_000)
    assert [r[0] for r in refused] == [5] and len(lines) == 1


def test_a_last_line_without_its_newline_is_kept():
    lines, refused, _ = _read_all([b'{"jsonrpc": "2.0", "id": 1}'], limit=1_000)
    assert lines == ['{"jsonrpc": "2.0", "id": 1}'] and refused == []


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{', b"", 7),
        (b'{"jsonrpc": "2.0", "method": "x", "id": "abc", "params"', b"", "abc"),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":5', b'"}},"id":-9}', -9),
        (b'{"params":{"id":1', b'"x"}}', None),
    ],
)
def test_the_id_of_a_message_known_by_its_ends(head, tail, found):
    assert request_id(head, tail) == found
