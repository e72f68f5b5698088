"""`docdesk serve` against the official `openai` client: a real uvicorn server on a loopback
port, the real library and retrieval, and the fake backend (whose replies say which request they
answer, and which records every request, so a test sees what the model was asked). The library is
embedded by the stand-in embedder (tests/standin_embedder.py): what is served is under test here,
not how well a model ranks; the command's own tests start `docdesk` as a child (`subprocess`).

The load tests (50 clients) are in tests/app/test_serve_load.py; the added latency is measured
by tests/bench/bench_serve.py.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai
import pytest

from app.desk.serve_settings import ServeSettings
from app.serve.admission import Admission, Busy
from app.serve.openai_format import ApiError, parse_call
from app.serve.runner import BackgroundServer
from engine.backends.fake import FakeBackend
from engine.errors import BackendUnavailable

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "assets" / "samples" / "docdesk-guide.pdf"
GUIDE_ZH = ROOT / "assets" / "samples" / "docdesk-guide-zh.pdf"
QUESTION = "Which Python version does DocDesk need?"
# 400 different words: a reply that repeats itself is cut short as a loop (engine/generation/generate.py)
LONG_REPLY = " ".join("word" + chr(97 + i % 26) + chr(97 + i // 26) for i in range(400))


@pytest.fixture(scope="module")
def library_folder(tmp_path_factory, standin_embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("served-library")
    library = Library(folder)
    report = Ingestor(library, standin_embedder, read_in_subprocess=False).add([GUIDE, GUIDE_ZH])
    assert len(report.added) == 2
    library.close()
    return folder


def desk_with(folder: Path, backend, embedder):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    return DocDesk(Settings(library=folder), backend=backend, embedder=embedder)


@contextmanager
def served(folder, embedder, backend, **settings):
    """The server on its thread, started; stopped and its façade closed at the end."""
    desk = desk_with(folder, backend, embedder)
    server = BackgroundServer(desk, ServeSettings(port=0, **settings))
    server.start()
    try:
        yield server
    finally:
        server.stop()
        desk.close()


@contextmanager
def serving(folder, embedder, backend=None, **settings):
    backend = backend or FakeBackend(max_concurrency=4)
    with served(folder, embedder, backend, **settings) as server:
        yield server.url, backend


def waiting(server: BackgroundServer) -> int:
    """How many requests wait in the server's admission queue (read to wait on, never set)."""
    return server._server.config.app.state.chat.admission.waiting


def client(url: str, token: str = "unused", **options) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key=token, max_retries=0, **options)


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


# -- the OpenAI protocol, with the official client -------------------------------------------------
def test_models_list_and_a_cited_answer_streamed_and_not(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, backend):
        api = client(url)
        assert [m.id for m in api.models.list()] == ["docdesk"]

        done = api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])
        text = done.choices[0].message.content
        assert done.choices[0].finish_reason == "stop" and done.model == "docdesk"
        assert text.startswith("Fake reply to:") and QUESTION.rstrip("?") in text
        assert "[1]" in text and "\n\nSources:\n[1] DocDesk User Guide, p. " in text  # which page: a ranking
        sources = done.model_extra["sources"]
        assert sources and {"n", "title", "path", "page"} <= set(sources[0])
        assert sources[0]["n"] == 1 and sources[0]["title"] == "DocDesk User Guide"
        assert sources[0]["path"] == str(GUIDE) and sources[0]["page"] >= 1
        assert done.usage.prompt_tokens > 100 and done.usage.completion_tokens > 0
        # The model was asked with DocDesk's prompt, the guide quoted in it.
        asked = "\n".join(m["content"] for m in backend.requests[-1].messages)
        assert "3.11" in asked and QUESTION in asked

        stream = api.chat.completions.create(
            model="docdesk",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert streamed.startswith("Fake reply to:") and "\n\nSources:\n[1] DocDesk User Guide" in streamed
        last = [c for c in chunks if c.choices][-1]
        assert last.choices[0].finish_reason == "stop" and last.model_extra["sources"][0]["title"] == "DocDesk User Guide"
        assert chunks[-1].usage.completion_tokens == done.usage.completion_tokens
        assert len({c.id for c in chunks}) == 1


def test_the_stream_is_server_sent_events_ending_with_done(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, _):
        body = {"model": "docdesk", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
        with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=30) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = [line for line in response.iter_lines() if line]
        assert all(line.startswith("data: ") for line in lines)
        assert lines[-1] == "data: [DONE]"
        objects = [json.loads(line[6:]) for line in lines[:-1]]
        assert objects[0]["choices"][0]["delta"]["role"] == "assistant"
        assert all(o["object"] == "chat.completion.chunk" for o in objects)


def test_plain_text_without_the_sources_list_when_asked(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, _):
        done = client(url).chat.completions.create(
            model="docdesk",
            messages=[{"role": "user", "content": QUESTION}],
            extra_body={"docdesk": {"sources_in_text": False}},
        )
        assert "Sources:" not in done.choices[0].message.content and done.model_extra["sources"]


def test_earlier_messages_are_the_history_of_a_follow_up(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, backend):
        api = client(url)
        first = api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])
        answer = first.choices[0].message.content
        follow = api.chat.completions.create(
            model="docdesk",
            messages=[
                {"role": "system", "content": "You are a helpful coding assistant."},  # an editor's own prompt
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": [{"type": "text", "text": "And what about Windows?"}]},
            ],
        )
        assert follow.choices[0].message.content.startswith("Fake reply to:")
        rewrite = backend.requests[-2]  # a follow-up is first rewritten to stand alone, with the history
        said = "\n".join(m["content"] for m in rewrite.messages)
        assert QUESTION in said and "And what about Windows?" in said
        assert "Fake reply to:" in said and "Sources:" not in said  # the answer, without the list DocDesk added
        assert "helpful coding assistant" not in "\n".join(m["content"] for m in backend.requests[-1].messages)


