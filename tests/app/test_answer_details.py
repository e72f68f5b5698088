"""Where an answer's details are shown, its question's stages and the relevance rule's reasons are
too: `docdesk ask --verbose` (app/cli/main.py) and the window's "Show retrieved passages" view
(app/gui/chat_controller.py). A small library, a stand-in embedder and the fake backend."""

from __future__ import annotations

import os
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.desk.answering import Answered  # noqa: E402
from engine.answer import Answerer, AnswerSettings  # noqa: E402
from engine.backends.fake import FakeBackend  # noqa: E402
from tests.engine.languages_library import languages_retriever  # noqa: E402


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    retriever = languages_retriever(tmp_path_factory.mktemp("details"))
    yield retriever
    retriever.library.close()


def answered(retriever, question: str, doc_ids=None) -> Answered:
    answerer = Answerer(retriever, FakeBackend("German [1]."), AnswerSettings())
    return Answered.of(answerer.generate(answerer.prepare(question, doc_ids)))


def test_the_answered_record_keeps_the_stages_and_why(retriever):
    answer = answered(retriever, "What is the official language of Austria?")
    assert [name for name, _ in answer.stages] == ["query", "search", "judge", "context", "prompt"]
    assert answer.relevance["relevant"] is True and answer.relevance["override"] is None
    assert {"coverage", "dense", "dense_weight", "dense_bar", "margin"} <= set(answer.relevance)
    assert {f"{name}_ms" for name, _ in answer.stages} <= set(answer.timings)


def test_docdesk_ask_verbose_shows_the_stages_and_the_verdict(retriever):
    from app.cli.main import answer_details

    stages, why = answer_details(answered(retriever, "What is the official language of Austria?"))
    assert stages.startswith("stages: query ") and " · search " in stages and stages.endswith(" ms")
    assert why.startswith("relevance: relevant (margin +") and "overruled" not in why

    german = next(d.id for d in retriever.library.documents() if d.path.endswith("austria-de.md"))
    _, overruled = answer_details(answered(retriever, "Who painted the Mona Lisa?", [german]))
    assert overruled.startswith("relevance: nothing relevant (margin -")
    assert overruled.endswith("overruled: whole documents")


def test_the_passages_view_shows_the_stages_and_the_verdict(retriever):
    pytest.importorskip("PySide6")
    from app.gui.chat_controller import ChatController

    answer = answered(retriever, "What is the official language of Austria?")
    message = {"role": "assistant", "stages": answer.stages, "relevance": answer.relevance}
    lines = ChatController.preparation_lines(SimpleNamespace(tr=str), message)
    assert lines[0].startswith("Stages: query ") and "judge" in lines[0]
    assert lines[1].startswith("Relevance: relevant (keyword coverage ")
    assert ChatController.preparation_lines(SimpleNamespace(tr=str), {"role": "assistant"}) == []  # a chat read back


def test_the_passages_view_marks_an_excerpt_with_its_page():
    pytest.importorskip("PySide6")
    from app.gui.chat_controller import ChatController
    from ingest.records import CitedSource

    def shown(excerpt: bool) -> str:
        source = CitedSource(1, "d", "Guide", "/docs/guide.pdf", 4, 4, "FAISS builds the index.", excerpt=excerpt)
        return ChatController.passage_markdown(SimpleNamespace(tr=str), source)

    excerpt, whole = shown(True), shown(False)
    assert excerpt.startswith("### [1] Guide, p. 4") and excerpt.endswith("FAISS builds the index.")
    assert "*Excerpt: the sentences of this passage that answer, p. 4; the rest did not fit.*" in excerpt
    assert "Excerpt" not in whole and whole.endswith("FAISS builds the index.")
