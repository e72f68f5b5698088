"""An answer for the server, computed on a thread of its own while the event loop serves others.

The engine is synchronous (retrieval, then a blocking token stream); the server is not. Each
request gets one thread that reads DocDesk.answer's stream (app/desk/answering.py), as every front
door does, and hands every text piece to the event loop as it comes. Setting `cancel` stops the
model at its next token.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from app.desk.answering import Answered, final_answer
from app.serve.openai_format import ApiError, AskCall
from engine.errors import BackendUnavailable, Cancelled, ContextTooLong, EngineError, ModelNotFound
from ingest.errors import IngestError

log = logging.getLogger(__name__)


def api_error_for(exc: BaseException) -> ApiError:
    """An engine or library failure as the client sees it (the traceback stays in the log)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, BackendUnavailable | ModelNotFound):
        return ApiError(503, f"the model is not available: {exc}", "server_error", "model_unavailable")
    if isinstance(exc, ContextTooLong):
        return ApiError(400, str(exc), "invalid_request_error", "context_length_exceeded")
    if isinstance(exc, EngineError | IngestError | OSError):
        return ApiError(500, str(exc), "server_error")
    log.error("answering failed", exc_info=exc)
    return ApiError(500, f"internal error ({type(exc).__name__}); see DocDesk's log", "server_error")


REASONING, ANSWER, RESTART = "reasoning", "answer", "restart"


class AnswerRun:
    """One answer on its own thread. `pieces()` yields (kind, text) as it streams: kind
    "answer", "reasoning" (a thinking model's, for reasoning_content) or "restart" (what was
    streamed must be dropped: only a display can); `answer` and `error` hold how it ended;
    `finished` is set once the thread is done with the model."""

    def __init__(self, desk, call: AskCall) -> None:
        self._desk = desk
        self._call = call
        self.cancel = threading.Event()
        self.answer: Answered | None = None
        self.error: BaseException | None = None
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self.finished = asyncio.Event()
        self._thread = threading.Thread(target=self._run, name="docdesk-serve-answer", daemon=True)

    def start(self) -> AnswerRun:
        self._thread.start()
        return self

    def _to_loop(self, callback, *args) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the server's loop is gone (shutting down): nobody is listening
            self.cancel.set()

    def _run(self) -> None:
        try:
            call = self._call
            # Not saved as a chat: the client keeps the conversation (it sends the history with
            # every request), as OpenAI's API expects.
            events = self._desk.answer(
                call.question,
                call.doc_ids,
                save_chat=False,
                history=call.history,
                cancel=self.cancel,
                title=f"served: {call.question[:60]}",
                sampling=call.sampling,
            )
            put = self._queue.put_nowait
            self.answer = final_answer(
                events,
                lambda piece: self._to_loop(put, (ANSWER, piece)),
                lambda piece: self._to_loop(put, (REASONING, piece)),
                lambda: self._to_loop(put, (RESTART, "")),
            )
        except Cancelled:
            self.error = Cancelled("the client went away")
        except BaseException as exc:  # reported to the client; the server goes on
            self.error = exc
        finally:
            self._to_loop(self._queue.put_nowait, None)
            self._to_loop(self.finished.set)

    async def pieces(self):
        """(kind, text) as the model writes; ends when the thread is done."""
        while (piece := await self._queue.get()) is not None:
            yield piece

    async def result(self) -> Answered:
        """The finished answer (raises ApiError when it failed)."""
        await self.finished.wait()
        if self.answer is None:
            raise api_error_for(self.error or RuntimeError("no answer"))
        return self.answer
