"""The main window: the library pane, the chat pane and the status bar, laid out and wired to the
controllers that do the work (library, chat, summary, engine, settings). The window itself
holds no logic beyond layout, drag and drop, and its own geometry."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter, QToolBar

from ingest.readers.registry import supported_extensions

from ..crash import CrashNotice
from ..services import DocDesk
from ..settings import config_path
from .chat_controller import ChatController
from .chat_pane import ChatPane
from .document_opener import DocumentOpener
from .engine_controller import EngineController
from .library_controller import LibraryController
from .library_pane import LibraryPane
from .serve_controller import ServeController
from .settings_controller import SettingsController
from .summary_controller import SummaryController
from .summary_panel import SummaryPanel
from .tasks import Workers
from .viewer import CitationViewer


class MainWindow(QMainWindow):
    engine_state_changed = Signal(str)  # loading | ready | busy | error
    library_changed = Signal()
    answer_finished = Signal(object)
    summary_finished = Signal(object)

    def __init__(self, desk: DocDesk, warm_up: bool = True, crash_notice: CrashNotice | None = None) -> None:
        super().__init__()
        self.desk = desk
        self.workers = Workers()
        self.setWindowTitle("DocDesk")
        self.setAcceptDrops(True)
        self.resize(1280, 820)
        self._build_layout()
        self._build_controllers()
        self._toolbar()

        self._window_settings = QSettings(str(config_path().with_name("window.ini")), QSettings.IniFormat)
        self._restored = False
        if self._window_settings.value("geometry"):
            self.restoreGeometry(self._window_settings.value("geometry"))
        self.library.refresh()
        self.chat.refresh_chats()
        self.library.watch()
        self.serve.apply(self.desk.settings.serve)
        if crash_notice is not None:
            self._show_crash_notice(crash_notice)
        if warm_up:  # after the window is up: models load in the background
            self.engine.set_state("loading")
            QTimer.singleShot(0, self.engine.warm_up)
        else:
            self.engine.set_state("ready")

    # -- layout ---------------------------------------------------------------------------
    def _build_layout(self) -> None:
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
        self.serve_label = QLabel(visible=False)  # "Serving editors at …" (Settings: Serve to editors)
        self.gpu_warning_label = QLabel(visible=False)  # a GPU the llama.cpp build cannot use
        self.crash_label = QLabel(visible=False)  # the last session died: what happened
        self.statusBar().addWidget(self.gpu_warning_label)
        self.statusBar().addWidget(self.crash_label)
        self.statusBar().addWidget(self.engine_label, 1)
        self.statusBar().addPermanentWidget(self.serve_label)
        self.statusBar().addPermanentWidget(self.library_label)

    def _build_controllers(self) -> None:
        desk, workers, status = self.desk, self.workers, self.statusBar()
        self.engine = EngineController(desk, workers, self.engine_label, self.gpu_warning_label, self)
        self.library = LibraryController(desk, workers, self.library_pane, self.library_label, status, self)
        opener = DocumentOpener(desk, workers, self.viewer, self)
        self.chat = ChatController(desk, workers, self.chat_pane, self.library_pane, opener, self)
        self.summaries = SummaryController(desk, workers, self.summary_panel, opener, status, self)
        self.serve = ServeController(desk, self.serve_label, self)
        self.settings = SettingsController(desk, workers, self.engine, status, self, self.serve)

        self.engine.state_changed.connect(self.engine_state_changed)
        self.library.changed.connect(self.library_changed)
        self.chat.answer_finished.connect(self.answer_finished)
        self.chat.busy_changed.connect(self.engine.answering)
        self.chat.failed.connect(lambda reason: self.engine.set_state("error", reason))
        self.summaries.finished.connect(self.summary_finished)
        self.library_pane.add_requested.connect(self.choose_files)
        self.library_pane.summarize_requested.connect(self.summaries.summarize)

    def _toolbar(self) -> None:
        bar = QToolBar(self.tr("Main"))
        bar.setObjectName("main-toolbar")
        self.addToolBar(bar)
        self.add_action = QAction(self.tr("Add…"), self, shortcut=QKeySequence.Open, triggered=self.choose_files)
        self.summarize_action = QAction(self.tr("Summarize"), self, triggered=self._summarize_selected)
        self.settings_action = QAction(self.tr("Settings…"), self, triggered=self.open_settings)
        for action in (self.add_action, self.summarize_action, self.settings_action):
            bar.addAction(action)

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

    def _show_crash_notice(self, notice: CrashNotice) -> None:
        """The last session died (app/crash.py): say what happened at once, and keep a link to it."""
        box = QMessageBox(QMessageBox.Warning, self.tr("DocDesk stopped unexpectedly"), notice.text, parent=self)
        box.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.crash_box = box
        self.crash_label.setText('<a href="crash">' + self.tr("⚠ DocDesk stopped unexpectedly last time") + "</a>")
        self.crash_label.setToolTip(notice.text)
        self.crash_label.linkActivated.connect(lambda _link: box.open())
        self.crash_label.setVisible(True)
        QTimer.singleShot(0, box.open)  # after the window is shown; never blocks it

    # -- what the toolbar, drops and callers ask for ------------------------------------------
    @property
    def engine_state(self) -> str:
        return self.engine.state

    @property
    def engine_error(self) -> str:
        return self.engine.error

    def refresh_library(self) -> None:
        self.library.refresh()

    def add_paths(self, paths: list[Path]) -> None:
        self.library.add_paths(paths)

    def summarize(self, doc_id: str) -> None:
        self.summaries.summarize(doc_id)

    def open_settings(self):
        return self.settings.open()

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Add documents"),
            "",
            self.tr("Documents (%1);;All files (*)").replace("%1", " ".join(f"*{e}" for e in supported_extensions())),
        )
        if paths:
            self.add_paths([Path(p) for p in paths])

    def _summarize_selected(self) -> None:
        ids = self.library_pane.selected_ids()
        if ids:
            self.summarize(ids[0])
        else:
            self.statusBar().showMessage(self.tr("Select a document to summarize"), 4000)

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    # -- closing --------------------------------------------------------------------------
    def closeEvent(self, event) -> None:  # noqa: N802
        self.save_geometry()
        self.statusBar().showMessage(self.tr("Stopping…"))
        self.serve.stop()  # before the model closes: answers still being written stop first
        self.workers.shutdown()
        self.desk.close()
        super().closeEvent(event)
