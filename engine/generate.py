"""Running one request to the end, with a guard against a model that repeats itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .backends import Backend, ChatRequest

LOOP_CHARS = 120


def repeats_itself(text: str) -> bool:
    """A model caught in a loop: its last LOOP_CHARS characters already appeared, verbatim."""
    return len(text) >= 2 * LOOP_CHARS and text.find(text[-LOOP_CHARS:]) < len(text) - LOOP_CHARS


def drop_echo(text: str) -> str:
    """The text up to where the loop began: the first telling stays, the echo goes."""
    return text[:-LOOP_CHARS]


def pieces(backend: Backend, request: ChatRequest) -> Iterator[str]:
    """The reply piece by piece as the backend writes it (raises Cancelled when its cancel event
    is set). A model caught in a loop is stopped: finish_reason "loop", the echo for `kept` to cut."""
    text = ""
    stream = backend.stream_chat(request)
    for piece in stream:
        text += piece
        yield piece
        if repeats_itself(text):
            stream.close()  # the backend stops first, so what its stats say last is why: the loop
            request.stats.finish_reason = "loop"
            return


def kept(text: str, request: ChatRequest) -> str:
    """The whole reply as it is kept: a loop cut where it began."""
    return drop_echo(text) if request.stats.finish_reason == "loop" else text


def complete(backend: Backend, request: ChatRequest, on_text: Callable[[str], None] | None = None) -> str:
    """The whole reply to a request, each piece passed to on_text as it comes (raises Cancelled
    when its cancel event is set); a loop is cut where it began."""
    text = ""
    for piece in pieces(backend, request):
        text += piece
        if on_text:
            on_text(piece)
    return kept(text, request)
