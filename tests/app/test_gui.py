"""The real window, offscreen, on the bundled models: drop files, ask, open a citation,
summarize with cancel, change a setting. Waits on signals and conditions, never on sleeps. Where
what is under test is the window's own work (a watched folder, reading on workers) or the model
alone, the façade gets the stand-in embedder (and the fake backend); what needs no window is in
tests/app/test_window_parts.py."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtCore import (  # noqa: E402
    QMimeData,  # noqa: E402
    QPoint,
    QPointF,
    Qt,
    QUrl,
)
from PySide6.QtGui import QDragEnterEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QTextBrowser  # noqa: E402

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings, config_path, load_settings  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from engine.answer import AnswerSettings  # noqa: E402
from engine.backends.fake import FakeBackend  # noqa: E402
from tests.conftest import CORPUS, SAMPLES, marks  # noqa: E402

MULTICOLUMN = CORPUS / "pdf-samples" / "026-latex-multicolumn" / "multicolumn.pdf"
BROKEN = CORPUS / "broken" / "html-named.pdf"


def standin_desk(folder, embedder) -> DocDesk:
    """The façade on the stand-in embedder and the fake backend: the window's own work, no model."""
    return DocDesk(Settings(library=folder), backend=FakeBackend(), embedder=embedder)


@pytest.fixture
@marks("models")
def window(qtbot, tmp_path):
    settings = Settings(library=tmp_path / "library")
    settings.answers = AnswerSettings(temperature=0.0)
    window = MainWindow(DocDesk(settings))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.engine_state in ("ready", "error"), timeout=180_000)
    assert window.engine_state == "ready", window.engine_error
    yield window
    window.close()


def drop(window, *paths) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPoint(40, 40), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(window, QDropEvent(QPointF(40, 40), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))


def statuses(window) -> dict[str, str]:
    model = window.library_pane.model
    return {model.index(r, 0).data(): model.index(r, 3).data() for r in range(model.rowCount())}


def test_drop_ask_cite_summarize_and_settings(window, qtbot):
    seen_progress: list[str] = []
    show_progress = window.library_pane.show_progress
    window.library_pane.show_progress = lambda path, text, *bar: (
        seen_progress.append(text),
        show_progress(path, text, *bar),
    )

    drop(window, MULTICOLUMN, SAMPLES / "docdesk-guide.pdf", BROKEN)
    qtbot.waitUntil(lambda: sum(s == "indexed" for s in statuses(window).values()) == 2, timeout=180_000)
    qtbot.waitUntil(lambda: any(s.startswith("failed:") for s in statuses(window).values()), timeout=30_000)
    assert any(text.startswith(("reading", "embedding")) for text in seen_progress)
    assert "HTML" in next(s for s in statuses(window).values() if s.startswith("failed:"))
    assert "2 documents" in window.library_label.text()

    # Ask: the answer streams in, then cites the page that holds it.
    pane = window.chat_pane
    streamed: list[str] = []
    append = pane.append_text
    pane.append_text = lambda text: (streamed.append(text), append(text))
    pane.question.setPlainText("What is the official language of Austria?")
    with qtbot.waitSignal(window.answer_finished, timeout=180_000) as finished:
        qtbot.keyClick(pane.question, Qt.Key_Return, Qt.ControlModifier)
        qtbot.waitUntil(lambda: not pane.send.isEnabled(), timeout=5_000)
    answer = finished.args[0]
    assert answer is not None and answer.text.strip()  # what the tiny model says is measured in tests/eval
    assert streamed and "".join(streamed).strip()
    index = len(pane.messages) - 1
    # The links under the answer: the sources it cites, or all it was given when it cites none.
    cited = [s for s in pane.messages[index]["sources"] if s.cited] or pane.messages[index]["sources"]
    assert cited and f'href="cite:{index}/{cited[0].n}"' in pane.transcript.toHtml()
    qtbot.waitUntil(lambda: window.chat_pane.chats.count() == 1, timeout=5_000)  # the chat is stored and listed

    # Open the citation: the PDF at the cited page, the passage found on it.
    source = next(s for s in cited if s.title == "multicolumn")
    pane.transcript.anchorClicked.emit(QUrl(f"cite:{index}/{source.n}"))
    viewer = window.viewer
    qtbot.waitUntil(viewer.isVisible, timeout=5_000)  # the document is read on a worker first
    qtbot.waitUntil(lambda: viewer.current_page() == source.page == 3, timeout=10_000)
    qtbot.waitUntil(lambda: viewer.matches() > 0 and viewer._result_chosen, timeout=10_000)

    # Summarize with progress, cancel, then again to the end.
    guide = next(d for d in window.desk.documents() if d.title == "DocDesk User Guide")
    panel = window.summary_panel
    with qtbot.waitSignal(window.summary_finished, timeout=180_000):
        window.summarize(guide.id)
        qtbot.waitUntil(lambda: "blocks" in panel.status.text(), timeout=30_000)
        qtbot.mouseClick(panel.cancel, Qt.LeftButton)
    assert panel.state == "cancelled"
    with qtbot.waitSignal(window.summary_finished, timeout=300_000):
        window.summarize(guide.id)
    assert panel.state == "done" and "## Overview" in panel.markdown and panel.save.isEnabled()

    # A setting changed in the dialog is saved to config.toml; the bundled model shows only its own fields.
    dialog = window.open_settings()
    assert dialog.backend.currentData() == "bundled" and dialog.field("gpu_layers") is None
    dialog.field("threads").setValue(2)
    dialog.language.setCurrentIndex(2)
    dialog.accept()
    saved = load_settings(config_path())
    assert saved.llm.threads == 2 and saved.llm.model is None and saved.ui_language == "zh_CN"
    qtbot.waitUntil(lambda: window.engine_state in ("ready", "error"), timeout=120_000)
    assert window.engine_state == "ready"


