"""A failing, slow or malformed side request (a follow-up's rewrite, a question's translation, the
judgement of passages) never costs the answer: it is skipped with a note and the answer goes on.

Against a real OpenAI-compatible HTTP server on loopback that answers the answer's request and
fails the side requests the way servers do (HTTP 500, a reset connection, a stall, a log-probability
of 1e308, top_logprobs that is not a list), and with the fake backend for Stop."""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engine.answer import Answerer, AnswerSettings, Turn
from engine.backends.fake import FakeBackend
from engine.backends.openai_http import OpenAIBackend
from engine.errors import Cancelled
from engine.retrieval import side_requests
from tests.engine.languages_library import languages_retriever

AUSTRIA_ZH = "奥地利的官方语言是什么？"
ANSWER = "German is the official language [1]."


def kind_of(body: dict) -> str:
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    if system.startswith("Translate the user's question"):
        return "translate"
    if system.startswith("You judge search results"):
        return "judge"
    if "stand-alone" in system.lower() or "standalone" in system.lower():
        return "rewrite"
    return "answer"


class Server:
    """What each kind of request gets: "ok", "500", "reset", "stall", "huge", "not-a-list"."""

    def __init__(self) -> None:
        self.behaviour: dict[str, str] = {}
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def send(self, payload: dict, status: int = 200) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.send({"object": "list", "data": [{"id": "standin-32b", "max_model_len": 8192}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                kind = kind_of(body)
                server.seen.append(kind)
                how = server.behaviour.get(kind, "ok")
                if how == "500":
                    return self.send({"error": {"message": "internal error"}}, 500)
                if how == "reset":
                    # linger 0: closing sends a reset; the descriptor itself, as the handler's files hold the socket
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    os.close(self.connection.detach())
                    self.close_connection = True
                    return None
                if how == "stall":
                    time.sleep(3)
                    return self.send({"error": {"message": "too late"}}, 500)
                if kind == "judge":
                    top = [{"token": "yes", "logprob": 1e308}, {"token": "no", "logprob": -1.0}]
                    logprobs = {"content": [{"token": "yes", "top_logprobs": "yes" if how == "not-a-list" else top}]}
                    if how == "ok":
                        logprobs = {"content": [{"token": "yes", "top_logprobs": [{"token": "yes", "logprob": -0.1}]}]}
                    return self.send({"choices": [{"message": {"content": "yes"}, "logprobs": logprobs}]})
                text = {"translate": "What is the official language of Austria?", "answer": ANSWER}.get(
                    kind, "What is the official language of Austria?"
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                    chunk = {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                done = {"choices": [{"delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True
                return None

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.http.handle_error = lambda *args: None  # the reset connection's handler fails to flush: meant
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    retriever = languages_retriever(tmp_path_factory.mktemp("side"))
    yield retriever
    retriever.library.close()


@pytest.fixture
def server():
    server = Server()
    yield server
    server.close()


def answer_through(retriever, server, **settings):
    backend = OpenAIBackend(server.url, "standin-32b", max_concurrency=4, read_timeout=30)
    answerer = Answerer(retriever, backend, AnswerSettings(translate_queries="on", **settings))
    prepared = answerer.prepare(AUSTRIA_ZH)
    return prepared, answerer.generate(prepared)


@pytest.mark.parametrize("how", ["500", "reset"])
def test_a_failing_translation_is_skipped_and_the_answer_comes(retriever, server, how):
    server.behaviour["translate"] = how
    prepared, answer = answer_through(retriever, server)
    assert answer.text.startswith("German is the official language")
    assert len(prepared.skipped) == 1 and prepared.skipped[0].startswith("translate skipped: ServerError")
    assert prepared.why()["skipped"] == prepared.skipped
    assert "answer" in server.seen


def test_a_stalled_translation_is_given_up_at_its_deadline(retriever, server, monkeypatch):
    monkeypatch.setitem(side_requests.DEADLINES, "translate", 0.3)
    monkeypatch.setattr(side_requests, "CPU_FACTOR", 1.0)
    server.behaviour["translate"] = "stall"
    started = time.perf_counter()
    prepared, answer = answer_through(retriever, server)
    assert answer.text.startswith("German is the official language")
    assert prepared.skipped == ["translate skipped: no reply within 0.3 s"]
    assert time.perf_counter() - started < 2.5  # the 3 s stall is not waited for


@pytest.mark.parametrize("how", ["500", "huge", "not-a-list"])
def test_a_failing_or_malformed_judgement_keeps_the_searchs_order(retriever, server, how):
    server.behaviour["judge"] = how
    prepared, answer = answer_through(retriever, server, rerank="on")
    assert answer.text.startswith("German is the official language")
    assert "judge" in server.seen
    names = [name for name, _ in prepared.stages]
    assert "rerank" in names and prepared.relevant
    # a judgement that fails is skipped; one that is only odd may be read as it can be, but never a traceback
    assert all(note.startswith("rerank skipped: ") for note in prepared.skipped)


def test_a_failing_rewrite_falls_back_on_the_question_with_the_one_before(retriever, server):
    server.behaviour["rewrite"] = "500"
    backend = OpenAIBackend(server.url, "standin-32b", max_concurrency=4, read_timeout=30)
    answerer = Answerer(retriever, backend, AnswerSettings())
    history = [Turn("What is the official language of Austria?", "German [1].", [])]
    prepared = answerer.prepare("And of Switzerland?", history=history)
    assert prepared.standalone == "What is the official language of Austria? And of Switzerland?"
    assert prepared.skipped and prepared.skipped[0].startswith("rewrite skipped: ServerError")
    assert answerer.generate(prepared).text.startswith("German is the official language")


def test_stop_during_a_side_request_stops_the_question(retriever):
    backend = FakeBackend("What is the official language of Austria?", token_delay=0.2)
    answerer = Answerer(retriever, backend, AnswerSettings(translate_queries="on"))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.perf_counter()
    with pytest.raises(Cancelled):
        answerer.prepare(AUSTRIA_ZH, cancel=cancel)
    assert time.perf_counter() - started < 8  # at the deadline at the latest, not after the reply


def test_run_side_passes_results_and_interrupts_through():
    notes: list[str] = []
    assert side_requests.run_side("translate", lambda c: ["x"], [], threading.Event(), 5, notes) == ["x"]

    def interrupted(_cancel):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        side_requests.run_side("translate", interrupted, [], threading.Event(), 5, notes)
    assert notes == []
