"""Thinking kept apart: a reply's reasoning never becomes its answer, in each of the three ways a
thinking model writes it (tags in the text; the opening tag written by the template; reasoning
sent apart as reasoning_content), whatever pieces the stream is cut into, with a budget, and in
the answer path (citations, relevance, the chat store, summaries, follow-up rewriting)."""

from __future__ import annotations

import pytest

from engine.backends import ChatRequest, ReasoningPiece
from engine.backends.fake import FakeBackend
from engine.generation.generate import Reply, complete, pieces
from engine.generation.thinking import ThinkingSplitter, may_think, split

THOUGHT = "Let me think. The user asks for the value; passage [2] is irrelevant."
ANSWER = "The value is 42 [1]."


def request(**kw) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": "What is the value?"}], **kw)


def run(backend, req=None) -> tuple[Reply, list]:
    reply = Reply()
    got = list(pieces(backend, req or request(), reply))
    return reply, got


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 1000])
def test_tags_in_the_text_are_split_however_the_stream_is_cut(cut):
    text = f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"
    splitter = ThinkingSplitter()
    out = []
    for i in range(0, len(text), cut):
        out += splitter.feed(text[i : i + cut])
    out += splitter.finish("stop")
    assert splitter.reasoning.strip() == THOUGHT and splitter.answer == ANSWER
    assert "".join(p.text for p in out if not p.reasoning) == ANSWER
    assert "".join(p.text for p in out if p.reasoning).strip() == THOUGHT


def test_the_three_styles_give_the_same_answer_and_reasoning():
    tagged = FakeBackend(f"<think>{THOUGHT}</think>\n\n{ANSWER}")
    opened = FakeBackend(f"{THOUGHT}\n</think>\n\n{ANSWER}", thinks=True)  # the template wrote <think>
    apart = FakeBackend(ANSWER, reasoning=THOUGHT)  # reasoning_content deltas
    for backend in (tagged, opened, apart):
        reply, got = run(backend)
        assert (reply.answer, reply.reasoning) == (ANSWER, THOUGHT), backend
        assert "".join(p.text for p in got if not p.reasoning) == ANSWER
        assert not any(p.restart for p in got)
    assert all(isinstance(p, ReasoningPiece) for p in apart.stream_chat(request()) if "think" in p.lower())


def test_an_unexpected_closing_tag_takes_back_what_was_streamed_as_the_answer():
    backend = FakeBackend(f"{THOUGHT}</think>{ANSWER}")  # nobody said this model thinks
    reply, got = run(backend)
    assert (reply.answer, reply.reasoning) == (ANSWER, THOUGHT)
    restart = next(i for i, p in enumerate(got) if p.restart)
    after = got[restart + 1 :]
    assert "".join(p.text for p in after if p.reasoning) == THOUGHT
    assert "".join(p.text for p in after if not p.reasoning) == ANSWER


def test_a_model_that_may_think_but_does_not_still_answers():
    reply, got = run(FakeBackend(ANSWER, thinks=True))
    assert (reply.answer, reply.reasoning) == (ANSWER, "")
    assert got[-1].text == ANSWER and not got[-1].reasoning


def test_out_of_tokens_mid_thought_asks_again_without_thinking():
    backend = FakeBackend(f"<think>{THOUGHT} {THOUGHT}</think>{ANSWER}")
    req = request(max_tokens=12)
    reply, _ = run(backend, req)
    assert reply.answer == ANSWER and THOUGHT.startswith(reply.reasoning[:20])
    assert [r.thinking for r in backend.requests] == [None, False]


def test_a_thinking_budget_stops_the_thought_and_the_answer_still_comes():
    backend = FakeBackend(f"<think>{THOUGHT}</think>{ANSWER}")
    backend.thinking_budget = 5
    req = request(max_tokens=200)
    reply, _ = run(backend, req)
    assert reply.answer == ANSWER and backend.count_tokens(reply.reasoning) <= 6
    assert backend.requests[-1].thinking is False
    assert req.stats.reasoning_tokens >= 5


