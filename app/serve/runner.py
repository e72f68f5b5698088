"""Running the endpoint: in the foreground for `docdesk serve`, on a thread for the window.

The listening socket is opened here, before the model loads, so that a taken port or a
forbidden address is a one-line message at once, not a traceback after a minute of loading.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import threading

from app.desk.serve_settings import ServeRefused, ServeSettings, check_serve_settings

log = logging.getLogger(__name__)


def open_socket(settings: ServeSettings) -> socket.socket:
    """The listening socket for host:port; ServeRefused (one line) when it cannot be had."""
    check_serve_settings(settings)
    host = settings.host.strip("[]")
    try:
        family = socket.getaddrinfo(host, settings.port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, settings.port))
        sock.listen(128)
    except OSError as exc:
        hint = " (is another `docdesk serve` running? choose another --port)" if exc.errno == 98 else ""
        raise ServeRefused(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}{hint}") from None
    sock.set_inheritable(False)
    return sock


def base_url(settings: ServeSettings, sock: socket.socket | None = None) -> str:
    port = sock.getsockname()[1] if sock is not None else settings.port
    host = f"[{settings.host}]" if ":" in settings.host and not settings.host.startswith("[") else settings.host
    return f"http://{host}:{port}/v1"


def _server(desk, settings: ServeSettings, slots: int):
    import uvicorn

    from app.serve.guard import BACKLOG, KEEP_ALIVE_S, MAX_HEAD_BYTES, connection_limit, guarded_protocol
    from app.serve.openai_api import create_app

    config = uvicorn.Config(
        create_app(desk, settings, slots),
        log_config=None,  # DocDesk's own logging (stderr and the log file), never stdout
        log_level="info" if logging.getLogger().isEnabledFor(logging.DEBUG) else "warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,  # then answers still being written are stopped
        # Connections are bounded by app/serve/guard.py: a head deadline, and a cap that closes
        # the oldest idle connection for a new one. uvicorn's limit_concurrency is not used: it
        # counts those idle connections too and answers the real request 503 instead.
        http=guarded_protocol(connection_limit()),
        timeout_keep_alive=KEEP_ALIVE_S,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        backlog=BACKLOG,  # asyncio accepts up to this many at once before any is seen: within the fd reserve
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            # Before uvicorn's graceful wait: answers stop now instead of writing on for seconds.
            config.app.state.chat.request_stop()
            super().handle_exit(sig, frame)

    return Server(config)


def warm(desk) -> int:
    """Load the model and the embedder now, so the first editor request is as fast as the rest;
    returns how many answers the backend runs at once."""
    backend = desk.backend()
    backend.warm_up()
    desk.embedder.warm_up()
    return backend.max_concurrency


class _Terminated(Exception):
    pass


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM (systemd, `kill`) ends `docdesk serve` as Ctrl-C does: answers stopped, the
    library closed, exit 0, and no "stopped unexpectedly" notice on the next start."""

    def terminated(signum, frame):
        raise _Terminated

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve_until_stopped(desk, settings: ServeSettings) -> int:
    """`docdesk serve`: listen, load the model, serve until Ctrl-C (or SIGTERM)."""
    sock = open_socket(settings)
    try:
        backend = desk.backend()
        sys.stderr.write(f"docdesk: loading the model ({backend.name}: {backend.model}) …\n")
        slots = warm(desk)
        server = _server(desk, settings, slots)
        guarded = "a token is required" if settings.token else "no token (this machine only)"
        sys.stderr.write(
            f'docdesk: serving {desk.settings.library} at {base_url(settings, sock)} · model "docdesk" · '
            f"{slots} at once, {settings.queue} may wait · {guarded} · Ctrl-C stops\n"
        )
        with _terminate_as_interrupt():
            try:
                server.run(sockets=[sock])
            except (KeyboardInterrupt, _Terminated):  # uvicorn stops gracefully, then raises the signal again
                pass
        sys.stderr.write(f"docdesk: stopped serving ({server.config.app.state.chat.admission.summary()})\n")
    finally:
        sock.close()
    return 0


class BackgroundServer:
    """The same server for the window, on a thread of its own with its own event loop."""

    def __init__(self, desk, settings: ServeSettings) -> None:
        self.desk = desk
        self.settings = settings
        self.url: str | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self.error: str | None = None  # why it stopped, when it failed

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> str:
        """Listen now (ServeRefused says why not); the model loads on the server's thread."""
        sock = open_socket(self.settings)
        self.url = base_url(self.settings, sock)
        self._server = _server(self.desk, self.settings, self.desk.backend().max_concurrency)
        self._thread = threading.Thread(target=self._run, args=(sock,), name="docdesk-serve", daemon=True)
        self._thread.start()
        return self.url

    def _run(self, sock: socket.socket) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[sock]))
        except Exception as exc:  # the window stays up and says so
            log.error("the server for editors stopped", exc_info=exc)
            self.error = str(exc) or type(exc).__name__
        finally:
            sock.close()

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.config.app.state.chat.request_stop()
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = self._server = None
