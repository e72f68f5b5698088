"""The library pane: documents with title, format, pages, status and date; filter; actions."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui.documents_model import ADDED, DOC_ID, FORMAT, PAGES, PATH, STATUS, TITLE, DocumentLine, DocumentsModel
from app.gui.library_columns import (
    TITLE_HINT,
    TITLE_LEAST,
    added_text,
    fit_columns,
    short_type,
    shown_titles,
    type_samples,
)
from app.gui.progress_delegate import ProgressDelegate

__all__ = ["DOC_ID", "PATH", "LibraryPane"]


class LibraryPane(QWidget):
    add_requested = Signal()
    summarize_requested = Signal(str)
    remove_requested = Signal(list)
    reindex_requested = Signal(list)
    reveal_requested = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.filter = QLineEdit(placeholderText=self.tr("Filter documents…"), clearButtonEnabled=True)
        self.add_button = QPushButton(self.tr("Add…"))
        self.add_button.setToolTip(self.tr("Add files or folders (Ctrl+O), or drop them anywhere on the window"))
        self.add_button.clicked.connect(self.add_requested)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.add_button)

        self.model = DocumentsModel(
            [self.tr("Title"), self.tr("Type"), self.tr("Pages"), self.tr("Status"), self.tr("Added")], self
        )
        self.filter.textChanged.connect(self._filter_changed)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().hide()
        self.table.sortByColumn(TITLE, Qt.AscendingOrder)
        self._columns_width = fit_columns(self.table, self._column_samples())
        # The bars' delegate paints in Python: it is there only while files are being added (a
        # third of each keystroke's repaint of the filter at 10,000 documents otherwise).
        self._bars = ProgressDelegate(self.table)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideMiddle)  # "DocDesk User…guide.md": the end tells twins apart
        self.table.setContextMenuPolicy(Qt.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.table.doubleClicked.connect(lambda _i: self._summarize())

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self._progress: dict[str, tuple[str, float | None]] = {}  # path -> live status while a file is read

    def _column_samples(self) -> dict[int, list[str]]:
        """The widest text each column but the title's usually holds."""
        reading = self.tr("reading %1/%2 p.").replace("%1", "888").replace("%2", "888")
        embedding = self.tr("embedding %1/%2").replace("%1", "8888").replace("%2", "8888")
        statuses = [reading, embedding, self.tr("indexed"), self.tr("queued")]
        return {FORMAT: type_samples(), PAGES: ["88888"], STATUS: statuses, ADDED: ["8888-88-88 88:88"]}

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Room for every column at its width and a title column that reads (the splitter's start)."""
        frame = 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        return QSize(self._columns_width + TITLE_HINT + frame, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The title and the status at least: a narrow screen may hide the columns between them."""
        status = self.table.columnWidth(STATUS)
        return QSize(TITLE_LEAST + status + 2 * self.table.frameWidth(), super().minimumSizeHint().height())

    # -- content ----------------------------------------------------------------------
    def show_documents(self, docs) -> None:
        """The list as the library has it now; the selection, the current row and the scroll
        position stay where the user left them (a poll refreshes this every few seconds)."""
        kept = self._view_state()
        titles, types = shown_titles(docs), {}
        lines = []
        for doc in docs:
            status, progress = doc.status, None
            if doc.status == "failed":
                status = self.tr("failed: %1").replace("%1", doc.reason)
            elif doc.status == "queued":
                status, progress = self._progress.get(doc.path, (self.tr("queued"), None))
            elif doc.status == "indexed":
                status = self.tr("indexed")
            added = added_text(doc.added_at)
            if doc.format not in types:
                types[doc.format] = short_type(doc.format)
            cells = [titles[doc.id], types[doc.format], str(doc.pages), status, added]
            tooltip = doc.path if doc.status != "failed" else f"{doc.path}\n{doc.reason}"
            lines.append(DocumentLine(doc.id, doc.path, cells, doc.pages, tooltip, progress))
        self.model.set_lines(lines)
        self._restore_view(*kept)

    def _filter_changed(self, text: str) -> None:
        selected, current, _scroll = self._view_state()
        self.model.set_filter(text)
        self._restore_view(selected, current, None)  # a new filter shows its rows from the top

    def _view_state(self) -> tuple[set[str], str, tuple[int, int]]:
        index = self.table.currentIndex()
        current = self.model.line(index.row()).doc_id if index.isValid() else ""
        scroll = (self.table.horizontalScrollBar().value(), self.table.verticalScrollBar().value())
        return set(self.selected_ids()), current, scroll

    def _restore_view(self, doc_ids: set[str], current: str, scroll: tuple[int, int] | None) -> None:
        """Select the rows of `doc_ids` again (without scrolling to them), then scroll back."""
        selection = QItemSelection()
        for row in range(self.model.rowCount()) if doc_ids or current else ():
            doc_id = self.model.line(row).doc_id
            if doc_id == current:
                self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), QItemSelectionModel.NoUpdate)
            if doc_id in doc_ids:
                selection.select(self.model.index(row, 0), self.model.index(row, self.model.columnCount() - 1))
        if not selection.isEmpty():
            self.table.selectionModel().select(selection, QItemSelectionModel.ClearAndSelect)
        if scroll is not None:
            self.table.horizontalScrollBar().setValue(scroll[0])
            self.table.verticalScrollBar().setValue(scroll[1])

    def show_progress(self, path: str, text: str, progress: float | None = None) -> None:
        """A live status for the document at `path`; `progress` (0..1) draws it as a bar."""
        self._progress[path] = (text, progress)
        if progress is not None and self.table.itemDelegateForColumn(STATUS) is not self._bars:
            self.table.setItemDelegateForColumn(STATUS, self._bars)
        self.model.set_status(path, text, progress)

    def clear_progress(self) -> None:
        self._progress.clear()
        self.table.setItemDelegateForColumn(STATUS, None)

    def row_status(self, doc_id: str) -> str:
        return self.model.status_of(doc_id)

    def selected_ids(self) -> list[str]:
        rows = {index.row() for index in self.table.selectionModel().selectedRows()} if self.table.model() else set()
        return [self.model.line(row).doc_id for row in sorted(rows) if row < self.model.rowCount()]

    def select(self, doc_id: str) -> None:
        row = self.model.row_of(doc_id)
        if row is not None:
            self.table.selectRow(row)

    # -- actions ------------------------------------------------------------------------
    def _summarize(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.summarize_requested.emit(ids[0])

    def _menu(self, position) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        menu = QMenu(self)
        actions = [
            (self.tr("Summarize"), self._summarize),
            (self.tr("Re-index"), lambda: self.reindex_requested.emit(ids)),
            (self.tr("Show in folder"), lambda: self.reveal_requested.emit(ids[0])),
            (self.tr("Remove from library"), lambda: self.remove_requested.emit(ids)),
        ]
        for text, slot in actions:
            action = QAction(text, menu)
            action.triggered.connect(slot)
            menu.addAction(action)
        menu.exec(self.table.viewport().mapToGlobal(position))