def test_doc_ids_restrict_the_search(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, _):
        api = client(url)
        docs = {d.title: d.id for d in desk_with(library_folder, None, standin_embedder).documents()}
        zh = next(i for t, i in docs.items() if t != "DocDesk User Guide")
        done = api.chat.completions.create(
            model="docdesk", messages=[{"role": "user", "content": QUESTION}], extra_body={"docdesk": {"doc_ids": [zh[:12]]}}
        )
        assert done.model_extra["sources"] and {s["doc_id"] for s in done.model_extra["sources"]} == {zh}
        with pytest.raises(openai.NotFoundError) as missing:
            api.chat.completions.create(
                model="docdesk", messages=[{"role": "user", "content": QUESTION}], extra_body={"docdesk": {"doc_ids": ["feedbeef"]}}
            )
        assert missing.value.body["code"] == "document_not_found" and "feedbeef" in missing.value.body["message"]


def test_bad_requests_get_openai_error_objects(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder, max_body_bytes=10_000) as (url, backend):
        api = client(url)
        with pytest.raises(openai.NotFoundError) as unknown:
            api.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
        assert unknown.value.body["code"] == "model_not_found" and "docdesk" in unknown.value.body["message"]
        with pytest.raises(openai.BadRequestError) as no_question:
            api.chat.completions.create(model="docdesk", messages=[{"role": "assistant", "content": "hi"}])
        assert no_question.value.body["param"] == "messages"

        def post(content: bytes, **headers) -> httpx.Response:
            return httpx.post(f"{url}/chat/completions", content=content, headers=headers, timeout=10)

        malformed = post(b'{"model": "docdesk", "messages": [')
        assert malformed.status_code == 400 and malformed.json()["error"]["type"] == "invalid_request_error"
        assert "parse the JSON" in malformed.json()["error"]["message"]
        assert post(b"[1, 2]").status_code == 400
        big = post(json.dumps({"model": "docdesk", "messages": [{"role": "user", "content": "x" * 20_000}]}).encode())
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
        chunked = httpx.post(f"{url}/chat/completions", content=iter([b"x" * 6000, b"y" * 6000]), timeout=10)
        assert chunked.status_code == 413  # no Content-Length: counted as it arrives
        wrong_method = httpx.get(f"{url}/chat/completions", timeout=10)
        assert wrong_method.status_code == 405 and "error" in wrong_method.json()
        nowhere = httpx.get(f"{url}/completions", timeout=10)
        assert nowhere.status_code == 404 and "/v1/chat/completions" in nowhere.json()["error"]["message"]
        assert backend.requests == []  # none of them reached the model


def test_a_token_is_required_when_set(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder, token="s3cret-team-token") as (url, _):
        for wrong in ("", "guess"):
            with pytest.raises(openai.AuthenticationError) as refused:
                client(url, token=wrong or "x", default_headers={} if wrong else {"Authorization": ""}).models.list()
            assert refused.value.body["code"] == "invalid_api_key"
        assert httpx.post(f"{url}/chat/completions", json={}, timeout=10).status_code == 401
        api = client(url, token="s3cret-team-token")
        assert [m.id for m in api.models.list()] == ["docdesk"]
        done = api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])
        assert done.model_extra["sources"]


