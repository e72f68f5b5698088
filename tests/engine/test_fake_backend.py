"""The fake backend: the backend contract, and what tests script with it."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.backends import LlmSettings, create_backend
from engine.backends.base import ChatRequest
from engine.backends.fake import FakeBackend, tokens
from engine.errors import BackendUnavailable, Cancelled, ServerError
from tests.contracts.backend_contract import BackendContract


class TestFakeBackendContract(BackendContract):
    @pytest.fixture
    def backend(self):
        backend = self.make_backend()
        yield backend
        backend.close()

    def make_backend(self):
        return create_backend(LlmSettings(backend="fake"))

    def warm_state(self, backend) -> object:
        return backend.warm_ups

    def check_released(self, backend, state) -> None:
        assert backend.closed and state == 1

    def thinking_backends(self):
        thought, answer = "Sunlight scatters off the air, blue most of all.", "Rayleigh scattering makes it blue."
        return [
            FakeBackend(f"<think>{thought}</think>\n\n{answer}"),  # tagged in the text
            FakeBackend(f"{thought}\n</think>\n\n{answer}", thinks=True),  # the template opened <think>
            FakeBackend(answer, reasoning=thought),  # apart, as reasoning_content
        ]


def ask(text: str, **kwargs) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], **kwargs)


def test_the_tokenizer_loses_nothing_and_splits_cjk_by_character():
    text = "DocDesk needs Python 3.11, 驱动版本 too.\n\n- done "
    assert "".join(tokens(text)) == text
    assert tokens("驱动版本") == ["驱", "动", "版", "本"]
    assert tokens("hello  world.") == ["hello", "  world", "."]
    assert FakeBackend().count_tokens("") == 0


def test_replies_are_scripted_as_text_a_list_or_a_function():
    fixed = FakeBackend("Paris is the capital [1].")
    assert "".join(fixed.stream_chat(ask("Capital?"))) == "Paris is the capital [1]."
    turns = FakeBackend(["first", "second"])
    assert ["".join(turns.stream_chat(ask(q))) for q in ("a", "b", "c")] == ["first", "second", "second"]
    shouting = FakeBackend(lambda request: request.messages[-1]["content"].upper())
    assert "".join(shouting.stream_chat(ask("quiet please"))) == "QUIET PLEASE"
    assert [r.messages[-1]["content"] for r in shouting.requests] == ["quiet please"]


def test_the_default_reply_names_the_question():
    backend = FakeBackend()
    assert "".join(backend.stream_chat(ask("Which Python version does DocDesk need?"))) == (
        "Fake reply to: Which Python version does DocDesk need?"
    )


def test_stats_count_the_template_and_the_reply():
    backend = FakeBackend("one two three")
    request = ask("hello")
    assert "".join(backend.stream_chat(request)) == "one two three"
    assert request.stats.prompt_tokens == backend.count_tokens(backend.prompt(request.messages))
    assert request.stats.completion_tokens == 3 and request.stats.finish_reason == "stop"


def test_a_stop_string_split_over_tokens_is_cut():
    backend = FakeBackend("alpha beta\n\nQuestion: gamma")
    request = ask("x", stop=["\n\nQuestion:"])
    assert "".join(backend.stream_chat(request)) == "alpha beta"
    assert request.stats.finish_reason == "stop"


def test_no_more_than_max_concurrency_requests_run_at_once():
    backend = FakeBackend("a b c d e f", max_concurrency=2, token_delay=0.01)
    with ThreadPoolExecutor(5) as pool:
        texts = list(pool.map(lambda n: "".join(backend.stream_chat(ask(str(n)))), range(5)))
    assert texts == ["a b c d e f"] * 5
    assert backend.most_in_flight == 2 and backend.in_flight == 0


def test_cancel_from_another_thread_stops_a_slow_stream():
    backend = FakeBackend("word " * 200, token_delay=0.01)
    request = ask("long")
    threading.Timer(0.1, request.cancel.set).start()
    started = time.perf_counter()
    with pytest.raises(Cancelled):
        list(backend.stream_chat(request))
    assert time.perf_counter() - started < 1.5 and request.stats.completion_tokens < 100


def test_a_scripted_error_and_a_closed_backend_are_raised_plainly():
    down = FakeBackend(error=ServerError("the server at http://127.0.0.1:9 answered 500: boom"))
    with pytest.raises(ServerError, match="boom"):
        list(down.stream_chat(ask("hi")))
    backend = FakeBackend()
    backend.close()
    with pytest.raises(BackendUnavailable, match="closed"):
        list(backend.stream_chat(ask("hi")))


def test_settings_choose_the_model_name_context_and_concurrency():
    backend = create_backend(LlmSettings(backend="fake", model="tiny", context=1024, max_concurrency=3))
    assert (backend.name, backend.model, backend.context_window, backend.max_concurrency) == ("fake", "tiny", 1024, 3)
    assert backend.on_gpu is False
