"""The main window: the library pane, the chat pane and the status bar, laid out and wired to the
controllers that do the work (library, chat, summary, engine, settings). The window itself
holds no logic beyond layout, the menus and keyboard, drag and drop, and its own geometry (sized
for the screen it opens on, app/gui/screen_fit.py)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter, QToolBar

from app import __version__
from app.desk.crash import CrashNotice
from app.desk.services import DocDesk
from app.desk.settings import config_path
from app.gui.chat_controller import ChatController
from app.gui.chat_pane import ChatPane
from app.gui.document_opener import DocumentOpener
from app.gui.engine_controller import EngineController
from app.gui.library_controller import LibraryController
from app.gui.library_pane import LibraryPane
from app.gui.screen_fit import DialogFit, available, clamp, first_geometry, first_pane_sizes
from app.gui.serve_controller import ServeController
from app.gui.settings_controller import SettingsController
from app.gui.summary_controller import SummaryController
from app.gui.summary_panel import SummaryPanel
from app.gui.tasks import Workers
from app.gui.viewer import CitationViewer
from ingest.readers.registry import supported_extensions


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
        self.dialog_fit = DialogFit(self)  # before any dialog is made: every one is kept on screen
        self._build_layout()
        self._build_controllers()
        self._toolbar()
        self._menus()
        self._keyboard()

        self._window_settings = QSettings(str(config_path().with_name("window.ini")), QSettings.IniFormat)
        self._restored = False
        self._place()
        self.library.refresh()
        self.library.reembed()  # a library another embedding model made: again, with progress in its rows
        self.chat.refresh_chats()
        self.library.watch()
        self.serve.apply(self.desk.settings.serve)
        self.chat_pane.check_gpu(self.workers, self.desk.settings.llm)  # the first-run guide's GPU sentence
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
        self.summaries.progressed.connect(self.chat.summary_progressed)
        self.summaries.progressed.connect(self.engine.summarizing)
        self.chat.notice.connect(lambda words: self.statusBar().showMessage(words, 8000))
        self.settings.restart_requested.connect(self.restart)
        self.library_pane.add_requested.connect(self.choose_files)
        self.library_pane.summarize_requested.connect(self.summaries.summarize)
        self.chat_pane.transcript.anchorClicked.connect(self.chat_pane.guide.follow)  # its "choose a model" link
        self.chat_pane.guide.models_requested.connect(self.open_models)

    def _action(self, text: str, slot, standard=None, fallback: str = "") -> QAction:
        """An action with the platform's standard shortcut where Qt has one, else `fallback`."""
        action = QAction(text, self)
        keys = QKeySequence.keyBindings(standard) if standard is not None else []
        action.setShortcuts(keys or ([QKeySequence(fallback)] if fallback else []))
        action.triggered.connect(slot)
        return action

    def _toolbar(self) -> None:
        self.add_action = self._action(self.tr("Add documents…"), self.choose_files, QKeySequence.Open, "Ctrl+O")
        self.add_action.setIconText(self.tr("Add…"))
        self.summarize_action = self._action(self.tr("Summarize"), self._summarize_selected, fallback="Ctrl+Shift+S")
        self.settings_action = self._action(
            self.tr("Settings…"), self.open_settings, QKeySequence.Preferences, "Ctrl+,"
        )
        bar = QToolBar(self.tr("Main"))
        bar.setObjectName("main-toolbar")
        self.addToolBar(bar)
        for action in (self.add_action, self.summarize_action, self.settings_action):
            bar.addAction(action)

    def _menus(self) -> None:
        """File, Chat and Help: every command of the window, each with its shortcut; the library's
        context menu too (a laptop may have no Menu key)."""
        pane, library = self.chat_pane, self.library_pane
        self.filter_action = self._action(self.tr("Filter documents"), self._focus_filter, QKeySequence.Find, "Ctrl+F")
        self.reindex_action = self._action(self.tr("Re-index"), lambda: self._for_selected(library.reindex_requested))
        self.reveal_action = self._action(
            self.tr("Show in folder"), lambda: self._for_selected(library.reveal_requested)
        )
        self.remove_action = self._action(
            self.tr("Remove from library"), lambda: self._for_selected(library.remove_requested)
        )
        self.quit_action = self._action(self.tr("Quit"), self.close, QKeySequence.Quit, "Ctrl+Q")
        self.new_chat_action = self._action(self.tr("New chat"), pane.new_chat, QKeySequence.New, "Ctrl+N")
        self.ask_action = self._action(self.tr("Ask a question"), self._focus_question, fallback="Ctrl+L")
        self.stop_action = self._action(self.tr("Stop"), pane.stop_requested, QKeySequence.Cancel, "Esc")
        self.stop_action.setEnabled(False)
        self.chat.busy_changed.connect(self.stop_action.setEnabled)
        self.doctor_action = self._action(self.tr("Doctor's report"), self.engine.show_doctor_report)
        self.about_action = self._action(self.tr("About DocDesk"), self.show_about)
        self.models_action = self._action(self.tr("Models…"), lambda: self.open_models())
        documents = (self.reindex_action, self.reveal_action, self.remove_action)
        file_items = (
            self.add_action,
            self.filter_action,
            None,
            *documents,
            None,
            self.models_action,
            self.settings_action,
            None,
        )
        menus = (
            (self.tr("&File"), (*file_items, self.quit_action)),
            (self.tr("&Chat"), (self.new_chat_action, self.ask_action, self.summarize_action, self.stop_action)),
            (self.tr("&Help"), (self.doctor_action, self.about_action)),
        )
        for title, actions in menus:
            menu = self.menuBar().addMenu(title)
            for action in actions:
                if action is None:
                    menu.addSeparator()
                else:
                    menu.addAction(action)
        # The menu's Stop owns Esc now: the chat pane's own Esc shortcut would make it ambiguous.
        for shortcut in pane.findChildren(QShortcut):
            if shortcut.key() in self.stop_action.shortcuts():
                shortcut.setEnabled(False)

    def _keyboard(self) -> None:
        """Tab moves on from the table and the question box; the main controls have names."""
        self.library_pane.table.setTabKeyNavigation(False)
        self.chat_pane.question.setTabChangesFocus(True)
        names = (
            (self.library_pane.filter, self.tr("Filter documents")),
            (self.library_pane.table, self.tr("Documents")),
            (self.library_pane.add_button, self.tr("Add documents…")),
            (self.chat_pane.chats, self.tr("Chats")),
            (self.chat_pane.transcript, self.tr("Conversation")),
            (self.chat_pane.question, self.tr("Question")),
            (self.chat_pane.send, self.tr("Send")),
            (self.chat_pane.stop, self.tr("Stop")),
            (self.chat_pane.only_selected, self.tr("Only the selected documents")),
            (self.chat_pane.show_passages, self.tr("Show retrieved passages")),
            (self.engine_label, self.tr("Engine status")),
            (self.library_label, self.tr("Library status")),
        )
        for widget, name in names:
            widget.setAccessibleName(name)

    def _place(self) -> None:
        """A first start takes 85% of the screen it opens on, centred; a saved geometry comes back
        moved and shrunk to fit the screen it is on now (another monitor, resolution or scale)."""
        saved, minimum = self._window_settings.value("geometry"), self.minimumSizeHint()
        if not (saved and self.restoreGeometry(saved)):
            self.setGeometry(first_geometry(available(self), minimum))
        elif not (self.isMaximized() or self.isFullScreen()):
            self.setGeometry(clamp(self.geometry(), available(self), minimum))

    def childEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().childEvent(event)
        if event.type() == QEvent.ChildPolished:  # a dialog of this window, about to be shown
            self.dialog_fit.watch(event.child())

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._restored:  # splitter sizes once the window has its final size
            QTimer.singleShot(0, self._restore_splitters)

    def _restore_splitters(self) -> None:
        s = self._window_settings
        self._restored = True
        # Sizes, not saveState(): setSizes scales them to the window as it is now, so the panes
        # keep their proportions even when the saved geometry had to shrink to fit a smaller screen.
        first = first_pane_sizes(self.splitter.width(), self.library_pane.sizeHint().width())
        for splitter, key, default in (
            (self.splitter, "splitter", first[0]),
            (self.chat_pane.splitter, "chat_splitter", first[1]),
        ):
            sizes = [int(v) for v in (s.value(key) or [])]
            usable = len(sizes) == splitter.count() and all(v >= 0 for v in sizes)
            splitter.setSizes(sizes if usable else default)

    def save_geometry(self) -> None:
        s = self._window_settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("splitter", self.splitter.sizes())
        s.setValue("chat_splitter", self.chat_pane.splitter.sizes())
        s.sync()

    def _show_crash_notice(self, notice: CrashNotice) -> None:
        """The last session died (app/desk/crash.py): say what happened at once, and keep a link to it."""
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
        dialog = self.settings.open()
        dialog.models_requested.connect(lambda: self.open_models(dialog))
        return dialog

    def open_models(self, settings_dialog=None):
        """The catalog with what fits this computer; Download, Use (app/gui/models_dialog.py)."""
        from app.gui.models_dialog import open_models

        return open_models(self, settings_dialog)

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Add documents"),
            "",
            self.tr("Documents (%1);;All files (*)").replace("%1", " ".join(f"*{e}" for e in supported_extensions())),
        )
        if paths:
            self.add_paths([Path(p) for p in paths])

    def _focus_question(self) -> None:
        self.chat_pane.question.setFocus(Qt.ShortcutFocusReason)

    def _focus_filter(self) -> None:
        self.library_pane.filter.setFocus(Qt.ShortcutFocusReason)
        self.library_pane.filter.selectAll()

    def show_about(self) -> QMessageBox:
        text = self.tr(
            "DocDesk %1: ask your documents, with answers that cite the page they come from. "
            "Everything stays on this computer."
        ).replace("%1", __version__)
        box = QMessageBox(QMessageBox.Information, self.tr("About DocDesk"), text, parent=self)
        self.about_box = box
        box.open()  # never blocks the window
        return box

    def _for_selected(self, signal) -> None:
        """What the library's context menu does, on the selected documents."""
        ids = self.library_pane.selected_ids()
        if not ids:
            self.statusBar().showMessage(self.tr("Select a document first"), 4000)
        elif signal is self.library_pane.reveal_requested:
            signal.emit(ids[0])
        else:
            signal.emit(ids)

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
    def restart(self) -> None:
        """Close as always (work stopped, everything saved), then open DocDesk again."""
        from app.gui.restart import start_again

        if self.close() and not start_again():
            QMessageBox.warning(None, "DocDesk", self.tr("DocDesk could not start again: start it yourself."))

    def closeEvent(self, event) -> None:  # noqa: N802
        self.save_geometry()
        self.statusBar().showMessage(self.tr("Stopping…"))
        self.serve.stop()  # before the model closes: answers still being written stop first
        self.workers.shutdown()
        for timer in self.findChildren(QTimer):  # nothing polls a closed window: its workers are gone
            timer.stop()
        self.desk.close()
        super().closeEvent(event)