def test_a_failing_model_is_an_error_object_streamed_or_not(library_folder, standin_embedder):
    down = FakeBackend(error=BackendUnavailable("the server at 127.0.0.1:8000 is not running"))
    with serving(library_folder, standin_embedder, backend=down) as (url, _):
        api = client(url)
        with pytest.raises(openai.InternalServerError) as failed:
            api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])
        assert failed.value.status_code == 503 and "not running" in failed.value.body["message"]
        with pytest.raises(openai.APIError, match="not running"):
            list(api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}], stream=True))
        assert [m.id for m in api.models.list()] == ["docdesk"]  # the server is still up


# -- clients that leave, and more clients than the model takes ----------------------------------------
def test_a_client_that_disconnects_mid_stream_stops_its_generation(library_folder, standin_embedder):
    slow = FakeBackend(LONG_REPLY, token_delay=0.02)
    with serving(library_folder, standin_embedder, backend=slow) as (url, backend):
        body = {"model": "docdesk", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
        with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=30) as response:
            for line in response.iter_lines():
                if "word" in line:  # the answer has begun
                    break
        assert wait_until(lambda: backend.in_flight == 0, 5)
        request = backend.requests[-1]
        assert request.cancel.is_set() and request.stats.finish_reason == "cancelled"
        assert request.stats.completion_tokens < 100  # stopped well before its 400 tokens


def test_a_client_that_gives_up_waiting_stops_its_generation(library_folder, standin_embedder):
    slow = FakeBackend(LONG_REPLY, token_delay=0.02)
    with serving(library_folder, standin_embedder, backend=slow) as (url, backend):
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{url}/chat/completions",
                json={"model": "docdesk", "messages": [{"role": "user", "content": QUESTION}]},
                timeout=httpx.Timeout(10, read=1.0),
            )
        assert wait_until(lambda: backend.requests and backend.in_flight == 0, 5)
        assert backend.requests[-1].cancel.is_set() and backend.requests[-1].stats.completion_tokens < 100


def test_past_the_queue_requests_get_429_with_retry_after(library_folder, standin_embedder):
    backend = FakeBackend(LONG_REPLY, token_delay=0.005, max_concurrency=1)
    with served(library_folder, standin_embedder, backend, queue=1) as server:
        url = server.url
        results: list = [None, None]

        def ask(i: int) -> None:
            results[i] = client(url).chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        threads[0].start()
        assert wait_until(lambda: backend.in_flight == 1)
        threads[1].start()
        assert wait_until(lambda: waiting(server) == 1)  # the queue's one place is taken
        with pytest.raises(openai.RateLimitError) as busy:
            client(url).chat.completions.create(model="docdesk", messages=[{"role": "user", "content": QUESTION}])
        assert int(busy.value.response.headers["retry-after"]) >= 1
        assert busy.value.body["code"] == "rate_limit_exceeded" and "retry in" in busy.value.body["message"]
        for t in threads:
            t.join(60)
        assert all(r is not None and r.choices[0].message.content.startswith("word") for r in results)
        assert backend.most_in_flight == 1 and len(backend.requests) == 2


def test_the_admission_queue_hands_slots_on_in_order_and_forgets_who_left():
    async def scenario() -> list[str]:
        admission = Admission(slots=1, queue=2)
        order: list[str] = []
        release = asyncio.Event()

        async def hold(name: str, wait_for: asyncio.Event | None = None) -> None:
            async with admission.slot():
                order.append(name)
                if wait_for is not None:
                    await wait_for.wait()

        first = asyncio.create_task(hold("first", release))
        await asyncio.sleep(0)
        leaver = asyncio.create_task(hold("leaver"))
        second = asyncio.create_task(hold("second"))
        await asyncio.sleep(0)
        assert admission.running == 1 and admission.waiting == 2
        with pytest.raises(Busy) as busy:
            async with admission.slot():
                pass
        assert busy.value.retry_after_s >= 1
        leaver.cancel()  # a client that went away while queued
        await asyncio.sleep(0)
        assert admission.waiting == 1
        release.set()
        await asyncio.gather(first, second)
        assert admission.running == 0 and admission.waiting == 0
        return order

    assert asyncio.run(scenario()) == ["first", "second"]


