"""Whole documents when they fit: a question restricted to documents whose text fits the context
budget gives the model those documents whole (every block, in order), whatever the search found,
and says so (Answered.whole_documents, the window's note, `ask --json`); documents that do not
fit get the best passages as before. Real library, the fake backend as the model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.desk.answering import final_answer  # noqa: E402
from engine.answer import AnswerSettings  # noqa: E402
from engine.backends.fake import FakeBackend  # noqa: E402
from tests.conftest import CORPUS, SAMPLES  # noqa: E402

pytestmark = pytest.mark.models
GEOTOPO = CORPUS / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("whole-library")
    lib = Library(folder)
    Ingestor(lib, embedder).add([SAMPLES / "docdesk-guide.md", GEOTOPO])
    lib.close()
    return folder


def desk_on(folder, embedder, backend, context_tokens=6000):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    settings = Settings(library=folder)
    settings.answers = AnswerSettings(context_tokens=context_tokens)
    return DocDesk(settings, backend=backend, embedder=embedder)


def ids(desk) -> dict[str, str]:
    return {d.format: d.id for d in desk.documents()}


def test_a_document_that_fits_goes_in_whole(library, embedder):
    backend = FakeBackend(context_window=16384)
    desk = desk_on(library, embedder, backend)
    try:
        guide = ids(desk)["markdown"]
        # A question the search would find nothing for: the user chose the document, it goes in whole.
        answered = final_answer(desk.answer("What is this about?", [guide], save_chat=False))
        assert answered.whole_documents and answered.relevant
        pages = "".join(p.text for p in desk.pages(guide))
        given = "".join(s.text for s in answered.given)
        assert len(given) >= 0.97 * len(pages.strip())  # every block, not the best passages
        prompt = backend.requests[-1].messages[-1]["content"]
        assert "Installation" in prompt or "Install" in prompt  # text far from the question arrived too
    finally:
        desk.close()


def test_a_document_too_long_gets_the_best_passages(library, embedder):
    desk = desk_on(library, embedder, FakeBackend(context_window=16384))
    try:
        book = ids(desk)["pdf"]
        answered = final_answer(desk.answer("Was ist eine Metrik?", [book], save_chat=False))
        assert not answered.whole_documents
        assert 0 < len(answered.given) <= 8
    finally:
        desk.close()


def test_a_small_budget_does_not_take_a_document_whole(library, embedder):
    desk = desk_on(library, embedder, FakeBackend(context_window=16384), context_tokens=300)
    try:
        answered = final_answer(desk.answer("Which Python version?", [ids(desk)["markdown"]], save_chat=False))
        assert not answered.whole_documents
    finally:
        desk.close()


def test_the_window_says_the_documents_went_in_whole(library, embedder, qtbot):
    from app.gui.main_window import MainWindow

    desk = desk_on(library, embedder, FakeBackend(context_window=16384))
    window = MainWindow(desk, warm_up=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.library_pane.model.rowCount() == 2, timeout=10_000)
    guide_row = next(r for r in range(2) if window.library_pane.model.index(r, 1).data() in ("MD", "Markdown"))
    window.library_pane.table.selectRow(guide_row)
    window.chat_pane.only_selected.setChecked(True)
    window.chat_pane.question.setPlainText("What is this about?")
    window.chat_pane.send.click()
    qtbot.waitUntil(lambda: window.chat.answer_op is None, timeout=60_000)
    assert window.chat_pane.messages[-1]["whole"]
    assert "the model read them whole" in window.chat_pane.transcript.toPlainText()
    window.close()
