"""A thinking model answers cleanly through every front door: the window, `docdesk ask`, `serve`
(content and reasoning_content, usage's reasoning_tokens, the request's own sampling) and MCP.
The real façade answers from a real library; the model is the fake backend scripted in each of
the three ways thinking models write (tags in the text; the tag opened by the template; reasoning
sent apart), and an OpenAI-compatible stand-in server speaks each style over the wire."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from argparse import Namespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.desk.answering import final_answer  # noqa: E402
from engine.backends.fake import FakeBackend  # noqa: E402
from tests.conftest import SAMPLES  # noqa: E402

pytestmark = pytest.mark.models

THOUGHT = "Let me think. Passage [2] is irrelevant; passage [1] says Python 3.11."
ANSWER = "DocDesk needs Python 3.11 or newer [1]."
STYLES = {
    "tags": lambda: FakeBackend(f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"),
    "opened": lambda: FakeBackend(f"{THOUGHT}\n</think>\n\n{ANSWER}", thinks=True),
    "apart": lambda: FakeBackend(ANSWER, reasoning=THOUGHT),
}
QUESTION = "Which Python version does DocDesk need?"


@pytest.fixture(scope="module")
def guide_library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("thinking-library")
    library = Library(folder)
    Ingestor(library, embedder).add([SAMPLES / "docdesk-guide.pdf", SAMPLES / "docdesk-guide.md"])
    library.close()
    return folder


def desk_with(folder, embedder, backend):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    return DocDesk(Settings(library=folder), backend=backend, embedder=embedder)


def assert_clean(answered) -> None:
    assert answered.text == ANSWER
    assert answered.reasoning == THOUGHT
    assert [s.n for s in answered.given if s.cited] == [1]  # the [2] of the reasoning is no citation
    assert answered.stats.reasoning_tokens > 0


@pytest.mark.parametrize("style", STYLES)
def test_the_facade_keeps_the_reasoning_apart_and_the_chat_holds_the_answer(style, guide_library, embedder):
    desk = desk_with(guide_library, embedder, STYLES[style]())
    try:
        thought: list[str] = []
        answered = final_answer(desk.answer(QUESTION), None, thought.append)
        assert_clean(answered)
        assert "".join(thought).strip() == THOUGHT
        stored = desk.chat_messages(answered.chat_id)
        assert [m.content for m in stored] == [QUESTION, ANSWER]
        assert "think" not in json.dumps([m.content for m in stored]).lower()
    finally:
        desk.close()


@pytest.mark.parametrize("style", STYLES)
def test_docdesk_ask_prints_the_answer_and_json_has_the_reasoning(style, guide_library, embedder, capsys):
    from app.cli.main import _cmd_ask

    desk = desk_with(guide_library, embedder, STYLES[style]())
    args = Namespace(question=QUESTION.split(), doc=None, new_chat=True, chat=None, json=False, verbose=False)
    args.backend = args.model = args.url = None
    try:
        assert _cmd_ask(desk, args) == 0
        out, err = capsys.readouterr()
        assert out.startswith(ANSWER + "\n") and "Let me think" not in out
        assert "thinking…" in err and "thought " in err
        args.json = True
        assert _cmd_ask(desk, args) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["answer"] == ANSWER and payload["reasoning"] == THOUGHT
        assert payload["tokens"]["reasoning"] > 0
    finally:
        desk.close()


def _serve(desk, bodies: list) -> list:
    """Each body posted: a dict as JSON, a str as it is (JSON that json.dumps would not write)."""
    import httpx

    from app.desk.serve_settings import ServeSettings
    from app.serve.openai_api import create_app

    app = create_app(desk, ServeSettings(), slots=1)

    async def ask():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60) as api:
            sent = [
                dict(json=body)
                if isinstance(body, dict)
                else dict(content=body, headers={"content-type": "application/json"})
                for body in bodies
            ]
            return [await api.post("/v1/chat/completions", **kwargs) for kwargs in sent]

    return asyncio.run(ask())


@pytest.mark.parametrize("style", STYLES)
def test_serve_returns_content_and_reasoning_content(style, guide_library, embedder):
    desk = desk_with(guide_library, embedder, STYLES[style]())
    body = {
        "model": "docdesk",
        "messages": [{"role": "user", "content": QUESTION}],
        "docdesk": {"sources_in_text": False},
    }
    try:
        done, streamed = _serve(desk, [body, {**body, "stream": True, "stream_options": {"include_usage": True}}])
    finally:
        desk.close()
    message = done.json()["choices"][0]["message"]
    assert message["content"] == ANSWER and message["reasoning_content"] == THOUGHT
    assert done.json()["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0
    chunks = [json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data: {")]
    deltas = [c["choices"][0]["delta"] for c in chunks if c.get("choices")]
    assert "".join(d.get("content", "") for d in deltas) == ANSWER
    assert "".join(d.get("reasoning_content", "") for d in deltas).strip() == THOUGHT
    assert chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


def test_serve_honours_max_tokens_temperature_top_p_stop_and_seed(guide_library, embedder):
    backend = FakeBackend(ANSWER)
    desk = desk_with(guide_library, embedder, backend)
    body = {
        "model": "docdesk",
        "messages": [{"role": "user", "content": QUESTION}],
        "max_tokens": 5,
        "temperature": 0.7,
        "top_p": 0.9,
        "stop": ["3.11"],
        "seed": 42,
    }
    bad = [{**body, "temperature": 3}, {**body, "top_p": -1}, {**body, "max_tokens": 0}, {**body, "stop": [1]}]
    # json reads NaN and Infinity; a seed past 64 bits; a question no one asks (450,000 characters)
    raw = json.dumps(body)
    bad += [raw.replace('"temperature": 0.7', '"temperature": NaN'), raw.replace('"top_p": 0.9', '"top_p": Infinity')]
    bad += [{**body, "seed": 2**70}, {**body, "messages": [{"role": "user", "content": "a" * 450_000}]}]
    bad += [{**body, "messages": [{"role": "user", "content": "a" * 40_000}]}]
    try:
        replies = _serve(desk, [body, *bad])
    finally:
        desk.close()
    asked = backend.requests[-1]
    assert (asked.max_tokens, asked.temperature, asked.top_p, asked.seed) == (5, 0.7, 0.9, 42)
    assert "3.11" in asked.stop
    content = replies[0].json()["choices"][0]["message"]["content"]
    assert content.startswith("DocDesk needs") and "3.11" not in content.split("\n\nSources:")[0]
    assert replies[0].json()["choices"][0]["finish_reason"] == "length"
    params = ["temperature", "top_p", "max_tokens", "stop", "temperature", "top_p", "seed", "messages", "messages"]
    for reply, param in zip(replies[1:], params, strict=True):
        assert reply.status_code == (413 if param == "messages" else 400) and reply.json()["error"]["param"] == param
    assert "finite" in replies[5].json()["error"]["message"]
    assert replies[8].json()["error"]["message"] == "the messages are longer than 200,000 characters"
    assert replies[9].json()["error"]["message"] == "the question is 40,000 characters: at most 32,000"
    assert len(backend.requests) == 1  # refused requests never reach the model


@pytest.mark.parametrize("style", STYLES)
def test_mcp_returns_the_answer_alone(style, guide_library, embedder):
    from app.mcp.server import DocDeskTools

    desk = desk_with(guide_library, embedder, STYLES[style]())
    try:
        result = asyncio.run(DocDeskTools(desk).ask(QUESTION))
    finally:
        desk.close()
    assert result["answer"] == ANSWER and "Let me think" not in json.dumps(result)


@pytest.mark.parametrize("style", STYLES)
def test_the_window_shows_the_answer_with_its_thinking_collapsed(style, guide_library, embedder, qtbot):
    from app.gui.main_window import MainWindow

    backend = STYLES[style]()
    backend.token_delay = 0.01
    desk = desk_with(guide_library, embedder, backend)
    window = MainWindow(desk, warm_up=False)
    qtbot.addWidget(window)
    window.show()
    window.chat_pane.question.setPlainText(QUESTION)
    window.chat_pane.send.click()
    qtbot.waitUntil(lambda: window.chat.answer_op is None, timeout=60_000)
    message = window.chat_pane.messages[-1]
    assert message["text"] == ANSWER and message["reasoning"] == THOUGHT
    shown = window.chat_pane.transcript.toPlainText()
    assert ANSWER in shown and "Let me think" not in shown and "▸ Thought for" in shown
    window.chat_pane.toggle_reasoning(len(window.chat_pane.messages) - 1)  # the link opens it
    assert "Let me think" in window.chat_pane.transcript.toPlainText()
    window.close()


def test_summaries_and_follow_ups_ask_for_no_thinking(guide_library, embedder):
    backend = STYLES["tags"]()
    desk = desk_with(guide_library, embedder, backend)
    try:
        first = final_answer(desk.answer(QUESTION))
        final_answer(desk.answer("And on page 2?", chat_id=first.chat_id))
        rewrite = next(r for r in backend.requests if r.max_tokens == 64)
        assert rewrite.thinking is False
        doc = next(d for d in desk.documents() if d.format == "pdf")
        summary = desk.summarizer().summarize(doc.id, cancel=threading.Event())
        assert "Let me think" not in summary.text and "think>" not in summary.text
        assert all(r.thinking is False for r in backend.requests[-summary.steps :])
    finally:
        desk.close()


def test_while_it_thinks_the_transcript_says_so_and_a_restart_clears_it(qtbot):
    from app.gui.chat_pane import ChatPane

    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.messages = [
        {"role": "user", "text": QUESTION},
        {"role": "assistant", "text": "", "sources": [], "pending": True},
    ]
    pane.append_piece("reasoning", THOUGHT)
    shown = pane.transcript.toPlainText()
    assert f"Thinking… ({len(THOUGHT.split())} words)" in shown and "Let me think" not in shown
    pane.append_piece("restart", "")
    pane.append_piece("answer", ANSWER)
    assert pane.messages[-1]["reasoning"] == "" and ANSWER in pane.transcript.toPlainText()
    assert "Thinking…" not in pane.transcript.toPlainText()


@pytest.mark.parametrize("style", STYLES)
def test_docdesk_chat_prints_the_answer_alone(style, guide_library, embedder, capsys):
    from app.cli.chat import cmd_chat

    desk = desk_with(guide_library, embedder, STYLES[style]())
    args = Namespace(message=["hi"], max_tokens=200, json=False, verbose=False)
    args.backend = args.model = args.url = None
    emitted = []
    try:
        assert cmd_chat(desk, args, lambda _a, payload, _h: emitted.append(payload)) == 0
        out, err = capsys.readouterr()
        assert out.strip() == ANSWER and "thinking…" in err
        args.json = True
        assert cmd_chat(desk, args, lambda _a, payload, _h: emitted.append(payload)) == 0
        assert emitted[-1]["text"] == ANSWER and emitted[-1]["reasoning"] == THOUGHT
    finally:
        desk.close()