def test_the_chat_request_rules():
    def resolve(ref: str) -> str:
        if ref.startswith("ab"):
            return "abcdef"
        raise LookupError(f"no document {ref!r} in the library")

    call = parse_call(
        {
            "model": "docdesk",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "first"},
                {"role": "user", "content": "still first"},
                {"role": "assistant", "content": "one [1]\n\nSources:\n[1] A, p. 1 (/a.pdf)"},
                {"role": "tool", "content": "ignored"},
                {"role": "user", "content": [{"type": "text", "text": "and then?"}, {"type": "image_url"}]},
            ],
            "docdesk": {"doc_ids": ["ab12"]},
        },
        resolve,
    )
    assert call.question == "and then?" and call.doc_ids == ["abcdef"] and not call.stream
    assert [(t.question, t.answer) for t in call.history] == [("first\nstill first", "one [1]")]
    for payload, status in [
        ([], 400),
        ({"messages": [{"role": "user", "content": "q"}]}, 400),
        ({"model": "llama3", "messages": [{"role": "user", "content": "q"}]}, 404),
        ({"model": "docdesk", "messages": []}, 400),
        ({"model": "docdesk", "messages": [{"role": "user", "content": "q"}], "stream": "yes"}, 400),
        ({"model": "docdesk", "messages": [{"role": "user", "content": "q"}], "docdesk": {"doc_ids": ["zz"]}}, 404),
        ({"model": "docdesk", "messages": [{"role": "user", "content": 5}]}, 400),
    ]:
        with pytest.raises(ApiError) as refused:
            parse_call(payload, resolve)
        assert refused.value.status == status


