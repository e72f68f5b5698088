"""A model caught in a loop is stopped and the echo cut, in a plain reply and a streamed answer."""

from __future__ import annotations

from engine.backends import ChatRequest
from engine.backends.fake import FakeBackend
from engine.generation.generate import complete

PHRASE = " ".join(f"word{i}" for i in range(40))  # well over the 120 characters a loop is known by
LOOPING = " ".join([PHRASE] * 6)


def test_a_loop_is_stopped_and_cut_where_it_began():
    backend = FakeBackend(LOOPING)
    request = ChatRequest([{"role": "user", "content": "Say it."}], max_tokens=1000)
    streamed: list[str] = []
    text = complete(backend, request, streamed.append)
    assert request.stats.finish_reason == "loop"  # said last, after the backend stopped
    assert text.strip() == PHRASE  # the first telling stays, the echo goes
    assert len(text) < len("".join(streamed)) < len(LOOPING) / 2  # stopped soon after the loop began
    assert backend.in_flight == 0