def test_reasoning_tokens_are_counted_apart():
    req = request()
    run(FakeBackend(ANSWER, reasoning=THOUGHT), req)
    assert 0 < req.stats.reasoning_tokens < req.stats.completion_tokens
    req = request()
    run(FakeBackend(f"<think>{THOUGHT}</think>{ANSWER}"), req)
    assert 0 < req.stats.reasoning_tokens < req.stats.completion_tokens


def test_thinking_off_is_asked_for_and_complete_never_returns_reasoning():
    backend = FakeBackend(f"<think>{THOUGHT}</think>{ANSWER}")
    assert complete(backend, request()) == ANSWER
    assert complete(backend, request(thinking=False)) == ANSWER
    assert may_think(FakeBackend(model="Qwen3-32B-Q4_K_M.gguf"), request())
    assert not may_think(FakeBackend(model="Qwen3-32B-Q4_K_M.gguf"), request(thinking=False))
    assert not may_think(FakeBackend(model="gemma-3-27b-it"), request())


def test_split_of_a_whole_reply():
    assert split(f"<think>{THOUGHT}</think>\n{ANSWER}") == (THOUGHT, ANSWER)
    assert split(f"{THOUGHT}</think>\n{ANSWER}", may_think=True) == (THOUGHT, ANSWER)
    assert split(ANSWER) == ("", ANSWER)
    assert split(f"<think>{THOUGHT}", finish_reason="length") == (THOUGHT, "")


# -- over the wire: an OpenAI-compatible server streaming in each style -------------------------
def _sse_server(chunks_for):
    """A local server speaking /v1/chat/completions as SSE: `chunks_for(body)` gives the deltas.
    It records every request body, so the test sees what DocDesk sent."""
    import json as _json
    import threading as _threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            body = _json.dumps({"object": "list", "data": [{"id": "qwen3-32b", "max_model_len": 8192}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            body = _json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for delta in chunks_for(body):
                chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                self.wfile.write(f"data: {_json.dumps(chunk)}\n\n".encode())
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            usage = {"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 25}}
            usage["usage"]["completion_tokens_details"] = {"reasoning_tokens": 17}
            for last in (end, usage):
                self.wfile.write(f"data: {_json.dumps(last)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    _threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def _words(text: str) -> list[str]:
    return [w + " " for w in text.split(" ")]


WIRE_STYLES = {
    "reasoning_content": lambda body: (
        [{"reasoning_content": w} for w in _words(THOUGHT)] + [{"content": w} for w in _words(ANSWER)]
    ),
    "tags": lambda body: [{"content": w} for w in ["<think>", *_words(THOUGHT), "</think>", *_words(ANSWER)]],
    "opened": lambda body: [{"content": w} for w in [*_words(THOUGHT), "</th", "ink>\n\n", *_words(ANSWER)]],
}


@pytest.mark.parametrize("style", WIRE_STYLES)
def test_an_openai_compatible_server_in_each_style(style):
    from engine.backends.openai_http import OpenAIBackend

    server, seen = _sse_server(WIRE_STYLES[style])
    backend = OpenAIBackend(f"http://127.0.0.1:{server.server_port}")
    try:
        req = request(top_p=0.8, seed=7, thinking=None)
        reply, _ = run(backend, req)
        assert reply.answer.strip() == ANSWER and reply.reasoning.strip() == THOUGHT
        assert req.stats.reasoning_tokens == 17  # as the server counted them
        assert seen[0]["top_p"] == 0.8 and seen[0]["seed"] == 7 and "chat_template_kwargs" not in seen[0]
        complete(backend, request(thinking=False))
        assert seen[-1]["chat_template_kwargs"] == {"enable_thinking": False}
        backend.thinking = True  # [llm] thinking = on
        complete(backend, request())
        assert seen[-1]["chat_template_kwargs"] == {"enable_thinking": True}
    finally:
        backend.close()
        server.shutdown()
