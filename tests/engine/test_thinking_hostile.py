"""Hostile thinking streams (issue 39, round 3): splitting and the loop guard stay linear in the
stream's length, reasoning is capped in characters beside the token budget, an unclosed thought
is "the model thought but gave no answer" (not an empty success), an error event mid-stream is an
error, and nested tags or a style switch mid-answer stay in the reasoning. A failed answer keeps
its question's reply in the chat, marked failed, out of the history later questions use."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from engine.answer import Answerer
from engine.backends import ChatRequest, ReasoningPiece
from engine.backends.base import GenerationStats
from engine.backends.fake import FakeBackend
from engine.backends.openai_http import _pieces_of
from engine.chat import FAILED, ChatSession
from engine.errors import NoAnswer, ServerError
from engine.generation import generate
from engine.generation.generate import Reply, pieces
from engine.generation.thinking import ThinkingSplitter, split
from ingest.store.chats import ChatStore
from tests.engine.languages_library import languages_retriever

AUSTRIA = "What is the official language of Austria?"


class Chunked(FakeBackend):
    """Streams `text` in pieces of `size` characters, as fast as it can."""

    def __init__(self, text: str, size: int, **kw) -> None:
        super().__init__("", **kw)
        self.text, self.size = text, size

    def stream_chat(self, request):
        self.requests.append(request)
        for at in range(0, len(self.text), self.size):
            yield self.text[at : at + self.size]
        request.stats.finish_reason = "stop"


def varied(chars: int) -> str:
    """Reasoning that never repeats 120 characters (a counter in every sentence)."""
    out, n, size = [], 0, 0
    while size < chars:
        out.append(f"Step {n}: consider passage {n * 7919 % 100003} against claim {n * 104729 % 1000003}. ")
        size += len(out[-1])
        n += 1
    return "".join(out)[:chars]


@pytest.mark.parametrize("megabytes", [1, pytest.param(10, marks=pytest.mark.slow)])
def test_a_long_thought_in_8_byte_pieces_is_split_in_linear_time(megabytes):
    thought = varied(megabytes * 1_000_000)
    backend = Chunked(f"<think>{thought}</think>The answer [1].", 8)
    tracemalloc.start()
    started = time.perf_counter()
    reply = Reply()
    for _ in pieces(backend, ChatRequest([{"role": "user", "content": "q"}], max_tokens=10**9), reply):
        pass
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the cap stops the thought at MAX_REASONING_CHARS and asks again without thinking
    assert len(reply.reasoning) <= generate.MAX_REASONING_CHARS + 8
    assert seconds < 5 * megabytes and peak < 200 * 2**20


@pytest.mark.parametrize("megabytes", [1, pytest.param(10, marks=pytest.mark.slow)])
def test_the_splitter_alone_is_linear(megabytes):
    thought = varied(megabytes * 1_000_000)
    splitter = ThinkingSplitter()
    started = time.perf_counter()
    for at in range(0, len(thought), 8):
        splitter.feed(("<think>" if at == 0 else "") + thought[at : at + 8])
    splitter.feed("</think>done")
    splitter.finish()
    assert time.perf_counter() - started < 3 * megabytes  # ~0.9 s a megabyte on the 2-core machine
    assert splitter.reasoning == thought and splitter.answer == "done"


def test_a_loop_is_still_caught_in_a_long_answer():
    loop = "The same sentence comes again and again, word for word, as a model in a loop writes it. "
    backend = Chunked(varied(100_000) + loop * 50, 8)
    reply = Reply()
    request = ChatRequest([{"role": "user", "content": "q"}])
    list(pieces(backend, request, reply))
    assert request.stats.finish_reason == "loop" and reply.answer.count(loop) <= 3


def test_an_unclosed_thought_is_no_answer(tmp_path):
    retriever = languages_retriever(tmp_path)
    try:
        answerer = Answerer(retriever, FakeBackend("<think>I keep thinking about Austria and never stop"))
        with pytest.raises(NoAnswer, match="the model thought .* but gave no answer"):
            answerer.generate(answerer.prepare(AUSTRIA))
    finally:
        retriever.library.close()


def test_a_failed_answer_keeps_its_question_replied_as_failed(tmp_path):
    retriever = languages_retriever(tmp_path)
    try:
        store = ChatStore(retriever.library)
        session = ChatSession(Answerer(retriever, FakeBackend("<think>never closed")), store)
        with pytest.raises(NoAnswer):
            session.ask(AUSTRIA)
        messages = store.messages(session.chat.id)
        assert [m.role for m in messages] == ["user", "assistant"]
        assert messages[1].content.startswith(FAILED) and "gave no answer" in messages[1].content
        assert session.history() == []  # a failed turn is not history to answer from
        session.answerer = Answerer(retriever, FakeBackend("German [1]."))
        session.ask("And in Germany?")
        assert [t.answer for t in session.history()] == ["German [1]."]
    finally:
        retriever.library.close()


def test_an_error_event_mid_stream_is_an_error():
    stats = GenerationStats()
    assert _pieces_of({"choices": [{"delta": {"content": "Half an"}}]}, stats, 0) == ["Half an"]
    with pytest.raises(ServerError, match="reported an error after 3 tokens: out of memory"):
        _pieces_of({"error": {"message": "out of memory", "type": "server_error"}}, stats, 3)


def test_nested_tags_stay_in_the_reasoning():
    reasoning, answer = split("<think>outer <think>inner</think> still thinking</think>The answer.")
    assert answer == "The answer." and "inner" in reasoning and "still thinking" in reasoning


def test_a_style_switch_mid_answer_stays_in_the_reasoning():
    splitter = ThinkingSplitter()
    for piece in [ReasoningPiece("apart first"), "The ans", "wer <thi", "nk>tagged thought</think> goes on."]:
        splitter.feed(piece)
    splitter.finish()
    assert splitter.answer == "The answer goes on." and "tagged thought" in splitter.reasoning
    assert "apart first" in splitter.reasoning


def test_a_thought_reopened_mid_answer_is_reasoning_again():
    reasoning, answer = split("<think>first</think>Part one. <think>second thought</think>Part two.")
    assert answer == "Part one. Part two." and "second thought" in reasoning and "first" in reasoning