@pytest.mark.models  # llama.cpp is asked to load a file that is not there
def test_a_model_that_fails_to_load_is_reported_and_the_app_stays_up(qtbot, tmp_path, standin_embedder):
    settings = Settings(library=tmp_path / "library")
    settings.llm.model = str(tmp_path / "missing.gguf")
    window = MainWindow(DocDesk(settings, embedder=standin_embedder))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.engine_state == "error", timeout=120_000)
    assert "missing.gguf" in window.engine_label.text() and "Settings" in window.engine_label.text()
    window.desk.add([SAMPLES / "docdesk-guide.pdf"])
    window.refresh_library()
    window.chat_pane.question.setPlainText("Which Python version does DocDesk need?")
    with qtbot.waitSignal(window.answer_finished, timeout=120_000) as finished:
        window.chat_pane._send()
    assert finished.args[0] is None
    assert "Could not answer" in window.chat_pane.messages[-1]["text"]
    assert window.chat_pane.send.isEnabled()  # ready for the next question
    window.close()


@pytest.mark.models
def test_a_gpu_the_build_cannot_use_is_warned_of_with_a_link_to_the_doctor(qtbot, tmp_path, monkeypatch, standin_embedder):
    from tests.fake_gpu import fake_nvidia_smi, path_with

    monkeypatch.setenv("PATH", path_with(fake_nvidia_smi(tmp_path / "bin", "7.0")))  # a V100; this build is CPU-only
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library"), embedder=standin_embedder))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.engine_state == "ready" and window.gpu_warning_label.isVisible(), timeout=180_000)
    assert "GPU is not used" in window.gpu_warning_label.text()
    assert "CPU-only build" in window.gpu_warning_label.toolTip()
    window.gpu_warning_label.linkActivated.emit("doctor")
    browser = window.engine.doctor_dialog.findChild(QTextBrowser)
    qtbot.waitUntil(lambda: browser.toPlainText().startswith("!! Tesla V100"), timeout=60_000)
    window.close()


@pytest.mark.models  # the real embedder's pace keeps the close inside the ingest
def test_closing_during_an_ingest_stops_cleanly_and_keeps_the_library_consistent(qtbot, tmp_path):
    import sqlite3

    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    book = CORPUS / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"
    seen: list[str] = []
    show_progress = window.library_pane.show_progress
    window.library_pane.show_progress = lambda path, text, *bar: (seen.append(path), show_progress(path, text, *bar))
    drop(window, SAMPLES / "docdesk-guide.md", book)
    qtbot.waitUntil(lambda: str(book) in seen, timeout=120_000)  # the book is being read or embedded
    window.close()
    assert not window.workers.busy()
    with sqlite3.connect(tmp_path / "library" / "library.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT d.status, count(p.id) FROM documents d LEFT JOIN passages p ON p.doc_id = d.id GROUP BY d.id"
        ).fetchall()
    # Every document is whole or waiting: indexed with its passages, or queued with none.
    assert rows and all((status == "indexed") == (passages > 0) for status, passages in rows), rows


