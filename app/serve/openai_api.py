"""`docdesk serve`'s HTTP side: GET /v1/models and POST /v1/chat/completions on Starlette.

The chat endpoint is a plain ASGI handler rather than a Starlette view: it must be the only
reader of the connection's messages, so that it learns the moment a client goes away (while
queued, while the sources are searched, while the model writes) and stops that client's
generation; uvicorn says nothing of a gone client to a handler that only sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.desk.serve_settings import ServeSettings, is_loopback_literal
from app.serve.admission import Admission, Busy, Closing
from app.serve.answering import AnswerRun, api_error_for
from app.serve.openai_format import (
    MODEL,
    ApiError,
    Reply,
    decode_body,
    model_card,
    models_list,
    parse_call,
    sources_text,
)
from ingest.errors import LibraryError

log = logging.getLogger(__name__)

BODY_TIMEOUT_S = 30.0  # a request body must be whole within this once its head came


def _header_bytes(scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value
    return None


def _header(scope, name: bytes) -> str | None:
    value = _header_bytes(scope, name)
    return None if value is None else value.decode("latin-1")


def check_token(scope, token: str | None) -> None:
    """Raise 401 unless the request carries `Authorization: Bearer <token>` (when a token is set).
    Compared as bytes: a token with non-ASCII characters matches what a client sends as UTF-8."""
    if not token:
        return
    given = _header_bytes(scope, b"authorization") or b""
    scheme, _, value = given.partition(b" ")
    if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), token.encode("utf-8")):
        raise ApiError(
            401,
            "Incorrect or missing API key: this DocDesk server asks for `Authorization: Bearer <token>`",
            code="invalid_api_key",
        )


def _is_loopback_name(host: str) -> bool:
    """ "localhost", "127.0.0.1:8765", "[::1]:8765" and the like (a Host or an Origin's host)."""
    name = host.rsplit("]", 1)[0].lstrip("[") if host.startswith("[") else host.rsplit(":", 1)[0]
    return is_loopback_literal(name)


def check_caller(scope, settings: ServeSettings) -> None:
    """Who may call: never a web page (a foreign Origin: any site the user visits could otherwise
    make DocDesk answer, and read the answers by DNS rebinding); without a token, only requests
    that name this machine in their Host; with one, only those that carry it."""
    origin = _header(scope, b"origin")
    # "null" is a sandboxed frame, a file:// page or a redirect: a page all the same, and foreign.
    if origin is not None and not _is_loopback_name(origin.split("://", 1)[-1].split("/", 1)[0]):
        raise ApiError(403, f"requests from web pages ({origin}) are refused: DocDesk serves editors and programs")
    if not settings.token:
        host = _header(scope, b"host") or ""
        if host and not _is_loopback_name(host):
            raise ApiError(403, f"Host {host!r} is not this machine: without a token DocDesk answers only on 127.0.0.1")
    check_token(scope, settings.token)


async def send_json(send, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


async def read_body(receive, scope, limit: int, within_s: float = BODY_TIMEOUT_S) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes, and with 408 when it
    is not whole within `within_s` (a client that trickles it holds a connection for nothing)."""
    declared = _header(scope, b"content-length")
    too_big = ApiError(413, f"the request body is over the {limit:,}-byte limit", code="request_too_large")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_big
    try:
        async with asyncio.timeout(within_s):
            return await _body(receive, limit, too_big)
    except TimeoutError:
        raise ApiError(
            408, f"the request body did not arrive within {within_s:.0f} s", code="request_timeout"
        ) from None


async def _body(receive, limit: int, too_big: ApiError) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError
        body += message.get("body", b"")
        if len(body) > limit:
            raise too_big
        if not message.get("more_body"):
            return bytes(body)


class ChatCompletions:
    """POST /v1/chat/completions: the library's cited answer to the last user message."""

    def __init__(self, desk, settings: ServeSettings, admission: Admission) -> None:
        self.desk = desk
        self.settings = settings
        self.admission = admission
        self.live: set[AnswerRun] = set()  # for shutdown: every generation still running
        self.closing = False
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's, known from the first request

    def _resolve(self, ref: str) -> str:
        try:
            return self.desk.resolve(ref).id
        except LibraryError as exc:
            raise LookupError(str(exc)) from None

    async def __call__(self, scope, receive, send) -> None:
        self.loop = asyncio.get_running_loop()
        if scope["method"] != "POST":
            await send_json(send, 405, ApiError(405, "use POST for /v1/chat/completions").body(), {"allow": "POST"})
            return
        try:
            check_caller(scope, self.settings)
            body = await read_body(receive, scope, self.settings.max_body_bytes)
            payload = decode_body(body)
            call = await asyncio.to_thread(parse_call, payload, self._resolve)  # resolving reads the library
        except ApiError as error:
            await send_json(send, error.status, error.body(), error.headers)
            return
        except ConnectionAbortedError:
            return
        gone = asyncio.ensure_future(self._client_gone(receive))
        try:
            await self._answer(call, send, gone)
        finally:
            gone.cancel()

    async def _client_gone(self, receive) -> None:
        """Returns when the client disconnects (uvicorn's receive waits until it does)."""
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _answer(self, call, send, gone: asyncio.Future) -> None:
        async with contextlib.AsyncExitStack() as held:  # the slot, given back on the way out
            try:
                if not await self._admitted(held, gone):
                    return  # the client left while it waited: its place in the queue is gone with it
            except Busy as busy:
                error = ApiError(429, str(busy), "rate_limit_error", "rate_limit_exceeded")
                await send_json(send, 429, error.body(), {"retry-after": str(busy.retry_after_s)})
                return
            except Closing:
                await send_json(send, 503, shutting_down().body())
                return
            run = AnswerRun(self.desk, call).start()
            self.live.add(run)
            try:
                if call.stream:
                    await self._stream(run, call, send, gone)
                else:
                    await self._complete(run, call, send, gone)
            finally:
                run.cancel.set()  # a no-op when it finished; stops the model when it did not
                await run.finished.wait()  # the slot is free only once the model is
                self.live.discard(run)

    async def _admitted(self, held: contextlib.AsyncExitStack, gone: asyncio.Future) -> bool:
        """Wait for a slot unless the client goes first; True: the slot is held until `held`
        closes (raises Busy). A slot that comes in the same instant the client left is held
        too, and goes back when `held` closes."""
        entering = asyncio.ensure_future(held.enter_async_context(self.admission.slot()))
        await asyncio.wait([entering, gone], return_when=asyncio.FIRST_COMPLETED)
        if not entering.done():
            entering.cancel()
            await asyncio.gather(entering, return_exceptions=True)
        if entering.cancelled():
            return False
        entering.result()  # raises Busy
        return not gone.done()

    async def _complete(self, run: AnswerRun, call, send, gone: asyncio.Future) -> None:
        result = asyncio.ensure_future(run.result())
        await asyncio.wait([result, gone], return_when=asyncio.FIRST_COMPLETED)
        if not result.done():  # the client left: stop its generation
            result.cancel()
            return
        try:
            answer = result.result()
            if answer.cancelled and self.closing:
                raise shutting_down()
        except ApiError as error:
            await send_json(send, error.status, error.body())
            return
        await send_json(send, 200, Reply().completion(answer, call.sources_in_text))

    async def _stream(self, run: AnswerRun, call, send, gone: asyncio.Future) -> None:
        reply = Reply()
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def event(obj) -> None:
            data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
            await send({"type": "http.response.body", "body": f"data: {data}\n\n".encode(), "more_body": True})

        await event(reply.chunk({"role": "assistant", "content": ""}))
        pieces = run.pieces().__aiter__()
        while True:
            step = asyncio.ensure_future(pieces.__anext__())
            await asyncio.wait([step, gone], return_when=asyncio.FIRST_COMPLETED)
            if not step.done():  # the client left mid-answer
                step.cancel()
                return
            try:
                kind, piece = step.result()
            except StopAsyncIteration:
                break
            if kind == "reasoning":  # as llama-server and vLLM stream a thinking model's reasoning
                await event(reply.chunk({"reasoning_content": piece}))
            elif kind == "answer":
                await event(reply.chunk({"content": piece}))
            # "restart": what was sent cannot be taken back; the closing chunk's `answer` is the answer
        if self.closing and (run.answer is None or run.answer.cancelled):
            await event(shutting_down().body())  # cut short: the client must not take it for a whole answer
        elif run.answer is None:  # failed after the stream began: OpenAI's clients raise on an error event
            await event(api_error_body(run))
        else:
            if call.sources_in_text and (listed := sources_text(run.answer)):
                await event(reply.chunk({"content": listed}))
            await event(reply.last_chunk(run.answer))
            if call.include_usage:
                await event(reply.usage_chunk(run.answer))
        await event("[DONE]")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def stop_all(self) -> None:
        """Shutting down: the queue is sent away (503) and every model stops at its next token."""
        self.closing = True
        self.admission.close()
        for run in list(self.live):
            run.cancel.set()

    def request_stop(self) -> None:
        """stop_all() from any thread or a signal handler."""
        for run in list(self.live):
            run.cancel.set()  # at once: threading events may be set from anywhere
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.stop_all)


def shutting_down() -> ApiError:
    return ApiError(503, "DocDesk is shutting down: ask again once it is back", "server_error", "shutting_down")


def api_error_body(run: AnswerRun) -> dict:
    return api_error_for(run.error or RuntimeError("no answer")).body()


def create_app(desk, settings: ServeSettings, slots: int) -> Starlette:
    """The ASGI application; `slots` is how many answers run at once (the backend's max_concurrency)."""
    chat = ChatCompletions(desk, settings, Admission(slots, settings.queue))

    async def models(request: Request) -> JSONResponse:
        check_caller(request.scope, settings)
        return JSONResponse(models_list())

    async def model(request: Request) -> JSONResponse:
        check_caller(request.scope, settings)
        if request.path_params["model"] != MODEL:
            raise ApiError(404, f"The model '{request.path_params['model']}' does not exist", code="model_not_found")
        return JSONResponse(model_card())

    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = "invalid_request_error" if exc.status_code < 500 else "server_error"
        message = f"{request.method} {request.url.path}: {exc.detail}" + (
            " (DocDesk serves GET /v1/models and POST /v1/chat/completions)" if exc.status_code in (404, 405) else ""
        )
        return JSONResponse(ApiError(exc.status_code, message, kind).body(), status_code=exc.status_code)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        chat.stop_all()  # shutting down: every model still writing stops at its next token

    app = Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model:path}", model, methods=["GET"]),
            Route("/v1/chat/completions", chat, methods=None),
        ],
        exception_handlers={ApiError: api_error, HTTPException: http_error},
        lifespan=lifespan,
    )
    app.state.chat = chat
    return app