# -- the command -------------------------------------------------------------------------------------
def _docdesk(*args: str, tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app", "--library", str(tmp_path / "lib"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.subprocess
def test_serving_beyond_this_machine_needs_a_token(tmp_path):
    refused = _docdesk("serve", "--host", "0.0.0.0", tmp_path=tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "without a token" in refused.stderr and "--token" in refused.stderr


@pytest.mark.subprocess
def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = _docdesk("serve", "--port", str(port), tmp_path=tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in refused.stderr and "--port" in refused.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_stops_cleanly_on_ctrl_c_and_sigterm(tmp_path, stop):
    """As a terminal or systemd stops it: exit 0, and the next start reports no crash."""
    from tests.bench.load_serve import Server

    config = tmp_path / "config.toml"
    config.write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")
    server = Server(tmp_path / "lib", config=config, queue=2)
    assert [m.id for m in client(server.url).models.list()] == ["docdesk"]
    server.process.send_signal(stop)
    assert server.process.wait(30) == 0
    assert wait_until(lambda: any("stopped serving" in line for line in server.log))  # read by a thread
    after = _docdesk("list", tmp_path=tmp_path)
    assert after.returncode == 0 and "unexpectedly" not in after.stderr


def test_a_client_that_leaves_the_queue_frees_its_place(library_folder, standin_embedder):
    backend = FakeBackend(LONG_REPLY, token_delay=0.005, max_concurrency=1)
    with served(library_folder, standin_embedder, backend, queue=1) as server:
        url = server.url
        body = {"model": "docdesk", "messages": [{"role": "user", "content": QUESTION}]}
        running = threading.Thread(target=lambda: httpx.post(f"{url}/chat/completions", json=body, timeout=60))
        running.start()
        assert wait_until(lambda: backend.in_flight == 1)
        with pytest.raises(httpx.ReadTimeout):  # queued behind it, then gone
            httpx.post(f"{url}/chat/completions", json=body, timeout=httpx.Timeout(10, read=0.3))
        assert wait_until(lambda: waiting(server) == 0)  # the server saw it leave
        third = httpx.post(f"{url}/chat/completions", json=body, timeout=60)  # queues in the freed place
        assert third.status_code == 200, third.text
        running.join(60)
        assert len(backend.requests) == 2  # the one that left never reached the model


# -- what an attack on the server found ------------------------------------------------------------------
def test_bodies_python_cannot_keep_are_400_and_the_server_goes_on(library_folder, standin_embedder):
    with serving(library_folder, standin_embedder) as (url, _):

        def post(content: bytes) -> httpx.Response:
            return httpx.post(f"{url}/chat/completions", content=content, timeout=30)

        question = b'"messages": [{"role": "user", "content": "Which Python version does DocDesk need?"}]'
        for bad in [
            b'{"model": "docdesk", "messages": [{"role": "user", "content": "\\ud800"}]}',  # a lone surrogate
            b'{"model": "\\ud800", ' + question + b"}",
            b'{"model": "docdesk", "docdesk": {"doc_ids": ["\\ud800"]}, ' + question + b"}",
            b'{"model": "docdesk", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # nesting
            b'{"model": "docdesk", "max_tokens": ' + b"9" * 5000 + b", " + question + b"}",  # past int's digit limit
            b"\xff\xfe{}",
        ]:
            refused = post(bad)
            assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error", bad[:60]
        assert post(b'{"model": "docdesk", ' + question + b"}").status_code == 200


def test_a_question_with_a_lone_surrogate_does_not_break_the_crash_marker(tmp_path):
    import os

    from app.desk.crash import CrashGuard

    guard = CrashGuard()
    guard.start(tmp_path)
    with guard.doing("answering", question="\ud800"):
        pass
    marker = tmp_path / f"session-{os.getpid()}.json"
    assert json.loads(marker.read_text())["activity"] == "idle"
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    guard.stop()


def test_user_messages_in_a_row_at_the_end_are_one_question():
    call = parse_call(
        {"model": "docdesk", "messages": [{"role": "user", "content": "Which Python?"}, {"role": "user", "content": "Briefly."}]},
        lambda ref: ref,
    )
    assert call.question == "Which Python?\nBriefly." and call.history == []
    with pytest.raises(ApiError):
        parse_call(
            {"model": "docdesk", "messages": [{"role": "user", "content": "q"}], "docdesk": {"sources_in_text": "false"}},
            lambda ref: ref,
        )
    for extension in ([], 0, "x"):
        with pytest.raises(ApiError):
            parse_call({"model": "docdesk", "messages": [{"role": "user", "content": "q"}], "docdesk": extension}, lambda ref: ref)


def test_web_pages_and_foreign_host_names_are_refused(library_folder, standin_embedder):
    body = {"model": "docdesk", "messages": [{"role": "user", "content": QUESTION}]}
    with serving(library_folder, standin_embedder) as (url, backend):
        page = httpx.post(f"{url}/chat/completions", json=body, headers={"Origin": "https://evil.example"}, timeout=10)
        assert page.status_code == 403 and "web pages" in page.json()["error"]["message"]
        sandboxed = httpx.post(  # a sandboxed frame or a file:// page: a simple request, no preflight
            f"{url}/chat/completions",
            content=json.dumps(body),
            headers={"Origin": "null", "Content-Type": "text/plain"},
            timeout=10,
        )
        assert sandboxed.status_code == 403
        rebound = httpx.post(f"{url}/chat/completions", json=body, headers={"Host": "evil.example:8765"}, timeout=10)
        assert rebound.status_code == 403 and "not this machine" in rebound.json()["error"]["message"]
        assert httpx.get(f"{url}/models", headers={"Host": "evil.example"}, timeout=10).status_code == 403
        assert backend.requests == []
        local_page = httpx.post(f"{url}/chat/completions", json=body, headers={"Origin": "http://localhost:3000"}, timeout=30)
        assert local_page.status_code == 200
        assert client(url).models.retrieve("docdesk").id == "docdesk"
    with serving(library_folder, standin_embedder, token="sécret") as (url, _):  # a token: any Host name (a LAN address)
        named = httpx.get(
            f"{url}/models", headers={"Host": "teambox.lan:8765", "Authorization": "Bearer sécret".encode()}, timeout=10
        )
        assert named.status_code == 200  # a non-ASCII token, sent as UTF-8 as clients do


def test_shutting_down_stops_answers_at_once_and_says_so(library_folder, standin_embedder):
    slow = FakeBackend(LONG_REPLY, token_delay=0.05, max_concurrency=1)
    desk = desk_with(library_folder, slow, standin_embedder)
    server = BackgroundServer(desk, ServeSettings(port=0, queue=2))
    url = server.start()
    lines: list[str] = []
    queued: list[httpx.Response] = []
    body = {"model": "docdesk", "messages": [{"role": "user", "content": QUESTION}]}

    def stream() -> None:
        with httpx.stream("POST", f"{url}/chat/completions", json={**body, "stream": True}, timeout=30) as response:
            lines.extend(line for line in response.iter_lines() if line)

    streaming = threading.Thread(target=stream)
    streaming.start()
    assert wait_until(lambda: slow.in_flight == 1)
    queueing = threading.Thread(target=lambda: queued.append(httpx.post(f"{url}/chat/completions", json=body, timeout=30)))
    queueing.start()
    assert wait_until(lambda: waiting(server) == 1)
    written = slow.requests[0].stats.completion_tokens
    server.stop()
    streaming.join(10)
    queueing.join(10)
    assert not streaming.is_alive() and not queueing.is_alive()
    # Stopped at its next token, not after uvicorn's 5 s of graceful waiting (~100 more tokens here).
    assert slow.requests[0].stats.completion_tokens - written <= 2
    assert lines[-1] == "data: [DONE]" and json.loads(lines[-2][6:])["error"]["code"] == "shutting_down"
    assert queued[0].status_code == 503 and queued[0].json()["error"]["code"] == "shutting_down"
    assert slow.requests[0].cancel.is_set() and len(slow.requests) == 1
    desk.close()