@pytest.mark.subprocess  # the reader process
def test_a_watched_folder_is_resynced_and_the_layout_is_restored(qtbot, tmp_path, standin_embedder):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nThe first note talks about lighthouses.\n", encoding="utf-8")
    window = MainWindow(standin_desk(tmp_path / "library", standin_embedder), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    drop(window, folder)
    qtbot.waitUntil(lambda: statuses(window).get("First") == "indexed", timeout=120_000)
    qtbot.waitUntil(lambda: str(folder) in window.library.watcher.directories(), timeout=10_000)
    (folder / "second.md").write_text("# Second\n\nThe second note is about harbours.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: statuses(window).get("Second") == "indexed", timeout=120_000)
    (folder / "first.md").unlink()
    qtbot.waitUntil(lambda: "First" not in statuses(window), timeout=60_000)

    window.chat_pane.splitter.setSizes([400, 600])
    sizes = window.chat_pane.splitter.sizes()
    window.close()
    again = MainWindow(standin_desk(tmp_path / "library", standin_embedder), warm_up=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitUntil(lambda: again._restored, timeout=5_000)
    # The offscreen screen is small, so the restored window shrinks to fit it; the panes keep
    # their minimum widths, and the saved sizes are what was last shown.
    saved = [int(v) for v in again._window_settings.value("chat_splitter")]
    assert saved == sizes and again._window_settings.value("geometry")
    again.close()


@pytest.mark.models  # the bundled LLM summarizes
def test_closing_during_a_summary_stops_it_and_keeps_what_finished(qtbot, tmp_path, standin_embedder):
    import sqlite3

    window = MainWindow(DocDesk(Settings(library=tmp_path / "library"), embedder=standin_embedder))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.engine_state == "ready", timeout=180_000)
    window.desk.add([SAMPLES / "docdesk-guide.pdf"])
    window.refresh_library()
    doc = window.desk.documents()[0]
    window.summarize(doc.id)
    qtbot.waitUntil(lambda: "blocks" in window.summary_panel.status.text(), timeout=60_000)
    window.close()
    assert not window.workers.busy()
    with sqlite3.connect(tmp_path / "library" / "library.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM summary_cache WHERE text = ''").fetchone()[0] == 0
        # Stopped among its blocks, not waited for: nothing after the blocks (reduce, overview) was written.
        assert conn.execute("SELECT count(*) FROM summary_cache WHERE kind != 'map'").fetchone()[0] == 0


@pytest.mark.subprocess  # the reader process
def test_the_window_reads_the_library_and_walks_folders_only_on_workers(qtbot, tmp_path, monkeypatch, standin_embedder):
    import threading
    from pathlib import Path

    from ingest.store.chats import ChatMessage, ChatStore
    from ingest.store.library import Library

    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "notes.txt").write_text("Cats sleep beside warm fireplaces.", encoding="utf-8")
    desk = standin_desk(tmp_path / "library", standin_embedder)
    desk.add([SAMPLES / "docdesk-guide.pdf", folder])  # before the window: this test's own thread
    chat = desk.chats.create("cats")
    desk.chats.add_message(chat.id, ChatMessage("user", "Where?"))
    desk.chats.add_message(chat.id, ChatMessage("assistant", "By the fire."))
    on_gui: list[str] = []
    gui = threading.main_thread()

    def spy(owner, name):
        original = getattr(owner, name)

        def call(*args, **kwargs):
            if threading.current_thread() is gui:
                on_gui.append(f"{owner.__name__}.{name}")
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, call)

    for name in ("documents", "document", "pages", "folders", "files_under", "passages"):
        spy(Library, name)
    for name in ("list", "messages", "rename"):
        spy(ChatStore, name)
    spy(Path, "rglob")

    window = MainWindow(desk, warm_up=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.library_pane.model.rowCount() == 2, timeout=10_000)
    qtbot.waitUntil(lambda: str(folder) in window.library.watcher.directories(), timeout=10_000)
    qtbot.waitUntil(lambda: window.chat_pane.chats.count() == 1, timeout=10_000)
    window.chat.load_chat(chat.id)
    qtbot.waitUntil(lambda: len(window.chat_pane.messages) == 2, timeout=10_000)
    window.chat.rename_chat(chat.id, "Cats")
    guide = next(d for d in desk.documents() if d.title == "DocDesk User Guide")
    on_gui.clear()  # the line above is this test's own read
    window.summary_panel.page_clicked.emit(guide.id, 2)
    qtbot.waitUntil(lambda: window.viewer.isVisible(), timeout=10_000)
    window.refresh_library()
    qtbot.waitUntil(lambda: not window.workers.busy(), timeout=10_000)
    window.close()
    assert on_gui == []
