"""Answers and chats around the model, with the fake backend scripted: what is sent, what comes
back, how a follow-up is searched, what is stored. What the real model says is checked in
test_answers_model.py and tests/eval."""

from __future__ import annotations

import threading

import pytest

from engine.answer import Answerer, AnswerSettings
from engine.backends.fake import FakeBackend
from engine.chat import ChatSession
from engine.prompts import REWRITE_SYSTEM
from engine.retrieval.retrieve import HybridRetriever
from ingest.pipeline import Ingestor
from ingest.store.chats import ChatStore
from ingest.store.library import Library
from tests.conftest import CORPUS, SAMPLES

pytestmark = pytest.mark.models  # the library is embedded with the real model; no LLM is loaded

AUSTRIA = "What is the official language of Austria?"


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    library = Library(tmp_path_factory.mktemp("answers-fake") / "library")
    report = Ingestor(library, embedder, read_in_subprocess=False).add(
        [CORPUS / "pdf-samples" / "026-latex-multicolumn", SAMPLES / "docdesk-guide.pdf"]
    )
    assert not report.failed
    yield library
    library.close()


@pytest.fixture(scope="module")
def retriever(library, embedder):
    return HybridRetriever(library, embedder)


def scripted(rewrite: str = "", answer: str = "German is spoken there [1].") -> FakeBackend:
    """Rewrites of follow-ups get `rewrite`, every other request `answer`."""

    def reply(request) -> str:
        return rewrite if request.messages[0]["content"] == REWRITE_SYSTEM else answer

    return FakeBackend(reply)


def test_the_prompt_carries_the_sources_and_the_reply_streams_back_with_its_citations(retriever):
    backend = scripted()
    answerer = Answerer(retriever, backend, AnswerSettings(temperature=0.0, answer_tokens=200))
    prepared = answerer.prepare(AUSTRIA)
    assert prepared.relevant and prepared.language == "en"
    streamed: list[str] = []
    answer = answerer.generate(prepared, streamed.append)
    assert "".join(streamed) == answer.text == "German is spoken there [1]." and len(streamed) > 3
    assert answer.cited == [1]
    (request,) = backend.requests
    assert request.messages == prepared.messages and request.max_tokens == 200 and request.temperature == 0.0
    sent = request.messages[-1]["content"]
    assert AUSTRIA in sent and all(s.text[:40] in sent for s in prepared.sources)
    assert answer.stats.prompt_tokens > 100 and answer.stats.completion_tokens == backend.count_tokens(answer.text)
    assert set(answer.timings) >= {"retrieve_ms", "ttft_ms", "total_ms"}


def test_the_context_is_sized_by_where_the_model_runs_and_fits_its_window(retriever):
    on_cpu = Answerer(retriever, FakeBackend(context_window=2048), AnswerSettings(answer_tokens=256))
    on_gpu = Answerer(retriever, FakeBackend(on_gpu=True), AnswerSettings())
    assert (on_cpu.context_tokens, on_gpu.context_tokens) == (1200, 3000)
    answer = on_cpu.generate(on_cpu.prepare(AUSTRIA))
    assert answer.stats.prompt_tokens + 256 <= 2048


def test_stop_keeps_what_was_said_before_it(retriever):
    backend = FakeBackend("German. " * 100, token_delay=0.001)
    answerer = Answerer(retriever, backend, AnswerSettings())
    prepared = answerer.prepare(AUSTRIA)
    seen: list[str] = []
    cancel = threading.Event()

    def on_text(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 5:
            cancel.set()

    answer = answerer.generate(prepared, on_text, cancel)
    assert answer.cancelled and answer.text == "".join(seen).strip() and len(seen) == 5


def test_a_follow_up_is_searched_as_the_models_stand_alone_question(retriever, library):
    rewrite = "What does page 1 of the multicolumn document say about Austria?"
    backend = scripted(rewrite=rewrite)
    store = ChatStore(library)
    session = ChatSession(Answerer(retriever, backend, AnswerSettings()), store)
    session.ask(AUSTRIA)
    follow = session.ask("And what does page 1 of that document say?")
    assert follow.prepared.standalone == rewrite
    rewrite_request = next(r for r in backend.requests if r.messages[0]["content"] == REWRITE_SYSTEM)
    assert AUSTRIA in rewrite_request.messages[1]["content"] and rewrite_request.stop == ["\n"]
    assert any(s.title == "multicolumn" and s.page == 1 for s in follow.prepared.sources)  # the page named
    messages = store.messages(session.chat.id)
    assert [(m.role, m.content) for m in messages] == [
        ("user", AUSTRIA),
        ("assistant", "German is spoken there [1]."),
        ("user", "And what does page 1 of that document say?"),
        ("assistant", "German is spoken there [1]."),
    ]
    assert messages[2].question == rewrite and messages[1].sources
    again = ChatSession(Answerer(retriever, scripted(), AnswerSettings()), store, session.chat.id[:8])
    assert [t.question for t in again.history()] == [AUSTRIA, "And what does page 1 of that document say?"]


@pytest.mark.parametrize(
    "reply",
    ["German is spoken in Austria.", "", "What does it say on page 7?", "Which page [1] says it?"],
    ids=["an answer", "nothing", "another page", "a citation"],
)
def test_a_rewrite_that_is_not_a_usable_question_falls_back_on_the_last_two(retriever, library, reply):
    session = ChatSession(Answerer(retriever, scripted(rewrite=reply), AnswerSettings()), ChatStore(library))
    session.ask(AUSTRIA)
    follow = session.ask("And what does page 1 of that document say?")
    assert follow.prepared.standalone == f"{AUSTRIA} And what does page 1 of that document say?"
