"""The main window: library pane, chat pane, status bar; all work goes through `Workers`."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTextBrowser,
    QToolBar,
    QVBoxLayout,
)

from ..services import DocDesk
from ..settings import config_path, save_settings
from .chat_pane import ChatPane
from .library_pane import LibraryPane
from .summary_panel import SummaryPanel
from .tasks import TextBuffer, Workers
from .viewer import CitationViewer

log = logging.getLogger(__name__)
SYNC_DELAY_MS = 1500  # a folder that changes settles before it is re-synced
MAX_WATCHED = 4000  # inotify's per-user watch limit is 8,192 by default


class MainWindow(QMainWindow):
    engine_state_changed = Signal(str)  # loading | ready | busy | error
    library_changed = Signal()
    answer_finished = Signal(object)
    summary_finished = Signal(object)

    def __init__(self, desk: DocDesk, warm_up: bool = True) -> None:
        super().__init__()
        self.desk = desk
        self.workers = Workers()
        self.setWindowTitle("DocDesk")
        self.setAcceptDrops(True)
        self.resize(1280, 820)

        self.library_pane = LibraryPane()
        self.chat_pane = ChatPane()
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.library_pane)
        self.splitter.addWidget(self.chat_pane)
        self.splitter.setStretchFactor(1, 2)
        self.setCentralWidget(self.splitter)
        self.viewer = CitationViewer(self)
        self.summary_panel = SummaryPanel(self)
        self.engine_label = QLabel()
        self.library_label = QLabel()
        self.gpu_warning_label = QLabel(visible=False)  # a GPU the llama.cpp build cannot use
        self.gpu_warning_label.linkActivated.connect(lambda _link: self.show_doctor_report())
        self.statusBar().addWidget(self.gpu_warning_label)
        self.statusBar().addWidget(self.engine_label, 1)
        self.statusBar().addPermanentWidget(self.library_label)
        self._toolbar()
        self._connect()

        self.engine_state = ""
        self.engine_error = ""
        self.answer_job = None
        self.summary_job = None
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(lambda _p: self._sync_timer.start())
        self.watcher.fileChanged.connect(lambda _p: self._sync_timer.start())
        self._sync_timer = QTimer(self, singleShot=True, interval=SYNC_DELAY_MS)
        self._sync_timer.timeout.connect(self.sync_folders)
        self._buffer: TextBuffer | None = None

        self._window_settings = QSettings(str(config_path().with_name("window.ini")), QSettings.IniFormat)
        self._restored = False
        if self._window_settings.value("geometry"):
            self.restoreGeometry(self._window_settings.value("geometry"))
        self.refresh_library()
        self.refresh_chats()
        self._watch_folders()
        self._set_engine("loading" if warm_up else "ready")
        if warm_up:  # after the window is up: models load in the background
            QTimer.singleShot(0, self.warm_up)

    # -- layout ---------------------------------------------------------------------------
    def _toolbar(self) -> None:
        bar = QToolBar(self.tr("Main"))
        bar.setObjectName("main-toolbar")
        self.addToolBar(bar)
        self.add_action = QAction(self.tr("Add…"), self, shortcut=QKeySequence.Open, triggered=self.choose_files)
        self.summarize_action = QAction(self.tr("Summarize"), self, triggered=self._summarize_selected)
        self.settings_action = QAction(self.tr("Settings…"), self, triggered=self.open_settings)
        for action in (self.add_action, self.summarize_action, self.settings_action):
            bar.addAction(action)

    def _connect(self) -> None:
        lp, cp = self.library_pane, self.chat_pane
        lp.add_requested.connect(self.choose_files)
        lp.summarize_requested.connect(self.summarize)
        lp.remove_requested.connect(self.remove_documents)
        lp.reindex_requested.connect(self.reindex_documents)
        lp.reveal_requested.connect(self.reveal)
        cp.send_requested.connect(self.ask)
        cp.stop_requested.connect(self.stop)
        cp.citation_clicked.connect(self.open_citation)
        cp.chat_selected.connect(self.load_chat)
        cp.rename_requested.connect(self._rename_chat)
        cp.delete_requested.connect(self._delete_chat)
        cp.passages_requested.connect(self.show_passages)
        self.summary_panel.cancel_requested.connect(self.cancel_summary)
        self.summary_panel.page_clicked.connect(self.open_page)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._restored:  # splitter sizes once the window has its final size
            QTimer.singleShot(0, self._restore_splitters)

    def _restore_splitters(self) -> None:
        s = self._window_settings
        self._restored = True
        # Sizes, not saveState(): setSizes scales them to the window as it is now, so the panes
        # keep their proportions even when the saved geometry had to shrink to fit a smaller screen.
        for splitter, key in ((self.splitter, "splitter"), (self.chat_pane.splitter, "chat_splitter")):
            sizes = [int(v) for v in (s.value(key) or [])]
            if len(sizes) == splitter.count() and all(v >= 0 for v in sizes):
                splitter.setSizes(sizes)

    def save_geometry(self) -> None:
        s = self._window_settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("splitter", self.splitter.sizes())
        s.setValue("chat_splitter", self.chat_pane.splitter.sizes())
        s.sync()

    # -- engine ---------------------------------------------------------------------------
    def _set_engine(self, state: str, reason: str = "") -> None:
        self.engine_state, self.engine_error = state, reason
        text = {
            "loading": self.tr("Engine: loading the models…"),
            "ready": self.tr("Engine: ready"),
            "busy": self.tr("Engine: working…"),
            "error": self.tr("Engine error: %1").replace("%1", reason),
        }[state]
        self.engine_label.setText(text)
        self.engine_state_changed.emit(state)

    def warm_up(self) -> None:
        def load(_job) -> str:
            backend = self.desk.backend()
            if hasattr(backend, "warm_up"):
                backend.warm_up()
            self.desk.retriever.warm_up()
            if backend.name != "llama_cpp":
                return ""
            from engine.doctor import gpu_build_warning

            return gpu_build_warning()  # nvidia-smi runs here, on the engine worker, never on the GUI thread

        def ready(warning: str) -> None:
            self._set_engine("ready")
            self.show_gpu_warning(warning)

        self.workers.submit(
            "engine",
            "warm-up",
            load,
            ready,
            lambda reason: self._set_engine("error", reason + self.tr(" — open Settings to choose another model")),
        )

    def show_gpu_warning(self, warning: str) -> None:
        """A GPU is here that the llama.cpp build cannot use: say so, with a link to the doctor's report."""
        self.gpu_warning_label.setVisible(bool(warning))
        self.gpu_warning_label.setToolTip(warning)
        self.gpu_warning_label.setText(
            '<a href="doctor">' + self.tr("⚠ The GPU is not used: see the doctor's report") + "</a>"
        )

    def show_doctor_report(self) -> None:
        dialog = QDialog(self)
        dialog.setWindowTitle(self.tr("Doctor"))
        dialog.resize(820, 520)
        browser = QTextBrowser()
        browser.setPlainText(self.tr("Checking this machine…"))
        QVBoxLayout(dialog).addWidget(browser)
        dialog.show()
        self._doctor_dialog = dialog

        self.workers.submit("engine", "doctor", self._doctor_text, browser.setPlainText, browser.setPlainText)

    # -- library --------------------------------------------------------------------------
    def refresh_library(self) -> None:
        docs = self.desk.documents()
        self.library_pane.show_documents(docs)
        indexed = [d for d in docs if d.status == "indexed"]
        passages = sum(d.passages for d in indexed)
        self.library_label.setText(
            self.tr("%1 documents · %2 passages").replace("%1", str(len(indexed))).replace("%2", str(passages))
        )
        self.library_changed.emit()

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Add documents"),
            "",
            self.tr("Documents (*.pdf *.docx *.html *.htm *.md *.txt);;All files (*)"),
        )
        if paths:
            self.add_paths([Path(p) for p in paths])

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    def add_paths(self, paths: list[Path]) -> None:
        def progress(event) -> None:
            labels = {
                "reading": self.tr("reading"),
                "embedding": self.tr("embedding"),
                "writing": self.tr("writing"),
                "hashing": self.tr("checking"),
            }
            if event.stage in labels and event.path:
                detail = f" · {event.pages} p." if event.pages else ""
                self.library_pane.show_progress(event.path, labels[event.stage] + detail)
            if event.stage in ("done", "failed"):
                self.refresh_library()

        def work(job):
            report = self.desk.add(
                paths,
                on_progress=self.workers.throttled(progress, final=lambda e: e.stage in ("done", "failed")),
                cancel=job.cancel,
            )
            return report

        self.statusBar().showMessage(self.tr("Adding %1 item(s)…").replace("%1", str(len(paths))), 4000)
        self.workers.submit("ingest", "add", work, self._ingest_done, self._ingest_failed)
        QTimer.singleShot(300, self.refresh_library)  # queued rows appear while the first file is read

    def _ingest_done(self, report) -> None:
        self.library_pane.clear_progress()
        self.refresh_library()
        self._watch_folders()
        if report.failed:
            names = ", ".join(Path(f["path"]).name for f in report.failed[:3])
            self.statusBar().showMessage(
                self.tr("Could not read: %1 (see the Status column)").replace("%1", names), 8000
            )
        else:
            self.statusBar().showMessage(self.tr("%1 added").replace("%1", str(len(report.added))), 4000)

    def _ingest_failed(self, reason: str) -> None:
        self.library_pane.clear_progress()
        self.refresh_library()
        QMessageBox.warning(self, "DocDesk", self.tr("Adding documents failed: %1").replace("%1", reason))

    def _watch_folders(self) -> None:
        """Remembered folders, their subfolders and (up to a limit) their files: a new, deleted or
        rewritten file starts a sync, which compares content hashes."""
        paths: list[str] = []
        for folder_id, folder in self.desk.library.folders():
            if not Path(folder).is_dir():
                continue
            paths.append(folder)
            paths += [str(d) for d in Path(folder).rglob("*") if d.is_dir()][:MAX_WATCHED]
            paths += [f.path for f in self.desk.library.files_under(folder_id)][:MAX_WATCHED]
        watched = set(self.watcher.directories()) | set(self.watcher.files())
        missing = [p for p in dict.fromkeys(paths) if p not in watched and Path(p).exists()][:MAX_WATCHED]
        if missing:
            self.watcher.addPaths(missing)

    def sync_folders(self) -> None:
        self.workers.submit("ingest", "sync", lambda job: self.desk.sync(cancel=job.cancel), self._ingest_done)

    def remove_documents(self, ids: list[str]) -> None:
        def work(_job):
            for doc_id in ids:
                self.desk.remove(doc_id)

        self.workers.submit("ingest", "remove", work, lambda _r: self.refresh_library(), self._ingest_failed)

    def reindex_documents(self, ids: list[str]) -> None:
        paths = [Path(d.path) for d in (self.desk.library.document(i) for i in ids) if d]

        def work(job):
            for doc_id in ids:
                self.desk.remove(doc_id)
            return self.desk.add(paths, cancel=job.cancel)

        self.workers.submit("ingest", "re-index", work, self._ingest_done, self._ingest_failed)

    def reveal(self, doc_id: str) -> None:
        doc = self.desk.library.document(doc_id)
        if doc:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(doc.path).parent)))

    # -- chats ----------------------------------------------------------------------------
    def refresh_chats(self, current: str = "") -> None:
        self.chat_pane.show_chats(self.desk.chats.list(), current)

    def load_chat(self, chat_id: str) -> None:
        messages = []
        if chat_id:
            for m in self.desk.chats.messages(chat_id):
                messages.append({"role": m.role, "text": m.content, "sources": m.sources})
        self.chat_pane.show_messages(messages)
        self.chat_pane.set_busy(self.answer_job is not None)

    def _rename_chat(self, chat_id: str, title: str) -> None:
        self.desk.chats.rename(chat_id, title)
        self.refresh_chats(chat_id)

    def _delete_chat(self, chat_id: str) -> None:
        self.desk.chats.delete(chat_id)
        self.refresh_chats()
        self.chat_pane.new_chat()

    def ask(self, question: str) -> None:
        if self.answer_job is not None:
            return
        pane = self.chat_pane
        doc_ids = self.library_pane.selected_ids() if pane.only_selected.isChecked() else None
        pane.messages.append({"role": "user", "text": question})
        pane.messages.append({"role": "assistant", "text": "", "sources": [], "pending": True})
        pane.render()
        pane.set_busy(True)
        self._set_engine("busy")
        self._buffer = TextBuffer(pane.append_text)
        buffer = self._buffer
        chat_id = pane.chat_id or None

        def work(job):
            session = self.desk.chat_session(chat_id)
            answer = session.ask(question, doc_ids or None, buffer.append, job.cancel)
            return session.chat.id, answer

        self.answer_job = self.workers.submit("engine", "ask", work, self._answered, self._answer_failed)

    def _answered(self, result) -> None:
        chat_id, answer = result
        self._end_answer()
        message = self.chat_pane.messages[-1]
        message.update(text=answer.text, sources=answer.cited_sources(), pending=False)
        if answer.cancelled:
            message["text"] += "\n\n_" + self.tr("(stopped)") + "_"
        self.chat_pane.chat_id = chat_id
        self.refresh_chats(chat_id)
        self.chat_pane.render()
        self.answer_finished.emit(answer)

    def _answer_failed(self, reason: str) -> None:
        self._end_answer()
        message = self.chat_pane.messages[-1]
        message.update(text=self.tr("Could not answer: %1").replace("%1", reason), pending=False)
        self.chat_pane.render()
        self._set_engine("error", reason)
        self.answer_finished.emit(None)

    def _end_answer(self) -> None:
        if self._buffer is not None:
            self._buffer.stop()
            self._buffer = None
        self.answer_job = None
        self.chat_pane.set_busy(False)
        if self.engine_state == "busy":
            self._set_engine("ready")

    def stop(self) -> None:
        if self.answer_job is not None:
            self.answer_job.cancel.set()

    def show_passages(self, index: int) -> None:
        messages = self.chat_pane.messages
        if not (0 <= index < len(messages)) or messages[index]["role"] != "assistant":
            return
        dialog = QDialog(self)
        dialog.setWindowTitle(self.tr("Retrieved passages"))
        dialog.resize(760, 700)
        browser = QTextBrowser()
        parts = [self.tr("What the model was given for this answer:")]
        for s in messages[index].get("sources", []):
            parts.append(f"### {s.label}\n\n{s.text}")
        browser.setMarkdown("\n\n".join(parts))
        layout = QVBoxLayout(dialog)
        layout.addWidget(browser)
        dialog.show()
        self._passages_dialog = dialog

    # -- citations ------------------------------------------------------------------------
    def open_citation(self, message: int, n: int) -> None:
        messages = self.chat_pane.messages
        if not 0 <= message < len(messages):
            return
        source = next((s for s in messages[message].get("sources", []) if s.n == n), None)
        if source is None:
            return
        self._open_document(source.doc_id, source.page, source.text)

    def open_page(self, doc_id: str, page: int) -> None:
        pages = self.desk.library.pages(doc_id)
        text = next((p.text for p in pages if p.number == page), "")
        self._open_document(doc_id, page, text)

    def _open_document(self, doc_id: str, page: int, passage: str) -> None:
        doc = self.desk.library.document(doc_id)
        if doc is None:
            QMessageBox.information(self, "DocDesk", self.tr("That document is no longer in the library."))
            return
        pages = self.desk.library.pages(doc_id)
        on_page = next((p.text for p in pages if p.number == page), "")
        texts = [] if doc.format == "pdf" else [p.text for p in pages]
        self.viewer.show_source(doc.path, doc.title or Path(doc.path).name, page, passage, texts, doc.format, on_page)

    # -- summaries ------------------------------------------------------------------------
    def _summarize_selected(self) -> None:
        ids = self.library_pane.selected_ids()
        if ids:
            self.summarize(ids[0])
        else:
            self.statusBar().showMessage(self.tr("Select a document to summarize"), 4000)

    def summarize(self, doc_id: str) -> None:
        if self.summary_job is not None:
            self.summary_panel.raise_()
            return
        doc = self.desk.library.document(doc_id)
        if doc is None or doc.status != "indexed":
            self.statusBar().showMessage(self.tr("Only indexed documents can be summarized"), 4000)
            return
        panel = self.summary_panel
        panel.start(doc_id, doc.title or Path(doc.path).name)

        def work(job):
            from engine.errors import Cancelled

            try:
                return self.desk.summarizer().summarize(
                    doc_id, on_progress=self.workers.throttled(panel.show_progress, 0.1), cancel=job.cancel
                )
            except Cancelled as stopped:
                return stopped

        self.summary_job = self.workers.submit("engine", "summarize", work, self._summarized, self._summary_failed)

    def _summarized(self, result) -> None:
        self.summary_job = None
        if isinstance(result, Exception):
            self.summary_panel.show_stopped(
                self.tr("Stopped. Finished blocks are kept: summarize again to resume."), True
            )
        else:
            self.summary_panel.show_summary(result)
        self.summary_finished.emit(result)

    def _summary_failed(self, reason: str) -> None:
        self.summary_job = None
        self.summary_panel.show_stopped(self.tr("Summary failed: %1").replace("%1", reason), False)
        self.summary_finished.emit(None)

    def cancel_summary(self) -> None:
        if self.summary_job is not None:
            self.summary_job.cancel.set()

    # -- settings -------------------------------------------------------------------------
    def open_settings(self):
        from .settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.desk.settings, self)
        dialog.test_requested.connect(lambda s: self._test_model(s, dialog))
        dialog.doctor_requested.connect(lambda: self._run_doctor(dialog))
        dialog.accepted.connect(lambda: self.apply_settings(dialog.collect()))
        dialog.show()
        self._settings_dialog = dialog
        return dialog

    def apply_settings(self, settings) -> None:
        path = save_settings(settings)
        llm_changed = settings.llm != self.desk.settings.llm
        self.desk.settings.llm = settings.llm
        self.desk.settings.answers = settings.answers
        self.desk.settings.ui_language = settings.ui_language
        self.statusBar().showMessage(self.tr("Settings saved to %1").replace("%1", str(path)), 6000)
        if llm_changed:  # the next question loads the new model
            self._set_engine("loading")

            def reload(_job):
                self.desk.close_backend()
                backend = self.desk.backend()
                if hasattr(backend, "warm_up"):
                    backend.warm_up()

            self.workers.submit(
                "engine", "reload", reload, lambda _r: self._set_engine("ready"), lambda r: self._set_engine("error", r)
            )

    def _test_model(self, settings, dialog) -> None:
        dialog.show_test(self.tr("Testing…"))

        def work(_job):
            from engine.backends import ChatRequest, create_backend

            backend = create_backend(settings.llm, log_dir=settings.library / "logs")
            try:
                request = ChatRequest([{"role": "user", "content": "Say hello in one short sentence."}], max_tokens=32)
                started = time.perf_counter()
                text = "".join(backend.stream_chat(request))
                return text.strip(), request.stats, time.perf_counter() - started, backend.model
            finally:
                backend.close()

        def done(result) -> None:
            text, stats, _seconds, model = result
            dialog.show_test(
                self.tr("%1 tokens/s · first token %2 ms · %3: “%4”")
                .replace("%1", f"{stats.tokens_per_s:.1f}")
                .replace("%2", f"{stats.ttft_ms:.0f}")
                .replace("%3", Path(str(model)).name)
                .replace("%4", text[:80])
            )

        self.workers.submit(
            "engine", "test", work, done, lambda r: dialog.show_test(self.tr("Failed: %1").replace("%1", r))
        )

    def _run_doctor(self, dialog) -> None:
        self.workers.submit("engine", "doctor", self._doctor_text, dialog.show_doctor, dialog.show_doctor)

    def _doctor_text(self, _job=None) -> str:
        from engine.doctor import report

        from ..doctor_text import render

        model = self.desk.settings.llm.model
        return render(report(Path(model) if model else None, None, self.desk.settings.llm.context))

    # -- closing --------------------------------------------------------------------------
    def closeEvent(self, event) -> None:  # noqa: N802
        self.save_geometry()
        self.statusBar().showMessage(self.tr("Stopping…"))
        self.workers.shutdown()
        self.desk.close()
        super().closeEvent(event)
