"""The library pane: documents with title, format, pages, status and date; filter; actions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from .documents_model import DOC_ID, PATH, DocumentLine, DocumentsModel

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
            [self.tr("Title"), self.tr("Format"), self.tr("Pages"), self.tr("Status"), self.tr("Added")], self
        )
        self.filter.textChanged.connect(self._filter_changed)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        for column, width in ((1, 56), (2, 52), (3, 170), (4, 124)):
            self.table.setColumnWidth(column, width)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideRight)
        self.table.setContextMenuPolicy(Qt.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.table.doubleClicked.connect(lambda _i: self._summarize())

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self._progress: dict[str, str] = {}  # path -> live status while a file is being read

    # -- content ----------------------------------------------------------------------
    def show_documents(self, docs) -> None:
        selected = set(self.selected_ids())
        lines = []
        for doc in docs:
            status = doc.status
            if doc.status == "failed":
                status = self.tr("failed: %1").replace("%1", doc.reason)
            elif doc.status == "queued":
                status = self._progress.get(doc.path, self.tr("queued"))
            elif doc.status == "indexed":
                status = self.tr("indexed")
            added = dt.datetime.fromtimestamp(doc.added_at).strftime("%Y-%m-%d %H:%M")
            cells = [doc.title or Path(doc.path).name, doc.format, str(doc.pages), status, added]
            tooltip = doc.path if doc.status != "failed" else f"{doc.path}\n{doc.reason}"
            lines.append(DocumentLine(doc.id, doc.path, cells, doc.pages, tooltip))
        self.model.set_lines(lines)
        self._reselect(selected)

    def _filter_changed(self, text: str) -> None:
        selected = set(self.selected_ids())
        self.model.set_filter(text)
        self._reselect(selected)

    def _reselect(self, doc_ids: set[str]) -> None:
        if not doc_ids:
            return
        for row in range(self.model.rowCount()):
            if self.model.line(row).doc_id in doc_ids:
                self.table.selectRow(row)

    def show_progress(self, path: str, text: str) -> None:
        self._progress[path] = text
        self.model.set_status(path, text)

    def clear_progress(self) -> None:
        self._progress.clear()

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
