"""app/serve/guard.py on a real uvicorn server and real sockets: a request head has a deadline that
trickled bytes do not move, past the connection cap the connection that has waited longest goes
and a new one gets in, a request being answered is never closed for room; and the checks of
app/serve/openai_api.py that go with them (Origin: null, a body that never ends).

The full attack (1,100 half-open connections under a 1,024 open-file limit, `docdesk serve` in
its own process) is in tests/reliability/attacks_service.py.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from contextlib import contextmanager

import httpx
import pytest
import uvicorn

from app.desk.serve_settings import ServeSettings
from app.serve.guard import connection_limit, guarded_protocol
from app.serve.openai_api import check_caller, read_body
from app.serve.openai_format import ApiError

# A request for /slow says when it is being answered, then waits until the test lets it finish.
SLOW_ANSWERING = threading.Event()
SLOW_MAY_FINISH = threading.Event()


async def _app(scope, receive, send) -> None:
    """Answers 200 "ok"; a request for /slow only once SLOW_MAY_FINISH is set (10 s at most)."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/slow":
        SLOW_ANSWERING.set()
        deadline = time.monotonic() + 10
        while not SLOW_MAY_FINISH.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@contextmanager
def guarded(max_connections: int = 8, head_timeout_s: float = 0.6):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        _app,
        http=guarded_protocol(max_connections, head_timeout_s),
        log_config=None,
        lifespan="off",
        timeout_keep_alive=1,
        backlog=128,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    assert _wait(lambda: server.started, 10)
    try:
        yield sock.getsockname()
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def _half_open(address, count: int) -> list[socket.socket]:
    held = []
    for _ in range(count):
        sock = socket.create_connection(address, timeout=5)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        held.append(sock)
    return held


def _closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_a_head_trickled_a_byte_at_a_time_is_closed_at_its_deadline():
    with guarded(head_timeout_s=0.6) as address:
        sock = socket.create_connection(address, timeout=5)
        started = time.monotonic()
        sock.sendall(b"GET / HTTP/1.1\r\n")
        closed_at = None
        for _ in range(40):  # a byte every 50 ms: 2 s of it, were it let go on
            time.sleep(0.05)
            try:
                sock.sendall(b"X")
            except OSError:
                closed_at = time.monotonic() - started
                break
            if _closed(sock):
                closed_at = time.monotonic() - started
                break
            sock.setblocking(True)
        # Closed while it still trickled (a byte that moved the deadline would keep it open to the
        # end), and not before its deadline; only a bound a loaded machine cannot break.
        assert closed_at is not None and closed_at >= 0.5, closed_at
        sock.close()


def test_a_silent_connection_is_closed_and_a_whole_request_is_answered():
    with guarded(head_timeout_s=0.6) as address:
        silent = socket.create_connection(address, timeout=5)
        assert httpx.get(f"http://{address[0]}:{address[1]}/", timeout=5).text == "ok"
        assert _wait(lambda: _closed(silent), 2.0)
        silent.close()


def test_past_the_cap_the_longest_waiting_goes_and_a_new_request_gets_in():
    with guarded(max_connections=8, head_timeout_s=30) as address:
        held = _half_open(address, 20)
        # In at once: within its 5 s timeout, where waiting for a held head's deadline takes 30 s.
        reply = httpx.get(f"http://{address[0]}:{address[1]}/", timeout=5)
        assert reply.text == "ok"
        assert _wait(lambda: sum(_closed(s) for s in held) >= 20 - 7, 2.0)
        assert not any(_closed(s) for s in held[-5:])  # the newest stay: the oldest went first
        for sock in held:
            sock.close()


def test_a_request_being_answered_is_never_closed_for_room():
    with guarded(max_connections=4, head_timeout_s=30) as address:
        url = f"http://{address[0]}:{address[1]}"
        result: list[httpx.Response] = []
        SLOW_ANSWERING.clear()
        SLOW_MAY_FINISH.clear()
        slow = threading.Thread(target=lambda: result.append(httpx.get(f"{url}/slow", timeout=20)))
        slow.start()
        assert SLOW_ANSWERING.wait(10)  # its head is in: it is being answered
        held = _half_open(address, 12)  # past the cap of 4: idle connections go for room, never it
        SLOW_MAY_FINISH.set()
        slow.join(20)
        assert result and result[0].text == "ok"
        for sock in held:
            sock.close()


def test_the_cap_stays_below_the_open_file_limit():
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_limit(10**9) <= soft - 256 or soft == resource.RLIM_INFINITY
    assert connection_limit(5) == 5


@pytest.mark.parametrize("origin", ["null", "https://evil.example", "file://", "http://192.168.1.5:8765"])
def test_origin_null_and_other_machines_are_foreign(origin):
    scope = {"headers": [(b"origin", origin.encode()), (b"host", b"127.0.0.1:8765"), (b"content-type", b"text/plain")]}
    with pytest.raises(ApiError) as refused:
        check_caller(scope, ServeSettings())
    assert refused.value.status == 403
    check_caller({"headers": [(b"origin", b"http://localhost:3000"), (b"host", b"127.0.0.1")]}, ServeSettings())


def test_a_body_that_never_ends_is_408():
    async def trickle():
        await asyncio.sleep(0.1)
        return {"type": "http.request", "body": b"{", "more_body": True}

    with pytest.raises(ApiError) as late:
        asyncio.run(read_body(trickle, {"headers": []}, 1_000_000, within_s=0.5))
    assert late.value.status == 408
