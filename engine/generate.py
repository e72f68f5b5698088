"""Running one request to the end, with a guard against a model that repeats itself."""

from __future__ import annotations

from .backends import Backend, ChatRequest

LOOP_CHARS = 120


def repeats_itself(text: str) -> bool:
    """A model caught in a loop: its last LOOP_CHARS characters already appeared, verbatim."""
    return len(text) >= 2 * LOOP_CHARS and text.find(text[-LOOP_CHARS:]) < len(text) - LOOP_CHARS


def drop_echo(text: str) -> str:
    """The text up to where the loop began: the first telling stays, the echo goes."""
    return text[:-LOOP_CHARS]


def complete(backend: Backend, request: ChatRequest) -> str:
    """The whole reply to a request (raises Cancelled when its cancel event is set)."""
    text = ""
    for piece in backend.stream_chat(request):
        text += piece
        if repeats_itself(text):
            request.stats.finish_reason = "loop"
            return drop_echo(text)
    return text
