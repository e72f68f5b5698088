"""Waiting work says so: a question asked during a summary runs beside it where the model has a
free slot, else shows its place behind it with a Stop that works and keeps the question; the
status bar says what the engine is doing. The window is real (offscreen here, on Xvfb through
test_window_xvfb.py); the model is the fake backend, slowed so a summary lasts."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from engine.backends.fake import FakeBackend  # noqa: E402
from tests.conftest import SAMPLES  # noqa: E402

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def guide_library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("waiting-library")
    library = Library(folder)
    assert len(Ingestor(library, embedder).add([SAMPLES / "docdesk-guide.pdf"]).added) == 1
    library.close()
    return folder


def open_window(qtbot, folder, embedder, slots: int) -> MainWindow:
    backend = FakeBackend(max_concurrency=slots, token_delay=0.05)  # a block takes ~1 s
    desk = DocDesk(Settings(library=folder), backend=backend, embedder=embedder)
    window = MainWindow(desk, warm_up=False)
    qtbot.addWidget(window)
    window.show()
    return window


def start_summary(window, qtbot) -> None:
    window.summarize(window.desk.documents()[0].id)
    qtbot.waitUntil(lambda: "summarizing, block" in window.engine_label.text(), timeout=30_000)


def pending(window) -> dict:
    message = window.chat_pane.messages[-1]
    assert message["role"] == "assistant" and message.get("pending")
    return message


def test_a_question_behind_a_summary_shows_its_place_and_stop_keeps_it(qtbot, guide_library, embedder):
    window = open_window(qtbot, guide_library, embedder, slots=1)
    start_summary(window, qtbot)
    assert window.engine_label.text().startswith("Engine: summarizing, block 1 of ")

    window.chat_pane.question.setPlainText("What does DocDesk cite?")
    window.chat_pane.send.click()
    waiting = pending(window)["waiting"]
    assert waiting.startswith("Waits for the summary: ") and " blocks left" in waiting, waiting
    assert "Waits for the summary" in window.chat_pane.transcript.toPlainText()
    assert window.chat_pane.stop.isEnabled()

    # Stop while it waits: gone from the transcript at once, back in the box, the summary goes on.
    window.chat_pane.stop.click()
    qtbot.waitUntil(lambda: window.chat.answer_op is None, timeout=2_000)
    assert window.chat_pane.messages == []
    assert window.chat_pane.question.toPlainText() == "What does DocDesk cite?"
    assert "back in the question box" in window.statusBar().currentMessage()
    assert window.summaries.running
    assert window.desk.list_chats() == []  # nothing half-asked was saved

    # Asked again, it waits; when the summary is cancelled it is answered, and saved.
    window.chat_pane.send.click()
    assert "Waits for the summary" in pending(window)["waiting"]
    window.summaries.cancel()
    qtbot.waitUntil(lambda: window.chat.answer_op is None, timeout=60_000)
    answer = window.chat_pane.messages[-1]
    assert answer["text"].startswith("Fake reply to:") and not answer.get("pending")
    assert "waiting" not in answer
    assert [c.title for c in window.desk.list_chats()] == ["What does DocDesk cite?"]
    qtbot.waitUntil(lambda: window.engine_label.text() == "Engine: ready", timeout=5_000)
    window.close()


def test_a_question_runs_beside_a_summary_where_the_model_has_a_free_slot(qtbot, guide_library, embedder):
    window = open_window(qtbot, guide_library, embedder, slots=4)
    start_summary(window, qtbot)
    finished = []
    window.chat.answer_finished.connect(finished.append)
    window.chat_pane.question.setPlainText("What does DocDesk cite?")
    window.chat_pane.send.click()
    qtbot.waitUntil(lambda: bool(finished), timeout=60_000)
    assert finished[0] is not None and finished[0].text.startswith("Fake reply to:")
    assert window.summaries.running  # answered while the summary was still being written
    assert "summarizing" in window.engine_label.text()
    window.summaries.cancel()
    qtbot.waitUntil(lambda: not window.summaries.running, timeout=60_000)
    qtbot.waitUntil(lambda: window.engine_label.text() == "Engine: ready", timeout=5_000)
    window.close()


def test_the_status_bar_says_when_the_engine_answers(qtbot, guide_library, embedder):
    window = open_window(qtbot, guide_library, embedder, slots=1)
    seen = []
    window.chat_pane.question.setPlainText("What does DocDesk cite?")
    window.chat_pane.send.click()
    qtbot.waitUntil(lambda: seen.append(window.engine_label.text()) or window.chat.answer_op is None, timeout=60_000)
    assert "Engine: answering…" in seen
    assert window.engine_label.text() == "Engine: ready"
    window.close()
